"""The crawl log's ``timeline`` and ``discovery.depths`` end to end: a link crawl of the
refusal site (a 429 with Retry-After, 404s, 403s…) whose timeline holds every request the
server saw, each refusal and each Retry-After hold; a sitemap walk whose URLs have no
click depth and known path depths; a link crawl in bounded chunks (each invocation
replays the journal before it) whose depths are those of one uninterrupted run, and whose
timelines count only what went to the network."""

from __future__ import annotations

import re
from typing import Any

import pytest

from discovery_crawler.outcomes import EXIT_CODES
from discovery_crawler.site_server import SiteServer
from tests.conftest import run_discover
from tests.e2e.test_service import tree_site
from tests.refusal_site import RefusalSite


def stat(stderr: str, name: str) -> int:
    """A counter of Scrapy's stats dump at the end of the log (0 when it is not there)."""
    found = re.findall(rf"'{re.escape(name)}': (\d+)", stderr)
    return int(found[-1]) if found else 0


def requests_total(timeline: dict[str, Any]) -> int:
    hosts = timeline["hosts"].values()
    assert all(len(h["requests"]) == len(h["refusals"]) == timeline["buckets"] for h in hosts)
    return sum(sum(h["requests"]) for h in hosts)


def assert_depths_add_up(run: dict[str, Any]) -> dict[str, Any]:
    depths = run["discovery"]["depths"]
    discovered = run["discovery"]["counts"]["discovered"]
    assert sum(depths["click"].values()) + depths["click_none"] == discovered
    assert sum(depths["path"].values()) == discovered
    return depths


@pytest.fixture
def refusing():
    site = RefusalSite(slow_seconds=0.2).start()
    yield site
    site.stop()


def test_a_link_crawl_draws_every_request_refusal_and_retry_after(refusing, tmp_path):
    # /busy answers 429 Retry-After: 120, capped to 0.3 s, retried RETRY_TIMES (5) times
    result = run_discover(
        refusing.url("/"), tmp_path, spider="links", settings={"MAX_RETRY_AFTER": 0.3}
    )
    assert result.returncode == 0, result.stderr[-3000:]
    run = result.run
    timeline = run["timeline"]
    origin = refusing.origin
    assert list(timeline["hosts"]) == [origin]
    host = timeline["hosts"][origin]
    # every request that reached the downloader, and only those, reached the server
    assert requests_total(timeline) == len(refusing.requests) == sum(host["requests"])
    assert requests_total(timeline) == stat(result.stderr, "downloader/request_count")
    assert sum(host["refusals"]) == run["refusals"]["total"] > 0
    holds = [e for e in timeline["events"] if e["kind"] == "retry_after"]
    assert len(holds) == stat(result.stderr, "throttle/retry_after") == 6
    assert {(e["host"], e["seconds"]) for e in holds} == {(origin, 0.3)}
    assert timeline["events_count"] == len(timeline["events"])
    times = [e["t"] for e in timeline["events"]]
    assert times == sorted(times) and times[-1] <= run["provenance"]["elapsed_seconds"]
    # HOST_INTERVAL 0 at first, the back-off of a failing host (0.05 s doubled) after it
    steps = host["interval"]
    assert steps and all(0 <= s <= 0.2 for _, s in steps), steps
    assert timeline["max_buckets"] == 600 and timeline["bucket_seconds"] == 1.0
    assert timeline["buckets"] <= run["provenance"]["elapsed_seconds"] + 1
    # the seed at 0 hops, every link of its page at 1
    depths = assert_depths_add_up(run)
    assert depths["click"]["0"] == 1 and depths["click_none"] == 0
    assert set(depths["click"]) == {"0", "1"}


def test_a_sitemap_walk_has_no_click_depths_and_its_path_depths(serve, tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    server: SiteServer = serve(root)
    paths = ["/", "/a/", "/b", "/a/1/", "/a/2", "/b/3/", "/a/1/x/", "/a/1/y", "/b/3/z/", "/b/3/w"]
    locs = "".join(f"<url><loc>{server.url(p)}</loc></url>" for p in paths)
    (root / "sitemap.xml").write_text(
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'
    )
    result = run_discover(server.url("/sitemap.xml"), tmp_path, "-a", "all=1")
    assert result.returncode == 0, result.stderr[-3000:]
    depths = assert_depths_add_up(result.run)
    assert depths == {"click": {}, "click_none": 10, "path": {"0": 1, "1": 2, "2": 3, "3": 4}}
    timeline = result.run["timeline"]
    assert requests_total(timeline) == stat(result.stderr, "downloader/request_count") >= 1
    assert not any(sum(h["refusals"]) for h in timeline["hosts"].values())


def test_chunks_of_a_job_give_the_depths_of_one_run_and_time_only_the_network(serve, tmp_path):
    server: SiteServer = serve(tree_site(tmp_path / "site", 24, fan=3, sections=2))
    for folder in ("whole", "chunked"):
        (tmp_path / folder).mkdir()
    whole = run_discover(server.url("/"), tmp_path / "whole", spider="links")
    assert whole.returncode == 0, whole.stderr[-3000:]
    expected = assert_depths_add_up(whole.run)
    assert expected["click"] == {"0": 1, "1": 3, "2": 9, "3": 11}
    assert expected["path"] == {"0": 1, "2": 23}

    more_to_do, out = EXIT_CODES["more_to_do"], tmp_path / "chunked" / "out"
    results = []
    for _ in range(10):  # robots.txt and 24 pages, 8 requests a chunk: 4 invocations
        result = run_discover(
            server.url("/"), tmp_path / "chunked", spider="links", out=out,
            settings={"MAX_CHUNK_PAGES": 8},
        )  # fmt: skip
        results.append(result)
        if result.returncode != more_to_do:
            break
    assert [r.returncode for r in results] == [more_to_do] * 3 + [0], results[-1].stderr[-3000:]
    runs = results[-1].crawl_log["runs"]
    assert len(runs) == 4
    assert assert_depths_add_up(runs[-1]) == expected
    for result, run in zip(results, runs, strict=True):
        # the journal's answers and the held request never reach the downloader
        stderr = result.stderr
        sent = stat(stderr, "downloader/request_count")
        replayed = stat(stderr, "job/responses_replayed")
        held = stat(stderr, "chunk/held")
        assert requests_total(run["timeline"]) == sent - replayed - held
        assert requests_total(run["timeline"]) == run["chunk"]["fetched"]
    assert replayed > 0
