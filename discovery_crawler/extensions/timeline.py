"""The run's timeline (the crawl log's ``timeline``, drawn by report.html): per host and
per bucket of time, the requests that reached the downloader and the page fetches
refused; each host's interval as it changed; the holds it went through.

An extension that only listens, as Scrapy's ``LogStats`` does:

* ``request_left_downloader``: a request the network answered or failed (robots.txt,
  sitemaps, pages, retries: everything that went to the network), counted when its
  download ended. Not ``request_reached_downloader``: a request reaches the downloader
  when it joins its host's slot queue, and with a host interval a whole batch joins at
  once and waits there, so a 7-request run over 6 s at one a second was drawn as 7 in
  its first second. A response answered by a downloader middleware — a resumed job's
  journal (``job/responses_replayed``), a chunk's held request (``chunk/held``), an HTTP
  cache's hit — never reaches the downloader, so the requests add up to
  ``downloader/request_count`` less those (and less any still in flight when the run
  stopped);
* ``page_refused`` (``signals.py``, the refusal middleware): a page fetch refused or failed,
  counted where the refusal is recorded;
* ``host_interval`` and ``host_held`` (the host throttle): the interval in force from then
  on, and the back-offs, Retry-After holds, pauses and hosts given up.

Times are seconds from the run's start (``record.started``, as ``elapsed_seconds``). The
counting is ``timeline_buckets.Timeline``'s: ``TIMELINE_MAX_BUCKETS`` buckets at most
(they widen as the run goes on), ``TIMELINE_MAX_HOSTS`` hosts of their own, the events
listed up to ``CRAWL_LOG_LIST_CAP``. Off with ``TIMELINE_ENABLED = False``
(``NotConfigured``); without a discovery run it counts, and nothing writes it.
"""

from __future__ import annotations

from time import monotonic
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.httpobj import urlparse_cached

from discovery_crawler.extensions.run import run_of
from discovery_crawler.extensions.timeline_buckets import Timeline
from discovery_crawler.signals import host_held, host_interval, page_refused

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler


class RunTimeline:
    """Fills the run record's ``timeline`` from downloader, refusal and throttle signals."""

    def __init__(self, crawler: Crawler, timeline: Timeline):
        self.crawler = crawler
        self.timeline = timeline
        self.start = monotonic()
        connect = crawler.signals.connect
        connect(self.spider_opened, signal=signals.spider_opened)
        connect(self.request_left_downloader, signal=signals.request_left_downloader)
        connect(self.page_refused, signal=page_refused)
        connect(self.host_interval, signal=host_interval)
        connect(self.host_held, signal=host_held)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        if not settings.getbool("TIMELINE_ENABLED", True):
            raise NotConfigured("TIMELINE_ENABLED is off")
        timeline = Timeline(
            max_buckets=max(1, settings.getint("TIMELINE_MAX_BUCKETS", 600)),
            max_hosts=settings.getint("TIMELINE_MAX_HOSTS", 20),
            list_cap=settings.getint("CRAWL_LOG_LIST_CAP", 1000),
        )
        return cls(crawler, timeline)

    def spider_opened(self) -> None:
        # The run exists once every extension is built: the timeline hangs on its record
        # and counts from its start (the crawl log's elapsed_seconds).
        run = run_of(self.crawler)
        if run is not None:
            run.record.timeline = self.timeline
            self.start = run.record.started

    def now(self) -> float:
        return monotonic() - self.start

    def request_left_downloader(self, request: Request, spider: Any = None) -> None:
        self.timeline.request(_origin(request), self.now())

    def page_refused(self, request: Request, refusal: Any = None) -> None:
        self.timeline.refusal(_origin(request), self.now())

    def host_interval(self, origin: str, seconds: float) -> None:
        self.timeline.interval(origin, self.now(), seconds)

    def host_held(self, origin: str, kind: str, seconds: float) -> None:
        self.timeline.event(origin, self.now(), kind, seconds)


def _origin(request: Request) -> str:
    parts = urlparse_cached(request)
    return f"{parts.scheme}://{parts.netloc}".lower()
