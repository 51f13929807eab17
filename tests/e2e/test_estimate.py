"""The scope estimate end to end (its pure judgement: ``tests/test_estimate.py``): the
``estimate`` spider run as ``scrapy crawl estimate`` against loopback servers."""

from __future__ import annotations

import contextlib
import http.server
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, free_port

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
XHTML = 'xmlns:xhtml="http://www.w3.org/1999/xhtml"'
XML = {"Content-Type": "application/xml"}
TEXT = {"Content-Type": "text/plain"}
Route = tuple[int, bytes, dict[str, str], float]


# -- the spider -------------------------------------------------------------------------
class StatusServer:
    """Answers each path from ``routes`` (status, body, headers, delay); 404 otherwise."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.log: list[str] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                server.log.append(self.path)
                status, body, headers, delay = server.routes.get(self.path, (404, b"", {}, 0))
                if delay:
                    time.sleep(delay)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture
def server() -> Iterator[StatusServer]:
    s = StatusServer()
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()


def urlset(locs: list[str], extra: str = "") -> bytes:
    body = "".join(f"<url><loc>{loc}</loc>{extra}</url>" for loc in locs)
    return f'<?xml version="1.0"?><urlset {NS} {XHTML}>{body}</urlset>'.encode()


def index(locs: list[str]) -> bytes:
    body = "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs)
    return f'<?xml version="1.0"?><sitemapindex {NS}>{body}</sitemapindex>'.encode()


def estimate(
    url: str, tmp_path: Path, *args: str, **settings: Any
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any] | None, float]:
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "scrapy", "crawl", "estimate", "-a", f"url={url}"]
    cmd += ["-a", f"out={out}"]
    settings.setdefault("HOST_INTERVAL", 0)
    for name, value in settings.items():
        if value is not None:  # None: leave the setting to the project and profile
            cmd += ["-s", f"{name}={value}"]
    cmd += list(args)
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    wall = time.monotonic() - started
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    path = out / "estimate.json"
    data = json.loads(path.read_text()) if path.exists() else None
    return proc, data, wall


def test_flat_urlset_is_counted_exactly(server, tmp_path):
    o = server.origin
    server.routes["/robots.txt"] = (200, b"Sitemap: /pages.xml\n", TEXT, 0)
    server.routes["/pages.xml"] = (200, urlset([f"{o}/p{i}/" for i in range(37)]), XML, 0)
    proc, data, _ = estimate(o + "/", tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert data is not None
    assert data["urls"] == [37, 37] and data["exact"] is True
    assert data["sitemap"]["url"] == o + "/pages.xml" and data["sitemap"]["source"] == "robots"
    assert data["sub_sitemaps"] == 0
    assert data["transport"] == "fetch"
    assert data["duration_seconds"] is not None
    assert "URLs: 37 (exact" in proc.stdout
    assert server.log == ["/robots.txt", "/pages.xml"]  # no page fetched
    # the robots.txt it read is handed to Scrapy as bytes (a str is deprecated)
    assert "DeprecationWarning" not in proc.stderr, proc.stderr[-2000:]


def test_index_of_531_children_gives_the_range_fast_without_recursion(server, tmp_path):
    o = server.origin
    children = [f"{o}/sitemaps/part-{i}.xml.gz" for i in range(531)]
    server.routes["/sitemap_index.xml"] = (200, index(children), XML, 0)
    proc, data, wall = estimate(o + "/", tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert data is not None
    assert data["urls"] == [531_000, 26_550_000] and data["exact"] is False
    assert data["sub_sitemaps"] == 531
    assert data["sitemap"]["source"] == "conventional"
    assert server.log == ["/robots.txt", "/sitemap.xml", "/sitemap_index.xml"]
    print(f"estimate of a 531-child index: {wall:.2f} s wall, {data['elapsed_seconds']} s crawl")
    assert wall < 6, wall


def test_estimate_is_quick_at_the_default_interval(server, tmp_path):
    """At HOST_INTERVAL=1 (the default) its own three requests are paced by
    ESTIMATE_HOST_INTERVAL; the expected duration still uses the crawl's interval."""
    o = server.origin
    children = [f"{o}/sitemaps/part-{i}.xml.gz" for i in range(531)]
    server.routes["/sitemap_index.xml"] = (200, index(children), XML, 0)
    proc, data, wall = estimate(o + "/", tmp_path, HOST_INTERVAL=None)  # profile: 1.0
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert data is not None and data["sub_sitemaps"] == 531
    assert data["elapsed_seconds"] < 1.5, data["elapsed_seconds"]
    assert data["duration_basis"]["HOST_INTERVAL"] == 1.0
    # -a verify=1 would add one request per listed URL at the crawl's interval
    assert data["verify_seconds"] == [531_000.0, 26_550_000.0]
    assert "with -a verify=1: 147.5 h – 7375.0 h more" in proc.stdout
    print(f"estimate at the default interval: {wall:.2f} s wall")


def test_languages_from_hreflang_and_paths(server, tmp_path):
    o = server.origin
    alternates = (
        f'<xhtml:link rel="alternate" hreflang="de-DE" href="{o}/de-de/x/"/>'
        f'<xhtml:link rel="alternate" hreflang="x-default" href="{o}/x/"/>'
    )
    locs = [f"{o}/en/a/", f"{o}/en/b/", f"{o}/pt-br/c/", f"{o}/enterprise/"]
    server.routes["/sitemap.xml"] = (200, urlset(locs, alternates), XML, 0)
    proc, data, _ = estimate(o + "/sitemap.xml", tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert data is not None
    assert set(data["languages"]) == {"en", "de-de", "pt-br"}
    evidence = data["language_evidence"]
    assert evidence["de-de"] == {"hreflang": 4, "path": 4}
    assert evidence["en"] == {"hreflang": 0, "path": 2}
    assert data["sitemap"]["source"] == "input"


def test_robots_403_means_browser(server, tmp_path):
    o = server.origin
    server.routes["/robots.txt"] = (403, b"Forbidden", TEXT, 0)
    server.routes["/sitemap.xml"] = (200, urlset([f"{o}/a/"]), XML, 0)
    proc, data, _ = estimate(o + "/", tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert data is not None
    assert data["transport"] == "browser"
    assert data["transport_reason"] == "robots.txt answered HTTP 403"
    assert data["urls"] == [1, 1]  # 403 on robots.txt is "allow all": the sitemap was read


def test_sitemap_403_means_browser(server, tmp_path):
    o = server.origin
    server.routes["/robots.txt"] = (200, b"User-agent: *\nAllow: /\n", TEXT, 0)
    server.routes["/sitemap.xml"] = (403, b"<html>Access denied</html>", {}, 0)
    proc, data, _ = estimate(o + "/", tmp_path)
    assert data is not None, proc.stderr[-2000:]
    assert data["transport"] == "browser"
    assert data["urls"] is None and data["sitemap"] is None
    assert "no sitemap found" in proc.stdout


def test_sitemap_timeout_means_browser(server, tmp_path):
    o = server.origin
    server.routes["/robots.txt"] = (200, f"Sitemap: {o}/slow.xml\n".encode(), TEXT, 0)
    server.routes["/slow.xml"] = (200, urlset([f"{o}/a/"]), XML, 3.0)
    server.routes["/sitemap.xml"] = (200, urlset([f"{o}/a/", f"{o}/b/"]), XML, 0)
    proc, data, _ = estimate(o + "/", tmp_path, DOWNLOAD_TIMEOUT=1)
    assert data is not None, proc.stderr[-2000:]
    assert data["transport"] == "browser"
    assert data["transport_reason"] == f"sitemap {o}/slow.xml timed out"
    assert data["attempts"][0]["error"].startswith("timeout")
    assert data["urls"] == [2 + 1_000, 2 + 50_000]  # the unread advertised sitemap counts


def test_feed_item_with_O(server, tmp_path):
    o = server.origin
    server.routes["/sitemap.xml"] = (200, urlset([f"{o}/a/", f"{o}/b/"]), XML, 0)
    feed = tmp_path / "estimate.jsonl"
    proc, data, _ = estimate(o + "/", tmp_path, "-O", str(feed))
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = feed.read_text().splitlines()
    assert len(lines) == 1
    assert json.loads(lines[0])["urls"] == [2, 2] == data["urls"]  # type: ignore[index]


def test_bad_argument_is_one_line_and_exit_2(tmp_path):
    proc, data, _ = estimate("https://example.com/", tmp_path, "-a", "depth=3")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "error: argument depth: unknown argument; the estimate takes url, out, profile"
    ]
    assert data is None


def test_a_site_where_nothing_answers_is_a_failed_estimate_exit_1(tmp_path):
    """Nothing answered (a port nobody listens on): the estimate is written and says so, and
    the exit status says the run failed, as discover's does."""
    proc, data, _ = estimate(f"http://127.0.0.1:{free_port()}/", tmp_path)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert data is not None and data["transport_reason"].startswith("nothing answered")


def test_an_estimate_that_cannot_be_written_exits_4(server, tmp_path):
    """estimate.json could not be written (the out folder is a file): one line naming the
    path and the error, exit 4 (output not written), no traceback."""
    server.routes["/robots.txt"] = (200, b"User-agent: *\nAllow: /\n", TEXT, 0)
    blocker = tmp_path / "out"
    blocker.write_text("a file where the out folder should be")
    proc, _, _ = estimate(server.origin + "/", tmp_path)
    assert proc.returncode == 4, proc.stderr[-3000:]
    [line] = [x for x in proc.stderr.splitlines() if "OUTPUT FAILED" in x]
    assert str(blocker) in line
