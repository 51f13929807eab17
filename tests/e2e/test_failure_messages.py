"""A run that fails says what failed, in one line (issue 16, point 6), end to end: the real
spiders against servers on 127.0.0.1 that fail the way sites do — a TLS handshake with a
plain-HTTP server (a URL given without a scheme is read as ``https://``), a sitemap over
DOWNLOAD_MAXSIZE (announced, or streamed without a length), a sitemap over
SITEMAP_MAX_BYTES. Each is named as what it is in the summary's ``FAILED:`` line and the
crawl log's ``failure`` (exit status 1), never "site unreachable"; bad arguments are in
``e2e/test_arguments.py`` (exit status 2)."""

from __future__ import annotations

import contextlib
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import CrawlResult, run_discover

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


class OversizeServer:
    """Serves on 127.0.0.1: ``/`` a page, ``/sitemap.xml`` a plain urlset of ``urls``
    URLs, ``/announced.xml`` a 70,000,000-byte sitemap announced by its Content-Length
    (above the default DOWNLOAD_MAXSIZE of 64 MiB: the download stops at the headers, so
    the body is streamed only until the client hangs up), ``/chunked.xml`` the urlset
    streamed without a length; anything else 404."""

    def __init__(self, urls: int = 40_000):
        self.origin = ""
        server = self
        self.urlset = (
            f"<urlset {NS}>"
            + "".join(f"<url><loc>{{origin}}/p/{i}</loc></url>\n" for i in range(urls))
            + "</urlset>"
        )

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                body = server.urlset.replace("{origin}", server.origin).encode()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    if self.path == "/sitemap.xml":
                        self.answer(200, body, len(body))
                    elif self.path == "/announced.xml":
                        self.answer(200, b"<urlset>" + b" " * 65_536, 70_000_000, repeat=True)
                    elif self.path == "/chunked.xml":
                        self.send_response(200)
                        self.send_header("Content-Type", "application/xml")
                        self.send_header("Transfer-Encoding", "chunked")
                        self.end_headers()
                        for start in range(0, len(body), 65_536):
                            piece = body[start : start + 65_536]
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                        self.wfile.write(b"0\r\n\r\n")
                    elif self.path == "/":
                        self.answer(200, b"<html><title>Home</title></html>", 32, "text/html")
                    else:
                        self.answer(404, b"not found", 9, "text/plain")

            def answer(
                self,
                status: int,
                body: bytes,
                length: int,
                ctype: str = "application/xml",
                repeat: bool = False,
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(length))
                self.end_headers()
                self.wfile.write(body)
                sent = len(body)
                while repeat and sent < length:  # until the client hangs up
                    self.wfile.write(b" " * min(65_536, length - sent))
                    sent += 65_536

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[OversizeServer]:
    running = OversizeServer()
    yield running
    running.stop()


def failed_line(result: CrawlResult) -> str:
    """The summary's one ``FAILED:`` line (there is exactly one)."""
    lines = [line.strip() for line in result.stderr.splitlines() if "FAILED: " in line]
    assert len(lines) == 1, result.stderr[-3000:]
    return lines[0].removeprefix("FAILED: ")


def assert_failed(result: CrawlResult, failure: str) -> None:
    """Exit status 1, the failure in one line in the summary and in the crawl log, no
    traceback, and no "site unreachable"."""
    assert result.returncode == 1, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    assert failed_line(result) == failure
    assert result.run["status"] == "failed" and result.run["failure"] == failure
    assert "site unreachable" not in result.stderr


# -- a TLS handshake with a plain-HTTP server ------------------------------------------------


@pytest.mark.parametrize(
    ("spider", "args"),
    [("discover", ()), ("discover", ("-a", "mode=links")), ("links", ())],
    ids=["discover", "discover-mode-links", "links"],
)
def test_a_url_without_a_scheme_on_a_plain_http_server_suggests_http(
    server, tmp_path, spider, args
):
    """``-a url=127.0.0.1:PORT`` is read as ``https://127.0.0.1:PORT``; the server there
    speaks plain HTTP, so the TLS handshake fails (OpenSSL: "wrong version number"). The
    run fails in one line that names the handshake and the URL to try instead."""
    typed = f"127.0.0.1:{server.port}"
    result = run_discover(typed, tmp_path, *args, spider=spider, timeout=120)
    failure = failed_line(result)
    assert failure.startswith(f"TLS handshake failed with https://{typed}/ ("), failure
    assert failure.endswith(f") — if the site serves plain HTTP, try -a url=http://{typed}")
    assert_failed(result, failure)


def test_an_explicit_https_url_names_the_handshake_without_the_advice(server, tmp_path):
    """Given ``https://`` explicitly, the failure still names the handshake (and robots.txt
    its reason), but suggests nothing: the scheme was the user's choice."""
    url = f"https://127.0.0.1:{server.port}/"
    result = run_discover(url, tmp_path, timeout=120)
    failure = failed_line(result)
    assert failure.startswith(f"TLS handshake failed with {url} (") and "try" not in failure
    assert_failed(result, failure)
    assert result.discovery["robots"]["error"].startswith("TLS handshake failed: ")


# -- a sitemap over the download cap ---------------------------------------------------------


def test_a_sitemap_announced_over_the_default_download_maxsize(server, tmp_path):
    """The sitemap given announces 70,000,000 bytes (over the default DOWNLOAD_MAXSIZE, 64
    MiB): Scrapy stops at the headers; the run fails saying so, and so does its attempt."""
    url = server.origin + "/announced.xml"
    result = run_discover(url, tmp_path, timeout=120)
    cap = "larger than DOWNLOAD_MAXSIZE (64 MiB): 70,000,000 bytes announced, not downloaded"
    assert_failed(result, f"{url} is {cap} — raise -s DOWNLOAD_MAXSIZE to read it")
    assert result.attempt("/announced.xml")["error"] == cap


def test_a_sitemap_streamed_past_download_maxsize(server, tmp_path):
    """Streamed without a length (chunked), the 1.9 MB urlset passes DOWNLOAD_MAXSIZE=1 MB
    mid-body: Scrapy cancels the download without words; the run names the cap."""
    url = server.origin + "/chunked.xml"
    result = run_discover(url, tmp_path, settings={"DOWNLOAD_MAXSIZE": 1_000_000}, timeout=120)
    cap = "larger than DOWNLOAD_MAXSIZE (1,000,000 bytes): the download was stopped past it"
    assert_failed(result, f"{url} is {cap} — raise -s DOWNLOAD_MAXSIZE to read it")
    assert result.attempt("/chunked.xml")["error"] == cap


def test_a_homepage_whose_sitemap_is_over_download_maxsize_goes_on(server, tmp_path):
    """From the homepage the oversized sitemap is one attempt among others: its error says
    the cap, and the run goes on (the BFS fallback), exit 0."""
    result = run_discover(
        server.origin + "/", tmp_path, settings={"DOWNLOAD_MAXSIZE": 1_000_000}, timeout=120
    )
    assert result.returncode == 0, result.stderr[-3000:]
    error = result.attempt("/sitemap.xml")["error"]
    assert error.startswith("larger than DOWNLOAD_MAXSIZE (1,000,000 bytes): "), error
    assert error.endswith(" bytes announced, not downloaded")
    assert f"{server.origin}/sitemap.xml: {error}" in result.stderr


def test_a_plain_sitemap_over_sitemap_max_bytes_keeps_what_it_read(server, tmp_path: Path):
    """SITEMAP_MAX_BYTES=1000000 on a plain (uncompressed) 1.9 MB urlset: read up to the
    cap, its first URLs kept; the attempt says the cap, that it counts uncompressed bytes,
    and how many URLs were kept — and the run does not claim no sitemap yielded a URL."""
    result = run_discover(
        server.origin + "/sitemap.xml", tmp_path, settings={"SITEMAP_MAX_BYTES": 1_000_000}
    )
    assert result.returncode == 0, result.stderr[-3000:]
    attempt = result.attempt("/sitemap.xml")
    kept = len(result.records)
    assert 0 < kept == attempt["urls"] < 40_000
    assert attempt["error"] == (
        "refused: larger than the SITEMAP_MAX_BYTES cap (1,000,000 bytes uncompressed); the "
        f"{kept:,} URL(s) read before it are kept (the protocol allows 50 MiB)"
    )
    assert not any("no sitemap yielded" in w for w in result.run["warnings"])
