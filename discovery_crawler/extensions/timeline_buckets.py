"""The arithmetic of the run's timeline (the crawl log's ``timeline``), kept free of Scrapy
so it can be tested as plain classes: counts per host in buckets of time, the host
intervals in force, and the holds a host went through.

``Buckets`` counts events in buckets of ``width`` seconds from the run's start. When a
time falls past ``max_buckets`` buckets, the width doubles and each pair of buckets is
merged into one, as often as needed: the arrays never grow past ``max_buckets`` and every
count stays (a merge adds, never drops). All series share the width and the number of
buckets, so a host's arrays line up with every other host's.

``Timeline`` is the crawl log's section: a ``Buckets`` of requests and refusals per origin
(the first ``max_hosts`` origins seen, the rest summed under ``OTHER_HOSTS``), each host's
interval as a step function (at most one change per bucket: the value the bucket ends
with, from the bucket's first change), and the events (the holds of
``signals.HOLD_KINDS``: back-offs, Retry-After, pauses, hosts given up) listed up to
``list_cap``, all counted.
"""

from __future__ import annotations

from typing import Any

OTHER_HOSTS = "(other hosts)"
REQUESTS = "requests"
REFUSALS = "refusals"


class Buckets:
    """Counts per key in time buckets that widen (by doubling) to stay within bounds."""

    def __init__(self, max_buckets: int = 600, width: float = 1.0):
        if max_buckets < 1 or not width > 0:
            raise ValueError("max_buckets must be >= 1 and width > 0")
        self.max_buckets = max_buckets
        self.width = float(width)
        self.count = 0  # buckets in use: every series is this long when read
        self.series: dict[Any, list[int]] = {}

    def index(self, t: float) -> int:
        """The bucket of time ``t`` (seconds from the start; < 0 counts as 0), widening
        the buckets first if it lies past the last one allowed."""
        t = max(0.0, t)
        index = int(t / self.width)
        while index >= self.max_buckets:
            self._merge()
            index = int(t / self.width)
        self.count = max(self.count, index + 1)
        return index

    def add(self, key: Any, t: float, n: int = 1) -> None:
        index = self.index(t)
        values = self.series.get(key)
        if values is None:
            values = self.series[key] = []
        if len(values) <= index:
            values.extend([0] * (index + 1 - len(values)))
        values[index] += n

    def values(self, key: Any) -> list[int]:
        """The series of ``key``, ``count`` long (zeros where nothing was counted)."""
        values = self.series.get(key, [])
        return values + [0] * (self.count - len(values))

    def total(self, key: Any) -> int:
        return sum(self.series.get(key, ()))

    def _merge(self) -> None:
        self.width *= 2
        self.count = (self.count + 1) // 2
        for values in self.series.values():
            if len(values) % 2:
                values.append(0)
            values[:] = [a + b for a, b in zip(values[::2], values[1::2], strict=True)]


class Timeline:
    """The run's timeline: requests and refusals per host and bucket, intervals, events."""

    def __init__(
        self,
        max_buckets: int = 600,
        max_hosts: int = 20,
        list_cap: int = 1000,
        width: float = 1.0,
    ):
        self.buckets = Buckets(max_buckets, width)
        self.max_hosts = max(0, max_hosts)
        self.list_cap = max(0, list_cap)
        self.hosts: list[str] = []  # the hosts with series of their own, in order seen
        self._own: set[str] = set()
        self.intervals: dict[str, list[list[float]]] = {}
        self.events: list[dict[str, Any]] = []
        self.events_count = 0

    def host_key(self, host: str) -> str:
        """``host`` itself while there is room for it, else ``OTHER_HOSTS``."""
        if host in self._own:
            return host
        if len(self.hosts) < self.max_hosts:
            self.hosts.append(host)
            self._own.add(host)
            return host
        return OTHER_HOSTS

    def request(self, host: str, t: float, n: int = 1) -> None:
        self.buckets.add((self.host_key(host), REQUESTS), t, n)

    def refusal(self, host: str, t: float, n: int = 1) -> None:
        self.buckets.add((self.host_key(host), REFUSALS), t, n)

    def interval(self, host: str, t: float, seconds: float) -> None:
        """From ``t`` on, ``host``'s interval is ``seconds``. A change in the same bucket
        as the one before replaces it; a change to the value in force is none."""
        key = self.host_key(host)
        if key == OTHER_HOSTS:
            return  # an interval of many hosts at once would mean nothing
        t, seconds = round(max(0.0, t), 3), round(seconds, 3)
        steps = self.intervals.setdefault(key, [])
        self.buckets.index(t)  # widens the buckets first if t lies past them
        _step(steps, [t, seconds], self.buckets.width)

    def event(self, host: str, t: float, kind: str, seconds: float) -> None:
        self.events_count += 1
        if len(self.events) < self.list_cap:
            entry = {"t": round(max(0.0, t), 3), "host": host, "kind": kind}
            self.events.append(entry | {"seconds": round(seconds, 3)})

    def requests_total(self) -> int:
        return sum(self.buckets.total((host, REQUESTS)) for host in self._keys())

    def _keys(self) -> list[str]:
        others = any(key[0] == OTHER_HOSTS for key in self.buckets.series)
        return [*self.hosts, *([OTHER_HOSTS] if others else [])]

    def _thin_intervals(self) -> None:
        """Keep the last change of each bucket (the buckets may have widened since)."""
        width = self.buckets.width
        for host, steps in self.intervals.items():
            kept: list[list[float]] = []
            for step in steps:
                _step(kept, step, width)
            self.intervals[host] = kept

    def as_dict(self) -> dict[str, Any]:
        self._thin_intervals()
        buckets = self.buckets
        return {
            "bucket_seconds": buckets.width,
            "buckets": buckets.count,
            "max_buckets": buckets.max_buckets,
            "hosts": {
                host: {
                    REQUESTS: buckets.values((host, REQUESTS)),
                    REFUSALS: buckets.values((host, REFUSALS)),
                    "interval": [list(step) for step in self.intervals.get(host, ())],
                }
                for host in self._keys()
            },
            "events": list(self.events),
            "events_count": self.events_count,
        }


def _step(steps: list[list[float]], step: list[float], width: float) -> None:
    """Add ``step`` ([t, seconds]) to a step function kept one change a bucket of
    ``width``: no change is none; a change in the last change's bucket replaces its value
    (at the earlier time: the step function starts where it started)."""
    if steps and steps[-1][1] == step[1]:
        return
    t = step[0]
    bucket = int(t / width)
    while steps and int(steps[-1][0] / width) == bucket:
        t = steps.pop()[0]
    if not steps or steps[-1][1] != step[1]:
        steps.append([t, step[1]])
