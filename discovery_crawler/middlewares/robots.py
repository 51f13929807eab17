"""Obey each origin's robots.txt (SPEC §6): fetch it once, decide every request by it.

Scrapy's ``RobotsTxtMiddleware`` treats a robots.txt answering 5xx as "allow all", asks by
the User-Agent header and drops Crawl-delay. This one keeps a ``RobotsPolicy`` per origin
(RFC 9309: 5xx, timeouts and network errors fail closed; 4xx allow all; ≤5 redirects),
asks by ``ROBOTS_AGENT_TOKEN``, keeps Crawl-delay for the throttle (``policy_store``), and
never drops a URL silently: a disallowed request raises ``RobotsDisallowed`` (an
``IgnoreRequest`` naming the rule), is counted in ``robots/disallowed`` and listed with its
rule and the page that linked to it.

robots.txt is fetched once per origin: concurrent requests wait for the one fetch, and a
spider's own request for ``<origin>/robots.txt`` is answered from that same fetch (its
``response.meta["robots_policy"]`` carries the policy). Reading stops at
``ROBOTS_MAX_BYTES``, as Google stops at 500 KiB.

Meta keys read: ``dont_obey_robots`` (skip the check), ``found_on`` (listed with a
disallowed URL). Set: ``robots_policy`` on a spider's robots.txt response; ``robots_fetch``
on the middleware's own fetches.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin
from weakref import WeakKeyDictionary

from scrapy import Request, signals
from scrapy.exceptions import IgnoreRequest, StopDownload
from scrapy.http import Response
from scrapy.http.request import NO_CALLBACK
from scrapy.responsetypes import responsetypes
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred
from w3lib.url import safe_url_string

from discovery_crawler.extensions.run import run_of
from discovery_crawler.extensions.stop import StopRequested
from discovery_crawler.refusals import describe_exception
from discovery_crawler.robots import (
    DEFAULT_AGENT_TOKEN,
    DEFAULT_MAX_BYTES,
    FAIL_CLOSED,
    MAX_REDIRECTS,
    PolicyStore,
    RobotsPolicy,
    is_robots_url,
    request_origin,
)
from discovery_crawler.run_record import CappedList
from discovery_crawler.urls.credentials import without_credentials

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

_TOKEN = re.compile(r"[A-Za-z_-]+")
_STORES: WeakKeyDictionary[Crawler, PolicyStore] = WeakKeyDictionary()
_MIDDLEWARES: WeakKeyDictionary[Crawler, RobotsPolicyMiddleware] = WeakKeyDictionary()


def policy_store(crawler: Crawler) -> PolicyStore:
    """The crawl's robots policies by origin; ``.crawl_delay(origin)`` is what the throttle
    reads. Empty (no Crawl-delay anywhere) when the robots middleware is off."""
    store = _STORES.get(crawler)
    if store is None:
        store = _STORES[crawler] = PolicyStore()
    return store


def robots_middleware(crawler: Crawler) -> RobotsPolicyMiddleware | None:
    """The crawl's robots middleware, for a spider that fetched robots.txt itself."""
    return _MIDDLEWARES.get(crawler)


class RobotsDisallowed(IgnoreRequest):
    """A request robots.txt disallows; the errback sees the URL and the rule."""

    def __init__(self, url: str, rule: str, origin: str):
        super().__init__(f"Forbidden by robots.txt: {url} ({rule})")
        self.url = url
        self.rule = rule
        self.origin = origin


class RobotsSummary:
    """What the robots middleware did in a crawl: policies by origin, disallowed URLs."""

    def __init__(self, store: PolicyStore, list_cap: int):
        self.policies = store
        self.disallowed = CappedList(list_cap)

    def as_dict(self) -> dict[str, Any]:
        return {
            "policies": {p.origin: p.as_dict() for p in self.policies.values()},
            "disallowed": self.disallowed.as_dict(),
        }


class RobotsPolicyMiddleware:
    """Downloader middleware: one robots.txt policy per origin, every request checked."""

    FETCH_PRIORITY = 1000

    def __init__(self, crawler: Crawler):
        settings = crawler.settings
        self.crawler = crawler
        self.stats = crawler.stats
        self.token: str = settings.get("ROBOTS_AGENT_TOKEN") or DEFAULT_AGENT_TOKEN
        if not _TOKEN.fullmatch(self.token):
            raise ValueError(
                f"ROBOTS_AGENT_TOKEN={self.token!r}: a product token needs letters, "
                "'_' and '-' only (RFC 9309 §2.2.1), e.g. discovery-crawler"
            )
        self.fail_closed = settings.getbool("ROBOTS_FAIL_CLOSED", True)
        self.max_bytes = settings.getint("ROBOTS_MAX_BYTES", DEFAULT_MAX_BYTES)
        self.policies = policy_store(crawler)
        self.summary = RobotsSummary(self.policies, settings.getint("CRAWL_LOG_LIST_CAP", 1000))
        self._pending: dict[str, Deferred[None]] = {}
        # What the fetch gave, to answer a spider's own request for robots.txt.
        self._answers: dict[str, Response | Exception] = {}
        _MIDDLEWARES[crawler] = self
        crawler.signals.connect(self._bytes_received, signal=signals.bytes_received)
        run = run_of(crawler)
        if run is not None:  # the crawl log's robots_policy
            run.record.robots_summary = self.summary

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    # -- the check --------------------------------------------------------------------
    async def process_request(self, request: Request) -> Response | None:
        meta = request.meta
        if meta.get("robots_fetch") or not request.url.startswith(("http://", "https://")):
            return None
        origin = request_origin(request.url)
        if is_robots_url(request.url):
            return await self._answer_robots_request(origin, request)
        if meta.get("dont_obey_robots"):
            return None
        policy = await self.policy_for_async(origin)
        allowed, rule = policy.check(request.url)
        if allowed:
            # The throttle (extensions/throttle.py) spaces the host by Crawl-delay too.
            meta["robots_crawl_delay"] = policy.crawl_delay
            return None
        assert rule is not None
        self._disallow(request, origin, rule)
        raise RobotsDisallowed(request.url, rule, origin)

    def _disallow(self, request: Request, origin: str, rule: str) -> None:
        self.stats.inc_value("robots/disallowed")
        found_on = request.meta.get("found_on")
        policy = self.policies.get(origin)
        entry = {
            "url": request.url,
            "rule": rule,
            "group": policy.group if policy is not None else None,
            "origin": origin,
            "found_on": found_on,
            "fetched": False,
        }
        first = self.summary.disallowed.count == 0
        self.summary.disallowed.append(entry)
        log = logger.info if first else logger.debug
        log("robots.txt disallows %s (%s)", request.url, rule)

    # -- policies ---------------------------------------------------------------------
    async def policy_for_async(self, origin: str) -> RobotsPolicy:
        """The policy for ``origin``, fetching robots.txt once if nobody has yet."""
        while True:
            policy = self.policies.get(origin)
            if policy is not None:
                return policy
            pending = self._pending.get(origin)
            if pending is None:
                return await self._fetch(origin)
            await maybe_deferred_to_future(pending)

    def store(self, origin: str, policy: RobotsPolicy) -> bool:
        """Hand over a policy built elsewhere (a spider that fetched robots.txt itself);
        False when the origin already has one (the first one stays)."""
        origin = request_origin(origin)
        if not self.policies.put(origin, policy):
            return False
        self._count(policy)
        return True

    def policy_from_response(self, response: Response) -> RobotsPolicy:
        """A policy from a robots.txt response, with this crawl's token and limits (the
        redirects Scrapy followed, if any, are read from ``redirect_urls``)."""
        chain = list(response.meta.get("redirect_urls", [])) if response.request else []
        return self._policy(chain[0] if chain else response.url, response, chain)

    def _policy(self, url: str, response: Response, chain: list[str]) -> RobotsPolicy:
        """The policy of the robots.txt first asked at ``url``, answered by ``response``
        after the redirects in ``chain``."""
        return RobotsPolicy.from_response(
            url,
            response.status,
            response.body,
            self.token,
            final_url=response.url,
            redirects=chain,
            max_bytes=self.max_bytes,
            fail_closed=self.fail_closed,
        )

    def _count(self, policy: RobotsPolicy) -> None:
        if policy.status is not None:
            self.stats.inc_value(f"robots/status_{policy.status}")
        self.stats.inc_value(f"robots/{policy.outcome}")
        if policy.truncated:
            self.stats.inc_value("robots/truncated")
        if policy.redirects:
            self.stats.inc_value("robots/redirected")
        level = logging.WARNING if policy.outcome == FAIL_CLOSED else logging.INFO
        logger.log(level, "robots.txt of %s: %s", policy.origin, policy.reason)

    async def _fetch(self, origin: str) -> RobotsPolicy:
        done: Deferred[None] = Deferred()
        self._pending[origin] = done
        try:
            try:
                policy, answer = await self._download(origin)
            except StopRequested:
                raise  # not fetched, the run stopping: no policy; the waiters go back unsent
            except Exception as exc:  # never leave waiters hanging on a bug of ours
                logger.error("robots.txt of %s: unexpected error %r", origin, exc)
                policy = self._failure_policy(origin + "/robots.txt", exc, [])
                answer = exc
            self._answers[origin] = answer
            self.policies.put(origin, policy)
            self._count(policy)
            # robots.txt redirected (http→https, bare→www): the file it ended on is the
            # final origin's own robots.txt, so that origin needs no fetch of its own.
            if isinstance(answer, Response) and is_robots_url(answer.url):
                final = request_origin(answer.url)
                if final != origin and final not in self.policies and final not in self._pending:
                    final_policy = self.policy_from_response(answer)
                    self.policies.put(final, final_policy)
                    self._answers[final] = answer
                    self._count(final_policy)
            return policy
        finally:
            del self._pending[origin]
            done.callback(None)

    async def _download(self, origin: str) -> tuple[RobotsPolicy, Response | Exception]:
        """Fetch ``<origin>/robots.txt`` — or, a worker of a distributed job, read the
        job's copy: one worker fetches it, the others parse what it got
        (``DiscoveryRun.frontier``: ``robots_shared``)."""
        run = run_of(self.crawler)
        frontier = run.frontier if run is not None else None
        if frontier is None:
            policy, answer, _ = await self._download_here(origin)
            return policy, answer
        stored = await frontier.robots_shared(origin)
        if stored is not None:
            self.stats.inc_value("robots/from_job")
            return self._stored(stored)
        policy, answer, chain = await self._download_here(origin)
        frontier.robots_store(origin, self._storable(origin, answer, chain))
        return policy, answer

    def _storable(self, origin: str, answer: Response | Exception, chain: list[str]) -> dict:
        """What the job keeps of this origin's fetch (``_stored`` reads it back)."""
        first = origin + "/robots.txt"
        if isinstance(answer, Response):
            return {
                "first": first,
                "chain": chain,
                "url": answer.url,
                "status": answer.status,
                "body": answer.body.decode("latin-1"),
            }
        kind, message = describe_exception(answer)
        return {"first": first, "chain": chain, "kind": kind, "message": message}

    def _stored(self, stored: dict) -> tuple[RobotsPolicy, Response | Exception]:
        """The policy (and the answer) of another worker's fetch of robots.txt."""
        first, chain = stored["first"], stored["chain"]
        if "kind" in stored:
            policy = RobotsPolicy.from_failure(
                first,
                stored["kind"],
                stored["message"],
                self.token,
                redirects=chain,
                max_bytes=self.max_bytes,
                fail_closed=self.fail_closed,
            )
            return policy, IgnoreRequest(f"robots.txt of the job: {stored['message']}")
        body = stored["body"].encode("latin-1")
        cls = responsetypes.from_args(url=stored["url"], body=body)
        response = cls(url=stored["url"], status=stored["status"], body=body)
        return self._policy(first, response, chain), response

    async def _download_here(
        self, origin: str
    ) -> tuple[RobotsPolicy, Response | Exception, list[str]]:
        """Fetch ``<origin>/robots.txt``, following up to ``MAX_REDIRECTS`` redirects."""
        first = url = origin + "/robots.txt"
        chain: list[str] = []
        while True:
            request = Request(
                url,
                callback=NO_CALLBACK,
                priority=self.FETCH_PRIORITY,
                dont_filter=True,
                meta={
                    "robots_fetch": True,
                    "dont_redirect": True,  # followed here, to count and cap the hops
                    "handle_httpstatus_all": True,
                    # the hops so far, as Scrapy names them (the SSRF guard reads them)
                    **({"redirect_urls": list(chain)} if chain else {}),
                },
            )
            try:
                assert self.crawler.engine is not None
                response = await self.crawler.engine.download_async(request)
            except StopRequested:
                raise
            except Exception as exc:
                return self._failure_policy(first, exc, chain), exc, chain
            location = response.headers.get(b"Location")
            if 300 <= response.status < 400 and location and len(chain) < MAX_REDIRECTS:
                chain.append(response.url)
                # a site's credentials in the Location: not sent, not recorded
                url = safe_url_string(urljoin(response.url, location.decode("latin-1")))
                url = without_credentials(url)
                if url.startswith(("http://", "https://")):
                    continue
            self.stats.inc_value("robots/fetched")
            return self._policy(first, response, chain), response, chain

    def _failure_policy(self, url: str, exc: Exception, chain: list[str]) -> RobotsPolicy:
        kind, message = describe_exception(exc)
        self.stats.inc_value("robots/fetch_failed")
        return RobotsPolicy.from_failure(
            url,
            kind,
            message,
            self.token,
            redirects=chain,
            max_bytes=self.max_bytes,
            fail_closed=self.fail_closed,
        )

    async def _answer_robots_request(self, origin: str, request: Request) -> Response | None:
        """A spider asks for robots.txt: answer from the one fetch of this origin."""
        policy = await self.policy_for_async(origin)
        answer = self._answers.get(origin)
        request.meta["robots_policy"] = policy
        if answer is None:
            return None  # the policy was handed over by store(): let the request go
        request.meta["dont_retry"] = True  # the fetch was already retried: a replay is not
        if isinstance(answer, Exception):
            raise answer
        return answer.replace(request=request)

    # -- plumbing ---------------------------------------------------------------------
    def _bytes_received(self, data: bytes, request: Request, **kwargs: Any) -> None:
        """Stop reading a robots.txt past ROBOTS_MAX_BYTES (the policy parses only that)."""
        if not request.meta.get("robots_fetch") or self.max_bytes <= 0:
            return
        received = request.meta.get("robots_bytes", 0) + len(data)
        request.meta["robots_bytes"] = received
        if received > self.max_bytes:
            raise StopDownload(fail=False)
