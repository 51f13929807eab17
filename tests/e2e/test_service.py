"""Profile ``service`` end to end (issue 17, the seed "AI Page Discovery"): work done in
bounded chunks (``MAX_CHUNK_PAGES``) — a 300-page site run to completion one chunk per
invocation gives the inventory of one uninterrupted run with no page fetched twice, each
chunk exiting 6 (``more_to_do``) with ``preview.json`` at status 0, the last one 0 with
status 1 — a sitemap given as input read without robots.txt or any listed page, the
sitemap limits (20 documents, 1,000 URLs), and the pacing: ≥ 1 s between requests, a
longer Crawl-delay respected.

Every command is built by ``service_command``: a setting all service runs on loopback
need (an allow-list, say) goes there, once."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from discovery_crawler.outcomes import EXIT_CODES
from discovery_crawler.site_server import SiteServer
from tests.conftest import ROOT, free_port, ssrf_allow

MORE_TO_DO = EXIT_CODES["more_to_do"]
# What one chunked run and one uninterrupted run must agree on, per URL.
SAME = ("source", "sources", "flags", "slug", "kind", "status", "score", "depth", "title")
PREVIEW_KEYS = {"status", "pages", "groups", "warnings", "truncated", "discovered", "updated_at"}


def service_command(url: str, out: Path, *extra: str, interval: float | None = 0) -> list[str]:
    """``scrapy crawl discover`` with profile ``service`` into ``out`` (feed
    ``out/inventory.jsonl``); ``interval``: HOST_INTERVAL (None: the profile's)."""
    cmd = [sys.executable, "-m", "scrapy", "crawl", "discover", "-a", f"url={url}"]
    cmd += ["-a", "profile=service", "-a", f"out={out}", "-O", str(out / "inventory.jsonl")]
    cmd += ["-s", "PROGRESS_INTERVAL=0", "-s", "LOG_LEVEL=INFO"]
    if interval is not None:
        cmd += ["-s", f"HOST_INTERVAL={interval}"]
    for name, value in ssrf_allow(url).items():  # the guard opens the test's server only
        cmd += ["-s", f"{name}={value}"]
    return cmd + list(extra)


def run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    return result


def feed(out: Path) -> dict[str, dict[str, Any]]:
    lines = (out / "inventory.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert len({r["url"] for r in records}) == len(records)  # no line twice
    return {r["url"]: r for r in records}


def preview(out: Path) -> dict[str, Any]:
    return json.loads((out / "preview.json").read_text(encoding="utf-8"))


def crawl_log_runs(out: Path) -> list[dict[str, Any]]:
    return json.loads((out / "_crawl-log.json").read_text(encoding="utf-8"))["runs"]


def tree_site(root: Path, pages: int, fan: int = 7, sections: int = 5) -> Path:
    """Page ``i`` links its ``fan`` children ``fan*i+1 …`` and the home page: 300 pages are
    depth ≤ 3 (1 + 7 + 49 + 243), inside service's default max_depth; five sections."""
    for i in range(pages):
        kids = [fan * i + k for k in range(1, fan + 1) if fan * i + k < pages]
        links = "".join(f'<a href="/s{j % sections}/p{j}/">page {j}</a>' for j in kids)
        folder = root if i == 0 else root / f"s{i % sections}" / f"p{i}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "index.html").write_text(
            f"<html><head><title>Page {i}</title></head><body>{links}"
            '<a href="/">home</a></body></html>'
        )
    (root / "robots.txt").write_text("User-agent: *\nAllow: /\n")
    return root


def test_a_300_page_site_in_chunks_gives_the_inventory_of_one_run(serve, tmp_path):
    """The profile's chunks of 10 requests: 31 invocations of ~0.6–1.4 s (Scrapy's start-up
    and the replay), 22–45 s. HOST_INTERVAL=0 so the test does not wait 300 s; 16 requests
    at a time, so a chunk ends with requests in flight."""
    server = serve(tree_site(tmp_path / "site", 300))
    url = server.url("/")
    whole_out = tmp_path / "whole"
    fast = ("-s", "SITEMAP_CONCURRENCY=16")  # 16 requests at a time (service: 2)
    whole = run(service_command(url, whole_out, *fast, "-s", "MAX_CHUNK_PAGES=0"))
    assert whole.returncode == 0, whole.stderr[-3000:]
    assert preview(whole_out)["status"] == 1
    expected = feed(whole_out)
    assert len(expected) == 300
    whole_requests = Counter(path for _, path, _ in server.requests)
    server.requests.clear()

    out = tmp_path / "out"
    cmd = service_command(url, out, *fast)  # MAX_CHUNK_PAGES 10; the job in <out>/_job/
    codes, previews = [], []
    for _ in range(50):
        result = run(cmd)
        codes.append(result.returncode)
        previews.append(preview(out))
        if result.returncode != MORE_TO_DO:
            break
        assert "MORE TO DO: this chunk fetched 10 of MAX_CHUNK_PAGES=10" in result.stderr
        assert (out / "_job" / "responses.journal").exists()
    assert codes[-1] == 0, result.stderr[-3000:]
    assert codes[:-1] == [MORE_TO_DO] * (len(codes) - 1)
    total = sum(whole_requests.values())  # robots.txt, 6 sitemap addresses, 300 pages
    assert len(codes) == -(-total // 10)  # every chunk but the last sent 10 requests

    # No page fetched twice, and the same requests as the uninterrupted run.
    fetched = Counter(path for _, path, _ in server.requests)
    assert max(fetched.values()) == 1, [p for p, n in fetched.items() if n > 1][:5]
    assert fetched == whole_requests

    got = feed(out)
    assert set(got) == set(expected)
    for field in SAME:
        differ = [u for u in expected if expected[u].get(field) != got[u].get(field)]
        assert not differ, (field, differ[:5])

    # preview.json: processing (0) while more to do, growing; completed (1) at the end.
    for data in previews:
        assert set(data) == PREVIEW_KEYS
    assert [p["status"] for p in previews] == [0] * (len(previews) - 1) + [1]
    counts = [len(p["pages"]) for p in previews]
    assert counts == sorted(counts) and counts[-1] == 300
    assert all(
        not p["warnings"] or "stopped before" not in " ".join(p["warnings"]) for p in previews
    )
    last, whole_preview = previews[-1], preview(whole_out)
    assert last["truncated"] is False
    assert {p["url"] for p in last["pages"]} == set(expected)
    assert last["groups"] == whole_preview["groups"]  # members sorted: the same groups
    sections = {g["label"]: g for g in last["groups"]}
    assert set(sections) == {f"/s{k}/" for k in range(5)}
    assert sum(len(g["members"]) for g in last["groups"]) == 299  # all but the root
    assert {g["confidence"] for g in last["groups"]} == {"high"}

    runs = crawl_log_runs(out)
    assert [r["status"] for r in runs] == ["more_to_do"] * (len(codes) - 1) + ["completed"]
    assert all(r["chunk"]["fetched"] <= 10 for r in runs)
    assert runs[-1]["job"]["jobdir"] == str(out / "_job")
    assert not (out / "_job" / "responses.journal").exists()  # a finished job frees it
    assert (out / "state.json").exists()  # written once, by the run that completed


def sitemap_site(root: Path, origin: str, children: int, per_child: int) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for c in range(children):
        locs = "".join(f"<url><loc>{origin}/c{c}/p{i}/</loc></url>" for i in range(per_child))
        (root / f"sm-{c}.xml").write_text(
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'
        )
    index = "".join(f"<sitemap><loc>{origin}/sm-{c}.xml</loc></sitemap>" for c in range(children))
    (root / "sitemap_index.xml").write_text(
        f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{index}</sitemapindex>'
    )
    (root / "robots.txt").write_text("User-agent: *\nDisallow: /\n")


def test_a_sitemap_input_is_read_without_robots_txt_or_its_pages(serve, tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    server = serve(root)
    sitemap_site(root, server.origin, 3, 40)
    out = tmp_path / "out"
    result = run(service_command(server.url("/sitemap_index.xml"), out))
    assert result.returncode == 0, result.stderr[-3000:]
    paths = sorted(path for _, path, _ in server.requests)
    assert paths == ["/sitemap_index.xml", "/sm-0.xml", "/sm-1.xml", "/sm-2.xml"]
    assert len(feed(out)) == 120
    data = preview(out)
    assert data["status"] == 1 and len(data["pages"]) == 120
    assert [len(g["members"]) for g in data["groups"]] == [40, 40, 40]


def test_the_sitemap_limits_hold_over_chunks(serve, tmp_path):
    """25 urlsets of 60 URLs behind an index: 20 documents read at most (the index and 19
    urlsets), 1,000 URLs kept at most; in chunks of 10 requests (an explicit JOBDIR)."""
    root = tmp_path / "site"
    root.mkdir()
    server = serve(root)
    sitemap_site(root, server.origin, 25, 60)
    out, job = tmp_path / "out", tmp_path / "job"
    cmd = service_command(server.url("/sitemap_index.xml"), out, "-s", f"JOBDIR={job}")
    codes = []
    for _ in range(10):
        result = run(cmd)
        codes.append(result.returncode)
        if result.returncode != MORE_TO_DO:
            break
    # 20 documents in chunks of 10: two invocations, the second stopped by the limit (no
    # request was left over, so it is no chunk with more to do).
    assert codes == [MORE_TO_DO, EXIT_CODES["bounded"]], result.stderr[-3000:]
    fetched = Counter(path for _, path, _ in server.requests)
    assert sum(fetched.values()) == 20 and max(fetched.values()) == 1
    assert "/robots.txt" not in fetched
    assert len(feed(out)) == 1_000
    limits = {lim["limit"] for lim in crawl_log_runs(out)[-1]["discovery"]["limits"]}
    assert {"SITEMAP_MAX_DOCUMENTS", "SITEMAP_MAX_URLS"} <= limits
    assert preview(out)["status"] == 1 and not (out / "_job").exists()


def small_site(root: Path, robots: str) -> Path:
    for i in range(3):
        folder = root if i == 0 else root / f"p{i}"
        folder.mkdir(parents=True, exist_ok=True)
        links = '<a href="/p1/">1</a><a href="/p2/">2</a>' if i == 0 else ""
        (folder / "index.html").write_text(f"<html><body>{links}</body></html>")
    (root / "robots.txt").write_text(robots)
    return root


def gaps(server: Any) -> list[float]:
    times = sorted(t for t, _, _ in server.requests)
    return [b - a for a, b in itertools.pairwise(times)]


def test_the_service_profile_waits_a_second_between_requests(serve, tmp_path):
    server = serve(small_site(tmp_path / "site", "User-agent: *\nAllow: /\n"))
    started = time.monotonic()
    result = run(
        service_command(server.url("/"), tmp_path / "out", "-a", "mode=links", interval=None)
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(server.requests) == 4  # robots.txt and 3 pages
    assert min(gaps(server)) >= 0.95, gaps(server)
    assert time.monotonic() - started < 30


def test_a_longer_crawl_delay_is_respected(serve, tmp_path):
    server = serve(small_site(tmp_path / "site", "User-agent: *\nCrawl-delay: 2\nAllow: /\n"))
    result = run(
        service_command(server.url("/"), tmp_path / "out", "-a", "mode=links", interval=None)
    )
    assert result.returncode == 0, result.stderr[-3000:]
    pages = gaps(server)[1:]  # after robots.txt, which told the delay
    assert len(pages) == 2 and min(pages) >= 1.95, gaps(server)


def test_budgets_over_the_profile_caps_are_refused_in_one_line(tmp_path):
    for argument, line in (
        ("max_pages=1001", "argument max_pages: profile service allows at most 1000, got 1001"),
        ("max_depth=6", "argument max_depth: profile service allows at most 5, got 6"),
    ):
        url = f"http://127.0.0.1:{free_port()}/"  # never fetched: refused before the crawl
        result = run(service_command(url, tmp_path / "out", "-a", argument))
        assert result.returncode == 2
        assert result.stderr.strip().splitlines() == [f"error: {line}"]


class RobotsDown(SiteServer):
    """A ``SiteServer`` whose robots.txt answers 503."""

    def _handler_class(self):
        base = super()._handler_class()

        class Handler(base):
            def do_GET(self):
                if self.path == "/robots.txt":
                    self._send(503, b"down", "text/plain")
                    return
                super().do_GET()

        return Handler


def test_robots_txt_unreadable_fails_closed(tmp_path):
    """robots.txt answering 503 (after its retries): no page of the origin is fetched, and
    the job fails (exit 1, preview status 2) in one line: its inventory is unknown."""
    with RobotsDown(small_site(tmp_path / "site", "")) as server:
        out = tmp_path / "out"
        result = run(service_command(server.url("/"), out, "-s", "RETRY_TIMES=0"))
        paths = {path for _, path, _ in server.requests}
    assert paths == {"/robots.txt"}, paths
    assert result.returncode == EXIT_CODES["failed"], result.stderr[-3000:]
    [failed] = [x.strip() for x in result.stderr.splitlines() if "FAILED:" in x]
    assert failed == (
        f"FAILED: robots.txt of {server.url('/').rstrip('/')} could not be read (robots.txt "
        "answered 503): fail closed (RFC 9309 §2.3.1.4), nothing of the site was fetched"
    )
    assert preview(out)["status"] == 2
    [policy] = crawl_log_runs(out)[-1]["discovery"]["robots_policy"]["policies"].values()
    assert policy["outcome"] == "fail_closed"
    home = feed(out)[server.url("/")]
    assert home["status"] is None and home["flags"] == ["robots_disallowed"]


def test_a_link_crawl_records_1000_urls_at_most(serve, tmp_path):
    """A home page of 1,000 links, ten of them pages of 1,000 more: 1,000 URLs recorded
    (LINKS_MAX_URLS), the 4,001 others seen and counted, the limit bound (exit 5)."""
    root = tmp_path / "site"
    hub = "".join(f'<a href="/a/{i}/">{i}</a>' for i in range(1_000))
    root.mkdir()
    (root / "index.html").write_text(f"<html><body>{hub}</body></html>")
    for i in range(10):
        folder = root / "a" / str(i)
        folder.mkdir(parents=True)
        links = "".join(f'<a href="/a/{i}/{j}/">{j}</a>' for j in range(1_000))
        (folder / "index.html").write_text(f"<html><body>{links}</body></html>")
    server = serve(root)
    out = tmp_path / "out"
    cmd = service_command(server.url("/"), out, "-a", "mode=links", "-a", "max_pages=5")
    result = run([*cmd, "-s", "MAX_CHUNK_PAGES=0"])
    assert result.returncode == EXIT_CODES["bounded"], result.stderr[-3000:]
    assert len(feed(out)) == 1_000
    limits = crawl_log_runs(out)[-1]["discovery"]["limits"]
    assert {"limit": "LINKS_MAX_URLS", "value": 1_000, "kept": 1_000, "seen": 5_001} in limits
