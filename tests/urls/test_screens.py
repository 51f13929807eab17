"""``urls/_screens.c`` (the batch screens of the URL kinds and the junk table, in C) leaves
every batch's answers as they are: ``url_kinds_many`` and ``junk_patterns_many`` give, with
it and without it (their Python batch passes), what the one-URL rules give each URL — on
generated URLs and paths holding non-ASCII letters (the Kelvin sign, "İ"), %-escapes,
queries, extensions, API roots, ``/page/N``, the junk rows' keywords in any case, newlines
and strings of no URL's shape."""

from __future__ import annotations

from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from discovery_crawler.urls import junk, kinds
from discovery_crawler.urls.junk import junk_pattern, junk_patterns_many
from discovery_crawler.urls.kinds import url_kind, url_kinds_many
from tests import conftest
from tests.urls.test_junk import PATHS, reference
from tests.urls.test_kinds import any_urls, normalized_urls

_screens = kinds._screens

_ODD_URLS = st.sampled_from(
    [
        "",
        "https://",
        "https://x",
        "https://x.com",
        "https://x.com?a",
        "http://a/",
        "https://x.com/api",
        "https://x.com/apis/",
        "https://x.com/wp-json/a.html",
        "https://x.com/a/page/2",
        "https://x.com/a/page/",
        "https://x.com/a.b/c",
        "https://x.com/a/b.",
        "https://x.com/a/b.HTML",
        "https://x.com/a/b.html/",
        "https://x.com/a/b.pdf;x=1",
        "https://x.com/xmlrpc.php",
        "https://x.com/caf\u00e9.pdf",
        "https://x.com/\u212a.html",
        "https://x.com/\u0130/a.jpg",
        "https://x.com/a%2Fb.zip",
        "https://x.com/a\n/b.css",
        "https://x.com/" + "a" * 300 + ".mp4",
    ]
)
URLS = st.one_of(normalized_urls, any_urls, _ODD_URLS)


@conftest.needs_compiled(_screens)
@settings(max_examples=1500, deadline=None)
@given(st.lists(URLS, max_size=30))
def test_kinds_with_and_without_the_screen(urls):
    expected = [url_kind(u) for u in urls]
    assert url_kinds_many(urls) == expected
    with mock.patch.object(kinds, "_screens", None):
        assert url_kinds_many(urls) == expected


@conftest.needs_compiled(_screens)
@settings(max_examples=1500, deadline=None)
@given(URLS)
def test_the_kinds_screen_settles_pages_only(url):
    """What the screen settles is a page; what it leaves, ``url_kind`` decides."""
    if _screens.not_plain_pages([url], kinds._API_PREFIXES, kinds._PAGE_SUFFIXES) == []:
        assert url_kind(url) == "page"


_KEYWORDS = st.sampled_from(
    [
        "test",
        "TeSt",
        "tmp",
        "TEMP",
        "sample",
        "hello",
        "lorem",
        "untitled",
        "example",
        "draft",
        "copy",
        "old",
        "backup",
        "holiday",
        "promo",
        "landing",
        "variant",
        "v2",
        "v",
        "v-",
        "Copy",
        "OLD",
        "bacKup",
        "k",
    ]
)
_JUNKY_PATHS = st.lists(
    st.one_of(_KEYWORDS, st.sampled_from(["/", "-", "_", ".html", "1", "x", "%20", "\n", "é"])),
    max_size=10,
).map("".join)


@conftest.needs_compiled(_screens)
@settings(max_examples=1500, deadline=None)
@given(st.lists(st.one_of(PATHS, _JUNKY_PATHS), max_size=25))
def test_junk_with_and_without_the_screen(paths):
    expected = [reference(p) for p in paths]
    assert junk_patterns_many(paths) == expected
    with mock.patch.object(junk, "_screens", None):
        assert junk_patterns_many(paths) == expected


@conftest.needs_compiled(_screens)
@settings(max_examples=1500, deadline=None)
@given(st.one_of(PATHS, _JUNKY_PATHS))
def test_the_junk_screen_leaves_every_junk_path(path):
    """A path the screen does not name matches no row (the screen is a superset)."""
    if _screens.junk_candidates([path]) == []:
        assert junk_pattern(path) is None
