"""Robots verdicts on every URL of the inventory, fetched or not (SPEC §6, issue 14 point 1):
the stage on its own (built with ``get_crawler``, fed batches) and the real spider in
sitemap, links and union modes, in-process and through the sitemap worker."""

from __future__ import annotations

import pytest

from discovery_crawler.items import UrlBatch
from discovery_crawler.middlewares.robots import RobotsSummary, policy_store
from discovery_crawler.pipelines.robots_verdict import RobotsVerdictPipeline
from discovery_crawler.robots import RobotsPolicy
from tests.conftest import run_crawler
from tests.test_robots_middleware import Server, server  # noqa: F401  (fixture)

ORIGIN = "https://example.com"
ROBOTS = b"User-agent: *\nDisallow: /internal/\nAllow: /internal/open/\n"
TEXT = {"Content-Type": "text/plain"}
XML = {"Content-Type": "application/xml"}
HTML = {"Content-Type": "text/html; charset=utf-8"}


def listed(path: str, **fields: object) -> dict[str, object]:
    return {
        "url": ORIGIN + path,
        "source": "sitemap",
        "sitemap": ORIGIN + "/sitemap.xml",
        "lastmod": None,
        "priority": None,
        "changefreq": None,
        "alternates": None,
        **fields,
    }


def stage_for(robots: bytes | None) -> RobotsVerdictPipeline:
    crawler = run_crawler(ORIGIN + "/", {"CRAWL_LOG_LIST_CAP": 10})
    stage = RobotsVerdictPipeline.from_crawler(crawler)
    stage.record.site_origin = ORIGIN
    store = policy_store(crawler)
    stage.record.robots_summary = RobotsSummary(store, 10)
    if robots is not None:
        store.put(ORIGIN, RobotsPolicy.from_text(robots, url=ORIGIN + "/robots.txt"))
    return stage


def test_stage_flags_disallowed_records_with_rule_and_group():
    stage = stage_for(ROBOTS)
    batch = UrlBatch("sitemap", ORIGIN + "/sitemap.xml")
    batch.records = [listed("/a/"), listed("/internal/x/"), listed("/internal/open/y/")]
    batch.worked = (["h"] * 3, ["t"] * 3, ["s"] * 3)
    stage.process_item(batch)
    flagged = [r for r in batch.records if r.get("flags")]
    assert [r["url"] for r in flagged] == [ORIGIN + "/internal/x/"]
    assert flagged[0]["flags"] == ["robots_disallowed"]
    assert flagged[0]["robots_rule"] == "Disallow: /internal/"
    assert flagged[0]["robots_group"] == "*"
    assert "robots_rule" not in batch.records[0] and "robots_rule" not in batch.records[2]
    assert batch.worked is None  # the worker's lines know nothing of the new fields
    assert stage.record.counts["robots_disallowed"] == 1
    assert stage.stats.get_value("discovery/urls/robots_disallowed") == 1
    listed_entry = stage.record.robots_summary.disallowed.items[0]
    assert listed_entry["url"] == ORIGIN + "/internal/x/"
    assert listed_entry["found_on"] == ORIGIN + "/sitemap.xml"
    assert listed_entry["fetched"] is False


def test_stage_keeps_other_flags_and_lists_a_refused_fetch_once():
    """A record the link crawl already flagged (its request was refused, and listed, by the
    middleware) gets the rule and group, and is not listed a second time."""
    stage = stage_for(ROBOTS)
    batch = UrlBatch("link", ORIGIN + "/")
    batch.records = [
        listed("/internal/a.pdf", flags=["requires_auth"]),
        listed("/internal/b/", flags=["robots_disallowed"]),
    ]
    stage.process_item(batch)
    assert batch.records[0]["flags"] == ["requires_auth", "robots_disallowed"]
    assert batch.records[1]["flags"] == ["robots_disallowed"]
    assert batch.records[1]["robots_rule"] == "Disallow: /internal/"
    assert stage.record.robots_summary.disallowed.count == 1
    assert stage.record.counts["robots_disallowed"] == 2


@pytest.mark.parametrize(
    "robots", [None, b"User-agent: *\nAllow: /\n", b"User-agent: x\nDisallow: /"]
)
def test_stage_without_a_policy_or_a_rule_changes_nothing(robots):
    stage = stage_for(robots)
    batch = UrlBatch("sitemap", ORIGIN + "/sitemap.xml")
    batch.records = [listed("/internal/x/")]
    batch.worked = (["h"], ["t"], ["s"])
    stage.process_item(batch)
    assert "flags" not in batch.records[0] and batch.worked is not None


def test_the_group_named_for_our_token_decides():
    stage = stage_for(
        b"User-agent: *\nDisallow: /all/\n\nUser-agent: discovery-crawler\nDisallow: /ours/\n"
    )
    batch = UrlBatch("sitemap", ORIGIN + "/sitemap.xml")
    batch.records = [listed("/all/a/"), listed("/ours/b/")]
    stage.process_item(batch)
    assert "flags" not in batch.records[0]
    assert batch.records[1]["robots_group"] == "discovery-crawler"
    assert batch.records[1]["robots_rule"] == "Disallow: /ours/"


# -- the real spider ------------------------------------------------------------------------


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
