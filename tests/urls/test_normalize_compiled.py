"""``urls/_known_origins.c`` (``normalize_many``'s common case in C) changes no answer: a
batch gives the same URLs and errors with and without it, batch after batch, on hypothesis
batches mixing clean locations with ones that need work (escapes, non-ASCII, queries with
tracking parameters, fragments, whitespace, controls, other or invalid origins)."""

from __future__ import annotations

import importlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discovery_crawler.urls.normalize import OriginCache, UrlError
from tests import conftest

normalize_module = importlib.import_module("discovery_crawler.urls.normalize")
_known_origins = normalize_module._known_origins

_ORIGINS = st.sampled_from(
    [
        "https://example.com",
        "https://example.com",
        "https://example.com",
        "http://Example.com:80",
        "HTTPS://example.com",
        "HTTPS://日本.example",
        "https://ü@example.com",
        "https://bücher.de",
        "https://[broken",
        "http://a..b",
        "https://other.example:8443",
        " https://example.com",
        "ftp://example.com",
        "https:/",
        "",
    ]
)
_PIECES = st.sampled_from(
    [
        "a",
        "blog/",
        "post-1",
        "a;",
        "/",
        "//",
        "%41",
        "%7e",
        "%2f",
        "%2F",
        "%C3%A9",
        "%zz",
        "%4",
        "%",
        "é",
        "日本",
        "\U0001f600",
        "\ud800",
        " ",
        "\t",
        "\x00",
        "\x7f",
        "\xa0",
        "<",
        "^",
        "?",
        "&",
        "=",
        "#",
        "#x y",
        "utm_source=x",
        "UTM_Medium=y",
        "gclid=1",
        "Ref=2",
        "source",
        "mc_x=1",
        "_ga=2",
        "ütm_=1",
        "\u212aey=1",
        "a=b",
        "a=%zz",
        "q=日",
        ";p=1",
        ":",
        "@",
        "~",
        "!$&'()*+,;=",
    ]
)
# ... and ones that need work but are valid (the usual dirty location of a sitemap)
_VALID_PIECES = st.sampled_from(
    [
        "a",
        "blog/",
        "./",
        "../",
        "/.",
        "/..",
        "%2E%2e/",
        ".%2E",
        "Post-1",
        "/",
        "%41",
        "%7e",
        "%2f",
        "%C3%a9",
        "é",
        "ß",
        "日本",
        "\U0001f600",
        " ",
        "<",
        "^",
        "`",
        "{",
        "|",
        '"',
        "?",
        "&",
        "&&",
        "=",
        "#",
        "#x y",
        "utm_source=x",
        "UTM_Medium=y",
        "gclid=1",
        "Ref=2",
        "source",
        "mc_x=1",
        "_ga=2",
        "a=b",
        "q=日",
        "é=1",
        ";p=1",
        ":",
        "@",
        "~",
        "!$&'()*+,;=",
    ]
)
_REST = st.one_of(
    st.lists(st.one_of(_PIECES, st.text(max_size=4)), max_size=10).map("".join),
    st.lists(_VALID_PIECES, max_size=12).map("".join),
    st.lists(_VALID_PIECES, max_size=12).map("".join),
)
_LOCATION = st.one_of(
    st.builds(lambda o, r: f"{o}/{r}", _ORIGINS, _REST),
    st.builds(lambda r: f"https://example.com/{r}", _REST),
    st.builds(lambda r: f"https://example.com/{r}", st.text(alphabet="abz09-_./~", max_size=30)),
    _REST,
    st.builds(lambda r: f"https://example.com/{r} ", _REST),
    st.sampled_from(["www.example.com/x", "example.org/y?utm_source=z", "./rel", "../up"]),
)
_BATCHES = st.lists(st.lists(_LOCATION, max_size=25), min_size=1, max_size=4)


def _outcomes(batches, compiled, monkeypatch):
    monkeypatch.setattr(normalize_module, "_known_origins", compiled)
    cache = OriginCache()
    cache.rewrite["http://other.example:8443"] = "https://other.example"
    warm = ("https://example.com/", "http://Example.com:80/", "https://ü@example.com/")
    for origin in (*warm, "HTTPS://日本.example/"):
        cache.normalize(origin)  # warm origins, as mid-walk
    out = []
    for raws in batches:
        got = cache.normalize_many(raws, "https://example.com/dir/sitemap.xml")
        out.append([(u.reason, u.raw) if isinstance(u, UrlError) else u for u in got])
    return out, cache.take_repairs()


@conftest.needs_compiled(_known_origins)
@settings(max_examples=600, deadline=None)
@given(_BATCHES)
def test_the_compiled_batch_path_normalizes_as_python_does(batches):
    with pytest.MonkeyPatch.context() as monkeypatch:
        compiled = _outcomes(batches, _known_origins, monkeypatch)
        assert compiled == _outcomes(batches, None, monkeypatch)


@conftest.needs_compiled(_known_origins)
@settings(max_examples=600, deadline=None)
@given(
    st.lists(
        st.builds(
            lambda origin, rest: f"{origin}/{rest}",
            st.sampled_from(
                ["https://example.com", "http://Example.com:80", "https://ü@example.com"]
            ),
            st.lists(_VALID_PIECES, max_size=12).map("".join),
        ),
        max_size=30,
    )
)
def test_locations_that_need_work_are_normalized_as_python_does(raws):
    """On cached origins, the locations that need work (escapes, non-ASCII, queries) are
    what ``normalize`` gives, each one."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        compiled = _outcomes([raws], _known_origins, monkeypatch)
        assert compiled == _outcomes([raws], None, monkeypatch)


@conftest.needs_compiled(_known_origins)
def test_the_compiled_batch_path_leaves_what_it_does_not_know_to_python():
    cache = OriginCache()
    cache.normalize("https://example.com/")
    raws = ["https://example.com/a", "https://new.example/a", "https://example.com/%zz", 7]
    args = (cache._origins, normalize_module._TRACKING_PREFIXES, normalize_module._TRACKING_NAMES)
    urls, left = _known_origins.on_known_origins(raws, *args)
    assert urls == ["https://example.com/a", None, None, None]
    assert left == [1, 2, 3]
    with pytest.raises(TypeError):  # a tracking prefix that is not a str
        _known_origins.on_known_origins(raws, cache._origins, (1,), frozenset())
