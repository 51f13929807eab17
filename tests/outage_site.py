"""A generated site on 127.0.0.1 that goes down for a while mid-crawl, for the retry tests.

``pages`` pages in a tree: the home page ``/`` and ``/p/1/`` … ``/p/{pages - 1}/``; page i
links to pages ``k·i+1`` … ``k·i+k`` (``fanout`` k) and home, so a page lost in the outage
loses the pages only it links to. After ``down_after`` page answers the server goes down
for ``down_for`` seconds, then comes back on the same port:

- ``how="refuse"``: the listening socket is closed (new connections are refused) and
  requests on connections already open are dropped unanswered (reset);
- ``how="503"``: every request is answered ``503 Service Unavailable`` (no Retry-After).

``broken`` paths always answer 500; ``flaky`` paths answer 503 their first n times. Every
request that reached it is recorded: ``(monotonic time, path, status)``, status 0 for a
dropped one. ``files`` are other documents served as given (robots.txt, sitemaps: a
body, or a status that path always answers), linked from no page; an answered file
counts towards ``down_after`` as a page does, so an outage can start in the sitemap phase.

    with OutageSite(pages=2000, down_after=500, down_for=20) as site:
        ...  # crawl site.url("/")
"""

from __future__ import annotations

import http.server
import socket
import struct
import threading
import time


def page_path(i: int) -> str:
    return "/" if i == 0 else f"/p/{i}/"


class OutageSite:
    def __init__(
        self,
        pages: int = 400,
        fanout: int = 3,
        down_after: int | None = None,
        down_for: float = 0.0,
        how: str = "refuse",
        broken: tuple[str, ...] = (),
        flaky: dict[str, int] | None = None,
        files: dict[str, str | int] | None = None,
    ):
        assert how in ("refuse", "503"), how
        self.pages = pages
        self.fanout = fanout
        self.down_after = down_after
        self.down_for = down_for
        self.how = how
        self.broken = set(broken)
        self.flaky = dict(flaky or {})
        self.files = dict(files or {})
        self.requests: list[tuple[float, str, int]] = []
        self.down = False
        self.down_at: float | None = None
        self.up_at: float | None = None
        self._answered = 0
        self._lock = threading.Lock()
        self._outage: threading.Thread | None = None
        self._stopping = threading.Event()  # ends an outage early when the site stops
        self.httpd = self._bind(0)
        self.port = self.httpd.server_address[1]
        self.origin = f"http://127.0.0.1:{self.port}"

    # -- the site -----------------------------------------------------------------------
    def url(self, path: str = "/") -> str:
        return self.origin + path

    def urlset(self, paths: list[str]) -> str:
        """A sitemap (``<urlset>``) listing ``paths`` of this site."""
        locs = "".join(f"<url><loc>{self.url(p)}</loc></url>" for p in paths)
        return f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'

    def sitemap_index(self, paths: list[str]) -> str:
        """A sitemap index listing the sitemaps at ``paths`` of this site."""
        locs = "".join(f"<sitemap><loc>{self.url(p)}</loc></sitemap>" for p in paths)
        return (
            f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}'
            "</sitemapindex>"
        )

    def page_urls(self) -> set[str]:
        return {self.url(page_path(i)) for i in range(self.pages)} | {
            self.url(p) for p in (*self.broken, *self.flaky)
        }

    def body(self, path: str) -> bytes | None:
        if path == "/":
            i = 0
        elif path.startswith("/p/") and path.endswith("/") and path[3:-1].isdigit():
            i = int(path[3:-1])
            if not 0 < i < self.pages:
                return None
        elif path in self.broken or path in self.flaky:
            i = -1
        else:
            return None
        first = self.fanout * i + 1
        links = [page_path(c) for c in range(first, min(first + self.fanout, self.pages))]
        if i < 0:
            links = []
        if i == 0:
            links += sorted(self.broken) + sorted(self.flaky)
        anchors = "".join(f'<li><a href="{p}">Page {p}</a></li>' for p in links)
        return (
            f"<!doctype html><html><head><title>Page {path}</title></head><body>"
            f"<h1>Page {path}</h1><p>A page of the outage test site, with a few words so it "
            f'reads as a page.</p><ul>{anchors}</ul><a href="/">Home</a></body></html>'
        ).encode()

    # -- the outage ---------------------------------------------------------------------
    def _answered_one(self) -> None:
        """Count a page answer; the ``down_after``-th starts the outage."""
        with self._lock:
            self._answered += 1
            start = self.down_after is not None and self._answered == self.down_after
        if start:
            self._outage = threading.Thread(target=self._go_down, daemon=True)
            self._outage.start()

    def _go_down(self) -> None:
        self.down_at = time.monotonic()
        self.down = True
        if self.how == "refuse":
            self.httpd.shutdown()
            self.httpd.server_close()
        self._stopping.wait(self.down_for)
        if self.how == "refuse":
            self.httpd = self._bind(self.port)
            threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.up_at = time.monotonic()
        self.down = False

    def _bind(self, port: int) -> http.server.ThreadingHTTPServer:
        for _ in range(50):
            try:
                httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), self._handler())
            except OSError:
                if not port:
                    raise
                time.sleep(0.1)  # the same port again: another socket may still hold it
                continue
            httpd.daemon_threads = True
            return httpd
        raise RuntimeError(f"port {port} could not be bound again after the outage")

    def log(self, path: str, status: int) -> None:
        with self._lock:
            self.requests.append((time.monotonic(), path, status))

    def count(self, path: str) -> int:
        with self._lock:
            return sum(1 for _, p, _ in self.requests if p == path)

    # -- serving ------------------------------------------------------------------------
    def start(self) -> OutageSite:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._outage is not None:
            self._outage.join()
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> OutageSite:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if site.down and site.how == "refuse":
                    site.log(path, 0)
                    # a connection opened before the outage: reset it, unanswered
                    linger = struct.pack("ii", 1, 0)
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
                    self.close_connection = True
                    return
                if site.down:
                    self._send(503, b"<html><body>Down for maintenance</body></html>")
                    return
                if path in site.broken:
                    self._send(500, b"<html><body>Internal error</body></html>")
                    return
                if path in site.files:
                    found = site.files[path]
                    if isinstance(found, int):
                        self._send(found, b"<html><body>No document here</body></html>")
                        return
                    self._send(200, found.encode(), "application/xml")
                    if path != "/robots.txt":
                        site._answered_one()
                    return
                if site.flaky.get(path, 0) > 0:
                    site.flaky[path] -= 1
                    self._send(503, b"<html><body>Busy, try again</body></html>")
                    return
                body = site.body(path)
                if body is None:
                    self._send(404, b"not found")
                    return
                self._send(200, body)
                if path != "/robots.txt":
                    site._answered_one()

            def _send(
                self, status: int, body: bytes, ctype: str = "text/html; charset=utf-8"
            ) -> None:
                site.log(self.path.split("?", 1)[0], status)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler
