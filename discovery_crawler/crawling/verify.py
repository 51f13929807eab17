"""``-a verify=1`` (SPEC §3): fetch the pages the sitemaps list and say which are live,
redirected, dead, refused or failed (``discovery_crawler/verdicts.py``).

In ``sitemap`` and ``auto`` modes the verify stage (``pipelines/verify.py``, after dedup)
hands each new listed record to ``ListedPageVerifier.verify_listed``: a page URL the
filter stage will keep, not flagged ``requires_auth``, within the ``max_pages`` budget,
leaves its batch and rides in its request's ``meta["entry"]`` — through Scrapy's scheduler
(no second frontier), the robots policy, the per-host throttle — and is written, with its
sitemap metadata intact, when its answer arrives (a batch of one, ``deduplicated``, which
goes through the stages after dedup). What is in flight per URL is its request and its
record, nothing else. Union mode needs none of this: the crawl fetches listed pages
anyway, and its answers are the verdicts.

How a listed URL is asked:

- ``VERIFY_METHOD`` (``HEAD``, the default, or ``GET``). A HEAD is a shortcut, asked once
  (not retried): one answered 405 or 501 (HEAD refused), or with any status other than
  2xx, 3xx, 404 and 410 — a server that routes only GET may answer a HEAD 400, 403 or 500
  for a page GET serves — is asked again with GET, and GET's answer (retried as any
  request) counts. So is a HEAD that got no answer (a dropped connection, a timeout: some
  servers mishandle HEAD), unless the host could not be reached at all (connection
  refused, DNS), where a GET would fail the same way. 404 and 410 to a HEAD are trusted.
  A GET reads at most ``PAGE_MAX_BYTES``.
- Redirects are followed here, hop by hop (Scrapy's redirect middlewares are off for these
  requests): each hop is a request of its own, so robots.txt and the throttle see it; a
  URL met again in its chain is a ``redirect_loop``; after ``REDIRECT_MAX_TIMES`` hops the
  chain stops (``over_max_redirects``); a redirect to a login page pointing back is a
  ``login`` refusal, and the login page is not fetched. A GET answer's
  ``<meta http-equiv=refresh>`` (delay under ``METAREFRESH_MAXDELAY``) is a hop too; a
  HEAD cannot show one.
- The answer is classified by ``refusals.classify_response`` / ``classify_failure`` (the
  refusal middleware only looks at the link crawl's page fetches) and added to the run's
  refusal summary.

The record: ``status`` is the last answer received (the end of a redirect chain),
``redirected_to`` where the chain ended, ``live`` true only for a 2xx at the listed URL
itself, ``refusal`` the final answer's refusal, ``via`` ``sitemap`` and ``found_on`` the
sitemap; ``title`` from a GET answer, whose ``<link rel=canonical>``, when it is the listed
URL's trailing-slash twin, names the record (SPEC §5 rule 7; the listed form in
``aliases``, as is the twin a slash redirect ended on). The crawl log's ``verify``
section has the counts and the chains.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from scrapy import Request, signals
from scrapy.exceptions import StopDownload
from scrapy.http import HtmlResponse, TextResponse
from scrapy.utils.response import get_meta_refresh

from discovery_crawler.arguments import ArgumentError
from discovery_crawler.crawling.extract import scan_html
from discovery_crawler.crawling.links import (
    LinkCrawl,
    _header,
    failure_refusal,
    flag_directives,
    settle_twins,
    take_twin,
)
from discovery_crawler.estimate import human_duration
from discovery_crawler.indexing import last_modified
from discovery_crawler.items import UrlBatch
from discovery_crawler.middlewares.robots import RobotsDisallowed
from discovery_crawler.middlewares.ssrf import FLAG as SSRF_FLAG
from discovery_crawler.middlewares.ssrf import SSRFRefused
from discovery_crawler.refusals import classify_failure, classify_response
from discovery_crawler.signals import page_refused, urls_expected
from discovery_crawler.sitemaps.facts import FACTS
from discovery_crawler.urls.credentials import without_credentials
from discovery_crawler.urls.filters import FilterPolicy
from discovery_crawler.urls.kinds import url_kinds_many
from discovery_crawler.urls.normalize import UrlError, twin_key
from discovery_crawler.verdicts import (
    REDIRECT_STATUSES,
    VERDICT_KEY,
    VerifyTally,
    answer_verdict,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from twisted.python.failure import Failure

    from discovery_crawler.extensions.run import DiscoveryRun

logger = logging.getLogger(__name__)

METHODS = ("HEAD", "GET")
VERIFY_PRIORITY = -100  # after robots.txt and every sitemap: the walk finishes first
_FETCHED_KINDS = ("page", "paginated")  # as the link crawl: files are listed, not fetched
_HEAD_TRUSTED = frozenset({404, 410})
_HEADERS = ("Content-Type", "Content-Disposition", "Retry-After", "cf-mitigated", "Server")
# A HEAD failure where the host was never reached: a GET would fail the same way.
_NO_FALLBACK_FAILURES = ("Refused", "DNS", "CannotResolveHost", "NoRoute")


def verify_method(settings: Any) -> str:
    """``VERIFY_METHOD``, checked: a wrong value is a one-line error naming it."""
    method = str(settings.get("VERIFY_METHOD") or "HEAD").strip().upper()
    if method not in METHODS:
        raise ArgumentError("VERIFY_METHOD", f"{method!r}; expected HEAD or GET")
    return method


class ListedPageVerifier:
    """Fetches the sitemap-listed pages of one run (``-a verify=1``): a component the
    ``discover`` spider drives, built with the spider's callbacks for its requests and the
    run's link crawl (its page budget; in union mode, which pages a sitemap listed)."""

    def __init__(
        self,
        crawler: Crawler,
        run: DiscoveryRun,
        links: LinkCrawl,
        *,
        on_answer: Callable[..., Any],
        on_failure: Callable[..., Any],
        union: bool = False,
    ) -> None:
        settings = crawler.settings
        self.crawler = crawler
        self.record = run.record
        self.options = run.options
        self.origins = run.origins
        self.bfs_max_pages = links.bfs_max_pages
        self.pages_name = links.pages_name
        self._on_answer = on_answer
        self._on_failure = on_failure
        self.verify_method = method = verify_method(settings)
        self.verify_max_hops = settings.getint("REDIRECT_MAX_TIMES", 20)
        self.verify_refresh_delay = settings.getfloat("METAREFRESH_MAXDELAY", 100)
        self.verify_max_bytes = settings.getint("PAGE_MAX_BYTES")
        self.agent = settings.get("ROBOTS_AGENT_TOKEN") or ""
        self._verify_policy: FilterPolicy | None = None
        interval = settings.getfloat("HOST_INTERVAL")
        tally = VerifyTally(
            settings.getint("CRAWL_LOG_LIST_CAP"),
            mode="crawl" if union else "fetch",
            method="GET" if union else method,
            host_interval=interval,
            max_pages=self.bfs_max_pages,
        )
        self.verify_tally = self.record.verify = tally
        self._verify_said = 0
        if union:
            if links.account.union is not None:
                tally.listed = links.account.union.is_listed
            return
        self.crawler.signals.connect(self._verify_expected, signal=urls_expected)
        if self.verify_max_bytes > 0:
            self.crawler.signals.connect(self._verify_bytes, signal=signals.bytes_received)

    # -- admission ----------------------------------------------------------------------
    def _verify_filter(self) -> FilterPolicy:
        site = self.record.site_origin or ""
        policy = self._verify_policy
        if policy is None or policy.site_origin != site:
            opts = self.options
            policy = self._verify_policy = FilterPolicy(
                site, opts.include_paths, opts.exclude_paths
            )
        return policy

    def verify_listed(self, records: list[dict[str, Any]], sitemap: str) -> list[dict[str, Any]]:
        """New listed records (after dedup): the pages to verify leave the batch and are
        requested; the others are returned, to go on as usual (the filter stage keeps or
        drops them, and the tally counts what is kept as ``unchecked``)."""
        tally = self.verify_tally
        if tally is None or not records or not self.record.site_origin:
            return records
        urls = [rec["url"] for rec in records]
        kinds = url_kinds_many(urls)
        # The filter stage's own rule (SPEC §5): what it drops is not in the inventory.
        decisions = self._verify_filter().decide_many(urls, kinds)
        keep = []
        budget = self.bfs_max_pages
        engine = self.crawler.engine
        for rec, kind, decision in zip(records, kinds, decisions, strict=True):
            if kind not in _FETCHED_KINDS or not decision.keep or decision.flags:
                keep.append(rec)  # a file, dropped by the filter, or requires_auth
                continue
            if budget and tally.queued >= budget:
                rec["flags"] = ["over_max_pages"]
                self.record.limit_bound("BFS_MAX_PAGES", value=budget, given=self.pages_name)
                keep.append(rec)
                continue
            rec.pop(FACTS, None)  # the worker's facts: not needed once held
            # written when answered: its twin met meanwhile waits for it (SPEC §5 rule 7)
            self.record.seen.twins.expect(twin_key(rec["url"]), rec["url"])
            tally.queued += 1
            engine.crawl(self._verify_request(rec["url"], rec, self.verify_method, ()))
        if tally.queued and not self._verify_said:  # said once, then as the estimate grows
            self._verify_duration(tally.queued, "queued")
        return keep

    def _verify_request(
        self,
        url: str,
        entry: dict[str, Any],
        method: str,
        chain: tuple[tuple[str, int | str], ...],
    ) -> Request:
        meta: dict[str, Any] = {
            "entry": entry,
            "verify": method,
            "found_on": entry.get("sitemap"),  # the robots middleware lists it
            "dont_redirect": True,  # followed here, hop by hop
            "handle_httpstatus_all": True,
        }
        if chain:
            meta["verify_chain"] = chain
        if method == "HEAD":
            meta["dont_retry"] = True  # anything doubtful is asked again with GET
        self.verify_tally.requests[method] += 1  # type: ignore[union-attr]
        return Request(
            url,
            method=method,
            callback=self._on_answer,
            errback=self._on_failure,
            # a chain under way goes before new URLs: fewer records wait in flight
            priority=VERIFY_PRIORITY + (1 if chain else 0),
            dont_filter=True,  # a listed URL is asked even if another chain met it
            meta=meta,
        )

    def _verify_bytes(self, data: bytes, request: Request, **kwargs: Any) -> None:
        """A GET of verify reads at most PAGE_MAX_BYTES (what is read decides)."""
        meta = request.meta
        if meta.get("verify") != "GET":
            return
        received = meta.get("verify_bytes", 0) + len(data)
        meta["verify_bytes"] = received
        if received > self.verify_max_bytes:
            raise StopDownload(fail=False)

    def _verify_expected(self, urls: int) -> None:
        """The sitemaps promise about ``urls`` URLs: say what verifying them will take."""
        if urls >= 2 * self._verify_said:
            self._verify_duration(urls, "the sitemaps list about")

    def _verify_duration(self, urls: int, how: str) -> None:
        tally = self.verify_tally
        assert tally is not None
        self._verify_said = max(self._verify_said, urls)
        seconds = tally.expected_seconds(urls)
        budget = f", max_pages {tally.max_pages:,}" if tally.max_pages else ""
        if tally.host_interval > 0:
            logger.info(
                "verify: %s %s URLs; at one request per %gs (HOST_INTERVAL%s) that is at least %s",
                how,
                f"{urls:,}",
                tally.host_interval,
                budget,
                human_duration(seconds),
            )
        else:
            logger.info("verify: %s %s URLs (no HOST_INTERVAL%s)", how, f"{urls:,}", budget)

    # -- answers ------------------------------------------------------------------------
    def verify_answer(self, response: Response) -> Iterator[Any]:
        meta = response.meta
        request = response.request
        method = request.method if request is not None else meta.get("verify", "GET")
        entry = meta["entry"]
        chain = tuple(meta.get("verify_chain") or ())
        status = response.status
        tally = self.verify_tally
        assert tally is not None
        if method == "HEAD" and not (200 <= status < 400 or status in _HEAD_TRUSTED):
            # HEAD refused (405, 501) or answered as GET would not be: GET decides.
            tally.fallbacks[str(status)] += 1
            yield self._verify_request(response.url, entry, "GET", chain)
            return
        here = response.url
        urls = [u for u, _ in chain]
        if status in REDIRECT_STATUSES and (location := response.headers.get(b"Location")):
            target = self._verify_target(here, location.decode("latin-1"))
            if target is not None:
                yield from self._verify_hop(response, entry, method, chain, here, status, target)
                return
        refusal = classify_response(
            here,
            status,
            {name: _text(response.headers.get(name)) for name in _HEADERS},
            response.body if method == "GET" else b"",
            urls or None,
        )
        title = canonical = None
        meta_robots = (False, False)
        if method == "GET" and 200 <= status < 300 and isinstance(response, TextResponse):
            try:
                delay, refresh = get_meta_refresh(response)
            except (ValueError, UnicodeError):
                delay = refresh = None
            if refresh and (delay or 0) < self.verify_refresh_delay:
                target = self._verify_target(here, refresh)
                if target is not None and target != here:
                    yield from self._verify_hop(
                        response, entry, method, chain, here, "refresh", target
                    )
                    return
            if isinstance(response, HtmlResponse):
                scan = scan_html(response.body, response.encoding, keep=0, agent=self.agent)
                title = scan.title
                meta_robots = (scan.noindex, scan.nofollow)
                if scan.canonical:  # may name the listed URL's trailing-slash twin
                    canonical = self._verify_target(here, scan.canonical)
        found = refusal.cite(_citation(entry)).as_dict() if refusal is not None else None
        if found is not None:
            self._verify_refused(found, response.request)
        verdict = answer_verdict(status, found and found["class"], bool(chain))
        extra = {"chain": [list(hop) for hop in chain]} if chain else None
        rec = self._verify_record(
            entry, status, chain, here, found, verdict, extra, title=title, canonical=canonical
        )
        if 200 <= status < 300 and found is None:
            self._verify_directives(rec.records[0], response, meta_robots)
            if modified := last_modified(_header(response, b"Last-Modified")):
                rec.records[0]["last_modified"] = modified  # a sitemap's lastmod, unlisted
        yield rec

    def _verify_directives(
        self, rec: dict[str, Any], response: Response, meta: tuple[bool, bool]
    ) -> None:
        """Flag a verified page ``noindex`` / ``nofollow_page`` from its robots meta tags
        (a GET answer's) and its ``X-Robots-Tag`` headers (HEAD's too)."""
        noindex, _ = flag_directives(self.record, rec, response, meta, self.agent)
        if noindex:
            self.crawler.stats.inc_value("verify/noindex_pages")

    def _verify_target(self, here: str, location: str) -> str | None:
        # the site's credentials in a Location are neither followed nor recorded
        try:
            target = urljoin(here, without_credentials(location.strip())).partition("#")[0]
        except ValueError:
            return None
        if not target.startswith(("http://", "https://")):
            return None
        try:
            return without_credentials(self.origins.normalize(target))
        except UrlError:
            return without_credentials(target)

    def _verify_hop(
        self,
        response: Response,
        entry: dict[str, Any],
        method: str,
        chain: tuple[tuple[str, int | str], ...],
        here: str,
        status: int | str,
        target: str,
    ) -> Iterator[Any]:
        """A redirect (``status``: its 3xx, or ``refresh``) from ``here`` to ``target``."""
        tally = self.verify_tally
        assert tally is not None
        chain = (*chain, (here, status))
        urls = [u for u, _ in chain]
        answered = status if isinstance(status, int) else response.status
        extra = {"chain": [list(hop) for hop in chain]}
        login = classify_response(target, answered, {}, b"", urls)
        if login is not None and login.refusal_class == "login":
            found = login.cite(_citation(entry)).as_dict()
            self._verify_refused(found, response.request)
            verdict = answer_verdict(answered, "login", True)
            yield self._verify_record(entry, answered, chain, target, found, verdict, extra)
            return
        flag = None
        if target in urls or self._verify_same(target, urls):
            flag, stop = "redirect_loop", "loop"
        elif len(chain) >= self.verify_max_hops > 0:
            flag, stop = "over_max_redirects", "too_long"
            self.record.limit_bound("REDIRECT_MAX_TIMES", value=self.verify_max_hops)
        if flag is not None:
            verdict = answer_verdict(answered, None, True, stop)
            yield self._verify_record(
                entry, answered, chain, target, None, verdict, extra, flags=[flag]
            )
            return
        tally.hops += 1
        yield self._verify_request(target, entry, method, chain)

    def _verify_same(self, target: str, urls: list[str]) -> bool:
        """``target`` is a URL of the chain, compared normalized (exactly: ``/a`` and
        ``/a/`` are two URLs, and a slash redirect is no loop)."""
        normalize = self.origins.normalize
        for url in urls:
            try:
                if normalize(url) == target:
                    return True
            except UrlError:
                continue
        return False

    def verify_failed(self, failure: Failure) -> Iterator[Any]:
        """No answer: robots.txt disallows the URL (or a hop of its chain), a timeout, a
        network error, or another component ignored the request."""
        request = getattr(failure, "request", None)
        if request is None or "entry" not in request.meta:
            logger.error("verify request failed: %s", failure.getErrorMessage())
            return
        meta = request.meta
        entry = meta["entry"]
        chain = tuple(meta.get("verify_chain") or ())
        tally = self.verify_tally
        assert tally is not None
        exc = failure.value
        last = chain[-1][1] if chain else None
        last_status = last if isinstance(last, int) else None
        extra: dict[str, Any] = {"chain": [list(hop) for hop in chain]} if chain else {}
        if isinstance(exc, RobotsDisallowed):
            found = failure_refusal(failure)
            if found["class"] == "robots":
                extra["reason"] = found["reason"]
                if chain:  # the listed URL redirects to a URL we may not fetch
                    verdict = answer_verdict(last_status, None, True, "robots")
                    yield self._verify_record(
                        entry, last_status, chain, request.url, None, verdict, extra
                    )
                    return
                rec = self._verify_base(entry, None, None)
                rec["flags"] = ["robots_disallowed"]
                rec["robots_rule"] = exc.rule
                rec[VERDICT_KEY] = (*answer_verdict(None, robots=True), extra)
                yield self._verify_batch(rec)
                return
            # robots.txt got no answer: the site did not answer
            refusal = {
                "class": found["class"],
                "url": request.url,
                "status": None,
                "reason": found["reason"],
                **_citation(entry),
            }
            self._verify_refused(refusal, request)
        else:
            classified = classify_failure(request.url, exc)
            if classified is None:  # ignored by a component: a decision, not an answer
                extra["reason"] = str(exc) or type(exc).__name__
                refused = None
                if isinstance(exc, SSRFRefused):  # the record names the guard's rule
                    refused = {**failure_refusal(failure), "url": request.url, **_citation(entry)}
                rec = self._verify_base(entry, last_status, refused)
                if refused is not None:
                    rec["flags"] = [SSRF_FLAG]
                if chain:
                    rec["redirected_to"] = request.url
                rec[VERDICT_KEY] = ("unchecked", "ignored", extra or None)
                yield self._verify_batch(rec)
                return
            names = "".join(cls.__name__ for cls in type(exc).__mro__)
            if request.method == "HEAD" and not any(n in names for n in _NO_FALLBACK_FAILURES):
                tally.fallbacks[classified.refusal_class] += 1
                yield self._verify_request(request.url, entry, "GET", chain)
                return
            refusal = classified.cite(_citation(entry)).as_dict()
            self._verify_refused(refusal, request)
        verdict = answer_verdict(None, refusal["class"], bool(chain))
        yield self._verify_record(entry, None, chain, request.url, refusal, verdict, extra or None)

    # -- records ------------------------------------------------------------------------
    def _verify_refused(self, found: dict[str, Any], request: Request | None) -> None:
        """A refusal of verify's goes into the run's refusal summary, as the link crawl's
        (and to the run's timeline, as the ``page_refused`` signal)."""
        summary = self.record.refusals
        if summary is not None:
            summary.add(found)
            if request is not None:
                self.crawler.signals.send_catch_log(
                    signal=page_refused, request=request, refusal=found
                )
        self.crawler.stats.inc_value(f"verify/refusals/{found['class']}")

    def _verify_base(
        self, entry: dict[str, Any], status: int | None, refusal: dict[str, Any] | None
    ) -> dict[str, Any]:
        rec = entry  # the held record itself: nothing else refers to it any more
        rec.update(
            via="sitemap",
            found_on=entry.get("sitemap"),
            anchor=None,
            depth=None,
            title=None,
            status=status,
            refusal=refusal,
            live=False,  # asked, and not answered 2xx at the listed URL (until it is)
        )
        return rec

    def _verify_record(
        self,
        entry: dict[str, Any],
        status: int | None,
        chain: tuple[tuple[str, int | str], ...],
        final: str,
        refusal: dict[str, Any] | None,
        verdict: tuple[str, str],
        extra: dict[str, Any] | None,
        flags: list[str] | None = None,
        title: str | None = None,
        canonical: str | None = None,
    ) -> UrlBatch:
        rec = self._verify_base(entry, status, refusal)
        rec["title"] = title
        if chain:
            rec["redirected_to"] = final
        rec["live"] = verdict[0] == "live"
        if flags:
            rec["flags"] = flags
        # The page's canonical decides /foo or /foo/ (SPEC §5 rule 7), either way; a chain
        # that ended on the listed URL's twin (a slash redirect) names it in the aliases.
        key = twin_key(rec["url"])
        fixed = canonical is not None and twin_key(canonical) == key
        if fixed and canonical != rec["url"]:
            take_twin(rec, canonical)  # type: ignore[arg-type]
            self.record.counts["canonical_twins"] += 1
        elif (
            canonical is not None
            and not fixed
            and canonical.startswith((self.record.site_origin or "") + "/")
        ):
            # Another page of the site named canonical: this one exists, and is not the
            # one to index (as the link crawl records it).
            rec["canonical"] = canonical
            rec["flags"] = [*(rec.get("flags") or ()), "canonical_elsewhere"]
            self.record.counts["canonical_elsewhere"] += 1
        if chain and final != rec["url"] and twin_key(final) == key:
            aliases = rec.setdefault("aliases", [])
            if final not in aliases:
                aliases.append(final)
        settle_twins(self.record, rec, fixed)
        rec[VERDICT_KEY] = (*verdict, extra)
        self.crawler.stats.inc_value(f"verify/{verdict[0]}")
        return self._verify_batch(rec)

    def _verify_batch(self, rec: dict[str, Any]) -> UrlBatch:
        self.verify_tally.returned += 1  # type: ignore[union-attr]
        return UrlBatch(
            "sitemap",
            rec.get("sitemap") or rec["url"],
            records=[rec],
            seen=self.record.seen,
            deduplicated=True,  # admitted once, at the dedup stage
        )


def _citation(entry: dict[str, Any]) -> dict[str, Any]:
    return {"found_on": entry.get("sitemap"), "via": "sitemap"}


def _text(value: bytes | str | None) -> str:
    if value is None:
        return ""
    return value.decode("latin-1") if isinstance(value, bytes) else str(value)
