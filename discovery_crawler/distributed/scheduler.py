"""Scrapy's scheduler backed by Redis: one frontier for every worker of a job.

Page fetches (``meta["page_fetch"]``, the link crawl's requests) go to the job's queue in
Redis; every other request (robots.txt, sitemaps, verify's checks) stays in this worker's
own Scrapy ``Scheduler``, which this one wraps and asks first.

- **Claim** (``scripts.CLAIM``, ``claim``): the link crawl asks before it requests a page
  (``DiscoveryRun.frontier`` is this scheduler): the URL's seen-set slot (``seen.py``, the
  link crawl's twin key) and one of the job's ``max_pages`` taken in one step, so a page
  is requested once per job and the budget holds over every worker; a claimed request
  (``meta["job_claimed"]``) is enqueued without another look.
- **Enqueue** (``scripts.ENQUEUE``): a request not claimed (a seed, a canonical's fetch)
  is de-duplicated job-wide by the same slot, unless ``dont_filter`` (a retry); ordered
  by priority, then arrival — the link crawl's breadth-first order.
- **Lease, not pop** (``scripts.LEASE``): the request moves to this worker's lease hash.
  It is acknowledged once the engine is done with it — its callback's or errback's
  output handed to the scheduler, a retry or redirect enqueued — which is when the engine
  removes it from its slot (``ExecutionEngine._remove_request``, private:
  ``private_names.py``; no signal fires then). A page acknowledged stays on the worker's
  account (``scripts.KEEP_PAGE``: ``read:<worker>``) until its record is in the job
  (``result.py``): a worker killed before it handed its records over has its pages
  fetched again by the others, so none of them is missing from the job's inventory.
- **Heartbeat and reaper**: a thread refreshes ``alive:<worker>`` (TTL
  ``REDIS_HEARTBEAT_TIMEOUT``) and requeues the leases of workers whose key expired
  (SIGKILL, a lost machine); a live worker's leases are never taken, however slow it is.
- **Job-wide idle**: there is work while the queue is not empty or any worker holds a
  lease, so a worker does not close while another may still find links.
- **The end**: the last worker to close a finished job deletes its keys.
- **Redis gone**: the client retries a dropped connection with back-off for
  ``REDIS_RECONNECT_TIMEOUT`` seconds (the worker paused meanwhile; a Redis restarted with
  its data goes on where it was). Past that, or when the job's identity key is missing
  (Redis restarted without its data), the worker stops: one line, the run ``failed``
  (exit 1) — never a worker that ends as if the job were done (``_lost``).

Requests are stored as Scrapy's ``Request.to_dict`` (callbacks named as spider methods),
pickled as Scrapy's disk queues do.
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import secrets
import socket
import threading
import time
from typing import TYPE_CHECKING, Any

from scrapy.core.scheduler import BaseScheduler, Scheduler
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.request import request_from_dict
from twisted.internet import reactor
from twisted.internet.task import deferLater

from discovery_crawler.distributed import scripts
from discovery_crawler.distributed.connection import (
    DEFAULT_RECONNECT_TIMEOUT,
    connect,
    redis_address,
)
from discovery_crawler.distributed.job import JobKeys, JobMismatch, join_job
from discovery_crawler.distributed.merge import citation_fields, citation_order
from discovery_crawler.distributed.result import JobResult
from discovery_crawler.distributed.seen import seen_slot
from discovery_crawler.extensions.run import run_of
from discovery_crawler.private_names import after_request_removed, poll_scheduler_every
from discovery_crawler.urls.normalize import twin_key

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

# The setting a run entry fills (spiders/base.py): {"name": job name, "identity": {...}}
JOB_SETTING = "REDIS_JOB"
CLAIMED_META = "job_claimed"  # set by the link crawl on a request it claimed (claim)
# set by the sitemap walk on a sitemap or robots.txt request it shared with the job
# (share_sitemap): its place in one run's reading order
SITEMAP_META = "job_sitemap"
# on a page a dead worker leased or fetched, handed back and leased again (links.py)
FETCHED_AGAIN = "job_fetched_again"
DEFAULT_HEARTBEAT_TIMEOUT = 30.0
IDLE_POLL_SECONDS = 0.5
ROBOTS_WAIT_SECONDS = 60.0  # a worker waits this long for another's robots.txt fetch
RECONNECT_GRACE = 10.0  # seconds (connection.py: back-off steps of at most 5 s)


def worker_name() -> str:
    """This process, unique across machines and restarts: ``host:pid:random``."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


class RedisScheduler(BaseScheduler):
    def __init__(
        self,
        crawler: Crawler,
        client: Any,
        job: dict[str, Any],
        local: Scheduler,
        heartbeat_timeout: float = DEFAULT_HEARTBEAT_TIMEOUT,
        address: str = "",
        reconnect_timeout: float = DEFAULT_RECONNECT_TIMEOUT,
    ) -> None:
        from redis.exceptions import RedisError  # the redis extra (checked by connect)

        self._errors = RedisError
        self.address = address
        self.reconnect_timeout = reconnect_timeout
        self.lost: str | None = None  # why this worker lost its job (it stops)
        self.close_reason: str | None = None
        self.finished = False  # closed with "finished": the job may be done
        self._reap_after = 0.0  # monotonic: no reaping before (others reconnecting)
        self._run_id: str | None = None  # Redis's run_id at the last heartbeat
        self.crawler = crawler
        self.stats = crawler.stats
        self.client = client
        self.keys = JobKeys(job["name"])
        self.identity = job["identity"]
        self.local = local
        self.worker = worker_name()
        self.ttl_ms = max(int(heartbeat_timeout * 1000), 1000)
        self.spider: Spider | None = None
        self._leased: dict[Request, tuple[str, int]] = {}  # request -> (its id, its depth)
        self._done: set[str] = set()  # leased pages no longer counted at their depth
        # Leases kept past their request until this worker has admitted the links those
        # pages found (held for level n): level n -> ids. A worker killed with links
        # held hands the pages back, so another finds the links again.
        self._kept: dict[int, list[str]] = {}
        self._requeued = 0  # by this worker's reaper, since it was last counted
        self._beating = threading.Event()
        self._heart: threading.Thread | None = None
        register = client.register_script
        self._enqueue = register(scripts.ENQUEUE)
        self._lease = register(scripts.LEASE)
        self._release = register(scripts.RELEASE)
        self._reap = register(scripts.REAP)
        self._pending = register(scripts.PENDING)
        self._claim = register(scripts.CLAIM)
        self._below = register(scripts.BELOW)
        self._share_sitemap = register(scripts.SHARE_SITEMAP)
        self._keep_read = register(scripts.KEEP_READ)
        self._keep_page = register(scripts.KEEP_PAGE)
        self._handed_over = register(scripts.HANDED_OVER)
        self._held_sent: dict[int, int] = {}
        # The job's sitemaps this worker holds unread: no more are leased past as many as
        # it fetches at once (SITEMAP_CONCURRENCY), so a free worker finds the others.
        self._sitemaps_out = 0
        self._sitemaps_max = max(1, crawler.settings.getint("SITEMAP_CONCURRENCY", 4))

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        job = settings.getdict(JOB_SETTING)
        if not job:
            raise RuntimeError(f"{JOB_SETTING}: no job (does the spider plan one?)")
        url = settings.get("REDIS_URL")
        reconnect = settings.getfloat("REDIS_RECONNECT_TIMEOUT", DEFAULT_RECONNECT_TIMEOUT)
        client = connect(url, reconnect)
        local = Scheduler.from_crawler(crawler)
        timeout = settings.getfloat("REDIS_HEARTBEAT_TIMEOUT", DEFAULT_HEARTBEAT_TIMEOUT)
        return cls(crawler, client, job, local, timeout, redis_address(url), reconnect)

    # -- the worker's life ----------------------------------------------------------------
    def open(self, spider: Spider) -> Any:
        self.spider = spider
        try:
            join_job(self.client, self.keys, self.identity)  # a script's run: not checked yet
        except JobMismatch as exc:  # the job ended since the arguments were checked
            why = str(exc)
            self.lost = why  # nothing of the job is asked or handed over: the run ends
            self.stats.set_value("redis/lost", why)
            logger.error("JOB REFUSED: %s", why)
            run = run_of(self.crawler)
            if run is not None:
                run.frontier = self  # (lost: the walk and the link crawl ask for nothing)
                run.record.failure = why
            return self.local.open(spider)
        self._run_id = self.client.info("server").get("run_id")
        self.client.set(self.keys.alive(self.worker), "1", px=self.ttl_ms)
        self.client.sadd(self.keys.workers, self.worker)
        self.client.sadd(self.keys.members, self.worker)
        after_request_removed(self.crawler.engine, self._acknowledge)
        # an idle worker asks the job's queue often: another's page may add work any time
        poll_scheduler_every(self.crawler.engine, IDLE_POLL_SECONDS)
        run = run_of(self.crawler)
        if run is not None:
            run.frontier = self  # the link crawl claims its pages here (claim)
            run.feed_hooks.append(JobResult(self, run).after_feeds)  # one result per job
        self._heart = threading.Thread(target=self._beat, name="redis-heartbeat", daemon=True)
        self._heart.start()
        logger.info("Worker %s joined job %s", self.worker, self.keys.name)
        return self.local.open(spider)

    def close(self, reason: str) -> Any:
        self.close_reason = reason
        self.finished = reason == "finished"
        self._beating.set()
        if self._heart is not None:
            self._heart.join(5)
        if self.lost is not None:  # nothing to hand back to, or no job to hand it to
            return self.local.close(reason)
        try:
            self._leave(reason)
        except self._errors as exc:
            self.lose_connection(exc)
        return self.local.close(reason)

    def _leave(self, reason: str) -> None:
        """Leases and claims handed back, this worker out of the frontier (its records
        are handed over, and the job ended by its last worker, once its feed is stored:
        ``result.py``)."""
        keys = self.keys
        released = self._release(
            keys=[keys.queue, keys.lease(self.worker), keys.claims(self.worker)],
            args=[keys.prefix],
        )
        if released:
            logger.info("Handed %d leased requests back to job %s", released, keys.name)
        # out of the frontier; its heartbeat key stays until its records are handed over
        self.client.delete(keys.held(self.worker))
        self.client.set(keys.alive(self.worker), "1", px=self.ttl_ms)
        self.client.srem(keys.workers, self.worker)
        self._count_requeued()

    def _beat(self) -> None:
        """Keep this worker alive in Redis and requeue dead workers' leases (a thread: a
        reactor busy for a while does not make the worker look dead)."""
        keys = self.keys
        while not self._beating.wait(self.ttl_ms / 3000) and self.lost is None:
            started = time.monotonic()
            try:
                if not self.client.exists(keys.identity):
                    self._call_in_reactor(self._lost_job)
                    return
                self.client.set(keys.alive(self.worker), "1", px=self.ttl_ms)
                if time.monotonic() - started > 1.0:  # Redis was away: others too
                    self._reap_after = time.monotonic() + self.ttl_ms / 1000 + RECONNECT_GRACE
                if not self._restarted() and time.monotonic() >= self._reap_after:
                    reap = self._reap(keys=[keys.workers, keys.queue], args=[keys.prefix])
                    self._requeued += reap
            except self._errors as exc:  # the client retried for REDIS_RECONNECT_TIMEOUT
                self._call_in_reactor(self.lose_connection, exc)
                return
            except Exception as exc:  # not Redis's: said, not fatal
                logger.warning("Redis heartbeat of job %s failed: %s", keys.name, exc)

    def _restarted(self) -> bool:
        """Redis restarted since the last look (its ``run_id`` changed): the other workers'
        heartbeats may have lapsed while it was down, so they get a whole timeout to beat
        again before this worker reaps their leases."""
        run_id = self.client.info("server").get("run_id")
        last, self._run_id = self._run_id, run_id
        if last is not None and run_id != last:
            # a whole timeout, plus the client's longest back-off step twice over
            self._reap_after = time.monotonic() + self.ttl_ms / 1000 + RECONNECT_GRACE
            logger.warning("Redis at %s restarted; job %s goes on", self.address, self.keys.name)
            return True
        return False

    # -- Redis gone -------------------------------------------------------------------------
    def _call_in_reactor(self, function: Any, *args: Any) -> None:
        from twisted.internet import reactor

        reactor.callFromThread(function, *args)

    def lose_connection(self, exc: BaseException) -> None:
        """Redis did not answer within REDIS_RECONNECT_TIMEOUT (or answered a command
        with an error): this worker stops."""
        from redis.exceptions import ConnectionError, TimeoutError

        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if isinstance(exc, (ConnectionError, TimeoutError)):
            what = (
                f"did not answer for {self.reconnect_timeout:g} s (REDIS_RECONNECT_TIMEOUT): "
                f"{reason}"
            )
        else:
            what = f"answered with an error: {reason}"
        self._lose(
            f"Redis at {self.address} (REDIS_URL) {what}; this worker of job "
            f"{self.keys.name} stops (its pages fetched are in its inventory; start the "
            "workers again once Redis answers to go on)"
        )

    def _lost_job(self) -> None:
        self._lose(
            f"job {self.keys.name} is gone from Redis at {self.address} (its identity key "
            "is missing: Redis restarted without its data, or the keys were deleted); this "
            "worker stops — the job's queue and seen-set are lost, run the job again"
        )

    def _lose(self, why: str) -> None:
        """This worker cannot go on with its job: said once, the run failed (exit 1),
        the crawl stopped — rather than a worker that ends as if the job were done."""
        if self.lost is not None:
            return
        self.lost = why
        self.stats.set_value("redis/lost", why)
        logger.error("REDIS LOST: %s", why)
        run = run_of(self.crawler)
        if run is not None:
            run.record.failure = run.record.failure or why
            run.stop("redis_lost")
        else:
            self.crawler.engine.close_spider_async(reason="redis_lost")

    def _count_requeued(self) -> None:
        if self._requeued:
            requeued, self._requeued = self._requeued, 0
            logger.warning("Requeued %d requests leased by workers that stopped", requeued)
            self.stats.inc_value("redis/requeued", requeued)

    def delete_job_keys(self) -> None:
        """The job is done and its result written: its keys go."""
        keys = self.keys
        batch: list[bytes] = []
        for key in self.client.scan_iter(match=_glob_escape(keys.prefix) + "*", count=1000):
            batch.append(key)
            if len(batch) >= 1000:
                self.client.unlink(*batch)
                batch.clear()
        if batch:
            self.client.unlink(*batch)
        logger.info("Job %s is done: its keys are deleted", keys.name)

    def _acknowledge(self, request: Request) -> None:
        """The engine is done with ``request``: its lease ends (its output is enqueued)."""
        leased = self._leased.pop(request, None)
        if leased is None or self.lost is not None:
            return
        rid, depth = leased
        if SITEMAP_META in request.meta:  # read: kept until its records are handed over
            self._sitemaps_out -= 1
            try:
                self._keep_read(
                    keys=[
                        self.keys.lease(self.worker),
                        self.keys.read(self.worker),
                        self.keys.sitemaps_open,
                    ],
                    args=[rid],
                )
            except self._errors as exc:
                self.lose_connection(exc)
            return
        if rid in self._done and self._held_sent.get(depth + 1):
            self._kept.setdefault(depth + 1, []).append(rid)  # its links are held here
            return
        self._ack(rid, depth)

    def _ack(self, rid: str, depth: int) -> None:
        """The page is done here: its lease ends, but the page stays on this worker's
        account (``read:<worker>``) until its record is in the job (``handed_over``): a
        worker killed before that has it fetched again by another, so no page it
        fetched is missing from the job's inventory."""
        done = rid in self._done
        self._done.discard(rid)
        keys = self.keys
        try:
            self._keep_page(
                keys=[keys.lease(self.worker), keys.read(self.worker), keys.depths],
                args=[rid, depth, "1" if done else "0"],
            )
        except self._errors as exc:
            self.lose_connection(exc)

    # -- the frontier -----------------------------------------------------------------------
    def claim(self, key: str, max_pages: int | None, citation: dict[str, Any]) -> int:
        """Claim the page of seen-set key ``key`` for this worker to request: 0 when
        the job met it before, -1 when the job's ``max_pages`` are given out (recorded
        over the budget, by this worker only), else the job's page count with it. The
        ``citation`` (depth, found_on, via, anchor) is weighed against every other
        worker's of the URL, the best kept for the job's inventory (``merge.py``)."""
        if self.lost is not None:
            return 0  # the job is lost: nothing more is requested
        bucket, member = seen_slot(key)
        keys = self.keys
        try:
            verdict = int(
                self._claim(
                    keys=[
                        keys.seen(bucket),
                        keys.requested,
                        keys.claims(self.worker),
                        keys.citations,
                        keys.depths,
                    ],
                    args=[
                        member,
                        max_pages or 0,
                        f"{bucket:x}:{member}",
                        key,
                        citation_order(citation["depth"], citation["found_on"], citation["via"]),
                        citation_fields(**citation),
                        int(citation["depth"]),
                    ],
                )
            )
        except self._errors as exc:
            self.lose_connection(exc)
            return 0
        if verdict == 0:
            self.stats.inc_value("redis/dupefilter/filtered")
        elif verdict < 0:
            self.stats.inc_value("redis/over_max_pages")
        return verdict

    def enqueue_request(self, request: Request) -> bool:
        meta = request.meta
        if not meta.get("page_fetch"):
            return self.local.enqueue_request(request)
        if self.lost is not None:
            return False
        try:
            payload = pickle.dumps(request.to_dict(spider=self.spider), protocol=4)
        except (ValueError, pickle.PicklingError, TypeError, AttributeError) as exc:
            logger.warning("Kept in this worker (not serializable: %s): %s", exc, request)
            self.stats.inc_value("redis/kept_local")
            return self.local.enqueue_request(request)
        keys = self.keys
        bucket, member_int = seen_slot(twin_key(meta.get("page_url") or request.url))
        claim = ""
        if meta.get(CLAIMED_META):  # claimed (claim): its claim ends, its request is queued
            member, seen_key, claim = "", keys.queue, f"{bucket:x}:{member_int}"
        elif request.dont_filter:
            member, seen_key = "", keys.queue
        else:
            member, seen_key = str(member_int), keys.seen(bucket)
        try:
            rid = self._enqueue(
                keys=[
                    keys.queue,
                    keys.requests,
                    keys.sequence,
                    seen_key,
                    keys.claims(self.worker),
                    keys.depths,
                ],
                args=[
                    member,
                    -request.priority,
                    payload,
                    claim,
                    int(meta.get("depth", 0)),
                    "1" if request.dont_filter or not claim else "0",
                ],
            )
        except self._errors as exc:
            self.lose_connection(exc)
            return False
        if not rid:
            self.stats.inc_value("redis/dupefilter/filtered")
            return False
        self.stats.inc_value("redis/enqueued")
        return True

    def next_request(self) -> Request | None:
        request = self.local.next_request()
        if request is not None:
            return request
        if self.lost is not None or self._sitemaps_out >= self._sitemaps_max:
            return None
        keys, worker = self.keys, self.worker
        try:
            got = self._lease(
                keys=keys.lease_keys(worker),
                args=[worker, self.ttl_ms, keys.again],
            )
        except self._errors as exc:
            self.lose_connection(exc)
            return None
        if got == -1:
            self._lost_job()
            return None
        if not got:
            self._count_requeued()
            return None
        rid, payload, again = got
        request = request_from_dict(pickle.loads(payload), spider=self.spider)
        if again:  # a dead worker's page (or lease): the link crawl claims its links again
            request.meta[FETCHED_AGAIN] = True
            self.stats.inc_value("redis/fetched_again")
        self._leased[request] = (rid, int(request.meta.get("depth", 0)))
        if SITEMAP_META in request.meta:
            self._sitemaps_out += 1
        self.stats.inc_value("redis/leased")
        return request

    def page_done(self, request: Request) -> None:
        """The link crawl is done with a leased page (its links held or admitted): it no
        longer counts at its depth (``pending_below``), before its lease ends."""
        leased = self._leased.get(request)
        if leased is None or leased[0] in self._done or self.lost is not None:
            return
        self._done.add(leased[0])
        try:
            self.client.hincrby(self.keys.depths, str(leased[1]), -1)
        except self._errors as exc:
            self.lose_connection(exc)

    # -- the sitemap walk, shared ----------------------------------------------------------
    def share_sitemap(self, request: Request, max_documents: int | None) -> int:
        """Hand a sitemap (or robots.txt: ``max_documents`` None) request to the job, for
        whichever worker is free to lease it: 0 when the job asked for its URL before, -1
        when the job's ``SITEMAP_MAX_DOCUMENTS`` are spent, else its id. Asked and queued
        in one step: a worker killed between the two could lose no child sitemap. Its
        lease outlives its read (``read:<worker>``) until the reader's records are in the
        job (``handed_over``), so a killed reader's sitemaps are read again."""
        if self.lost is not None:
            return 0
        keys = self.keys
        try:
            payload = pickle.dumps(request.to_dict(spider=self.spider), protocol=4)
            rid = self._share_sitemap(
                keys=[
                    keys.sitemaps,
                    keys.documents,
                    keys.sitemap_order,
                    keys.sequence,
                    keys.requests,
                    keys.queue,
                    keys.sitemaps_open,
                ],
                args=[
                    request.url,
                    "-" if max_documents is None else max_documents,
                    request.meta.get(SITEMAP_META) or "",
                    payload,
                    -request.priority,
                ],
            )
        except self._errors as exc:
            self.lose_connection(exc)
            return 0
        verdict = int(rid)
        if verdict > 0:
            self.stats.inc_value("redis/sitemaps/shared")
        elif verdict == 0:
            self.stats.inc_value("redis/sitemaps/asked_before")
        return verdict

    def walk_over(self) -> bool:
        """No sitemap (nor robots.txt) of the job queued or leased by any worker: the
        job's walk is over (union mode's link crawl admits its held links then). A parent
        shares its children before its own lease ends, so the count never touches 0
        while the walk goes on."""
        if self.lost is not None:
            return True
        try:
            return int(self.client.get(self.keys.sitemaps_open) or 0) <= 0
        except self._errors as exc:
            self.lose_connection(exc)
            return True

    # -- union mode: which URLs the job listed, which it linked ---------------------------
    def add_sightings(self, side: str, keys: list[str]) -> None:
        """URL keys (``twin_key``) this worker saw ``listed`` by a sitemap or ``linked``
        from a page, into the job's sets (the seen-set's layout: ``seen.py``), so the
        finisher flags ``sitemap_only`` / ``links_only`` from every worker's sightings."""
        if self.lost is not None:
            return
        try:
            pipe = self.client.pipeline(transaction=False)
            for key in keys:
                bucket, member = seen_slot(key)
                pipe.sadd(self.keys.sighted(side, bucket), member)
            pipe.execute()
        except self._errors as exc:
            self.lose_connection(exc)

    def sighted(self, keys: list[str]) -> list[tuple[bool, bool]]:
        """(listed, linked) in the job for each URL key."""
        pipe = self.client.pipeline(transaction=False)
        for key in keys:
            bucket, member = seen_slot(key)
            pipe.sismember(self.keys.sighted("listed", bucket), member)
            pipe.sismember(self.keys.sighted("linked", bucket), member)
        answers = pipe.execute()
        return [(bool(answers[i]), bool(answers[i + 1])) for i in range(0, len(answers), 2)]

    def sitemap_order(self) -> dict[str, str]:
        """Every sitemap URL of the job -> its place in one run's reading order."""
        return {
            k.decode(): v.decode() for k, v in self.client.hgetall(self.keys.sitemap_order).items()
        }

    def count_walk(self, **figures: int) -> None:
        """Add to the walk's job-wide figures (``pages`` listed, sitemaps ``answered``)."""
        if self.lost is not None or not any(figures.values()):
            return
        try:
            pipe = self.client.pipeline(transaction=False)
            for name, n in figures.items():
                if n:
                    pipe.hincrby(self.keys.walk, name, n)
            pipe.execute()
        except self._errors as exc:
            self.lose_connection(exc)

    def count_urls(self, n: int) -> int:
        """Add ``n`` URLs new to this worker's inventory to the job's count (the walk's
        ``urls`` figure: ``SITEMAP_MAX_URLS`` job-wide); the job's count with them."""
        if self.lost is not None:
            return 0
        try:
            return int(self.client.hincrby(self.keys.walk, "urls", n))
        except self._errors as exc:
            self.lose_connection(exc)
            return 0

    def walk_figures(self) -> dict[str, int]:
        """The walk's job-wide figures (``count_walk``)."""
        if self.lost is not None:
            return {}
        try:
            return {k.decode(): int(v) for k, v in self.client.hgetall(self.keys.walk).items()}
        except self._errors as exc:
            self.lose_connection(exc)
            return {}

    def handed_over(self) -> None:
        """This worker's records are in the job: the sitemaps it read and the pages it
        fetched are done for good."""
        keys = self.keys
        self._handed_over(keys=[keys.read(self.worker), keys.requests])

    # -- robots.txt, once per job ------------------------------------------------------------
    async def robots_shared(self, origin: str) -> dict[str, Any] | None:
        """The job's copy of ``origin``'s robots.txt fetch (``middlewares/robots.py``), or
        None when this worker is to fetch it: the first to ask takes the fetch (``SET
        NX``); the others wait for its copy (up to ``ROBOTS_WAIT_SECONDS``, then fetch
        it themselves: a worker that died while fetching holds no one up for long)."""
        if self.lost is not None:
            return None
        key = self.keys.robots(origin)
        deadline = time.monotonic() + ROBOTS_WAIT_SECONDS
        try:
            # the job's copy first: a worker that joins after the fetch reads it (the
            # fetcher's mark lapses, its copy stays)
            stored = self.client.get(key)
            if stored is not None:
                return json.loads(stored)
            mark = int(ROBOTS_WAIT_SECONDS * 1000)  # as long as the others wait for it
            if self.client.set(key + ":fetching", self.worker, nx=True, px=mark):
                return None
            while time.monotonic() < deadline:
                stored = self.client.get(key)
                if stored is not None:
                    return json.loads(stored)
                await maybe_deferred_to_future(deferLater(reactor, 0.1, _nothing))
        except self._errors as exc:
            self.lose_connection(exc)
        return None

    def robots_store(self, origin: str, stored: dict[str, Any]) -> None:
        """This worker's fetch of ``origin``'s robots.txt, for the job's other workers."""
        if self.lost is not None:
            return
        try:
            self.client.set(self.keys.robots(origin), json.dumps(stored))
        except self._errors as exc:
            self.lose_connection(exc)

    def count_follow(self, depth: int) -> None:
        """A claimed page's follow (its slash redirect's target) counts at ``depth`` from
        now: its request is queued after the redirecting page is done."""
        if self.lost is not None:
            return
        try:
            self.client.hincrby(self.keys.depths, str(depth), 1)
        except self._errors as exc:
            self.lose_connection(exc)

    def pending_below(self, depth: int) -> bool:
        """Any page of a smaller link depth queued or leased by any worker: a level is
        admitted job-wide only once every smaller one is done, so each URL's depth and
        citation are those one run gives (``LinkCrawl.release``)."""
        if self.lost is not None:
            return False
        keys = self.keys
        try:
            return bool(
                self._below(
                    keys=[keys.depths, keys.workers], args=[keys.prefix, depth, self.worker]
                )
            )
        except self._errors as exc:
            self.lose_connection(exc)
            return False

    def hold(self, levels: dict[int, int]) -> None:
        """The link crawl's held links per level (``LinkCrawl._held_levels``), told to the
        job: smaller levels held anywhere keep the others' larger ones waiting, and a
        worker holding links keeps the job from looking done."""
        now = {d: n for d, n in levels.items() if n > 0}
        if now == self._held_sent or self.lost is not None:
            return
        key = self.keys.held(self.worker)
        try:
            pipe = self.client.pipeline(transaction=True)
            pipe.delete(key)
            if now:
                pipe.hset(key, mapping=now)
            pipe.execute()
        except self._errors as exc:
            self.lose_connection(exc)
            return
        self._held_sent = now
        for level in [n for n in self._kept if not now.get(n)]:
            for rid in self._kept.pop(level):  # their links admitted: the leases end
                self._ack(rid, level - 1)

    def has_pending_requests(self) -> bool:
        if self.local.has_pending_requests():
            return True
        if self.lost is not None:
            return False
        keys = self.keys
        try:
            queued, leased, exists = self._pending(
                keys=[keys.workers, keys.queue, keys.identity], args=[keys.prefix]
            )
        except self._errors as exc:
            self.lose_connection(exc)
            return False
        if not exists:  # an empty queue of a job that is gone is no job done
            self._lost_job()
            return False
        return bool(queued or leased)

    def __len__(self) -> int:
        if self.lost is not None:
            return len(self.local)
        try:
            return len(self.local) + int(self.client.zcard(self.keys.queue))
        except self._errors as exc:
            self.lose_connection(exc)
            return len(self.local)


def _glob_escape(text: str) -> str:
    """``text`` matched literally by SCAN's MATCH (the job's braces, a name's brackets)."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)


def _nothing() -> None:
    return None
