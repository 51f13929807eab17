"""The SSRF guard end to end (issue 17, point 1): ``scrapy crawl`` in profile ``service``
against loopback servers. Without the allow-list a loopback site is refused before any
connection (the server is asked nothing); with it the crawl works, a name is resolved
once and connected at the address that was checked; other origins — a robots.txt
``Sitemap:`` line, an index child, a redirect, the seed's redirect — are skipped or
refused and recorded. Names are answered by the test resolver (``SSRF_TEST_RESOLUTIONS``):
no DNS, no packet anywhere but 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import free_port, run_discover, ssrf_allow
from tests.e2e.test_links_bad_input import HTML, page, redirect
from tests.e2e.test_robots_middleware import Server

XML = {"Content-Type": "application/xml"}
TEXT = {"Content-Type": "text/plain"}
# One invocation per test (chunks are tests/e2e/test_service.py's).
SERVICE = ("-a", "profile=service", "-s", "MAX_CHUNK_PAGES=0")


def xml(body: str) -> tuple[int, bytes, dict[str, str], float]:
    return 200, body.encode(), XML, 0.0


def urlset(*locs: str) -> tuple[int, bytes, dict[str, str], float]:
    entries = "".join(f"<url><loc>{loc}</loc></url>" for loc in locs)
    return xml(f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>')


def index(*locs: str) -> tuple[int, bytes, dict[str, str], float]:
    entries = "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs)
    return xml(
        f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</sitemapindex>'
    )


@pytest.fixture
def server() -> Iterator[Any]:
    """``server(routes)``: a loopback server answering each path from its routes."""
    servers: list[Server] = []

    def start(routes: dict[str, Any]) -> Server:
        servers.append(Server(routes))
        return servers[-1]

    yield start
    for running in servers:
        running.httpd.shutdown()
        running.httpd.server_close()


def no_traceback(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr[-3000:]


@pytest.mark.parametrize(
    ("allow_port", "rule", "why"),
    [(True, "loopback", "127.0.0.1 is loopback"), (False, "port", "is not allowed")],
    ids=["loopback", "port"],
)
def test_service_refuses_a_loopback_site_before_any_connection(
    server, tmp_path, allow_port, rule, why
):
    site = server({"/": page(["/a"], "Home")})
    settings = {"SSRF_ALLOWED_PORTS": ssrf_allow(site.origin)["SSRF_ALLOWED_PORTS"]}
    result = run_discover(
        site.origin + "/", tmp_path, *SERVICE, settings=settings if allow_port else None
    )
    assert result.returncode == 1, result.stderr[-3000:]
    no_traceback(result.stderr)
    assert site.log == []  # refused before any connection
    line = f"FAILED: refused by the SSRF guard: {site.origin}/robots.txt: "
    [failed] = [x.strip() for x in result.stderr.splitlines() if x.strip().startswith(line)]
    assert why in failed
    ssrf = result.run["ssrf"]
    assert ssrf["enabled"] and ssrf["same_origin"] and ssrf["rules"] == {rule: 7}
    assert {e["request"] for e in ssrf["refused"]["items"]} == {"robots.txt", "sitemap"}
    assert result.run["status"] == "failed"


def test_service_with_the_allow_list_connects_to_the_address_it_checked(server, tmp_path):
    """DNS rebinding: site.test answers 127.0.0.1 (allow-listed: the test's "public"
    server) first, 10.0.0.1 second. Resolved once, pinned: every request of the crawl
    went to the loopback server, the name was looked up once."""
    site = server({"/": page(["/a", "/b"], "Home"), "/b": page(["/c"], "B")})
    port = site.origin.rpartition(":")[2]
    settings = {
        **ssrf_allow(site.origin),
        "SSRF_TEST_RESOLUTIONS": json.dumps({"site.test": ["127.0.0.1", "10.0.0.1"]}),
    }
    result = run_discover(f"http://site.test:{port}/", tmp_path, *SERVICE, settings=settings)
    assert result.returncode == 0, result.stderr[-3000:]
    assert sorted(r["url"].rpartition(port)[2] for r in result.records) == ["/", "/a", "/b", "/c"]
    assert all(r["status"] == 200 for r in result.records)
    assert {"/", "/a", "/b", "/c", "/robots.txt"} <= set(site.log)
    ssrf = result.run["ssrf"]
    assert ssrf["dns_queries"] == {"site.test": 1}
    assert ssrf["resolved"] == {"site.test": "127.0.0.1"}
    assert ssrf["refused"]["count"] == 0
    assert "refused by the SSRF guard" not in result.stderr


@pytest.mark.parametrize("given", ["homepage", "index"])
def test_service_fetches_nothing_on_another_origin(server, tmp_path, given):
    """Same origin only: the robots.txt Sitemap: line and the index child on the other
    origin are skipped (recorded, never asked), the sitemap redirected there is refused
    by the guard; the other server is asked nothing. A sitemap index given as input has
    its foreign children skipped before the site is known."""
    other = server({})
    routes: dict[str, Any] = {"/": page(["/a"], "Home")}
    site = server(routes)
    a, b = site.origin, other.origin
    routes["/robots.txt"] = (
        200,
        f"Sitemap: {b}/sitemap.xml\nSitemap: {a}/index.xml\n".encode(),
        TEXT,
        0.0,
    )
    routes["/index.xml"] = index(f"{b}/child.xml", f"{a}/moved.xml", f"{a}/pages.xml")
    # Scrapy's MetaRefreshMiddleware follows a refresh on a sitemap request (a status
    # redirect is not followed there): the new request passes the guard again.
    refresh = f'<html><head><meta http-equiv="refresh" content="0;url={b}/moved.xml"></head></html>'
    routes["/moved.xml"] = (200, refresh.encode(), HTML, 0.0)
    routes["/pages.xml"] = urlset(f"{a}/", f"{a}/a", f"{a}/b")
    url = site.origin + ("/" if given == "homepage" else "/index.xml")
    result = run_discover(url, tmp_path, *SERVICE, settings=ssrf_allow(a, b))
    assert result.returncode == 0, result.stderr[-3000:]
    no_traceback(result.stderr)
    assert other.log == []
    assert {r["url"] for r in result.records} == {f"{a}/", f"{a}/a", f"{a}/b"}
    discovery = result.run["discovery"]
    attempts = {x["url"]: x for x in discovery["sitemap_attempts"]}
    skipped = [f"{b}/child.xml"] + ([f"{b}/sitemap.xml"] if given == "homepage" else [])
    for foreign in skipped:
        assert attempts[foreign]["error"].startswith(f"on another origin ({b}); same origin only")
    assert {s["url"] for s in discovery["sitemaps_skipped"]["items"]} == set(skipped)
    assert {s["reason"] for s in discovery["sitemaps_skipped"]["items"]} == {"other_origin"}
    # the skipped were never even asked; the refresh's target was, and refused
    [refused] = result.run["ssrf"]["refused"]["items"]
    assert refused["url"] == f"{b}/moved.xml" and refused["rule"] == "other_origin"
    assert refused["redirected_from"] == f"{a}/moved.xml" and refused["request"] == "sitemap"
    assert attempts[f"{a}/moved.xml"]["error"] == (
        f"refused by the SSRF guard: {b} is not the site's origin {a} (same origin only)"
    )
    assert f"refused by the SSRF guard: {b}/moved.xml: {b} is not the site's origin" in (
        result.stderr
    )
    assert "sitemaps on another origin, not fetched (same origin only)" in result.stderr


def test_service_refuses_a_robots_txt_redirect_to_another_origin(server, tmp_path):
    """robots.txt redirects to another host: that hop is refused (the site does not move
    there, as it does in other profiles), robots.txt fails closed, the run says why."""
    other = server({})
    site = server(
        {"/": page(["/a"], "Home"), "/robots.txt": redirect(other.origin + "/robots.txt")}
    )
    result = run_discover(
        site.origin + "/", tmp_path, *SERVICE, settings=ssrf_allow(site.origin, other.origin)
    )
    no_traceback(result.stderr)
    assert other.log == []
    assert result.run["discovery"]["site"] == site.origin
    refused = result.run["ssrf"]["refused"]["items"][0]
    assert refused["url"] == other.origin + "/robots.txt" and refused["rule"] == "other_origin"
    assert refused["redirected_from"] == site.origin + "/robots.txt"
    assert f"refused by the SSRF guard: {other.origin}/robots.txt" in result.stderr
    assert result.returncode == 1


def test_service_does_not_follow_the_seed_to_another_origin(server, tmp_path):
    """The seed redirects to another host: the site stays where it was given (today's
    other profiles move it), and the target is refused and recorded, in the feed too."""
    other = server({"/": page(["/x"], "Elsewhere")})
    site = server({"/": redirect(other.origin + "/")})
    result = run_discover(
        site.origin + "/",
        tmp_path,
        *SERVICE,
        "-a",
        "mode=links",
        settings=ssrf_allow(site.origin, other.origin),
    )
    assert other.log == []
    no_traceback(result.stderr)
    assert result.run["discovery"]["site"] == site.origin
    [seed] = result.records  # the target is no page of the site
    assert seed["url"] == site.origin + "/" and seed["redirected_to"] == other.origin + "/"
    assert seed["flags"] == ["ssrf_refused"] and seed["status"] == 302
    assert seed["refusal"]["class"] == "ssrf" and seed["refusal"]["rule"] == "other_origin"
    assert result.run["discovery"]["crawl"]["not_fetched"] == {"ssrf_refused": 1}
    [refused] = result.run["ssrf"]["refused"]["items"]
    assert refused["url"] == other.origin + "/" and refused["redirected_from"] == seed["url"]
    assert f"refused by the SSRF guard: {other.origin}/: {other.origin} is not" in result.stderr


def test_a_wrong_allow_list_is_one_line_before_anything_runs(tmp_path):
    url = f"http://127.0.0.1:{free_port()}/"
    settings = {"SSRF_ALLOWED_NETWORKS": "10.0.0.0/8,nonsense"}
    result = run_discover(url, tmp_path, *SERVICE, settings=settings)
    assert result.returncode == 2
    assert (
        result.stderr.strip()
        .splitlines()[-1]
        .startswith("error: SSRF_ALLOWED_NETWORKS=['10.0.0.0/8', 'nonsense']: ")
    )
    no_traceback(result.stderr)


def test_a_download_handler_past_the_resolver_is_one_line(tmp_path):
    aiohttp = "scrapy.core.downloader.handlers._aiohttp.AiohttpDownloadHandler"
    url = f"http://127.0.0.1:{free_port()}/"
    settings = {"DOWNLOAD_HANDLERS": json.dumps({"http": aiohttp})}
    result = run_discover(url, tmp_path, *SERVICE, settings=settings)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: SSRF_GUARD_ENABLED: DOWNLOAD_HANDLERS['http'] is {aiohttp}: only Scrapy's "
        "HTTP/1.1 handler connects through the guard's resolver"
    )
    no_traceback(result.stderr)


def test_rendering_is_a_bad_argument_under_the_guard(tmp_path):
    url = f"http://127.0.0.1:{free_port()}/"  # refused as an argument: nothing is asked
    result = run_discover(url, tmp_path, *SERVICE, "-a", "render=always")
    assert result.returncode == 2
    assert "render=always is not available: the SSRF guard is on" in result.stderr
    no_traceback(result.stderr)


def test_service_estimate_asks_nothing_on_another_origin(server, tmp_path):
    """The estimate spider (no discovery run) in service: a robots.txt ``Sitemap:`` line
    on another origin is refused by the guard, named in estimate.json; the other server
    is asked nothing (it was: its robots.txt and the sitemap, before ``SSRF_SITE``)."""
    other = server({"/s.xml": urlset("http://x.test/")})
    site = server({"/": page([], "Home")})
    site.routes["/robots.txt"] = (200, f"Sitemap: {other.origin}/s.xml\n".encode(), TEXT, 0.0)
    result = run_discover(
        site.origin + "/",
        tmp_path,
        *SERVICE,
        spider="estimate",
        settings=ssrf_allow(site.origin, other.origin),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    no_traceback(result.stderr)
    assert other.log == []
    estimate = json.loads((result.out / "estimate.json").read_text(encoding="utf-8"))
    [attempt] = [a for a in estimate["attempts"] if a["url"] == f"{other.origin}/s.xml"]
    assert (
        "refused by the SSRF guard" in attempt["error"] and "same origin only" in (attempt["error"])
    )


def test_service_verify_flags_a_listed_page_redirected_to_another_origin(server, tmp_path):
    """``-a verify=1``: a listed page redirects to another origin; the hop is refused and
    the page's feed record says so (flag ``ssrf_refused``, the guard's rule), as the link
    crawl's do — it used to say only ``status: 301`` and ``live: false``."""
    other = server({"/": page([], "Elsewhere")})
    routes: dict[str, Any] = {"/": page([], "Home"), "/moved": redirect(other.origin + "/")}
    site = server(routes)
    a = site.origin
    routes["/robots.txt"] = (200, f"Sitemap: {a}/pages.xml\n".encode(), TEXT, 0.0)
    routes["/pages.xml"] = urlset(f"{a}/", f"{a}/moved")
    result = run_discover(
        a + "/", tmp_path, *SERVICE, "-a", "verify=1", settings=ssrf_allow(a, other.origin)
    )
    assert result.returncode == 0, result.stderr[-3000:]
    no_traceback(result.stderr)
    assert other.log == []
    moved = next(r for r in result.records if r["url"] == f"{a}/moved")
    assert moved["flags"] == ["ssrf_refused"] and moved["live"] is False
    assert moved["refusal"]["class"] == "ssrf" and moved["refusal"]["rule"] == "other_origin"
    assert moved["refusal"]["url"] == other.origin + "/"
    [refused] = result.run["ssrf"]["refused"]["items"]
    assert refused["url"] == other.origin + "/" and refused["rule"] == "other_origin"


def test_estimate_asks_a_listed_sitemap_once_whatever_scrapy_makes_of_its_url(server, tmp_path):
    """A robots.txt line whose URL Scrapy normalizes (``a b`` → ``a%20b``, as ``%25`` in a
    zone id or ``<`` in a data: URL under the guard): the attempt recorded the normalized
    URL, never the listed one, and the estimate asked it again forever."""
    site = server({"/": page([], "Home")})
    line = f"Sitemap: {site.origin}/a b.xml\n"
    site.routes["/robots.txt"] = (200, line.encode(), TEXT, 0.0)
    result = run_discover(site.origin + "/", tmp_path, spider="estimate", timeout=60)
    assert result.returncode == 0, result.stderr[-3000:]
    assert site.log.count("/a%20b.xml") == 1


def test_a_proxy_refused_by_the_guard_is_named_as_the_proxy(server, tmp_path):
    """http_proxy points at 10.0.0.1 (private, not allow-listed): every request would go
    there, so none is sent — the run fails naming the proxy, not "DNS lookup failed"."""
    site = server({"/": page(["/a"], "Home")})
    result = run_discover(
        site.origin + "/",
        tmp_path,
        *SERVICE,
        settings=ssrf_allow(site.origin),
        env={"http_proxy": "http://10.0.0.1:3128", "no_proxy": ""},
    )
    assert result.returncode == 1, result.stderr[-3000:]
    no_traceback(result.stderr)
    assert site.log == []
    proxy = "the proxy http://10.0.0.1:3128: 10.0.0.1 is a private address"
    assert f"FAILED: refused by the SSRF guard: {site.origin}/robots.txt: {proxy}" in (
        result.stderr
    )
    assert "DNS lookup failed" not in result.stderr
    assert result.run["ssrf"]["rules"]["private"] >= 1
