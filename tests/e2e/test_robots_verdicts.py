"""Robots verdicts on every URL of the inventory, fetched or not (SPEC §6), end to end: the
real spider in sitemap, links and union modes, in-process and through the sitemap worker."""

from __future__ import annotations

import pytest

from tests.e2e.test_robots_middleware import Server, server  # noqa: F401  (fixture)
from tests.pipelines.test_robots_verdict import ROBOTS

TEXT = {"Content-Type": "text/plain"}


XML = {"Content-Type": "application/xml"}


HTML = {"Content-Type": "text/html; charset=utf-8"}


def _site(server, count: int = 3):  # noqa: F811
    pages = [f"/internal/p{i}/" for i in range(count)] + ["/open/", "/internal/open/ok/"]
    locs = "".join(f"<url><loc>{p}</loc></url>" for p in pages)
    sitemap = (
        f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"{locs}</urlset>"
    ).encode()
    home = b'<html><title>Home</title><a href="/internal/p0/">i</a> <a href="/open/">o</a>'
    home += b' <a href="/internal/doc.pdf">pdf</a></html>'
    routes = {
        "/robots.txt": (200, ROBOTS + b"Sitemap: /sitemap.xml\n", TEXT, 0.0),
        "/sitemap.xml": (200, sitemap, XML, 0.0),
        "/": (200, home, HTML, 0.0),
        "/open/": (200, b"<html><title>Open</title></html>", HTML, 0.0),
        "/internal/open/ok/": (200, b"<html><title>OK</title></html>", HTML, 0.0),
    }
    return server(routes)


def _by_path(result, origin):
    return {r["url"][len(origin) :]: r for r in result.records}


@pytest.mark.parametrize("worker", [False, True], ids=["in-process", "worker"])
def test_sitemap_mode_flags_listed_urls_robots_disallows(server, discover, worker):  # noqa: F811
    """mode=sitemap never fetches a page, yet the records of the URLs robots.txt disallows
    carry the flag, the rule and the group; the crawl log lists and counts them."""
    srv = _site(server)
    settings = {"SITEMAP_WORKER_MIN_BYTES": 1} if worker else {}
    result = discover(srv.origin + "/", "-a", "mode=sitemap", settings=settings)
    assert result.returncode == 0, result.stderr[-3000:]
    recs = _by_path(result, srv.origin)
    for i in range(3):
        rec = recs[f"/internal/p{i}/"]
        assert rec["flags"] == ["robots_disallowed"], rec
        assert (rec["robots_rule"], rec["robots_group"]) == ("Disallow: /internal/", "*")
    for path in ("/open/", "/internal/open/ok/"):
        assert "robots_rule" not in recs[path] and not recs[path].get("flags")
    assert srv.count("/internal/p0/") == 0
    assert result.discovery["counts"]["robots_disallowed"] == 3
    disallowed = result.discovery["robots_policy"]["disallowed"]
    assert disallowed["count"] == 3
    assert {d["url"] for d in disallowed["items"]} == {
        srv.origin + f"/internal/p{i}/" for i in range(3)
    }
    assert all(d["found_on"] == srv.origin + "/sitemap.xml" for d in disallowed["items"])
    assert "Disallowed by robots.txt, not fetched (3)" in result.stderr


@pytest.mark.parametrize("mode", ["links", "union"])
def test_link_modes_put_the_rule_on_the_record(server, discover, mode):  # noqa: F811
    """links and union: a disallowed page is never requested, and its record (like that of
    a disallowed file the crawl only records) names the rule and the group."""
    srv = _site(server)
    result = discover(srv.origin + "/", "-a", f"mode={mode}")
    assert result.returncode == 0, result.stderr[-3000:]
    recs = _by_path(result, srv.origin)
    assert srv.count("/internal/p0/") == 0
    for path in ("/internal/p0/", "/internal/doc.pdf"):
        assert "robots_disallowed" in recs[path]["flags"], recs[path]
        assert recs[path]["robots_rule"] == "Disallow: /internal/"
        assert recs[path]["robots_group"] == "*"
    assert recs["/open/"]["status"] == 200 and "robots_rule" not in recs["/open/"]
    flagged = [r for r in result.records if "robots_disallowed" in (r.get("flags") or ())]
    assert result.discovery["counts"]["robots_disallowed"] == len(flagged)
    disallowed = result.discovery["robots_policy"]["disallowed"]
    assert disallowed["count"] == len(flagged)  # each URL listed once
    if mode == "union":  # every listed /internal/ URL is flagged, fetched or not
        assert {f"/internal/p{i}/" for i in range(3)} <= {
            r["url"][len(srv.origin) :] for r in flagged
        }


def test_sitemap_input_has_no_verdict(server, discover):  # noqa: F811
    """A sitemap given as input is read without robots.txt (SPEC §4): no verdict is made."""
    srv = _site(server)
    result = discover(srv.origin + "/sitemap.xml")
    assert srv.count("/robots.txt") == 0
    assert not any(r.get("flags") for r in result.records)
    assert result.discovery["counts"]["robots_disallowed"] == 0
