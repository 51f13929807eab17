"""Unit tests for ``discovery_crawler.urls.junk``: a hit and a near miss for every row of the
junk table (nested, with and without trailing slash, any case), the first-row-wins order,
path-only matching, stable pattern names, and the batch prefilter agreeing with the table.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discovery_crawler.urls.junk import (
    AB_VARIANTS,
    CMS_SAMPLES,
    DRAFTS_AND_COPIES,
    JUNK_PATTERNS,
    ONE_OFF_CAMPAIGNS,
    TEST_PAGES,
    JunkPattern,
    junk_pattern,
    junk_patterns_many,
)

# Written to _crawl-log.json as the reason: renaming one is a format change.
STABLE_NAMES = [
    ("test", TEST_PAGES),
    ("test-page", TEST_PAGES),
    ("testing-number", TEST_PAGES),
    ("sample-page", CMS_SAMPLES),
    ("hello-world", CMS_SAMPLES),
    ("lorem-ipsum", CMS_SAMPLES),
    ("untitled", CMS_SAMPLES),
    ("example-page", CMS_SAMPLES),
    ("draft-prefix", DRAFTS_AND_COPIES),
    ("copy-suffix", DRAFTS_AND_COPIES),
    ("copy-of-prefix", DRAFTS_AND_COPIES),
    ("old-suffix", DRAFTS_AND_COPIES),
    ("backup-suffix", DRAFTS_AND_COPIES),
    ("temp", DRAFTS_AND_COPIES),
    ("holiday-number", ONE_OFF_CAMPAIGNS),
    ("promo-number", ONE_OFF_CAMPAIGNS),
    ("landing-test", ONE_OFF_CAMPAIGNS),
    ("variant-suffix", AB_VARIANTS),
    ("version-test", AB_VARIANTS),
]

# Row name -> paths that row must name (SPEC §7's examples first).
HITS = {
    "test": ["/test/", "/test1/", "/test-2/", "/test_3/"],
    "test-page": ["/test-content/", "/test-page/", "/testpost/", "/test-page-2/"],
    "testing-number": ["/testing-2/", "/testing3/"],
    "sample-page": ["/sample-page/", "/sample-page-2/"],
    "hello-world": ["/hello-world/", "/hello-world-2/"],
    "lorem-ipsum": ["/lorem-ipsum/"],
    "untitled": ["/untitled/", "/untitled-1/", "/untitled2/"],
    "example-page": ["/example-page/"],
    "draft-prefix": ["/draft-new-home/", "/draft_about/"],
    "copy-suffix": ["/about-copy/", "/about-copy-2/", "/home_copy/"],
    "copy-of-prefix": ["/copy-of-about/"],
    "old-suffix": ["/pricing-old/", "/home-old-2/", "/gold-old/"],
    "backup-suffix": ["/home-backup/", "/about_backup/", "/pricing-backup-3/"],
    "temp": ["/temp/", "/tmp/", "/temp2/", "/tmp-1/"],
    "holiday-number": ["/holiday1/", "/holiday-2024/"],
    "promo-number": ["/promo-2/", "/promo3/"],
    "landing-test": ["/landing-test/", "/landing-page-test-2/"],
    "variant-suffix": ["/home-variant-b/", "/variant-2/", "/pricing_variant_c/"],
    "version-test": ["/pricing-v2-test/", "/v3-test/", "/home-v10-test-2/"],
}

# Row name -> look-alikes that no row may name.
NEAR_MISSES = {
    "test": ["/testimonials/", "/latest/", "/contest/", "/attestation/", "/tests/"],
    "test-page": ["/test-drive/", "/test-automation/"],
    "testing-number": ["/testing/", "/testing-services/"],
    "sample-page": ["/sample-pages/", "/samples/"],
    "hello-world": ["/hello-world-in-rust/", "/hello/"],
    "lorem-ipsum": ["/lorem-ipsum-generator/"],
    "untitled": ["/untitled-goose-game/"],
    "example-page": ["/examples/", "/example-pages/"],
    "draft-prefix": ["/drafting-services/", "/drafts/", "/mock-draft/", "/nfl-draft-2024/"],
    "copy-suffix": ["/copyright/", "/copywriting/", "/copy/", "/copy-editing/"],
    "copy-of-prefix": ["/copy-offers/", "/copy-of/"],
    "old-suffix": ["/old-town/", "/golden-oldies/", "/old/", "/bold/", "/2-year-old/"],
    "backup-suffix": ["/backup-software/", "/backup/", "/cloud-backup/", "/website-backup/"],
    "temp": ["/templates/", "/temperature/", "/tmpl/", "/temp-agency/", "/attempt/"],
    "holiday-number": ["/holidays/", "/holiday/", "/holiday-gift-guide/"],
    "promo-number": ["/promotions/", "/promo/", "/promo-codes/"],
    "landing-test": ["/landing/", "/landing-pages/", "/landing-testimonials/"],
    "variant-suffix": ["/variants/", "/product-variants/", "/variant-calling/"],
    "version-test": ["/v2/api-docs/", "/pricing-v2/", "/v2-testimonials/", "/v2/test-drive/"],
}

# SPEC §7: look like junk, are not.
NOT_JUNK = [
    "/",
    "",
    "/page-2/",
    "/page/2/",
    "/year-2024/",
    "/year-2025/",
    "/annual-report-2023/",
    "/six-months-old/",
    "/email-backup/",
    "/about/",
    "/blog/2024/05/my-post/",
]


def variants(path: str) -> list[str]:
    """The path as given, nested, without its trailing slash, upper- and mixed-case, with an
    extension, a query and matrix parameters."""
    bare = path.rstrip("/")
    return [
        path,
        "/blog" + path,
        "/en/docs" + bare,
        bare,
        path.upper(),
        "/Blog" + bare.title(),
        bare + ".html",
        path + "?utm_x=1",
        bare + "#top",
        bare + ";jsessionid=ABC",
    ]


def _cases(table: dict[str, list[str]]) -> list[tuple[str, str]]:
    return [(name, path) for name, paths in table.items() for path in paths]


def test_names_and_families_are_stable():
    assert [(p.name, p.family) for p in JUNK_PATTERNS] == STABLE_NAMES
    assert all(isinstance(p, JunkPattern) for p in JUNK_PATTERNS)


def test_every_row_has_a_hit_and_a_near_miss():
    names = [name for name, _ in STABLE_NAMES]
    assert list(HITS) == names
    assert list(NEAR_MISSES) == names
    assert all(HITS[n] and NEAR_MISSES[n] for n in names)


@pytest.mark.parametrize(("name", "path"), _cases(HITS))
def test_hit(name, path):
    for variant in variants(path):
        found = junk_pattern(variant)
        assert found is not None, variant
        assert found.name == name, variant


@pytest.mark.parametrize(("name", "path"), _cases(NEAR_MISSES))
def test_near_miss(name, path):
    for variant in variants(path):
        assert junk_pattern(variant) is None, variant


@pytest.mark.parametrize("path", NOT_JUNK)
def test_not_junk(path):
    assert junk_pattern(path) is None


def test_first_row_of_the_table_wins_not_the_first_segment():
    assert junk_pattern("/about-copy/test/").name == "test"
    assert junk_pattern("/draft-home-copy/").name == "draft-prefix"
    assert junk_patterns_many(["/about-copy/test/"])[0].name == "test"


def test_path_only():
    assert junk_pattern("/about?next=/test/") is None
    assert junk_pattern("/about#/test/") is None
    assert junk_pattern("/test?x=1").name == "test"
    assert junk_pattern("test/") is not None  # no leading slash: one is assumed
    assert junk_pattern("/a/test-/") is None


def test_case_is_ascii_only():
    assert junk_pattern("/TEST/").name == "test"
    assert junk_pattern("/home-bac\u212aup/") is None  # KELVIN SIGN is not "k"
    assert junk_pattern("/te\u017ft/") is None  # LONG S is not "s"
    assert junk_pattern("/wee\u212a-old/").name == "old-suffix"  # not the "week" exception


def test_batch_agrees_with_single_calls():
    paths = [path for table in (HITS, NEAR_MISSES) for _, path in _cases(table)]
    paths = [v for path in paths for v in variants(path)] + NOT_JUNK
    assert junk_patterns_many(paths) == [junk_pattern(p) for p in paths]
    assert sum(r is not None for r in junk_patterns_many(paths)) == 10 * len(_cases(HITS))


def test_batch_edge_cases():
    assert junk_patterns_many([]) == []
    assert junk_patterns_many([""]) == [None]
    # A newline inside a path (never in a normalized URL) takes the slow way, still right.
    assert [p and p.name for p in junk_patterns_many(["/a\n-copy/", "/test/"])] == [
        "copy-suffix",
        "test",
    ]
    assert junk_pattern("/a\n-copy/").name == "copy-suffix"
    many = ["/about/"] * 1000 + ["/blog/test/"] + ["/x/"] * 1000 + ["/a-copy"]
    result = junk_patterns_many(many)
    assert [i for i, r in enumerate(result) if r] == [1000, 2001]


def reference(path: str) -> JunkPattern | None:
    """The table walked row by row, written out here independently of the module."""
    path = path.split("?", 1)[0].split("#", 1)[0]
    if not path.startswith("/"):
        path = "/" + path
    return next((p for p in JUNK_PATTERNS if p.regex.search(path)), None)


TOKENS = [
    "/", "/", "/", "-", "_", ".html", ".", "?", "#", ";", "\n", "1", "2", "23", "x", "b",
    "test", "TEST", "Testing", "copy", "of", "old", "backup", "draft", "temp", "tmp", "holiday",
    "promo", "landing", "page", "variant", "v2", "sample", "hello", "world", "lorem", "ipsum",
    "untitled", "example", "year", "days", "cloud", "site", "é", "\u212a", "\u0130", "ſ",
]  # fmt: skip
PATHS = st.one_of(
    st.lists(st.sampled_from(TOKENS), max_size=12).map("".join),
    st.text(max_size=30),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(PATHS, max_size=25))
def test_batch_equals_single_and_reference(paths):
    expected = [reference(p) for p in paths]
    assert [junk_pattern(p) for p in paths] == expected
    assert junk_patterns_many(paths) == expected
