"""A loopback site whose sitemaps list pages that answer every way ``verify`` tells apart.

``/robots.txt`` advertises ``/sitemap_index.xml`` (two child sitemaps; the second repeats
``/live/``) and disallows ``/private/``. The listed pages: live ones (and an hreflang
alternate), 404 and 410, a 301 to another page, a 302, a chain of two hops, a redirect to a
404, a redirect loop, a redirect into ``/private/``, a slash-only redirect, 401 and 403
walls, a login redirect pointing back, a robots-disallowed page, a 500, a page that answers
after the client gave up, a page with a ``<meta http-equiv=refresh>``, a PDF, and pages
whose server mishandles HEAD (405, 501, a 403 to HEAD only, a connection dropped on HEAD)
while GET serves them. Every request is logged as (method, path, status).
"""

from __future__ import annotations

import http.server
import threading
import time

HTML = {"Content-Type": "text/html; charset=utf-8"}
PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"


def page(title: str, head: str = "") -> bytes:
    return (
        f"<!doctype html><html><head><title>{title}</title>{head}</head><body><h1>{title}</h1>"
        f"<p>A page of the verify fixture site with enough words to read as a page.</p>"
        '<a href="/">Home</a></body></html>'
    ).encode()


# path -> what the sitemap expects verify to say about it: (verdict, detail)
EXPECTED: dict[str, tuple[str, str]] = {
    "/": ("live", "page"),
    "/live/": ("live", "page"),
    "/en/live/": ("live", "page"),  # an hreflang alternate of /live/
    "/b-only/": ("live", "page"),
    "/head-405/": ("live", "page"),
    "/head-501/": ("live", "page"),
    "/head-403/": ("live", "page"),
    "/head-drop/": ("live", "page"),
    "/refresh/": ("live", "page"),  # a HEAD cannot see a meta refresh
    "/moved/": ("redirected", "live"),
    "/found/": ("redirected", "live"),
    "/chain/": ("redirected", "live"),
    "/slash": ("redirected", "live"),
    "/to-404/": ("redirected", "dead"),
    "/loop-a/": ("redirected", "loop"),
    "/to-private/": ("redirected", "robots"),
    "/gone/": ("dead", "404"),
    "/removed/": ("dead", "410"),
    "/members/": ("refused", "wall"),
    "/forbidden/": ("refused", "wall"),
    "/members-only/": ("refused", "login"),
    "/private/page/": ("refused", "robots"),
    "/error/": ("failed", "server_error"),
    "/slow/": ("failed", "timeout"),
    "/files/report.pdf": ("unchecked", "document"),
}
SITEMAP_A = [p for p in EXPECTED if p not in ("/en/live/", "/b-only/")]
# The second sitemap lists /en/live/ as a <loc> too: whichever comes first, the record
# ends as the listing, with its fetch kept.
SITEMAP_B = ["/live/", "/b-only/", "/en/live/"]


class VerifySite:
    """The site on 127.0.0.1 at a free port; ``requests`` lists (method, path, status)."""

    def __init__(self, slow_seconds: float = 4.0, listed: list[str] | None = None):
        """``listed``: the paths the first sitemap lists instead of ``SITEMAP_A`` (any
        ``/p-N/`` answers 200); the second then lists nothing."""
        self.slow_seconds = slow_seconds
        self.listed = listed
        self.requests: list[tuple[str, str, int]] = []
        self.times: list[tuple[float, str, str]] = []  # (monotonic, method, path)
        self._lock = threading.Lock()
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def url(self, path: str = "/") -> str:
        return self.origin + path

    def start(self) -> VerifySite:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def asked(self, path: str) -> list[str]:
        """The methods ``path`` was requested with, in order of arrival."""
        with self._lock:
            return [m for _, m, p in self.times if p == path]

    def _urlset(self, paths: list[str]) -> bytes:
        urls = []
        for path in paths:
            alternate = ""
            if path == "/live/":
                alternate = (
                    f'<xhtml:link rel="alternate" hreflang="en" href="{self.url("/en/live/")}"/>'
                )
            urls.append(f"<url><loc>{self.url(path)}</loc>{alternate}</url>")
        return (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
            'xmlns:xhtml="http://www.w3.org/1999/xhtml">' + "".join(urls) + "</urlset>"
        ).encode()

    def route(self, method: str, path: str) -> tuple[int, dict[str, str], bytes] | None:
        """(status, headers, body), or None to drop the connection without an answer."""
        xml = {"Content-Type": "application/xml"}
        if path == "/robots.txt":
            text = "User-agent: *\nDisallow: /private/\nSitemap: /sitemap_index.xml\n"
            return 200, {"Content-Type": "text/plain"}, text.encode()
        if path == "/sitemap_index.xml":
            children = "".join(
                f"<sitemap><loc>{self.url(c)}</loc></sitemap>"
                for c in ("/sitemap-a.xml", "/sitemap-b.xml")
            )
            body = (
                '<?xml version="1.0" encoding="UTF-8"?>\n'
                '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                f"{children}</sitemapindex>"
            )
            return 200, xml, body.encode()
        if path == "/sitemap-a.xml":
            return 200, xml, self._urlset(SITEMAP_A if self.listed is None else self.listed)
        if path == "/sitemap-b.xml":
            return 200, xml, self._urlset(SITEMAP_B if self.listed is None else [])
        redirects = {
            "/moved/": (301, "/live-target/"),
            "/found/": (302, "/live/"),
            "/chain/": (301, "/chain-2/"),
            "/chain-2/": (307, "/live-target/"),
            "/slash": (301, "/slash/"),
            "/to-404/": (301, "/nowhere/"),
            "/loop-a/": (301, "/loop-b/"),
            "/loop-b/": (301, "/loop-a/"),
            "/to-private/": (301, "/private/target/"),
            "/members-only/": (302, "/login?next=%2Fmembers-only%2F"),
        }
        if path in redirects:
            status, to = redirects[path]
            return status, {"Location": to, "Content-Type": "text/plain"}, b"moved"
        if path in ("/", "/live/", "/en/live/", "/b-only/", "/live-target/", "/slash/") or (
            path.startswith("/p-")
        ):
            return 200, HTML, page(f"Page {path}")
        if path.startswith("/login"):
            return 200, HTML, page("Sign in")
        if path == "/head-405/" and method == "HEAD":
            return 405, {"Allow": "GET", "Content-Type": "text/plain"}, b""
        if path == "/head-501/" and method == "HEAD":
            return 501, {"Content-Type": "text/plain"}, b""
        if path == "/head-403/" and method == "HEAD":
            return 403, {"Content-Type": "text/plain"}, b""
        if path == "/head-drop/" and method == "HEAD":
            return None
        if path in ("/head-405/", "/head-501/", "/head-403/", "/head-drop/"):
            return 200, HTML, page(f"GET only {path}")
        if path == "/refresh/":
            return 200, HTML, page("Moving", '<meta http-equiv="refresh" content="0; url=/live/">')
        if path == "/members/":
            return 401, {**HTML, "WWW-Authenticate": 'Basic realm="members"'}, page("Members")
        if path == "/removed/":
            return 410, HTML, page("Gone")
        if path == "/forbidden/":
            return 403, HTML, page("Forbidden")
        if path == "/error/":
            return 500, HTML, page("Internal error")
        if path == "/slow/":
            time.sleep(self.slow_seconds)
            return 200, HTML, page("Slow")
        if path == "/files/report.pdf":
            return 200, {"Content-Type": "application/pdf"}, PDF
        if path == "/private/page/":
            return 200, HTML, page("Private")
        return 404, {"Content-Type": "text/plain"}, b"not found"

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self, method: str) -> None:
                path = self.path if self.path.startswith("/login") else self.path.split("?")[0]
                with site._lock:
                    site.times.append((time.monotonic(), method, path))
                answer = site.route(method, path)
                with site._lock:
                    site.requests.append((method, path, answer[0] if answer else 0))
                if answer is None:
                    self.close_connection = True
                    return
                status, headers, body = answer
                try:
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    if method != "HEAD":
                        self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (the timeout)

            def do_GET(self) -> None:
                self._answer("GET")

            def do_HEAD(self) -> None:
                self._answer("HEAD")

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler
