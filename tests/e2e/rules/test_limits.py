"""End-to-end rules of the walk's limits (SPEC §4), one small site per rule (``conftest.py`` here):
``limit_documents``, ``limit_urls`` and ``limit_depth``."""

from __future__ import annotations

from tests.e2e.rules.conftest import (
    assert_bounded,
    paths,
)


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
    assert_bounded(result)
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
    assert_bounded(result)
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
    assert_bounded(result)
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
