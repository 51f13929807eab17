"""``middlewares/ssrf.py``: the guard's decisions, its records, and the resolver that
resolves each name once and pins the checked address. No DNS and no packet: the test
resolver (``SSRF_TEST_RESOLUTIONS``) or a fake backend answers every lookup."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.settings import Settings
from twisted.internet import defer

from discovery_crawler.extensions.run import run_of
from discovery_crawler.middlewares.ssrf import (
    GuardedResolver,
    SSRFBlocked,
    SSRFGuardMiddleware,
    SSRFRefused,
    unguarded_connections,
)
from discovery_crawler.urls.addresses import AddressPolicy
from tests.conftest import run_crawler
from tests.urls.test_addresses import HOSTILE


class Backend:
    """The resolver the guard wraps: counts what it is asked, answers from a table."""

    def __init__(self, answers: dict[str, str] | None = None):
        self.answers = answers or {}
        self.asked: list[str] = []

    def getHostByName(self, name: str, timeout: Any = ()) -> defer.Deferred[str]:
        self.asked.append(name)
        return defer.succeed(self.answers[name])


def guard(
    url: str = "https://example.com/", backend: Backend | None = None, **settings: Any
) -> tuple[SSRFGuardMiddleware, Backend]:
    backend = backend or Backend()
    crawler = run_crawler(url, settings={"SSRF_GUARD_ENABLED": True, **settings})
    return SSRFGuardMiddleware(crawler, resolver=GuardedResolver(backend)), backend


def ask(mw: SSRFGuardMiddleware, url: str, **meta: Any) -> Exception | None:
    try:
        asyncio.run(mw.process_request(Request(url, meta=meta)))
    except SSRFRefused as exc:
        return exc
    return None


def test_off_unless_enabled():
    with pytest.raises(NotConfigured):
        SSRFGuardMiddleware(run_crawler(), resolver=GuardedResolver(Backend()))


def requestable(url: str) -> bool:
    try:
        Request(url)
    except ValueError:
        return False
    return True


# Scrapy makes no Request of some (javascript:, data:, [::zz]): nothing to guard there.
REQUESTS = [(url, rule) for url, rule in HOSTILE if requestable(url)]


@pytest.mark.parametrize(("url", "rule"), REQUESTS, ids=[u for u, _ in REQUESTS])
def test_the_hostile_matrix_is_refused_before_any_lookup(url, rule):
    mw, backend = guard()
    refused = ask(mw, url, page_fetch=True, found_on="https://example.com/")
    assert isinstance(refused, SSRFRefused) and refused.rule == rule
    assert backend.asked == [] and mw.resolver.queries == {}  # no lookup, no connection
    [entry] = mw.summary.refused.items
    assert entry["url"] == Request(url).url and entry["rule"] == rule
    assert entry["request"] == "page" and entry["found_on"] == "https://example.com/"
    assert str(refused).startswith("refused by the SSRF guard: ")


@pytest.mark.parametrize(
    ("answer", "rule"),
    [
        ("127.0.0.1", "loopback"),
        ("10.1.2.3", "private"),
        ("100.100.100.200", "cgnat"),
        ("169.254.169.254", "link_local"),
        ("0.0.0.0", "unspecified"),
        ("192.0.2.10", "documentation"),
        ("::ffff:192.168.0.1", "private"),
        ("fd00::1", "ula"),
    ],
)
def test_a_name_resolving_to_a_non_public_address_is_refused(answer, rule):
    mw, _ = guard(SSRF_TEST_RESOLUTIONS={"internal.example": [answer]})
    refused = ask(mw, "https://internal.example/")
    assert isinstance(refused, SSRFRefused) and refused.rule == rule
    assert f"internal.example resolves to {answer}" in refused.reason or rule == "private"
    assert mw.resolver.queries == {"internal.example": 1}
    # the connection, should one ask, is refused by the resolver too
    failure = []
    mw.resolver.getHostByName("internal.example").addErrback(failure.append)
    assert failure and failure[0].check(SSRFBlocked)
    assert mw.resolver.queries == {"internal.example": 1}  # the refusal is remembered


def test_the_checked_address_is_pinned_no_rebinding():
    """A name that answers a public (here: allow-listed) address first and a private one
    second: the connection gets the first, the one that was checked; one lookup."""
    mw, _ = guard(
        SSRF_TEST_RESOLUTIONS={"rebind.example": ["127.0.0.1", "10.0.0.1"]},
        SSRF_ALLOWED_NETWORKS=["127.0.0.1/32"],
    )
    assert ask(mw, "https://rebind.example/") is None
    got: list[str] = []
    for _ in range(3):  # the connection's lookups, and a second request's
        mw.resolver.getHostByName("rebind.example").addCallback(got.append)
    assert ask(mw, "https://rebind.example/other") is None
    assert got == ["127.0.0.1"] * 3
    assert mw.resolver.queries == {"rebind.example": 1}
    assert mw.summary.as_dict()["resolved"] == {"rebind.example": "127.0.0.1"}


def test_without_pinning_the_second_answer_would_be_refused():
    """The same table asked twice without the pin: the second answer is refused — what
    the pin prevents the connection from ever seeing."""
    resolver = GuardedResolver(Backend())
    policy = AddressPolicy(networks=(__import__("ipaddress").ip_network("127.0.0.1/32"),))
    resolver.guard(policy, {"rebind.example": ["127.0.0.1", "10.0.0.1"]})
    first: list[str] = []
    resolver.resolve("rebind.example").addCallback(first.append)
    resolver.pins.clear()  # what a resolver without pins does
    second: list[Any] = []
    resolver.resolve("rebind.example").addErrback(second.append)
    assert first == ["127.0.0.1"]
    assert second[0].value.refused.rule == "private"


def test_concurrent_requests_for_a_name_share_one_lookup():
    pending: defer.Deferred[str] = defer.Deferred()

    class Slow(Backend):
        def getHostByName(self, name: str, timeout: Any = ()) -> defer.Deferred[str]:
            self.asked.append(name)
            return pending

    backend = Slow()
    resolver = GuardedResolver(backend)
    resolver.guard(AddressPolicy())
    got: list[str] = []
    for _ in range(3):
        resolver.resolve("example.com").addCallback(got.append)
    pending.callback("93.184.215.14")
    assert got == ["93.184.215.14"] * 3 and backend.asked == ["example.com"]


def test_a_dns_failure_is_left_to_the_connection_and_not_pinned():
    mw, _ = guard(SSRF_TEST_RESOLUTIONS={"other.example": ["8.8.8.8"]})
    assert ask(mw, "https://missing.example/") is None  # the connection's lookup fails
    assert "missing.example" not in mw.resolver.pins and mw.summary.refused.count == 0


def test_without_a_guard_the_resolver_is_the_one_it_wraps():
    backend = Backend({"localhost": "127.0.0.1"})
    resolver = GuardedResolver(backend)
    got: list[str] = []
    resolver.getHostByName("localhost").addCallback(got.append)
    assert got == ["127.0.0.1"] and backend.asked == ["localhost"]
    resolver.guard(AddressPolicy())
    resolver.unguard()
    resolver.getHostByName("localhost").addCallback(got.append)
    assert got == ["127.0.0.1"] * 2


def test_same_origin_refuses_a_redirect_to_another_origin():
    mw, _ = guard(
        "https://example.com/",
        SSRF_SAME_ORIGIN=True,
        SSRF_TEST_RESOLUTIONS={"example.com": ["93.184.215.14"], "cdn.example": ["8.8.8.8"]},
    )
    assert ask(mw, "https://example.com/sitemap.xml") is None
    refused = ask(
        mw, "https://cdn.example/sitemap.xml", redirect_urls=["https://example.com/sitemap.xml"]
    )
    assert refused.rule == "other_origin"
    assert "cdn.example" not in mw.resolver.queries  # never even resolved
    [entry] = mw.summary.refused.items
    assert entry["redirected_from"] == "https://example.com/sitemap.xml"
    assert ask(mw, "http://example.com/").rule == "other_origin"  # scheme is origin too
    assert ask(mw, "https://example.com:8443/").rule == "port"  # the port rule says it first


def test_the_run_record_and_the_summary_carry_the_refusals():
    mw, _ = guard(SSRF_ALLOWED_PORTS=[80, 443, 8080])
    for url, _ in REQUESTS[:8]:
        ask(mw, url)
    record = run_of(mw.crawler).record
    assert record.ssrf is mw.summary
    logged = record.as_dict()["ssrf"]
    assert logged["allowed_ports"] == [80, 443, 8080] and logged["refused"]["count"] == 8
    assert logged["rules"] == {"scheme": 5, "credentials": 3}
    lines = mw.summary.lines()
    assert (
        lines[0]
        == "refused by the SSRF guard: file:///etc/passwd: scheme file: only http and https"
    )
    assert lines[-1] == (
        "refused by the SSRF guard: 3 more "
        "(5 scheme, 3 credentials in all; see ssrf.refused in the crawl log)"
    )
    assert len(lines) == 6 and mw.crawler.stats.get_value("ssrf/refused/scheme") == 5
    assert len(REQUESTS) >= 50


def test_the_summary_says_a_reason_once_with_its_count():
    """A host refused for one reason is one line, however many of its URLs were asked."""
    mw, _ = guard(SSRF_ALLOWED_PORTS=[80, 443, 8080])
    for path in ("robots.txt", "sitemap.xml", "a"):
        ask(mw, f"http://10.0.0.7:8080/{path}")
    assert mw.summary.lines() == [
        "refused by the SSRF guard: http://10.0.0.7:8080/robots.txt and 2 more request(s): "
        "10.0.0.7 is a private address"
    ]


def test_a_bad_allow_list_is_said_in_one_line():
    with pytest.raises(ValueError, match=r"SSRF_ALLOWED_NETWORKS=.*does not appear"):
        guard(SSRF_ALLOWED_NETWORKS=["not-a-network"])
    with pytest.raises(ValueError, match=r"SSRF_ALLOWED_PORTS=.*port numbers expected"):
        guard(SSRF_ALLOWED_PORTS=["80", "http"])


def test_the_guard_refuses_to_run_where_connections_would_bypass_it():
    """Only Scrapy's HTTP/1.1 handler connects through the reactor's resolver: another
    handler (Scrapy 2.19's aiohttp one, a browser's) or no reactor would bypass the pins."""
    assert unguarded_connections(Settings()) is None
    aiohttp = "scrapy.core.downloader.handlers._aiohttp.AiohttpDownloadHandler"
    other = Settings({"DOWNLOAD_HANDLERS": {"https": aiohttp}})
    assert unguarded_connections(other) == (
        f"DOWNLOAD_HANDLERS['https'] is {aiohttp}: only Scrapy's HTTP/1.1 handler connects "
        "through the guard's resolver"
    )
    # The project's handler waits for the host's turn, then connects through its inner one
    turns = "discovery_crawler.handlers.HostTurnHandler"
    assert unguarded_connections(Settings({"DOWNLOAD_HANDLERS": {"https": turns}})) is None
    wrapped = Settings({"DOWNLOAD_HANDLERS": {"https": turns}, "HOST_INTERVAL_HANDLER": aiohttp})
    assert unguarded_connections(wrapped) == (
        f"HOST_INTERVAL_HANDLER is {aiohttp}: only Scrapy's HTTP/1.1 handler connects "
        "through the guard's resolver"
    )
    reactorless = Settings({"TWISTED_REACTOR_ENABLED": False})
    assert "TWISTED_REACTOR_ENABLED is off" in unguarded_connections(reactorless)
    with pytest.raises(ValueError, match="SSRF_GUARD_ENABLED: TWISTED_REACTOR_ENABLED is off"):
        SSRFGuardMiddleware.from_crawler(run_crawler(settings={"SSRF_GUARD_ENABLED": True}))


def test_a_spider_without_a_run_holds_same_origin_to_its_ssrf_site():
    """The estimate spider has no discovery run to name the site: without ``SSRF_SITE``
    same origin held nothing there, and a robots.txt ``Sitemap:`` line or a redirect on
    another host was asked in profile service."""
    from scrapy.utils.test import get_crawler

    settings = {"SSRF_GUARD_ENABLED": True, "SSRF_SAME_ORIGIN": True}
    crawler = get_crawler(settings_dict={**settings, "SSRF_SITE": "https://example.com/x"})
    backend = Backend({"example.com": "93.184.215.14", "other.example": "93.184.215.15"})
    mw = SSRFGuardMiddleware(crawler, resolver=GuardedResolver(backend))
    assert mw.run is None
    refused = ask(mw, "https://other.example/sitemap.xml")
    assert isinstance(refused, SSRFRefused) and refused.rule == "other_origin"
    assert "is not the site's origin https://example.com" in refused.reason
    assert backend.asked == []  # refused before any lookup
    assert ask(mw, "https://example.com/sitemap.xml") is None


PROXY_WORDS = "(SSRF_ALLOWED_NETWORKS opens an address)"


def test_a_proxy_on_a_private_address_is_refused_and_named_as_the_proxy():
    """meta["proxy"] at 10.0.0.1: the site is public (allow-listed here), the proxy is
    not — refused before any connection, said as the proxy, not as "DNS lookup failed"."""
    mw, backend = guard()
    refused = ask(mw, "http://93.184.215.14/", proxy="http://10.0.0.1:3128")
    assert isinstance(refused, SSRFRefused) and refused.rule == "private"
    assert (
        refused.reason
        == f"the proxy http://10.0.0.1:3128: 10.0.0.1 is a private address {PROXY_WORDS}"
    )
    assert "DNS" not in str(refused) and backend.asked == []
    assert mw.summary.refused.items[0]["reason"] == refused.reason


def test_a_proxy_name_resolving_to_a_private_address_is_refused_as_the_proxy():
    mw, _ = guard(SSRF_TEST_RESOLUTIONS={"proxy.corp": ["192.168.1.20"]})
    refused = ask(mw, "http://93.184.215.14/", proxy="http://proxy.corp:8080")
    assert isinstance(refused, SSRFRefused) and refused.rule == "private"
    assert refused.reason.startswith("the proxy http://proxy.corp:8080: proxy.corp resolves to ")
    assert mw.resolver.queries == {"proxy.corp": 1}


def test_the_environment_proxy_is_checked_as_scrapy_would_use_it(monkeypatch):
    """http_proxy from the environment, read as Scrapy's HttpProxyMiddleware reads it
    (no_proxy included); an allow-listed proxy passes; meta proxy None means none."""
    monkeypatch.setenv("http_proxy", "http://10.0.0.1:3128")
    monkeypatch.setenv("no_proxy", "bypass.example")
    mw, _ = guard(SSRF_TEST_RESOLUTIONS={"bypass.example": ["93.184.215.14"]})
    refused = ask(mw, "http://93.184.215.14/")
    assert isinstance(refused, SSRFRefused)
    assert refused.reason.startswith("the proxy http://10.0.0.1:3128: 10.0.0.1 is a private")
    assert ask(mw, "http://bypass.example/") is None  # no_proxy: sent directly
    assert ask(mw, "http://93.184.215.14/", proxy=None) is None  # no proxy for this one
    opened, _ = guard(SSRF_ALLOWED_NETWORKS=["10.0.0.0/8"])
    assert ask(opened, "http://93.184.215.14/") is None
    off, _ = guard(HTTPPROXY_ENABLED=False)
    assert ask(off, "http://93.184.215.14/") is None  # Scrapy will send it directly
