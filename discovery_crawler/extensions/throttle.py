"""Per-host throttle (SPEC §6): at most one request per ``HOST_INTERVAL`` seconds to a host
from the whole crawl, whatever ``CONCURRENT_REQUESTS``; the site's Crawl-delay when larger
(capped by ``MAX_CRAWL_DELAY``); a 429 or 503 with Retry-After keeps the host waiting
(capped by ``MAX_RETRY_AFTER``).

The interval is kept at the moment a request is sent: the project's download handler
(``handlers.py``, ``HostTurnHandler``) asks ``turn(request)`` and sends once its host's
turn is taken (``host_turns.py``: the requests of a host wait there in the order they
came, one timer per host). The turns are kept by a budget, ``HOST_INTERVAL_BUDGET``:
this process's (``LocalBudget``) or, in distributed mode, every worker's of the job in
Redis (``distributed/interval.py``) — one component wherever its budget lives. Scrapy's
downloader slots are not steered (their ``delay`` stays ``DOWNLOAD_DELAY``, 0): a request
released at its turn is sent at once, so the spacing holds at the server. Like
AutoThrottle, this extension follows the crawl on public signals:

* ``request_reached_downloader``: the Crawl-delay robots.txt states for the request's
  origin (``robots_crawl_delay`` meta key) raises its host's interval;
* ``response_downloaded``: a Retry-After holds the host back (the budget holds it too: in
  distributed mode, for every worker), the requests already waiting and the retry
  RetryMiddleware schedules alike; a host's first response anchors its interval;
* ``request_left_downloader``: the round of the host's pauses the download ended in.

A host that keeps failing is paused as a whole (``host_failed``, called by the retry
middleware, ``middlewares/retry.py``, for each transient failure): no turn of it for
``base·2^(n−1)`` seconds after the n-th failure in a row (``RETRY_BACKOFF_BASE``, capped by
``RETRY_BACKOFF_MAX``; ``host_intervals.failure_pause``), and while it is failing it sends
one request at a time, a pause apart (``HostTurns``: the next one waits for the probe on
its way to be answered), so when the pause ends one request probes the host instead of
every waiting one leaving and failing together. Requests already on their way when a
pause begins are tagged with the host's round, and so is every download when it ends:
the failure of a request sent, or ended, before the current pause began is that outage
seen again and does not grow the pause. An answer (``host_answered``) ends the streak and
lets the waiting requests go at the host's interval. After ``RETRY_TIMES + 1`` failures in
a row (``RETRY_TIMES`` > 0) the host is given up: no more pauses, and the retry middleware
retries none of its failures until it answers.

Sitemap documents are paced to their parser (``SITEMAP_FETCH_PACING``): a document that
arrives while every parse slot is taken (``sitemap_arrived``, sent by the walk) takes one
from its slot's concurrency, one that finds a slot free gives one back, up to the slot's
own (``SITEMAP_CONCURRENCY``). A slow server keeps its concurrent fetches; a fast one is
asked for about what the parser takes, instead of every free fetch landing at once and
waiting in memory. A page's response gives the slot its whole concurrency back. (A slot's
``concurrency`` is set as it is; the downloader's ``total_concurrency`` is private:
``private_names.py``.)

Interfaces for other components (documented in docs/architecture.md):

* ``request.meta["robots_crawl_delay"]``: seconds (or None) robots.txt states for the
  request's origin; set by the robots policy middleware on the requests it lets through.
* ``set_crawl_delay(host, seconds, origin="")``: the same, called directly.
* ``HOST_INTERVAL_OVERRIDES = {"host": seconds}``: a host's base interval instead of
  ``HOST_INTERVAL``.
* ``await turn(request)`` / ``sent(request)``: the download handler's (waits for the
  host's turn; the download ended).
* ``request.meta["throttle_wait"]``: seconds the request waited for its host's turn.
* ``host_failed(request, reason)`` / ``host_answered(request)``: a transient failure of the
  request's host (returns the ``HostFailure``: the pause, whether the host is given up) /
  an answer from it.
* the ``run_stopping`` signal (the prompt stop): the requests waiting for their turn fail
  with ``StopRequested``, unsent.
* signals it sends (``signals.py``; the run's timeline, ``extensions/timeline.py``, draws
  them): ``host_interval`` (origin, seconds) when an origin is first requested and
  whenever its host's interval in force moves (Crawl-delay, a failing host's pause, the
  answer that ends it); ``host_held`` (origin, kind, seconds) when a failing host is
  paused (``backoff``), a Retry-After holds it (``retry_after``), a job's first request
  to it waits out the interval since the invocation before (``pause``) or it is given
  up (``give_up``).

Spacing is per host name (its ports and schemes share it), whatever the download slots.
"""

from __future__ import annotations

import logging
from time import monotonic, time
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from scrapy import signals
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import build_from_crawler, load_object

from discovery_crawler.extensions.host_intervals import (
    HostFailure,
    HostIntervals,
    parse_http_date,
    parse_retry_after,
    valid_seconds,
)
from discovery_crawler.extensions.host_turns import HostTurns, LocalBudget
from discovery_crawler.extensions.job import ResumableJob
from discovery_crawler.extensions.run import run_of
from discovery_crawler.extensions.stop import StopRequested
from discovery_crawler.private_names import set_total_concurrency, total_concurrency
from discovery_crawler.signals import (
    BACKOFF,
    GIVE_UP,
    PAUSE,
    RETRY_AFTER,
    host_held,
    host_interval,
    run_stopping,
    sitemap_arrived,
)

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.core.downloader import Slot
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from discovery_crawler.extensions.host_turns import HostBudget

logger = logging.getLogger(__name__)

RETRY_AFTER_STATUSES = frozenset({429, 503})
CRAWL_DELAY_META = "robots_crawl_delay"
WAIT_META = "throttle_wait"
LOCAL_BUDGET = f"{LocalBudget.__module__}.{LocalBudget.__qualname__}"
_WAIT_WORTH_COUNTING = 0.005  # seconds; less is scheduling noise
_LATE = 0.001  # seconds between a turn taken and its request resumed that are re-anchored


class HostThrottle:
    """One request per host interval at the server; Crawl-delay and Retry-After honoured."""

    def __init__(self, crawler: Crawler, budget: HostBudget | None = None):
        settings = crawler.settings
        self.crawler = crawler
        self.stats = crawler.stats
        overrides = {
            str(host): seconds
            for host, value in settings.getdict("HOST_INTERVAL_OVERRIDES").items()
            if (seconds := valid_seconds(value)) is not None
        }
        self.intervals = HostIntervals(
            interval=valid_seconds(settings.getfloat("HOST_INTERVAL", 1.0)) or 0.0,
            max_crawl_delay=valid_seconds(settings.getfloat("MAX_CRAWL_DELAY", 30.0)) or 0.0,
            max_retry_after=valid_seconds(settings.getfloat("MAX_RETRY_AFTER", 300.0)) or 0.0,
            overrides=overrides,
            list_cap=settings.getint("CRAWL_LOG_LIST_CAP", 1000),
            backoff_base=valid_seconds(settings.getfloat("RETRY_BACKOFF_BASE", 1.0)) or 0.0,
            backoff_max=valid_seconds(settings.getfloat("RETRY_BACKOFF_MAX", 30.0)) or 0.0,
            # as many pauses as one request may be retried (none given: never give up)
            give_up_after=(times + 1) if (times := settings.getint("RETRY_TIMES")) > 0 else 0,
            give_up_unanswered=(
                (unanswered + 1)
                if (unanswered := settings.getint("RETRY_UNANSWERED_TIMES")) > 0
                else 0
            ),
        )
        if budget is None:
            path = settings.get("HOST_INTERVAL_BUDGET") or LOCAL_BUDGET
            budget = build_from_crawler(load_object(path), crawler)
        self.budget: HostBudget = budget
        self.clock = monotonic  # (the tests' is moved by hand)
        self.turns = HostTurns(self.intervals, budget)
        # Slots whose sitemap fetches are paced: key -> (slot, its own concurrency, pace).
        self.pacing = settings.getbool("SITEMAP_FETCH_PACING", True)
        self._paced: dict[str, tuple[Slot, int, int]] = {}
        self._total: int | None = None  # the downloader's own CONCURRENT_REQUESTS
        # (host, round) of requests on their way when their host's pause of that round
        # began, and of requests whose download ended in that round (a failure reaches the
        # retry middleware a moment later, maybe after another one paused the host).
        self._on_their_way: WeakKeyDictionary[Request, tuple[str, int]] = WeakKeyDictionary()
        self._ended: WeakKeyDictionary[Request, tuple[str, int]] = WeakKeyDictionary()
        self._anchored: set[str] = set()  # hosts whose first response anchored their interval
        self._said: set[tuple[str, str]] = set()  # (what, host) already logged at INFO
        # The origins requested of each host, and the interval last announced for each
        # (the ``host_interval`` signal: the run's timeline draws it).
        self._origins: dict[str, dict[str, float | None]] = {}
        # A job's hosts: when its last request to each ended (wall clock, in job.json), and
        # that moment on this process's monotonic clock (an earlier invocation's).
        self._last_requests: dict[str, float] = {}
        self._earlier: dict[str, float] = {}
        if settings.getbool("AUTOTHROTTLE_ENABLED"):
            logger.warning(
                "AUTOTHROTTLE_ENABLED sets download slot delays on top of the host "
                "throttle's interval; a request waits for both"
            )
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(
            self.request_reached_downloader, signal=signals.request_reached_downloader
        )
        crawler.signals.connect(self.response_downloaded, signal=signals.response_downloaded)
        crawler.signals.connect(
            self.request_left_downloader, signal=signals.request_left_downloader
        )
        crawler.signals.connect(self.run_stopping, signal=run_stopping)
        if self.pacing:
            crawler.signals.connect(self.sitemap_arrived, signal=sitemap_arrived)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    # -- the download handler's --------------------------------------------------------
    async def turn(self, request: Request) -> None:
        """Wait for the turn of ``request``'s host; it is then sent at once. Raises
        ``StopRequested`` when the run stops meanwhile, and what the budget raised (Redis
        lost: ``IgnoreRequest``)."""
        host = _host(request)
        started = self.clock()
        waiter = self.turns.turn(host, request)
        if waiter is None:
            request.meta[WAIT_META] = 0.0
            return
        taken = await maybe_deferred_to_future(waiter)
        now = self.clock()
        if now - taken > _LATE:
            # The loop resumed this request late after its turn was taken: its send, not
            # the turn, is what the host sees, so the next turn counts from now (in
            # Redis, no other worker took one meanwhile unless it was an interval late).
            self.budget.anchor(host)
        waited = now - started
        request.meta[WAIT_META] = waited
        if waited < _WAIT_WORTH_COUNTING:
            return
        state = self.intervals.state(host)
        state.waits += 1
        state.wait_seconds += waited
        self.stats.inc_value("throttle/waits")
        self.stats.inc_value("throttle/wait_seconds", waited)

    def sent(self, request: Request) -> None:
        """``request``'s download ended (answered, failed or cancelled)."""
        self.turns.done(_host(request), request)

    def run_stopping(self) -> int:
        """The run is stopping: the requests waiting for their turn fail unsent (how many)."""
        return self.turns.drop(lambda: StopRequested("the run is stopping: not sent"))

    # -- interface for other components --------------------------------------------------
    def set_crawl_delay(self, host: str, seconds: float | None, origin: str = "") -> None:
        """Apply the Crawl-delay robots.txt states for ``origin`` of ``host`` (None: none)."""
        host = host.lower()
        if seconds is not None and valid_seconds(seconds) is None:
            self.stats.inc_value("throttle/crawl_delay_invalid")
            self._say_once(
                "crawl_delay_invalid",
                host,
                "Throttle: ignoring Crawl-delay %r for %s (not a number of seconds)",
                seconds,
                host,
            )
            return
        change = self.intervals.set_crawl_delay(
            host, None if seconds is None else float(seconds), origin
        )
        if change is None:
            return
        if change.new > change.old:
            self.stats.inc_value("throttle/crawl_delay_applied")
        if change.capped:
            self.stats.inc_value("throttle/crawl_delay_capped")
        cap = f" (capped by MAX_CRAWL_DELAY from {change.crawl_delay:g}s)" if change.capped else ""
        self._say_once(
            f"crawl_delay={change.new}",
            host,
            "Throttle: %s: robots.txt Crawl-delay sets its interval to %gs%s (was %gs)",
            host,
            change.new,
            cap,
            change.old,
        )
        self.turns.changed(host)
        self._announce(host)

    def host_failed(self, request: Request, reason: str = "") -> HostFailure:
        """A transient failure of ``request``'s host (``reason`` in words, for the log):
        pause the host, or note the failure of a request that was on its way when the
        current pause began, or give the host up. Returns what it did."""
        host = _host(request)
        state = self.intervals.state(host)
        current = (host, state.round)
        # Old news: it was on its way when the current pause began, or its download ended
        # before that pause began (another failure reached us first).
        on_their_way = self._on_their_way.pop(request, None) == current
        ended_before = self._ended.pop(request, current) != current
        now = self.clock()
        failure = self.intervals.fail(host, now, counted=not (on_their_way or ended_before))
        if failure.counted:
            self._tag_on_their_way(host, state.round, request)
        if failure.pause:
            self.stats.inc_value("throttle/host_paused")
            self.stats.inc_value("throttle/host_pause_seconds", failure.pause)
            self.budget.hold(host, state.not_before - now)
            level = logging.INFO if failure.failures == 2 else logging.DEBUG
            logger.log(
                level,
                "Throttle: %s failed %d time(s) in a row (%s); no request to it for %.1fs, "
                "then one at a time",
                host,
                failure.failures,
                reason or "failure",
                state.pause,
            )
        if failure.given_up:
            self.stats.inc_value("throttle/host_given_up")
            logger.warning(
                "Throttle: %s failed %d times in a row (%s); given up: its requests that "
                "fail are not retried until it answers again",
                host,
                failure.failures,
                reason or "failure",
            )
        self.turns.changed(host)
        origin = _origin(request)
        if failure.pause:  # the pause from now (failure.pause: what it added to the wait)
            self._send_hold(origin, BACKOFF, state.pause)
        if failure.given_up:
            self._send_hold(origin, GIVE_UP, 0.0)
        self._announce(host)
        return failure

    def host_answered(self, request: Request) -> None:
        """``request``'s host answered: its failure streak ends — unless the request was
        already on its way when the current pause began (old news of the host)."""
        host = _host(request)
        state = self.intervals.hosts.get(host)
        if state is None:
            self.intervals.answered(host)  # remembered: it is no dead address
            return
        state.answered_once = True
        if self._on_their_way.pop(request, None) == (host, state.round):
            return
        streak = state.failures
        if not self.intervals.answered(host):
            return
        self.stats.inc_value("throttle/host_recovered")
        if streak > 1:
            logger.info("Throttle: %s answers again after %d failures in a row", host, streak)
        self.turns.changed(host)  # its waiting requests go at its interval again
        self._announce(host)

    @property
    def summary(self) -> HostIntervals:
        """The ``as_dict()``-able record of what the throttle did (also ``record.throttle``)."""
        return self.intervals

    # -- signals -----------------------------------------------------------------------
    def spider_opened(self) -> None:
        run = run_of(self.crawler)
        if run is not None:  # the crawl log's throttle
            run.record.throttle = self.intervals
        job = self.crawler.get_extension(ResumableJob)
        if job is not None:
            # The host sees one crawler whatever our invocations: a job's next chunk waits
            # the interval from the last request of the chunk before.
            self._last_requests = job.last_requests()
            wall, now = time(), self.clock()
            for host, at in self._last_requests.items():
                if isinstance(at, int | float):
                    ago = max(0.0, wall - at)
                    self._earlier[host] = now - ago
                    self.budget.anchor(host, ago)

    def request_reached_downloader(self, request: Request, spider: Spider) -> None:
        host = _host(request)
        if CRAWL_DELAY_META in request.meta:
            self.set_crawl_delay(host, request.meta[CRAWL_DELAY_META], _origin(request))
        origins = self._origins.setdefault(host, {})
        first = not origins
        origins.setdefault(_origin(request), None)
        self._announce(host)
        if first and (earlier := self._earlier.get(host)):
            # The job's invocation before sent its last request to this host lately: the
            # first one of this invocation waits out the rest of the interval.
            wait = earlier + self.intervals.interval_for(host) - self.clock()
            if wait >= _WAIT_WORTH_COUNTING:
                self._send_hold(_origin(request), PAUSE, wait)

    def request_left_downloader(self, request: Request, spider: Spider) -> None:
        host = _host(request)
        state = self.intervals.hosts.get(host)
        self._ended[request] = (host, state.round if state is not None else 0)
        self._last_requests[host] = round(time(), 3)

    def response_downloaded(self, response: Response, request: Request, spider: Spider) -> None:
        host = _host(request)
        if host not in self._anchored:
            # A host's first request spends DNS, TCP and TLS set-up on its way that the
            # next one, reusing its connection, skips, so their arrivals are closer than
            # their sends: the interval after it counts from its response.
            self._anchored.add(host)
            if self.intervals.interval_for(host) > 0:
                self.budget.anchor(host)
                self.turns.changed(host)
        elif self.budget.answers_anchor and self.intervals.interval_for(host) > 0:
            # Sends of several processes: one delayed on its way (its sender or the
            # server's reader descheduled) would arrive close to the next one another
            # worker sent on time; counted from its answer, it cannot.
            self.budget.anchor(host)
        if self._paced and "attempt" not in request.meta:  # a page, not a sitemap document
            self._unpace(request.meta.get("download_slot"))
        if response.status not in RETRY_AFTER_STATUSES:
            return
        value = response.headers.get(b"Retry-After")
        if value is None:
            self.stats.inc_value(f"throttle/retry_after_missing/{response.status}")
            return
        seconds = parse_retry_after(value, parse_http_date(response.headers.get(b"Date")))
        if seconds is None:
            self.stats.inc_value("throttle/retry_after_invalid")
            self._say_once(
                "retry_after_invalid",
                host,
                "Throttle: %s answered %d with an unreadable Retry-After %r; ignored",
                host,
                response.status,
                value.decode("latin-1"),
            )
            return
        wait, capped = self.intervals.back_off(host, seconds, self.clock())
        self.budget.hold(host, wait)
        self.stats.inc_value("throttle/retry_after")
        self.stats.inc_value(f"throttle/retry_after/{response.status}")
        self.stats.max_value("throttle/retry_after_max_seconds", seconds)
        if capped:
            self.stats.inc_value("throttle/retry_after_capped")
        cap = f" (capped by MAX_RETRY_AFTER from {seconds:g}s)" if capped else ""
        self._say_once(
            "retry_after",
            host,
            "Throttle: %s answered %d with Retry-After; no request to it for %.1fs%s",
            host,
            response.status,
            wait,
            cap,
        )
        self.turns.changed(host)
        self._send_hold(_origin(request), RETRY_AFTER, wait)

    # -- sitemap pacing (download slots' concurrency) ----------------------------------
    def _slot(self, key: str | None) -> Slot | None:
        slots = getattr(self.crawler.engine.downloader, "slots", None)
        if key is None or slots is None:
            return None
        return slots.get(key)

    def sitemap_arrived(self, request: Request | None, waiting: int) -> None:
        """One less concurrent fetch for the document's slot when it has to wait for a parse
        slot (``waiting`` > 0), one more, up to the slot's own, when it does not."""
        key = request.meta.get("download_slot") if request is not None else None
        slot = self._slot(key)
        if key is None or slot is None:
            return
        paced = self._paced.get(key)
        if paced is None or paced[0] is not slot:  # first paced here, or a new slot
            full = pace = slot.concurrency
        else:
            _, full, pace = paced
        pace = max(1, pace - 1) if waiting else min(full, pace + 1)
        self._paced[key] = (slot, full, pace)
        slot.concurrency = pace
        self._pace_downloader()
        if waiting:
            self.stats.inc_value("throttle/sitemap_paced")
        self.stats.min_value("throttle/sitemap_concurrency_min", pace)

    def _pace_downloader(self) -> None:
        """The downloader takes as many fewer requests as the paced slots give up: a slot's
        concurrency alone would not do, as the engine hands the downloader every request it
        has room for and, on a fast server, they all land before the first is parsed."""
        downloader = self.crawler.engine.downloader
        if self._total is None:
            self._total = total_concurrency(downloader)
        given_up = sum(full - pace for _, full, pace in self._paced.values())
        set_total_concurrency(downloader, max(1, self._total - given_up))

    def _unpace(self, key: str | None) -> None:
        paced = self._paced.pop(key, None) if key is not None else None
        if paced is None:
            return
        slot, full, _ = paced
        if self._slot(key) is slot:
            slot.concurrency = full
        self._pace_downloader()

    def _tag_on_their_way(self, host: str, round_: int, failed: Request) -> None:
        """Tag the requests to ``host`` past their turn and not done (being sent, or about
        to be) when its pause of ``round_`` begins."""
        for request in self.turns.sending(host):
            if request is not failed:
                self._on_their_way[request] = (host, round_)

    # -- what the timeline draws -------------------------------------------------------
    def _announce(self, host: str) -> None:
        """Send ``host_interval`` for each origin of ``host`` whose interval in force (a
        failing host's pause included: its requests leave one per pause) moved."""
        origins = self._origins.get(host)
        if not origins:
            return
        intervals = self.intervals
        seconds = max(intervals.interval_for(host), intervals.pause_of(host))
        for origin, said in origins.items():
            if said != seconds:
                origins[origin] = seconds
                self.crawler.signals.send_catch_log(
                    signal=host_interval, origin=origin, seconds=seconds
                )

    def _send_hold(self, origin: str, kind: str, seconds: float) -> None:
        self.crawler.signals.send_catch_log(
            signal=host_held, origin=origin, kind=kind, seconds=seconds
        )

    def _say_once(self, what: str, host: str, message: str, *args: Any) -> None:
        level = logging.DEBUG if (what, host) in self._said else logging.INFO
        self._said.add((what, host))
        logger.log(level, message, *args)


def _host(request: Request) -> str:
    return (urlparse_cached(request).hostname or "").lower()


def _origin(request: Request) -> str:
    parts = urlparse_cached(request)
    return f"{parts.scheme}://{parts.netloc}".lower()
