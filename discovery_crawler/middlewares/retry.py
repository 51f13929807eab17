"""Retry transient failures with exponential back-off per host, and say what was retried.

Scrapy's ``RetryMiddleware`` decides *what* is retried, and this subclass keeps its settings
and meta keys: ``RETRY_ENABLED`` (off: ``NotConfigured``), ``RETRY_TIMES`` (per request;
``max_retry_times`` in meta), ``RETRY_HTTP_CODES`` (500, 502, 503, 504, 522, 524, 408, 429),
``RETRY_EXCEPTIONS`` (connection refused, reset or lost, timeouts, DNS…),
``RETRY_PRIORITY_ADJUST``, ``RETRY_GIVE_UP_LOG_LEVEL``, ``dont_retry``; each retry is built
by Scrapy's public ``get_retry_request`` (stats ``retry/count``,
``retry/reason_count/<reason>``, ``retry/max_reached``).

What it adds is *when*: Scrapy sends a retry as soon as the scheduler gives it back, so a
host that is down for 20 s burns every queued page's retries in a second. Here each
transient failure is reported to the host throttle (``extensions/throttle.py``,
``HostThrottle.host_failed``), which pauses the whole host — its downloader slot, so every
request queued for it waits, the retries too — ``RETRY_BACKOFF_BASE·2^(n−1)`` seconds after
its n-th failure in a row (capped by ``RETRY_BACKOFF_MAX``), and sends it one request at a
time until it answers; an answer resets the streak. A host that fails ``RETRY_TIMES + 1``
times in a row is given up: its requests that fail then are not retried (until it answers
again). Failures of answers are reported on ``response_downloaded``, which fires before the
slot sends its next request, so the pause holds back the very next one; failed fetches
(exceptions) are reported when they reach this middleware.

What it tells: ``summary`` (``retries.RetrySummary``, also the run's ``record.retries``:
the crawl log's ``retries`` section and a line of the summary) — requests retried,
retries by reason, recovered, failed after retries (with URL and reason), host pauses.
Stats: ``retry/requests``, ``retry/reason/<words>``, ``retry/recovered``,
``retry/gave_up`` and ``retry/gave_up/<words>``, ``retry/host_given_up``; the throttle
counts ``throttle/host_paused``, ``throttle/host_pause_seconds``,
``throttle/host_given_up``, ``throttle/host_recovered``. A page fetch that fails after its
retries goes on to the refusal middleware below, which makes it a refusal of its class
(``network``, ``timeout``, ``server_error``, or ``wall`` for a 429 or a 503 block page).

Requests with ``dont_retry`` are left alone, as Scrapy's middleware leaves them: not
retried, and their failures do not pause the host; nor do the failures of requests that may
not be retried at all (``RETRY_TIMES = 0``, ``max_retry_times`` 0), which end as they would
with Scrapy's middleware, counted as failed. Without the host throttle in ``EXTENSIONS``
retries are sent as Scrapy sends them (and a warning says so).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.downloadermiddlewares.retry import RetryMiddleware, get_retry_request
from scrapy.utils.response import response_status_message

from discovery_crawler.extensions.host_intervals import HostFailure, valid_seconds
from discovery_crawler.extensions.run import run_of
from discovery_crawler.extensions.throttle import HostThrottle
from discovery_crawler.refusals import failure_reason
from discovery_crawler.retries import RetrySummary

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

# The host failure an answer was reported as on response_downloaded, for process_response.
_FAILURE_META = "_retry_host_failure"
_NO_PAUSE = HostFailure("", 0, 0.0, True, False, False)


class BackoffRetryMiddleware(RetryMiddleware):
    """Scrapy's retries, paced per host with exponential back-off, and accounted for."""

    def __init__(self, crawler: Crawler):
        super().__init__(crawler.settings)  # NotConfigured when RETRY_ENABLED is off
        settings = crawler.settings
        self.crawler = crawler
        self.stats = crawler.stats
        base = valid_seconds(settings.getfloat("RETRY_BACKOFF_BASE", 1.0)) or 0.0
        cap = valid_seconds(settings.getfloat("RETRY_BACKOFF_MAX", 30.0)) or 0.0
        self.throttle = crawler.get_extension(HostThrottle)
        if self.throttle is None and base > 0:
            logger.warning(
                "RETRY_BACKOFF_BASE=%g but the host throttle (%s) is not in EXTENSIONS: "
                "retries are sent at once, with no back-off",
                base,
                f"{HostThrottle.__module__}.{HostThrottle.__qualname__}",
            )
        self.summary = RetrySummary(
            self.max_retry_times,
            base,
            cap,
            sorted(self.retry_http_codes),
            settings.getint("CRAWL_LOG_LIST_CAP", 1000),
        )
        run = run_of(crawler)
        if run is not None:  # the crawl log's retries
            run.record.retries = self.summary
        crawler.signals.connect(self.response_downloaded, signal=signals.response_downloaded)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    # -- the host's health, as early as the downloader tells it --------------------------
    def response_downloaded(self, response: Response, request: Request, spider: Spider) -> None:
        if not self._may_retry(request):
            return
        if response.status in self.retry_http_codes:
            reason = response_status_message(response.status)
            request.meta[_FAILURE_META] = self._host_failed(request, reason)
        elif self.throttle is not None:
            self.throttle.host_answered(request)

    # -- Scrapy's hooks ----------------------------------------------------------------
    def process_response(self, request: Request, response: Response) -> Request | Response:
        meta = request.meta
        if meta.get("dont_retry"):
            return response
        failure = meta.pop(_FAILURE_META, None)
        if response.status not in self.retry_http_codes:
            if meta.get("retry_times"):
                self.summary.answered_after_retries()
                self.stats.inc_value("retry/recovered")
            return response
        reason = response_status_message(response.status)
        # An answer not downloaded just now (a cache, a replay) says nothing of the host.
        return self._retry_or_give_up(request, reason, reason, failure or _NO_PAUSE) or response

    def process_exception(self, request: Request, exception: Exception) -> Request | None:
        if not isinstance(exception, self.exceptions_to_retry) or request.meta.get(
            "dont_retry", False
        ):
            return None
        words = failure_reason(exception)
        failure = self._host_failed(request, words) if self._may_retry(request) else _NO_PAUSE
        return self._retry_or_give_up(request, exception, words, failure)

    # -- plumbing ----------------------------------------------------------------------
    def _may_retry(self, request: Request) -> bool:
        """Whether a failure of ``request`` could be retried at all: only those tell the
        host's health (with RETRY_TIMES = 0, or ``max_retry_times`` 0, Scrapy's behaviour)."""
        meta = request.meta
        return not meta.get("dont_retry") and meta.get("max_retry_times", self.max_retry_times) > 0

    def _host_failed(self, request: Request, reason: str) -> HostFailure:
        if self.throttle is None:
            return _NO_PAUSE
        failure = self.throttle.host_failed(request, reason)
        if failure.pause:
            self.summary.paused(failure.pause)
        if failure.given_up:
            self.summary.host_given_up(failure.host, failure.failures)
        return failure

    def _retry_or_give_up(
        self,
        request: Request,
        reason: str | Exception,
        words: str,
        failure: HostFailure,
    ) -> Request | None:
        meta = request.meta
        retries = meta.get("retry_times", 0)
        max_retry_times = meta.get("max_retry_times", self.max_retry_times)
        if failure.down:
            max_retry_times = retries  # the host is given up: this failure is final
            self.stats.inc_value("retry/host_given_up")
        assert self.crawler.spider is not None
        new_request = get_retry_request(
            request,
            spider=self.crawler.spider,
            reason=reason,
            max_retry_times=max_retry_times,
            priority_adjust=meta.get("priority_adjust", self.priority_adjust),
            logger=logger,
            give_up_log_level=meta.get("give_up_log_level", self.give_up_log_level),
        )
        if new_request is None:
            self.summary.gave_up(request.url, words, retries, failure.down)
            self.stats.inc_value("retry/gave_up")
            self.stats.inc_value(f"retry/gave_up/{words}")
            return None
        self.summary.retried(words, first=not retries)
        if not retries:
            self.stats.inc_value("retry/requests")
        self.stats.inc_value(f"retry/reason/{words}")
        return new_request
