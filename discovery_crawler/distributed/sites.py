"""A sites file shared over Redis: ``scrapy rediscover SITES_FILE -s REDIS_URL=…`` run on
several machines takes the file's sites from one list, each site by one machine at a
time (``commands/rediscover.py`` runs it there as a local crawl, into its own root).

A *round* is one pass over the list, named ``--job NAME`` (default ``sites-<8 hex>``, a
digest of the file's sites: the same file started on several machines joins one round).
Its keys live under ``dc:{sites:<name>}:`` and reuse the frontier's Lua scripts
(``scripts.py``): the sites are the ``queue`` (ZSET, scored by line: the file's order)
and ``requests`` (HASH line → the site as JSON); a machine *leases* a site (``LEASE``)
while it runs, heartbeating ``alive:<worker>``; a machine killed (SIGKILL, lost) stops
beating, and any other machine still in the round hands its sites back (``REAP``) to
be run again. A site that ends, whatever its outcome, is recorded in ``results``
(HASH line → outcome, host, root, log) and its lease acknowledged (``ACK``).

The round is done when nothing is queued or leased: the machine that sees it first
(``finisher``, SET NX) keeps the results as ``done`` for ``DONE_KEPT_SECONDS`` (a machine
started late is told the round is over rather than running it again) and deletes the
rest.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import time
from dataclasses import dataclass, field
from hashlib import sha1
from typing import Any

from discovery_crawler.distributed import scripts
from discovery_crawler.distributed.connection import connect, redis_address
from discovery_crawler.distributed.job import JobKeys

DONE_KEPT_SECONDS = 3600  # a finished round's results stay this long (``done``)
REAP_GRACE = 10.0  # s after Redis was away before reaping: the others reconnect first

# KEYS: identity, queue, requests, done;  ARGV: identity JSON, then line, site JSON pairs
# The round, created with all its sites in one step (a machine joining in between would
# see an empty queue and call the round done), joined, or found finished.
OPEN = """
local done = redis.call('GET', KEYS[4])
if done then return {'done', done} end
if redis.call('SET', KEYS[1], ARGV[1], 'NX') then
  for i = 2, #ARGV, 2 do
    redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1])
    redis.call('ZADD', KEYS[2], tonumber(ARGV[i]), ARGV[i])
  end
  return {'new', ''}
end
return {'joined', redis.call('GET', KEYS[1]) or ''}
"""


class RoundMismatch(Exception):
    """This machine's sites file is not the round's (one line)."""


class RoundLost(Exception):
    """Redis stopped answering, or the round's keys are gone (one line)."""


class RoundOver(Exception):
    """The round was finished before this machine joined; ``results`` says how."""

    def __init__(self, line: str, results: dict[str, Any]):
        super().__init__(line)
        self.results = results


def round_identity(sites: list[dict[str, Any]]) -> dict[str, Any]:
    """What every machine of a round shares: the file's sites, in order."""
    return {"sites": [[s["url"], dict(sorted(s["arguments"].items()))] for s in sites]}


def default_round_name(identity: dict[str, Any]) -> str:
    digest = sha1(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:8]
    return f"sites-{digest}"


def worker_name() -> str:
    """This rediscover, unique across machines and restarts: ``host:pid:random``."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


@dataclass
class SitesRound:
    """One machine's part in a round (see the module's docstring). Every method that talks
    to Redis raises ``RoundLost`` when Redis is gone past the client's back-off, or the
    round's keys are gone."""

    client: Any
    name: str
    address: str
    ttl_ms: int
    reconnect_timeout: float = 0.0
    worker: str = field(default_factory=worker_name)
    keys: JobKeys = field(init=False)
    _next_beat: float = 0.0
    _reap_after: float = 0.0
    _run_id: str | None = None

    def __post_init__(self) -> None:
        from redis.exceptions import RedisError

        self._errors = RedisError
        self.keys = JobKeys(f"sites:{self.name}")
        register = self.client.register_script
        self._open = register(OPEN)
        self._lease = register(scripts.LEASE)
        self._ack = register(scripts.ACK)
        self._release = register(scripts.RELEASE)
        self._reap = register(scripts.REAP)
        self._pending = register(scripts.PENDING)

    @property
    def results_key(self) -> str:  # HASH: line -> the site's outcome (JSON)
        return self.keys.prefix + "results"

    @property
    def done_key(self) -> str:  # the finished round's results (JSON), kept a while
        return self.keys.prefix + "done"

    @classmethod
    def join(
        cls,
        url: str,
        name: str | None,
        sites: list[dict[str, Any]],
        heartbeat_timeout: float,
        reconnect_timeout: float,
    ) -> SitesRound:
        """Connect (``RedisUnavailable``), then create or join the round of ``sites``
        (``RoundMismatch``, ``RoundOver``)."""
        identity = round_identity(sites)
        client = connect(url, reconnect_timeout)
        one = cls(
            client,
            name or default_round_name(identity),
            redis_address(url),
            max(int(heartbeat_timeout * 1000), 1000),
            reconnect_timeout,
        )
        one._join(identity, sites)
        return one

    def _join(self, identity: dict[str, Any], sites: list[dict[str, Any]]) -> None:
        keys = self.keys
        text = json.dumps(identity, sort_keys=True)
        pairs: list[Any] = []
        for site in sites:
            pairs += [site["line"], json.dumps(site, sort_keys=True)]
        try:
            how, stored = self._open(
                keys=[keys.identity, keys.queue, keys.requests, self.done_key], args=[text, *pairs]
            )
        except self._errors as exc:
            raise self._lost(exc) from None
        how = how.decode() if isinstance(how, bytes) else how
        if how == "done":
            results = json.loads(stored)
            raise RoundOver(
                f"round {self.name} was finished at {results.get('finished_at')} "
                f"({len(results.get('sites', {}))} sites): nothing to run; its results: "
                f"redis-cli -u {self.address_url} GET '{self.done_key}' (kept "
                f"{DONE_KEPT_SECONDS} s); give another --job NAME to run the list again",
                results,
            )
        if how == "joined" and json.loads(stored) != identity:
            raise RoundMismatch(
                f"round {self.name} runs another sites file (other sites or arguments); "
                "give every machine the same file, or another --job NAME"
            )
        self.beat(force=True)

    @property
    def address_url(self) -> str:
        return f"redis://{self.address}"

    # -- the machine's life -----------------------------------------------------------------
    def beat(self, force: bool = False) -> int:
        """Every third of the heartbeat timeout: this machine alive, and the sites of
        machines whose heartbeat lapsed handed back (how many)."""
        now = time.monotonic()
        if not force and now < self._next_beat:
            return 0
        self._next_beat = now + self.ttl_ms / 3000
        keys = self.keys
        try:
            started = time.monotonic()
            if not self.client.exists(keys.identity) and not self._finished():
                raise self._gone()  # Redis restarted without its data: said now, not later
            self.client.set(keys.alive(self.worker), "1", px=self.ttl_ms)
            self.client.sadd(keys.workers, self.worker)
            run_id = self.client.info("server").get("run_id")
            if time.monotonic() - started > 1.0 or (self._run_id and run_id != self._run_id):
                # Redis was away or restarted: the others' heartbeats may have lapsed
                self._reap_after = time.monotonic() + self.ttl_ms / 1000 + REAP_GRACE
            self._run_id = run_id
            if time.monotonic() < self._reap_after:
                return 0
            return int(self._reap(keys=[keys.workers, keys.queue], args=[keys.prefix]))
        except self._errors as exc:
            raise self._lost(exc) from None

    def take(self) -> dict[str, Any] | None:
        """The next site of the file, leased to this machine; None when none is queued."""
        keys, worker = self.keys, self.worker
        try:
            got = self._lease(
                keys=keys.lease_keys(worker),
                args=[worker, self.ttl_ms],
            )
        except self._errors as exc:
            raise self._lost(exc) from None
        if got == -1:
            if self._finished():  # another machine just ended the round
                return None
            raise self._gone()
        if not got:
            return None
        return json.loads(got[1])

    def _finished(self) -> bool:
        try:
            return bool(self.client.exists(self.done_key))
        except self._errors as exc:
            raise self._lost(exc) from None

    def ended(self, site: dict[str, Any], result: dict[str, Any]) -> None:
        """``site`` ran here and ended (``result``: its outcome, this host and root): it is
        recorded and its lease acknowledged."""
        keys = self.keys
        entry = {**result, "host": socket.gethostname(), "worker": self.worker}
        try:
            self.client.hset(self.results_key, str(site["line"]), json.dumps(entry))
            self._ack(
                keys=[keys.lease(self.worker), keys.requests, keys.depths], args=[site["line"], "-"]
            )
        except self._errors as exc:
            raise self._lost(exc) from None

    def pending(self) -> tuple[int, int]:
        """(sites queued, sites leased by any machine); ``RoundLost`` when the round is
        gone unfinished, (0, 0) when another machine just finished it."""
        keys = self.keys
        try:
            queued, leased, exists = self._pending(
                keys=[keys.workers, keys.queue, keys.identity], args=[keys.prefix]
            )
            if not exists:
                if self._finished():
                    return 0, 0
                raise self._gone()
        except self._errors as exc:
            raise self._lost(exc) from None
        return int(queued), int(leased)

    def finish(self) -> dict[str, Any] | None:
        """Nothing queued or leased: the first machine to get here ends the round (its
        results, or None for the others)."""
        keys = self.keys
        try:
            if not self.client.set(keys.finisher, self.worker, nx=True):
                return None
            if self.client.exists(self.done_key):  # another ended it and deleted its keys
                self.client.delete(keys.finisher)
                return None
            raw = self.client.hgetall(self.results_key)
            sites = {k.decode(): json.loads(v) for k, v in raw.items()}
            ordered = dict(sorted(sites.items(), key=lambda kv: int(kv[0])))
            results = {
                "round": self.name,
                "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "finisher": self.worker,
                "sites": ordered,
            }
            self.client.set(self.done_key, json.dumps(results), ex=DONE_KEPT_SECONDS)
            self._delete_keys()
        except self._errors as exc:
            raise self._lost(exc) from None
        return results

    def leave(self) -> int:
        """This machine out of the round: the sites it still leases (stopped before they
        ended) go back to the queue for another machine (how many)."""
        keys = self.keys
        try:
            back = int(
                self._release(
                    keys=[keys.queue, keys.lease(self.worker), keys.claims(self.worker)],
                    args=[keys.prefix],
                )
            )
            self.client.srem(keys.workers, self.worker)
            self.client.delete(keys.alive(self.worker))
        except self._errors:
            return 0  # Redis gone: its heartbeat lapses, and another machine reaps them
        return back

    def _delete_keys(self) -> None:
        prefix = self.keys.prefix
        pattern = "".join("\\" + c if c in "*?[]\\" else c for c in prefix) + "*"
        doomed = [k for k in self.client.scan_iter(match=pattern, count=1000)]
        doomed = [k for k in doomed if k.decode() != self.done_key]
        for i in range(0, len(doomed), 1000):
            self.client.unlink(*doomed[i : i + 1000])

    # -- Redis gone -------------------------------------------------------------------------
    def _lost(self, exc: BaseException) -> RoundLost:
        from redis.exceptions import ConnectionError, TimeoutError

        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if isinstance(exc, (ConnectionError, TimeoutError)):
            what = (
                f"did not answer for {self.reconnect_timeout:g} s (REDIS_RECONNECT_TIMEOUT): "
                f"{reason}"
            )
        else:
            what = f"answered with an error: {reason}"
        return RoundLost(
            f"Redis at {self.address} (REDIS_URL) {what}; round {self.name} stops here"
        )

    def _gone(self) -> RoundLost:
        return RoundLost(
            f"round {self.name} is gone from Redis at {self.address} (Redis restarted "
            "without its data, or the keys were deleted): which sites ran is lost; run "
            "the list again"
        )
