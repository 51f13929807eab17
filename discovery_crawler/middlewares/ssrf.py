"""The SSRF guard (SPEC §12): no request reaches an address it should not.

A downloader middleware, first of all (before robots.txt is even asked), and a resolver
under the connections. Every request — seed, robots.txt and its redirect hops, sitemaps,
each redirect Scrapy follows (a new request through here again), each page — is checked
before any connection: its scheme (http/https), no credentials in the URL, its port
(``SSRF_ALLOWED_PORTS``), its host read in every notation (``urls/addresses.py``), and for a
host name the address it resolves to. A refused request raises ``SSRFRefused`` (an
``IgnoreRequest``): nothing is sent, the crawl log lists it with its rule
(``ssrf.refused``), the summary says it, and a page's feed record is flagged
``ssrf_refused`` with the reason. ``SSRF_ALLOWED_NETWORKS`` opens addresses explicitly (a
private deployment's hosts, the tests' loopback servers).

No DNS rebinding: a name is resolved once, by ``GuardedResolver``, which the middleware
installs as the reactor's resolver (the one Scrapy's HTTP/1.1 handler connects through,
``reactor.resolver``, wrapping the resolver Scrapy installed from ``DNS_RESOLVER``). The
answer is checked and pinned: the connection asks the same resolver and gets the address
that was checked, never a second answer. The resolver also refuses a non-public answer on
its own, whatever asked.

``SSRF_SAME_ORIGIN`` (profile service: "same origin only, including redirects and sitemap
locations"): a request on another origin than the input's is refused with rule
``other_origin`` — a redirect to another host, a robots.txt ``Sitemap:`` line or an index
child elsewhere (the sitemap walk skips those before asking, ``crawling/walk.py``).

An HTTP proxy (``meta["proxy"]``, or the ``http_proxy``/``https_proxy`` environment as
Scrapy's ``HttpProxyMiddleware`` reads it, ``no_proxy`` included) is where the connection
goes: its address is checked as a host's is (not its port: proxies listen on 3128, 8080),
and a proxy on a non-public address not in ``SSRF_ALLOWED_NETWORKS`` refuses every request
through it, named as the proxy (``the proxy http://10.0.0.1:3128 is 10.0.0.1, a private
address``) — not as the "DNS lookup failed" its connection would otherwise end with. The
proxy resolves the site's names itself: the guard still checks the site's address, but
cannot pin the one the proxy connects to.

``SSRF_TEST_RESOLUTIONS`` (tests only): ``{"name": ["first answer", "second", ...]}``
answers lookups from the table instead of DNS (the last answer repeats; a name not in it
fails as a DNS failure), so the guard's decisions are tested without sending a packet.

Rendering (scrapy-playwright) connects through Chromium, which resolves on its own: under
the guard ``rendering.RenderAddon`` does not render (said in one line).
"""

from __future__ import annotations

import ipaddress
import logging
from collections import Counter
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy import signals
from scrapy.downloadermiddlewares.httpproxy import HttpProxyMiddleware
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import defer
from twisted.internet.error import DNSLookupError
from twisted.internet.interfaces import IResolverSimple
from zope.interface import implementer

from discovery_crawler.extensions.run import run_of
from discovery_crawler.run_record import CappedList
from discovery_crawler.urls.addresses import (
    AddressPolicy,
    HostError,
    Refused,
    clean_host,
    parse_host,
    parse_networks,
    same_origin,
    url_origin,
)

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from twisted.internet.defer import Deferred

logger = logging.getLogger(__name__)

FLAG = "ssrf_refused"
_LOGGED = 20  # refusals logged one by one; the rest at debug (all in the crawl log)
_SHOWN = 5  # reasons the summary names, each in a line
_REASONS = 100  # reasons counted for the summary (the crawl log lists every refusal)


class SSRFRefused(IgnoreRequest):
    """A request the SSRF guard refused before any connection."""

    def __init__(self, url: str, refused: Refused):
        super().__init__(f"refused by the SSRF guard: {url}: {refused.reason}")
        self.url = url
        self.rule = refused.rule
        self.reason = refused.reason


class SSRFBlocked(DNSLookupError):
    """The resolver's own refusal of a name whose answer is not public."""

    def __init__(self, name: str, refused: Refused):
        super().__init__(f"refused by the SSRF guard: {refused.reason}")
        self.name = name
        self.refused = refused


@implementer(IResolverSimple)
class GuardedResolver:
    """The reactor's resolver under the guard: each name resolved once, its answer checked
    and pinned. Without a policy (no guarded crawl running) it is the resolver it wraps."""

    def __init__(self, backend: Any):
        self.backend = backend
        self.policy: AddressPolicy | None = None
        self.answers: dict[str, list[str]] = {}
        self.pins: dict[str, str] = {}
        self.refused: dict[str, Refused] = {}
        self.queries: Counter[str] = Counter()
        self._pending: dict[str, list[Deferred[str]]] = {}

    @classmethod
    def install(cls, reactor: Any) -> GuardedResolver:
        """The reactor's guarded resolver, installed over its current one if need be."""
        current = reactor.resolver
        if isinstance(current, cls):
            return current
        resolver = cls(current)
        reactor.installResolver(resolver)
        return resolver

    def guard(self, policy: AddressPolicy, answers: dict[str, list[str]] | None = None) -> None:
        self.policy = policy
        self.answers = {clean_host(k): list(v) for k, v in (answers or {}).items()}
        self.pins = {}
        self.refused = {}
        self.queries = Counter()

    def unguard(self) -> None:
        self.policy = None
        self.answers = {}
        self.pins = {}
        self.refused = {}

    # IResolverSimple: what a connection asks
    def getHostByName(self, name: str, timeout: Sequence[int] = ()) -> Deferred[str]:
        if self.policy is None:
            return self.backend.getHostByName(name, timeout)
        return self.resolve(name, timeout)

    def resolve(self, name: str, timeout: Sequence[int] = ()) -> Deferred[str]:
        """The checked address of ``name``: pinned after the first lookup, so every later
        ask (the connection's) gets that same address. Fails with ``SSRFBlocked``."""
        policy = self.policy
        key = clean_host(name)
        try:
            literal = parse_host(key)
        except HostError as exc:
            return defer.fail(SSRFBlocked(key, Refused("invalid_host", str(exc))))
        if literal is not None:
            refused = policy.check_address(literal) if policy is not None else None
            if refused is not None:
                return defer.fail(SSRFBlocked(key, refused))
            return defer.succeed(str(literal))
        if key in self.pins:
            return defer.succeed(self.pins[key])
        if key in self.refused:
            return defer.fail(SSRFBlocked(key, self.refused[key]))
        waiter: Deferred[str] = defer.Deferred()
        waiting = self._pending.get(key)
        if waiting is not None:  # one lookup per name, however many ask at once
            waiting.append(waiter)
            return waiter
        self._pending[key] = [waiter]
        self.queries[key] += 1
        lookup = self._lookup(key, timeout)
        lookup.addCallbacks(self._resolved, self._failed, callbackArgs=(key,), errbackArgs=(key,))
        return waiter

    def _lookup(self, name: str, timeout: Sequence[int]) -> Deferred[str]:
        if not self.answers:
            return self.backend.getHostByName(name, timeout)
        sequence = self.answers.get(name)
        if not sequence:
            return defer.fail(DNSLookupError(f"{name}: not in SSRF_TEST_RESOLUTIONS"))
        return defer.succeed(sequence[min(self.queries[name], len(sequence)) - 1])

    def _resolved(self, answer: str, name: str) -> None:
        waiters = self._pending.pop(name, [])
        try:
            address = ipaddress.ip_address(answer)
        except ValueError:
            refused: Refused | None = Refused("invalid_host", f"{name} resolved to {answer!r}")
        else:
            refused = self.policy.check_address(address, name) if self.policy else None
        if refused is not None:
            self.refused[name] = refused
            for waiter in waiters:
                waiter.errback(SSRFBlocked(name, refused))
            return
        self.pins[name] = answer
        for waiter in waiters:
            waiter.callback(answer)

    def _failed(self, failure: Any, name: str) -> None:
        # not pinned: a DNS failure is the network's business (retried, named as usual)
        for waiter in self._pending.pop(name, []):
            waiter.errback(failure)


class SSRFSummary:
    """What the guard did in a crawl, for the crawl log's ``ssrf``."""

    def __init__(self, policy: AddressPolicy, same_origin: bool, list_cap: int):
        self.policy = policy
        self.same_origin = same_origin
        self.refused = CappedList(list_cap)
        self.rules: Counter[str] = Counter()
        self._reasons: dict[str, list[Any]] = {}  # reason -> [count, first URL]
        # The resolver's pins and lookups (plain data, shared with it)
        self.pins: dict[str, str] = {}
        self.queries: Counter[str] = Counter()

    def add(self, entry: dict[str, Any]) -> None:
        self.rules[entry["rule"]] += 1
        self.refused.append(entry)
        reason = entry["reason"]
        seen = self._reasons.get(reason)
        if seen is not None:
            seen[0] += 1
        elif len(self._reasons) < _REASONS:
            self._reasons[reason] = [1, entry["url"]]

    def lines(self) -> list[str]:
        """The summary's lines: one per reason (most hosts are refused for one), with the
        first URL refused for it; every URL is in the crawl log (``ssrf.refused``)."""
        lines = []
        for reason, (count, url) in list(self._reasons.items())[:_SHOWN]:
            more = f" and {count - 1:,} more request(s)" if count > 1 else ""
            lines.append(f"refused by the SSRF guard: {url}{more}: {reason}")
        shown = sum(count for count, _ in list(self._reasons.values())[:_SHOWN])
        if self.refused.count > shown:
            rules = ", ".join(f"{n:,} {rule}" for rule, n in self.rules.most_common())
            lines.append(
                f"refused by the SSRF guard: {self.refused.count - shown:,} more "
                f"({rules} in all; see ssrf.refused in the crawl log)"
            )
        return lines

    def as_dict(self) -> dict[str, Any]:
        return {
            "enabled": True,
            "allowed_ports": sorted(self.policy.ports),
            "allowed_networks": [str(n) for n in self.policy.networks],
            "same_origin": self.same_origin,
            "rules": dict(self.rules.most_common()),
            "refused": self.refused.as_dict(),
            "resolved": dict(self.pins),  # each name and the one address it was pinned to
            "dns_queries": dict(self.queries),  # lookups per name: one each
        }


def guard_policy(settings: Any) -> AddressPolicy:
    """The guard's allow-lists from the settings; a wrong value is a ``ValueError`` naming
    the setting (the crawl command says it in one line, exit 2)."""
    ports = settings.getlist("SSRF_ALLOWED_PORTS", [80, 443])
    try:
        allowed = frozenset(int(p) for p in ports)
    except (TypeError, ValueError):
        raise ValueError(
            f"SSRF_ALLOWED_PORTS={ports!r}: port numbers expected, e.g. 80,443"
        ) from None
    networks = settings.getlist("SSRF_ALLOWED_NETWORKS", [])
    try:
        return AddressPolicy(allowed, parse_networks(networks))
    except ValueError as exc:
        raise ValueError(f"SSRF_ALLOWED_NETWORKS={networks!r}: {exc}") from None


# The handlers whose connections resolve through the reactor's resolver (the pins).
HTTP11_HANDLER = "scrapy.core.downloader.handlers.http11.HTTP11DownloadHandler"
# The project's handler waits for the host's turn, then hands the request to the handler
# that connects (HOST_INTERVAL_HANDLER): guarded when that one is.
HOST_TURN_HANDLER = "discovery_crawler.handlers.HostTurnHandler"
GUARDED_HANDLERS = frozenset({HTTP11_HANDLER, HOST_TURN_HANDLER})


def _path(handler: Any) -> str:
    if isinstance(handler, str):
        return handler
    return f"{getattr(handler, '__module__', '')}.{getattr(handler, '__qualname__', handler)}"


def unguarded_connections(settings: Any) -> str | None:
    """Why the crawl's connections would not go through the guard's resolver (another
    download handler for http/https, no Twisted reactor), or None."""
    if not settings.getbool("TWISTED_REACTOR_ENABLED", True):
        return "TWISTED_REACTOR_ENABLED is off: the guard pins addresses in Twisted's resolver"
    handlers = settings.getwithbase("DOWNLOAD_HANDLERS")
    for scheme in ("http", "https"):
        handler = handlers.get(scheme)
        if handler is None:
            continue
        path = _path(handler)
        if path not in GUARDED_HANDLERS:
            return (
                f"DOWNLOAD_HANDLERS[{scheme!r}] is {path}: only Scrapy's HTTP/1.1 handler "
                "connects through the guard's resolver"
            )
        inner = settings.get("HOST_INTERVAL_HANDLER") or HTTP11_HANDLER
        if path == HOST_TURN_HANDLER and _path(inner) != HTTP11_HANDLER:
            return (
                f"HOST_INTERVAL_HANDLER is {_path(inner)}: only Scrapy's HTTP/1.1 handler "
                "connects through the guard's resolver"
            )
    return None


def request_kind(url: str, meta: dict[str, Any]) -> str:
    if meta.get("robots_fetch") or url.partition("?")[0].endswith("/robots.txt"):
        return "robots.txt"
    if meta.get("attempt") is not None:
        return "sitemap"
    if meta.get("page_fetch"):
        return "page"
    return "request"


class SSRFGuardMiddleware:
    """Downloader middleware: every request checked before any connection."""

    def __init__(self, crawler: Crawler, resolver: GuardedResolver | None = None):
        settings = crawler.settings
        if not settings.getbool("SSRF_GUARD_ENABLED"):
            raise NotConfigured
        self.crawler = crawler
        self.stats = crawler.stats
        self.policy = guard_policy(settings)
        self.same_origin = settings.getbool("SSRF_SAME_ORIGIN")
        if resolver is None:  # (a test hands its own in, with no reactor to connect)
            if (why := unguarded_connections(settings)) is not None:
                raise ValueError(f"SSRF_GUARD_ENABLED: {why}")
            from twisted.internet import reactor

            resolver = GuardedResolver.install(reactor)
        self.resolver = resolver
        resolver.guard(self.policy, settings.getdict("SSRF_TEST_RESOLUTIONS"))
        self.summary = SSRFSummary(
            self.policy, self.same_origin, settings.getint("CRAWL_LOG_LIST_CAP", 1000)
        )
        self.summary.pins = resolver.pins
        self.summary.queries = resolver.queries
        self.run = run_of(crawler)
        # The proxy each request will go through, found as Scrapy's middleware finds it
        # (it runs after this one, at 750): a throwaway instance asked about a copy.
        self.proxies = (
            HttpProxyMiddleware(settings.get("HTTPPROXY_AUTH_ENCODING"))
            if settings.getbool("HTTPPROXY_ENABLED")
            and settings.getwithbase("DOWNLOADER_MIDDLEWARES").get(
                "scrapy.downloadermiddlewares.httpproxy.HttpProxyMiddleware", 750
            )
            is not None
            else None
        )
        self._site: str | None = None
        if self.run is not None:  # the crawl log's ssrf
            self.run.record.ssrf = self.summary
            self._site = url_origin(self.run.options.url)
        elif site := settings.get("SSRF_SITE"):
            # a spider without a discovery run (estimate) names its input here, or same
            # origin would hold nothing: its Sitemap: lines and redirects went anywhere
            self._site = url_origin(str(site))
        # Unguarded once the engine has stopped: the crawl log, written at close, reads
        # the pins; a later crawl in this process starts with none.
        crawler.signals.connect(self.engine_stopped, signal=signals.engine_stopped)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def engine_stopped(self) -> None:
        self.resolver.unguard()

    async def process_request(self, request: Request) -> Response | None:
        refused, name = self.check(request)
        if refused is None and name is not None:
            refused = await self._resolved(name)
        if refused is None and (proxy := self.proxy_of(request)) is not None:
            refused = await self._check_proxy(proxy)
        if refused is not None:
            self._refuse(request, refused)
        return None

    async def _resolved(self, name: str) -> Refused | None:
        """The guard's refusal of the address ``name`` resolves to, or None (allowed, or
        the lookup failed: the connection's own lookup says so)."""
        try:
            await maybe_deferred_to_future(self.resolver.resolve(name))
        except SSRFBlocked as exc:
            return exc.refused
        except Exception:
            return None
        return None

    def proxy_of(self, request: Request) -> str | None:
        """The proxy ``request`` will be sent through, or None."""
        proxy = request.meta.get("proxy")
        if proxy or "proxy" in request.meta or self.proxies is None:
            return proxy or None
        probe = request.replace()  # meta and headers copied: the request stays as it is
        self.proxies.process_request(probe)
        return probe.meta.get("proxy") or None

    async def _check_proxy(self, proxy: str) -> Refused | None:
        """The proxy's address checked as a host's (its port is not: proxies listen on
        ports of their own), a refusal naming it as the proxy."""
        try:
            host = urlsplit(proxy if "://" in proxy else f"http://{proxy}").hostname or ""
            address = parse_host(host)
        except (HostError, ValueError) as exc:
            return Refused("invalid_host", f"the proxy {proxy}: unreadable host ({exc})")
        if address is not None:
            refused = self.policy.check_address(address)
        else:
            refused = await self._resolved(clean_host(host))
        if refused is None:
            return None
        return Refused(
            refused.rule,
            f"the proxy {proxy}: {refused.reason} (SSRF_ALLOWED_NETWORKS opens an address)",
        )

    def check(self, request: Request) -> tuple[Refused | None, str | None]:
        """What the URL alone decides (scheme, credentials, port, literal address,
        origin), and the host name still to resolve."""
        refused, name, _ = self.policy.check_url(request.url)
        site = self._site
        if refused is None and self.same_origin and site and not same_origin(request.url, site):
            origin = url_origin(request.url)
            why = f"{origin} is not the site's origin {site} (same origin only)"
            return Refused("other_origin", why), None
        return refused, name

    def _refuse(self, request: Request, refused: Refused) -> None:
        meta = request.meta
        chain = meta.get("redirect_urls") or ()
        entry = {
            "url": request.url,
            "rule": refused.rule,
            "reason": refused.reason,
            "request": request_kind(request.url, meta),
            "found_on": meta.get("found_on"),
            "redirected_from": chain[-1] if chain else None,
        }
        self.summary.add(entry)
        self.stats.inc_value("ssrf/refused")
        self.stats.inc_value(f"ssrf/refused/{refused.rule}")
        log = logger.warning if self.summary.refused.count <= _LOGGED else logger.debug
        log("refused by the SSRF guard: %s: %s", request.url, refused.reason)
        raise SSRFRefused(request.url, refused)
