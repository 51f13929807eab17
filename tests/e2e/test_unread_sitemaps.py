"""A sitemap that cannot be read (README "Exit status"): the run keeps what the others list,
names the one it could not read, and ends ``incomplete`` (exit 7), never ``completed``.
The server is a loopback one whose ``broken`` paths answer 503, or that closes its port
once the index has been read (the server went down mid-walk)."""

from __future__ import annotations

import http.server
import threading
from pathlib import Path

import pytest

from tests.conftest import run_discover

SITEMAPS = "http://www.sitemaps.org/schemas/sitemap/0.9"


class SitemapServer:
    """Serves an index of ``children`` urlsets of ``per_child`` URLs on 127.0.0.1 (port 0).
    ``broken`` paths answer 503; with ``down_after_index`` the server stops listening
    once it has answered the index."""

    def __init__(
        self,
        children: int,
        per_child: int,
        broken: set[str] = frozenset(),
        down_after_index: bool = False,
    ):
        self.broken = set(broken)
        self.down_after_index = down_after_index
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.docs: dict[str, bytes] = {}
        index = [f'<sitemapindex xmlns="{SITEMAPS}">']
        for c in range(children):
            locs = "".join(
                f"<url><loc>{self.url(f'/s{c}/p{i}/')}</loc></url>" for i in range(per_child)
            )
            self.docs[f"/child-{c}.xml"] = f'<urlset xmlns="{SITEMAPS}">{locs}</urlset>'.encode()
            index.append(f"<sitemap><loc>{self.url(f'/child-{c}.xml')}</loc></sitemap>")
        index.append("</sitemapindex>")
        self.docs["/sitemap_index.xml"] = "".join(index).encode()
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = server.docs.get(self.path)
                status = 503 if self.path in server.broken else 200 if body else 404
                body = body if status == 200 else b"no"
                self.send_response(status)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                if server.down_after_index and self.path == "/sitemap_index.xml":
                    server.httpd.socket.close()  # new connections are refused from now on

            def log_message(self, *args: object) -> None:
                """Quiet."""

        return Handler


@pytest.fixture
def sitemap_server():
    servers: list[SitemapServer] = []

    def start(*args, **kwargs) -> SitemapServer:
        server = SitemapServer(*args, **kwargs)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


FAST_RETRIES = {"RETRY_BACKOFF_BASE": 0.01, "RETRY_BACKOFF_MAX": 0.02}


def test_a_sitemap_answering_503_makes_the_run_incomplete(sitemap_server, tmp_path: Path):
    server = sitemap_server(children=3, per_child=5, broken={"/child-1.xml"})
    result = run_discover(server.url("/sitemap_index.xml"), tmp_path, settings=FAST_RETRIES)
    assert result.returncode == 7, result.stderr[-3000:]
    assert result.run["status"] == "incomplete"
    assert sorted(result.urls) == sorted(
        server.url(f"/s{c}/p{i}/") for c in (0, 2) for i in range(5)
    )
    assert result.attempt("/child-1.xml")["status"] == 503
    line = next(x for x in result.stderr.splitlines() if "INCOMPLETE:" in x)
    assert f"sitemap {server.url('/child-1.xml')} could not be read (HTTP 503)" in line


def test_a_server_gone_mid_walk_makes_the_run_incomplete(sitemap_server, tmp_path: Path):
    server = sitemap_server(children=4, per_child=5, down_after_index=True)
    result = run_discover(server.url("/sitemap_index.xml"), tmp_path, settings=FAST_RETRIES)
    assert result.returncode == 7, result.stderr[-3000:]
    assert result.run["status"] == "incomplete"
    assert result.urls == []
    line = next(x for x in result.stderr.splitlines() if "INCOMPLETE:" in x)
    assert "4 sitemaps could not be read" in line and "connection refused" in line


def test_every_sitemap_read_is_completed(sitemap_server, tmp_path: Path):
    server = sitemap_server(children=2, per_child=3)
    result = run_discover(server.url("/sitemap_index.xml"), tmp_path, settings=FAST_RETRIES)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.run["status"] == "completed"
    assert len(result.urls) == 6
