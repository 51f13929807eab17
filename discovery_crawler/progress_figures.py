"""The progress line's figures and words, as plain functions (no Scrapy): how many URLs a
sitemap walk will list (estimated from the documents read), how fast things go (a rate
smoothed over the last few reports), how long is left, and the line itself.

A sitemap walk's total is the URLs so far plus, for each document known but not read yet
(an index's child, a robots.txt ``Sitemap:`` line), the mean of the documents read that
listed URLs; a guessed conventional address is not counted (most answer 404). It is an
estimate (``~``) until nothing is pending, then exact; a URL limit caps it.

A link crawl's total is the pages fetched plus its frontier (pages requested, not yet
answered), plus what the frontier will still add: the pages fetched over the last half of
the crawl each admitted ``g`` new pages (the frontier's growth per page), and each queued
page is expected to bring ``g`` too, damped by the square of the share of the known pages
still queued (in a breadth-first crawl, the later a page comes the more of its links point
to pages already known): ``known + queued·g·(queued/known)²``, known = fetched + queued.
Before ``g`` is measured the total is a lower bound (``≥``, fetched + queued). How far
its ETA was off, on a real site and a generated one, is in ``bench/README.md``. A budget
(``max_pages``) caps it; once it is all admitted the frontier is all that is left (exact).
One host is asked once per interval: a page takes at least that long, whatever the rate.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import deque
from dataclasses import dataclass

from discovery_crawler.estimate import human_duration

RATE_WINDOW = 6  # reports a rate is measured over: smooths the walk's document-sized bursts
GROWTH_SAMPLES = 4096  # (done, admitted) pairs kept; past it every other one is dropped


class RateWindow:
    """Counts of something at the last few reports; their rate per second."""

    __slots__ = ("samples",)

    def __init__(self, size: int = RATE_WINDOW) -> None:
        self.samples: deque[tuple[float, int]] = deque(maxlen=max(2, size))

    def add(self, when: float, count: int) -> None:
        self.samples.append((when, count))

    def rate(self) -> float | None:
        """Per second over the window (never negative), or None before two reports."""
        if len(self.samples) < 2:
            return None
        (t0, n0), (t1, n1) = self.samples[0], self.samples[-1]
        if t1 <= t0:
            return None
        return max(0.0, (n1 - n0) / (t1 - t0))


class FrontierGrowth:
    """Pages admitted against pages done at each report: how many new pages one page
    fetched over the last half of the crawl added to the frontier."""

    __slots__ = ("samples",)

    def __init__(self) -> None:
        self.samples: list[tuple[int, int]] = []  # (done, admitted), done never falling

    def add(self, done: int, admitted: int) -> None:
        if self.samples and self.samples[-1][0] >= done:
            self.samples[-1] = (self.samples[-1][0], max(self.samples[-1][1], admitted))
            return
        self.samples.append((done, admitted))
        if len(self.samples) > GROWTH_SAMPLES:
            self.samples = self.samples[::2] + (
                [self.samples[-1]] if len(self.samples) % 2 == 0 else []
            )

    def per_page(self) -> float | None:
        """New pages admitted per page done since half the pages done now (never
        negative); None before two reports with pages done between them."""
        if len(self.samples) < 2:
            return None
        done, admitted = self.samples[-1]
        at = bisect_left(self.samples, (done / 2, -1))
        d0, a0 = self.samples[min(at, len(self.samples) - 2)]
        if done <= d0:
            return None
        return max(0.0, (admitted - a0) / (done - d0))


EXACT, ESTIMATE, AT_LEAST, AT_MOST = "", "~", "≥ ", "≤ "


def crawl_total(
    done: int, queued: int, growth: float | None, budget: int | None = None, full: bool = False
) -> tuple[int, str]:
    """(the pages the crawl will have done in all, how sure: ``EXACT``, ``ESTIMATE``,
    ``AT_LEAST`` or ``AT_MOST``). ``full``: the budget is all admitted, no page is added."""
    done, queued = max(0, done), max(0, queued)
    known = done + queued
    if full or queued == 0:
        return known, EXACT  # nothing more is admitted, or nothing left (or not begun)
    if growth is None:
        total, sure = known, AT_LEAST
    else:
        more = round(queued * growth * (queued / known) ** 2, 6)  # 80, not 80.00000000001
        total, sure = known + math.ceil(more), ESTIMATE
    if budget and total >= budget:
        return max(known, budget), AT_MOST  # the budget binds before the estimate
    if budget and sure == AT_LEAST:
        return budget, AT_MOST  # between fetched + queued and the budget
    return total, sure


def eta_seconds(remaining: float, rate: float | None, spacing: float = 0.0) -> float | None:
    """Seconds ``remaining`` items take at ``rate`` per second, each at least ``spacing``
    seconds apart (a host's interval); None when neither says anything. Never negative."""
    if remaining <= 0:
        return 0.0
    per_item = 1.0 / rate if rate is not None and rate > 0 else None
    if spacing > 0:
        per_item = max(per_item or 0.0, spacing)
    if per_item is None or not math.isfinite(per_item):
        return None
    return remaining * per_item


def walk_total(
    urls: int, read: int, pending: int, limit: int = 0, expected: int | None = None
) -> tuple[int | None, bool]:
    """(the URLs the walk will list, exact): ``urls`` so far from ``read`` documents that
    listed URLs, ``pending`` documents still to read, ``expected`` of them counted in the
    estimate (default: all); capped by ``limit`` (0 = none). (None, False) when nothing
    read says what to expect. Never less than ``urls``."""
    urls = max(0, urls)
    if limit > 0 and urls >= limit:
        return urls, True  # the limit is reached: no document adds a URL
    if pending <= 0:
        return urls, True
    if read <= 0:
        return None, False
    counted = pending if expected is None else min(max(0, expected), pending)
    total = urls + math.ceil(urls * counted / read)
    if limit > 0:
        total = min(total, limit)
    return max(urls, total), False


def percent(done: int, total: int | None) -> float | None:
    """``done`` of ``total`` in [0, 100], or None without a total."""
    if total is None:
        return None
    if total <= 0:
        return 100.0
    return min(100.0, max(0.0, 100.0 * done / total))


@dataclass(frozen=True)
class WalkFigures:
    """The sitemap walk, now: documents done and pending (all of them), the documents read
    that listed URLs and the pending ones the estimate counts, the URLs so far (None: not
    counted here, another part of the run lists them), the URL limit, the host interval."""

    done: int
    pending: int
    read: int = 0
    expected: int = 0
    urls: int | None = None
    limit: int = 0
    interval: float = 0.0
    part: bool = False  # a link crawl runs too: the walk's end is its part's, not the run's


@dataclass(frozen=True)
class CrawlFigures:
    """The link crawl, now: pages done (answered or failed), queued (requested, not yet
    over), admitted (what ``max_pages`` counts), the budget and its name as the person
    gave it, refusals so far, the interval."""

    done: int
    queued: int
    admitted: int
    budget: int | None = None
    refusals: int = 0
    interval: float = 0.0
    budget_name: str = "max_pages"

    @property
    def budget_full(self) -> bool:
        """No more page is admitted: the frontier is all the crawl has left."""
        return bool(self.budget) and self.admitted >= (self.budget or 0)


def walk_eta(figures: WalkFigures, total: int | None, rate: float | None) -> float | None:
    """Seconds left in the walk: its URLs left at the recent rate, and at least the pending
    documents (one in flight apart) one host interval apart."""
    if figures.urls is None or total is None:
        return None
    by_urls = eta_seconds(total - figures.urls, rate)
    by_documents = max(0, figures.pending - 1) * max(0.0, figures.interval)
    if by_urls is None:
        return by_documents or None
    return max(by_urls, by_documents)


def eta_words(seconds: float) -> str:
    """``< 1 s``, ``42 s``, ``6 min``, ``2.5 h``."""
    return "< 1 s" if seconds < 1 else human_duration(seconds)


def walk_part(figures: WalkFigures, rate: float | None) -> str:
    """``sitemaps 12 done / 8 pending · 61,200 of ~102,000 URLs (60%) · 980 URLs/s · ETA ~42 s``;
    once nothing is pending, ``sitemaps 20 done / 0 pending · 102,000 of 102,000 URLs (100%)``,
    or, when a link crawl runs too, ``sitemaps 20/20 done · 102,000 URLs listed`` (the
    sitemaps' part is over, not the run)."""
    over = figures.done > 0 and figures.pending == 0
    if over and figures.part:
        listed = "" if figures.urls is None else f" · {figures.urls:,} URLs listed"
        return f"sitemaps {figures.done:,}/{figures.done:,} done{listed}"
    text = f"sitemaps {figures.done:,} done / {figures.pending:,} pending"
    if figures.urls is None:
        return text
    urls = figures.urls
    started = figures.done or figures.pending
    total, exact = (
        walk_total(urls, figures.read, figures.pending, figures.limit, figures.expected)
        if started
        else (None, False)
    )
    if total is None or total == 0:
        text += f" · {urls:,} URLs"
    else:
        share = percent(urls, total) or 0.0
        text += f" · {urls:,} of {'' if exact else '~'}{total:,} URLs ({share:.0f}%)"
    if over:
        return text
    if rate is not None:
        text += f" · {rate:,.0f} URLs/s"
    eta = walk_eta(figures, total, rate)
    if eta is not None:
        text += f" · ETA {'' if exact or eta < 1 else '~'}{eta_words(eta)}"
    return text


def crawl_eta(figures: CrawlFigures, total: int, rate: float | None) -> float | None:
    """Seconds left in the link crawl: its pages left at the recent rate, one host
    interval apart at least."""
    return eta_seconds(total - figures.done, rate, figures.interval)


def crawl_part(figures: CrawlFigures, rate: float | None, growth: float | None = None) -> str:
    """``pages 340 fetched of ~900 (38%) · 560 queued · 1.0 pages/s · 3 refused · ETA ~9 min``;
    ``of ≥ 460`` while the frontier grows as fast as it is fetched, ``of ≤ 1,000`` when
    ``max_pages`` binds first (then the ETA is a range: at least the frontier's, at most
    the budget's)."""
    total, sure = crawl_total(
        figures.done, figures.queued, growth, figures.budget, figures.budget_full
    )
    text = f"pages {figures.done:,} fetched"
    if figures.done or figures.queued:
        text += f" of {sure}{total:,}"
        if sure in (EXACT, ESTIMATE) and total:
            text += f" ({percent(figures.done, total) or 0.0:.0f}%)"
    text += f" · {figures.queued:,} queued"
    if figures.budget:
        reached = " reached" if figures.budget_full else ""
        text += f" · {figures.budget_name} {figures.budget:,}{reached}"
    if rate is not None:
        text += f" · {rate:,.1f} pages/s"
    text += f" · {figures.refusals:,} refused"
    if not figures.queued:
        return text  # nothing queued: the crawl is over, or waits for the sitemaps
    if sure == AT_MOST:  # between the frontier and the budget
        least = eta_seconds(figures.queued, rate, figures.interval)
        most = crawl_eta(figures, total, rate)
        if least is None or most is None:
            return text
        text += f" · ETA ≥ {human_duration(least)}"
        if human_duration(most) != human_duration(least):
            text += f" (≤ {human_duration(most)} to {figures.budget_name})"
        return text
    eta = crawl_eta(figures, total, rate)
    if eta is None:
        return text
    if sure == AT_LEAST:
        return text + f" · ETA ≥ {human_duration(eta)} (the pages known so far)"
    return text + f" · ETA {'' if sure == EXACT or eta < 1 else '~'}{eta_words(eta)}"


def progress_text(parts: list[str], extra: str = "") -> str:
    """The line: ``Progress: <walk> | <crawl><extra>``."""
    return "Progress: " + (" | ".join(parts) or "starting") + extra


def fit_width(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters (its end an ellipsis): a terminal line that
    wraps can no longer be rewritten in place."""
    if width <= 0 or len(text) <= width:
        return text
    return text[: max(0, width - 1)] + "…"
