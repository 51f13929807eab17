"""End-to-end rules of discovery and sitemap parsing (SPEC §4), one small site per rule.

Each test copies a hand-made folder from ``tests/fixtures/rules/<rule>/`` into its temp
directory, replacing the placeholder origin ``https://example.com`` with the loopback
server's origin, serves it on 127.0.0.1 and runs the real ``scrapy crawl discover``.
Gzip files are generated from text files (binary files are not committed).
"""

from __future__ import annotations

import csv
import gzip
import json
import re
import socket
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable

    from discovery_crawler.site_server import SiteServer

RULES = Path(__file__).resolve().parent / "fixtures" / "rules"
PLACEHOLDER = b"https://example.com"


def copy_fixture(name: str, dest: Path, origin: str) -> None:
    """Copy ``rules/<name>`` into ``dest``, pointing the placeholder origin at ``origin``."""
    src = RULES / name
    for path in sorted(src.rglob("*")):
        if path.is_file():
            out = dest / path.relative_to(src)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(path.read_bytes().replace(PLACEHOLDER, origin.encode()))


@pytest.fixture
def site(serve, tmp_path) -> Callable[..., SiteServer]:
    """``site(rule, origin=None)``: serve a copy of a rule's fixture folder on loopback."""

    def start(name: str, origin: Callable[[SiteServer], str] | None = None) -> SiteServer:
        root = tmp_path / "site"
        root.mkdir()
        server = serve(root)
        copy_fixture(name, root, origin(server) if origin else server.origin)
        return server

    return start


def paths(server: SiteServer) -> list[str]:
    """The paths the server answered, in order."""
    return [path for _, path, _ in server.requests]


def by_url(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["url"]: r for r in records}


def assert_completed(result: Any) -> None:
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.run["status"] == "completed", result.run["failure"]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]


def gzip_file(path: Path, data: bytes) -> None:
    path.write_bytes(gzip.compress(data, mtime=0))


# -- 1. discovery order for a homepage -------------------------------------------------------
CONVENTIONAL = [
    "/sitemap.xml",
    "/sitemap_index.xml",
    "/sitemap-index.xml",
    "/wp-sitemap.xml",
    "/sitemap/sitemap-index.xml",
    "/sitemap.txt",
]


def test_homepage_discovery_order(site, discover):
    """robots.txt is read first; its Sitemap: lines (a relative one resolved against the
    robots URL) are tried before the conventional addresses not yet tried, which are all
    tried (generators name their sitemaps differently), each an attempt."""
    server = site("discovery-order")
    o = server.origin
    # A small per-host interval sends one request at a time, so the server sees the
    # crawler's order of requests.
    result = discover(o + "/", settings={"HOST_INTERVAL": 0.05})
    assert_completed(result)
    attempts = result.discovery["sitemap_attempts"]
    assert [(a["url"], a["source"]) for a in attempts] == [
        (o + "/maps/main.xml", "robots"),
        (o + "/maps/a.xml", "robots"),
    ] + [(o + path, "conventional") for path in CONVENTIONAL]
    for a in attempts:
        parent = o + "/robots.txt" if a["source"] == "robots" else None
        assert (a["parent"], a["depth"]) == (parent, 0), a
    assert all(a["status"] is not None for a in attempts)
    robots = result.discovery["robots"]
    assert robots["status"] == 200
    assert robots["sitemaps"] == [o + "/maps/main.xml", o + "/maps/a.xml"]
    assert sorted(result.urls) == [
        o + "/from-conventional",
        o + "/from-main",
        o + "/from-relative",
    ]
    seen = paths(server)
    assert seen[0] == "/robots.txt"
    assert sorted(seen[1:3]) == ["/maps/a.xml", "/maps/main.xml"], seen
    assert sorted(seen[3:]) == sorted(CONVENTIONAL)


# -- 2. robots.txt 404 ---------------------------------------------------------------------
@pytest.mark.parametrize("start", ["/", "/robots.txt"], ids=["homepage", "robots-url"])
def test_robots_404_falls_back_to_conventional(site, discover, start):
    """No robots.txt (404): the conventional addresses are tried and the robots record
    says 404 — from a homepage and from the robots.txt URL given as input."""
    server = site("robots-404")
    o = server.origin
    result = discover(o + start)
    assert_completed(result)
    assert result.run["input"]["kind"] == ("robots" if start == "/robots.txt" else "homepage")
    robots = result.discovery["robots"]
    assert robots["url"] == o + "/robots.txt"
    assert robots["status"] == 404
    assert robots["sitemaps"] == []
    attempts = result.discovery["sitemap_attempts"]
    assert [(a["url"], a["source"], a["status"]) for a in attempts] == [
        (o + "/sitemap.xml", "conventional", 200)
    ] + [(o + path, "conventional", 404) for path in CONVENTIONAL[1:]]
    assert sorted(result.urls) == [o + "/", o + "/about"]
    assert paths(server)[0] == "/robots.txt"


# -- 3. urlset and sitemapindex at any depth -----------------------------------------------
def test_indexes_nest_at_any_depth(site, discover):
    """index → index → urlset, beside a urlset listed by the top index: every URL is found
    and each attempt records its depth, source and parent."""
    server = site("nested-indexes")
    o = server.origin
    result = discover(o + "/root-index.xml")
    assert_completed(result)
    assert sorted(result.urls) == sorted(
        o + p for p in ("/direct-1", "/direct-2", "/deep-1", "/deep-2", "/deep-3")
    )
    expected = {
        "/root-index.xml": ("input", None, 0, True, 0, 2),
        "/mid-index.xml": ("index", o + "/root-index.xml", 1, True, 0, 1),
        "/pages-direct.xml": ("index", o + "/root-index.xml", 1, False, 2, 0),
        "/leaf.xml": ("index", o + "/mid-index.xml", 2, False, 3, 0),
    }
    attempts = {a["url"]: a for a in result.discovery["sitemap_attempts"]}
    assert sorted(attempts) == sorted(o + p for p in expected)
    for path, (source, parent, depth, index, urls, sitemaps) in expected.items():
        a = attempts[o + path]
        got = (a["source"], a["parent"], a["depth"], a["index"], a["urls"], a["sitemaps"])
        assert got == (source, parent, depth, index, urls, sitemaps), a
        assert a["ok"] is True, a


# -- 4. cycle prevention -------------------------------------------------------------------
def test_index_cycle_fetches_each_sitemap_once(site, discover):
    """A lists B; B lists A and itself (also spelled ``./b.xml`` and ``/a.xml#again``):
    each is fetched once, the 4 repeats are counted and the run finishes."""
    server = site("index-cycle")
    o = server.origin
    result = discover(o + "/a.xml", timeout=60)
    assert_completed(result)
    assert sorted(paths(server)) == ["/a.xml", "/b.xml", "/pages.xml"]
    assert result.discovery["counts"]["sitemaps_repeated"] == 4
    assert [a["url"] for a in result.discovery["sitemap_attempts"]] == [
        o + "/a.xml",
        o + "/b.xml",
        o + "/pages.xml",
    ]
    assert sorted(result.urls) == [o + "/p1", o + "/p2"]


# -- 5. namespaces -------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["default", "prefixed", "google-084", "none"])
def test_sitemap_namespaces(site, discover, name):
    """The sitemap namespace as default, as a prefix, the old Google 0.84 namespace, or no
    namespace at all: each urlset yields its URLs."""
    server = site("namespaces")
    o = server.origin
    result = discover(f"{o}/{name}.xml")
    assert_completed(result)
    assert sorted(result.urls) == [f"{o}/{name}-1", f"{o}/{name}-2"]
    attempt = result.attempt(f"/{name}.xml")
    assert (attempt["ok"], attempt["format"], attempt["urls"]) == (True, "urlset", 2)
    assert attempt["problem"] is None


@pytest.mark.parametrize(
    ("name", "children"),
    [
        ("prefixed-index", ["prefixed", "google-084"]),
        ("none-index", ["none", "default"]),
    ],
)
def test_sitemapindex_namespaces(site, discover, name, children):
    """A sitemapindex with a prefixed namespace or none at all names its children."""
    server = site("namespaces")
    o = server.origin
    result = discover(f"{o}/{name}.xml")
    assert_completed(result)
    index = result.attempt(f"/{name}.xml")
    assert (index["ok"], index["format"], index["sitemaps"]) == (True, "sitemapindex", 2)
    assert sorted(result.urls) == sorted(f"{o}/{c}-{i}" for c in children for i in (1, 2))


# -- 6. plain-text sitemaps ----------------------------------------------------------------
@pytest.mark.parametrize("gzipped", [False, True], ids=["txt", "txt.gz"])
def test_plain_text_sitemap(site, discover, gzipped):
    """One URL a line: a UTF-8 BOM is tolerated, blank lines skipped, a line that is not a
    URL lands in malformed; the same file gzipped as .txt.gz reads the same."""
    server = site("plain-text")
    o = server.origin
    name = "urls.txt"
    if gzipped:
        text = server.root / "urls.txt"
        gzip_file(server.root / "urls.txt.gz", text.read_bytes())
        name = "urls.txt.gz"
    result = discover(f"{o}/{name}")
    assert_completed(result)
    assert result.urls == [o + "/text-1", o + "/text-2", o + "/text-3"]
    attempt = result.attempt("/" + name)
    assert (attempt["ok"], attempt["format"], attempt["gzipped"]) == (True, "text", gzipped)
    assert (attempt["urls"], attempt["malformed"]) == (3, 1)
    malformed = result.discovery["malformed"]
    assert malformed["count"] == 1
    assert [m["raw"] for m in malformed["items"]] == ["this line is not a URL"]
    assert malformed["items"][0]["sitemap"] == f"{o}/{name}"
    assert result.discovery["counts"]["malformed"] == 1


# -- 7. RSS and Atom feeds -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "fmt", "expected"),
    [
        ("rss", "rss", ["/posts/first", "/posts/second"]),
        ("atom", "atom", ["/articles/alpha", "/articles/beta"]),
    ],
)
def test_feeds_as_sitemaps(site, discover, name, fmt, expected):
    """An RSS 2.0 or Atom feed used as a sitemap yields its items' links (not the channel's
    or feed's own links, nor an entry's edit link)."""
    server = site("feeds")
    o = server.origin
    result = discover(f"{o}/{name}.xml")
    assert_completed(result)
    assert sorted(result.urls) == [o + p for p in expected]
    attempt = result.attempt(f"/{name}.xml")
    assert (attempt["ok"], attempt["format"], attempt["urls"]) == (True, fmt, 2)


# -- 8. gzip by magic bytes ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "gzipped", "prefix"),
    [
        ("zipped-as.xml", True, "zipped"),  # gzip bytes under .xml (application/xml)
        ("zipped.xml.gz", True, "zipped"),
        ("plain.xml.gz", False, "not-zipped"),  # plain XML under .gz (application/gzip)
    ],
)
def test_gzip_detected_by_magic_bytes(site, discover, name, gzipped, prefix):
    """gzip is recognised by its magic bytes whatever the name or Content-Type says, and a
    .gz that is plain XML is read as plain; attempt.gzipped says which it was."""
    server = site("gzip-sniffing")
    o = server.origin
    source = (server.root / "source.xml").read_bytes()
    gzip_file(server.root / "zipped-as.xml", source)
    gzip_file(server.root / "zipped.xml.gz", source)
    result = discover(f"{o}/{name}")
    assert_completed(result)
    assert sorted(result.urls) == [f"{o}/{prefix}-1", f"{o}/{prefix}-2"]
    attempt = result.attempt("/" + name)
    assert (attempt["ok"], attempt["gzipped"], attempt["urls"]) == (True, gzipped, 2)
    inflated = source if gzipped else (server.root / name).read_bytes()
    assert attempt["bytes"] == len(inflated), attempt  # decompressed size


# -- 9. decompression bomb -----------------------------------------------------------------
def test_decompression_bomb_refused(site, discover):
    """A gzip inflating past the default cap (60 MB of spaces inside a urlset) is refused
    with a clear attempt record; the run completes normally and the URL before the
    padding is still listed."""
    server = site("decompression-bomb")
    o = server.origin
    head = (server.root / "head.xml").read_bytes()
    pad = b" " * (1 << 20)
    with gzip.GzipFile(server.root / "bomb.xml.gz", "wb", compresslevel=9, mtime=0) as gz:
        gz.write(head)
        for _ in range(60):
            gz.write(pad)
        gz.write(b"</urlset>\n")
    assert (server.root / "bomb.xml.gz").stat().st_size < 1_000_000
    result = discover(o + "/bomb.xml.gz", timeout=120)
    assert_completed(result)
    attempt = result.attempt("/bomb.xml.gz")
    assert attempt["status"] == 200
    assert attempt["gzipped"] is True
    assert attempt["ok"] is False
    error = attempt["error"] or ""
    assert "refused" in error, attempt
    assert "cap" in error and "SITEMAP_MAX_BYTES" in error, attempt
    cap = 52_428_800 + 1_048_576
    assert cap < attempt["bytes"] <= cap + (1 << 20), attempt  # stopped at the cap
    assert result.urls == [o + "/before-the-bomb"]


def test_max_bytes_setting_refuses_a_modest_file(site, discover):
    """``-s SITEMAP_MAX_BYTES=100000`` refuses a plain 129 kB urlset with the same record."""
    server = site("batches")
    o = server.origin
    assert (server.root / "sitemap.xml").stat().st_size > 100_000
    result = discover(o + "/sitemap.xml", "-s", "SITEMAP_MAX_BYTES=100000")
    assert_completed(result)
    assert result.run["settings"]["SITEMAP_MAX_BYTES"] == 100_000
    attempt = result.attempt("/sitemap.xml")
    assert attempt["ok"] is False
    assert attempt["gzipped"] is False
    assert "refused" in attempt["error"] and "100,000" in attempt["error"], attempt
    assert len(result.urls) < 2500


# -- 10. no entity expansion ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "forbidden", "cut"),
    [
        ("internal", ["EXPANDED-SECRET"], "/internal/"),
        ("laughs", ["lollol"], None),
        ("external", ["root:", "/bin/", "nologin"], "/external/"),
    ],
    ids=["internal", "billion-laughs", "external"],
)
def test_entities_never_expanded(site, discover, name, forbidden, cut):
    """Internal entities, a billion-laughs DOCTYPE and an external SYSTEM entity are never
    expanded: no output carries their text and the run is quick. A <loc> holding an
    unexpanded reference is not cut short into a URL the sitemap never listed."""
    server = site("entities")
    o = server.origin
    result = discover(f"{o}/{name}.xml", timeout=60)
    assert_completed(result)
    assert o + "/safe" in result.urls
    log_text = json.dumps(result.crawl_log)
    for text in forbidden:
        assert text not in result.raw_feed, (text, result.raw_feed[:2000])
        assert text not in log_text, text
    assert all(len(url) < 200 for url in result.urls), result.urls
    assert result.run["provenance"]["elapsed_seconds"] < 10
    if cut is not None:
        # libxml2 stops at the billion-laughs reference (a recorded problem); the other
        # two documents are read to the end.
        assert o + "/after" in result.urls
        assert o + cut not in result.urls, result.urls


# -- 11. malformed XML ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "allowed", "problem"),
    [
        # an unclosed <lastmod> mid-document: later entries may be recovered too
        ("broken.xml", {"/before-1", "/before-2", "/broken", "/after"}, "malformed"),
        # the file ends inside a <loc>: the cut-off value is not a URL the sitemap listed
        ("truncated.xml", {"/before-1", "/before-2"}, "malformed"),
        # the same, as a gzip stream cut before its end marker
        ("truncated.xml.gz", {"/before-1", "/before-2"}, "truncated gzip"),
    ],
    ids=["unclosed-tag", "truncated", "truncated-gzip"],
)
def test_malformed_xml_recovered(site, discover, name, allowed, problem):
    """Broken or cut-off XML: the complete entries before the break are kept, nothing
    half-read enters the inventory, the attempt records the problem, the run exits 0."""
    server = site("malformed-xml")
    o = server.origin
    if name.endswith(".gz"):
        # A gzip stream flushed after the truncated text, without its end marker.
        deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
        text = (server.root / "truncated.xml").read_bytes()
        data = deflate.compress(text) + deflate.flush(zlib.Z_SYNC_FLUSH)
        (server.root / name).write_bytes(data)
    result = discover(f"{o}/{name}")
    assert_completed(result)
    urls = set(result.urls)
    assert {o + "/before-1", o + "/before-2"} <= urls, result.urls
    assert urls <= {o + p for p in allowed}, result.urls
    attempt = result.attempt("/" + name)
    assert attempt["status"] == 200
    assert attempt["problem"] and problem in attempt["problem"].lower(), attempt
    assert attempt["urls"] == len(urls)


def test_url_without_loc_is_malformed(site, discover):
    """A ``<url>`` without ``<loc>`` is counted and listed in malformed with its sitemap;
    its neighbours are kept."""
    server = site("malformed-xml")
    o = server.origin
    result = discover(o + "/no-loc.xml")
    assert_completed(result)
    assert result.urls == [o + "/has-loc-1", o + "/has-loc-2"]
    assert result.discovery["counts"]["malformed"] == 1
    malformed = result.discovery["malformed"]
    assert malformed["count"] == 1
    item = malformed["items"][0]
    assert "2024-02-02" in item["raw"], item
    assert item["sitemap"] == o + "/no-loc.xml"
    attempt = result.attempt("/no-loc.xml")
    assert (attempt["ok"], attempt["urls"], attempt["malformed"]) == (True, 2, 1)


# -- 12. relative locations ----------------------------------------------------------------
def test_relative_locs_resolve_against_their_sitemap(site, discover):
    """``/x``, ``./y``, ``../z`` and ``w`` in /deep/dir/sitemap.xml, and relative child
    sitemaps in /deep/index.xml, resolve against the URL of the file that listed them."""
    server = site("relative-locs")
    o = server.origin
    result = discover(o + "/deep/index.xml")
    assert_completed(result)
    attempts = {a["url"]: a for a in result.discovery["sitemap_attempts"]}
    assert sorted(attempts) == sorted(
        o + p for p in ("/deep/index.xml", "/deep/dir/sitemap.xml", "/deep/sibling.xml", "/top.xml")
    )
    assert all(a["ok"] for a in attempts.values()), attempts
    got = {r["url"]: r["sitemap"] for r in result.records}
    assert got == {
        o + "/x": o + "/deep/dir/sitemap.xml",
        o + "/deep/dir/y": o + "/deep/dir/sitemap.xml",
        o + "/deep/z": o + "/deep/dir/sitemap.xml",
        o + "/deep/dir/w": o + "/deep/dir/sitemap.xml",
        o + "/deep/sib": o + "/deep/sibling.xml",
        o + "/t": o + "/top.xml",
    }


# -- 13. lastmod, priority, changefreq, hreflang alternates --------------------------------
def test_url_metadata_and_alternates(site, discover):
    """lastmod, priority (a float), changefreq and xhtml:link alternates are captured; a
    same-site alternate not listed as <loc> enters with source "alternate"; one that is
    also a <loc> appears once, as the sitemap listed it."""
    server = site("url-metadata")
    o = server.origin
    sm = o + "/sitemap.xml"
    result = discover(sm)
    assert_completed(result)
    assert sorted(result.urls) == [o + "/de/", o + "/en/", o + "/fr/", o + "/plain"]
    assert len(result.urls) == 4  # each once
    records = by_url(result.records)
    en = records[o + "/en/"]
    assert (en["source"], en["sitemap"]) == ("sitemap", sm)
    assert (en["lastmod"], en["changefreq"], en["priority"]) == ("2024-05-01", "weekly", 0.8)
    assert en["alternates"] == [
        {"hreflang": "en", "href": o + "/en/"},
        {"hreflang": "de", "href": o + "/de/"},
        {"hreflang": "fr", "href": o + "/fr/"},
        {"hreflang": "es", "href": "https://other.example.net/es/"},
    ]
    plain = records[o + "/plain"]
    assert (plain["priority"], plain["lastmod"], plain["alternates"]) == (1.0, None, None)
    assert isinstance(plain["priority"], float)
    fr = records[o + "/fr/"]
    assert (fr["source"], fr["sitemap"], fr["lastmod"]) == ("alternate", sm, None)
    # /de/ is both an alternate of /en/ (seen first) and a <loc> of its own.
    de = records[o + "/de/"]
    assert de["source"] == "sitemap", de
    assert de["lastmod"] == "2024-05-02", de
    assert de["alternates"] == [
        {"hreflang": "en", "href": o + "/en/"},
        {"hreflang": "de", "href": o + "/de/"},
    ], de
    assert "https://other.example.net/es/" not in result.urls


# -- 14. http→https reconciliation ---------------------------------------------------------
def test_sitemap_scheme_reconciled_to_the_fetched_one(site, discover):
    """A site fetched over http:// whose robots.txt, index and urlset all say https://:
    sitemaps are fetched and pages recorded under the scheme actually fetched."""
    server = site("scheme-reconcile", origin=lambda s: f"https://127.0.0.1:{s.port}")
    o = server.origin
    assert o.startswith("http://")
    result = discover(o + "/")
    assert_completed(result)
    assert sorted(result.urls) == [o + "/", o + "/secure-1", o + "/secure-2"]
    attempts = {a["url"]: a for a in result.discovery["sitemap_attempts"]}
    assert attempts[o + "/index.xml"]["source"] == "robots"
    assert attempts[o + "/index.xml"]["ok"] is True
    assert attempts[o + "/pages.xml"]["source"] == "index"
    assert attempts[o + "/pages.xml"]["urls"] == 3
    assert not result.discovery["other_hosts"]
    assert {"/index.xml", "/pages.xml"} <= set(paths(server))


# -- 15. other-host URLs -------------------------------------------------------------------
def test_other_host_urls_counted_not_kept(site, discover):
    """3 URLs on https://staging.example.org and 2 same-site ones: the inventory has the 2,
    the crawl log counts 3 for that origin, and a warning and the summary say so."""
    server = site("other-hosts")
    o = server.origin
    sm = o + "/sitemap.xml"
    staging = "https://staging.example.org"
    result = discover(o + "/")
    assert_completed(result)
    assert sorted(result.urls) == [o + "/mine-1", o + "/mine-2"]
    assert result.discovery["site"] == o
    assert result.discovery["other_hosts"] == {staging: 3}
    assert result.discovery["other_hosts_by_sitemap"] == {sm: {staging: 3}}
    warnings = [w for w in result.run["warnings"] if staging in w]
    assert len(warnings) == 1, result.run["warnings"]
    assert "sitemap.xml" in warnings[0] and "3 URLs" in warnings[0], warnings
    assert f"3 URLs on {staging}, not this site" in result.stderr
    assert "Discovered 2 URLs" in result.stderr


# -- 16. not a sitemap, and missing ones ---------------------------------------------------
def test_html_at_sitemap_address_and_404(site, discover):
    """A 200 HTML page at /sitemap.xml is an attempt with ok false and an error saying
    HTML (so the next conventional address is tried); the missing conventional addresses
    are attempts with status 404, every one of them tried."""
    server = site("not-a-sitemap")
    o = server.origin
    result = discover(o + "/")
    assert_completed(result)
    assert all(r["via"] in ("seed", "link") for r in result.records)  # the BFS fallback only
    html = result.attempt(o + "/sitemap.xml")
    assert (html["status"], html["ok"], html["urls"]) == (200, False, 0)
    assert "HTML" in (html["error"] or ""), html
    for name in CONVENTIONAL[1:]:
        missing = result.attempt(o + name)
        assert (missing["status"], missing["ok"]) == (404, False), missing
        assert "404" in (missing["error"] or ""), missing
    assert any("no sitemap yielded any URL" in w for w in result.run["warnings"])


# -- 17. limits ----------------------------------------------------------------------------
def test_limit_documents_prefers_content_sitemaps(site, discover):
    """With room for the index and two children, the content-like children (post, page)
    are fetched, image and video are skipped and listed, and the limit is recorded with
    the counts seen and kept."""
    server = site("limit-documents")
    o = server.origin
    index = o + "/sitemap_index.xml"
    # The index itself is a document: 3 leaves room for two of its four children.
    result = discover(index, "-s", "SITEMAP_MAX_DOCUMENTS=3")
    assert_completed(result)
    fetched = sorted(paths(server))
    assert fetched == ["/page-sitemap.xml", "/post-sitemap.xml", "/sitemap_index.xml"]
    assert sorted(result.urls) == sorted(
        o + p for p in ("/post/one", "/post/two", "/page/one", "/page/two")
    )
    skipped = result.discovery["sitemaps_skipped"]
    assert skipped["count"] == 2
    assert sorted((s["url"], s["parent"], s["reason"]) for s in skipped["items"]) == [
        (o + "/image-sitemap.xml", index, "documents"),
        (o + "/video-sitemap.xml", index, "documents"),
    ]
    limits = {lim["limit"]: lim for lim in result.discovery["limits"]}
    assert set(limits) == {"SITEMAP_MAX_DOCUMENTS"}
    limit = limits["SITEMAP_MAX_DOCUMENTS"]
    assert (limit["value"], limit["skipped"]) == (3, 2), limit
    # SPEC §4: when a limit binds, say the count seen and the count kept.
    assert (limit.get("seen"), limit.get("kept")) == (5, 3), limit


def test_limit_urls_keeps_exactly_the_cap(site, discover):
    """``SITEMAP_MAX_URLS=3`` over 10 URLs: exactly 3 records; the limit says kept 3 of
    10 seen and the other 7 are counted over the limit."""
    server = site("limit-urls")
    o = server.origin
    result = discover(o + "/sitemap.xml", "-s", "SITEMAP_MAX_URLS=3")
    assert_completed(result)
    assert result.urls == [o + "/u1", o + "/u2", o + "/u3"]
    limits = {lim["limit"]: lim for lim in result.discovery["limits"]}
    assert limits["SITEMAP_MAX_URLS"] == {
        "limit": "SITEMAP_MAX_URLS",
        "value": 3,
        "kept": 3,
        "seen": 10,
    }
    counts = result.discovery["counts"]
    assert (counts["discovered"], counts["over_limit"]) == (3, 7)
    assert "Limit bound: SITEMAP_MAX_URLS" in result.stderr


def test_limit_depth_skips_deeper_indexes(site, discover):
    """``SITEMAP_MAX_DEPTH=1``: the index at depth 2 is skipped with reason depth and a
    warning; everything at depth ≤ 1 is read."""
    server = site("limit-depth")
    o = server.origin
    result = discover(o + "/root-index.xml", "-s", "SITEMAP_MAX_DEPTH=1")
    assert_completed(result)
    assert result.urls == [o + "/shallow"]
    assert sorted(paths(server)) == ["/level1-index.xml", "/level1-pages.xml", "/root-index.xml"]
    skipped = result.discovery["sitemaps_skipped"]
    assert skipped["items"] == [
        {"url": o + "/level2-index.xml", "parent": o + "/level1-index.xml", "reason": "depth"}
    ]
    assert skipped["count"] == 1
    limits = {lim["limit"]: lim for lim in result.discovery["limits"]}
    assert limits["SITEMAP_MAX_DEPTH"]["value"] == 1
    assert any("more than 1 index level" in w for w in result.run["warnings"]), result.run[
        "warnings"
    ]


# -- 18. dedup across sitemaps, in every feed format ---------------------------------------
def read_feed(result: Any, fmt: str) -> list[dict[str, Any]]:
    text = result.feed.read_text(encoding="utf-8")
    if fmt == "jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    if fmt == "json":
        return json.loads(text)
    rows = list(csv.DictReader(text.splitlines()))
    for row in rows:
        row["sources"] = json.loads(row["sources"])
    return rows


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "json"])
def test_duplicate_listed_once_with_all_sources(site, discover, fmt):
    """A URL listed by two sitemaps appears once, with both sitemaps in ``sources`` (the
    first one also in ``sitemap``) — in JSON lines, CSV and JSON feeds alike."""
    server = site("dedup")
    o = server.origin
    a, b = o + "/a.xml", o + "/b.xml"
    result = discover(o + "/index.xml", feed=f"inventory.{fmt}")
    assert_completed(result)
    records = read_feed(result, fmt)
    urls = [r["url"] for r in records]
    assert sorted(urls) == [o + "/only-a", o + "/only-b", o + "/shared"]
    rows = by_url(records)
    shared = rows[o + "/shared"]
    assert sorted(shared["sources"]) == [a, b], shared
    assert shared["sitemap"] == shared["sources"][0]
    assert rows[o + "/only-a"]["sources"] == [a]
    assert rows[o + "/only-b"]["sources"] == [b]
    assert result.discovery["counts"]["duplicates"] == 1
    assert result.discovery["counts"]["discovered"] == 3


# -- 19. batches ---------------------------------------------------------------------------
def test_batches_of_discovery_batch_size(site, discover):
    """2,500 URLs with ``DISCOVERY_BATCH_SIZE=1000`` travel as 3 Scrapy items but the feed
    has one line per URL."""
    server = site("batches")
    o = server.origin
    result = discover(o + "/sitemap.xml", "-s", "DISCOVERY_BATCH_SIZE=1000")
    assert_completed(result)
    assert len(result.records) == 2500
    assert len(set(result.urls)) == 2500
    assert result.urls[0] == o + "/p/1" and result.urls[-1] == o + "/p/2500"
    assert "'item_scraped_count': 3," in result.stderr
    assert result.discovery["counts"]["discovered"] == 2500


# -- 20. unreachable host ------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_unreachable_host_fails_cleanly(discover):
    """Nothing listening: exit status 1, crawl log status failed with the reason, a
    one-line FAILED summary and no traceback."""
    result = discover(f"http://127.0.0.1:{free_port()}/", timeout=120)
    assert result.returncode == 1, result.stderr[-3000:]
    assert result.run["status"] == "failed"
    failure = result.run["failure"] or ""
    assert "unreachable" in failure and "refused" in failure.lower(), failure
    failed = [line for line in result.stderr.splitlines() if "FAILED:" in line]
    assert len(failed) == 1, result.stderr[-3000:]
    assert "refused" in failed[0].lower()
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert result.records == []


# -- 21. progress and summary --------------------------------------------------------------
def test_progress_lines_and_summary(site, discover):
    """With ``PROGRESS_INTERVAL=0.2`` on a walk of an index and 6 children that takes about
    a second, progress lines appear, and the summary names the count and the crawl log."""
    server = site("progress")
    o = server.origin
    result = discover(o + "/index.xml", settings={"PROGRESS_INTERVAL": 0.2, "HOST_INTERVAL": 0.15})
    assert_completed(result)
    assert len(result.records) == 30
    assert re.search(r"Progress: sitemaps \d+ done / \d+ pending", result.stderr), result.stderr
    assert f"Discovered 30 URLs on {o}" in result.stderr
    crawl_log = result.out / "_crawl-log.json"
    assert f"Crawl log: {crawl_log}" in result.stderr
    assert "Sitemaps tried: 7 (1 input, 6 index); 7 ok" in result.stderr


# -- 22. lenient discovery: a urlset of sitemaps, generator paths, the page fallback -------
WORKER = {"SITEMAP_WORKER_MIN_BYTES": 1}  # every document parsed in the sitemap worker


@pytest.mark.parametrize("settings", [{}, WORKER], ids=["in-process", "worker"])
def test_urlset_listing_sitemaps_is_followed_like_an_index(site, discover, settings):
    """A <urlset> whose every location is a .xml/.xml.gz is an index in disguise: each is
    tried as a child sitemap (source index, parent the urlset, a note saying why), those
    that parse as sitemaps give their pages, the one that does not is an attempt with the
    reason; the .xml URLs stay counted in the crawl log (kind asset). A normal urlset
    listing one .xml beside a page is not followed (its feed.xml is never requested)."""
    server = site("urlset-of-sitemaps")
    o = server.origin
    gzip_file(
        server.root / "sitemaps" / "posts.xml.gz",
        (server.root / "sitemaps" / "posts.xml").read_bytes(),
    )
    result = discover(o + "/", "-a", "mode=sitemap", settings=settings)
    assert_completed(result)
    assert sorted(result.urls) == [o + "/a/", o + "/b/", o + "/c/", o + "/post-1/"]
    parent = result.attempt(o + "/sitemap.xml")
    assert (parent["format"], parent["index"], parent["sitemaps"]) == ("urlset", True, 3)
    assert "read as an index" in parent["note"], parent
    children = [
        a for a in result.discovery["sitemap_attempts"] if a["parent"] == o + "/sitemap.xml"
    ]
    assert sorted(a["url"] for a in children) == [
        o + "/sitemaps/data.xml",
        o + "/sitemaps/pages.xml",
        o + "/sitemaps/posts.xml.gz",
    ]
    for child in children:
        assert child["source"] == "index" and child["depth"] == 1, child
        assert "listed by a <urlset> of sitemap documents" in child["note"], child
    ok = {a["url"]: a["ok"] for a in children}
    assert ok == {
        o + "/sitemaps/pages.xml": True,
        o + "/sitemaps/posts.xml.gz": True,
        o + "/sitemaps/data.xml": False,
    }
    assert "no <loc>" in result.attempt(o + "/sitemaps/data.xml")["error"]
    assert result.discovery["kinds"]["asset"] == 4  # the three children and /feed.xml
    assert result.discovery["filtered"]["asset"]["count"] == 4
    assert "/feed.xml" not in paths(server)
    assert result.attempt(o + "/normal.xml")["index"] is False


def test_auto_falls_back_when_no_sitemap_lists_a_page(site, discover):
    """``auto``: sitemaps that list only files (two .xml exports, tried as sitemaps and
    failing, and a PDF) yield no page, so the BFS link crawl runs, with a note saying why."""
    server = site("only-files")
    o = server.origin
    result = discover(o + "/")
    assert_completed(result)
    kinds = result.discovery["kinds"]
    assert (kinds["asset"], kinds["document"]) == (2, 1)  # what the sitemaps listed
    assert kinds["page"] == 2  # what the link crawl found
    assert {o + "/", o + "/about/"} <= set(result.urls)
    note = next(n for n in result.discovery["notes"] if "fell back" in n)
    assert "listed 3 URL(s) of the site but no page (2 asset, 1 document)" in note, note
    assert result.attempt(o + "/exports/a.xml")["ok"] is False  # tried as a sitemap


@pytest.mark.parametrize(
    "where",
    ["/sitemap/sitemap-index.xml", "/wp-sitemap.xml", "/sitemap.txt", "/sitemap-index.xml"],
    ids=["gatsby", "wordpress-core", "text", "astro"],
)
def test_conventional_generator_paths(serve, tmp_path, discover, where):
    """A sitemap only at a generator's own address is found: every conventional address
    is tried and recorded as an attempt (404 where there is none)."""
    root = tmp_path / "site"
    (root / where.rsplit("/", 1)[0].lstrip("/")).mkdir(parents=True, exist_ok=True)
    server = serve(root)
    o = server.origin
    (root / "index.html").write_text("<html><body>home</body></html>")
    if where.endswith(".txt"):
        (root / "sitemap.txt").write_text(f"{o}/found/\n")
    else:
        (root / where.lstrip("/")).write_text(
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<url><loc>{o}/found/</loc></url></urlset>"
        )
    result = discover(o + "/", "-a", "mode=sitemap")
    assert_completed(result)
    assert result.urls == [o + "/found/"]
    attempts = {a["url"]: a["status"] for a in result.discovery["sitemap_attempts"]}
    assert attempts == {o + path: 200 if path == where else 404 for path in CONVENTIONAL}
    assert sorted(paths(server)) == sorted(["/robots.txt", *CONVENTIONAL])


def test_every_conventional_address_is_read(serve, tmp_path, discover):
    """A site with two unadvertised sitemaps under two generators' names (an old
    /sitemap.xml beside gatsby-plugin-sitemap's index): the URLs of both are found."""
    root = tmp_path / "site"
    (root / "sitemap").mkdir(parents=True)
    server = serve(root)
    o = server.origin
    (root / "index.html").write_text("<html><body>home</body></html>")
    urlset = '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{}</urlset>'
    (root / "sitemap.xml").write_text(urlset.format(f"<url><loc>{o}/old/</loc></url>"))
    (root / "sitemap" / "sitemap-0.xml").write_text(
        urlset.format(f"<url><loc>{o}/old/</loc></url><url><loc>{o}/new/</loc></url>")
    )
    (root / "sitemap" / "sitemap-index.xml").write_text(
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<sitemap><loc>{o}/sitemap/sitemap-0.xml</loc></sitemap></sitemapindex>"
    )
    result = discover(o + "/", "-a", "mode=sitemap")
    assert_completed(result)
    assert sorted(result.urls) == [o + "/new/", o + "/old/"]


def test_a_project_site_has_its_own_folder_tried_first(serve, tmp_path, discover):
    """A homepage under a path (a GitHub project site, https://user.github.io/project/):
    the conventional addresses of its folder are tried before the root's."""
    root = tmp_path / "site"
    (root / "project").mkdir(parents=True)
    server = serve(root)
    o = server.origin
    (root / "project" / "index.html").write_text("<html><body>home</body></html>")
    (root / "project" / "sitemap.xml").write_text(
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{o}/project/guide/</loc></url></urlset>"
    )
    result = discover(o + "/project/", "-a", "mode=sitemap")
    assert_completed(result)
    assert result.urls == [o + "/project/guide/"]
    urls = [a["url"] for a in result.discovery["sitemap_attempts"]]
    assert urls == [o + "/project" + p for p in CONVENTIONAL] + [o + p for p in CONVENTIONAL]


# -- 23. bad input in sitemaps: every drop and rewrite counted, by reason -------------------
@pytest.mark.parametrize("settings", [{}, WORKER], ids=["in-process", "worker"])
def test_bad_sitemap_input_counted_by_reason(serve, tmp_path, discover, settings):
    """Scheme-less locations naming a host (XML and text), a host with an empty label,
    several <loc> in one <url>, a feed's <image><url> and a broken XML declaration: each
    read as README says, each drop or rewrite counted by reason in the crawl log
    (``malformed.reasons``, ``repaired.reasons``), the big ones named in the summary, and
    the broken declaration recorded as the attempt's problem — in-process and in the
    sitemap worker alike."""
    root = tmp_path / "site"
    root.mkdir()
    server = serve(root)
    o = server.origin
    host = o.removeprefix("http://")
    ns = "http://www.sitemaps.org/schemas/sitemap/0.9"
    names = ["sitemap.xml", "urls.txt", "feed.xml", "broken.xml", "index.xml"]
    (root / "robots.txt").write_text(
        "User-agent: *\nDisallow:\n" + "".join(f"Sitemap: {o}/{n}\n" for n in names)
    )
    (root / "sitemap.xml").write_text(
        f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="{ns}">'
        f"<url><loc>{host}/scheme-less</loc></url>"
        "<url><loc>www.example.com/</loc></url>"
        "<url><loc>page.html</loc></url><url><loc>blog/post</loc></url>"
        "<url><loc>http://.example.com/x</loc></url><url><loc>http://a..b/y</loc></url>"
        f"<url><loc>{o}/one</loc><lastmod>2024-01-01</lastmod>"
        f"<loc>{o}/two</loc><lastmod>2024-02-02</lastmod></url>"
        "</urlset>"
    )
    (root / "urls.txt").write_text(f"{host}/from-text\nexample.com/x\nnot a url\n")
    (root / "index.xml").write_text(
        f'<sitemapindex xmlns="{ns}"><sitemap><loc>{host}/child.xml</loc></sitemap></sitemapindex>'
    )
    (root / "child.xml").write_text(
        f'<urlset xmlns="{ns}"><url><loc>{o}/from-child</loc></url></urlset>'
    )
    (root / "feed.xml").write_text(
        f'<rss version="2.0"><channel><title>t</title><link>{o}/</link><image>'
        f"<url>{o}/icon.png</url><title>t</title><link>{o}/</link></image>"
        f'<item><link>{o}/post/</link><guid isPermaLink="false">{o}/?p=1</guid></item>'
        "</channel></rss>"
    )
    (root / "broken.xml").write_text(
        f'<?xml version=1.0" encoding="UTF-8"?><urlset xmlns="{ns}">'
        f"<url><loc>{o}/after-broken-declaration</loc></url></urlset>"
    )
    result = discover(o + "/", "-a", "mode=sitemap", settings=settings)
    assert_completed(result)
    assert sorted(result.urls) == sorted(
        o + p
        for p in (
            "/scheme-less",
            "/page.html",
            "/blog/post",
            "/one",
            "/two",
            "/from-text",
            "/post/",
            "/after-broken-declaration",
            "/from-child",
        )
    )
    records = by_url(result.records)
    assert (records[o + "/one"]["lastmod"], records[o + "/two"]["lastmod"]) == (
        "2024-01-01",
        "2024-02-02",
    )
    discovery = result.discovery
    assert discovery["other_hosts"] == {"http://www.example.com": 1, "http://example.com": 1}
    repaired = discovery["repaired"]
    host_first = "a location without a scheme that names a host: read as that host"
    several = "several <loc> in one <url> or <sitemap>: each read as its own entry"
    assert repaired["reasons"] == {host_first: 5, several: 1}, repaired
    assert repaired["count"] == 6
    assert {item["raw"] for item in repaired["items"] if item["reason"] == host_first} == {
        f"{host}/scheme-less",
        "www.example.com/",
        f"{host}/from-text",
        "example.com/x",
        f"{host}/child.xml",  # an index's child
    }
    assert result.attempt(o + "/child.xml")["ok"]
    malformed = discovery["malformed"]
    assert malformed["reasons"] == {"empty label in the host": 2, "entry without a location": 1}
    assert discovery["counts"]["malformed"] == 3
    assert result.attempt(o + "/feed.xml")["urls"] == 1  # the item, not the channel's icon
    assert o + "/icon.png" not in result.urls
    broken = result.attempt(o + "/broken.xml")
    assert broken["problem"] and "malformed XML" in broken["problem"], broken
    assert "Repaired (6): " + host_first + " (5), " + several + " (1)" in result.stderr
    assert "Malformed (3): empty label in the host (2), entry without a location (1)" in (
        result.stderr
    )
