"""``RobotsPolicyMiddleware`` end to end: a real loopback server that logs every request,
and a tiny spider (``tests/fixtures/robots/robots_spider.py``) run as ``scrapy runspider``."""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

SPIDER = Path(__file__).parent.parent / "fixtures" / "robots" / "robots_spider.py"
PAGE = (200, b"<html><body>page</body></html>", {"Content-Type": "text/html"}, 0.0)


class Server:
    """Answers each path from ``routes`` (status, body, headers, delay); pages otherwise.
    Logs every path requested."""

    def __init__(self, routes: dict[str, tuple[int, bytes, dict[str, str], float]]):
        self.routes = routes
        self.log: list[str] = []
        self.arrivals: list[tuple[float, str]] = []  # (monotonic time, path)
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                server.log.append(self.path)
                server.arrivals.append((time.monotonic(), self.path))
                status, body, headers, delay = server.routes.get(self.path, PAGE)
                if delay:
                    time.sleep(delay)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                # The client may stop reading early (ROBOTS_MAX_BYTES).
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def count(self, path: str) -> int:
        return self.log.count(path)


@pytest.fixture
def server() -> Iterator[Any]:
    servers: list[Server] = []

    def start(routes: dict[str, tuple[int, bytes, dict[str, str], float]]) -> Server:
        servers.append(Server(routes))
        return servers[-1]

    yield start
    for s in servers:
        s.httpd.shutdown()
        s.httpd.server_close()


def crawl(tmp_path: Path, urls: list[str], *args: str, **settings: Any) -> dict[str, Any]:
    result = tmp_path / "result.json"
    cmd = [sys.executable, "-m", "scrapy", "runspider", str(SPIDER)]
    cmd += ["-a", "urls=" + ",".join(urls), "-a", f"result={result}", *args]
    for name, value in settings.items():
        cmd += ["-s", f"{name}={value}"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert result.exists(), proc.stderr[-4000:]
    data = json.loads(result.read_text(encoding="utf-8"))
    data["log"] = proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr[-4000:]
    return data


ROBOTS = (
    b"User-agent: *\nDisallow: /private/\nCrawl-delay: 2\n\n"
    b"User-agent: discovery-crawler\nDisallow: /private/\nDisallow: /secret\nCrawl-delay: 4\n"
)


def test_disallowed_url_is_not_fetched_and_is_listed_with_its_rule(server, tmp_path):
    site = server({"/robots.txt": (200, ROBOTS, {}, 0.0)})
    urls = [site.origin + p for p in ("/a", "/private/x", "/secret-plans", "/b")]
    data = crawl(tmp_path, urls)
    assert "/private/x" not in site.log and "/secret-plans" not in site.log
    assert {"/a", "/b"} <= set(site.log)
    assert data["refused"] == [
        {"url": site.origin + "/private/x", "rule": "Disallow: /private/"},
        {"url": site.origin + "/secret-plans", "rule": "Disallow: /secret"},
    ]
    assert data["stats"]["robots/disallowed"] == 2
    listed = data["summary"]["disallowed"]
    assert listed["count"] == 2
    assert {(i["url"], i["rule"], i["found_on"]) for i in listed["items"]} == {
        (site.origin + "/private/x", "Disallow: /private/", "seed-1"),
        (site.origin + "/secret-plans", "Disallow: /secret", "seed-2"),
    }
    assert data["record_summary"] == data["summary"]  # the spider's record has it too
    policy = data["summary"]["policies"][site.origin]
    assert policy["group"] == "discovery-crawler" and policy["crawl_delay"] == 4.0
    assert policy["rules"] == ["Disallow: /private/", "Disallow: /secret"]


def test_robots_txt_fetched_once_for_many_concurrent_requests(server, tmp_path):
    site = server({"/robots.txt": (200, ROBOTS, {}, 0.5)})  # slow: requests pile up
    urls = [f"{site.origin}/p{i}" for i in range(40)]
    data = crawl(tmp_path, urls, "-a", "robots_first=1", CONCURRENT_REQUESTS=16)
    assert site.count("/robots.txt") == 1
    assert data["stats"]["robots/fetched"] == 1
    assert len(data["fetched"]) == 40
    # The spider's own robots.txt request was answered from the same fetch.
    assert data["robots_responses"] == [
        {
            "url": site.origin + "/robots.txt",
            "status": 200,
            "bytes": len(ROBOTS),
            "outcome": "parsed",
        }
    ]


def test_robots_500_blocks_every_page_and_says_fail_closed(server, tmp_path):
    site = server({"/robots.txt": (500, b"oops", {}, 0.0)})
    urls = [f"{site.origin}/p{i}" for i in range(5)]
    data = crawl(tmp_path, urls)
    assert site.log == ["/robots.txt"]  # no page was requested
    assert data["fetched"] == []
    assert {r["rule"] for r in data["refused"]} == {"fail closed: robots.txt answered 500"}
    stats = data["stats"]
    assert stats["robots/fail_closed"] == 1 and stats["robots/status_500"] == 1
    assert stats["robots/disallowed"] == 5
    policy = data["summary"]["policies"][site.origin]
    assert policy["outcome"] == "fail_closed" and "disallow all" in policy["reason"]
    assert "fail closed" in data["log"]


def test_robots_404_allows_all(server, tmp_path):
    site = server({"/robots.txt": (404, b"not found", {}, 0.0)})
    data = crawl(tmp_path, [site.origin + "/private/x"])
    assert "/private/x" in site.log
    assert data["stats"]["robots/allow_all"] == 1 and data["stats"]["robots/status_404"] == 1


def test_robots_timeout_fails_closed(server, tmp_path):
    site = server({"/robots.txt": (200, ROBOTS, {}, 3.0)})
    data = crawl(tmp_path, [site.origin + "/a"], DOWNLOAD_TIMEOUT=1)
    assert "/a" not in site.log
    policy = data["summary"]["policies"][site.origin]
    assert policy["outcome"] == "fail_closed" and policy["error"].startswith("timeout")
    assert data["refused"][0]["rule"].startswith("fail closed: robots.txt timeout")


def test_redirects_are_followed_and_recorded(server, tmp_path):
    site = server(
        {
            "/robots.txt": (301, b"", {"Location": "/r1"}, 0.0),
            "/r1": (302, b"", {"Location": "/r2"}, 0.0),
            "/r2": (200, b"User-agent: *\nDisallow: /x\n", {}, 0.0),
        }
    )
    data = crawl(tmp_path, [site.origin + "/x/1", site.origin + "/y"])
    policy = data["summary"]["policies"][site.origin]
    assert policy["redirects"] == 2 and policy["final_url"] == site.origin + "/r2"
    assert data["refused"] == [{"url": site.origin + "/x/1", "rule": "Disallow: /x"}]
    assert "/x/1" not in site.log and "/y" in site.log


def test_more_than_five_redirects_count_as_unavailable(server, tmp_path):
    routes = {"/robots.txt": (301, b"", {"Location": "/r1"}, 0.0)}
    for i in range(1, 8):
        routes[f"/r{i}"] = (301, b"", {"Location": f"/r{i + 1}"}, 0.0)
    site = server(routes)
    data = crawl(tmp_path, [site.origin + "/a"])
    policy = data["summary"]["policies"][site.origin]
    assert policy["outcome"] == "allow_all" and policy["redirects"] == 5
    assert site.count("/r6") == 0 and "/a" in site.log


def test_reading_stops_at_robots_max_bytes(server, tmp_path):
    body = b"User-agent: *\nDisallow: /first/\n" + b"Disallow: /filler/xxxxxxxxxx\n" * 200_000
    site = server({"/robots.txt": (200, body, {}, 0.0)})
    data = crawl(tmp_path, [site.origin + "/first/a", site.origin + "/b"], ROBOTS_MAX_BYTES=65536)
    policy = data["summary"]["policies"][site.origin]
    assert policy["truncated"] is True and policy["parsed_bytes"] <= 65536
    assert policy["bytes"] < len(body)  # the download stopped early
    assert data["stats"]["robots/truncated"] == 1
    assert data["refused"] == [{"url": site.origin + "/first/a", "rule": "Disallow: /first/"}]
