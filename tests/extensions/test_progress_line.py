"""``extensions/progress_line.py``: the line read from the run's record, logged or rewritten
in place, and kept clear of the log's own lines on a terminal."""

from __future__ import annotations

import io
import logging

import pytest

from discovery_crawler.crawling.account import CrawlAccount, UnionTally
from discovery_crawler.extensions.host_intervals import HostIntervals
from discovery_crawler.extensions.progress_line import LiveLine, ProgressLine, feeds_to_stdout
from discovery_crawler.sitemaps.attempts import SitemapAttempt
from tests.pipelines.helpers import SITE, crawler_for, run_for


class FakeTerminal(io.StringIO):
    """A stream that says it is a terminal (its size unknown: lines are not cut)."""

    def isatty(self) -> bool:
        return True


def line_for(settings: dict | None = None, stream: io.StringIO | None = None) -> ProgressLine:
    crawler = crawler_for({"PROGRESS_INTERVAL": 1.0, **(settings or {})})
    settings_ = crawler.settings
    line = ProgressLine(
        crawler,
        settings_.getfloat("PROGRESS_INTERVAL"),
        str(settings_.get("PROGRESS_TTY")),
        stream=stream if stream is not None else io.StringIO(),
    )
    line.record = run_for(crawler).record
    return line


def attempt(url: str, source: str, *, urls: int = 0, read: bool = True, index: bool = False):
    found = SitemapAttempt(SITE + url, source)
    if read:
        found.status, found.format, found.urls, found.index = 200, "urlset", urls, index
        found.ok = True
    return found


def walk_of(line: ProgressLine, discovered: int) -> None:
    """An index read, two of its children read (100 URLs each), three pending, and two
    conventional addresses not answered yet."""
    record = line.record
    found = [
        attempt("/index.xml", "input", index=True),
        attempt("/a.xml", "index", urls=100),
        attempt("/b.xml", "index", urls=100),
        *(attempt(f"/c{i}.xml", "index", read=False) for i in range(3)),
        *(attempt(f"/guess{i}.xml", "conventional", read=False) for i in range(2)),
    ]
    record.attempts = {a.url: a for a in found}
    record.sitemaps_done, record.sitemaps_pending = 3, 5
    record.counts["discovered"] = discovered


def test_the_walk_is_measured_against_its_estimated_total():
    line = line_for()
    walk_of(line, 200)
    # 200 URLs from 2 urlsets; 3 children pending (the 2 guesses do not count): ~500
    text = line.text(now=0.0)
    assert text.startswith("Progress: sitemaps 3 done / 5 pending · 200 of ~500 URLs (40%)")
    line.record.counts["discovered"] = 300
    text = line.text(now=2.0)
    assert "300 of ~750 URLs (40%) · 50 URLs/s · ETA ~" in text


def test_the_url_limit_caps_the_walks_total():
    line = line_for({"SITEMAP_MAX_URLS": 400})
    walk_of(line, 200)
    assert "200 of ~400 URLs (50%)" in line.text(now=0.0)


def test_the_crawl_is_measured_against_its_budget_and_frontier():
    line = line_for({"HOST_INTERVAL": 0})
    record = line.record
    crawl = record.crawl = CrawlAccount(10, max_pages=50, max_depth=None)
    crawl.requested, crawl.fetched, crawl.failed = 20, 9, 2
    crawl.slash_redirects.append({"url": SITE + "/a", "to": SITE + "/a/"})  # 1 page, 2 answers
    crawl.refused(SITE + "/x", {"class": "wall"}, None)
    # no growth measured yet: at most the budget, named as given (-a max_pages)
    assert line.text(now=0.0) == (
        "Progress: pages 10 fetched of ≤ 50 · 10 queued · max_pages 50 · 1 refused"
    )
    crawl.fetched += 4  # four pages done, none admitted: the frontier no longer grows
    assert line.text(now=2.0) == (
        "Progress: pages 14 fetched of ~20 (70%) · 6 queued · max_pages 50 · 2.0 pages/s · "
        "1 refused · ETA ~3 s"
    )


def test_the_crawl_estimate_settles_as_the_frontier_stops_growing():
    line = line_for({"HOST_INTERVAL": 0})
    crawl = line.record.crawl = CrawlAccount(10, max_pages=None, max_depth=None)
    crawl.requested, crawl.fetched = 40, 10  # each page so far brought three
    line.text(now=0.0)
    crawl.requested, crawl.fetched = 70, 20  # three more each: still growing
    # 50 queued, 3 each, damped by (50/70)², the known pages still queued: 77 more
    assert "pages 20 fetched of ~147 (14%) · 50 queued" in line.text(now=10.0)
    crawl.requested, crawl.fetched = 80, 60  # 10 new pages for the last 40 fetched
    # since half of 60 pages, 0.25 per page: 20 queued × 0.25 × (20/80)² bring 1 more
    assert "pages 60 fetched of ~81 (74%) · 20 queued" in line.text(now=20.0)


def test_the_sites_interval_paces_the_crawl():
    line = line_for()
    record = line.record
    record.site_origin = SITE
    record.throttle = HostIntervals(interval=2.0)
    crawl = record.crawl = CrawlAccount(10, max_pages=None, max_depth=None)
    crawl.requested, crawl.fetched = 31, 1
    # 30 queued, one request per 2 s to the site's host
    assert "pages 1 fetched of ≥ 31 · 30 queued" in line.text(now=0.0)
    assert "ETA ≥ 60 s (the pages known so far)" in line.text(now=0.0)


def test_a_union_run_shows_both_parts():
    line = line_for()
    walk_of(line, 0)
    record = line.record
    crawl = record.crawl = CrawlAccount(10, max_pages=None, max_depth=None)
    crawl.union = UnionTally(10)
    for i in range(200):
        crawl.union.listed(f"k{i}", f"{SITE}/p{i}/")
    crawl.requested, crawl.fetched = 5, 2
    text = line.text(now=0.0)
    walk, pages = text.removeprefix("Progress: ").split(" | ")
    assert walk.startswith("sitemaps 3 done / 5 pending · 200 of ~500 URLs (40%)")
    assert pages.startswith("pages 2 fetched of ≥ 5 · 3 queued")
    record.sitemaps_pending, record.sitemaps_done = 0, 8  # the walk's part is over
    walk, _ = line.text(now=1.0).removeprefix("Progress: ").split(" | ")
    assert walk == "sitemaps 8/8 done · 200 URLs listed"  # not "(100%)": the crawl goes on


def test_not_on_a_terminal_it_logs_a_line(caplog):
    stream = io.StringIO()
    line = line_for(stream=stream)
    walk_of(line, 200)
    assert line.live is None
    with caplog.at_level(logging.INFO):
        line.tick()
    assert any("of ~500 URLs" in r.getMessage() for r in caplog.records)
    assert stream.getvalue() == ""


def test_on_a_terminal_it_rewrites_one_line_and_ends_it():
    stream = FakeTerminal()
    line = line_for(stream=stream)
    walk_of(line, 200)
    assert line.live is not None
    line.tick()
    line.record.counts["discovered"] = 300
    line.tick()
    line.finish()
    out = stream.getvalue()
    assert out.count("\rProgress: ") == 3  # two reports and the last one, left on screen
    assert out.count("\x1b[K") == 3
    assert out.endswith("\x1b[K\n") and out.count("\n") == 1


@pytest.mark.parametrize(
    ("mode", "terminal", "live"),
    [("auto", True, True), ("auto", False, False), ("never", True, False), ("always", False, True)],
)
def test_progress_tty_forces_either(mode, terminal, live):
    stream = FakeTerminal() if terminal else io.StringIO()
    line = line_for({"PROGRESS_TTY": mode}, stream=stream)
    assert (line.live is not None) is live


def test_a_feed_on_stdout_keeps_the_line_off_it():
    assert feeds_to_stdout({"stdout:": {"format": "jsonl"}})
    assert not feeds_to_stdout({"/tmp/inventory.jsonl": {}})
    line = line_for({"FEEDS": {"stdout:": {"format": "jsonl"}}}, stream=FakeTerminal())
    assert line.live is None


def test_a_bad_progress_tty_is_said_and_read_as_auto(caplog):
    with caplog.at_level(logging.WARNING):
        line = line_for({"PROGRESS_TTY": "sometimes"}, stream=FakeTerminal())
    assert line.live is not None
    assert "PROGRESS_TTY='sometimes'" in caplog.text


def test_log_lines_on_the_terminal_erase_the_line_and_it_comes_back():
    terminal = FakeTerminal()
    handler = logging.StreamHandler(terminal)  # as Scrapy's root handler on stderr
    logging.root.addHandler(handler)
    live = LiveLine(terminal)
    try:
        live.attach()
        live.show("Progress: 1")
        logging.getLogger("scrapy.core.engine").warning("Closing spider")
        # the progress record itself stays off the terminal: the line says it
        logging.getLogger("discovery_crawler.extensions.progress_line").warning(
            "Progress: 2", extra={"progress_line": True}
        )
    finally:
        live.detach()
        logging.root.removeHandler(handler)
    assert terminal.getvalue() == (
        "\rProgress: 1\x1b[K"  # drawn
        "\r\x1b[K"  # erased before the log line
        "Closing spider\n"
        "\rProgress: 1\x1b[K"  # drawn again after it
    )
    assert live.filter not in handler.filters
