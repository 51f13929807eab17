"""Unit tests for ``discovery_crawler.urls.slugs``: one table per SPEC §10 rule (home, ``__``,
lowercase, other characters, collapse, trim, hash fallback), Windows device names, the length
cap, non-Latin paths, queries; the allocator's discovery-order suffixes, re-asks, stability
and ``from_existing``; and properties of both over generated URLs.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discovery_crawler.urls import slugs as slugs_module
from discovery_crawler.urls.normalize import UrlError, normalize
from discovery_crawler.urls.slugs import (
    _PLAIN_PATH,
    BASE_MAX_LENGTH,
    HOME,
    MAX_LENGTH,
    WINDOWS_RESERVED,
    SlugAllocator,
    base_slug,
    bases_many,
    normalized_paths,
    path_of,
)
from tests import conftest
from tests.conftest import ROOT

SLUG_SHAPE = re.compile(r"[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?")


def sha1_hex(text: str, digits: int) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:digits]


# -- base_slug: one table per rule ---------------------------------------------------------

BASE = [
    # empty path -> home (host, query and fragment ignored)
    ("https://example.com/", "home"),
    ("https://example.com", "home"),
    ("https://example.com/?page=2", "home"),
    ("https://example.com#top", "home"),
    ("https://example.com?next=/about/", "home"),
    ("/", "home"),
    ("", "home"),
    ("//", "home"),
    # leading/trailing slashes dropped, "/" -> "__"
    ("https://example.com/about/", "about"),
    ("https://example.com/blog/post-one", "blog__post-one"),
    ("https://example.com/a/b/c/", "a__b__c"),
    ("/a//b", "a____b"),
    ("//cdn.example.com/x/y", "x__y"),
    ("relative/path", "relative__path"),
    # lowercase
    ("https://example.com/Blog/Post-One/", "blog__post-one"),
    ("/ABOUT", "about"),
    # other characters -> "-"
    ("/a b/c+d", "a-b__c-d"),
    ("/v1.2/notes.html", "v1-2__notes-html"),
    ("/a~b!c@d", "a-b-c-d"),
    ("/under_score", "under_score"),
    # collapse runs of "-" (mixed with other characters too)
    ("/a--b---c", "a-b-c"),
    ("/a - b", "a-b"),
    ("/a-.-b", "a-b"),
    # trim "-" at both ends
    ("/-a-/", "a"),
    ("/...a.../", "a"),
    ("/-/a/-", "__a__"),
    # percent-encoded UTF-8 decoded first, per segment; nothing transliterated
    ("/caf%C3%A9", "caf"),
    ("/caf%c3%a9/menu", "caf-__menu"),  # trimmed at the ends of the slug only
    ("/%7Euser/", "user"),
    ("/a%2Fb", "a-b"),
    ("/a%20b", "a-b"),
    ("/100%25", "100"),
    ("/bad%ZZescape", "bad-zzescape"),
    ("/bad%FFutf8", "bad-utf8"),
    # queries and fragments ignored
    ("https://example.com/search?q=a", "search"),
    ("https://example.com/search?q=/x/y", "search"),
    ("https://example.com/a#/b", "a"),
    ("https://example.com/a;x=1", "a-x-1"),
]


@pytest.mark.parametrize(("url", "slug"), BASE)
def test_base_slug(url, slug):
    assert base_slug(url) == slug


HASHED = [
    # empty after the rules -> "_" + 10 hex digits of the SHA-1 of the path (pinned values:
    # the same on every run and machine)
    ("https://example.com/%E2%9C%93/", "/%E2%9C%93/", "_9cfd57f4e9"),
    ("/---/", "/---/", "_1909276485"),
    ("/%2F/", "/%2F/", None),
    ("/.../", "/.../", None),
    ("https://example.com/✓?a=1", "/✓", None),
    (
        "https://example.com/%D9%87%D8%A7%D9%83%D9%86%D8%AA%D9%88%D8%B4/",
        "/%D9%87%D8%A7%D9%83%D9%86%D8%AA%D9%88%D8%B4/",
        None,
    ),
    ("https://example.com/هاكنتوش/", "/هاكنتوش/", None),
]


@pytest.mark.parametrize(("url", "path", "pinned"), HASHED)
def test_hash_fallback(url, path, pinned):
    slug = base_slug(url)
    assert slug == "_" + sha1_hex(path, 10)
    if pinned:
        assert slug == pinned


def test_non_latin_paths():
    # Japanese, raw and percent-encoded: the ASCII segment survives; a segment with no
    # letter left is named by a hash of itself, so the tags under /tag/ keep apart.
    named = "tag___" + hashlib.sha1("前処理".encode()).hexdigest()[:6]
    assert base_slug("https://example.com/tag/前処理/") == named
    assert base_slug("https://example.com/tag/%E5%89%8D%E5%87%A6%E7%90%86/") == named
    assert base_slug("/tag/後処理/") not in (named, "tag__")
    assert base_slug("/javascript/이벤트-루프/") != base_slug("/javascript/클로저/")
    assert base_slug("/tag/前処理-2024/") == "tag__-2024"  # letters are left: as it was
    assert base_slug("/München/stadt") == "m-nchen__stadt"
    # Non-ASCII letters that lowercase to ASCII are still "other characters".
    assert base_slug("/\u212aelvin") == "elvin"  # KELVIN SIGN
    assert base_slug("/\u0130stanbul") == "stanbul"  # LATIN CAPITAL I WITH DOT ABOVE


WINDOWS = [
    ("CON", "con-x"),
    ("/con/", "con-x"),
    ("https://example.com/CON", "con-x"),
    ("/Nul", "nul-x"),
    ("/prn/", "prn-x"),
    ("/aux/", "aux-x"),
    ("/com1/", "com1-x"),
    ("/COM9/", "com9-x"),
    ("/lpt1/", "lpt1-x"),
    ("/lpt0", "lpt0-x"),
    ("/a/nul/b", "a__nul-x__b"),
    ("/aux/con", "aux-x__con-x"),
    ("/con_/a", "con-x___a"),  # "con___a" splits into "con" and "_a"
    # a dot becomes "-": never a device name with an extension
    ("/aux.html", "aux-html"),
    ("/nul.txt/x", "nul-txt__x"),
    # not device names
    ("/console/", "console"),
    ("/com10/", "com10"),
    ("/a/_con", "a___con"),  # splits into "a" and "_con"
    ("/conference", "conference"),
]


@pytest.mark.parametrize(("url", "slug"), WINDOWS)
def test_windows_device_names(url, slug):
    assert base_slug(url) == slug


def assert_windows_safe(slug: str) -> None:
    assert slug not in WINDOWS_RESERVED
    assert WINDOWS_RESERVED.isdisjoint(slug.split("__")), slug
    assert not slug.endswith((".", " "))


def test_long_paths_are_cut_with_a_hash():
    long_a = "/" + "a" * 5000
    long_b = "/" + "a" * 4999 + "b"
    slug_a, slug_b = base_slug(long_a), base_slug(long_b)
    assert len(slug_a) <= BASE_MAX_LENGTH
    assert len(slug_b) <= BASE_MAX_LENGTH
    assert slug_a != slug_b
    assert slug_a == "a" * 101 + "-" + sha1_hex(long_a, 8)
    assert base_slug(long_a) == slug_a
    # cut in the middle of "-" runs and "__" separators, still well-formed
    path = "/" + "/".join(["ab-cd"] * 1000)
    slug = base_slug(path)
    assert len(slug) <= BASE_MAX_LENGTH
    assert SLUG_SHAPE.fullmatch(slug) and "--" not in slug
    # exactly at the limit: kept whole
    assert base_slug("/" + "x" * BASE_MAX_LENGTH) == "x" * BASE_MAX_LENGTH
    assert len(base_slug("/" + "x" * (BASE_MAX_LENGTH + 1))) == BASE_MAX_LENGTH


def test_distinct_long_urls_get_distinct_slugs():
    prefix = "https://example.com/" + "section/" * 50
    slugs = {base_slug(f"{prefix}article-{i}/") for i in range(2000)}
    assert len(slugs) == 2000
    assert all(len(s) <= BASE_MAX_LENGTH for s in slugs)


# -- SlugAllocator -------------------------------------------------------------------------


def test_collisions_get_suffixes_in_discovery_order():
    allocator = SlugAllocator()
    urls = [
        "https://example.com/a?x=1",
        "https://example.com/a?x=2",
        "https://example.com/A",
        "https://example.com/a/",
    ]
    assert [allocator.slug(u) for u in urls] == ["a", "a-2", "a-3", "a-4"]
    assert len(allocator) == 4


def test_a_url_asked_twice_is_a_new_claimant():
    # The dedup stage admits each URL once; the allocator does not remember URLs.
    allocator = SlugAllocator()
    assert [allocator.slug(u) for u in ("/a", "/a", "/b")] == ["a", "a-2", "b"]
    assert len(allocator) == 3


def test_batch_claims_bare_bases_first():
    allocator = SlugAllocator()
    urls = ["https://e.com/a?x=1", "https://e.com/a?x=2", "https://e.com/a-2", "https://e.com/b"]
    assert allocator.slugs_many(urls, normalized_paths(urls)) == ["a", "a-3", "a-2", "b"]
    # the same batch in a new allocator gives the same slugs (re-runs agree)
    again = SlugAllocator()
    assert again.slugs_many(urls, normalized_paths(urls)) == ["a", "a-3", "a-2", "b"]


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=30), st.sampled_from(["", "?q=1", "?a=/b", "#f", "?x#y/z"]))
def test_normalized_paths_agree_with_path_of(path, tail):
    try:
        url = normalize("https://Example.com/" + path + tail)
    except UrlError:
        return
    assert normalized_paths([url]) == [path_of(url)]


_PLAIN_SAMPLES = [
    "con",
    "con/x",
    "a/con",
    "com1",
    "lpt9/a",
    "conx",
    "a.html",
    "a_b/c",
    "a__b",
    "-a",
    "a-",
    "a--b",
    "a/-b",
    "a-/b",
    "a..b",
    "x" * 110,
    "x" * 111,
    "aux.html",
    "a/b/",
    "",
]
_PATH_CHARS = "abcCON0129-._/%~Aé前 "


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=_PATH_CHARS, max_size=40) | st.sampled_from(_PLAIN_SAMPLES))
def test_bases_many_fast_path_agrees_with_base_slug(path):
    path = "/" + path
    assert bases_many([path]) == [base_slug("https://example.com" + path)]


@settings(max_examples=1000, deadline=None)
@given(
    st.lists(st.text(alphabet=_PATH_CHARS + "\n", max_size=20) | st.sampled_from(_PLAIN_SAMPLES))
)
def test_bases_many_batch_agrees_with_base_slug(paths):
    paths = ["/" + p for p in paths]
    assert bases_many(paths) == [base_slug("https://example.com" + p) for p in paths]


_ESCAPES = st.sampled_from(
    ["%C3%A9", "%E5%89%8D", "%E2%9C%93", "%2F", "%2f", "%41", "%5F", "%2D", "%20", "%C3", "%zz",
     "%4", "%", "%%", "%c3%a9", "%80", "%FF", "%E6%97%A5%E6%9C%AC"]
)  # fmt: skip
_WORDS = st.sampled_from(["a", "B", "con", "nul", "com1", "lpt9", "aux", "x" * 60, "-", "_", "."])
_ESCAPED_PATHS = st.lists(
    st.one_of(_ESCAPES, _WORDS, st.sampled_from(["/", "//", "~", " ", "é", "\u212a"])),
    max_size=12,
).map("".join)


@conftest.needs_compiled(slugs_module._plain_bases)
@settings(max_examples=4000, deadline=None)
@given(
    st.text(alphabet=_PATH_CHARS + "/", max_size=40)
    | st.sampled_from(_PLAIN_SAMPLES)
    | _ESCAPED_PATHS
)
def test_compiled_bases_are_the_general_rules(path):
    """``_plain_bases`` (C) gives every path it settles the general rules' base, and every
    plain path (``_PLAIN_PATH``) is one it settles; it leaves to the general rules only
    what is not ASCII or takes a hash or a device suffix."""
    path = "/" + path
    general = slugs_module._base_of_path(path)
    got = slugs_module._plain_bases.plain_bases([path], BASE_MAX_LENGTH, HOME, lambda p: None)[0]
    assert got is None or got == general
    stripped = path.strip("/")
    if len(stripped) <= BASE_MAX_LENGTH and _PLAIN_PATH.fullmatch(stripped) is not None:
        assert got == (stripped.replace(".", "-").replace("/", "__") or HOME)
    with mock.patch.object(slugs_module, "_plain_bases", None):
        assert bases_many([path]) == [general]
    assert bases_many([path]) == [general]


@settings(max_examples=1000, deadline=None)
@given(
    st.lists(
        st.text(max_size=30)
        | st.builds(
            lambda origin, path: origin + path,
            st.sampled_from(["https://example.com", "http://h", "https://", "http:", "", "é://x"]),
            st.text(alphabet="/?#a%é\u212a\U0001f600", max_size=12),
        ),
        max_size=10,
    )
)
def test_normalized_paths_compiled_and_not(urls):
    """Cut in C (``_plain_bases``) or in Python, a URL's path is
    ``url[url.find("/", 8):].partition("?")[0]``, whatever the string."""
    expected = [url[url.find("/", 8) :].partition("?")[0] for url in urls]
    assert normalized_paths(urls) == expected
    with mock.patch.object(slugs_module, "_plain_bases", None):
        assert normalized_paths(urls) == expected


def test_a_suffix_never_takes_a_real_path_slug():
    allocator = SlugAllocator()
    assert allocator.slug("/a") == "a"
    assert allocator.slug("/a?x=1") == "a-2"
    assert allocator.slug("/a-2") == "a-2-2"  # "a-2" is taken
    assert allocator.slug("/a?x=2") == "a-3"
    assert allocator.slug("/a-3/") == "a-3-2"


def test_two_allocators_fed_the_same_order_agree():
    urls = [f"https://example.com/p{i % 50}?v={i}" for i in range(500)]
    first, second = SlugAllocator(), SlugAllocator()
    assert [first.slug(u) for u in urls] == [second.slug(u) for u in urls]


def test_stable_across_processes_and_hash_seeds():
    code = (
        "import json\n"
        "from discovery_crawler.urls.slugs import SlugAllocator\n"
        "a = SlugAllocator()\n"
        "urls = [f'https://example.com/{c}/{i % 7}?q={i}' for i in range(300) for c in 'ab']\n"
        "urls += ['https://example.com/%E2%9C%93/', 'https://example.com/' + 'x' * 500]\n"
        "print(json.dumps([a.slug(u) for u in urls]))\n"
    )
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        result = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, check=True
        )
        outputs.append(json.loads(result.stdout))
    assert outputs[0] == outputs[1]
    assert len(set(outputs[0])) == len(outputs[0])
    assert outputs[0][-2] == "_9cfd57f4e9"


def test_from_existing_keeps_old_slugs():
    old = SlugAllocator()
    urls = ["/a?x=1", "/a?x=2", "/b", "/%E2%9C%93/"]
    mapping = {u: old.slug(u) for u in urls}
    assert mapping == {"/a?x=1": "a", "/a?x=2": "a-2", "/b": "b", "/%E2%9C%93/": "_9cfd57f4e9"}
    # A re-run that discovers the URLs in another order, plus new ones.
    new = SlugAllocator.from_existing(mapping)
    assert new.slug("/a?x=3") == "a-3"
    assert new.slug("/a?x=2") == "a-2"
    assert new.slug("/a?x=1") == "a"
    assert new.slug("/b") == "b"
    assert new.slug("/b?new=1") == "b-2"
    assert len(new) == 6


def test_from_existing_keeps_slugs_made_by_other_rules():
    # A slug from an older rule set stays; the URL's current base slug is free for others.
    new = SlugAllocator.from_existing({"/About-Us": "About_Us"})
    assert new.slug("/About-Us") == "About_Us"
    assert new.slug("/about-us?x=1") == "about-us"


def test_from_existing_refuses_a_shared_slug():
    with pytest.raises(ValueError, match="more than one URL"):
        SlugAllocator.from_existing({"/a": "a", "/b": "a"})


def test_allocator_grows_past_its_first_table():
    allocator = SlugAllocator()
    before = allocator.nbytes
    urls = [f"/p/{i % 30000}?v={i // 30000}" for i in range(100_000)]
    slugs = [allocator.slug(u) for u in urls]
    assert allocator.nbytes > before
    assert len(set(slugs)) == len(slugs) == len(allocator)
    assert slugs[30000] == "p__0-2"
    rerun = SlugAllocator.from_existing(dict(zip(urls, slugs, strict=True)))
    assert [rerun.slug(u) for u in urls[::997]] == slugs[::997]


def test_suffix_keeps_the_length_cap():
    allocator = SlugAllocator()
    url = "/" + "y" * 5000
    slugs = [allocator.slug(f"{url}?v={i}") for i in range(20)]
    assert all(len(s) <= MAX_LENGTH for s in slugs)
    assert len(set(slugs)) == 20


# -- properties ----------------------------------------------------------------------------

PIECES = [
    "/", "/", "/", "-", "_", "__", ".", " ", "%", "%2F", "%C3%A9", "%E2%9C%93", "%zz", "a",
    "B", "z9", "é", "前", "✓", "\u212a", "\u0130", "con", "CON", "aux", "nul", "com1", "lpt9",
    "?", "#", "x" * 60, "-" * 5,
]  # fmt: skip
PATHS = st.one_of(
    st.lists(st.sampled_from(PIECES), max_size=15).map("".join),
    st.text(max_size=40),
    st.text(alphabet="ab/-_.%", max_size=300),
)
URLS = st.one_of(PATHS, PATHS.map(lambda p: "https://example.com/" + p.lstrip("/")))


@settings(max_examples=500, deadline=None)
@given(URLS)
def test_base_slug_properties(url):
    slug = base_slug(url)
    assert SLUG_SHAPE.fullmatch(slug), slug
    assert "--" not in slug
    assert len(slug) <= BASE_MAX_LENGTH
    assert_windows_safe(slug)
    assert base_slug(url) == slug


@settings(max_examples=200, deadline=None)
@given(st.lists(URLS, max_size=40))
def test_allocator_properties(urls):
    urls = list(dict.fromkeys(urls))  # the dedup stage admits each URL once
    allocator = SlugAllocator()
    slugs = [allocator.slug(u) for u in urls]
    by_url: dict[str, str] = {}
    for url, slug in zip(urls, slugs, strict=True):
        assert by_url.setdefault(url, slug) == slug  # same URL, same slug
        assert SLUG_SHAPE.fullmatch(slug) and "--" not in slug
        assert len(slug) <= MAX_LENGTH
        assert_windows_safe(slug)
    assert len(set(by_url.values())) == len(by_url)  # unique
    assert len(allocator) == len(by_url)
    # deterministic, and kept by a re-run
    other = SlugAllocator()
    assert [other.slug(u) for u in urls] == slugs
    rerun = SlugAllocator.from_existing(by_url)
    assert [rerun.slug(u) for u in reversed(urls)] == slugs[::-1]
