"""Unit tests for ``sitemaps.expected.ExpectedUrls``: the URL count a sitemap walk is
expected to list, from the urlsets read so far and the documents still pending."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from discovery_crawler.sitemaps.expected import ExpectedUrls


def test_the_first_urlset_of_an_index_predicts_the_rest():
    """20 children of 50,000 URLs: after the first, 19 pending → 1,000,000."""
    expected = ExpectedUrls(cap=2_000_000)
    assert expected.urlset_read(50_000, pending=19) == 1_000_000
    assert expected.urlset_read(50_000, pending=18) is None  # the same estimate: no news


def test_an_estimate_only_grows_and_stops_at_the_cap():
    expected = ExpectedUrls(cap=300)
    assert expected.urlset_read(10, pending=4) == 50
    assert expected.urlset_read(30, pending=0) is None  # 40 read, none pending: below 50
    assert expected.urlset_read(100, pending=10) == 300  # 140 + 140 / 3 × 10, capped
    assert expected.urlset_read(1_000, pending=10) is None


def test_nothing_is_estimated_without_urls_or_with_no_cap():
    assert ExpectedUrls(cap=1_000).urlset_read(0, pending=100) is None  # an index
    assert ExpectedUrls(cap=0).urlset_read(50_000, pending=19) is None  # off


@given(
    st.lists(
        st.tuples(st.integers(min_value=-5, max_value=60_000), st.integers(-3, 50_000)),
        max_size=40,
    ),
    st.integers(min_value=0, max_value=10_000_000),
)
def test_estimates_rise_never_pass_the_cap_and_cover_what_was_read(reads, cap):
    expected = ExpectedUrls(cap=cap)
    last = 0
    read = 0
    for urls, pending in reads:
        estimate = expected.urlset_read(urls, pending)
        read += max(urls, 0)
        if estimate is not None:
            assert last < estimate <= cap
            assert estimate >= min(read, cap)
            last = estimate
    assert expected.estimate == last
