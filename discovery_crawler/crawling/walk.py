"""The sitemap walk (SPEC §4): robots.txt, then every sitemap it names, the conventional
addresses, and child sitemaps of any index, recursively — each address tried recorded as a
``SitemapAttempt``, the limits held, each document read into ``UrlBatch``es as it streams.

A component the ``discover`` spider drives: the spider's callbacks hand it robots.txt and
sitemap responses; it returns what Scrapy should do next (requests for child sitemaps,
batches for the pipelines). Its requests carry the spider's callbacks, given when it is
built, so a disk or Redis queue can name them. What it has done so far is plain
data kept by the run (``WalkProgress``, ``run.walk``); what it found goes on the run's
record (attempts, counts, malformed and repaired entries, limits).

Discovery order for a homepage: robots.txt → every sitemap it advertises → the
conventional addresses not yet tried → child sitemaps of any index, with a visited set
against cycles. A sitemap given as input is parsed without reading robots.txt. Documents
of ``SITEMAP_WORKER_MIN_BYTES`` or more are parsed in the sitemap worker process
(``sitemaps/worker.py``), the rest here; a few at a time (``SITEMAP_PARSE_CONCURRENCY``).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.utils.reactor import is_asyncio_reactor_installed
from scrapy.utils.sitemap import sitemap_urls_from_robots

from discovery_crawler.arguments import input_failure
from discovery_crawler.crawling.passage import ItemPassage
from discovery_crawler.items import UrlBatch
from discovery_crawler.middlewares.ssrf import SSRFBlocked
from discovery_crawler.output.state_sitemaps import Section, SectionsError, part_entries
from discovery_crawler.refusals import (
    classify_failure,
    classify_oversize,
    classify_response,
    failure_text,
    size_words,
)
from discovery_crawler.selection.paths import pillar_keywords
from discovery_crawler.signals import sitemap_arrived, urls_expected
from discovery_crawler.sitemaps.attempts import SitemapAttempt, SitemapListing, content_preference
from discovery_crawler.sitemaps.body import SitemapBody, SitemapTooLarge
from discovery_crawler.sitemaps.expected import ExpectedUrls
from discovery_crawler.sitemaps.facts import RunContext, listing_columns, split_column
from discovery_crawler.sitemaps.formats.plain_urlset import describe_malformed
from discovery_crawler.sitemaps.parser import ParseResult, iter_sitemap_batches
from discovery_crawler.sitemaps.worker import ParseWorker, WorkerFailed
from discovery_crawler.unread import is_not_read
from discovery_crawler.urls.addresses import same_origin, url_origin
from discovery_crawler.urls.normalize import (
    HOST_FIRST,
    UrlError,
    host_first,
    origin_of,
    resolve_location,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterator

    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from twisted.python.failure import Failure

    from discovery_crawler.extensions.run import DiscoveryRun

logger = logging.getLogger(__name__)

_NO_LOCATION = "entry without a location"
_ROBOTS_PRIORITY = 1000
_SITEMAP_PRIORITY = 100
# Every status reaches the walk's callback but the redirects, which Scrapy's
# RedirectMiddleware follows (REDIRECT_MAX_TIMES; the SSRF guard sees each hop): a moved
# sitemap (/sitemap.xml -> /sitemap_index.xml, http -> https) is read at its new address,
# the validators sent along. (``handle_httpstatus_all`` would switch redirects off.)
_REDIRECTS = frozenset((301, 302, 303, 307, 308))
_ANSWERS_BUT_REDIRECTS = tuple(s for s in range(100, 600) if s not in _REDIRECTS)
_NOT_MODIFIED = 304
# Distributed mode (``distributed/scheduler.py``, ``share_sitemap``): a sitemap or robots.txt
# request handed to the job carries its place in one run's reading order here, and is
# read by whichever worker leases it (``_adopt``).
JOB_SITEMAP = "job_sitemap"
_ADOPTED = "job_adopted"


def reading_place(depth: int, parent: str | None, index: int) -> str:
    """A sitemap's place in one run's reading order, as text that sorts as that order
    does: the robots.txt's sitemaps and the conventional addresses (depth 0) in the order
    asked, then each index's children by their index's place, then their own index. One
    run reads level by level (every document asked before is read first), so the order
    is (depth, the parent's place, the place in the parent)."""
    return f"{depth:02d}{(parent or '')[2:]}{index:06d}"


@dataclass
class _Carried:
    """A child sitemap not fetched: its index ``<lastmod>`` is the one of the last read."""

    attempt: SitemapAttempt
    section: Section
    index_lastmod: str
    place: int  # in the reading order: carried over when its turn comes


@dataclass
class WalkProgress:
    """What the walk has done so far (``run.walk``): the addresses tried (a cycle or a
    repeat is not tried again), the documents scheduled and skipped (the document limit),
    the URL count it expects (sizing the per-URL tables)."""

    expected: ExpectedUrls
    visited: set[str] = field(default_factory=set)
    # the conventional addresses asked (a handful): most answer 404, so while pending they
    # do not count in the URLs expected
    guesses: list[SitemapAttempt] = field(default_factory=list)
    scheduled: int = 0
    skipped: int = 0


def fetch_failure_class(url: str, exc: BaseException) -> str | None:
    """The refusal class of a robots.txt or sitemap fetch that got no answer, when that
    leaves it not read (``unread.py``: a timeout, a connection failure); None for a
    decision (robots.txt, the SSRF guard, DOWNLOAD_MAXSIZE), which is not a failure."""
    if isinstance(exc, SSRFBlocked) or classify_oversize(url, exc) is not None:
        return None
    refusal = classify_failure(url, exc)
    found = refusal.refusal_class if refusal is not None else None
    return found if is_not_read(found) else None


def answer_failure_class(response: Response) -> str | None:
    """The refusal class of a robots.txt or sitemap answer that leaves it not read (a 5xx
    after its retries, a 408), or None: a 404 or a wall is the site's own answer."""
    headers = {
        name: response.headers.get(name, b"").decode("latin-1")
        for name in ("cf-mitigated", "Retry-After")
    }
    body = response.body if response.status == 503 else b""  # a block page says so
    refusal = classify_response(response.url, response.status, headers, body)
    found = refusal.refusal_class if refusal is not None else None
    return found if is_not_read(found) else None


class SitemapWalk:
    """Drives the sitemap walk of one run; built by the spider with its callbacks."""

    def __init__(
        self,
        crawler: Crawler,
        run: DiscoveryRun,
        *,
        on_robots: Callable[..., Any],
        on_robots_failure: Callable[..., Any],
        on_sitemap: Callable[..., Any],
        on_sitemap_failure: Callable[..., Any],
    ) -> None:
        settings = crawler.settings
        self.crawler = crawler
        self.run = run
        self.record = run.record
        self.options = run.options
        self.origins = run.origins
        self._on_robots = on_robots
        self._on_robots_failure = on_robots_failure
        self._on_sitemap = on_sitemap
        self._on_sitemap_failure = on_sitemap_failure
        self.batch_size = max(1, settings.getint("DISCOVERY_BATCH_SIZE"))
        self.max_documents = settings.getint("SITEMAP_MAX_DOCUMENTS")
        self.max_urls = settings.getint("SITEMAP_MAX_URLS")
        self.max_depth = settings.getint("SITEMAP_MAX_DEPTH")
        self.max_bytes = settings.getint("SITEMAP_MAX_BYTES")
        self.max_entries = settings.getint("SITEMAP_MAX_URLS_PER_FILE")
        self.download_maxsize = settings.getint("DOWNLOAD_MAXSIZE")
        reserve = settings.getint("INVENTORY_RESERVE_URLS")
        if run.walk is None:
            cap = min(reserve, self.max_urls) if self.max_urls else reserve
            run.walk = WalkProgress(ExpectedUrls(cap))
        self.progress: WalkProgress = run.walk
        self.parse_concurrency = max(1, settings.getint("SITEMAP_PARSE_CONCURRENCY"))
        self.pillar_keywords = pillar_keywords(settings)
        self.worker_min_bytes = (
            max(1, settings.getint("SITEMAP_WORKER_MIN_BYTES"))
            if settings.getbool("SITEMAP_PARSE_WORKER") and is_asyncio_reactor_installed()
            else 0
        )
        self.worker_lines = settings.getbool("SITEMAP_WORKER_LINES")
        self.mmap_threshold = settings.getint("MALLOC_MMAP_THRESHOLD")
        self.worker_early = settings.getbool("SITEMAP_WORKER_EARLY")
        self.conventional_paths = settings.getlist("SITEMAP_CONVENTIONAL_PATHS")
        # Re-runs (state.json's sitemap sections): ask what was read whole before with its
        # validators, and trust an index's unchanged <lastmod> for a child (docs: re-runs).
        self.conditional = settings.getbool("SITEMAP_CONDITIONAL_REQUESTS")
        self.trust_lastmod = settings.getbool("SITEMAP_TRUST_INDEX_LASTMOD")
        # SSRF_SAME_ORIGIN under the guard: robots.txt Sitemap: lines and index children
        # on another origin than the input's are skipped (recorded), never requested.
        self.same_origin = settings.getbool("SSRF_GUARD_ENABLED") and settings.getbool(
            "SSRF_SAME_ORIGIN"
        )
        self.input_origin = url_origin(self.options.url)
        self._parse_slots: asyncio.Semaphore | None = None
        self._waiting = 0  # downloaded documents waiting for a parse slot
        self._worker: ParseWorker | None = None
        self._worker_failure_said = False
        self._robots_done = False  # its callback yielded every sitemap request
        # Documents enter in the order they were asked for (robots.txt's, the conventional
        # addresses, then each index's children in index order), however their answers
        # arrive: the first listing of a URL, its slug and its citation do not depend on
        # which download finished first. Downloads stay concurrent; a document waits
        # (``_await_turn``) until every one asked before it is read (its listings through
        # the stages, ``crawling/passage.py``) or failed.
        self._asked = 0  # sitemap requests made: the next one's place
        self._top_asked = 0  # sitemaps asked at depth 0 (reading_place)
        self._pages_told = 0  # pages listed, as told to a distributed job (_tell_job)
        self._turn = 0  # the place of the next document to read
        self._finished: set[int] = set()  # places done out of turn
        self._turn_moved: asyncio.Event | None = None
        self._passage = ItemPassage(crawler)  # a document is done once its items passed
        crawler.signals.connect(self._dropped, signal=signals.request_dropped)

    # -- the first requests -------------------------------------------------------------
    def start_worker_early(self) -> None:
        """``SITEMAP_WORKER_EARLY``: its start-up overlaps robots.txt and the first fetches.
        Not on a re-run that asks conditionally: most sitemaps are carried over, none parsed
        (an unchanged site's run would pay a process's start-up and memory for nothing); the
        first document to parse starts it."""
        if self.worker_early and self.worker_min_bytes and self._previous_sections() is None:
            self._start_worker()

    def input_request(self, url: str) -> Request | None:
        """A sitemap given as input: read as it is, without robots.txt (SPEC §4)."""
        return self._sitemap_request(url, "input", None, 0, order=self._top())

    def robots_request(self, url: str) -> Request | None:
        """robots.txt at ``url``: its sitemaps, then the conventional addresses (None: a
        worker of a distributed job handed it to the job)."""
        frontier = self.run.frontier
        request = Request(
            url,
            callback=self._on_robots,
            errback=self._on_robots_failure,
            dont_filter=True,
            priority=_ROBOTS_PRIORITY,
            meta={"handle_httpstatus_all": True},
        )
        if frontier is not None:  # one worker of the job reads it, whichever is free
            request.meta[JOB_SITEMAP] = ""
            frontier.share_sitemap(request, None)
            return None
        self.record.robots = {"url": url, "fetched": False}
        return request

    def found_no_page(self) -> str | None:
        """Why the walk is over with no page of the site listed (a URL of kind page or
        paginated: files or feeds do not count), or None: it listed one, or nothing
        answered at all (the site is unreachable, not sitemap-less)."""
        record = self.record
        if record.kinds["page"] + record.kinds["paginated"]:
            return None
        if self.run.frontier is not None:  # a distributed job: what any worker listed
            job = self.run.frontier.walk_figures()
            if job.get("pages"):
                return None
            if not job.get("answered"):
                return None  # nothing answered: the site is unreachable, not sitemap-less
            return "no sitemap of the job yielded a page of the site"
        robots = record.robots or {}
        if robots.get("status") is None and all(a.status is None for a in record.attempts.values()):
            return None
        listed = record.counts["unique"]
        if listed:
            kinds = ", ".join(f"{n:,} {kind}" for kind, n in record.kinds.items() if n)
            return f"the sitemaps listed {listed:,} URL(s) of the site but no page ({kinds})"
        return "no sitemap yielded a URL of the site"

    # -- robots.txt ---------------------------------------------------------------------
    def parse_robots(self, response: Response) -> Iterator[Request]:
        self._adopt(response.request)
        robots = self.record.robots
        assert robots is not None
        robots.update(status=response.status, final_url=response.url)
        self._follow_redirected_origin(response.url)
        sitemaps: list[str] = []
        if 200 <= response.status < 300:
            body = response.body
            robots["bytes"] = len(body)
            head = body[:512].lstrip().lower()
            if head.startswith((b"<!doctype html", b"<html")):
                robots["fetched"] = True
                robots["error"] = "served an HTML page, not a robots.txt"
            else:
                robots["fetched"] = True
                sitemaps = list(
                    dict.fromkeys(sitemap_urls_from_robots(body, base_url=response.url))
                )
        elif 400 <= response.status < 500:
            robots["error"] = f"HTTP {response.status}: no robots.txt (allow all)"
        else:
            robots["error"] = f"HTTP {response.status}: robots.txt unavailable"
            robots["failure_class"] = answer_failure_class(response)
            self._robots_not_read()
        robots["sitemaps"] = sitemaps
        self.crawler.stats.set_value("discovery/robots/status", response.status)
        for url in sitemaps:
            request = self._sitemap_request(url, "robots", response.url, 0, order=self._top())
            if request is not None:
                yield request
        yield from self._conventional_requests()
        self._robots_done = True
        if JOB_SITEMAP in response.meta:
            self._tell_job(answered=True)

    def robots_failed(self, failure: Failure) -> Iterator[Request]:
        self._adopt(getattr(failure, "request", None))
        robots = self.record.robots
        assert robots is not None
        robots.update(status=None, error=failure_text(failure.value), sitemaps=[])
        robots["failure_class"] = fetch_failure_class(robots["url"], failure.value)
        self._robots_not_read()
        self._input_failed(robots["url"], failure)
        yield from self._conventional_requests()
        self._robots_done = True

    def over(self) -> bool:
        """Every sitemap the walk asked for is read or failed (union mode: the link crawl
        admits its held links once every listing has entered, ``LinkCrawl.release``)."""
        if self.run.frontier is not None:  # a distributed job: the job's walk
            return self.record.sitemaps_pending == 0 and self.run.frontier.walk_over()
        started = self._robots_done or self.options.input_kind == "sitemap"
        return started and self.record.sitemaps_pending == 0

    def _robots_not_read(self) -> None:
        """robots.txt not read after its retries: the sitemaps it names are unknown, so
        union mode's link crawl calls no page ``links_only``."""
        robots = self.record.robots or {}
        if robots.get("failure_class") is not None and self.run.links is not None:
            self.run.links.sitemap_not_read(robots.get("url", "robots.txt"))

    def _input_failed(self, url: str, failure: Failure) -> None:
        """The site's first fetch (its robots.txt, the sitemap given) got no answer for a
        reason with a name (a TLS handshake, over DOWNLOAD_MAXSIZE): the run's failure,
        should nothing answer, says that (``record.input_failure``)."""
        if self.record.input_failure is None:
            request = getattr(failure, "request", None)
            maxsize = (request.meta if request is not None else {}).get(
                "download_maxsize", self.download_maxsize
            )
            self.record.input_failure = input_failure(self.options, url, failure.value, maxsize)

    def _follow_redirected_origin(self, final_url: str) -> None:
        """robots.txt redirected (http→https, bare→www): the site lives at the new origin."""
        try:
            final_origin = self.origins.normalize(final_url)
        except UrlError:
            return
        final_origin = origin_of(final_origin)
        site = self.record.site_origin
        if site and final_origin != site:
            self.record.note(
                f"robots.txt redirected from {site} to {final_origin}; using {final_origin}"
            )
            self.origins.rewrite[site] = final_origin
            self.run.name_site(final_origin)

    def _conventional_requests(self) -> Iterator[Request]:
        """Every conventional address not yet tried, at once: generators name their
        sitemaps differently and a site may have several (an old ``/sitemap.xml`` beside
        a plugin's ``/sitemap/sitemap-index.xml``); the visited set drops repeats. A
        homepage under a path (a project site, ``https://user.github.io/project/``) has
        its own folder's addresses tried first."""
        for base in self._conventional_bases():
            for path in self.conventional_paths:
                request = self._sitemap_request(
                    base + path, "conventional", None, 0, order=self._top()
                )
                if request is not None:
                    yield request

    def _conventional_bases(self) -> list[str]:
        """The homepage's folder (when it is not the root), then the site's root."""
        site = self.record.site_origin
        assert site is not None
        bases = [site]
        if self.options.input_kind == "homepage":
            try:
                start = self.origins.normalize(self.options.url)
            except UrlError:
                return bases
            folder = start[len(origin_of(start)) :].rpartition("/")[0]
            if folder:
                bases.insert(0, site + folder)
        return bases

    # -- sitemaps -----------------------------------------------------------------------
    def _sitemap_request(
        self,
        url: str,
        source: str,
        parent: str | None,
        depth: int,
        note: str | None = None,
        index_lastmod: str | None = None,
        order: str | None = None,
    ) -> Any:
        """A request for a sitemap address, or None when it was tried or is skipped, or
        (a child whose index ``<lastmod>`` did not change) a ``_Carried``. A worker of a
        distributed job hands it to the job instead (``_share``: None), ``order`` its
        place in the reading order."""
        record = self.record
        try:
            url = self.origins.normalize(url)
        except UrlError as exc:
            record.malformed.append({"raw": url[:500], "reason": exc.reason, "sitemap": parent})
            record.counts["malformed"] += 1
            return None
        if url in self.progress.visited:
            if source == "index":
                record.counts["sitemaps_repeated"] += 1  # a cycle or a repeated child
            return None
        self.progress.visited.add(url)
        if self.max_depth and depth > self.max_depth:
            record.skipped_sitemaps.append({"url": url, "parent": parent, "reason": "depth"})
            record.limit_bound("SITEMAP_MAX_DEPTH", value=self.max_depth)
            record.warn(
                f"sitemaps nested more than {self.max_depth} index level(s) deep were not "
                "followed (SITEMAP_MAX_DEPTH)"
            )
            return None
        frontier = self.run.frontier
        if (
            frontier is None
            and self.max_documents
            and self.progress.scheduled >= self.max_documents
        ):
            record.skipped_sitemaps.append({"url": url, "parent": parent, "reason": "documents"})
            self.progress.skipped += 1
            record.limit_bound(
                "SITEMAP_MAX_DOCUMENTS",
                value=self.max_documents,
                kept=self.progress.scheduled,
                skipped=self.progress.skipped,
                seen=self.progress.scheduled + self.progress.skipped,
            )
            return None
        if self._url_limit_reached():
            record.skipped_sitemaps.append({"url": url, "parent": parent, "reason": "urls"})
            self._url_cap_cut()
            return None
        site = record.site_origin
        if self.same_origin and source in ("index", "robots") and not self._on_input_origin(url):
            # Same origin only (the SSRF guard, profile service): never asked, said why
            why = f"on another origin ({origin_of(url)}); same origin only (SSRF_SAME_ORIGIN)"
            attempt = SitemapAttempt(url, source, parent, depth, note=note)
            attempt.error = why + ", not fetched"
            record.attempts[url] = attempt
            record.skipped_sitemaps.append({"url": url, "parent": parent, "reason": "other_origin"})
            return None
        if source == "index" and site and parent:
            origin = origin_of(url)
            if origin != site and origin != origin_of(parent):
                attempt = SitemapAttempt(url, source, parent, depth, note=note)
                attempt.error = f"on another host ({origin}); the protocol forbids it, not fetched"
                record.attempts[url] = attempt
                return None
        attempt = SitemapAttempt(url, source, parent, depth, note=note)
        if frontier is not None and order is not None:
            return self._share(attempt, order, index_lastmod)
        record.attempts[url] = attempt
        record.sitemaps_pending += 1
        if source == "conventional":
            self.progress.guesses.append(attempt)
        self.progress.scheduled += 1
        # Its place in the reading order, fetched or carried over (``_await_turn``).
        place = self._asked
        self._asked += 1
        section = self._previous_section(url)
        if (
            section is not None
            and self.trust_lastmod
            and source == "index"
            and index_lastmod
            and section.index_lastmod == index_lastmod
        ):
            return _Carried(attempt, section, index_lastmod, place)
        meta = {
            "attempt": attempt,
            "sitemap_place": place,
            "handle_httpstatus_list": _ANSWERS_BUT_REDIRECTS,
            # SPEC §4: a sitemap given as input is read without robots.txt; the rest
            # obey the site's robots policy (RobotsPolicyMiddleware).
            "dont_obey_robots": self.options.input_kind == "sitemap",
            "index_lastmod": index_lastmod,
        }
        headers = {}
        if section is not None and section.conditional:
            if section.etag:
                headers["If-None-Match"] = section.etag
            if section.last_modified:
                headers["If-Modified-Since"] = section.last_modified
            meta["conditional"] = True
            self.crawler.stats.inc_value("discovery/sitemaps/conditional")
        return Request(
            url,
            callback=self._on_sitemap,
            errback=self._on_sitemap_failure,
            dont_filter=True,
            # One priority: the scheduler's FIFO asks them in their order (a document
            # waiting for its turn never waits on one not yet asked).
            priority=_SITEMAP_PRIORITY,
            headers=headers or None,
            meta=meta,
        )

    # -- distributed mode: the walk shared by the job's workers -------------------------
    def _top(self) -> str:
        """The place of the next sitemap asked at depth 0 (robots.txt's, conventional)."""
        place = reading_place(0, None, self._top_asked)
        self._top_asked += 1
        return place

    def _share(self, attempt: SitemapAttempt, order: str, index_lastmod: str | None) -> None:
        """Hand the sitemap to the job (``DiscoveryRun.frontier``): the worker that leases
        it reads and records it (``_adopt``); the job's visited set and document budget
        decide (a repeat anywhere in the job, the budget spent)."""
        record = self.record
        request = Request(
            attempt.url,
            callback=self._on_sitemap,
            errback=self._on_sitemap_failure,
            dont_filter=True,
            priority=_SITEMAP_PRIORITY - attempt.depth,  # the job's queue: level by level
            meta={
                "attempt": attempt,
                JOB_SITEMAP: order,
                "handle_httpstatus_list": _ANSWERS_BUT_REDIRECTS,
                "dont_obey_robots": self.options.input_kind == "sitemap",
                "index_lastmod": index_lastmod,
            },
        )
        verdict = self.run.frontier.share_sitemap(request, self.max_documents)
        if verdict == 0 and attempt.source == "index":
            record.counts["sitemaps_repeated"] += 1  # a cycle or a repeated child, job-wide
        elif verdict < 0:
            self.progress.skipped += 1
            record.skipped_sitemaps.append(
                {"url": attempt.url, "parent": attempt.parent, "reason": "documents"}
            )
            record.limit_bound(
                "SITEMAP_MAX_DOCUMENTS", value=self.max_documents, skipped=self.progress.skipped
            )
        return None

    def _adopt(self, request: Request | None) -> None:
        """A request another worker (or this one) handed to the job, leased here: this
        worker reads it, so its attempt, its pending count and its figures are here."""
        if request is None or JOB_SITEMAP not in request.meta or request.meta.get(_ADOPTED):
            return
        request.meta[_ADOPTED] = True
        attempt = request.meta.get("attempt")
        if attempt is None:  # robots.txt
            self.record.robots = {"url": request.url, "fetched": False}
            return
        self.record.attempts[attempt.url] = attempt
        self.record.sitemaps_pending += 1
        self.progress.visited.add(attempt.url)
        self.progress.scheduled += 1
        if attempt.source == "conventional":
            self.progress.guesses.append(attempt)

    def _tell_job(self, answered: bool) -> None:
        """After a shared document: the pages it listed and whether it answered, added
        to the job's figures before its lease ends (the auto fallback is the job's)."""
        frontier = self.run.frontier
        if frontier is None:
            return
        kinds = self.record.kinds
        pages = kinds["page"] + kinds["paginated"]
        told, self._pages_told = self._pages_told, pages
        frontier.count_walk(pages=pages - told, answered=int(answered))

    # -- re-runs: the previous run's sitemap sections (output/state_sitemaps.py) ----------
    def _previous_sections(self) -> Any:
        """The previous run's sitemap sections this run asks with (None: a full walk)."""
        state = self.run.state
        if not self.conditional or state is None:
            return None
        return state.sections

    def _previous_section(self, url: str) -> Section | None:
        """What the last run that read ``url`` whole kept of it (None: ask it in full)."""
        sections = self._previous_sections()
        return sections.get(url) if sections is not None else None

    def _sections_out(self) -> Any:
        state = self.run.state
        return state.sections_out if state is not None and not state.closed else None

    def _carry(
        self, attempt: SitemapAttempt, section: Section, index_lastmod: str | None, why: str
    ) -> Iterator[Any]:
        """A sitemap not read again: its entries as the last read listed them, batch by
        batch, into the pipelines as if parsed now; its children asked as an index's."""
        state = self.run.state
        assert state is not None and state.sections is not None
        reader = state.sections
        out = self._sections_out()
        kept = out.carry_begin(section, index_lastmod) if out is not None else None
        attempt.ok = True
        attempt.urls = section.urls
        attempt.sitemaps = len(section.children)
        attempt.index = bool(section.children)
        attempt.format = section.format
        attempt.note = f"{why}; its {section.urls:,} URL(s) carried over from state.json"
        self.crawler.stats.inc_value("discovery/sitemaps/carried_over")
        self.crawler.stats.inc_value("discovery/urls/carried_over", section.urls)
        self._expect(section.urls)
        base = section.document or section.sitemap
        try:
            for line in reader.iter_parts(section):
                entries = part_entries(line)  # parsed before it is copied: a damaged
                if kept is not None:  # part must not live on in the next sections file
                    out.carry_part(kept, line)
                if entries:
                    yield UrlBatch("sitemap", base, entries)
        except (SectionsError, ValueError, TypeError) as exc:
            # A damaged sections file: this sitemap was not read (its URLs not re-confirmed,
            # removals not judged), the next run reads it in full; the others carry on.
            if kept is not None:
                out.carry_abandon(kept)
            attempt.ok = False
            attempt.error = (
                f"its entries in {reader.path.name} are damaged ({exc}): a failed read, "
                "not 'unchanged' (the next run reads it in full)"
            )
            self.crawler.stats.inc_value("discovery/sitemaps/carry_failed")
            logger.error("sitemap %s not carried over: %s", attempt.url, attempt.error)
            return
        if section.children:
            locs = [child[0] for child in section.children]
            lastmods = [child[1] or "" for child in section.children]
            yield from self._child_requests(locs, base, attempt.depth + 1, lastmods=lastmods)

    async def _carry_in_turn(
        self, carried: list[_Carried], response: Response
    ) -> AsyncIterator[Any]:
        """Children not fetched (their index ``<lastmod>`` unchanged), each carried over at
        its place in the reading order, as a fresh run reads it: after the siblings asked
        before it, its listings through the stages (counted under the index's ``response``)
        before the next one's turn. Their own children, if any, join the list."""
        ended = 0  # carried[:ended] have taken their turn
        try:
            while ended < len(carried):
                child = carried[ended]
                await self._await_turn(child.place)
                why = f"not fetched: its index <lastmod> ({child.index_lastmod}) is unchanged"
                try:
                    outputs = self._carry(child.attempt, child.section, child.index_lastmod, why)
                    for output in outputs:
                        if output.__class__ is _Carried:
                            carried.append(output)
                        else:
                            yield self._passage.sent(response, output)
                    await self._passage.through(response)
                finally:
                    ended += 1
                    self._done(child.attempt)
                    self._finish(child.place)
        finally:  # cancelled or failed: the places not carried pass (no walk waits on them)
            self._pass_turns(carried[ended:], "not carried over: the run stopped before its turn")

    def _pass_turns(self, carried: list[_Carried], why: str) -> None:
        """Children that will not be carried over: done, failed, their turns passed."""
        for child in carried:
            child.attempt.ok = False
            child.attempt.error = why
            self._done(child.attempt)
            self._finish(child.place)

    def _not_modified(self, response: Response, attempt: SitemapAttempt) -> Iterator[Any]:
        """A 304: "unchanged" only to a request that sent the validators of a sitemap the
        state knows; any other is a failed read (a server answering 304 blindly)."""
        attempt.status = response.status
        section = self._previous_section(attempt.url) if response.meta.get("conditional") else None
        if section is None:
            attempt.error = (
                "HTTP 304 to a request that sent no validator: a failed read, not 'unchanged'"
            )
            self.crawler.stats.inc_value("discovery/sitemaps/unexpected_304")
            return
        yield from self._carry(
            attempt, section, response.meta.get("index_lastmod"), "not modified (HTTP 304)"
        )

    def _on_input_origin(self, url: str) -> bool:
        """``url`` is on the input's origin (the one origin a same-origin run may ask)."""
        return same_origin(url, self.input_origin)

    def _url_limit_reached(self) -> bool:
        if not self.max_urls:
            return False
        if self.record.counts["unique"] >= self.max_urls:
            return True
        frontier = self.run.frontier
        if frontier is None:
            return False
        # a distributed job: the URLs any worker kept (the finisher keeps the first ones)
        return frontier.walk_figures().get("urls", 0) >= self.max_urls

    async def _await_turn(self, place: int | None) -> None:
        while place is not None and self._turn < place:
            if self._turn_moved is None:
                self._turn_moved = asyncio.Event()
            await self._turn_moved.wait()

    def _finish(self, place: int | None) -> None:
        """The document at ``place`` is read, failed or dropped: the next may enter."""
        if place is None:
            return
        self._finished.add(place)
        turn = self._turn
        while turn in self._finished:
            self._finished.discard(turn)
            turn += 1
        if turn != self._turn:
            self._turn = turn
            if self._turn_moved is not None:
                self._turn_moved.set()
                self._turn_moved = None

    def _dropped(self, request: Request, **kwargs: Any) -> None:
        if "sitemap_place" in request.meta:  # never answered: its turn passes
            self._finish(request.meta["sitemap_place"])

    def _done(self, attempt: SitemapAttempt) -> None:
        record = self.record
        record.sitemaps_pending -= 1
        record.sitemaps_done += 1
        stats = self.crawler.stats
        stats.inc_value("discovery/sitemaps/ok" if attempt.ok else "discovery/sitemaps/failed")

    def failed(self, failure: Failure) -> None:
        request = getattr(failure, "request", None)
        self._adopt(request)
        attempt = request.meta.get("attempt") if request is not None else None
        if attempt is None:
            logger.error("sitemap request failed: %s", failure.getErrorMessage())
            return
        maxsize = request.meta.get("download_maxsize", self.download_maxsize)
        attempt.error = failure_text(failure.value, maxsize)
        attempt.failure_class = fetch_failure_class(attempt.url, failure.value)
        if attempt.failure_class is not None:
            self._not_read(attempt)
        if attempt.source == "input":
            self._input_failed(attempt.url, failure)
        self._done(attempt)
        self._finish(request.meta.get("sitemap_place"))
        if JOB_SITEMAP in request.meta:
            self._tell_job(answered=False)

    def _not_read(self, attempt: SitemapAttempt) -> None:
        """A sitemap not read after its retries: union mode's link crawl no longer calls
        a page missing from every sitemap ``links_only`` (the one not read may list it)."""
        links = self.run.links
        if links is not None:
            links.sitemap_not_read(attempt.url)

    async def parse(self, response: Response) -> AsyncIterator[Any]:
        self._adopt(response.request)
        attempt: SitemapAttempt = response.meta["attempt"]
        # Parse a few documents at a time, each to the end: Scrapy would otherwise
        # interleave every downloaded document's generator, and each holds a window of
        # inflated XML, so peak memory would grow with the documents downloaded. Waiting
        # responses keep counting towards Scrapy's SCRAPER_SLOT_MAX_ACTIVE_SIZE, which
        # holds back further downloads.
        if self._parse_slots is None:
            self._parse_slots = asyncio.Semaphore(self.parse_concurrency)
        place = response.meta.get("sitemap_place")
        waits = 1 if self._parse_slots.locked() or (place or 0) > self._turn else 0
        self._waiting += waits
        # The host throttle fetches fewer documents at once while they would only wait here.
        self.crawler.signals.send_catch_log(
            sitemap_arrived, request=response.request, waiting=self._waiting if waits else 0
        )
        carried: list[_Carried] = []  # children not fetched, carried over in their turn
        try:
            await self._await_turn(place)
            async with self._parse_slots:
                self._waiting -= waits
                waits = 0
                sent = self._passage.sent
                if response.status == _NOT_MODIFIED:
                    for output in self._not_modified(response, attempt):
                        if output.__class__ is _Carried:
                            carried.append(output)
                        else:
                            yield sent(response, output)
                elif not self._parsable(response, attempt):
                    pass
                elif self._use_worker(response):
                    self._section_begins(response, attempt)
                    async for output in self._parse_in_worker(response, attempt):
                        if output.__class__ is _Carried:
                            carried.append(output)
                        else:
                            yield sent(response, output)
                else:
                    self._section_begins(response, attempt)
                    for output in self._parse_document(response, attempt):
                        if output.__class__ is _Carried:
                            carried.append(output)
                        else:
                            yield sent(response, output)
            # Its listings through the stages before the next document enters: Scrapy
            # queues a callback's items, so they could pass after the next one's.
            await self._passage.through(response)
        except BaseException:
            self._pass_turns(carried, "not carried over: its index's read failed")
            raise
        finally:
            self._waiting -= waits  # cancelled while it waited
            self._done(attempt)
            self._finish(place)
            if JOB_SITEMAP in response.meta:
                self._tell_job(answered=True)
        if carried:  # after this document's turn, each at its own
            async for output in self._carry_in_turn(carried, response):
                yield output

    def _section_begins(self, response: Response, attempt: SitemapAttempt) -> None:
        out = self._sections_out()
        if out is not None:
            out.begin(attempt.url, response.meta.get("index_lastmod"))

    def _parsable(self, response: Response, attempt: SitemapAttempt) -> bool:
        attempt.status = response.status
        if response.status >= 300 or response.status < 200:
            attempt.error = f"HTTP {response.status}"
            if response.status < 400:  # (its body is not the sitemap: never parsed)
                where = response.headers.get(b"Location", b"").decode("latin-1")
                attempt.error += f" to {where or '(no Location)'}: the redirect is not followed"
            attempt.failure_class = answer_failure_class(response)
            if attempt.failure_class is not None:
                self._not_read(attempt)
            return False
        if self._url_limit_reached():
            attempt.error = f"not parsed: SITEMAP_MAX_URLS ({self.max_urls:,}) already reached"
            self.record.skipped_sitemaps.append(
                {"url": attempt.url, "parent": attempt.parent, "reason": "urls"}
            )
            self._url_cap_cut()
            return False
        return True

    def _url_cap_cut(self) -> None:
        """A sitemap left unread because SITEMAP_MAX_URLS was reached: the cap bound, even
        when it was reached right at a document's end (no URL over it to say so), or the
        run would pass for complete and judge the URLs of the unread ones removed."""
        record = self.record
        record.limit_bound("SITEMAP_MAX_URLS", value=self.max_urls, kept=record.counts["unique"])

    def _use_worker(self, response: Response) -> bool:
        """Big documents parse in the sitemap worker (``sitemaps/worker.py``), started on
        the first one; a worker that failed is not used again."""
        if not self.worker_min_bytes or len(response.body) < self.worker_min_bytes:
            return False
        worker = self._worker if self._worker is not None else self._start_worker()
        return worker.broken is None

    def _start_worker(self) -> ParseWorker:
        self._worker = worker = ParseWorker(self.mmap_threshold)
        try:
            worker.start()
        except (OSError, ValueError, RuntimeError) as exc:  # ValueError: no pass_fds
            worker.broken = f"could not start: {exc}"
            self._worker_failed(worker.broken)
        else:
            self.crawler.stats.set_value("discovery/sitemaps/worker_started", True)
        return worker

    def _worker_failed(self, why: str) -> None:
        """Said once, however many documents were in flight (each re-parses in-process)."""
        if self._worker_failure_said:
            return
        self._worker_failure_said = True
        self.crawler.stats.inc_value("discovery/sitemaps/worker_failed")
        self.record.note(f"sitemap worker: {why}; parsing in-process instead")
        logger.error("sitemap worker: %s; parsing in-process instead", why)

    def _first_run(self) -> int:
        """The run's number if no previous run's state is loaded (every URL is new), else 0."""
        state = self.run.state
        return state.changes.run if state is not None and state.table is None else 0

    async def _parse_in_worker(
        self, response: Response, attempt: SitemapAttempt
    ) -> AsyncIterator[Any]:
        assert self._worker is not None
        self.crawler.stats.inc_value("discovery/sitemaps/worker_documents")
        base = response.url
        sent = 0  # entries yielded: an in-process re-parse skips them
        listing = SitemapListing()
        try:
            version = self.origins.version  # the rewrites the worker is sent
            context = RunContext(
                rewrite=tuple(sorted(self.origins.rewrite.items())),
                keywords=self.pillar_keywords,
                site=self.record.site_origin,
                include_paths=self.options.include_paths,
                exclude_paths=self.options.exclude_paths,
                first_run=self._first_run() if self.worker_lines else 0,
            )
            async for kind, payload in self._worker.parse(
                response.body, base, self.max_bytes, self.batch_size, context, self.max_entries
            ):
                if kind == "batches":
                    out = self._sections_out()
                    for batch in payload:
                        sent += batch.n
                        if out is not None:
                            self._keep_worked(out, attempt.url, batch)
                        if listing.possible is not False and batch.n:
                            urls = batch.urls
                            if urls.__class__ is str:
                                first = urls[: urls.find("\x00")] if batch.n > 1 else urls
                            else:
                                first = urls[0]
                            if listing.admits(first):
                                listing.see(split_column(urls, batch.n))
                        yield UrlBatch(
                            "sitemap",
                            base,
                            columns=batch,
                            normalized=version,
                            decided_for=context.site,
                        )
                    continue
                result, too_large, rewritten = payload
                describe_malformed(result)  # the worker leaves them to this process
                for raw, to in rewritten.items():
                    if len(self.origins.rewritten) < 100:
                        self.origins.rewritten.setdefault(raw, to)
                for output in self._finish_document(response, attempt, result, too_large, listing):
                    yield output
        except WorkerFailed as exc:
            self._worker_failed(str(exc))
            for output in self._parse_document(response, attempt, skip=sent, listing=listing):
                yield output

    def _parse_document(
        self,
        response: Response,
        attempt: SitemapAttempt,
        skip: int = 0,
        listing: SitemapListing | None = None,
    ) -> Iterator[Any]:
        base = response.url
        result = ParseResult()
        body = SitemapBody(response.body, self.max_bytes)
        too_large = None
        if listing is None:
            listing = SitemapListing()
        out = self._sections_out()
        try:
            for entries in iter_sitemap_batches(
                body, result, self.batch_size, url=base, max_entries=self.max_entries
            ):
                if skip:  # already yielded by a worker that died
                    cut = min(skip, len(entries))
                    skip -= cut
                    entries = entries[cut:]
                    if not entries:
                        continue
                # per batch: one endswith on a urlset that is not a list of sitemaps
                if listing.possible is not False and listing.admits(entries[0][0]):
                    listing.see([e[0] for e in entries])
                if out is not None:
                    out.add(attempt.url, *listing_columns(entries))
                yield UrlBatch("sitemap", base, entries)
        except SitemapTooLarge as exc:
            too_large = str(exc)
        yield from self._finish_document(response, attempt, result, too_large, listing)

    def _finish_document(
        self,
        response: Response,
        attempt: SitemapAttempt,
        result: ParseResult,
        too_large: str | None,
        listing: SitemapListing,
    ) -> Iterator[Any]:
        base = response.url
        record = self.record
        if too_large is not None:
            attempt.error = self._too_large(result)
            self.crawler.stats.inc_value("discovery/sitemaps/too_large")
        elif result.capped:
            attempt.error = (
                f"capped: read its first {result.capped:,} entries (SITEMAP_MAX_URLS_PER_FILE, "
                "the protocol's limit per file); the rest of the file was not read"
            )
            self.crawler.stats.inc_value("discovery/sitemaps/capped")
            capped = record.limits.get("SITEMAP_MAX_URLS_PER_FILE", {}).get("files", 0)
            record.limit_bound("SITEMAP_MAX_URLS_PER_FILE", value=result.capped, files=capped + 1)
            record.warn(
                f"sitemaps listing more than {result.capped:,} entries were read up to them "
                "(SITEMAP_MAX_URLS_PER_FILE); the rest of each was not read"
            )
        self._fill_attempt(attempt, result, response)
        children = result.children
        index_urlset = bool(listing.possible and result.format == "urlset" and too_large is None)
        self._expect(0 if index_urlset else result.urls)
        if result.malformed_count:
            record.malformed.add_counted(
                {
                    reason: n
                    for reason, n in {
                        _NO_LOCATION: result.malformed_count
                        - sum(result.malformed_reasons.values()),
                        **result.malformed_reasons,
                    }.items()
                    if n
                },
                [{"raw": raw, "reason": _NO_LOCATION, "sitemap": base} for raw in result.malformed],
            )
            record.counts["malformed"] += result.malformed_count
        if result.repairs:
            examples = [{**example, "sitemap": base} for example in result.repair_examples]
            record.repaired.add_counted(result.repairs, examples)
        if index_urlset:
            # An index written as a urlset (every location a .xml/.xml.gz): its locations
            # are tried as child sitemaps; they stay in the inventory's counts as listed.
            children = listing.locations
            attempt.index = True
            attempt.sitemaps = len(children)
            attempt.note = (
                f"a <urlset> whose {len(children):,} location(s) are all sitemap documents "
                "(.xml, .xml.gz): read as an index, its locations tried as child sitemaps"
            )
            self.crawler.stats.inc_value("discovery/sitemaps/urlset_as_index")
        lastmods = None if index_urlset else result.child_lastmods
        out = self._sections_out()
        if out is not None:
            headers = response.headers
            etag = headers.get(b"ETag")
            modified = headers.get(b"Last-Modified")
            out.end(
                attempt.url,
                kept=attempt.error is None and too_large is None,
                etag=etag.decode("latin-1") if etag else None,
                last_modified=modified.decode("latin-1") if modified else None,
                children=[[c, m or None] for c, m in zip(children, lastmods or (), strict=False)]
                if lastmods
                else [[c, None] for c in children],
                format=result.format,
                document=response.url,
            )
        if index_urlset:  # their locations were read (and any repair counted) as pages
            note = "listed by a <urlset> of sitemap documents"
            yield from self._child_requests(
                children, base, attempt.depth + 1, note, False, order=response.meta.get(JOB_SITEMAP)
            )
        else:
            yield from self._child_requests(
                children,
                base,
                attempt.depth + 1,
                lastmods=lastmods,
                order=response.meta.get(JOB_SITEMAP),
            )

    def _too_large(self, result: ParseResult) -> str:
        """A document past SITEMAP_MAX_BYTES, in words: the cap, whether it counts inflated
        or plain bytes, and what was kept of it."""
        if result.gzipped:
            size, why = "decompressed", "a decompression bomb or an oversized sitemap"
        else:
            size, why = "uncompressed", "the protocol allows 50 MiB"
        kept = (
            f"the {result.urls:,} URL(s) read before it are kept"
            if result.urls
            else "no URL was read before it"
        )
        return (
            f"refused: larger than the SITEMAP_MAX_BYTES cap ({size_words(self.max_bytes)} "
            f"{size}); {kept} ({why})"
        )

    def _expect(self, urls: int) -> None:
        """Tell the per-URL tables how many URLs the walk will list (``signals``)."""
        # This document is still pending: it is counted done when its parse ends. The
        # conventional guesses still pending are not: most answer 404 (a 165-URL site
        # was expected to list 990 while its five other guesses were out).
        guessing = sum(1 for a in self.progress.guesses if a.error is None and a.format is None)
        pending = self.record.sitemaps_pending - 1 - guessing
        estimate = self.progress.expected.urlset_read(urls, pending)
        if estimate is not None:
            self.crawler.stats.set_value("discovery/tables/sized_for_urls", estimate)
            self.crawler.signals.send_catch_log(urls_expected, urls=estimate)

    def _fill_attempt(
        self, attempt: SitemapAttempt, result: ParseResult, response: Response
    ) -> None:
        attempt.format = result.format
        attempt.urls = result.urls
        attempt.sitemaps = result.sitemaps
        attempt.index = result.sitemaps > 0
        attempt.gzipped = result.gzipped
        attempt.bytes = result.decompressed_bytes
        attempt.malformed = result.malformed_count
        attempt.problem = result.problem
        attempt.ok = (result.urls + result.sitemaps) > 0 and attempt.error is None
        if attempt.error is None and not attempt.ok:
            ctype = response.headers.get(b"Content-Type", b"").decode("latin-1")
            if result.format == "html":
                attempt.error = f"served an HTML page, not a sitemap ({ctype or 'no Content-Type'})"
            elif result.format == "empty":
                attempt.error = "empty body"
            else:
                attempt.error = f"no <loc> entries (parsed as {result.format})"
        if result.problem:
            self.crawler.stats.inc_value("discovery/sitemaps/recovered")

    def _child_requests(
        self,
        children: list[str],
        base: str,
        depth: int,
        note: str | None = None,
        count_repairs: bool = True,
        lastmods: list[str] | None = None,
        order: str | None = None,
    ) -> Iterator[Any]:
        if not children:
            return
        resolved = []
        given = dict(zip(children, lastmods, strict=False)) if lastmods else {}
        lastmod_of: dict[str, str] = {}
        for raw in children:
            try:
                url = resolve_location(raw, base)
            except UrlError as exc:
                self.record.malformed.append(
                    {"raw": raw[:500], "reason": exc.reason, "sitemap": base}
                )
                self.record.counts["malformed"] += 1
                continue
            stripped = raw.strip()
            if (
                count_repairs
                and not stripped.startswith(("https://", "http://"))
                and host_first(stripped, base)
            ):
                self.record.repaired.append(
                    {"raw": raw[:500], "url": url, "reason": HOST_FIRST, "sitemap": base}
                )
            resolved.append(url)
            if given.get(raw):
                lastmod_of[url] = given[raw]
        if self.max_documents:  # a limit may bind: admit content-like sitemaps first
            resolved.sort(key=content_preference, reverse=True)
        for i, url in enumerate(resolved):
            place = reading_place(depth, order, i) if order is not None else None
            request = self._sitemap_request(
                url, "index", base, depth, note, lastmod_of.get(url), order=place
            )
            if request is not None:  # (a _Carried: ``parse`` carries it over in its turn)
                yield request

    @staticmethod
    def _keep_worked(out: Any, sitemap: str, batch: Any) -> None:
        """A worker's batch into the document's section: its listing as it was written,
        locations normalized (a location that did not normalize: as written). The columns
        go as they came, values joined by NUL: the sections writer escapes each whole."""
        n = batch.n
        locs = batch.urls
        if batch.errors:
            locs = list(split_column(locs, n))
            for i, error in batch.errors.items():
                locs[i] = error.raw
        out.add(
            sitemap,
            locs,
            batch.lastmods,
            batch.changefreqs,
            batch.priorities,
            batch.alternates,
            n,
        )

    # -- the end ------------------------------------------------------------------------
    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()
