"""``discover`` under the robots policy (SPEC §6): a robots.txt that fails closes the site and
says so in the summary and the crawl log; a Disallow rule keeps a sitemap unfetched and names
the rule; a sitemap given as input is read without robots.txt (SPEC §4)."""

from __future__ import annotations

import itertools

from tests.e2e.test_robots_middleware import Server, server  # noqa: F401  (fixture)

SITEMAP = (
    b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    b"<url><loc>/a/</loc></url><url><loc>/b/</loc></url></urlset>"
)
XML = {"Content-Type": "application/xml"}


def test_robots_503_fails_closed_and_says_so(server, discover):  # noqa: F811
    srv = server({"/robots.txt": (503, b"busy", {}, 0.0), "/sitemap.xml": (200, SITEMAP, XML, 0.0)})
    result = discover(srv.origin + "/")
    policy = result.discovery["robots_policy"]["policies"][srv.origin]
    assert policy["outcome"] == "fail_closed"
    assert policy["status"] == 503
    assert "FAIL CLOSED" in result.stderr
    assert srv.count("/sitemap.xml") == 0  # the conventional sitemap is not fetched
    assert "robots" in result.attempt("/sitemap.xml")["error"].lower()
    # auto mode falls back to the link crawl: its seed is listed, disallowed, not fetched
    assert [(r["url"], r["flags"]) for r in result.records] == [
        (srv.origin + "/", ["robots_disallowed"])
    ]
    assert srv.count("/") == 0


def test_disallowed_sitemap_is_listed_with_its_rule(server, discover):  # noqa: F811
    robots = b"User-agent: *\nDisallow: /private/\nSitemap: /private/map.xml\nSitemap: /ok.xml\n"
    srv = server(
        {
            "/robots.txt": (200, robots, {"Content-Type": "text/plain"}, 0.0),
            "/private/map.xml": (200, SITEMAP, XML, 0.0),
            "/ok.xml": (200, SITEMAP, XML, 0.0),
        }
    )
    result = discover(srv.origin + "/")
    assert srv.count("/private/map.xml") == 0
    assert srv.count("/robots.txt") == 1  # the spider's own fetch is the policy's
    disallowed = result.discovery["robots_policy"]["disallowed"]
    assert disallowed["count"] == 1
    assert disallowed["items"][0]["rule"] == "Disallow: /private/"
    assert sorted(result.urls) == [srv.origin + "/a/", srv.origin + "/b/"]
    assert "Disallowed by robots.txt, not fetched (1)" in result.stderr


def test_sitemap_input_reads_no_robots(server, discover):  # noqa: F811
    srv = server({"/robots.txt": (503, b"", {}, 0.0), "/map.xml": (200, SITEMAP, XML, 0.0)})
    result = discover(srv.origin + "/map.xml")
    assert srv.count("/robots.txt") == 0
    assert len(result.urls) == 2


def test_crawl_delay_spaces_requests_at_the_server(server, discover):  # noqa: F811
    """robots.txt Crawl-delay (larger than HOST_INTERVAL) reaches the throttle: the server's
    own log shows the sitemaps it advertises no closer than the delay."""
    index = (
        b'<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        + b"".join(b"<sitemap><loc>/m%d.xml</loc></sitemap>" % i for i in range(3))
        + b"</sitemapindex>"
    )
    robots = b"User-agent: *\nCrawl-delay: 0.6\nSitemap: /index.xml\n"
    routes = {
        "/robots.txt": (200, robots, {"Content-Type": "text/plain"}, 0.0),
        "/index.xml": (200, index, XML, 0.0),
    }
    routes.update({f"/m{i}.xml": (200, SITEMAP, XML, 0.0) for i in range(3)})
    srv = server(routes)
    result = discover(srv.origin + "/", settings={"HOST_INTERVAL": 0.1, "SITEMAP_CONCURRENCY": 8})
    assert result.returncode == 0, result.stderr[-2000:]
    times = [t for t, path in srv.arrivals if path.endswith(".xml")]
    assert len(times) >= 4  # the index, three children, and the conventional addresses
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert min(gaps) >= 0.6 - 0.03, gaps
    assert result.run["throttle"]["hosts"]["127.0.0.1"]["crawl_delay"] == 0.6


HTML = {"Content-Type": "text/html; charset=utf-8"}


def test_link_crawl_lists_disallowed_pages_and_login_walls(server, discover):  # noqa: F811
    """mode=links: a page robots.txt disallows is listed with the rule, never fetched; a page
    that redirects to /login?next=… back to itself is a ``login`` refusal."""
    home = b'<html><title>Home</title><a href="/private/x">x</a> <a href="/orders/">acc</a>'
    login = b"<html><title>Sign in</title><form><input name=user><input name=pw></form></html>"
    srv = server(
        {
            "/robots.txt": (200, b"User-agent: *\nDisallow: /private/\n", {}, 0.0),
            "/": (200, home, HTML, 0.0),
            "/orders/": (302, b"", {"Location": "/login?next=/orders/"}, 0.0),
            "/login?next=/orders/": (200, login, HTML, 0.0),
        }
    )
    result = discover(srv.origin + "/", "-a", "mode=links")
    assert result.returncode == 0, result.stderr[-2000:]
    assert srv.count("/private/x") == 0
    recs = {r["url"][len(srv.origin) :]: r for r in result.records}
    assert recs["/private/x"]["flags"] == ["robots_disallowed"]
    assert recs["/private/x"]["found_on"] == srv.origin + "/"
    disallowed = result.discovery["robots_policy"]["disallowed"]["items"]
    assert [(d["url"], d["rule"]) for d in disallowed] == [
        (srv.origin + "/private/x", "Disallow: /private/")
    ]
    refusals = [r["refusal"] for r in result.records if r.get("refusal")]
    assert [r["class"] for r in refusals] == ["login"], refusals
    assert result.run["refusals"]["counts"]["login"] == 1
