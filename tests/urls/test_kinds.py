"""Unit tests for ``discovery_crawler.urls.kinds``: one table per kind with hits and near
misses, the precedence between rules, and property tests that every URL gets exactly one of
the seven kinds and that the batch form agrees with the one-URL form.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discovery_crawler.urls.kinds import (
    EXTENSION_KINDS,
    FILE_KINDS,
    KINDS,
    answer_kind,
    empty_tally,
    fetch_decides,
    url_kind,
    url_kinds_many,
)

SITE = "https://example.com"

# (path and query after the host, expected kind). Each kind has hits and the near misses
# that must not be it.
TABLE: dict[str, list[tuple[str, str]]] = {
    "page": [
        ("/", "page"),
        ("/section/article-123/", "page"),
        ("/section/article-123", "page"),
        ("/index.html", "page"),
        ("/about.htm", "page"),
        ("/index.php", "page"),
        ("/Default.aspx", "page"),
        ("/pages/", "page"),
        ("/page/", "page"),
        ("/page/1/", "page"),
        ("/page/0/", "page"),
        ("/page/one/", "page"),
        ("/page-2/", "page"),
        ("/blog/page/2-things/", "page"),
        ("/?page=1", "page"),
        ("/?page=0", "page"),
        ("/?page=", "page"),
        ("/?page=abc", "page"),
        ("/?p=2", "page"),
        ("/?start=20", "page"),
        ("/?frontpage=3", "page"),
        ("/apis-explained/", "page"),
        ("/blog/api/", "page"),
        ("/v1.2/", "page"),
        ("/report.pdf/", "page"),
        ("/download?file=x.pdf", "page"),
        ("/search?q=style.css", "page"),
        ("/release-2.0", "page"),
        ("/blog/2024.01.05", "page"),
        ("/.htaccess", "page"),
        ("/graphql-tutorial/", "page"),
        # an /api/ path named like a page is one (a Sphinx API reference)
        ("/api/ktk.Player.close.html", "page"),
        ("/api/index.HTML", "page"),
        ("/api/v2/guide.htm", "page"),
        ("/api/reference/module.xhtml", "page"),
        ("/api/ktk.html?highlight=close", "page"),
        ("/en/api/", "page"),  # /api/ only as the first segment
    ],
    "paginated": [
        ("/page/2/", "paginated"),
        ("/page/2", "paginated"),
        ("/blog/page/3/", "paginated"),
        ("/tag/kext/page/9/", "paginated"),
        ("/page/2/index.html", "paginated"),
        ("/page/02/", "paginated"),
        ("/page/10/", "paginated"),
        ("/page/page/2/", "paginated"),
        ("/?page=3", "paginated"),
        ("/news/?page=2&sort=new", "paginated"),
        ("/news/?sort=new&paged=4", "paginated"),
        ("/list?Page=2", "paginated"),
        ("/list?page=99999999999999999999999", "paginated"),
    ],
    "api": [
        ("/api", "api"),
        ("/api/", "api"),
        ("/api/v2/users", "api"),
        ("/api?x=1", "api"),
        ("/api/?page=2", "api"),
        ("/wp-json/", "api"),
        ("/wp-json/wp/v2/posts", "api"),
        ("/.well-known/", "api"),
        ("/.well-known/openid-configuration", "api"),
        ("/graphql", "api"),
        ("/graphql/", "api"),
        ("/xmlrpc.php", "api"),
        ("/xmlrpc.php?rsd", "api"),
        ("/wp-admin/admin-ajax.php", "api"),
        ("/?rest_route=/wp/v2/posts", "api"),
        ("/wp-json/index.html", "api"),
        # machine endpoints whatever their name; an /api/ path without a page's name
        ("/wp-json/wp/v2/posts/index.html", "api"),
        ("/.well-known/index.html", "api"),
        ("/graphql/index.html", "api"),
        ("/api/v1/items", "api"),
        ("/api/users.php", "api"),
        ("/api/ktk.html?rest_route=/wp/v2", "api"),
    ],
    "asset": [
        ("/style.css", "asset"),
        ("/style.css?ver=6.8.2", "asset"),
        ("/app.min.js", "asset"),
        ("/module.mjs", "asset"),
        ("/app.js.map", "asset"),
        ("/data.json", "asset"),
        ("/feed.xml", "asset"),
        ("/sitemap.xml", "asset"),
        ("/sitemap.xml.gz", "asset"),
        ("/robots.txt", "asset"),
        ("/fonts/inter.woff2", "asset"),
        ("/fonts/inter.WOFF", "asset"),
        ("/fonts/icons.ttf", "asset"),
        ("/fonts/icons.otf", "asset"),
        ("/fonts/icons.eot", "asset"),
        ("/site.webmanifest", "asset"),
        ("/api/v1/data.json", "asset"),
        ("/.well-known/security.txt", "asset"),
        ("/page/2/feed.xml", "asset"),
    ],
    "document": [
        ("/report.pdf", "document"),
        ("/report.PDF", "document"),
        ("/api/report.pdf", "document"),
        ("/files/a.doc", "document"),
        ("/files/a.docx", "document"),
        ("/files/a.xls", "document"),
        ("/files/a.xlsx", "document"),
        ("/files/a.ppt", "document"),
        ("/files/a.pptx", "document"),
        ("/files/a.odt", "document"),
        ("/files/a.ods", "document"),
        ("/files/a.odp", "document"),
        ("/files/a.rtf", "document"),
        ("/files/a.epub", "document"),
        ("/report.pdf?download=1", "document"),
        ("/report.pdf;jsessionid=ABC", "document"),
        ("/page/2/report.pdf", "document"),
    ],
    "media": [
        ("/logo.svg", "media"),
        ("/favicon.ico", "media"),
        ("/img/a.jpg", "media"),
        ("/img/a.JPEG", "media"),
        ("/img/a.png", "media"),
        ("/img/a.gif", "media"),
        ("/img/a.webp", "media"),
        ("/img/a.avif", "media"),
        ("/audio/a.mp3", "media"),
        ("/audio/a.ogg", "media"),
        ("/video/a.mp4", "media"),
        ("/video/a.webm", "media"),
        ("/video/a.mov", "media"),
    ],
    "archive": [
        ("/file.zip", "archive"),
        ("/file.tar", "archive"),
        ("/file.tar.gz", "archive"),
        ("/file.tgz", "archive"),
        ("/file.tar.bz2", "archive"),
        ("/file.tar.xz", "archive"),
        ("/file.7z", "archive"),
        ("/file.rar", "archive"),
        ("/setup.dmg", "archive"),
        ("/setup.exe", "archive"),
        ("/setup.msi", "archive"),
        ("/app.apk", "archive"),
        ("/pkg.deb", "archive"),
        ("/pkg.rpm", "archive"),
        ("/backup.sql.gz", "archive"),
    ],
}

CASES_PLAIN = [(path, expected) for rows in TABLE.values() for path, expected in rows]
CASES = [
    pytest.param(path, expected, id=f"{group}:{path}")
    for group, rows in TABLE.items()
    for path, expected in rows
]


@pytest.mark.parametrize(("path", "expected"), CASES)
def test_kind_table(path, expected):
    url = SITE + path
    assert url_kind(url) == expected
    assert url_kinds_many([url]) == [expected]


def test_every_kind_has_a_table():
    assert set(TABLE) == set(KINDS)


def test_kinds_closed_set_and_order():
    assert KINDS == ("page", "paginated", "api", "asset", "document", "media", "archive")
    assert FILE_KINDS == ("document", "media", "archive")
    assert set(FILE_KINDS) < set(KINDS)
    assert set(EXTENSION_KINDS.values()) == {"asset", *FILE_KINDS}


@pytest.mark.parametrize(
    ("kind", "exts"),
    [
        ("document", "pdf doc docx xls xlsx ppt pptx odt ods odp rtf epub"),
        ("media", "jpg jpeg png gif webp avif svg ico mp3 wav mp4 webm"),
        ("archive", "zip tar gz tgz bz2 xz 7z rar dmg exe msi apk deb rpm"),
        ("asset", "css js mjs map json xml txt woff woff2 ttf otf eot webmanifest"),
    ],
)
def test_required_extensions(kind, exts):
    for ext in exts.split():
        assert EXTENSION_KINDS[ext] == kind, ext
        assert url_kind(f"{SITE}/dir/file.{ext.upper()}") == kind


@pytest.mark.parametrize("ext", ["html", "htm", "php", "aspx", "shtml", "jsp", ""])
def test_page_extensions_are_not_file_kinds(ext):
    assert ext not in EXTENSION_KINDS
    assert url_kind(f"{SITE}/dir/file.{ext}") == "page"


def test_http_and_host_do_not_matter():
    assert url_kind("http://example.com/a.pdf") == "document"
    assert url_kind("http://a/b.pdf") == "document"  # one-letter host
    assert url_kind("https://api.example.com/") == "page"  # "api" in the host, not the path
    assert url_kind("https://page.example.com/page/2/") == "paginated"
    assert url_kind("https://files.example.pdf/") == "page"  # the host's "extension"
    assert url_kind("https://example.com:8080/x.zip") == "archive"


def test_bare_host_and_query_without_path():
    assert url_kind("https://example.com") == "page"
    assert url_kind("https://example.com?page=2") == "paginated"


def test_empty_tally():
    tally = empty_tally()
    assert tally == dict.fromkeys(KINDS, 0)
    assert list(tally) == list(KINDS)
    tally["page"] += 1
    assert empty_tally()["page"] == 0  # a fresh dict each time


@pytest.mark.parametrize(
    ("path", "decides"),
    [
        ("/api", True),
        ("/api/", True),
        ("/api/v1/items", True),
        ("/api/users.php", True),
        ("/api/?page=2", True),
        ("/api/ktk.Player.close.html", False),  # a page by its name
        ("/api/v1/data.json", False),  # an asset by its extension
        ("/wp-json/wp/v2/posts/index.html", False),  # WordPress's REST API: JSON, always
        ("/.well-known/openid-configuration", False),
        ("/graphql", False),
        ("/xmlrpc.php", False),
        ("/?rest_route=/wp/v2/posts", False),
        ("/api/x?rest_route=/wp/v2/posts", False),
        ("/apis-explained/", False),
        ("/blog/api/", False),
    ],
)
def test_fetch_decides_only_ambiguous_api_paths(path, decides):
    assert fetch_decides(SITE + path) is decides
    if decides:
        assert url_kind(SITE + path) == "api"  # until a fetch says otherwise


@pytest.mark.parametrize(
    ("content_type", "html", "kind"),
    [
        ("text/html", False, "page"),
        ("text/html; charset=utf-8", False, "page"),
        ("TEXT/HTML", False, "page"),
        ("application/xhtml+xml", False, "page"),
        ("application/json", True, "api"),  # the header wins over the body's look
        ("application/ld+json", False, "api"),
        ("application/xml", False, "api"),
        ("text/xml; charset=utf-8", False, "api"),
        ("application/rss+xml", False, "api"),
        ("text/plain", False, "api"),
        ("", True, "page"),  # no Content-Type: the body looked like HTML
        (None, False, "api"),
    ],
)
def test_answer_kind(content_type, html, kind):
    assert answer_kind(content_type, html) == kind


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["api", "wp-json", "docs", "a.html", "x", "b.json", ""]), max_size=4)
)
def test_fetch_decides_is_api_by_the_root_alone(segments):
    url = f"{SITE}/{'/'.join(segments)}"
    if fetch_decides(url):
        assert url_kind(url) == "api" and segments[0] == "api"
    elif segments and segments[0] == "api" and url_kind(url) == "api":
        raise AssertionError(f"{url}: an /api/ URL of kind api that no fetch could settle")


def test_batch_of_mixed_urls():
    urls = [SITE + path for path, _ in CASES_PLAIN]
    assert url_kinds_many(urls) == [kind for _, kind in CASES_PLAIN]
    assert url_kinds_many([]) == []


# -- properties -----------------------------------------------------------------------------

_SEGMENT_WORDS = [
    "page",
    "pages",
    "api",
    "apis",
    "en",
    "pt-BR",
    "wp-json",
    ".well-known",
    "graphql",
    "xmlrpc.php",
    "wp-admin",
    "admin-ajax.php",
    "blog",
    "Page",
    "API",
    "2",
    "1",
    "0",
    "02",
    "10",
    "",
    "index.html",
    "ktk.Player.close.html",
    "a.HTM",
    "a.xhtml",
    "a.php",
    "a.pdf",
    "a.PDF",
    "b.tar.gz",
    "s.xml.gz",
    "x.css",
    "x.pdf;jsessionid=1",
    "v1.2",
    "%2F",
    "é",
    ";",
    ".",
]
_segment = st.one_of(
    st.sampled_from(_SEGMENT_WORDS),
    st.text(alphabet="abcXYZ019.-_;%~", max_size=8),
)
_param = st.tuples(
    st.sampled_from(["page", "paged", "Page", "p", "rest_route", "q", "action", ""]),
    st.sampled_from(["", "=", "=1", "=2", "=0", "=abc", "=x.pdf", "=/wp/v2"]),
).map("".join)
_query = st.lists(_param, max_size=3).map(lambda ps: "?" + "&".join(ps) if ps else "")
normalized_urls = st.builds(
    lambda scheme, host, segments, query: f"{scheme}://{host}/{'/'.join(segments)}{query}",
    st.sampled_from(["http", "https"]),
    st.sampled_from(["a", "example.com", "api.example.com", "x.co:8080", "u@h.io"]),
    st.lists(_segment, max_size=5),
    _query,
)
any_urls = st.one_of(normalized_urls, st.text(max_size=60))


@settings(max_examples=500, deadline=None)
@given(any_urls)
def test_exactly_one_kind_from_the_closed_set(url):
    assert url_kind(url) in KINDS


@settings(max_examples=300, deadline=None)
@given(st.lists(any_urls, max_size=30))
def test_batch_equals_one_at_a_time(urls):
    assert url_kinds_many(urls) == [url_kind(u) for u in urls]


@settings(max_examples=200, deadline=None)
@given(normalized_urls, st.sampled_from(sorted(EXTENSION_KINDS)))
def test_query_never_decides_the_extension(url, ext):
    """Whatever follows "?" (even a file name) leaves the path's kind alone."""
    base = url.partition("?")[0]
    assert url_kind(f"{base}?file=x.{ext}") == url_kind(f"{base}?file=x")


@settings(max_examples=200, deadline=None)
@given(normalized_urls, st.sampled_from(sorted(EXTENSION_KINDS)))
def test_extension_decides_first(url, ext):
    """A known extension on the last segment decides, whatever else the URL holds."""
    base, _, query = url.partition("?")
    if base.endswith("/"):
        base += "file"
    path_kind = url_kind(f"{base}.{ext}?{query}")
    expected = EXTENSION_KINDS[ext]
    if ext in ("gz",) and base.lower().endswith((".xml", ".txt", ".rss")):
        expected = "asset"
    assert path_kind == expected


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["https://example.com", "http://x.co:8080"]),
    st.lists(st.lists(_segment, min_size=1, max_size=4), min_size=1, max_size=20),
    st.one_of(st.none(), any_urls, st.sampled_from(["https://example.com/api/x/"])),
)
def test_one_origin_batch_equals_one_at_a_time(origin, paths, stranger):
    """A sitemap's usual batch (one origin, paths ending in "/"), decided for the whole
    batch at once, gets what ``url_kind`` gives each URL; so does one with any other URL
    (another origin, a query, a file, an API path) among them."""
    urls = [f"{origin}/{'/'.join(segments)}/" for segments in paths]
    if stranger is not None:
        urls.insert(len(urls) // 2, stranger)
    assert url_kinds_many(urls) == [url_kind(u) for u in urls]


def test_real_wordpress_json_exports_stay_api():
    """arhackintosh (a WordPress export): its /wp-json/…/index.html files hold JSON, not
    HTML; served at their directory URLs or by file name they are api, and no fetch is
    asked to settle them."""
    import tarfile
    from urllib.parse import quote

    from tests.conftest import realdata

    archive = realdata("sites", "arhackintosh-wordpress", "site.tar.xz")
    with tarfile.open(archive, "r:xz") as tar:
        names = [m.name.split("/", 1)[1] for m in tar if m.isfile() and "/wp-json/" in m.name]
    exports = [n for n in names if n.startswith("wp-json/") and n.endswith("index.html")]
    assert len(exports) == 380
    urls = [f"{SITE}/{quote(n)}" for n in exports]
    urls += [u[: -len("index.html")] for u in urls]
    assert set(url_kinds_many(urls)) == {"api"}
    assert not any(fetch_decides(u) for u in urls)
