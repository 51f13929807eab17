"""A generated site on 127.0.0.1 whose sitemaps answer conditional requests in the ways
real servers do, for the re-run fault tests (``e2e/test_rerun_faults.py``).

robots.txt lists ``/sitemap_index.xml``, an index of ``children`` (``/s/a.xml`` …), each
a urlset of pages ``/<child>/<i>/`` with lastmod, changefreq, priority and, for every
third, an hreflang alternate; the homepage links every child's first page and a page
``/hub/`` that links pages only links lead to (``/l/<i>/``). Everything is generated
from plain attributes, so a test edits ``site.children`` / ``site.robots`` and the next
request sees it.

``validators`` says how the sitemaps answer re-runs:

- ``strong``: ``ETag`` (a hash of the body) and ``Last-Modified``; 304 when either holds;
- ``weak``: the ETag written ``W/"…"`` (compared weakly, RFC 9110 §13.1.2);
- ``last_modified``: no ETag, only ``Last-Modified`` / ``If-Modified-Since``;
- ``ignore``: sends both validators but never answers 304 (a CDN that ignores them);
- ``changing``: a new ETag on every answer, never 304;
- ``none``: neither.

``status`` maps a path to a status it always answers (404, 500, 304 …); ``stall`` maps a
path to seconds to wait before answering (a timeout); ``moved`` maps a path to the one
it redirects to (301), whose document is served there as well. Every request is recorded as
``(path, status, {conditional headers})``.
"""

from __future__ import annotations

import email.utils
import hashlib
import http.server
import threading
import time
from urllib.parse import urlsplit

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
XHTML = 'xmlns:xhtml="http://www.w3.org/1999/xhtml"'
INDEX = "/sitemap_index.xml"
_EPOCH = 1_780_000_000  # a fixed Last-Modified base (2026)


def _alternated(path: str) -> bool:
    """Whether a page has a German alternate (by its path, not its place in the list)."""
    return sum(map(ord, path)) % 3 == 0


class _Listener(http.server.ThreadingHTTPServer):
    request_queue_size = 128
    daemon_threads = True


class RerunSite:
    def __init__(self, children: int = 3, per_child: int = 8, validators: str = "strong"):
        self.validators = validators
        # child name -> {page path: lastmod}
        self.children: dict[str, dict[str, str]] = {
            f"{chr(97 + c)}": {f"/{chr(97 + c)}/{i}/": "2026-01-01" for i in range(per_child)}
            for c in range(children)
        }
        self.index_lastmod: dict[str, str | None] = {name: "2026-01-01" for name in self.children}
        self.links_only = [f"/l/{i}/" for i in range(4)]
        self.robots = "User-agent: *\nAllow: /\n"
        self.status: dict[str, int] = {}
        self.stall: dict[str, float] = {}
        self.moved: dict[str, str] = {}  # path -> the path it answers 301 to
        self.requests: list[tuple[str, int, dict[str, str]]] = []
        self._answers = 0
        self._lock = threading.Lock()
        self.httpd = _Listener(("127.0.0.1", 0), self._handler())
        self.port = self.httpd.server_address[1]
        self.origin = f"http://127.0.0.1:{self.port}"

    # -- the site -------------------------------------------------------------------------
    def url(self, path: str = "/") -> str:
        return self.origin + path

    def urls(self, child: str) -> list[str]:
        """The inventory's URLs from ``child``: its pages and their hreflang alternates."""
        pages = list(self.children[child])
        return [self.url(p) for p in pages] + [self.url("/de" + p) for p in pages if _alternated(p)]

    def _urlset(self, name: str) -> str:
        blocks = []
        for n, (path, lastmod) in enumerate(self.children[name].items()):
            alt = (
                f'<xhtml:link rel="alternate" hreflang="de" href="{self.url("/de" + path)}"/>'
                if _alternated(path)
                else ""
            )
            blocks.append(
                f"<url><loc>{self.url(path)}</loc><lastmod>{lastmod}</lastmod>"
                f"<changefreq>weekly</changefreq><priority>0.{n % 9 + 1}</priority>{alt}</url>"
            )
        return f"<urlset {NS} {XHTML}>{''.join(blocks)}</urlset>"

    def _index(self) -> str:
        items = "".join(
            f"<sitemap><loc>{self.url(f'/s/{name}.xml')}</loc>"
            + (f"<lastmod>{lm}</lastmod>" if (lm := self.index_lastmod.get(name)) else "")
            + "</sitemap>"
            for name in self.children
        )
        return f"<sitemapindex {NS}>{items}</sitemapindex>"

    def _page(self, path: str) -> str | None:
        if path == "/":
            links = [next(iter(p)) for p in self.children.values() if p] + ["/hub/"]
        elif path == "/hub/":
            links = self.links_only
        elif path in self.links_only or any(path in pages for pages in self.children.values()):
            links = []
        else:
            return None
        anchors = "".join(f'<a href="{link}">{link}</a>' for link in links)
        return f"<html><head><title>{path}</title></head><body>{anchors}</body></html>"

    def document(self, path: str) -> tuple[str, str] | None:
        """(body, content type) at ``path``, or None."""
        if path == "/robots.txt":
            return self.robots + f"Sitemap: {self.url(INDEX)}\n", "text/plain"
        if path == INDEX:
            return self._index(), "application/xml"
        name = path[3:-4].removesuffix("-moved")
        if path.startswith("/s/") and path.endswith(".xml") and name in self.children:
            return self._urlset(name), "application/xml"
        page = self._page(path)
        return (page, "text/html; charset=utf-8") if page is not None else None

    def sitemap_requests(self) -> list[tuple[str, int, dict[str, str]]]:
        return [r for r in self.requests if r[0] == INDEX or r[0].startswith("/s/")]

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()

    # -- serving ----------------------------------------------------------------------------
    def _validators(self, path: str, body: bytes) -> dict[str, str]:
        if self.validators == "none" or not path.endswith(".xml"):
            return {}
        digest = hashlib.sha1(body).hexdigest()[:16]
        modified = email.utils.formatdate(_EPOCH + int(digest[:6], 16), usegmt=True)
        if self.validators == "last_modified":
            return {"Last-Modified": modified}
        if self.validators == "weak":
            return {"ETag": f'W/"{digest}"', "Last-Modified": modified}
        if self.validators == "changing":
            with self._lock:
                self._answers += 1
                return {"ETag": f'"{digest}-{self._answers}"'}
        return {"ETag": f'"{digest}"', "Last-Modified": modified}

    def _fresh(self, headers: dict[str, str], asked: dict[str, str]) -> bool:
        if self.validators in ("ignore", "changing", "none"):
            return False
        match = asked.get("If-None-Match")
        if match is not None:
            etag = headers.get("ETag")
            if etag is None:
                return False

            def weak(tag: str) -> str:
                return tag.strip().removeprefix("W/")

            return weak(etag) in [weak(t) for t in match.split(",")]
        since = asked.get("If-Modified-Since")
        if since is not None and "Last-Modified" in headers:
            return since == headers["Last-Modified"]
        return False

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                path = urlsplit(self.path).path
                asked = {k: v for k, v in self.headers.items() if k.lower().startswith("if-")}
                if path in site.stall:
                    time.sleep(site.stall[path])
                forced = site.status.get(path)
                found = site.document(site.moved.get(path, path))
                if path in site.moved:
                    self._send(path, asked, 301, b"moved", {"Location": site.moved[path]})
                elif forced is not None:
                    self._send(path, asked, forced, b"" if forced == 304 else b"fault", {})
                elif found is None:
                    self._send(path, asked, 404, b"not found", {})
                else:
                    body = found[0].encode()
                    headers = {"Content-Type": found[1], **site._validators(path, body)}
                    if site._fresh(headers, asked):
                        self._send(path, asked, 304, b"", headers)
                    else:
                        self._send(path, asked, 200, body, headers)

            def _send(self, path, asked, status, body, headers) -> None:
                with site._lock:
                    site.requests.append((path, status, asked))
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                if status != 304:
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if status != 304:
                    self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler

    def __enter__(self) -> RerunSite:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
