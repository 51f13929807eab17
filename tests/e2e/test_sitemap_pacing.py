"""Sitemap fetches paced to the parser (``SITEMAP_FETCH_PACING``, ``extensions/throttle.py``),
seen at the server: a loopback server counts the child sitemaps it is sending at once while
the real ``discover`` spider (profile ``massive``: 8 concurrent sitemap fetches) walks an
index of gzipped urlsets. A slow server gets its 8 concurrent fetches; a fast one is asked
for fewer once documents wait for a parse slot, and nothing is lost either way."""

from __future__ import annotations

import gzip
import http.server
import re
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import run_discover


class CountingServer:
    """Serves ``root`` on 127.0.0.1 (port 0); each ``.xml.gz`` answer waits ``delay``
    seconds first. ``most`` is the largest number of them it was sending at once."""

    def __init__(self, root: Path, delay: float = 0.0):
        self.root = root
        self.delay = delay
        self.busy = 0
        self.most = 0
        self._lock = threading.Lock()
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.httpd.request_queue_size = 64
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                path = server.root / self.path.lstrip("/")
                child = self.path.endswith(".xml.gz")
                if child:
                    with server._lock:
                        server.busy += 1
                        server.most = max(server.most, server.busy)
                try:
                    if child:
                        time.sleep(server.delay)
                    body = path.read_bytes() if path.is_file() else b""
                    self.send_response(200 if path.is_file() else 404)
                    kind = "application/x-gzip" if child else "application/xml"
                    self.send_header("Content-Type", kind)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                finally:
                    if child:
                        with server._lock:
                            server.busy -= 1

            def log_message(self, *args: object) -> None:
                """Quiet."""

        return Handler


def write_tree(root: Path, server: CountingServer, children: int, per_child: int) -> int:
    """An index of ``children`` gzipped urlsets of ``per_child`` URLs each; the URL count."""
    root.mkdir(parents=True, exist_ok=True)
    index = ['<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">']
    for c in range(children):
        urls = "".join(
            f"<url><loc>{server.url(f'/s{c}/p{i}/')}</loc><lastmod>2026-01-01</lastmod></url>"
            for i in range(per_child)
        )
        text = f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'
        (root / f"child-{c:02d}.xml.gz").write_bytes(gzip.compress(text.encode(), 1))
        index.append(f"<sitemap><loc>{server.url(f'/child-{c:02d}.xml.gz')}</loc></sitemap>")
    index.append("</sitemapindex>")
    (root / "sitemap_index.xml").write_text("".join(index))
    return children * per_child


def stat(stderr: str, name: str) -> int | None:
    found = re.search(rf"'{re.escape(name)}': (\d+)", stderr)
    return int(found.group(1)) if found else None


@pytest.fixture
def counting_server(tmp_path):
    servers: list[CountingServer] = []

    def start(delay: float = 0.0) -> CountingServer:
        server = CountingServer(tmp_path / "site", delay)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def test_a_slow_server_gets_eight_concurrent_fetches(counting_server, tmp_path):
    """SPEC §1: profile massive fetches 8 child sitemaps at a time when the server is the
    slow part (documents parse faster than they arrive)."""
    server = counting_server(delay=0.6)
    expected = write_tree(server.root, server, children=16, per_child=20)
    result = run_discover(
        server.url("/sitemap_index.xml"), tmp_path, "-a", "profile=massive", timeout=120
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(result.records) == expected
    assert server.most == 8


@pytest.mark.parametrize("pacing", [True, False])
def test_a_fast_server_is_asked_for_what_the_parser_takes(counting_server, tmp_path, pacing):
    """Documents that land faster than they parse wait in memory: with pacing the walk asks
    for fewer at once (down to one) once they wait, and the inventory is the same."""
    server = counting_server()
    expected = write_tree(server.root, server, children=14, per_child=20_000)
    result = run_discover(
        server.url("/sitemap_index.xml"),
        tmp_path,
        "-a",
        "profile=massive",
        settings={"SITEMAP_FETCH_PACING": pacing},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(result.records) == expected
    assert len(set(result.urls)) == expected
    if pacing:
        assert stat(result.stderr, "throttle/sitemap_concurrency_min") == 1
        assert stat(result.stderr, "throttle/sitemap_paced")
    else:
        assert stat(result.stderr, "throttle/sitemap_concurrency_min") is None
