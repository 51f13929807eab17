"""Serve a static site on 127.0.0.1 for the demo and the tests.

A built site (a folder, or a ``.tar.xz`` archive of one) is served as if it were live:
``X/`` maps to ``X/index.html``, ``X`` (a folder) answers ``301`` to ``X/`` as real static
hosts do (``python -m http.server``, nginx, GitHub Pages, Netlify; ``--no-dir-redirect``
or ``dir_redirect=False`` serves ``X/index.html`` at ``X`` instead, silently),
percent-encoded paths find their UTF-8 files, and the site's production origin
(``--rewrite https://example.com``) is rewritten to the local one in every text file and
gzipped file served, so a sitemap that lists ``https://example.com/about/`` lists
``http://127.0.0.1:PORT/about/``. Only ever binds loopback; port 0 picks a free port.

    python -m discovery_crawler.site_server demo/23people-handbook/site.tar.xz \\
        --rewrite https://23people.io
"""

from __future__ import annotations

import argparse
import email.utils
import gzip
import hashlib
import http.server
import mimetypes
import random
import shutil
import signal
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

_TEXT_SUFFIXES = {".html", ".htm", ".xml", ".txt", ".xsl", ".json", ".css", ".js", ""}
_TYPES = {
    ".xml": "application/xml",
    ".gz": "application/gzip",
    ".txt": "text/plain; charset=utf-8",
    ".html": "text/html; charset=utf-8",
    ".xsl": "text/xsl",
}


def unpack_site(archive: Path, into: Path) -> Path:
    """Extract a site archive (one top-level folder) and return that folder."""
    with tarfile.open(archive, "r:*") as tar:
        tar.extractall(into, filter="data")
        top = {Path(m.name).parts[0] for m in tar.getmembers() if m.name.strip("/")}
    if len(top) == 1:
        return into / top.pop()
    return into


class _Listener(http.server.ThreadingHTTPServer):
    # socketserver's listen backlog is 5: a crawler opening more connections at once than
    # the accept loop takes saw some wait for the 1 s SYN retransmit, which could take most
    # of a small crawl's time.
    request_queue_size = 128


class SiteServer:
    """A threaded HTTP server for one site folder; records every request it answers."""

    def __init__(
        self,
        root: Path,
        rewrite: list[str] | None = None,
        port: int = 0,
        dir_redirect: bool = True,
        validators: bool = False,
        jitter: float = 0.0,
        headers: dict[str, dict[str, str]] | None = None,
    ):
        self.root = Path(root)
        # As a static host does: ETag and Last-Modified on files, 304 to a request whose
        # If-None-Match / If-Modified-Since still holds (re-runs ask conditionally).
        self.validators = validators
        self.always_304: set[str] = set()  # paths answered 304 whatever was asked (a fault)
        self.headers_seen: list[tuple[str, dict[str, str]]] = []  # (path, request headers)
        self.bytes_sent = 0
        self.delay = 0.0  # seconds before each answer (a slow host, for tests that kill a run)
        # Up to ``jitter`` seconds of random delay before each answer: answers arrive in
        # another order on every run, as from a live host (tests of determinism).
        self.jitter = jitter
        # Extra response headers per URL path (``X-Robots-Tag`` on one page, in tests).
        self.headers = headers or {}
        self.rewrite = [r.rstrip("/") for r in (rewrite or [])]
        self.dir_redirect = dir_redirect
        self.requests: list[tuple[float, str, int]] = []  # (time, path, status)
        self._lock = threading.Lock()
        handler = self._handler_class()
        self.httpd = _Listener(("127.0.0.1", port), handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        self._thread: threading.Thread | None = None

    def url(self, path: str = "/") -> str:
        return self.origin + path

    def start(self) -> SiteServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> SiteServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def log(self, path: str, status: int) -> None:
        with self._lock:
            self.requests.append((time.monotonic(), path, status))

    def _candidate(self, url_path: str) -> Path | None:
        path = unquote(urlsplit(url_path).path, errors="surrogateescape")
        candidate = (self.root / path.lstrip("/")).resolve()
        if self.root.resolve() not in (candidate, *candidate.parents):
            return None  # never outside the site folder
        return candidate

    def resolve(self, url_path: str) -> Path | None:
        """The file a URL path maps to, or None."""
        candidate = self._candidate(url_path)
        if candidate is None:
            return None
        if candidate.is_dir():
            candidate = candidate / "index.html"
        return candidate if candidate.is_file() else None

    def moved(self, url_path: str) -> str | None:
        """Where a request for a folder without its trailing slash is sent (``dir_redirect``):
        the same path with the slash, query kept, as ``http.server`` writes it."""
        if not self.dir_redirect:
            return None
        parts = urlsplit(url_path)
        if parts.path.endswith("/"):
            return None
        candidate = self._candidate(url_path)
        if candidate is None or not candidate.is_dir():
            return None
        return parts.path + "/" + (f"?{parts.query}" if parts.query else "")

    def body(self, file: Path) -> bytes:
        data = file.read_bytes()
        if not self.rewrite:
            return data
        if file.suffix == ".gz" and data[:2] == b"\x1f\x8b":
            return gzip.compress(self._rewrite(gzip.decompress(data)), mtime=0)
        if file.suffix.lower() in _TEXT_SUFFIXES:
            return self._rewrite(data)
        return data

    def _rewrite(self, data: bytes) -> bytes:
        for origin in self.rewrite:
            data = data.replace(origin.encode(), self.origin.encode())
            escaped = origin.replace("/", "\\/").encode()  # JSON-escaped form
            data = data.replace(escaped, self.origin.replace("/", "\\/").encode())
        return data

    def _handler_class(self) -> type[http.server.BaseHTTPRequestHandler]:
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                if server.jitter:
                    time.sleep(random.uniform(0, server.jitter))
                location = server.moved(self.path)
                if location is not None:
                    self._send(301, b"moved", "text/plain", {"Location": location})
                    return
                file = server.resolve(self.path)
                if file is None:
                    self._send(404, b"not found", "text/plain")
                    return
                ctype = _TYPES.get(file.suffix.lower()) or (
                    mimetypes.guess_type(file.name)[0] or "application/octet-stream"
                )
                path = urlsplit(self.path).path
                extra = server.headers.get(path) or {}
                with server._lock:
                    server.headers_seen.append((path, dict(self.headers.items())))
                if server.delay:  # asked, not answered yet
                    time.sleep(server.delay)
                if path in server.always_304:
                    self._send(304, b"", ctype, extra)
                    return
                body = server.body(file)
                if not server.validators:
                    self._send(200, body, ctype, extra)
                    return
                etag = '"' + hashlib.sha1(body).hexdigest()[:20] + '"'
                mtime = int(file.stat().st_mtime)
                modified = email.utils.formatdate(mtime, usegmt=True)
                headers = {"ETag": etag, "Last-Modified": modified, **extra}
                match = self.headers.get("If-None-Match")
                since = self.headers.get("If-Modified-Since")
                if match is not None:
                    fresh = etag in [m.strip() for m in match.split(",")] or match.strip() == "*"
                elif since is not None:
                    try:
                        fresh = mtime <= email.utils.parsedate_to_datetime(since).timestamp()
                    except (TypeError, ValueError):
                        fresh = False
                else:
                    fresh = False
                if fresh:
                    self._send(304, b"", ctype, headers)
                else:
                    self._send(200, body, ctype, headers)

            def _send(
                self, status: int, data: bytes, ctype: str, headers: dict[str, str] | None = None
            ) -> None:
                server.log(self.path, status)
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                if status != 304:  # a 304 has no body (RFC 9110 §15.4.5)
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if status != 304:
                    self.wfile.write(data)
                    with server._lock:
                        server.bytes_sent += len(data)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, help="a site folder or a .tar.xz archive of one")
    parser.add_argument("--rewrite", action="append", default=[], help="production origin")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: free)")
    parser.add_argument("--port-file", type=Path, help="write the chosen port here")
    parser.add_argument(
        "--no-dir-redirect",
        action="store_true",
        help="serve X/index.html at X instead of answering 301 to X/",
    )
    parser.add_argument(
        "--validators",
        action="store_true",
        help="send ETag and Last-Modified, answer conditional requests with 304",
    )
    args = parser.parse_args(argv)
    workdir = None
    root = args.site
    if root.is_file():
        workdir = Path(tempfile.mkdtemp(prefix="discovery-site-"))
        root = unpack_site(root, workdir)
    server = SiteServer(
        root,
        args.rewrite,
        args.port,
        dir_redirect=not args.no_dir_redirect,
        validators=args.validators,
    )
    if args.port_file:
        args.port_file.write_text(str(server.port))
    print(f"Serving {root} at {server.origin}/", flush=True)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
