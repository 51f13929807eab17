"""Unit tests for ``discovery_crawler.urls.junk``: a hit and a near miss for every row of the
junk table (nested, dated, with and without trailing slash, any case), where a row may fire
(depth, taxonomies, the blog, short slugs, page names), the first-row-wins order, path-only
matching, stable pattern names, and the batch prefilter agreeing with the table.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discovery_crawler.urls import junk
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

# Row name -> look-alikes that no row may name: other words, a page deeper than a leftover
# (a record, a module), a long descriptive slug, a file rather than a page.
NEAR_MISSES = {
    "test": [
        "/testimonials/", "/latest/", "/contest/", "/attestation/", "/tests/",
        "/experiments/ERP022128/test", "/3/library/test.html", "/test1.png", "/test.pdf",
    ],
    "test-page": ["/test-drive/", "/test-automation/", "/shop/products/test-product/"],
    "testing-number": ["/testing/", "/testing-services/", "/experiments/SRP149025/testing2"],
    "sample-page": ["/sample-pages/", "/samples/", "/docs/sample-page/"],
    "hello-world": ["/hello-world-in-rust/", "/hello/", "/docs/hello-world/"],
    "lorem-ipsum": ["/lorem-ipsum-generator/", "/tools/lorem-ipsum/"],
    "untitled": ["/untitled-goose-game/", "/games/untitled/"],
    "example-page": ["/examples/", "/example-pages/", "/guide/example-page/"],
    "draft-prefix": [
        "/drafting-services/", "/drafts/", "/mock-draft/", "/nfl-draft-2024/",
        "/draft-of-the-treaty/", "/draft-guidance-on-water-quality-monitoring/",
    ],
    "copy-suffix": [
        "/copyright/", "/copywriting/", "/copy/", "/copy-editing/", "/working-copy/",
        "/ad-copy/", "/how-to-write-great-sales-copy/", "/tags/about-copy/", "/get-a-copy/",
    ],
    "copy-of-prefix": ["/copy-offers/", "/copy-of/", "/copy-of-the-declaration-of-rights/"],
    "old-suffix": [
        "/old-town/", "/golden-oldies/", "/old/", "/bold/", "/2-year-old/", "/young-and-old/",
        "/gene-expression-analysis-of-influenza-vaccine-response-in-young-and-old/",
    ],
    "backup-suffix": [
        "/backup-software/", "/backup/", "/cloud-backup/", "/website-backup/",
        "/how-to-restore-an-iphone-backup/",
    ],
    "temp": ["/templates/", "/temperature/", "/tmpl/", "/temp-agency/", "/attempt/"],
    "holiday-number": ["/holidays/", "/holiday/", "/holiday-gift-guide/"],
    "promo-number": ["/promotions/", "/promo/", "/promo-codes/"],
    "landing-test": ["/landing/", "/landing-pages/", "/landing-testimonials/"],
    "variant-suffix": [
        "/variants/", "/product-variants/", "/variant-calling/",
        "/how-to-read-the-delta-variant-b/",
    ],
    "version-test": ["/v2/api-docs/", "/pricing-v2/", "/v2-testimonials/", "/v2/test-drive/"],
}  # fmt: skip

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


# Rows that fire at the top level only (after a locale and dates): a prefix marker.
TOP_ONLY = {p.name for p in JUNK_PATTERNS if p.shape == junk.PREFIX}


def variants(path: str, nested: bool = True) -> list[str]:
    """The path as given, nested (in the blog, after a locale, after dates — or only after a
    locale and dates), without its trailing slash, upper- and mixed-case, with a page
    extension, a query and matrix parameters."""
    bare = path.rstrip("/")
    return [
        path,
        "/blog" + path if nested else "/pt-br" + path,
        "/en/blog" + bare if nested else "/en/2024" + bare,
        "/news/2024/05/23" + path if nested else "/2024/05/23" + path,
        bare,
        path.upper(),
        ("/Blog" if nested else "/2019") + bare.title(),
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
    for variant in variants(path, nested=name not in TOP_ONLY):
        found = junk_pattern(variant)
        assert found is not None, variant
        assert found.name == name, variant


@pytest.mark.parametrize(("name", "path"), _cases(NEAR_MISSES))
def test_near_miss(name, path):
    top = variants(path, nested=False) if path.strip("/").count("/") == 0 else []
    for variant in variants(path) + top:
        assert junk_pattern(variant) is None, variant


@pytest.mark.parametrize("path", NOT_JUNK)
def test_not_junk(path):
    assert junk_pattern(path) is None


@pytest.mark.parametrize(("name", "path"), _cases(HITS))
def test_a_hit_deeper_than_a_leftover_is_a_record(name, path):
    """Three segments deep (dates and a leading locale not counted) a segment names a record
    of a catalogue or a module of a reference, whatever it says."""
    assert junk_pattern("/experiments/ERP022128" + path) is None
    assert junk_pattern("/en/docs/reference/2024/05" + path) is None
    if name not in TOP_ONLY:
        assert junk_pattern("/en/2024/blog" + path).name == name  # depth 2
    assert junk_patterns_many(["/experiments/ERP022128" + path, "/en" + path]) == [
        None,
        junk_pattern(path),
    ]


@pytest.mark.parametrize(("name", "path"), _cases(HITS))
def test_a_taxonomy_term_is_never_junk(name, path):
    for taxonomy in ("tag", "tags", "category", "Categories", "topic", "topics", "label"):
        assert junk_pattern(f"/{taxonomy}{path}") is None
        assert junk_pattern(f"/blog/{taxonomy}{path}") is None
    assert junk_pattern("/tags" + path + "page/1/") is None  # the term's listing, page 1
    if name not in TOP_ONLY:
        assert junk_pattern("/blog" + path).name == name  # not a taxonomy


def test_cms_samples_at_the_top_or_in_the_blog_only():
    for path in ("/hello-world/", "/sample-page/", "/lorem-ipsum/", "/untitled-2/"):
        assert junk_pattern(path) is not None
        for section in ("blog", "news", "posts", "articles", "stories"):
            assert junk_pattern(f"/{section}{path}") is not None
            assert junk_pattern(f"/en/{section}/2019/12/03{path}") is not None
        for section in ("docs", "tutorials", "guide", "learn"):
            assert junk_pattern(f"/{section}{path}") is None
    assert junk_pattern("/docs/test/").name == "test"  # a test page: anywhere shallow


def test_affix_rows_only_mark_a_short_slug():
    assert junk_pattern("/about-us-page-old/").name == "old-suffix"  # three words and -old
    assert junk_pattern("/about-us-main-page-old/") is None  # four: a title
    assert junk_pattern("/home-old-2/").name == "old-suffix"  # -2 is a de-duplication
    assert junk_pattern("/copy-of-about-us/").name == "copy-of-prefix"
    assert junk_pattern("/draft-new-home-page/").name == "draft-prefix"
    assert junk_pattern("/draft-new-home-page-v2/") is None
    assert junk_pattern("/new-and-old/") is None  # a phrase, not a marker
    assert junk_pattern("/draft-for-review/") is None
    assert junk_pattern("/pricing-v2-test/").name == "version-test"
    assert junk_pattern("/new-pricing-page-layout-v2-test/") is None


def test_a_file_is_not_a_page():
    assert junk_pattern("/test.php").name == "test"
    assert junk_pattern("/Test.ASPX").name == "test"
    for path in ("/test1.png", "/test.pdf", "/hello-world.zip", "/about-copy.jpg"):
        assert junk_pattern(path) is None
        assert junk_pattern("/blog" + path) is None
    assert junk_pattern("/test/logo.png").name == "test"  # in a test folder


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
    hits = [v for name, path in _cases(HITS) for v in variants(path, name not in TOP_ONLY)]
    paths = [path for _, path in _cases(NEAR_MISSES)]
    paths = hits + [v for path in paths for v in variants(path)] + NOT_JUNK
    assert junk_patterns_many(paths) == [junk_pattern(p) for p in paths]
    assert sum(r is not None for r in junk_patterns_many(paths)) == len(hits)


@pytest.mark.parametrize("name", sorted(TOP_ONLY))
def test_prefix_rows_fire_at_the_top_level_only(name):
    """One level down, draft-… and copy-of-… name documents (IETF's Internet-Drafts), not a
    CMS's copies of its pages; a locale and dates are no level."""
    for path in HITS[name]:
        assert junk_pattern("/en/2024/05" + path).name == name
        assert junk_pattern("/blog" + path) is None
        assert junk_pattern("/html" + path) is None
    assert junk_pattern("/html/draft-koster-rep") is None
    assert junk_pattern("/doc/draft-ietf-httpbis-semantics/") is None


def test_batch_edge_cases():
    assert junk_patterns_many([]) == []
    assert junk_patterns_many([""]) == [None]
    # A newline inside a path (never in a normalized URL) takes the slow way, still right.
    assert [p and p.name for p in junk_patterns_many(["/a\n-copy/", "/test/"])] == [
        "copy-suffix",
        "test",
    ]
    assert junk_pattern("/a\n-copy/").name == "copy-suffix"
    many = ["/about/"] * 1000 + ["/blog/test/"] + ["/x/"] * 1000 + ["/home-copy"]
    result = junk_patterns_many(many)
    assert [i for i, r in enumerate(result) if r] == [1000, 2001]


def reference(path: str) -> JunkPattern | None:
    """The table walked row by row over the eligible segments, written out here apart from
    the module's own walk (``_table_match``) and its batch prefilter."""
    path = path.split("?", 1)[0].split("#", 1)[0]
    if not path.startswith("/"):
        path = "/" + path
    places = []  # (segment without ;params and page extension, depth, parent)
    depth, parent, after_year = 0, "", False
    for i, raw in enumerate(path.split("/")[1:]):
        segment = raw.split(";", 1)[0]
        low = segment.lower()
        if not segment or (i == 0 and re.fullmatch(r"[a-z]{2}([-_][a-z0-9]{2,4})?", low)):
            continue
        if re.fullmatch(r"(19|20)[0-9]{2}([-_][0-9]{1,2}){0,2}", low) or (
            after_year and re.fullmatch(r"[0-9]{1,2}", low)
        ):
            after_year = True
            continue
        after_year = False
        depth += 1
        if depth <= 2 and parent not in ("tag", "tags", "category", "categories", "topic",
                                         "topics", "label", "labels"):  # fmt: skip
            stem = re.sub(r"\.(html?|shtml|xhtml|php|aspx?|jsp|cfm)$", "", segment, flags=re.I)
            places.append((stem, depth, parent))
        parent = low
    for row in JUNK_PATTERNS:
        for segment, depth, parent in places:
            if row.family == CMS_SAMPLES and depth == 2 and parent not in (
                "blog", "blogs", "news", "post", "posts", "article", "articles", "stories"
            ):  # fmt: skip
                continue
            if row.name.endswith("-prefix") and depth > 1:
                continue
            m = row.regex.fullmatch(segment)
            if m is None:
                continue
            stem = m.groupdict().get("stem")
            if stem:
                words = [w for w in re.split(r"[-_]+", re.sub(r"[-_][0-9]+$", "", stem)) if w]
                near = (words or [""])[0 if row.name.endswith("-prefix") else -1]
                if len(words) > 3 or near.lower() in junk._PHRASE_WORDS:
                    continue
            return row
    return None


TOKENS = [
    "/", "/", "/", "-", "_", ".html", ".", "?", "#", ";", "\n", "1", "2", "23", "x", "b",
    "test", "TEST", "Testing", "copy", "of", "old", "backup", "draft", "temp", "tmp", "holiday",
    "promo", "landing", "page", "variant", "v2", "sample", "hello", "world", "lorem", "ipsum",
    "untitled", "example", "year", "days", "cloud", "site", "é", "\u212a", "\u0130", "ſ",
    "/en", "/blog", "/tag", "/docs", "/2024", "/05", "and", "working", "ad", "a-b-c-d-",
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


def test_no_real_page_of_the_real_data_is_flagged():
    """scripts/junk_hits.py over all of ../shared/realdata: every URL the table flags has a
    verdict, and none is a real page (a changed row that flags a new URL fails here until
    someone judges it)."""
    import subprocess
    import sys

    from tests.conftest import ROOT, realdata

    data = realdata()  # skips where the real data is absent
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "junk_hits.py"), "--realdata", str(data)],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    rows = [line for line in out.splitlines() if line.startswith("| http")]
    assert rows, out
    verdicts = [row.split(" | ")[3] for row in rows]
    assert set(verdicts) <= {"junk", "not a page"}, out
    assert any("/blog/hello-world" in row for row in rows)  # Docusaurus's template post
