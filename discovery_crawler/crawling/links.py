"""The BFS link crawl (SPEC §3, §4 step 4), shared by the ``links`` spider and by
``discover`` (fallback in ``auto``, ``links`` and ``union`` modes).

Scrapy's scheduler is the frontier: a page request carries its depth (link hops from
the seed) in ``meta["depth"]`` and the priority ``-depth * DEPTH_PRIORITY``; with FIFO
queues that is breadth-first order. This module only decides *what* enters the
scheduler, before any ``Request`` is built:

- same site only (the site's origin, after normalization: a percent-encoded IDN host is
  the same host); ``rel=nofollow`` links and pages with ``<meta name=robots
  content=nofollow>`` are not followed;
- once: a link whose normalized URL (trailing-slash twins as one) is already in the run's
  seen-set costs a hash probe, not a ``Request`` (the seen-set is ``record.seen``, the one
  the dedup stage uses, so a URL gets one feed record whatever found it);
- file kinds (documents, media, archives), assets, API and action links, and auth-walled
  paths are recorded with the page that named them and never requested — but an ``/api/…``
  path without a page's name (``kinds.fetch_decides``) is fetched, and its answer decides
  (``meta["api_probe"]``): an HTML page is a page, JSON or XML is kind ``api``, recorded and
  not parsed for links;
- budgets: ``max_depth`` (hops) and ``max_pages`` (page requests) hold exactly; a URL
  over a budget is recorded, not requested, and the crawl log says which budget bound;
- ``<link rel=canonical>`` to another same-site URL: the canonical is enqueued; a page that
  is the canonical's own document under another spelling (``/docs/index.html`` for
  ``/docs/``, ``/a?sort=new`` for ``/a``) is recorded under the canonical (which inherits
  its citation), any other keeps its own record with ``canonical`` and the flag
  ``canonical_elsewhere`` (a page that answered exists, whatever it claims);
  a canonical that is the page's trailing-slash twin renames the record (SPEC §5 rule 7,
  either way), the fetched form going to ``aliases``;
- redirects (3xx and ``<meta http-equiv=refresh>``) are followed by the link crawl, not
  by Scrapy: the redirecting URL keeps its record (``redirected_to``; flag ``meta_refresh``
  for a refresh) and the target is admitted like a link found on it, at the same depth;
  a loop (a URL met again in its own chain, compared exactly) is flagged
  ``redirect_loop``; a redirect that only adds or drops the trailing slash is the same
  page: one record, under the URL that answered, the other form in ``aliases``;
- trailing-slash twins met in both forms and not decided by a fetch end in the slash form
  (rule 7): the seen-set's twin bookkeeping (``SeenSet.twins``), shared with the dedup
  stage, settles a page's record when it is written, or patches its line when the run
  ends.

Each fetched page yields one ``UrlBatch``: the page's record (citation ``via``,
``found_on``, ``anchor``, ``depth``; ``title``, ``status``, ``refusal``) plus the records
of the files and unfetched URLs it named. The batch is already deduplicated
(``deduplicated=True``) and goes through the same pipelines as sitemap batches.

Request meta, for the downloader middlewares: ``depth``, ``via`` (seed | sitemap | link),
``found_on`` (the page that linked, or the sitemap), ``anchor`` (link text, ≤ 160 chars),
``page_url`` (the normalized URL the record is kept under), ``entry`` (the sitemap record
in union mode), ``aliases`` (the URLs that redirected here by a slash), ``redirect_urls``
(the chain so far, as Scrapy names it), ``handle_httpstatus_all`` (refusals reach the
callback; ``response.meta["refusal"]`` set by the refusal middleware is recorded as is)
and ``dont_redirect`` (Scrapy's ``MetaRefreshMiddleware`` ignores
``handle_httpstatus_all``: it would fetch a refresh target in the page's place, so the
target's record and its links' base would be the refreshing page's).
"""

from __future__ import annotations

import itertools
import logging
from collections import Counter
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from scrapy import Request, signals
from scrapy.exceptions import DontCloseSpider, IgnoreRequest, StopDownload
from scrapy.http import HtmlResponse
from scrapy.utils.defer import deferred_from_coro
from twisted.internet.task import LoopingCall

from discovery_crawler.arguments import input_failure
from discovery_crawler.crawling.account import CrawlAccount, UnionTally
from discovery_crawler.crawling.extract import anchor_text, iter_links, scan_html
from discovery_crawler.crawling.held import HeldLinks
from discovery_crawler.indexing import index_tally, last_modified, page_directives, page_flags
from discovery_crawler.items import UrlBatch
from discovery_crawler.middlewares.refusals import API_PROBE
from discovery_crawler.middlewares.robots import RobotsDisallowed
from discovery_crawler.middlewares.ssrf import FLAG as SSRF_FLAG
from discovery_crawler.middlewares.ssrf import SSRFRefused
from discovery_crawler.refusals import classify_oversize, classify_response
from discovery_crawler.signals import page_refused
from discovery_crawler.unread import is_not_read
from discovery_crawler.urls.addresses import same_origin
from discovery_crawler.urls.credentials import without_credentials
from discovery_crawler.urls.filters import FilterPolicy
from discovery_crawler.urls.kinds import FILE_KINDS, answer_kind, fetch_decides, url_kind
from discovery_crawler.urls.normalize import UrlError, origin_of, twin_key
from discovery_crawler.urls.seen import ALIASED, RENAMED, RecordPatch, settled_form
from discovery_crawler.urls.slugs import normalized_paths

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from lxml.etree import _Element
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.settings import Settings
    from twisted.python.failure import Failure

    from discovery_crawler.arguments import RunOptions
    from discovery_crawler.crawling.extract import PageScan
    from discovery_crawler.extensions.run import DiscoveryRun
    from discovery_crawler.run_record import RunRecord

logger = logging.getLogger(__name__)

_ABSOLUTE = ("https://", "http://")
_FETCHED_KINDS = ("page", "paginated")  # followed; pagination is how a BFS reaches articles
# meta: a distributed job's page request this worker claimed (distributed/scheduler.py)
JOB_CLAIMED = "job_claimed"
JOB_MET = "job_met"  # the job requested the page before (another worker's record)
# a page a dead worker fetched, leased again: the job's scheduler sets it (cite)
FETCHED_AGAIN = "job_fetched_again"
DEFAULT_PAGE_MAX_BYTES = 15 * 1024 * 1024  # Googlebot reads the first 15 MB of an HTML page


def _listed_fields(listing: dict[str, Any], source: str) -> dict[str, Any]:
    """What a sitemap listing says of a URL, for a crawl record that lacked it (the seed
    stays the seed)."""
    fields = {k: listing.get(k) for k in ("sitemap", "lastmod", "priority", "changefreq")}
    fields["alternates"] = listing.get("alternates")
    if source != "seed":
        fields["source"] = listing.get("source") or "sitemap"
    return fields


_INDEX_NAMES = ("index.html", "index.htm", "index.php")


def same_document(url: str, canonical: str) -> bool:
    """Whether a page's canonical names the page itself under another spelling: its folder
    or its index file (``/docs/index.html`` ↔ ``/docs/``), or its path without the query
    (``/a?sort=new`` → ``/a``). Any other canonical names another page.

    Each side is compared in its trailing-slash twin form (SPEC §5 rule 7: ``/a`` and
    ``/a/`` are one page): a page fetched as ``/docs/x/?config=static`` (its host added
    the slash) whose canonical is ``/docs/x`` is that document, as is one fetched as
    ``/docs/x?config=static`` whose canonical is ``/docs/x/``."""
    path, _, query = url.partition("?")
    key = twin_key(canonical)
    if query and key == twin_key(path):
        return True
    for name in _INDEX_NAMES:  # either way round
        if path.endswith("/" + name) and key == twin_key(path[: -len(name)]):
            return True
        if canonical.endswith("/" + name) and twin_key(path) == canonical[: -len(name)]:
            return True
    return False


def take_twin(rec: dict[str, Any], canonical: str) -> None:
    """A fetched page's canonical is its trailing-slash twin (either way): the record takes
    the canonical's URL, the forms it was fetched under going to ``aliases``."""
    forms = dict.fromkeys((rec["url"], *(rec.get("aliases") or ())))
    rec["url"] = canonical
    rec["aliases"] = [form for form in forms if form != canonical]


def settle_twins(record: RunRecord, rec: dict[str, Any], fixed: bool, file: bool = False) -> None:
    """A record of a page requested earlier is about to be written (the link crawl, verify):
    it takes the twin forms met while it was in flight (SPEC §5 rule 7, ``Twins.settle``),
    and the seen-set's twin bookkeeping learns its form. ``fixed``: a fetch decided it (a
    canonical, a slash redirect); ``file``: never fetched as a page (its slash twin is not
    looked for)."""
    twins = record.seen.twins
    url = rec["url"]
    key = twin_key(url)
    fixed = fixed or "aliases" in rec
    forms = twins.settle(key) if twins.pending else None
    if forms:
        final, aliases = settled_form(url, key, rec.get("aliases") or [], forms, fixed)
        if final != url:
            record.counts["slash_twins"] += 1
            rec["url"] = url = final
        elif len(aliases) > len(rec.get("aliases") or ()):
            record.counts["twin_aliases"] += 1
        if aliases:
            rec["aliases"] = aliases
    noted = "aliases" in rec
    if key is not url or fixed or noted:
        twins.wrote(key, url, fixed=fixed, noted=noted, file=file)


def crawl_settings(settings: Settings) -> None:
    """Breadth-first order from Scrapy's own scheduler (set at spider priority, so
    ``-s`` still wins): FIFO queues and a priority falling with depth. The spiders set
    ``meta["depth"]`` themselves (a redirect or a canonical is no extra hop, a sitemap
    URL enters at depth 1), so Scrapy's ``DepthMiddleware`` is switched off."""
    if settings.frozen:
        return
    settings.set("DEPTH_PRIORITY", settings.getint("DEPTH_PRIORITY") or 1, priority="spider")
    settings.set("SCHEDULER_DISK_QUEUE", "scrapy.squeues.PickleFifoDiskQueue", priority="spider")
    settings.set("SCHEDULER_MEMORY_QUEUE", "scrapy.squeues.FifoMemoryQueue", priority="spider")
    middlewares = settings.getdict("SPIDER_MIDDLEWARES")
    middlewares.setdefault("scrapy.spidermiddlewares.depth.DepthMiddleware", None)
    settings.set("SPIDER_MIDDLEWARES", middlewares, priority="spider")


def bfs_budgets(options: RunOptions, settings: Settings) -> tuple[int | None, int | None]:
    """(max_pages, max_depth): ``-a`` first, then ``BFS_MAX_PAGES`` / ``BFS_MAX_DEPTH``
    (profile or ``-s``), where 0 means no budget (None), all capped by the profile's
    ``BFS_MAX_PAGES_LIMIT`` / ``BFS_MAX_DEPTH_LIMIT`` when it has one."""
    pages = options.max_pages
    if pages is None:
        pages = settings.getint("BFS_MAX_PAGES") or None
    depth = options.max_depth
    if depth is None:
        depth = settings.getint("BFS_MAX_DEPTH") or None
    page_cap = settings.getint("BFS_MAX_PAGES_LIMIT", 0)
    if page_cap and (pages is None or pages > page_cap):
        pages = page_cap
    depth_cap = settings.getint("BFS_MAX_DEPTH_LIMIT", 0)
    if depth_cap and (depth is None or depth > depth_cap):
        depth = depth_cap
    return pages, depth


def budget_names(options: RunOptions, settings: Settings) -> tuple[str, str]:
    """How the person gave each budget of ``bfs_budgets``, for the words that name it when
    it binds: the ``-a`` argument (``max_pages``, ``max_depth``), else the setting that
    set it (``BFS_MAX_PAGES``, or the profile's cap ``BFS_MAX_PAGES_LIMIT`` when it
    lowered the value)."""
    names = []
    for arg, setting in (("max_pages", "BFS_MAX_PAGES"), ("max_depth", "BFS_MAX_DEPTH")):
        given = getattr(options, arg)
        value = given if given is not None else (settings.getint(setting) or None)
        cap = settings.getint(f"{setting}_LIMIT", 0)
        if cap and (value is None or value > cap):
            names.append(f"{setting}_LIMIT")
        else:
            names.append(arg if given is not None else setting)
    return names[0], names[1]


def failure_refusal(failure: Failure) -> dict[str, Any]:
    """A minimal refusal record for a request that got no response."""
    exc = failure.value
    name = type(exc).__name__
    text = str(exc).strip() or name
    if isinstance(exc, RobotsDisallowed):
        if exc.rule.startswith("fail closed:") and "answered" not in exc.rule:
            # robots.txt got no answer at all: the site is unreachable, say that
            kind = "timeout" if "timeout" in exc.rule else "network"
            return {"class": kind, "reason": f"{exc.rule} (robots.txt got no answer)"}
        # not fetched, not refused: listed with the rule that blocked it
        return {"class": "robots", "reason": f"robots.txt: {exc.rule}", "rule": exc.rule}
    if isinstance(exc, SSRFRefused):
        # not fetched, and never will be: listed with the guard's rule
        return {"class": "ssrf", "reason": text, "rule": exc.rule}
    if isinstance(exc, IgnoreRequest):
        return {"class": "ignored", "reason": text}
    if "Timeout" in name or "timed out" in text.lower():
        return {"class": "timeout", "reason": text}
    return {"class": "network", "reason": f"{name}: {text}"}


def _header(response: Response, name: bytes) -> str | None:
    value = response.headers.get(name)
    return value.decode("latin-1") if value else None


def flag_directives(
    record: Any, rec: dict[str, Any], response: Response, meta: tuple[bool, bool], agent: str
) -> tuple[bool, bool]:
    """Flag a fetched page ``noindex`` / ``nofollow_page`` from its robots meta tags
    (``meta``: what the page scan found) and its ``X-Robots-Tag`` headers, tallied for the
    crawl log; (noindex, nofollow). The link crawl and verify both read pages so."""
    values = response.headers.getlist(b"X-Robots-Tag")
    header = (
        page_directives((), [v.decode("latin-1") for v in values], agent)
        if values
        else (False, False)
    )
    noindex, nofollow, by = page_flags(rec, meta, header)
    if by:
        index_tally(record).page(rec["url"], noindex, nofollow, by)
    return noindex, nofollow


class LinkCrawl:
    """The link crawl of one run (``links``, and ``discover`` in BFS modes): a component
    the spider drives, built with the spider's callbacks for page requests (so disk or
    Redis queues can name them). Its account goes on the run's record
    (``record.crawl``) once it requests a page."""

    def __init__(
        self,
        crawler: Crawler,
        run: DiscoveryRun,
        *,
        on_page: Callable[..., Any],
        on_page_failure: Callable[..., Any],
        union: bool = False,
    ) -> None:
        settings = crawler.settings
        self.crawler = crawler
        self.run = run
        self.record = run.record
        self.options = run.options
        self.origins = run.origins
        self._on_page = on_page
        self._on_page_failure = on_page_failure
        self.bfs_max_pages, self.bfs_max_depth = bfs_budgets(self.options, settings)
        self.pages_name, self.depth_name = budget_names(self.options, settings)
        self.depth_priority = settings.getint("DEPTH_PRIORITY")
        self.account = CrawlAccount(
            settings.getint("CRAWL_LOG_LIST_CAP"), self.bfs_max_pages, self.bfs_max_depth
        )
        if union:
            self.account.union = UnionTally(settings.getint("CRAWL_LOG_LIST_CAP"))
            if run.frontier is not None:  # a distributed job: its sightings job-wide
                self.account.union.sink = run.frontier.add_sightings
        self._bfs_filter: FilterPolicy | None = None
        # Union mode, a page linked before a sitemap listed it: the listing waits for the
        # page's record (requested, not yet written), or patches the line written without
        # it (fingerprint -> written URL and source); so the record has the listing's
        # metadata whichever came first.
        self._late_listings: dict[int, dict[str, Any]] = {}
        self._unlisted: dict[int, tuple[str, str]] = {}
        self._bfs_site_prefix = ""
        # Bad input: a page is read up to PAGE_MAX_BYTES and parsed from there
        # (as Googlebot does), flagged ``truncated``; a link longer than URLLENGTH_LIMIT is
        # malformed (Scrapy's UrlLengthMiddleware would drop its request without a record);
        # a redirect chain stops after REDIRECT_MAX_TIMES hops (the link crawl follows
        # redirects itself, so RedirectMiddleware's cap does not apply).
        self.page_max_bytes = settings.getint("PAGE_MAX_BYTES", DEFAULT_PAGE_MAX_BYTES)
        self.url_max_length = settings.getint("URLLENGTH_LIMIT", 2083)
        self.redirect_max_times = settings.getint("REDIRECT_MAX_TIMES", 20)
        self.download_maxsize = settings.getint("DOWNLOAD_MAXSIZE")
        # SSRF_SAME_ORIGIN under the guard: a seed redirected elsewhere does not move the site
        self.same_origin = settings.getbool("SSRF_GUARD_ENABLED") and settings.getbool(
            "SSRF_SAME_ORIGIN"
        )
        # A page's links are admitted, and leave as batches, DISCOVERY_BATCH_SIZE at a
        # time: a page of 200,000 links never holds them all (their records, or lxml's
        # tree of them). LINKS_PER_PAGE_MAX: links read on one page (0 = all); the rest
        # are counted and the page flagged ``links_capped``.
        self.batch_size = max(1, settings.getint("DISCOVERY_BATCH_SIZE", 1000))
        self.links_per_page_max = max(0, settings.getint("LINKS_PER_PAGE_MAX", 0))
        # LINKS_MAX_URLS: URLs the inventory holds at most, as links find them (0 = no
        # limit; service: 1,000); new links past it are counted (over_limit), not recorded.
        self.max_urls = max(0, settings.getint("LINKS_MAX_URLS", 0))
        # <meta http-equiv=refresh> is a redirect on Scrapy's terms (its MetaRefresh
        # settings): under METAREFRESH_MAXDELAY seconds, not inside an ignored element.
        self.refresh_redirects = settings.getbool("METAREFRESH_ENABLED", True)
        self.refresh_max_delay = settings.getfloat("METAREFRESH_MAXDELAY", 100)
        self.refresh_ignore = tuple(
            t.lower() for t in settings.getlist("METAREFRESH_IGNORE_TAGS", ["noscript"])
        )
        # A page's robots meta tag named after this token speaks to us too.
        self.agent = settings.get("ROBOTS_AGENT_TOKEN") or ""
        if self.page_max_bytes > 0:
            self.crawler.signals.connect(self._page_bytes, signal=signals.bytes_received)
        # Deterministic admission (two runs of an unchanged site agree): a newly linked URL
        # is held (key -> (depth, found_on, place, url, anchor)) until every page of a
        # smaller depth is done, so its citation is the best of all (smallest depth, then
        # smallest citing URL; within a page the first link), and a level is admitted
        # sorted by (found_on, document order), so max_pages reaches the same pages.
        # Union mode: held until the sitemap walk is over too (``walk_over``), as a listed
        # URL is cited by its sitemap. A level of many links (a page of 200,000) is held
        # on disk past HELD_LINKS_IN_MEMORY entries (``HeldLinks``) and admitted streaming.
        spill_at = settings.getint("HELD_LINKS_IN_MEMORY", 20_000)
        self._held = HeldLinks(spill_at, self.batch_size)
        self._held_order = 0  # a held link's place: its page's document order
        self._held_levels: Counter[int] = Counter()
        self._held_forms: dict[str, set[str]] = {}  # key -> twin spellings met while held
        self._in_flight: Counter[int] = Counter()
        self.walk_over: Callable[[], bool] | None = None
        self._poller: LoopingCall | None = None  # a distributed job's release poll
        # a distributed job: the page being read is a dead worker's, fetched again
        self._again = False
        crawler.signals.connect(self._dropped, signal=signals.request_dropped)
        crawler.signals.connect(self._idle, signal=signals.spider_idle)

    def _page_bytes(self, data: bytes, request: Request, **kwargs: Any) -> None:
        """Stop reading a page past PAGE_MAX_BYTES; what came is parsed."""
        meta = request.meta
        if not meta.get("page_fetch"):
            return
        received = meta.get("page_bytes", 0) + len(data)
        meta["page_bytes"] = received
        if received > self.page_max_bytes:
            meta["page_truncated"] = received
            raise StopDownload(fail=False)

    # -- admission ----------------------------------------------------------------------
    def _bfs_policy(self) -> FilterPolicy:
        site = self.record.site_origin or ""
        if self._bfs_filter is None or self._bfs_site_prefix != site + "/":
            opts = self.options
            self._bfs_filter = FilterPolicy(site, opts.include_paths, opts.exclude_paths)
            self._bfs_site_prefix = site + "/"
        return self._bfs_filter

    def _bfs_request(self, url: str, depth: int, meta: dict[str, Any]) -> Request:
        if self.record.crawl is None:  # the crawl log gets a crawl section once one runs
            self.record.crawl = self.account
        meta["depth"] = depth
        self._in_flight[depth] += 1
        meta["page_url"] = url
        meta["handle_httpstatus_all"] = True
        meta["dont_redirect"] = True  # redirects and refreshes are followed here
        meta["page_fetch"] = True  # the refusal middleware classifies page fetches only
        return Request(
            url,
            callback=self._on_page,
            errback=self._on_page_failure,
            priority=-depth * self.depth_priority,
            meta=meta,
        )

    def seed_for(self, start: str) -> str:
        """Where the crawl starts: the homepage given, or the site's root (a sitemap or a
        robots.txt given as input is no page)."""
        if self.options.input_kind == "homepage":
            return start
        seed = (self.record.site_origin or origin_of(start)) + "/"
        self.record.note(f"{self.options.url} is not a page; the link crawl started at {seed}")
        return seed

    def seed_request(self, url: str) -> Request:
        """The request for the seed (depth 0); the seed counts as linked (reachable).
        A worker of a distributed job whose seed another worker requested yields it
        unclaimed: the job's scheduler drops it."""
        self.record.seen.add(twin_key(url))
        self.record.seen.twins.expect(twin_key(url), url)
        self.record.counts["unique"] += 1
        meta = {"via": "seed", "found_on": None, "anchor": None}
        if self._job_claim(twin_key(url), 0, meta) > 0:
            self.account.requested += 1
            self.crawler.stats.inc_value("links/requested")
        else:  # another worker's seed: its record is that worker's (the job's counts)
            self.record.counts["unique"] -= 1
        union = self.account.union
        if union is not None:
            union.linked(twin_key(url), url)
        meta["slug"] = self.run.slugs.slugs_many([url], normalized_paths([url]))[0]
        return self._bfs_request(url, 0, meta)

    def _bfs_admit(
        self,
        url: str,
        depth: int,
        meta: dict[str, Any],
        records: list[dict[str, Any]],
        reason: str | None = None,
    ) -> Request | None:
        """A URL not seen before (already added to the seen-set): a request for it, or its
        record in ``records`` when it is not to be fetched (``reason`` given: never)."""
        record = self.record
        record.counts["unique"] += 1
        account = self.account
        anchor = meta.get("anchor")
        if anchor is not None and anchor.__class__ is not str:
            meta["anchor"] = anchor_text(anchor)  # only for new links: text costs
        kind = url_kind(url)
        if kind == "api" and reason is None and fetch_decides(url):
            kind = "page"  # an /api/ path: fetched, its answer says page or api (parse_page)
            meta[API_PROBE] = True
        if reason is None and kind in _FETCHED_KINDS:
            decision = self._bfs_policy().decide(url, "page")
            if not decision.keep:
                reason = decision.reason
            elif decision.flags:
                reason = decision.flags[0]  # requires_auth: kept, not crawled
        elif reason is None:
            reason = "file" if kind in FILE_KINDS else kind
        if reason is None and self.bfs_max_depth is not None and depth > self.bfs_max_depth:
            reason = "over_max_depth"
            record.limit_bound("BFS_MAX_DEPTH", value=self.bfs_max_depth, given=self.depth_name)
        if reason is None and self.run.frontier is not None:
            # a distributed job: seen and max_pages are the job's (claimed in Redis)
            claimed = self._job_claim(twin_key(url), depth, meta)
            if claimed == 0:  # another worker requested it: its record is that worker's
                record.counts["unique"] -= 1
                meta[JOB_MET] = True
                if account.union is None:
                    # requested in this form by the job: should this worker fetch it (a
                    # lease of the job's, a dead worker's page again), its record takes
                    # the requested form, and the forms met meanwhile wait for it. (Not
                    # in union mode: a listing this worker writes of the URL takes the
                    # twin forms met as aliases, which waiting would withhold.)
                    record.seen.twins.expect(twin_key(url), url)
                return None
            over = claimed < 0
        else:
            over = bool(
                reason is None and self.bfs_max_pages and account.requested >= self.bfs_max_pages
            )
        if over:
            reason = "over_max_pages"
            record.limit_bound("BFS_MAX_PAGES", value=self.bfs_max_pages, given=self.pages_name)
        if reason is not None:
            account.not_fetched[reason] += 1
            self.crawler.stats.inc_value(f"links/not_fetched/{reason}")
            rec = self._bfs_record(url, meta, depth, None)
            if reason.startswith("over_"):
                rec["flags"] = [reason]
            self._bfs_wrote(rec, file=kind not in _FETCHED_KINDS)
            records.append(rec)
            return None
        account.requested += 1
        self.crawler.stats.inc_value("links/requested")
        self.record.seen.twins.expect(twin_key(url), url)
        # Its slug now, in admission order (deterministic), not when it answers.
        meta["slug"] = self.run.slugs.slugs_many([url], normalized_paths([url]))[0]
        return self._bfs_request(url, depth, meta)

    def _job_claim(self, key: str, depth: int, meta: dict[str, Any]) -> int:
        """A worker of a distributed job claims the page before requesting it
        (``DiscoveryRun.frontier``: 0 met by the job before, -1 over the job's max_pages,
        else claimed; the request is then marked claimed), its citation weighed against
        the other workers'. A local run: always 1."""
        frontier = self.run.frontier
        if frontier is None:
            return 1
        citation = {k: meta.get(k) for k in ("found_on", "via", "anchor")}
        claimed = frontier.claim(key, self.bfs_max_pages, {**citation, "depth": depth})
        if claimed > 0:
            meta[JOB_CLAIMED] = True
        return claimed

    def _claim_again(self, url: str, depth: int, page: str, el: Any) -> Request | None:
        """A link met before, on a dead worker's page fetched again (``FETCHED_AGAIN``):
        claimed anew, so its citation from this page is weighed (one run cites it from
        here when its level is admitted), and its page requested here should the dead
        worker's claim have been given back (REAP) before its request was queued."""
        if url_kind(url) not in _FETCHED_KINDS or not self._bfs_policy().decide(url, "page").keep:
            return None
        if self.bfs_max_depth is not None and depth > self.bfs_max_depth:
            return None
        anchor = el if el is None or el.__class__ is str else anchor_text(el)
        meta: dict[str, Any] = {"via": "link", "found_on": page, "anchor": anchor}
        if self._job_claim(twin_key(url), depth, meta) <= 0:
            return None  # the job has it (or its budget is spent: its record is another's)
        self.record.counts["unique"] += 1
        self.account.requested += 1
        self.crawler.stats.inc_value("links/requested")
        self.crawler.stats.inc_value("links/claimed_again")
        self.record.seen.twins.expect(twin_key(url), url)
        meta["slug"] = self.run.slugs.slugs_many([url], normalized_paths([url]))[0]
        return self._bfs_request(url, depth, meta)

    def _job_page_done(self, request: Request) -> None:
        """A distributed job: the page's links are held (told to the job first), so it
        no longer counts at its depth — a level is admitted job-wide once no worker has a
        page of a smaller depth, or holds links of one (``release``)."""
        frontier = self.run.frontier
        if frontier is not None:
            frontier.hold(self._held_levels)
            frontier.page_done(request)

    def _job_held(self) -> None:
        frontier = self.run.frontier
        if frontier is None:
            return
        frontier.hold(self._held_levels)
        if self._poller is None:
            # Another worker's level may end while this one waits with links held and no
            # page of its own to answer: it looks again every 0.5 s (and its links keep
            # the job from looking done, so it would never go idle).
            self._poller = LoopingCall(self._release_held)
            self._poller.start(0.5, now=False)
            self.crawler.signals.connect(self._stop_poller, signal=signals.spider_closed)

    def _stop_poller(self) -> None:
        if self._poller is not None and self._poller.running:
            self._poller.stop()

    def _release_held(self) -> None:
        """Admit the held levels that may go now; their requests scheduled, their
        records (not fetched: a file, over a budget) sent to the pipelines."""
        if not self._held:
            return
        engine = self.crawler.engine
        if engine is None or engine.spider is None:
            return
        for output in list(self.release()):
            if isinstance(output, Request):
                engine.crawl(output)
            else:
                deferred_from_coro(engine.scraper.start_itemproc_async(output, response=None))
        self._job_held()

    # -- deterministic admission ------------------------------------------------------
    def _hold(self, key: str, url: str, depth: int, page: str, el: Any, place: int = 0) -> None:
        """A URL a page links: held for its level, or its citation improved."""
        anchor = anchor_text(el) if el is not None and el.__class__ is not str else el
        old = self._held.get(key)
        if old is not None:
            self._held_levels[old[0]] -= 1
        if not place:
            self._held_order += 1
            place = self._held_order
        self._held.put(key, (depth, page, place, url, anchor), new=old is None)
        self._held_levels[depth] += 1

    def _twins_sighted(self, key: str, spellings: list[str]) -> None:
        """The other spellings of a released URL met while it was held, told to the
        twin bookkeeping as ``_bfs_follow`` tells it of a URL met again."""
        twins = self.record.seen.twins
        counts = self.record.counts
        for spelling in spellings:
            twin = twins.sighted(key, spelling)
            if twin is RENAMED:
                counts["slash_twins"] += 1
            elif twin is ALIASED:
                counts["twin_aliases"] += 1

    def _unhold(self, key: str, depth: int) -> bool:
        """A held URL met at a smaller depth (a redirect, a canonical, a listing): it
        leaves the held set, to be admitted by its caller now."""
        old = self._held.get(key)
        if old is None or old[0] <= depth:
            return False
        del self._held[key]
        self._held_levels[old[0]] -= 1
        return True

    def _dropped(self, request: Request, **kwargs: Any) -> None:
        """A page request the scheduler dropped: never answered, no longer in flight."""
        if request.meta.get("page_fetch") and "depth" in request.meta:
            self._in_flight[request.meta["depth"]] -= 1

    def _idle(self) -> None:
        """Nothing in flight but URLs still held (a request lost without an answer): its
        level is released now, so the crawl goes on."""
        if not self._held:
            return
        self._in_flight.clear()
        self._release_held()
        if self._held and self.run.frontier is not None:
            # a distributed job: another worker's smaller level is not done yet
            raise DontCloseSpider

    def release(self) -> Iterator[UrlBatch | Request]:
        """Admit every held level whose smaller depths are done (and, in union mode, the
        sitemap walk): sorted by (found_on, the order of its links), so the budgets reach
        the same pages."""
        held = self._held
        if not held or (self.walk_over is not None and not self.walk_over()):
            return
        levels, in_flight = self._held_levels, self._in_flight
        frontier = self.run.frontier
        while held:
            level = min(d for d, n in levels.items() if n > 0)
            if frontier is not None:
                # a distributed job: the job's pages, whichever worker fetches them (this
                # worker's requests go to others, and it answers theirs)
                if frontier.pending_below(level):
                    return
            elif any(n > 0 for d, n in in_flight.items() if d < level):
                return
            chosen = held.take(level)  # removed from the store before any is admitted
            first = next(chosen, None)
            del levels[level]
            if first is None:
                continue
            # The level counts as in flight while it is admitted: its first requests
            # leave before its last are made, and the next level waits for them all.
            in_flight[level] += 1
            try:
                yield from self._release_level(level, itertools.chain((first,), chosen))
            finally:
                in_flight[level] -= 1

    def _release_level(self, level: int, chosen: Iterator[Any]) -> Iterator[UrlBatch | Request]:
        """Admit a level's held links in order, their records and requests leaving a
        batch at a time (a level of 200,000 links is never all in memory)."""
        records: list[dict[str, Any]] = []
        requests: list[Request] = []
        forms = self._held_forms
        for found_on, _, url, key, anchor in chosen:
            meta = {"via": "link", "found_on": found_on, "anchor": anchor}
            request = self._bfs_admit(url, level, meta, records)
            if request is not None:
                requests.append(request)
            if forms and key in forms:
                self._twins_sighted(key, sorted(forms.pop(key) - {url}))
            if len(records) + len(requests) >= self.batch_size:
                if records:
                    yield from self._bfs_batches(records[0]["found_on"], records, "link")
                yield from requests
                records, requests = [], []
        if records:
            yield from self._bfs_batches(records[0]["found_on"], records, "link")
        yield from requests

    def admit_listed(self, records: list[dict[str, Any]], sitemap: str) -> list[dict[str, Any]]:
        """Union mode: normalized sitemap records enter the crawl at depth 1 (``via``
        sitemap). Returns the records to write now (already known, or not to be fetched:
        the dedup stage takes them as usual); the others are written when fetched."""
        seen = self.record.seen
        union = self.account.union
        prefix = (self.record.site_origin or "") + "/"
        keep = []
        engine = self.crawler.engine
        for rec in records:
            url = rec["url"]
            key = url if url[-1] == "/" else twin_key(url)
            if union is not None:
                union.listed(key, url)
            # At depth 1 a listing beats a held link: the URL is cited by its sitemap.
            held = self._held.get(key) if url.startswith(prefix) else None
            if held is not None:
                self._unhold(key, 0)
            elif not url.startswith(prefix) or key in seen:
                if key in seen and url.startswith(prefix):
                    self._bfs_late_listing(key, rec)
                    if self.run.frontier is not None:
                        # a distributed job: the page's record may be another worker's
                        # (a link or the seed the job had met): the listing is written
                        # too (the dedup stage takes it), the job's merge joins the two
                        seen.listed_over_link[key] = []
                keep.append(rec)  # the dedup stage adds its sitemap to the sources
                continue
            depth = 1
            kind = url_kind(url)
            if (
                (kind not in _FETCHED_KINDS and not fetch_decides(url))
                or (self.bfs_max_depth is not None and depth > self.bfs_max_depth)
                or (self.bfs_max_pages and self.account.requested >= self.bfs_max_pages)
                or not (decision := self._bfs_policy().decide(url, "page")).keep
                or decision.flags  # requires_auth: listed, flagged, never fetched
            ):
                # A sitemap record, as in sitemap mode: the stages drop or flag it. (Not
                # admitted here: a record admitted but not fetched would meet its own key
                # in the seen-set at the dedup stage and vanish as a duplicate.) A held
                # link to it gives way: the listing's record is written, as when the
                # listing came first, and the dedup stage takes it though its key is seen.
                if held is not None:
                    forms = self._held_forms.pop(key, set()) | {held[3]}
                    seen.listed_over_link[key] = sorted(forms - {url})
                keep.append(rec)
                continue
            seen.add(key)
            unfetched: list[dict[str, Any]] = []
            meta = {"via": "sitemap", "found_on": sitemap, "anchor": None, "entry": rec}
            request = self._bfs_admit(url, depth, meta, unfetched)
            if request is not None:
                self.account.listed_requested += 1
                engine.crawl(request)
            elif meta.get(JOB_MET):
                # a distributed job: another worker requested it; this listing is written
                # as a sitemap record (the dedup stage takes it though its key is seen),
                # the job's merge joins it to that worker's fetched record
                seen.listed_over_link[key] = []
                keep.append(rec)
            else:
                keep.extend(unfetched)
            if held is not None:
                # The held link's spellings (a slashless ``href`` to a listed slash URL)
                # are met as if the page had been read after the listing: its twin joins
                # the record's aliases either way, whichever answered first.
                forms = self._held_forms.pop(key, set()) | {held[3]}
                self._twins_sighted(key, sorted(forms - {url}))
        return keep

    def sitemap_not_read(self, url: str) -> None:
        """Union mode: the sitemap walk could not read ``url`` after its retries, so no
        page is flagged ``links_only`` (``UnionTally``)."""
        if self.account.union is not None:
            self.account.union.sitemap_not_read()

    def _bfs_late_listing(self, key: str, listing: dict[str, Any]) -> None:
        """A sitemap lists a URL the crawl already reached by a link (or entered as an
        hreflang alternate): its record takes the listing's metadata (source, sitemap,
        lastmod, priority, changefreq, alternates), now if it is still being fetched, else
        when the run ends (a ``RecordPatch``). A ``<loc>`` beats an alternate."""
        fp = hash(key) or 1
        loc = listing.get("source") != "alternate"
        if fp in self.record.seen.twins.pending:
            waiting = self._late_listings.get(fp)
            if waiting is None or (loc and waiting.get("source") == "alternate"):
                self._late_listings[fp] = listing
            return
        written = self._unlisted.get(fp)
        if written is None or not (loc or written[1] != "alternate"):
            return  # not the crawl's record, listed already, or no better than it was
        url, source = written
        if loc:
            del self._unlisted[fp]
        patch = self.record.seen.upgrades.get(fp)
        if patch is None:
            patch = self.record.seen.upgrades[fp] = RecordPatch(url=url)
        elif not isinstance(patch, RecordPatch):
            return
        patch.update(_listed_fields(listing, source))

    # -- records --------------------------------------------------------------------------
    def _bfs_record(
        self, url: str, meta: dict[str, Any], depth: int, status: int | None
    ) -> dict[str, Any]:
        via = meta.get("via") or "link"
        entry = meta.get("entry")
        rec = {
            "url": url,
            "source": via,
            "sitemap": None,
            "lastmod": None,
            "priority": None,
            "changefreq": None,
            "alternates": None,
        }
        if entry is not None:  # listed by a sitemap (union mode): keep what it said
            rec.update((k, entry[k]) for k in rec if k != "url" and k in entry)
            rec["source"] = entry.get("source") or "sitemap"
        rec.update(
            via=via,
            found_on=meta.get("found_on"),
            anchor=meta.get("anchor"),
            depth=depth,
            title=None,
            status=status,
            refusal=None,
        )
        slug = meta.get("slug")
        if slug is not None:  # given when it was admitted
            rec["slug"] = slug
        aliases = meta.get("aliases")
        if aliases:  # fetched here after a redirect that only added or dropped the slash
            rec["aliases"] = list(aliases)
        return rec

    def _bfs_wrote(self, rec: dict[str, Any], fixed: bool = False, file: bool = False) -> None:
        """A record is about to be written: its twins settled (``settle_twins``); in union
        mode, a sitemap listing that came while it was fetched joins it, or is awaited."""
        settle_twins(self.record, rec, fixed, file)
        if self.account.union is not None and (
            rec["sitemap"] is None or rec["source"] == "alternate"
        ):
            fp = hash(twin_key(rec["url"])) or 1
            listing = self._late_listings.pop(fp, None)
            if listing is not None and (rec["sitemap"] is None or listing["source"] != "alternate"):
                rec.update(_listed_fields(listing, rec["source"]))
            if rec["sitemap"] is None or rec["source"] == "alternate":  # a <loc> may come
                self._unlisted[fp] = (rec["url"], rec["source"])

    def _bfs_batch(self, document: str, records: list[dict[str, Any]], source: str) -> UrlBatch:
        union = self.account.union
        return UrlBatch(
            source,
            document,
            records=records,
            seen=self.record.seen,
            deduplicated=True,
            finals=union,
        )

    def _bfs_batches(
        self, document: str, records: list[dict[str, Any]], source: str
    ) -> Iterator[UrlBatch]:
        """``records`` as batches of at most DISCOVERY_BATCH_SIZE."""
        size = self.batch_size
        if len(records) <= size:
            if records:
                yield self._bfs_batch(document, records, source)
            return
        for start in range(0, len(records), size):
            yield self._bfs_batch(document, records[start : start + size], source)

    # -- responses ------------------------------------------------------------------------
    def parse_page(self, response: Response) -> Iterator[UrlBatch | Request]:
        """A page's answer (``_parse_page``); then whatever level it let go (``release``)."""
        self._again = bool(response.meta.get(FETCHED_AGAIN))  # its links claimed again
        try:
            yield from self._parse_page(response)
        finally:
            self._again = False
            self._in_flight[response.meta.get("depth", 0)] -= 1
            self._job_page_done(response.request)
        yield from self.release()
        self._job_held()

    def _parse_page(self, response: Response) -> Iterator[UrlBatch | Request]:
        """The page's record and the records of what it named but is not fetched, in
        batches of up to DISCOVERY_BATCH_SIZE records as its links are admitted (the
        first holds the page's own record), each followed by the requests for the new
        pages it admitted: a page of 200,000 links is read, admitted and written a batch
        at a time, the budgets holding as each link is admitted."""
        meta = response.meta
        url = meta.get("page_url") or response.url
        depth = meta.get("depth", 0)
        status = response.status
        account = self.account
        account.fetched += 1
        account.status[status] += 1
        account.depths[depth] += 1
        stats = self.crawler.stats
        stats.inc_value("links/fetched")
        rec = self._bfs_record(url, meta, depth, status)
        refusal = meta.get("refusal")
        if refusal is not None:
            rec["refusal"] = refusal
            account.refused(url, refusal, rec["found_on"])
            stats.inc_value(f"links/refusals/{refusal.get('class')}")
            if account.union is not None and is_not_read(refusal.get("class")):
                account.union.page_not_read()  # a 5xx after retries: no link read
        records = [rec]
        requests: list[Request] = []
        if meta.get(API_PROBE) and 200 <= status < 300:  # its answer says what it is
            ctype = response.headers.get(b"Content-Type", b"").decode("latin-1")
            rec["kind"] = answer_kind(ctype, isinstance(response, HtmlResponse))
        if meta.get("page_truncated"):
            self._bfs_truncated(rec, meta["page_truncated"])
        fixed = "aliases" in rec  # a slash redirect decided the form
        wrote = False
        if 300 <= status < 400 and refusal is None:
            location = response.headers.get(b"Location")
            login = self._bfs_login_wall(response, location)
            if login is not None:
                rec["refusal"] = login
                account.refused(url, login, rec["found_on"])
                stats.inc_value("links/refusals/login")
            elif location:
                target = without_credentials(location.decode("latin-1"))  # never kept
                account.redirects.append({"url": url, "to": target, "status": status})
                self._bfs_redirect(target, url, url, response, rec, records, requests)
        elif 200 <= status < 300 and refusal is None and isinstance(response, HtmlResponse):
            cap = self.links_per_page_max
            keep = min(self.batch_size, cap) if cap else self.batch_size
            scan = scan_html(
                response.body, response.encoding, self.refresh_ignore, keep, self.agent
            )
            rec["title"] = scan.title
            if modified := last_modified(_header(response, b"Last-Modified")):
                rec["last_modified"] = modified  # the written sitemap's lastmod, unlisted
            nofollow = self._bfs_directives(rec, response, (scan.noindex, scan.nofollow))
            account.nofollow += scan.nofollow_links
            base = url
            if scan.base:
                try:
                    base = urljoin(url, scan.base)
                except ValueError:
                    base = url
            if (
                scan.refresh is not None
                and self.refresh_redirects
                and scan.refresh_delay < self.refresh_max_delay
            ):
                # A redirect: its own record (redirected_to, meta_refresh), the target
                # fetched under its own URL, so its links resolve against it. The page's
                # links are followed too: they are hrefs of a page that was fetched.
                account.refreshes.append(
                    {
                        "url": url,
                        "to": without_credentials(scan.refresh),
                        "delay": scan.refresh_delay,
                    }
                )
                stats.inc_value("links/meta_refresh")
                self._bfs_redirect(scan.refresh, base, url, response, rec, records, requests)
            elif scan.canonical:
                canonical = self._bfs_canonical(scan.canonical, base, url, meta, rec, records)
                if canonical is None:
                    records.remove(rec)  # recorded under its canonical
                fixed = fixed or canonical is True
            page = url  # what its links are found on: the record's URL, when it has one
            if records and records[0] is rec:
                self._bfs_wrote(rec, fixed)  # before its links: a page may link its twin
                wrote = True
                page = rec["url"]
            if nofollow:
                account.nofollow_pages += 1
            else:
                source = rec["source"]
                for links in self._page_links(response, scan, rec):
                    self._bfs_follow(links, base, page, depth, records, requests)
                    del links  # its elements: the parse frees what it read
                    if len(records) + len(requests) >= self.batch_size:
                        yield from self._bfs_batches(url, records, source)
                        yield from requests
                        records, requests = [], []
        elif 200 <= status < 300 and refusal is None:  # a file: its header may say noindex
            self._bfs_directives(rec, response, (False, False))
        if not wrote and records and records[0] is rec:
            self._bfs_wrote(rec, fixed)
        yield from self._bfs_batches(url, records, rec["source"])
        yield from requests

    def _bfs_directives(
        self, rec: dict[str, Any], response: Response, meta: tuple[bool, bool]
    ) -> bool:
        """Flag the page ``noindex`` / ``nofollow_page`` from its robots meta tags
        (``meta``: what the scan found) and its ``X-Robots-Tag`` headers; listed in the
        crawl log. True when its links are not to be followed."""
        noindex, nofollow = flag_directives(self.record, rec, response, meta, self.agent)
        stats = self.crawler.stats
        if noindex:
            stats.inc_value("links/noindex_pages")
        if nofollow:
            stats.inc_value("links/nofollow_pages")
        return nofollow

    def _page_links(
        self, response: Response, scan: PageScan, rec: dict[str, Any]
    ) -> Iterator[list[tuple[str, _Element]]]:
        """The page's followable links, in lists of up to DISCOVERY_BATCH_SIZE: those the
        scan kept, then (a page with more) the rest read again from the body, streaming.
        Past LINKS_PER_PAGE_MAX the links are not read: counted, the page flagged."""
        kept = scan.links
        total = len(kept) + scan.more
        cap = self.links_per_page_max
        if cap and total > cap:
            self._links_capped(rec, total, cap)
            total = cap
            del kept[cap:]
        skip = len(kept)
        if kept:
            yield kept
        scan.links = kept = []  # their elements go once admitted
        if total > skip:
            yield from iter_links(
                response.body, response.encoding, self.batch_size, skip=skip, limit=total - skip
            )

    def _links_capped(self, rec: dict[str, Any], links: int, cap: int) -> None:
        """A page with more links than LINKS_PER_PAGE_MAX: the first ``cap`` are followed
        (document order), the others dropped unread — counted, the page flagged
        ``links_capped``, listed in the crawl log, said in the log."""
        dropped = links - cap
        account = self.account
        account.links_capped.append(
            {"url": rec["url"], "links": links, "followed": cap, "dropped": dropped}
        )
        account.links_dropped += dropped
        rec["flags"] = [*(rec.get("flags") or ()), "links_capped"]
        self.crawler.stats.inc_value("links/links_dropped", dropped)
        self.crawler.stats.inc_value("links/links_capped")
        self.record.limit_bound("LINKS_PER_PAGE_MAX", value=cap)
        logger.info(
            "Page %s has %d links, over LINKS_PER_PAGE_MAX (%d): the first %d are "
            "followed, %d dropped unread",
            rec["url"],
            links,
            cap,
            cap,
            dropped,
        )

    def _bfs_redirect(
        self,
        raw: str,
        base: str,
        url: str,
        response: Response,
        rec: dict[str, Any],
        records: list[dict[str, Any]],
        requests: list[Request],
    ) -> None:
        """Follow a redirect of the page ``url`` (record ``rec``): a 3xx ``Location`` or a
        refresh target, ``raw``, resolved against ``base``.

        Not a link hop: the target keeps this page's depth. A loop is a URL met again in
        its own chain, compared exactly (``/a`` → ``/b`` → ``/a``, ``/c`` → ``/c``, ``/d`` →
        ``/d/`` → ``/d``): flagged, not fetched again. A redirect that only adds or drops
        the trailing slash leads to the same page (the twins share a seen-set key): the
        target is fetched in this record's place and gives the one record, this URL in its
        ``aliases``. Any other target is admitted like a link found on this URL; past
        REDIRECT_MAX_TIMES hops it is recorded, not fetched."""
        meta = response.meta
        refresh = 200 <= response.status < 300
        flags = rec.get("flags") or []
        if refresh:
            flags.append("meta_refresh")
            rec["flags"] = flags
        normalize = self.origins.normalize
        try:
            raw = without_credentials(raw)  # a site's credentials: not followed, not kept
            target = without_credentials(normalize(urljoin(base, raw).partition("#")[0]))
        except (UrlError, ValueError):
            self.account.malformed_links += 1
            return
        rec["redirected_to"] = target
        depth = meta.get("depth", 0)
        chain = [*meta.get("redirect_urls", ()), response.url]
        if depth == 0 and meta.get("via") == "seed":
            site = self.record.site_origin
            if self.same_origin and site and not same_origin(target, site):
                self._bfs_seed_refused(target, url, rec)
                return
            self._bfs_seed_moved(target, url)
        if target == url or self._bfs_in_chain(target, chain):
            flags.append("redirect_loop")
            rec["flags"] = flags
            self.account.redirect_loops += 1
            self.crawler.stats.inc_value("links/redirect_loops")
            return
        over = len(chain) > self.redirect_max_times > 0
        if over:
            limit = self.redirect_max_times
            self.record.limit_bound("REDIRECT_MAX_TIMES", value=limit, url=chain[0])
            logger.info(
                "Redirect chain from %s is %d hops long (REDIRECT_MAX_TIMES): %s "
                "is recorded, not fetched",
                chain[0],
                len(chain),
                target,
            )
        if twin_key(target) == twin_key(url):  # only the trailing slash differs
            if over:
                flags.append("over_max_redirects")
                rec["flags"] = flags
                self.account.not_fetched["over_max_redirects"] += 1
                return
            self._bfs_slash_follow(target, url, meta, chain, requests)
            records.remove(rec)  # the target's fetch gives the page's record
            return
        union = self.account.union
        self.account.redirected += 1
        self._bfs_follow(
            [(target, None)],
            url,
            url,
            depth,
            records,
            requests,
            hop=0,
            redirect=chain,
            reason="over_max_redirects" if over else None,
            # union: a redirect from a linked URL leads to a page reachable by links
            linked=union is not None and union.is_linked(twin_key(url)),
        )

    def _bfs_in_chain(self, target: str, chain: list[str]) -> bool:
        """``target`` (normalized) is one of the URLs already requested in its chain."""
        normalize = self.origins.normalize
        for hop in chain:
            try:
                if normalize(hop) == target:
                    return True
            except UrlError:
                continue
        return False

    def _bfs_slash_follow(
        self,
        target: str,
        url: str,
        meta: dict[str, Any],
        chain: list[str],
        requests: list[Request],
    ) -> None:
        """Fetch ``target``, the twin ``url`` redirected to, as the same page: its citation,
        depth and sitemap entry carry over, ``url`` joins its aliases. Not a new page
        request: ``max_pages`` counted the page once."""
        account = self.account
        account.slash_redirects.append({"url": url, "to": target})
        self.record.counts["slash_redirects"] += 1
        self.crawler.stats.inc_value("links/slash_redirects")
        kept = ("via", "found_on", "anchor", "entry", "slug", JOB_CLAIMED)
        follow = {k: meta[k] for k in kept if k in meta}
        follow["aliases"] = [*meta.get("aliases", ()), url]
        follow["redirect_urls"] = chain
        if self.run.frontier is not None and follow.get(JOB_CLAIMED):
            # the job counts it at its depth now (its redirect is done before it is queued)
            self.run.frontier.count_follow(meta.get("depth", 0))
        requests.append(self._bfs_request(target, meta.get("depth", 0), follow))

    def _bfs_truncated(self, rec: dict[str, Any], received: int) -> None:
        """A page over PAGE_MAX_BYTES: parsed from its first bytes, flagged, said once."""
        rec["flags"] = ["truncated"]
        self.account.truncated.append({"url": rec["url"], "bytes_read": received})
        self.crawler.stats.inc_value("links/truncated")
        self.record.limit_bound("PAGE_MAX_BYTES", value=self.page_max_bytes)
        logger.info(
            "Page %s is larger than PAGE_MAX_BYTES (%d): parsed its first %d bytes",
            rec["url"],
            self.page_max_bytes,
            received,
        )

    def _bfs_login_wall(self, response: Response, location: bytes | None) -> dict | None:
        """A redirect to a login page whose return parameter points back here is a
        ``login`` refusal (SPEC §11), said of this page; the login page is not fetched
        (auth-walled URLs are kept and flagged, never crawled)."""
        if not location:
            return None
        try:
            target = urljoin(response.url, location.decode("latin-1"))
        except ValueError:
            return None
        chain = [*response.meta.get("redirect_urls", ()), response.url]
        refusal = classify_response(target, response.status, {}, b"", chain)
        if refusal is None or refusal.refusal_class != "login":
            return None
        found = refusal.cite(response.meta).as_dict()
        summary = self.record.refusals  # the refusal middleware's, when it runs
        if summary is not None:
            summary.add(found)
            self.crawler.stats.inc_value("refusals/login")
            self.crawler.signals.send_catch_log(
                signal=page_refused, request=response.request, refusal=found
            )
        return found

    def _bfs_seed_refused(self, target: str, url: str, rec: dict[str, Any]) -> None:
        """Same origin only (the SSRF guard, profile service): the seed redirected to
        another origin, which is not asked and does not become the site; the seed's record
        carries the refusal (its target is no page of the site), as the guard's list does."""
        why = f"{origin_of(target)} is not the site's origin {self.record.site_origin}"
        why += " (same origin only)"
        text = f"refused by the SSRF guard: {target}: {why}"
        refusal = {"class": "ssrf", "reason": text, "rule": "other_origin"}
        rec["refusal"] = refusal
        rec["flags"] = [*(rec.get("flags") or ()), SSRF_FLAG]
        self.account.refused(url, refusal, rec["found_on"])
        self.account.not_fetched[SSRF_FLAG] += 1
        self.crawler.stats.inc_value("ssrf/refused/other_origin")
        summary = self.record.ssrf
        if summary is not None:
            entry = {"url": target, "rule": "other_origin", "reason": why, "request": "page"}
            summary.add({**entry, "found_on": None, "redirected_from": url})
        logger.warning(text)

    def _bfs_seed_moved(self, target: str, url: str) -> None:
        """The seed redirected (http→https, bare→www, another host): the site lives
        where it landed; its old spellings are rewritten to the new origin."""
        try:
            moved = self.origins.normalize(urljoin(url, target).partition("#")[0])
        except (UrlError, ValueError):
            return
        origin = moved[: moved.find("/", 8)]
        site = self.record.site_origin
        if not site or origin == site:
            return
        self.origins.rewrite[site] = origin
        self.run.name_site(origin, f"the seed {url} redirected to {origin}; crawled {origin}")

    def _bfs_canonical(
        self,
        raw: str,
        base: str,
        url: str,
        meta: dict[str, Any],
        rec: dict[str, Any],
        records: list[dict[str, Any]],
    ) -> bool | None:
        """What the page's canonical says: None when the page is an alias of another
        same-site URL (recorded there); True when it decides the page's form — itself, or
        its trailing-slash twin, which ``rec`` then takes (SPEC §5 rule 7: either form;
        the fetched one joins its aliases); False when it says nothing usable, or names
        another page: a page that answered is in the inventory under its own URL, with the
        canonical it names (``canonical``, flag ``canonical_elsewhere``) — sites that give
        every page the home page's canonical are common, and their pages exist."""
        try:
            canonical = self.origins.normalize(urljoin(base, raw).partition("#")[0])
        except (UrlError, ValueError):
            return False
        if not canonical.startswith(self._bfs_site_prefix or (self.record.site_origin or "") + "/"):
            return False
        if canonical == url:
            return True
        if "//" in canonical[canonical.find("//") + 2 :]:
            # An empty path segment (``https://host//docs/``): a template's join gone
            # wrong, not a page to name the record by.
            self.account.canonical_ignored.append({"url": url, "canonical": canonical})
            self.crawler.stats.inc_value("links/canonical_ignored")
            return False
        key = twin_key(canonical)
        account = self.account
        if key == twin_key(url):
            take_twin(rec, canonical)
            account.canonical_twins.append({"url": url, "canonical": canonical})
            self.record.counts["canonical_twins"] += 1
            self.crawler.stats.inc_value("links/canonical_twins")
            return True
        alias = same_document(url, canonical)
        if self.record.seen.add(key) or self._unhold(key, meta.get("depth", 0)):
            # The canonical inherits this page's citation and depth, and is enqueued.
            inherited = {k: meta.get(k) for k in ("via", "found_on", "anchor", "entry")}
            if not alias:
                inherited.update(via="canonical", found_on=url, anchor=None)
            request = self._bfs_admit(canonical, meta.get("depth", 0), inherited, records)
            if request is not None:
                self.crawler.engine.crawl(request)
        if alias:  # the same document under another spelling: recorded as the canonical
            account.canonical_aliases.append({"url": url, "canonical": canonical})
            self.record.counts["canonical_aliases"] += 1
            self.crawler.stats.inc_value("links/canonical_aliases")
            return None
        account.canonical_elsewhere.append({"url": url, "canonical": canonical})
        self.record.counts["canonical_elsewhere"] += 1
        self.crawler.stats.inc_value("links/canonical_elsewhere")
        rec["canonical"] = canonical
        rec["flags"] = [*(rec.get("flags") or ()), "canonical_elsewhere"]
        return False

    def _bfs_follow(
        self,
        links: list[tuple[str, _Element | None]],
        base: str,
        page: str,
        depth: int,
        records: list[dict[str, Any]],
        requests: list[Request],
        hop: int = 1,
        redirect: list[str] | None = None,
        reason: str | None = None,
        linked: bool = False,
    ) -> None:
        """Admit the new same-site links of a page (the per-link hot path). ``redirect``:
        the URLs that redirected here (as Scrapy's ``meta["redirect_urls"]``, which the
        refusal middleware reads to tell a ``login`` wall); ``reason``: record the new
        links, never fetch them (``_bfs_admit``); ``linked``: a redirect's target counts as
        linked (union mode) though it is no link."""
        account = self.account
        normalize = self.origins.normalize
        site = self.record.site_origin or ""
        prefix = site + "/"
        slash = base.find("/", 8)
        base_origin = base[:slash] if slash > 0 else base
        scheme = base[: base.find(":") + 1]
        seen_add = self.record.seen.add
        twins = self.record.seen.twins
        slashless = twins.slashless  # read again after an admission, which may make it
        max_length = self.url_max_length
        union = account.union
        admit = self._bfs_admit
        next_depth = depth + hop
        counts = self.record.counts
        max_urls = self.max_urls
        held = self._held
        # A link is held for its level (``release``); a redirect's target, or a link
        # never to be fetched, is admitted at once.
        hold = self._hold if redirect is None and reason is None else None
        again = self._again and hold is not None
        malformed = other = renamed = aliased = over_limit = 0
        for href, el in links:
            # Resolve: absolute and root-relative links without dot segments need no
            # urljoin (costly per link); fragments go before normalization.
            if href.startswith(_ABSOLUTE):
                url = href
            elif href[0] == "/" and href[1:2] != "/" and "/." not in href:
                url = base_origin + href
            elif href.startswith("//"):
                url = scheme + href
            else:
                try:
                    url = urljoin(base, href)
                except ValueError:
                    malformed += 1
                    continue
            cut = url.find("#")
            if cut >= 0:
                url = url[:cut]
            try:
                url = normalize(url)
            except UrlError:
                malformed += 1
                continue
            if len(url) > max_length > 0:
                malformed += 1  # over URLLENGTH_LIMIT: Scrapy would drop its request
                continue
            if not url.startswith(prefix):
                other += 1
                continue
            key = url if url[-1] == "/" else twin_key(url)
            if union is not None and (redirect is None or linked):
                union.linked(key, url)
            if not seen_add(key):
                if again:
                    request = self._claim_again(url, next_depth, page, el)
                    if request is not None:
                        requests.append(request)
                if held:
                    cited = held.get(key)
                    if cited is not None:
                        if hold is not None:
                            if url != cited[3]:  # its twin spelling: met when admitted
                                self._held_forms.setdefault(key, set()).add(url)
                            if (next_depth, page) < cited[:2]:
                                hold(key, url, next_depth, page, el)
                            continue
                        if self._unhold(key, next_depth):  # a redirect: nearer
                            meta = {"via": "link", "found_on": page, "anchor": el}
                            meta["redirect_urls"] = redirect
                            request = admit(url, next_depth, meta, records, reason)
                            if request is not None:
                                requests.append(request)
                            continue
                # Met before. A twin of a record written in the other form is rule 7's
                # business; a slash-form link on a site with no slashless page record
                # (the usual case) costs no more than this test.
                if url is not key or slashless is not None:
                    twin = twins.sighted(key, url)
                    if twin is RENAMED:
                        renamed += 1
                    elif twin is ALIASED:
                        aliased += 1
                continue
            if max_urls and counts["unique"] + len(held) >= max_urls:
                over_limit += 1  # seen (met again, a duplicate), never recorded
                continue
            if hold is not None:
                hold(key, url, next_depth, page, el)
                continue
            meta: dict[str, Any] = {"via": "link", "found_on": page, "anchor": el}
            if redirect is not None:
                meta["redirect_urls"] = redirect
            request = admit(url, next_depth, meta, records, reason)
            if request is not None:
                requests.append(request)
            slashless = twins.slashless
        account.malformed_links += malformed
        account.other_host_links += other
        if renamed or aliased:
            counts["slash_twins"] += renamed
            counts["twin_aliases"] += aliased
        if over_limit:
            counts["over_limit"] += over_limit
            self.crawler.stats.inc_value("links/over_limit", over_limit)
            kept = counts["unique"] + len(held)  # a held link is kept: recorded when admitted
            self.record.limit_bound(
                "LINKS_MAX_URLS", value=max_urls, kept=kept, seen=kept + counts["over_limit"]
            )

    def page_failed(self, failure: Failure) -> Iterator[Any]:
        """A page that got no answer (``_page_failed``); then the level it let go."""
        request = getattr(failure, "request", None)
        try:
            yield from self._page_failed(failure)
        finally:
            if request is not None:
                self._in_flight[request.meta.get("depth", 0)] -= 1
                self._job_page_done(request)
        yield from self.release()
        self._job_held()

    def _page_failed(self, failure: Failure) -> Iterator[Any]:
        """No response: robots said no (``IgnoreRequest``), a timeout, a network error.
        The page is recorded with the refusal the middleware set, or a minimal one."""
        request = getattr(failure, "request", None)
        if request is None:
            logger.error("page request failed: %s", failure.getErrorMessage())
            return
        meta = request.meta
        url = meta.get("page_url") or request.url
        refusal = meta.get("refusal")
        if refusal is None and (oversize := classify_oversize(url, failure.value)) is not None:
            # HttpCompression refuses a bomb after the refusal middleware saw its response:
            # the refusal is made and counted here, on the run's tally
            refusal = oversize.cite(meta).as_dict()
            if self.record.refusals is not None:
                self.record.refusals.add(refusal)
                self.crawler.signals.send_catch_log(
                    signal=page_refused, request=request, refusal=refusal
                )
        refusal = refusal or failure_refusal(failure)
        if meta.get("via") == "seed" and self.record.input_failure is None:
            # the seed got no answer: the run's failure says why, if that has a name
            maxsize = meta.get("download_maxsize", self.download_maxsize)
            self.record.input_failure = input_failure(self.options, url, failure.value, maxsize)
        self.account.failed += 1
        rec = self._bfs_record(url, meta, meta.get("depth", 0), None)
        if refusal.get("class") == "robots":
            # SPEC §6: a disallowed URL is not fetched, and is listed with its rule (the
            # rule is also in the crawl log's robots_policy.disallowed).
            rec["flags"] = ["robots_disallowed"]
            self.account.not_fetched["robots_disallowed"] += 1
            self.crawler.stats.inc_value("links/not_fetched/robots_disallowed")
            self._bfs_wrote(rec)
            yield self._bfs_batch(url, [rec], rec["source"])
            return
        rec["refusal"] = refusal
        if refusal.get("class") == "ssrf":  # the record says why it was never fetched
            rec["flags"] = [SSRF_FLAG]
            self.account.not_fetched[SSRF_FLAG] += 1
        elif self.account.union is not None and is_not_read(refusal.get("class")):
            self.account.union.page_not_read()  # its links were not read
        self.account.refused(url, refusal, rec["found_on"])
        self.crawler.stats.inc_value(f"links/refusals/{refusal.get('class')}")
        self._bfs_wrote(rec)
        yield self._bfs_batch(url, [rec], rec["source"])
