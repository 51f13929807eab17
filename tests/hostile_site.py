"""A loopback site of hostile inputs (issue 17 point 3), for ``tests/e2e/test_hostile_inputs.py``.

Each hostile case has its own path, beside ordinary pages and sitemaps, so one crawl can
hold several cases and still show that the good ones gave their URLs. The big bodies
(bombs of every Content-Encoding, a 50 MB one-line XML, a 1M-``<loc>`` urlset, a 10 MB
robots.txt) are made when first asked for, once per server, never committed. The network
cases write raw bytes: headers then silence (slowloris), a byte a second, a body cut short
of its Content-Length, 10,000 headers, a 1 MB header line. Every request is logged (path).

    site = HostileSite().start()
    site.url("/index-bombs.xml")  # an index: good.xml and the bombs, entities, a stall
    site.url("/")  # a page linking to the network cases, a 50-hop chain, Scrapy's samples
"""

from __future__ import annotations

import gzip
import http.server
import threading
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import brotli

try:  # Scrapy 2.19 depends on backports.zstd before Python 3.14
    from compression import zstd  # type: ignore[import-not-found]
except ImportError:
    from backports import zstd  # type: ignore[import-not-found,no-redef]

EDGECASES = Path(__file__).resolve().parent / "fixtures" / "edgecases"
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
XML = {"Content-Type": "application/xml"}
HTML = {"Content-Type": "text/html; charset=utf-8"}
BOMB_BYTES = 80 * 1024 * 1024  # inflated: past DOWNLOAD_MAXSIZE (64 MiB) and SITEMAP_MAX_BYTES

# Two indexes list the sitemap cases, each with good.xml beside them. Each case names a
# page of its own before its hostile part: what a parser reads before it refuses is kept.
BOMB_CASES = [
    "bomb-gzip.xml",  # Content-Encoding: gzip, inflating to 80 MiB
    "bomb-deflate.xml",
    "bomb-br.xml",
    "bomb-zstd.xml",
    "nested-gzip.xml.gz",  # a .gz file (an 80 MiB bomb) sent with Content-Encoding: gzip too
    "bomb.txt",  # a gzip bomb served as text/plain under a .txt name (sniffed by its magic)
    "doctype-laughs.xml",  # billion laughs
    "xxe-file.xml",  # SYSTEM "file:///etc/passwd"
    "xxe-parameter.xml",  # a parameter entity naming an external DTD on this server
    "external-dtd.xml",  # <!DOCTYPE urlset SYSTEM "http://127.0.0.1:port/evil.dtd">
    "xinclude.xml",  # <xi:include href="file:///etc/passwd">
    "stall.xml",  # headers, then nothing
    # Scrapy's compressed samples (tests/fixtures/edgecases), served as sitemaps
    "edge/truncated-crc-error.gz",
    "edge/truncated-crc-error-short.gz",
    "edge/unexpected-eof.gz",
    "edge/html-gzip.bin",
]
BIG_CASES = [
    "one-line-50mb.xml",  # 50 MB on one line: a 40 MB text node, a 1 MB <loc>, a 10 MB comment
    "million-locs.xml",  # 1,000,000 <loc> in one urlset
]
INDEXES = {"/index-bombs.xml": BOMB_CASES, "/index-big.xml": BIG_CASES}
EDGE_PAGES = [  # pages of the link crawl: Scrapy's link-extractor samples, its gzip ones
    "/edge/linkextractor.html",
    "/edge/linkextractor_latin1.html",
    "/edge/linkextractor_no_href.html",
    "/edge/linkextractor_noenc.html",
    # the gzip ones sent with Content-Encoding: gzip, named without their extension (a
    # link to a .gz is an archive, never fetched)
    "/edge-page/bomb-gzip",  # 28 kB inflating to 11.5 MB
    "/edge-page/truncated-crc-error",
    "/edge-page/unexpected-eof",
]
RAW_PAGES = ["/stall", "/trickle", "/cut-body", "/header-flood", "/header-line"]
BOMB_PAGES = ["/bomb-page-gzip", "/bomb-page-br"]  # HTML pages, Content-Encoding bombs


def urlset(locs: list[str]) -> bytes:
    body = "".join(f"<url><loc>{loc}</loc></url>" for loc in locs)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NS}>{body}</urlset>\n'.encode()


def zeros_gzip(head: bytes, size: int, tail: bytes = b"") -> bytes:
    """``head``, ``size`` spaces and ``tail``, gzipped (a bomb: ~1000× smaller)."""
    out = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b" " * (1 << 20)
    parts = [out.compress(head)]
    parts += [out.compress(chunk) for _ in range(size // len(chunk))]
    parts += [out.compress(tail), out.flush()]
    return b"".join(parts)


class HostileSite:
    """The site on 127.0.0.1 at a free port; ``log`` lists the paths asked for."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self._lock = threading.Lock()
        self._made: dict[str, tuple[int, dict[str, str], bytes]] = {}
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.raw: dict[str, Callable[[http.server.BaseHTTPRequestHandler], None]] = {
            "/stall": self._stall,
            "/stall.xml": self._stall,
            "/trickle": self._trickle,
            "/cut-body": self._cut_body,
            "/header-flood": self._header_flood,
            "/header-line": self._header_line,
        }
        self.stalled = threading.Event()  # set when the site stops: stalled answers end

    def url(self, path: str = "/") -> str:
        return self.origin + path

    def start(self) -> HostileSite:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.stalled.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def count(self, path: str) -> int:
        with self._lock:
            return self.log.count(path)

    # -- the answers ------------------------------------------------------------------
    def page(self, path: str, links: list[str] = ()) -> bytes:  # type: ignore[assignment]
        anchors = "".join(f'<a href="{h}">{h}</a>' for h in links)
        title = path.strip("/") or "home"
        return f"<html><head><title>{title}</title></head><body>{anchors}</body></html>".encode()

    def prepare(self, paths: list[str]) -> None:
        """Make these answers now, so that making them never counts against a timeout."""
        for path in paths:
            self.made(path)

    def made(self, path: str) -> tuple[int, dict[str, str], bytes]:
        """The answer of a generated path, made once (big bodies take a second or two)."""
        with self._lock:
            if path not in self._made:
                self._made[path] = self._make(path)
            return self._made[path]

    def _make(self, path: str) -> tuple[int, dict[str, str], bytes]:
        o = self.origin
        name = path.lstrip("/").partition(".")[0]  # no .xml: a page, not a sitemap
        first = urlset([f"{o}/from-{name}"])[: -len(b"</urlset>\n")]
        if path in INDEXES:
            children = ["good.xml", *INDEXES[path]]
            body = "".join(f"<sitemap><loc>{o}/{c}</loc></sitemap>" for c in children)
            return 200, XML, f"<sitemapindex {NS}>{body}</sitemapindex>".encode()
        if path == "/good.xml":
            return 200, XML, urlset([f"{o}/good-{i}" for i in range(3)])
        if path.startswith("/edge/"):
            ctype = "text/html" if path.endswith(".html") else "application/octet-stream"
            return 200, {"Content-Type": ctype}, (EDGECASES / path[6:]).read_bytes()
        if path.startswith("/edge-page/"):
            headers = {"Content-Type": "text/html", "Content-Encoding": "gzip"}
            [file] = [f for f in EDGECASES.iterdir() if f.name.partition(".")[0] == path[11:]]
            return 200, headers, file.read_bytes()
        if path == "/bomb-page-gzip":
            page = self.page(path)[: -len(b"</body></html>")]
            return 200, {**HTML, "Content-Encoding": "gzip"}, zeros_gzip(page, BOMB_BYTES)
        if path == "/bomb-page-br":
            raw = self.page(path)[: -len(b"</body></html>")] + b" " * BOMB_BYTES
            return 200, {**HTML, "Content-Encoding": "br"}, brotli.compress(raw, quality=5)
        if path == "/bomb-gzip.xml":
            return 200, {**XML, "Content-Encoding": "gzip"}, zeros_gzip(first, BOMB_BYTES)
        if path == "/bomb-deflate.xml":
            out = zlib.compressobj(9, zlib.DEFLATED, 15)
            raw = first + b" " * BOMB_BYTES
            return 200, {**XML, "Content-Encoding": "deflate"}, out.compress(raw) + out.flush()
        if path == "/bomb-br.xml":
            raw = first + b" " * BOMB_BYTES
            return 200, {**XML, "Content-Encoding": "br"}, brotli.compress(raw, quality=5)
        if path == "/bomb-zstd.xml":
            raw = first + b" " * BOMB_BYTES
            return 200, {**XML, "Content-Encoding": "zstd"}, zstd.compress(raw)
        if path == "/nested-gzip.xml.gz":
            inner = zeros_gzip(first, BOMB_BYTES)
            headers = {"Content-Type": "application/gzip", "Content-Encoding": "gzip"}
            return 200, headers, gzip.compress(inner, mtime=0)
        if path == "/bomb.txt":
            head = f"{o}/from-{name}\n".encode()
            return 200, {"Content-Type": "text/plain"}, zeros_gzip(head, BOMB_BYTES)
        if path == "/doctype-laughs.xml":
            refs = ["&lol;" * 10, *(f"&lol{i};" * 10 for i in range(1, 9))]
            entities = '<!ENTITY lol "lol">' + "".join(
                f'<!ENTITY lol{i + 1} "{ref}">' for i, ref in enumerate(refs)
            )
            body = (
                f"<?xml version='1.0'?><!DOCTYPE urlset [{entities}]><urlset {NS}>"
                f"<url><loc>{o}/from-{name}</loc></url>"
                f"<url><loc>{o}/laughs/&lol9;</loc></url></urlset>"
            )
            return 200, XML, body.encode()
        if path == "/xxe-file.xml":
            body = (
                f'<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY xxe SYSTEM '
                f'"file:///etc/passwd">]><urlset {NS}><url><loc>{o}/from-{name}</loc></url>'
                f"<url><loc>{o}/xxe/&xxe;</loc></url></urlset>"
            )
            return 200, XML, body.encode()
        if path == "/xxe-parameter.xml":
            body = (
                f'<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY % ext SYSTEM '
                f'"{o}/evil.dtd"> %ext;]><urlset {NS}><url><loc>{o}/from-{name}</loc></url>'
                f"<url><loc>{o}/param/&leak;</loc></url></urlset>"
            )
            return 200, XML, body.encode()
        if path == "/external-dtd.xml":
            body = (
                f'<?xml version="1.0"?><!DOCTYPE urlset SYSTEM "{o}/evil.dtd">'
                f"<urlset {NS}><url><loc>{o}/from-{name}</loc></url>"
                f"<url><loc>{o}/dtd/&leak;</loc></url></urlset>"
            )
            return 200, XML, body.encode()
        if path == "/evil.dtd":  # never to be asked for
            return 200, {"Content-Type": "application/xml-dtd"}, b'<!ENTITY leak "LEAKED-DTD">'
        if path == "/xinclude.xml":
            body = (
                f'<?xml version="1.0"?><urlset {NS} xmlns:xi="http://www.w3.org/2001/XInclude">'
                f"<url><loc>{o}/from-{name}</loc></url>"
                '<url><loc><xi:include href="file:///etc/passwd" parse="text"/></loc></url>'
                f'<xi:include href="{o}/evil.dtd" parse="text"/></urlset>'
            )
            return 200, XML, body.encode()
        if path == "/one-line-50mb.xml":
            # One line; a 40 MB text node (over libxml2's 10 MB without huge_tree), then
            # a page after it that must still be read.
            body = (
                f'<?xml version="1.0" encoding="UTF-8"?><urlset {NS}>'
                f"<url><loc>{o}/from-{name}</loc><changefreq>{'x' * 40_000_000}</changefreq>"
                f"</url>{''.join(f'<url><loc>{o}/line-{i}</loc></url>' for i in range(100))}"
                f"<url><loc>{o}/{'l' * 1_000_000}</loc></url>"
                f"<url><loc>{o}/after-the-line</loc></url><!-- {'y' * 10_000_000} --></urlset>"
            )
            return 200, XML, body.encode()
        if path == "/million-locs.xml":
            locs = "".join(f"<url><loc>{o}/m/{i}</loc></url>" for i in range(1_000_000))
            return 200, XML, f"<urlset {NS}>{locs}</urlset>".encode()
        if path == "/robots.txt":
            filler = b"# " + b"x" * 97 + b"\n"
            body = b"User-agent: *\nDisallow: /early\n" + filler * 100_000
            return 200, {"Content-Type": "text/plain"}, body + b"User-agent: *\nDisallow: /late\n"
        if path == "/":
            links = ["/early", "/late", "/r/0", *RAW_PAGES, *BOMB_PAGES, *EDGE_PAGES, "/good-page"]
            return 200, HTML, self.page(path, links)
        if path.startswith("/r/"):
            hop = int(path[3:])
            if hop < 50:
                return 302, {"Location": f"/r/{hop + 1}"}, b""
        return 200, HTML, self.page(path)

    def _stall(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        """Headers, a promise of 1,000 bytes, then nothing until the site stops."""
        handler.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n")
        handler.wfile.write(b"Content-Length: 1000\r\n\r\n<html>")
        handler.wfile.flush()
        self.stalled.wait(120)

    def _trickle(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        """A byte a second, for ever (until the client hangs up or the site stops)."""
        handler.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n")
        handler.wfile.write(b"Content-Length: 100000\r\n\r\n")
        handler.wfile.flush()
        for _ in range(120):
            if self.stalled.wait(1):
                return
            handler.wfile.write(b"<")
            handler.wfile.flush()

    def _cut_body(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        """Content-Length 100,000; 1,000 bytes sent; the connection closed."""
        handler.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n")
        handler.wfile.write(b"Content-Length: 100000\r\n\r\n")
        handler.wfile.write(b"<html><head><title>cut</title></head><body>" + b"x" * 956)
        handler.wfile.flush()
        handler.close_connection = True

    def _header_flood(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        """10,000 headers (300 kB of them), then a small page."""
        body = self.page("/header-flood")
        head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
        head += b"".join(b"X-Flood-%d: %s\r\n" % (i, b"v" * 16) for i in range(10_000))
        handler.wfile.write(head + b"Content-Length: %d\r\n\r\n" % len(body) + body)
        handler.wfile.flush()

    def _header_line(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        """One header line of 1 MB, then a small page."""
        body = self.page("/header-line")
        head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Huge: " + b"h" * 1_048_576
        handler.wfile.write(head + b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        handler.wfile.flush()

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                with site._lock:
                    site.log.append(path)
                try:
                    if path in site.raw:
                        site.raw[path](self)
                        self.close_connection = True
                        return
                    status, headers, body = site.made(path)
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up: a cap or a timeout

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


def main() -> None:  # pragma: no cover - a manual look: python -m tests.hostile_site
    site = HostileSite().start()
    print(site.origin, flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
