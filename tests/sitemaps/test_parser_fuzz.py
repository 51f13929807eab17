"""The sitemap parser under hostile input, briefly (``bench/fuzz.py sitemap`` runs the
same for minutes): on generated urlsets with entities, CDATA, comments, odd whitespace,
namespaces, nested and misplaced tags, other encodings, gzip and byte-level mutations, the
fast path and the lxml path agree entry for entry and in their account of the document,
raise nothing but ``SitemapTooLarge``, and a truncated copy lists no location the whole
document does not. Each input is checked under a CPU-time bound (a hang fails).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings

from discovery_crawler.sitemaps.parser import ParseResult, iter_sitemap
from tests.fuzzing import NS, SitemapCase, check_sitemap, cpu_bound, sitemap_cases

BOUND = 5.0  # CPU seconds an input may take (the slowest of 10 minutes took well under 1)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(sitemap_cases(big=False))
# Found by the fuzzer: a location cut off inside or after a CDATA section, or a lenient
# <sitemap>'s text cut off, became a URL the document never listed.
@example(SitemapCase(b'<?xml version="1.0"?>\n<urlset>\n<url><loc><![CDATA[a&b]]>h', 46))
@example(SitemapCase(f'<urlset xmlns="{NS}"><sitemap>https://example.com/a.xml'.encode(), None))
# and a namespace name libxml2 finds no valid URI: the fast path read the document without
# the problem lxml records
@example(SitemapCase(b'<urlset xmlns="http://a:/b">\n<url><loc>/x</loc></url>\n</urlset>', None))
def test_hostile_sitemaps_parse_alike_on_both_paths(case):
    with cpu_bound(BOUND):
        check_sitemap(case)


@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))
@given(sitemap_cases(big=True))
def test_hostile_multi_window_sitemaps_parse_alike_on_both_paths(case):
    with cpu_bound(BOUND):
        check_sitemap(case)


@pytest.mark.parametrize(
    "document",
    [
        "<urlset><url><loc><![CDATA[https://example.com/a]]>b",
        "<urlset><url><loc><![CDATA[https://example.com/a",
        "<urlset><url><loc>https://example.com/a<!-- c -->b",
        "<sitemapindex><sitemap>https://example.com/child.xml",
        "<sitemapindex><sitemap><![CDATA[https://example.com/child.xml]]>",
    ],
)
def test_a_location_cut_off_by_the_end_of_the_document_is_not_a_url(document):
    """Regression (fuzzer): the lxml path holds back a location the end of a truncated
    document cut off; one holding a CDATA section or a comment ("<" inside), or a lenient
    ``<sitemap>`` whose text is the location, was yielded, cut. Now each is malformed."""
    for fast in (True, False):
        result = ParseResult()
        assert list(iter_sitemap(document.encode(), result=result, fast=fast)) == []
        assert result.malformed_count == 1


def test_a_complete_entry_before_the_cut_is_kept():
    """The entries before the cut one are kept, a closed <loc> in an unclosed <url> too."""
    document = (
        b"<urlset><url><loc>https://example.com/a</loc></url><url><loc>https://example.com/b</loc>"
    )
    assert [e.loc for e in iter_sitemap(document, fast=False)] == [
        "https://example.com/a",
        "https://example.com/b",
    ]


@pytest.mark.parametrize(
    "namespace", ["http://http://x/", "http://a:/b", "http://a/%zz", "http://a/é", "x y"]
)
def test_a_namespace_that_is_no_uri_is_read_by_lxml_and_recorded(namespace):
    """Regression (fuzzer): the fast path took any ``xmlns`` value, so a document whose
    namespace libxml2 finds no valid URI was read without the problem the lxml path records.
    Now such a document goes to lxml, on both paths alike."""
    document = (
        f'<urlset xmlns="{namespace}">\n<url><loc>https://example.com/</loc></url>\n</urlset>'
    )
    for fast in (True, False):
        result = ParseResult()
        entries = list(iter_sitemap(document.encode(), result=result, fast=fast))
        assert [e.loc for e in entries] == ["https://example.com/"]
        assert "not a valid URI" in result.problem


def test_the_usual_namespaces_stay_on_the_fast_path():
    """The sitemap, image, news, video and xhtml namespaces are URIs the fast path takes."""
    from discovery_crawler.sitemaps.parser import iter_sitemap_batches

    document = (
        f'<urlset xmlns="{NS}" xmlns:xhtml="http://www.w3.org/1999/xhtml" '
        'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" '
        'xmlns:news="http://www.google.com/schemas/sitemap-news/0.9" '
        'xmlns:video="urn:video">\n<url><loc>https://example.com/</loc></url>\n</urlset>'
    ).encode()
    batches = list(iter_sitemap_batches(document, ParseResult(), 1000))
    assert len(batches[0][0]) == 5  # a fast-path row


@pytest.mark.parametrize("reference", ["&nbsp;", "&foo;", "&", "&amp"])
def test_a_reference_in_the_tail_of_a_block_without_loc_leaves_the_fast_path(reference):
    """Regression (fuzzer): the alternates of a ``<url>`` with no ``<loc>`` were read before
    the window's references were checked, so ``href="…&nbsp;"`` raised KeyError out of the
    fast path. Now lxml reads the document, on both paths alike."""
    link = f'<xhtml:link rel="alternate" hreflang="de" href="https://example.com/{reference}"/>'
    document = (
        f'<urlset xmlns="{NS}" xmlns:xhtml="http://www.w3.org/1999/xhtml">\n'
        f"<url>{link}</url>\n<url><loc>https://example.com/</loc></url>\n</urlset>"
    ).encode()
    check_sitemap(SitemapCase(document, None))
    assert [e.loc for e in iter_sitemap(document)] == ["https://example.com/"]
