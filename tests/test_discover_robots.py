"""``discover`` under the robots policy (SPEC §6): a robots.txt that fails closes the site and
says so in the summary and the crawl log; a Disallow rule keeps a sitemap unfetched and names
the rule; a sitemap given as input is read without robots.txt (SPEC §4)."""

from __future__ import annotations

import itertools

from tests.test_robots_middleware import Server, server  # noqa: F401  (fixture)

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
    assert result.records == []


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
    assert "Disallowed by robots.txt (1)" in result.stderr


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
