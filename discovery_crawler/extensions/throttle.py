"""Per-host throttle (SPEC §6): at most one request per ``HOST_INTERVAL`` seconds to a host
from the whole crawl, whatever ``CONCURRENT_REQUESTS``; the site's Crawl-delay when larger
(capped by ``MAX_CRAWL_DELAY``); a 429 or 503 with Retry-After keeps the host waiting
(capped by ``MAX_RETRY_AFTER``).

An extension, as Scrapy's AutoThrottle is, not a downloader middleware: a request a
middleware releases in ``process_request`` may still wait in its slot's queue and leave in a
burst with others, so spacing decided there does not hold at the server. The downloader
slot is where a request is actually sent; it already spaces sends by ``slot.delay``
measured from the last send, one at a time, whatever the concurrency. So, like
AutoThrottle, this extension sets each slot's ``delay`` (jitter off), and backs a slot off
by moving its ``lastseen``, on two downloader signals:

* ``request_reached_downloader`` fires once the request has its slot and before the slot
  queue is processed: the slot gets its host's interval (re-applied every time, so a slot
  Scrapy collected and re-created is configured again);
* ``response_downloaded`` fires before the slot sends its next request: a Retry-After holds
  back the requests already queued there too, and the retry RetryMiddleware schedules.

A host that keeps failing is paused as a whole (``host_failed``, called by the retry
middleware, ``middlewares/retry.py``, for each transient failure): its slot waits
``base·2^(n−1)`` seconds after the n-th failure in a row (``RETRY_BACKOFF_BASE``, capped by
``RETRY_BACKOFF_MAX``; ``host_intervals.failure_pause``), by the same ``lastseen`` move, and
while it is failing the slot sends one request at a time (its ``concurrency`` is 1; its
``delay`` at least the pause), so when the pause ends one request probes the host instead
of the whole queue leaving at once and failing together. Requests already on their way
when a pause begins are tagged with the host's round, and so is every download when it
ends (``request_left_downloader``): the failure of a request sent, or ended, before the
current pause began is that outage seen again and does not grow the pause. An answer
(``host_answered``) ends the streak, gives the slot back its concurrency and lets its queue
go without waiting out the probe's pause. After ``RETRY_TIMES + 1`` failures in a row
(``RETRY_TIMES`` > 0) the host is given up: no more pauses, and the retry middleware retries
none of its failures until it answers.

Sitemap documents are paced to their parser (``SITEMAP_FETCH_PACING``): a document that
arrives while every parse slot is taken (``sitemap_arrived``, sent by the walk) takes one
from its slot's concurrency, one that finds a slot free gives one back, up to the slot's
own (``SITEMAP_CONCURRENCY``). A slow server keeps its concurrent fetches; a fast one is
asked for about what the parser takes, instead of every free fetch landing at once and
waiting in memory. A page's response gives the slot its whole concurrency back.

Interfaces for other components (documented in docs/architecture.md):

* ``request.meta["robots_crawl_delay"]``: seconds (or None) robots.txt states for the
  request's origin; set by the robots policy middleware on the requests it lets through.
* ``set_crawl_delay(host, seconds, origin="")``: the same, called directly.
* ``HOST_INTERVAL_OVERRIDES = {"host": seconds}``: a host's base interval instead of
  ``HOST_INTERVAL``.
* ``request.meta["throttle_wait"]``: seconds a throttled request waited in its slot (set
  when its response arrives; the wait for a free connection is included).
* ``host_failed(request, reason)`` / ``host_answered(request)``: a transient failure of the
  request's host (returns the ``HostFailure``: the pause, whether the host is given up) /
  an answer from it.
* signals it sends (``signals.py``; the run's timeline, ``extensions/timeline.py``, draws
  them): ``host_interval`` (origin, seconds) when an origin is first requested and
  whenever its host's interval in force moves (Crawl-delay, a failing host's pause, the
  answer that ends it); ``host_held`` (origin, kind, seconds) when a failing host is
  paused (``backoff``), a Retry-After holds it (``retry_after``), a job's first request
  to it waits out the interval since the invocation before (``pause``) or it is given
  up (``give_up``).

Spacing is per downloader slot, which is the host by default; hosts sharing a slot
(``CONCURRENT_REQUESTS_PER_IP``, a ``download_slot`` meta key) are spaced by the largest of
their intervals. One host split across slots cannot be spaced and is warned about.
"""

from __future__ import annotations

import logging
from time import monotonic, time
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from scrapy import signals
from scrapy.utils.httpobj import urlparse_cached

from discovery_crawler.extensions.host_intervals import (
    HostFailure,
    HostIntervals,
    parse_http_date,
    parse_retry_after,
    valid_seconds,
)
from discovery_crawler.extensions.job import ResumableJob
from discovery_crawler.extensions.run import run_of
from discovery_crawler.private_names import set_total_concurrency, total_concurrency
from discovery_crawler.signals import (
    BACKOFF,
    GIVE_UP,
    PAUSE,
    RETRY_AFTER,
    host_held,
    host_interval,
    sitemap_arrived,
)

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.core.downloader import Slot
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

RETRY_AFTER_STATUSES = frozenset({429, 503})
CRAWL_DELAY_META = "robots_crawl_delay"
WAIT_META = "throttle_wait"
_QUEUED_META = "_throttle_queued_at"
# A slot with delay 0 ignores its lastseen; a back-off needs a delay to take hold.
_BACKOFF_DELAY = 0.001
_WAIT_WORTH_COUNTING = 0.005  # seconds; less is scheduling noise


class HostThrottle:
    """One request per host interval at the server; Crawl-delay and Retry-After honoured."""

    def __init__(self, crawler: Crawler):
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
        # Slots of failing hosts, sending one request at a time: key -> (slot, concurrency).
        self._held: dict[str, tuple[Slot, int]] = {}
        # Slots whose sitemap fetches are paced: key -> (slot, its own concurrency, pace).
        self.pacing = settings.getbool("SITEMAP_FETCH_PACING", True)
        self._paced: dict[str, tuple[Slot, int, int]] = {}
        self._total: int | None = None  # the downloader's own CONCURRENT_REQUESTS
        # (host, round) of requests on their way when their host's pause of that round
        # began, and of requests whose download ended in that round (a failure reaches the
        # retry middleware a moment later, maybe after another one paused the host).
        self._on_their_way: WeakKeyDictionary[Request, tuple[str, int]] = WeakKeyDictionary()
        self._ended: WeakKeyDictionary[Request, tuple[str, int]] = WeakKeyDictionary()
        self._slot_hosts: dict[str, set[str]] = {}
        self._host_slots: dict[str, set[str]] = {}
        self._anchored: dict[str, Slot] = {}  # slot key -> the slot its first response anchored
        self._said: set[tuple[str, str]] = set()  # (what, host) already logged at INFO
        # The origins requested of each host, and the interval last announced for each
        # (the ``host_interval`` signal: the run's timeline draws it).
        self._origins: dict[str, dict[str, float | None]] = {}
        # A job's hosts: when its last request to each ended (wall clock, in job.json), and
        # that moment on this process's monotonic clock (an earlier invocation's, or 0).
        self._last_requests: dict[str, float] = {}
        self._earlier: dict[str, float] = {}
        if settings.getbool("AUTOTHROTTLE_ENABLED"):
            logger.warning(
                "AUTOTHROTTLE_ENABLED and the host throttle both set slot delays; "
                "the host throttle's interval wins at each request"
            )
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(
            self.request_reached_downloader, signal=signals.request_reached_downloader
        )
        crawler.signals.connect(self.response_downloaded, signal=signals.response_downloaded)
        crawler.signals.connect(
            self.request_left_downloader, signal=signals.request_left_downloader
        )
        if self.pacing:
            crawler.signals.connect(self.sitemap_arrived, signal=sitemap_arrived)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

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
        self._refresh_slots_of(host)
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
        failure = self.intervals.fail(host, monotonic(), counted=not (on_their_way or ended_before))
        if failure.counted:
            self._tag_on_their_way(host, state.round, request)
        if failure.pause:
            self.stats.inc_value("throttle/host_paused")
            self.stats.inc_value("throttle/host_pause_seconds", failure.pause)
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
        self._refresh_slots_of(host)
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
        self._refresh_slots_of(host, resume=True)
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
            wall, now = time(), monotonic()
            for host, at in self._last_requests.items():
                if isinstance(at, int | float):
                    self._earlier[host] = now - max(0.0, wall - at)

    def request_reached_downloader(self, request: Request, spider: Spider) -> None:
        host = _host(request)
        if CRAWL_DELAY_META in request.meta:
            self.set_crawl_delay(host, request.meta[CRAWL_DELAY_META], _origin(request))
        key = request.meta.get("download_slot")
        slot = self._slot(key)
        origins = self._origins.setdefault(host, {})
        first = not origins
        origins.setdefault(_origin(request), None)
        if slot is None:
            self._announce(host)
            return
        self._remember(key, host)
        self._configure(key, slot)
        if slot.delay > 0:  # the throttle may hold this one: measure how long
            request.meta[_QUEUED_META] = monotonic()
        self._announce(host)
        if first and (earlier := self._earlier.get(host)):
            # The job's invocation before sent its last request to this host lately: the
            # first one of this invocation waits out the rest of the interval.
            wait = earlier + slot.delay - monotonic()
            if wait >= _WAIT_WORTH_COUNTING:
                self._send_hold(_origin(request), PAUSE, wait)

    def request_left_downloader(self, request: Request, spider: Spider) -> None:
        host = _host(request)
        state = self.intervals.hosts.get(host)
        self._ended[request] = (host, state.round if state is not None else 0)
        self._last_requests[host] = round(time(), 3)

    def response_downloaded(self, response: Response, request: Request, spider: Spider) -> None:
        host = _host(request)
        self._measure_wait(request, host)
        self._anchor_first(request)
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
        wait, capped = self.intervals.back_off(host, seconds, monotonic())
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
        self._refresh_slots_of(host)
        self._send_hold(_origin(request), RETRY_AFTER, wait)

    # -- slots -------------------------------------------------------------------------
    def _slot(self, key: str | None) -> Slot | None:
        slots = getattr(self.crawler.engine.downloader, "slots", None)
        if key is None or slots is None:
            return None
        return slots.get(key)

    def _remember(self, key: str, host: str) -> None:
        hosts = self._slot_hosts.setdefault(key, set())
        if host in hosts:
            return
        hosts.add(host)
        keys = self._host_slots.setdefault(host, set())
        keys.add(key)
        if len(keys) == 2:
            self.stats.inc_value("throttle/split_hosts")
            logger.warning(
                "Throttle: requests to %s go through several download slots (%s); "
                "the interval holds per slot only",
                host,
                ", ".join(sorted(keys)),
            )

    def _configure(self, key: str, slot: Slot) -> None:
        hosts = self._slot_hosts[key]
        intervals = self.intervals
        if len(hosts) == 1:
            (host,) = hosts
            interval = intervals.interval_for(host)
            not_before = intervals.not_before(host)
            pause = intervals.pause_of(host)
        else:
            interval = max(intervals.interval_for(h) for h in hosts)
            not_before = max(intervals.not_before(h) for h in hosts)
            pause = max(intervals.pause_of(h) for h in hosts)
        earlier = max((self._earlier.get(h, 0.0) for h in hosts), default=0.0)
        slot.lastseen = max(slot.lastseen, earlier)  # the earlier invocation's last request
        slot.jitter = 0.0  # the interval is a floor, not an average
        self._hold(key, slot, pause > 0)
        # A failing host's requests leave one per pause at most: a probe that fails at once
        # pauses the host again before the next one may leave.
        interval = max(interval, pause)
        if not_before > monotonic():
            slot.delay = max(interval, _BACKOFF_DELAY)
            # The slot sends next at lastseen + delay: make that the end of the back-off.
            slot.lastseen = max(slot.lastseen, not_before - slot.delay)
        else:
            slot.delay = interval

    def _hold(self, key: str, slot: Slot, failing: bool) -> None:
        """A failing host's slot sends one request at a time; its concurrency comes back
        when the host answers."""
        held = self._held.get(key)
        if failing:
            if held is None or held[0] is not slot:
                self._held[key] = (slot, slot.concurrency)
            slot.concurrency = 1
        elif held is not None:
            del self._held[key]
            if held[0] is slot:
                slot.concurrency = held[1]

    def sitemap_arrived(self, request: Request | None, waiting: int) -> None:
        """One less concurrent fetch for the document's slot when it has to wait for a parse
        slot (``waiting`` > 0), one more, up to the slot's own, when it does not."""
        key = request.meta.get("download_slot") if request is not None else None
        slot = self._slot(key)
        if key is None or slot is None:
            return
        held = self._held.get(key)
        if held is not None and held[0] is not slot:
            held = None
        paced = self._paced.get(key)
        if paced is None or paced[0] is not slot:  # first paced here, or a new slot
            full = pace = held[1] if held is not None else slot.concurrency
        else:
            _, full, pace = paced
        pace = max(1, pace - 1) if waiting else min(full, pace + 1)
        self._paced[key] = (slot, full, pace)
        if held is not None:  # a failing host sends one at a time: the pace comes after
            self._held[key] = (slot, pace)
        else:
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
        held = self._held.get(key)  # type: ignore[arg-type]
        if held is not None and held[0] is slot:
            self._held[key] = (slot, full)  # type: ignore[index]
        elif self._slot(key) is slot:
            slot.concurrency = full
        self._pace_downloader()

    def _tag_on_their_way(self, host: str, round_: int, failed: Request) -> None:
        """Tag the requests to ``host`` that its slots already let go (active, no longer
        queued: being sent, or about to be) when its pause of ``round_`` begins."""
        for key in self._host_slots.get(host, ()):
            slot = self._slot(key)
            if slot is None:
                continue
            queued = {id(request) for request, _ in slot.queue}
            for request in slot.active:
                if request is failed or id(request) in queued or _host(request) != host:
                    continue
                self._on_their_way[request] = (host, round_)

    def _refresh_slots_of(self, host: str, resume: bool = False) -> None:
        for key in self._host_slots.get(host, ()):
            slot = self._slot(key)
            if slot is None:
                continue
            self._configure(key, slot)
            if resume and slot.latercall is not None and slot.transferring:
                # The probe left with the next send scheduled a pause later; the host
                # answered, so drop that wait: the downloader processes the slot's queue
                # again as this download ends, at the slot's interval.
                slot.latercall.cancel()
                slot.latercall = None

    def _anchor_first(self, request: Request) -> None:
        """A slot's first request spends DNS, TCP and TLS set-up on its way that the next
        one, reusing its connection, skips, so their arrivals are closer than their sends.
        Count the interval after it from its response, which came after its arrival."""
        key = request.meta.get("download_slot")
        slot = self._slot(key)
        if key is None or slot is None or self._anchored.get(key) is slot:
            return
        self._anchored[key] = slot
        if slot.delay > 0:
            slot.lastseen = max(slot.lastseen, monotonic())

    def _measure_wait(self, request: Request, host: str) -> None:
        queued = request.meta.pop(_QUEUED_META, None)
        latency = request.meta.get("download_latency")
        if queued is None or latency is None:
            return
        waited = max(0.0, monotonic() - queued - latency)
        request.meta[WAIT_META] = waited
        if waited < _WAIT_WORTH_COUNTING:
            return
        state = self.intervals.state(host)
        state.waits += 1
        state.wait_seconds += waited
        self.stats.inc_value("throttle/waits")
        self.stats.inc_value("throttle/wait_seconds", waited)

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
