"""The arithmetic of the per-host throttle (SPEC §6), kept free of Scrapy so it can be
tested as plain functions: which interval applies to a host, and how long a Retry-After
header asks us to stay away.

A host's interval is ``max(base, min(crawl_delay, max_crawl_delay))``, where the base is
``HOST_INTERVAL`` (or a per-host override) and the Crawl-delay is the largest one robots.txt
stated for any origin of that host. A Retry-After backs the host off: no request before a
moment on the monotonic clock, capped by ``max_retry_after``.
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

    @property
    def crawl_delay(self) -> float | None:
        return max(self.crawl_delays.values()) if self.crawl_delays else None


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
    ):
        self.interval = max(0.0, interval)
        self.max_crawl_delay = max(0.0, max_crawl_delay)
        self.max_retry_after = max(0.0, max_retry_after)
        self.overrides = {h.lower(): max(0.0, s) for h, s in (overrides or {}).items()}
        self.list_cap = list_cap
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

    def as_dict(self) -> dict[str, Any]:
        """The throttle's settings and, for hosts where a Crawl-delay or a Retry-After
        applied, what it did (up to ``list_cap`` hosts; the totals stay exact)."""
        list_cap = self.list_cap
        notable = {}
        for host, state in self.hosts.items():
            if state.crawl_delay is None and not state.retry_after:
                continue
            entry: dict[str, Any] = {"interval": self.interval_for(host), "base": state.base}
            if state.crawl_delay is not None:
                entry["crawl_delay"] = state.crawl_delay
                entry["crawl_delay_capped"] = state.crawl_delay > self.max_crawl_delay
            if state.retry_after:
                entry["retry_after"] = state.retry_after
                entry["retry_after_max"] = state.retry_after_max
                entry["retry_after_capped"] = state.retry_after_capped
            notable[host] = entry
        return {
            "interval": self.interval,
            "max_crawl_delay": self.max_crawl_delay,
            "max_retry_after": self.max_retry_after,
            "overrides": dict(self.overrides),
            "hosts_seen": len(self.hosts),
            "waits": sum(s.waits for s in self.hosts.values()),
            "wait_seconds": round(sum(s.wait_seconds for s in self.hosts.values()), 3),
            "hosts": dict(list(notable.items())[:list_cap]),
            "hosts_listed": min(len(notable), list_cap),
            "hosts_notable": len(notable),
        }
