"""The Redis client of a distributed run: one ``redis.Redis`` per process (the ``redis``
extra), blocking — every call is one round-trip on a LAN, as scrapy-redis does — with
reconnect back-off so a Redis restart pauses the worker instead of failing it at once.

``REDIS_URL`` is checked before anything is written: an address that does not answer is
said in one line naming it (``RedisUnavailable``)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

# How long a worker keeps retrying a Redis that went away (seconds, REDIS_RECONNECT_TIMEOUT).
DEFAULT_RECONNECT_TIMEOUT = 60.0


class RedisUnavailable(Exception):
    """The Redis server of ``REDIS_URL`` cannot be used (one line, naming the address)."""


def redis_address(url: str) -> str:
    """The address to name in messages: ``host:port/db``, without a password."""
    parts = urlsplit(url)
    host = parts.hostname or "localhost"
    port = parts.port or 6379
    return f"{host}:{port}{parts.path or '/0'}"


def connect(url: str, reconnect_timeout: float = DEFAULT_RECONNECT_TIMEOUT) -> Any:
    """A client for ``url`` that answered ``PING``; ``RedisUnavailable`` otherwise. Calls
    that meet a dropped connection retry with exponential back-off (0.1 s doubling, at
    most 5 s apart) for about ``reconnect_timeout`` seconds in all."""
    try:
        import redis
        from redis.backoff import ExponentialBackoff, NoBackoff
        from redis.retry import Retry
    except ImportError:
        raise RedisUnavailable(
            "REDIS_URL is set but the redis client is not installed "
            "(pip install 'discovery-crawler[redis]')"
        ) from None
    if urlsplit(url).scheme not in ("redis", "rediss", "unix"):
        raise RedisUnavailable(f"REDIS_URL {url!r}: expected redis://host:port/db")

    def client(retry: Retry) -> Any:
        return redis.Redis.from_url(
            url,
            socket_connect_timeout=5,
            socket_timeout=30,
            health_check_interval=30,
            retry=retry,
            retry_on_error=[redis.ConnectionError, redis.TimeoutError],
        )

    try:
        # PING without back-off: at start an address that does not answer fails now
        with client(Retry(NoBackoff(), 0)) as probe:
            probe.ping()
    except ValueError as exc:
        raise RedisUnavailable(f"REDIS_URL {url!r}: {exc}") from None
    except redis.RedisError as exc:
        raise RedisUnavailable(
            f"cannot reach Redis at {redis_address(url)} (REDIS_URL): {_reason(exc)}"
        ) from None
    backoff = ExponentialBackoff(cap=5.0, base=0.1)
    return client(Retry(backoff, _retries_within(reconnect_timeout)))


def _retries_within(timeout: float) -> int:
    """How many back-off steps (0.1, 0.2, … capped at 5 s) fit in ``timeout`` seconds."""
    total, step, count = 0.0, 0.1, 0
    while total < timeout:
        total += min(step, 5.0)
        step *= 2
        count += 1
    return max(count, 1)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
