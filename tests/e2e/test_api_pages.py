"""``/api/`` pages of a documentation site against machine endpoints (issue 14, point 6), end
to end on a Sphinx-like site served on loopback: API reference pages under ``/api/*.html``
linked from an index, an ``/api/`` landing page, and under ``/api/`` a JSON and an XML
endpoint that must stay ``api`` — in links, union and sitemap modes, with and without the
sitemap worker."""

from __future__ import annotations

import http.server
import json
from pathlib import Path

import pytest

from discovery_crawler.site_server import SiteServer
from tests.conftest import run_discover

PAGE = "<!doctype html><html><head><title>{title}</title></head><body><h1>{title}</h1>{body}"
PAGE += "<p>" + "Reference text of the API documentation. " * 20 + "</p></body></html>"


def page(title: str, *links: str) -> tuple[str, bytes]:
    body = "".join(f'<a href="{href}">{href}</a> ' for href in links)
    return "text/html; charset=utf-8", PAGE.format(title=title, body=body).encode()


# path -> (Content-Type, body); a JSON body that names a link proves it is never parsed
ROUTES: dict[str, tuple[str, bytes]] = {
    "/": page("ktk docs", "api/", "api/ktk.Player.html", "genindex.html", "/api/v1/status"),
    "/genindex.html": page("Index", "api/ktk.Player.close.html", "/api/v1/feed"),
    "/api/": page("API reference", "ktk.Player.html", "ktk.Player.play.html"),
    "/api/ktk.Player.html": page("ktk.Player", "ktk.Player.close.html", "../index.html"),
    "/api/ktk.Player.close.html": page("ktk.Player.close", "ktk.Player.html"),
    "/api/ktk.Player.play.html": page("ktk.Player.play", "/wp-json/wp/v2/posts/"),
    "/index.html": page("ktk docs"),
    "/api/v1/status": (
        "application/json",
        json.dumps({"ok": True, "html": '<a href="/only-in-json/">x</a>'}).encode(),
    ),
    "/api/v1/feed": (
        "application/xml",
        b'<?xml version="1.0"?><feed><a href="/only-in-xml/">x</a></feed>',
    ),
    # a WordPress export: JSON written into index.html, served as HTML (never fetched)
    "/wp-json/wp/v2/posts/": ("text/html", b'[{"id": 1, "link": "/only-in-wp-json/"}]'),
}


class ApiSite(SiteServer):
    """A ``SiteServer`` answering ``ROUTES`` (each with its own Content-Type) and a sitemap."""

    def __init__(self, routes: dict[str, tuple[str, bytes]]):
        super().__init__(root=Path("."))
        self.routes = routes

    def _handler_class(self) -> type[http.server.BaseHTTPRequestHandler]:
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                ctype, body = server.routes.get(self.path, ("text/plain", b"not found"))
                status = 200 if self.path in server.routes else 404
                server.log(self.path, status)
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


@pytest.fixture
def site():
    server = ApiSite(dict(ROUTES)).start()
    listed = ("/", "/api/", "/api/ktk.Player.close.html", "/api/v1/status", "/wp-json/wp/v2/")
    locs = "".join(f"<url><loc>{server.url(p)}</loc></url>" for p in listed)
    server.routes["/sitemap.xml"] = (
        "application/xml",
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'.encode(),
    )
    yield server
    server.stop()


def _by_path(result, server) -> dict[str, dict]:
    return {r["url"][len(server.origin) :]: r for r in result.records}


def _requested(server) -> list[str]:
    return [path for _, path, _ in server.requests if path != "/robots.txt"]


REFERENCE = (
    "/api/",
    "/api/ktk.Player.html",
    "/api/ktk.Player.close.html",
    "/api/ktk.Player.play.html",
)


@pytest.mark.parametrize("mode", ["links", "union"])
def test_link_crawl_keeps_api_pages_and_drops_endpoints(site, tmp_path, mode):
    """The /api/*.html pages are pages by their name; /api/ has none, so it is fetched and
    its HTML answer makes it a page (and its links are followed: ktk.Player.play is linked
    from it alone); the JSON and XML endpoints are fetched once, recorded as kind api (listed
    under filtered.api), never parsed and no refusal; /wp-json/ is never fetched."""
    result = run_discover(site.url("/"), tmp_path, "-a", f"mode={mode}")
    assert result.returncode == 0, result.stderr[-3000:]
    by_path = _by_path(result, site)
    for path in REFERENCE:
        assert by_path[path]["kind"] == "page", path
        assert by_path[path]["status"] == 200 and by_path[path]["title"], path
    requested = _requested(site)
    assert requested.count("/api/v1/status") == 1 and requested.count("/api/v1/feed") == 1
    assert not [p for p in requested if p.startswith("/wp-json/")]
    assert not [p for p in requested if p.startswith("/only-in-")]
    assert len(requested) == len(set(requested))
    api = set(result.discovery["filtered"]["api"]["items"])
    assert {site.url("/api/v1/status"), site.url("/api/v1/feed")} <= api
    assert site.url("/wp-json/wp/v2/posts/") in api
    assert not set(by_path) & {"/api/v1/status", "/api/v1/feed", "/wp-json/wp/v2/posts/"}
    assert result.discovery["kinds"]["api"] >= 3
    assert result.run["refusals"]["total"] == 0, result.run["refusals"]


@pytest.mark.parametrize(
    "settings",
    [{"SITEMAP_PARSE_WORKER": False}, {"SITEMAP_WORKER_MIN_BYTES": 1}],
    ids=["in-process", "worker"],
)
def test_sitemap_mode_judges_api_paths_by_name(site, tmp_path, settings):
    """Nothing is fetched in sitemap mode: a listed /api/…/x.html is a page by its name; a
    listed /api/ or /api/v1/status (no page's name) stays api, as does /wp-json/."""
    result = run_discover(site.url("/sitemap.xml"), tmp_path, settings=settings)
    assert result.returncode == 0, result.stderr[-3000:]
    by_path = _by_path(result, site)
    assert by_path["/api/ktk.Player.close.html"]["kind"] == "page"
    assert set(by_path) == {"/", "/api/ktk.Player.close.html"}
    api = set(result.discovery["filtered"]["api"]["items"])
    assert api == {site.url(p) for p in ("/api/", "/api/v1/status", "/wp-json/wp/v2/")}
    assert _requested(site) == ["/sitemap.xml"]
    if "SITEMAP_WORKER_MIN_BYTES" in settings:
        assert "'discovery/sitemaps/worker_documents': 1" in result.stderr
