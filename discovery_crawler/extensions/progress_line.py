"""The progress line, every ``PROGRESS_INTERVAL`` seconds (``ProgressReport`` runs it and
finishes it before the summary)::

    Progress: sitemaps 12 done / 8 pending · 61,200 of ~102,000 URLs (60%) · ETA ~42 s
    Progress: pages 340 fetched of ~900 (38%) · 560 queued · 1.0 pages/s · 3 refused · ETA ~9 min

(a union run shows both parts, ``|`` between them; once its sitemaps are read, their part
says ``sitemaps 20/20 done · 102,000 URLs listed``). The figures come from the run's record
(the sitemap attempts, the crawl's account, the refusals, the throttle's intervals); the
estimate and the words are ``progress_figures.py``'s.

Where it goes (``PROGRESS_TTY``): ``auto`` rewrites one line in place on stdout when stdout
is a terminal (and no feed is written there), else logs a line each time, as Scrapy's
LogStats does; ``always`` / ``never`` force either. Scrapy logs to stderr, usually the same
terminal: so the line is not broken by a log line, the terminal's log handlers erase it
before each record and it is drawn again after it, and they leave the progress records out
(a log file, or stderr redirected, still gets every one of them). The run's end leaves the
last line on the screen, with its newline.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import urlsplit

from scrapy.utils.asyncio import create_looping_call

from discovery_crawler.estimate import human_duration
from discovery_crawler.extensions.run import run_of
from discovery_crawler.progress_figures import (
    CrawlFigures,
    FrontierGrowth,
    RateWindow,
    WalkFigures,
    crawl_part,
    fit_width,
    progress_text,
    walk_part,
)

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

    from discovery_crawler.run_record import RunRecord

logger = logging.getLogger(__name__)

TTY_MODES = ("auto", "always", "never")
_ERASE = "\r\x1b[K"  # back to the line's start, clear to its end


def kinds_line(record: RunRecord) -> str:
    """The tally of all seven kinds, zeros included (SPEC §5)."""
    return " · ".join(f"{kind} {n:,}" for kind, n in record.kinds.items())


def verify_progress(record: RunRecord) -> str:
    """`` · verify 120 / 3,400 answered, ≥ 54 min left`` while verify fetches (or '')."""
    verify = getattr(record, "verify", None)
    if verify is None or verify.mode != "fetch" or not verify.queued:
        return ""
    left = verify.expected_seconds(verify.waiting)
    eta = f", ≥ {human_duration(left)} left" if left else ""
    return f" · verify {verify.returned:,} / {verify.queued:,} answered{eta}"


def site_interval(record: RunRecord, default: float) -> float:
    """The site's host interval (HOST_INTERVAL, raised by its Crawl-delay), as the throttle
    has it now."""
    throttle = record.throttle
    site = record.site_origin
    if throttle is None or not site or not hasattr(throttle, "interval_for"):
        return default
    return float(throttle.interval_for((urlsplit(site).hostname or "").lower()))


def walk_figures(record: RunRecord, limit: int, interval: float) -> WalkFigures | None:
    """The walk's figures, or None when the run walks no sitemap."""
    attempts = record.attempts
    if not attempts and record.robots is None:
        return None
    read = expected = 0
    for attempt in attempts.values():
        if attempt.error is None and attempt.format is None:  # not read yet
            if attempt.source != "conventional":
                expected += 1
        elif attempt.urls > 0 and not attempt.index:
            read += 1
    crawl = record.crawl
    union = getattr(crawl, "union", None) if crawl is not None else None
    if crawl is None:
        urls: int | None = record.discovered
    else:  # the crawl's records count in the inventory too: the sitemaps' own, if kept
        urls = union.listed_count if union is not None else None
    return WalkFigures(
        done=record.sitemaps_done,
        pending=record.sitemaps_pending,
        read=read,
        expected=expected,
        urls=urls,
        limit=limit,
        interval=interval,
        part=crawl is not None,
    )


def crawl_figures(
    record: RunRecord, interval: float, budget_name: str = "max_pages"
) -> CrawlFigures | None:
    """The link crawl's figures, or None before its first request."""
    crawl = record.crawl
    if crawl is None:
        return None
    refusals = record.refusals
    refused = refusals.total if refusals is not None else sum(crawl.refusal_classes.values())
    return CrawlFigures(
        done=crawl.done,
        queued=crawl.queued,
        admitted=crawl.requested,
        budget=crawl.max_pages,
        refusals=refused,
        interval=interval,
        budget_name=budget_name,
    )


def feeds_to_stdout(feeds: Any) -> bool:
    """A feed written to stdout (``-o -``, ``stdout:``): no line may go there."""
    return any(str(uri) == "-" or str(uri).startswith("stdout:") for uri in feeds)


def _is_tty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # closed, or no isatty
        return False


class LiveLine:
    """One line rewritten in place on a terminal stream, kept clear of log lines: the
    terminal's handlers erase it before a record (``filter``) and the handler this adds
    after them draws it again (``emit``)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.text = ""
        self.shown = False
        self._handlers: list[logging.Handler] = []
        self._redraw = _Redraw(self)

    def attach(self) -> None:
        """Watch the root logger's handlers that write to a terminal."""
        for handler in logging.root.handlers:
            if isinstance(handler, logging.StreamHandler) and _is_tty(handler.stream):
                handler.addFilter(self.filter)
                self._handlers.append(handler)
        logging.root.addHandler(self._redraw)

    def detach(self) -> None:
        for handler in self._handlers:
            handler.removeFilter(self.filter)
        self._handlers = []
        logging.root.removeHandler(self._redraw)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == logger.name and getattr(record, "progress_line", False):
            return False  # on the terminal, the line in place says it
        self.erase()
        return True

    def width(self) -> int:
        try:
            return os.get_terminal_size(self.stream.fileno()).columns - 1
        except (AttributeError, ValueError, OSError):
            return 0  # not a terminal (PROGRESS_TTY=always): not cut

    def show(self, text: str) -> None:
        self.text = text
        self.draw()

    def draw(self) -> None:
        if not self.text:
            return
        self._write("\r" + fit_width(self.text, self.width()) + "\x1b[K")
        self.shown = True

    def erase(self) -> None:
        if self.shown:
            self._write(_ERASE)
            self.shown = False

    def end(self) -> None:
        """Leave the last line on the screen, with its newline."""
        if self.text:
            self.draw()
            self._write("\n")
        self.shown = False

    def _write(self, data: str) -> None:
        try:
            self.stream.write(data)
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away: the log still has the lines
            pass


class _Redraw(logging.Handler):
    """After the terminal's handlers wrote a record, the live line again."""

    def __init__(self, line: LiveLine) -> None:
        super().__init__()
        self.line = line

    def emit(self, record: logging.LogRecord) -> None:
        if not self.line.shown and self.line._handlers:
            self.line.draw()


class ProgressLine:
    """Every ``PROGRESS_INTERVAL`` seconds, the run's progress (off at 0)."""

    def __init__(
        self,
        crawler: Crawler,
        interval: float,
        tty: str = "auto",
        stream: TextIO | None = None,
    ) -> None:
        self.crawler = crawler
        self.interval = interval
        settings = crawler.settings
        self.url_limit = max(0, settings.getint("SITEMAP_MAX_URLS"))
        self.host_interval = max(0.0, settings.getfloat("HOST_INTERVAL"))
        self.stream = stream if stream is not None else sys.stdout
        if tty not in TTY_MODES:
            logger.warning("PROGRESS_TTY=%r is not one of %s: auto", tty, ", ".join(TTY_MODES))
            tty = "auto"
        feeds = settings.getdict("FEEDS")
        live = tty == "always" or (
            tty == "auto" and _is_tty(self.stream) and not feeds_to_stdout(feeds)
        )
        self.live = LiveLine(self.stream) if live and interval > 0 else None
        self.task: Any = None
        self.record: RunRecord | None = None
        self.walk_rate = RateWindow()
        self.crawl_rate = RateWindow()
        self.growth = FrontierGrowth()
        self.run: Any = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        return cls(
            crawler,
            settings.getfloat("PROGRESS_INTERVAL"),
            str(settings.get("PROGRESS_TTY", "auto")).strip().lower(),
        )

    def start(self) -> None:
        run = run_of(self.crawler)
        if self.interval <= 0 or run is None:
            return
        self.record = run.record
        self.run = run
        if self.live is not None:
            self.live.attach()
        self.task = create_looping_call(self.tick)
        self.task.start(self.interval, now=False)

    def text(self, now: float | None = None) -> str:
        """The line now (each call is a report: it moves the rates' windows)."""
        record = self.record
        assert record is not None
        now = time.monotonic() if now is None else now
        interval = site_interval(record, self.host_interval)
        parts = []
        walk = walk_figures(record, self.url_limit, interval)
        if walk is not None:
            rate = None
            if walk.urls is not None:
                self.walk_rate.add(now, walk.urls)
                rate = self.walk_rate.rate()
            parts.append(walk_part(walk, rate))
        # max_pages, or the setting that set it: as the link crawl names it
        budget_name = getattr(getattr(self.run, "links", None), "pages_name", "max_pages")
        crawl = crawl_figures(record, interval, budget_name)
        if crawl is not None:
            self.crawl_rate.add(now, crawl.done)
            self.growth.add(crawl.done, crawl.admitted)
            parts.append(crawl_part(crawl, self.crawl_rate.rate(), self.growth.per_page()))
        if walk is None and crawl is None:
            parts.append(f"{record.discovered:,} URLs")
        kinds = f" · kinds: {kinds_line(record)}" if any(record.kinds.values()) else ""
        return progress_text(parts, verify_progress(record) + kinds)

    def tick(self) -> None:
        text = self.text()
        # Logged either way: a log file (or stderr redirected) keeps every line; the
        # terminal's handlers leave it out while the line in place says it.
        logger.info("%s", text, extra={"progress_line": self.live is not None})
        if self.live is not None:
            self.live.show(text)

    def finish(self) -> None:
        """Stop; on a terminal, the last line stays with its newline (before the summary)."""
        if self.task is not None and self.task.running:
            self.task.stop()
        if self.live is not None:
            if self.record is not None and self.live.text:
                self.live.text = self.text()  # the run's last figures
            self.live.end()
            self.live.detach()
