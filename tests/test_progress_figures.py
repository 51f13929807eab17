"""``progress_figures.py``: the walk's estimated total, rates, ETAs and the line's words."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from discovery_crawler.progress_figures import (
    ESTIMATE,
    EXACT,
    CrawlFigures,
    FrontierGrowth,
    RateWindow,
    WalkFigures,
    crawl_part,
    crawl_total,
    eta_seconds,
    fit_width,
    percent,
    progress_text,
    walk_eta,
    walk_part,
    walk_total,
)

counts = st.integers(min_value=0, max_value=10**9)
small = st.integers(min_value=0, max_value=10**6)
rates = st.none() | st.floats(min_value=0, max_value=1e9, allow_nan=False)
seconds = st.floats(min_value=0, max_value=3600, allow_nan=False)


# -- the walk's total ---------------------------------------------------------------------
def test_pending_documents_count_as_the_mean_of_those_read():
    # 3 urlsets read, 300 URLs: each of the 5 pending documents is expected to list 100
    assert walk_total(300, 3, 5) == (800, False)


def test_nothing_pending_makes_the_total_exact():
    assert walk_total(612_000, 20, 0) == (612_000, True)


def test_nothing_read_yet_says_no_total():
    assert walk_total(0, 0, 4) == (None, False)


def test_only_the_expected_documents_count():
    # 8 pending, 6 of them conventional guesses: 2 counted
    assert walk_total(100, 1, 8, expected=2) == (300, False)


def test_a_url_limit_caps_the_estimate_and_ends_it_once_reached():
    assert walk_total(300, 3, 50, limit=1_000) == (1_000, False)
    assert walk_total(1_000, 3, 50, limit=1_000) == (1_000, True)


@given(counts, small, small, small, st.none() | small)
def test_the_total_is_never_below_the_urls_so_far(urls, read, pending, limit, expected):
    total, exact = walk_total(urls, read, pending, limit, expected)
    if total is not None:
        assert total >= urls
        if limit and urls < limit:
            assert total <= max(urls, limit)
    if pending == 0:
        assert (total, exact) == (urls, True)


@given(counts, st.none() | counts)
def test_a_percentage_is_in_0_to_100(done, total):
    share = percent(done, total)
    assert share is None if total is None else 0.0 <= share <= 100.0


# -- rates and ETAs -------------------------------------------------------------------------
def test_the_rate_is_measured_over_the_window():
    window = RateWindow(size=3)
    assert window.rate() is None
    for t, n in ((0, 0), (1, 100), (2, 100), (3, 400)):
        window.add(t, n)
    # the oldest sample (0 s) left the window: (400 - 100) / (3 - 1)
    assert window.rate() == 150.0


@given(st.lists(st.tuples(seconds, counts), max_size=10))
def test_a_rate_is_never_negative(samples):
    window = RateWindow()
    for when, count in samples:
        window.add(when, count)
    rate = window.rate()
    assert rate is None or rate >= 0


def test_the_host_interval_bounds_the_pace():
    assert eta_seconds(100, 50.0) == 2.0
    # one request a second at most, however fast the last pages came
    assert eta_seconds(100, 50.0, spacing=1.0) == 100.0
    assert eta_seconds(100, None, spacing=1.0) == 100.0
    assert eta_seconds(100, None) is None
    assert eta_seconds(0, None) == 0.0


@given(st.integers(min_value=-(10**6), max_value=10**9), rates, seconds)
def test_an_eta_is_never_negative(remaining, rate, spacing):
    eta = eta_seconds(remaining, rate, spacing)
    assert eta is None or eta >= 0


@given(small, small, small, small, counts, rates, seconds)
def test_a_walk_eta_is_never_negative(done, pending, read, expected, urls, rate, interval):
    figures = WalkFigures(done, pending, read, expected, urls, 0, interval)
    total, _ = walk_total(urls, read, pending, 0, expected)
    eta = walk_eta(figures, total, rate)
    assert eta is None or eta >= 0


def test_pending_documents_are_one_host_interval_apart():
    # 11 pending, one in flight: at least 10 intervals, however fast URLs came
    figures = WalkFigures(done=5, pending=11, read=5, expected=11, urls=500, interval=1.0)
    assert walk_eta(figures, 1_600, 10_000.0) == 10.0


# -- the words ------------------------------------------------------------------------------
def test_a_walk_line_with_an_estimate():
    figures = WalkFigures(done=12, pending=8, read=10, expected=8, urls=61_200, interval=0.0)
    text = walk_part(figures, 980.0)
    assert text == (
        "sitemaps 12 done / 8 pending · 61,200 of ~110,160 URLs (56%) · 980 URLs/s · ETA ~50 s"
    )


def test_a_finished_walk_is_exact_and_has_no_eta():
    figures = WalkFigures(done=20, pending=0, read=18, expected=0, urls=102_000)
    assert walk_part(figures, 0.0) == (
        "sitemaps 20 done / 0 pending · 102,000 of 102,000 URLs (100%)"
    )


def test_a_walk_not_started_or_read_says_the_count_only():
    assert walk_part(WalkFigures(0, 0, urls=0), None) == "sitemaps 0 done / 0 pending · 0 URLs"
    figures = WalkFigures(done=0, pending=1, expected=1, urls=40_000)
    assert walk_part(figures, 20_000.0) == (
        "sitemaps 0 done / 1 pending · 40,000 URLs · 20,000 URLs/s"
    )


def test_a_crawl_line_against_the_frontier_and_the_budget():
    figures = CrawlFigures(done=120, queued=340, admitted=460, budget=1_000, refusals=3)
    text = crawl_part(figures, 1.0, growth=4.0)  # 340 queued bring ~743: past the budget
    assert text == (
        "pages 120 fetched of ≤ 1,000 · 340 queued · max_pages 1,000 · 1.0 pages/s · "
        "3 refused · ETA ≥ 6 min (≤ 15 min to max_pages)"
    )


def test_a_crawl_whose_budget_is_all_admitted_has_an_eta():
    figures = CrawlFigures(done=700, queued=300, admitted=1_000, budget=1_000, interval=1.0)
    assert crawl_part(figures, 4.0, growth=3.0) == (
        "pages 700 fetched of 1,000 (70%) · 300 queued · max_pages 1,000 reached · "
        "4.0 pages/s · 0 refused · ETA 5 min"
    )


def test_a_budget_given_as_a_setting_is_named_by_it():
    figures = CrawlFigures(done=1, queued=3, admitted=4, budget=10, budget_name="BFS_MAX_PAGES")
    assert "· BFS_MAX_PAGES 10 ·" in crawl_part(figures, None)


def test_a_crawl_without_a_budget_before_any_rate_uses_the_interval():
    figures = CrawlFigures(done=1, queued=30, admitted=31, interval=1.0)
    assert crawl_part(figures, None) == (
        "pages 1 fetched of ≥ 31 · 30 queued · 0 refused · ETA ≥ 30 s (the pages known so far)"
    )


def test_a_crawl_whose_frontier_slows_has_an_estimate():
    # 0.5 new page per page fetched lately, 3/7 of the known pages still queued:
    # 300 × 0.5 × (3/7)² = 27.6 more
    figures = CrawlFigures(done=400, queued=300, admitted=700)
    assert crawl_part(figures, 2.0, growth=0.5) == (
        "pages 400 fetched of ~728 (55%) · 300 queued · 2.0 pages/s · 0 refused · ETA ~3 min"
    )


def test_a_crawl_over_says_its_pages_and_no_eta():
    figures = CrawlFigures(done=250, queued=0, admitted=250)
    assert crawl_part(figures, 0.0, growth=0.0) == (
        "pages 250 fetched of 250 (100%) · 0 queued · 0.0 pages/s · 0 refused"
    )


def test_frontier_growth_is_pages_admitted_per_page_done():
    growth = FrontierGrowth()
    assert growth.per_page() is None
    growth.add(10, 40)
    growth.add(10, 40)  # a report with no page done is not a sample
    assert growth.per_page() is None
    growth.add(20, 70)
    assert growth.per_page() == 3.0
    growth.add(60, 80)  # since half of 60 pages: from (20, 70)
    assert growth.per_page() == 0.25
    growth.add(70, 80)  # since half of 70: from (60, 80)
    assert growth.per_page() == 0.0


def test_frontier_growth_keeps_a_bounded_history():
    growth = FrontierGrowth()
    for done in range(1, 20_000):
        growth.add(done, 2 * done)
    assert len(growth.samples) <= 4097 and growth.samples[-1] == (19_999, 39_998)
    assert growth.per_page() == 2.0


@given(
    small, small, st.none() | st.floats(0, 50, allow_nan=False), st.none() | small, st.booleans()
)
def test_a_crawl_total_is_never_below_fetched_plus_queued(done, queued, growth, budget, full):
    """The pages known (fetched + queued) are a floor; a budget is a ceiling unless the
    known pages already pass it; a total short of the known is never said, nor a 100 %
    while pages are queued."""
    total, sure = crawl_total(done, queued, growth, budget or None, full)
    assert total >= done + queued
    if budget and sure != EXACT:
        assert total <= max(budget, done + queued)
    if queued and sure in (EXACT, ESTIMATE):
        assert (percent(done, total) or 0.0) < 100.0


@given(small, st.integers(1, 10**6), st.floats(0, 0.89, allow_nan=False))
def test_a_crawl_estimate_grows_with_the_growth_per_page(done, queued, growth):
    lower, _ = crawl_total(done, queued, growth * 0.5)
    higher, sure = crawl_total(done, queued, growth)
    assert sure == ESTIMATE and lower <= higher


def test_the_line_joins_its_parts_and_fits_a_terminal():
    text = progress_text(["sitemaps 1 done / 0 pending", "pages 2 fetched"], " · kinds: page 2")
    assert text == "Progress: sitemaps 1 done / 0 pending | pages 2 fetched · kinds: page 2"
    assert fit_width(text, 20) == "Progress: sitemaps …"
    assert len(fit_width(text, 20)) == 20
    assert fit_width(text, 0) == text
