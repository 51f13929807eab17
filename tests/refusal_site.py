"""A loopback site whose pages refuse in every way SPEC §11 names, for the refusal tests.

Each path answers the way a real server would: a PDF with no extension in its URL, a file
sent as an attachment, 404 and 410 (their bodies look like JavaScript shells, to prove a
missing page is never rendered), 403, 429 with Retry-After, 451, a login redirect with
``?next=`` back, a Cloudflare-style challenge served with 200, a slow page (timeout), three
URLs serving byte-identical bodies, near misses (a short real page, a page about logging
in, a server-rendered ``id="__next"`` page), and a JavaScript shell whose links exist only
after its script runs. Every request is logged (path, status).
"""

from __future__ import annotations

import http.server
import threading
import time

SHELL = b"""<!doctype html>
<html><head><meta charset="utf-8"><title>App</title></head>
<body><noscript>You need to enable JavaScript to run this app.</noscript>
<div id="root"></div>
<script>
  var root = document.getElementById("root");
  ["/only-js-1", "/only-js-2"].forEach(function (href, i) {
    var a = document.createElement("a");
    a.href = href;
    a.textContent = "JS link " + (i + 1);
    root.appendChild(a);
  });
  var p = document.createElement("p");
  p.textContent = "Rendered by JavaScript: a catalogue of things only a browser sees.";
  root.appendChild(p);
</script>
</body></html>
"""

CHALLENGE = b"""<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title>
<meta http-equiv="refresh" content="390"></head><body>
<div class="main-wrapper"><div class="main-content"><h1 class="zone-name-title">example.org</h1>
<noscript><div class="h2"><span id="challenge-error-text">Enable JavaScript and cookies to
continue</span></div></noscript></div></div>
<script src="/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1"></script>
</body></html>
"""

LOGIN_PAGE = b"""<!doctype html><html><head><title>Sign in</title></head><body>
<h1>Sign in</h1><form method="post" action="/login"><label>Email <input name="email"></label>
<label>Password <input type="password" name="pw"></label><button>Log in</button></form>
</body></html>"""

ABOUT_LOGIN = b"""<!doctype html><html><head><title>How to log in</title></head><body>
<h1>How to log in to your account</h1>
<p>To login, open the login page and enter your email. If access is denied, reset your
password. Our login page never asks for a captcha.</p>
<nav><a href="/">Home</a> <a href="/short/">Short</a> <a href="/next-ssr/">SSR</a>
<a href="/short/#a">A</a> <a href="/short/#b">B</a> <a href="/short/#c">C</a>
<a href="/short/#d">D</a> <a href="/short/#e">E</a> <a href="/short/#f">F</a>
<a href="/short/#g">G</a> <a href="/short/#h">H</a> <a href="/short/#i">I</a></nav>
</body></html>"""

SHORT = b"""<!doctype html><html><head><title>Contact</title></head><body>
<h1>Contact</h1><p>Write to hello@example.org.</p><a href="/">Home</a></body></html>"""

NEXT_SSR = b"""<!doctype html><html><head><title>Blog</title>
<script src="/_next/static/chunks/main.js" defer></script></head><body>
<div id="__next"><h1>Our blog</h1><p>Server-rendered posts about gardening, compost,
seasonal planting and the tools we use every week in the community garden.</p>
<a href="/short/#p1">First post</a> <a href="/short/#p2">Second post</a>
<a href="/short/#p3">Third</a> <a href="/short/#p4">Fourth</a></div>
<script id="__NEXT_DATA__" type="application/json">{"props":{}}</script></body></html>"""

SAME = b"""<!doctype html><html><head><title>Welcome</title></head><body>
<p>Please choose your region to continue to the site.</p><a href="/">Continue</a></body></html>"""

NOT_FOUND_SHELL = b"""<!doctype html><html><head><title>Not found</title></head>
<body><div id="root"></div><script>document.title = "404";</script></body></html>"""

PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"

LINKS = [
    "/report",
    "/export",
    "/gone-404",
    "/gone-410",
    "/private",
    "/busy",
    "/legal",
    "/members/",
    "/challenge",
    "/slow",
    "/app/",
    "/short/",
    "/about-login/",
    "/next-ssr/",
    "/same-1",
    "/same-2",
    "/same-3",
]


def home(extra_links: list[str]) -> bytes:
    anchors = "\n".join(f'<a href="{h}">link to {h}</a>' for h in [*LINKS, *extra_links])
    return (
        "<!doctype html><html><head><title>Refusal site</title></head><body>"
        f"<h1>Every way a page can refuse</h1>{anchors}</body></html>"
    ).encode()


class RefusalSite:
    """The site on 127.0.0.1 at a free port; ``requests`` lists (path, status) served."""

    def __init__(self, extra_links: list[str] | None = None, slow_seconds: float = 4.0):
        self.extra_links = extra_links or []
        self.slow_seconds = slow_seconds
        self.requests: list[tuple[str, int]] = []
        self._lock = threading.Lock()
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def url(self, path: str = "/") -> str:
        return self.origin + path

    def start(self) -> RefusalSite:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def paths(self) -> list[str]:
        with self._lock:
            return [p for p, _ in self.requests]

    def route(self, path: str) -> tuple[int, dict[str, str], bytes]:
        html = {"Content-Type": "text/html; charset=utf-8"}
        if path == "/":
            return 200, html, home(self.extra_links)
        if path == "/report":
            return 200, {"Content-Type": "application/pdf"}, PDF
        if path == "/export":
            disposition = 'attachment; filename="export.zip"'
            ctype = "application/octet-stream"
            return 200, {"Content-Type": ctype, "Content-Disposition": disposition}, b"PK\x03\x04"
        if path == "/gone-404":
            return 404, html, NOT_FOUND_SHELL
        if path == "/gone-410":
            return 410, html, NOT_FOUND_SHELL
        if path == "/private":
            return 403, html, b"<html><body><h1>Forbidden</h1></body></html>"
        if path == "/busy":
            return 429, {**html, "Retry-After": "120"}, b"<html><body>Slow down</body></html>"
        if path == "/legal":
            return 451, html, b"<html><body>Unavailable here</body></html>"
        if path == "/members/":
            return 302, {"Location": "/login?next=%2Fmembers%2F"}, b""
        if path.startswith("/login"):
            return 200, html, LOGIN_PAGE
        if path == "/challenge":
            return 200, html, CHALLENGE
        if path == "/slow":
            time.sleep(self.slow_seconds)
            return 200, html, SHORT
        if path == "/app/":
            return 200, html, SHELL
        if path == "/short/":
            return 200, html, SHORT
        if path == "/about-login/":
            return 200, html, ABOUT_LOGIN
        if path == "/next-ssr/":
            return 200, html, NEXT_SSR
        if path in ("/same-1", "/same-2", "/same-3"):
            return 200, html, SAME
        if path.startswith("/only-js-"):
            body = f"<html><body><h1>{path}</h1><p>Reached through JavaScript.</p></body></html>"
            return 200, html, body.encode()
        return 404, {"Content-Type": "text/plain"}, b"not found"

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                path = (
                    self.path.split("?", 1)[0] if not self.path.startswith("/login") else self.path
                )
                status, headers, body = site.route(path)
                with site._lock:
                    site.requests.append((self.path, status))
                try:
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (the timeout test)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler
