"""End-to-end rules of sitemap parsing (SPEC §4), one small site per rule (``conftest.py`` here):
namespaces, plain text, RSS and Atom, gzip by magic bytes, the size cap, no entity expansion,
malformed XML, relative locations, metadata and alternates, scheme reconciliation, and bad input
counted by reason.

Each test copies a hand-made folder from ``tests/fixtures/rules/<rule>/`` into its temp
directory, replacing the placeholder origin ``https://example.com`` with the loopback
server's origin, serves it on 127.0.0.1 and runs the real ``scrapy crawl discover``.
Gzip files are generated from text files (binary files are not committed).
"""

from __future__ import annotations

import gzip
import json
import zlib

import pytest

from tests.e2e.rules.conftest import (
    WORKER,
    assert_completed,
    by_url,
    gzip_file,
    paths,
)


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


# -- 23. bad input in sitemaps: every drop and rewrite counted, by reason -------------------
@pytest.mark.parametrize("settings", [{}, WORKER], ids=["in-process", "worker"])
def test_bad_sitemap_input_counted_by_reason(serve, tmp_path, discover, settings):
    """Scheme-less locations naming a host (XML and text), a host with an empty label,
    several <loc> in one <url>, a feed's <image><url> and a broken XML declaration: each
    read as docs/usage.md says, each drop or rewrite counted by reason in the crawl log
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
