"""The arithmetic of the per-host throttle (SPEC §6), kept free of Scrapy so it can be
tested as plain functions: which interval applies to a host, how long a Retry-After
header asks us to stay away, and how long a failing host is paused.

A host's interval is ``max(base, min(crawl_delay, max_crawl_delay))``, where the base is
``HOST_INTERVAL`` (or a per-host override) and the Crawl-delay is the largest one robots.txt
stated for any origin of that host. A Retry-After backs the host off: no request before a
moment on the monotonic clock, capped by ``max_retry_after``.

A host that fails (a transient failure its request is retried for: connection refused, a
timeout, a 5xx…) is paused as a whole: the n-th failure in a row pauses it
``failure_pause(n) = base·2^(n−1)`` seconds, capped (``RETRY_BACKOFF_BASE``,
``RETRY_BACKOFF_MAX``), and while it is failing it gets one request at a time (a probe); an
answer resets the count. Failures of requests that were already on their way when the
host's last pause began are the same outage seen again: they do not grow the pause. After
``give_up_after`` failures in a row (``RETRY_TIMES + 1``: the host was paused as often as
one request may be retried) the host is given up: no more pauses, and its requests that
fail are not retried, until it answers again. A host that has never answered is given up
sooner, after ``give_up_unanswered`` (``RETRY_UNANSWERED_TIMES + 1``): a wrong or dead
address is said in seconds, not after the whole back-off an outage mid-crawl deserves.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

# RFC 9110 §10.2.3 says delay-seconds is 1*DIGIT; a decimal is accepted, a sign is not.
_DELAY_SECONDS = re.compile(r"\d+(?:\.\d+)?")


def parse_retry_after(value: str | bytes | None, now: datetime | None = None) -> float | None:
    """Seconds to wait that a Retry-After value asks for, or None when it is absent or
    malformed. An HTTP-date is measured from ``now`` (the response's own Date header is the
    best reference; the wall clock otherwise); a date in the past means 0."""
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    value = value.strip()
    if not value:
        return None
    if _DELAY_SECONDS.fullmatch(value):
        seconds = float(value)
        return seconds if math.isfinite(seconds) else None
    when = parse_http_date(value)
    if when is None:
        return None
    reference = now or datetime.now(UTC)
    if reference.tzinfo is None:
        reference = reference.replace(tzinfo=UTC)
    return max(0.0, (when - reference).total_seconds())


def parse_http_date(value: str | bytes | None) -> datetime | None:
    """An HTTP-date (IMF-fixdate, or the obsolete RFC 850 / asctime forms) as an aware
    datetime, or None."""
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    if not value.strip():
        return None
    try:
        when = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def effective_interval(base: float, crawl_delay: float | None, max_crawl_delay: float) -> float:
    """The interval for a host: its base, raised to its Crawl-delay when larger, the
    Crawl-delay capped by ``max_crawl_delay`` (0 ignores Crawl-delay)."""
    base = max(0.0, base)
    if crawl_delay is None or max_crawl_delay <= 0:
        return base
    return max(base, min(crawl_delay, max_crawl_delay))


def failure_pause(failures: int, base: float, cap: float) -> float:
    """Seconds a host is paused after its ``failures``-th failure in a row: ``base``
    doubled each time, capped by ``cap`` (0: no cap); 0 when ``base`` is 0 (no back-off)."""
    if failures <= 0 or base <= 0:
        return 0.0
    pause = base * 2.0 ** min(failures - 1, 1000)
    return min(pause, cap) if cap > 0 else pause


def valid_seconds(value: Any) -> float | None:
    """A finite, non-negative number of seconds, or None."""
    if isinstance(value, bool):
        return None
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


@dataclass
class HostState:
    """What the throttle knows and did for one host."""

    base: float
    crawl_delays: dict[str, float] = field(default_factory=dict)  # origin -> stated seconds
    not_before: float = 0.0  # monotonic; set by a Retry-After
    retry_after: int = 0
    retry_after_max: float = 0.0
    retry_after_capped: int = 0
    waits: int = 0
    wait_seconds: float = 0.0
    # Failures (transient ones, retried): the streak, its pauses, whether it was given up.
    failures: int = 0  # in a row, since the host last answered
    pause: float = 0.0  # the last pause of the streak (a failing slot's delay)
    round: int = 0  # grows with every pause: requests on their way are tagged with it
    down: bool = False  # failed give_up_after times in a row: not paused, not retried
    failed: int = 0  # failures in all
    longest_streak: int = 0
    pauses: int = 0
    pause_seconds: float = 0.0  # time added to the host's wait by its pauses
    given_up: int = 0  # times it was given up
    recovered: int = 0  # times it answered again after failing
    answered_once: bool = False  # it answered at least once (see give_up_unanswered)

    @property
    def crawl_delay(self) -> float | None:
        return max(self.crawl_delays.values()) if self.crawl_delays else None

    @property
    def failing(self) -> bool:
        """Failing and not given up: paused between probes, one request at a time."""
        return self.failures > 0 and not self.down


@dataclass(frozen=True)
class HostFailure:
    """What one failure did to its host."""

    host: str
    failures: int  # the host's failures in a row, this one included when it counted
    pause: float  # seconds added to the host's wait (0: none)
    counted: bool  # False: a request already on its way when the pause began
    down: bool  # the host is given up: do not retry
    given_up: bool  # this failure gave the host up


@dataclass(frozen=True)
class IntervalChange:
    """A host's interval changed because of its Crawl-delay."""

    host: str
    old: float
    new: float
    crawl_delay: float
    capped: bool


class HostIntervals:
    """Per-host intervals and back-offs; times are seconds on a monotonic clock the caller
    passes in."""

    def __init__(
        self,
        interval: float,
        max_crawl_delay: float = 30.0,
        max_retry_after: float = 300.0,
        overrides: dict[str, float] | None = None,
        list_cap: int = 1000,
        backoff_base: float = 0.0,
        backoff_max: float = 0.0,
        give_up_after: int = 0,
        give_up_unanswered: int = 0,
    ):
        self.interval = max(0.0, interval)
        self.max_crawl_delay = max(0.0, max_crawl_delay)
        self.max_retry_after = max(0.0, max_retry_after)
        self.overrides = {h.lower(): max(0.0, s) for h, s in (overrides or {}).items()}
        self.list_cap = list_cap
        self.backoff_base = max(0.0, backoff_base)
        self.backoff_max = max(0.0, backoff_max)
        self.give_up_after = max(0, give_up_after)  # 0: never
        self.give_up_unanswered = max(0, give_up_unanswered)  # 0: as give_up_after
        self.hosts: dict[str, HostState] = {}

    def state(self, host: str) -> HostState:
        state = self.hosts.get(host)
        if state is None:
            state = HostState(self.overrides.get(host, self.interval))
            self.hosts[host] = state
        return state

    def interval_for(self, host: str) -> float:
        state = self.hosts.get(host)
        if state is None:
            return self.overrides.get(host, self.interval)
        return effective_interval(state.base, state.crawl_delay, self.max_crawl_delay)

    def not_before(self, host: str) -> float:
        state = self.hosts.get(host)
        return state.not_before if state is not None else 0.0

    def set_crawl_delay(
        self, host: str, seconds: float | None, origin: str = ""
    ) -> IntervalChange | None:
        """Record the Crawl-delay robots.txt states for ``origin`` of ``host`` (None: it
        states none); return the change when the host's interval moved."""
        state = self.state(host)
        if state.crawl_delays.get(origin) == seconds:
            return None
        old = self.interval_for(host)
        if seconds is None:
            state.crawl_delays.pop(origin, None)
        else:
            state.crawl_delays[origin] = seconds
        new = self.interval_for(host)
        if new == old:
            return None
        stated = state.crawl_delay
        capped = stated is not None and stated > self.max_crawl_delay
        return IntervalChange(host, old, new, stated or 0.0, capped)

    def back_off(self, host: str, seconds: float, now: float) -> tuple[float, bool]:
        """Keep ``host`` waiting ``seconds`` (capped) from ``now``; return the wait applied
        and whether the cap bound. A later, shorter Retry-After never shortens a back-off."""
        state = self.state(host)
        capped = seconds > self.max_retry_after
        wait = min(seconds, self.max_retry_after)
        state.not_before = max(state.not_before, now + wait)
        state.retry_after += 1
        state.retry_after_max = max(state.retry_after_max, seconds)
        state.retry_after_capped += capped
        return wait, capped

    def fail(self, host: str, now: float, counted: bool = True) -> HostFailure:
        """A transient failure of ``host`` at ``now``. ``counted=False``: the request was on
        its way when the host's last pause began, so the failure neither grows the streak
        nor pauses the host again. Otherwise the streak grows and the host is paused
        ``failure_pause(streak)`` (a later, shorter pause never shortens a wait), or given
        up when the streak reaches ``give_up_after``."""
        state = self.state(host)
        state.failed += 1
        if not counted:
            return HostFailure(host, state.failures, 0.0, False, state.down, False)
        state.failures += 1
        state.round += 1
        state.longest_streak = max(state.longest_streak, state.failures)
        if self.backoff_base <= 0:  # back-off off: retried at once, as Scrapy does
            return HostFailure(host, state.failures, 0.0, True, False, False)
        limit = self.give_up_after
        if self.give_up_unanswered and not state.answered_once:
            limit = min(limit, self.give_up_unanswered) if limit else self.give_up_unanswered
        if limit and state.failures >= limit:
            given_up = not state.down
            state.down = True
            state.given_up += given_up
            state.pause = 0.0
            return HostFailure(host, state.failures, 0.0, True, True, given_up)
        pause = failure_pause(state.failures, self.backoff_base, self.backoff_max)
        start = max(state.not_before, now)
        state.not_before = max(state.not_before, now + pause)
        added = state.not_before - start
        state.pause = pause
        state.pauses += 1
        state.pause_seconds += added
        return HostFailure(host, state.failures, added, True, False, False)

    def answered(self, host: str) -> bool:
        """``host`` answered (a response that is no failure): its streak ends, a host given
        up is tried again. True when it was failing. A pause under way is not cut short."""
        state = self.state(host)
        state.answered_once = True
        if not state.failures:
            return False
        state.failures = 0
        state.pause = 0.0
        state.down = False
        state.recovered += 1
        return True

    def failing(self, host: str) -> bool:
        state = self.hosts.get(host)
        return state is not None and state.failing

    def pause_of(self, host: str) -> float:
        """The failing host's current pause (0 when it is not failing)."""
        state = self.hosts.get(host)
        return state.pause if state is not None and state.failing else 0.0

    def as_dict(self) -> dict[str, Any]:
        """The throttle's settings and, for hosts where a Crawl-delay, a Retry-After or a
        failure pause applied, what it did (up to ``list_cap`` hosts; the totals stay
        exact)."""
        list_cap = self.list_cap
        notable = {}
        for host, state in self.hosts.items():
            if state.crawl_delay is None and not state.retry_after and not state.failed:
                continue
            entry: dict[str, Any] = {"interval": self.interval_for(host), "base": state.base}
            if state.crawl_delay is not None:
                entry["crawl_delay"] = state.crawl_delay
                entry["crawl_delay_capped"] = state.crawl_delay > self.max_crawl_delay
            if state.retry_after:
                entry["retry_after"] = state.retry_after
                entry["retry_after_max"] = state.retry_after_max
                entry["retry_after_capped"] = state.retry_after_capped
            if state.failed:
                entry["failures"] = state.failed
                entry["longest_streak"] = state.longest_streak
                entry["paused"] = state.pauses
                entry["pause_seconds"] = round(state.pause_seconds, 3)
                entry["given_up"] = state.given_up
            notable[host] = entry
        return {
            "interval": self.interval,
            "max_crawl_delay": self.max_crawl_delay,
            "max_retry_after": self.max_retry_after,
            "overrides": dict(self.overrides),
            "hosts_seen": len(self.hosts),
            "waits": sum(s.waits for s in self.hosts.values()),
            "wait_seconds": round(sum(s.wait_seconds for s in self.hosts.values()), 3),
            "backoff_base": self.backoff_base,
            "backoff_max": self.backoff_max,
            "give_up_after": self.give_up_after,
            "paused": sum(s.pauses for s in self.hosts.values()),
            "pause_seconds": round(sum(s.pause_seconds for s in self.hosts.values()), 3),
            "hosts": dict(list(notable.items())[:list_cap]),
            "hosts_listed": min(len(notable), list_cap),
            "hosts_notable": len(notable),
        }
