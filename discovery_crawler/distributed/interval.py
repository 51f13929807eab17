"""One politeness budget per host across every worker of a job: the hosts' turns kept in
Redis (``HOST_INTERVAL_BUDGET``, set by ``REDIS_URL``), under the same waiting place as a
local run's (``extensions/host_turns.py``, ``HostTurns``): a request is sent once its
worker took its host's turn, atomically, on one clock (Redis ``TIME``, so the machines'
clocks do not matter).

A host's hash holds its last send (``last``), the largest interval any worker asked for
(``iv``: the host's ``HOST_INTERVAL`` or override, raised by its robots ``Crawl-delay``
up to ``MAX_CRAWL_DELAY``; one worker's reading of robots.txt spaces them all) and the
end of its hold (``hold``: a Retry-After or a back-off pause one worker met holds the
host for every worker). All in microseconds of Redis time. A failing host's one request
at a time, a pause apart, is each worker's own (its probe's answer is what it waits for).

Each answer moves the host's ``last`` to the moment it came (``answers_anchor``), and the
next turn waits for the answer to the last one (``open``), at most an interval longer
(asking every 10 ms): a worker whose request was delayed on its way (its process, or the
server's reader, descheduled between taking the turn and the request being read) would
otherwise land next to the send another worker made on time; counted from the answer,
the next turn is an interval after the request arrived. A local run needs no such thing:
one loop orders all its sends.

Redis gone past ``REDIS_RECONNECT_TIMEOUT``: the worker's frontier (``DiscoveryRun.frontier``)
stops the worker, and the requests waiting for a turn, like every later one, are dropped
at once (``IgnoreRequest``) rather than waiting again.
"""

from __future__ import annotations

from contextlib import suppress
from typing import TYPE_CHECKING

from scrapy.exceptions import IgnoreRequest

from discovery_crawler.distributed.connection import DEFAULT_RECONNECT_TIMEOUT, connect
from discovery_crawler.distributed.job import JobKeys
from discovery_crawler.extensions.run import run_of

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

_NOW = "local t = redis.call('TIME') local now = tonumber(t[1]) * 1000000 + tonumber(t[2])\n"
# KEYS: the host's hash;  ARGV: the host's interval, this worker's extra spacing, the
# poll while the last turn is unanswered (µs). Taken: minus the moment (the send noted
# now, its turn open until answered); else the microseconds still to wait.
CLAIM = (
    _NOW
    + """
local h = redis.call('HMGET', KEYS[1], 'last', 'iv', 'hold', 'open')
local iv = math.max(tonumber(ARGV[1]), tonumber(h[2] or 0))
local due = tonumber(h[3] or 0)
if h[1] then due = math.max(due, tonumber(h[1]) + math.max(iv, tonumber(ARGV[2]))) end
if now < due then return due - now end
if h[4] then
  local cap = tonumber(h[4]) + 2 * iv
  if now < cap then return math.min(tonumber(ARGV[3]), cap - now) end
end
redis.call('HSET', KEYS[1], 'last', now, 'iv', iv, 'open', now)
redis.call('PEXPIRE', KEYS[1], math.floor(iv / 1000) + 600000)
return -now
"""
)
# KEYS: the host's hash;  ARGV: microseconds from now. No turn before then (never sooner).
HOLD = (
    _NOW
    + """
local hold = now + tonumber(ARGV[1])
if hold > tonumber(redis.call('HGET', KEYS[1], 'hold') or 0) then
  redis.call('HSET', KEYS[1], 'hold', hold)
  redis.call('PEXPIRE', KEYS[1], math.floor(tonumber(ARGV[1]) / 1000) + 600000)
end
return 0
"""
)
# KEYS: the host's hash;  ARGV: microseconds ago, the turn this worker took last (µs).
# The last send was then, unless later; that turn, if still the open one, is answered.
ANCHOR = (
    _NOW
    + """
local at = now - tonumber(ARGV[1])
local h = redis.call('HMGET', KEYS[1], 'last', 'open')
if at > tonumber(h[1] or 0) then redis.call('HSET', KEYS[1], 'last', at) end
if h[2] and tonumber(h[2]) == tonumber(ARGV[2]) then redis.call('HDEL', KEYS[1], 'open') end
redis.call('PEXPIRE', KEYS[1], 600000)
return 0
"""
)
BUDGET = "discovery_crawler.distributed.interval.RedisBudget"
_US = 1_000_000
_POLL = 10_000  # µs between two asks while the host's last request is unanswered


class RedisBudget:
    """The hosts' turns of a job's workers, in Redis (``extensions/host_turns.HostBudget``)."""

    answers_anchor = True  # a send delayed in one worker must not land on another's

    def __init__(self, crawler: Crawler):
        settings = crawler.settings
        self.client = connect(
            settings.get("REDIS_URL"),
            settings.getfloat("REDIS_RECONNECT_TIMEOUT", DEFAULT_RECONNECT_TIMEOUT),
        )
        self.prefix = JobKeys(settings.getdict("REDIS_JOB")["name"]).prefix
        self.stats = crawler.stats
        self.crawler = crawler
        from redis.exceptions import RedisError  # the redis extra (checked by connect)

        self._errors = RedisError
        self._claim = self.client.register_script(CLAIM)
        self._hold = self.client.register_script(HOLD)
        self._anchor = self.client.register_script(ANCHOR)
        self._taken: dict[str, int] = {}  # host -> the turn this worker took last (µs)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def claim(self, host: str, interval: float, spacing: float) -> float:
        if interval <= 0 and spacing <= 0:
            # politeness off: no round trip per request (a Retry-After still holds the
            # worker that met it, through its own throttle)
            return 0.0
        args = [int(interval * _US), int(spacing * _US), _POLL]
        answer = int(self._call(self._claim, host, args))
        if answer <= 0:
            self._taken[host] = -answer
            return 0.0
        self.stats.inc_value("redis/interval/waits")
        return answer / _US

    def hold(self, host: str, seconds: float) -> None:
        if seconds > 0:
            with suppress(IgnoreRequest):  # Redis lost: the worker is stopping anyway
                self._call(self._hold, host, [int(seconds * _US)])

    def anchor(self, host: str, ago: float = 0.0) -> None:
        with suppress(IgnoreRequest):
            self._call(self._anchor, host, [int(max(0.0, ago) * _US), self._taken.get(host, 0)])

    def _call(self, script: object, host: str, args: list[int]) -> object:
        """Run ``script`` on ``host``'s hash. Redis lost: the worker's frontier stops it and
        the request is dropped (``IgnoreRequest``)."""
        run = run_of(self.crawler)
        frontier = run.frontier if run is not None else None
        if frontier is not None and frontier.lost:
            raise IgnoreRequest(frontier.lost)
        try:
            return script(keys=[f"{self.prefix}host:{host}"], args=args)  # type: ignore[operator]
        except self._errors as exc:
            if frontier is None:
                raise
            frontier.lose_connection(exc)
            raise IgnoreRequest(frontier.lost) from None
