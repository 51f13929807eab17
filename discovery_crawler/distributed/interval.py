"""One politeness budget per host across every worker of a job: Scrapy's HTTP/1.1
download handler, which first reserves the host's next send time in Redis and waits for
it (``RESERVE``: one clock, Redis ``TIME``, so machines' clocks do not matter), then
claims the send (``CLAIM``: the last send an interval ago, or wait the rest) and sends.
A reservation at send time holds at the server; the local host throttle
(``extensions/throttle.py``) still spaces each worker's own sends as before.

The interval is the larger of the host's ``HOST_INTERVAL`` (or its
``HOST_INTERVAL_OVERRIDES``) and its robots ``Crawl-delay`` (capped by
``MAX_CRAWL_DELAY``), and the largest any worker asked for stays (``iv`` in the host's
hash): one worker's reading of robots.txt spaces them all. Retry-After and failure
pauses are still per worker (docs/_incoming/redis.md, what is left).

A subclass, not a wrapper of another handler: its connections are HTTP11's, so the SSRF
guard's resolver pins them too (``middlewares/ssrf.py`` lists it as guarded)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import reactor
from twisted.internet.task import deferLater

from discovery_crawler.distributed.connection import DEFAULT_RECONNECT_TIMEOUT, connect
from discovery_crawler.distributed.job import JobKeys
from discovery_crawler.extensions.run import run_of

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

# KEYS: the host's hash;  ARGV: this request's interval (ms)
# Returns the milliseconds to wait before sending (0: now). The reservation is the later
# of now and the host's next free time; the next free time moves one interval on.
RESERVE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local h = redis.call('HMGET', KEYS[1], 'next', 'iv')
local iv = math.max(tonumber(ARGV[1]), tonumber(h[2] or 0))
local at = math.max(now, tonumber(h[1] or 0))
redis.call('HSET', KEYS[1], 'next', at + iv, 'iv', iv)
redis.call('PEXPIRE', KEYS[1], at - now + 2 * iv + 600000)
return at - now
"""
# KEYS: the host's hash;  ARGV: this request's interval (ms)
# Just before sending: go (0) if the last send to the host was an interval ago or more,
# and note this send; else the milliseconds still to wait. A worker that woke late for
# its reservation (its reactor busy) moves the next reservation on, so the gaps at the
# server are between actual sends, not between reservations.
CLAIM = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local h = redis.call('HMGET', KEYS[1], 'last', 'iv', 'next')
local iv = math.max(tonumber(ARGV[1]), tonumber(h[2] or 0))
if h[1] and now < tonumber(h[1]) + iv then return tonumber(h[1]) + iv - now end
redis.call('HSET', KEYS[1], 'last', now)
if tonumber(h[3] or 0) < now + iv then redis.call('HSET', KEYS[1], 'next', now + iv) end
return 0
"""
CRAWL_DELAY_META = "robots_crawl_delay"  # set by the robots middleware (throttle.py)
HANDLER = "discovery_crawler.distributed.interval.RedisIntervalHandler"


def _nothing() -> None:
    return None


class RedisIntervalHandler(HTTP11DownloadHandler):
    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        settings = crawler.settings
        self.client = connect(
            settings.get("REDIS_URL"),
            settings.getfloat("REDIS_RECONNECT_TIMEOUT", DEFAULT_RECONNECT_TIMEOUT),
        )
        self.keys = JobKeys(settings.getdict("REDIS_JOB")["name"])
        self.interval = max(settings.getfloat("HOST_INTERVAL", 1.0), 0.0)
        self.overrides = {
            str(host): float(value)
            for host, value in settings.getdict("HOST_INTERVAL_OVERRIDES").items()
        }
        self.max_crawl_delay = max(settings.getfloat("MAX_CRAWL_DELAY", 30.0), 0.0)
        self.stats = crawler.stats
        self.crawler = crawler
        from redis.exceptions import RedisError  # the redis extra (checked by connect)

        self._errors = RedisError
        self._reserve = self.client.register_script(RESERVE)
        self._claim = self.client.register_script(CLAIM)

    def interval_of(self, host: str, meta: dict[str, Any]) -> float:
        """Seconds between two sends to ``host``, as this worker knows it."""
        interval = self.overrides.get(host, self.interval)
        delay = meta.get(CRAWL_DELAY_META)
        if delay and self.max_crawl_delay:
            interval = max(interval, min(float(delay), self.max_crawl_delay))
        return interval

    async def download_request(self, request: Request) -> Response:
        parts = urlsplit(request.url)
        host = parts.hostname or ""
        interval = self.interval_of(host, request.meta)
        if interval > 0:
            await self._wait_turn(parts.netloc.lower(), interval)
        return await super().download_request(request)

    async def _wait_turn(self, netloc: str, interval: float) -> None:
        """Wait for the host's turn, job-wide. Redis gone past REDIS_RECONNECT_TIMEOUT:
        the worker's frontier (``DiscoveryRun.frontier``) stops the worker, and this
        request, like every later one, is dropped at once rather than waiting again."""
        run = run_of(self.crawler)
        frontier = run.frontier if run is not None else None
        if frontier is not None and frontier.lost:
            raise IgnoreRequest(frontier.lost)
        try:
            await self._wait_turn_in_redis(netloc, interval)
        except self._errors as exc:
            if frontier is None:
                raise
            frontier.lose_connection(exc)
            raise IgnoreRequest(frontier.lost) from None

    async def _wait_turn_in_redis(self, netloc: str, interval: float) -> None:
        if interval > 0:
            key = f"{self.keys.prefix}host:{netloc}"
            args = [int(interval * 1000)]
            wait_ms = int(self._reserve(keys=[key], args=args))
            while True:
                if wait_ms > 0:
                    self.stats.inc_value("redis/interval/waits")
                    self.stats.inc_value("redis/interval/wait_ms", wait_ms)
                    await maybe_deferred_to_future(deferLater(reactor, wait_ms / 1000, _nothing))
                wait_ms = int(self._claim(keys=[key], args=args))
                if wait_ms <= 0:
                    break
