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
  It is acknowledged (``scripts.ACK``) once the engine is done with it — its callback's or
  errback's output handed to the scheduler, a retry or redirect enqueued — which is when
  the engine removes it from its slot (``ExecutionEngine._remove_request``, private:
  ``private_names.py``; no signal fires then).
- **Heartbeat and reaper**: a thread refreshes ``alive:<worker>`` (TTL
  ``REDIS_HEARTBEAT_TIMEOUT``) and requeues the leases of workers whose key expired
  (SIGKILL, a lost machine); a live worker's leases are never taken, however slow it is.
- **Job-wide idle**: there is work while the queue is not empty or any worker holds a
  lease, so a worker does not close while another may still find links.
- **The end**: the last worker to close a finished job deletes its keys.

Requests are stored as Scrapy's ``Request.to_dict`` (callbacks named as spider methods),
pickled as Scrapy's disk queues do.
"""

from __future__ import annotations

import logging
import os
import pickle
import secrets
import socket
import threading
from typing import TYPE_CHECKING, Any

from scrapy.core.scheduler import BaseScheduler, Scheduler
from scrapy.utils.request import request_from_dict

from discovery_crawler.distributed import scripts
from discovery_crawler.distributed.connection import DEFAULT_RECONNECT_TIMEOUT, connect
from discovery_crawler.distributed.job import JobKeys, join_job
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
DEFAULT_HEARTBEAT_TIMEOUT = 30.0
IDLE_POLL_SECONDS = 0.5


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
    ) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.client = client
        self.keys = JobKeys(job["name"])
        self.identity = job["identity"]
        self.local = local
        self.worker = worker_name()
        self.ttl_ms = max(int(heartbeat_timeout * 1000), 1000)
        self.spider: Spider | None = None
        self._leased: dict[Request, str] = {}  # request object -> its id in Redis
        self._requeued = 0  # by this worker's reaper, since it was last counted
        self._beating = threading.Event()
        self._heart: threading.Thread | None = None
        register = client.register_script
        self._enqueue = register(scripts.ENQUEUE)
        self._lease = register(scripts.LEASE)
        self._ack_script = register(scripts.ACK)
        self._release = register(scripts.RELEASE)
        self._reap = register(scripts.REAP)
        self._pending = register(scripts.PENDING)
        self._claim = register(scripts.CLAIM)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        job = settings.getdict(JOB_SETTING)
        if not job:
            raise RuntimeError(f"{JOB_SETTING}: no job (does the spider plan one?)")
        client = connect(
            settings.get("REDIS_URL"),
            settings.getfloat("REDIS_RECONNECT_TIMEOUT", DEFAULT_RECONNECT_TIMEOUT),
        )
        local = Scheduler.from_crawler(crawler)
        timeout = settings.getfloat("REDIS_HEARTBEAT_TIMEOUT", DEFAULT_HEARTBEAT_TIMEOUT)
        return cls(crawler, client, job, local, timeout)

    # -- the worker's life ----------------------------------------------------------------
    def open(self, spider: Spider) -> Any:
        self.spider = spider
        join_job(self.client, self.keys, self.identity)  # a script's run: not checked yet
        self.client.set(self.keys.alive(self.worker), "1", px=self.ttl_ms)
        self.client.sadd(self.keys.workers, self.worker)
        after_request_removed(self.crawler.engine, self._acknowledge)
        # an idle worker asks the job's queue often: another's page may add work any time
        poll_scheduler_every(self.crawler.engine, IDLE_POLL_SECONDS)
        run = run_of(self.crawler)
        if run is not None:
            run.frontier = self  # the link crawl claims its pages here (claim)
        self._heart = threading.Thread(target=self._beat, name="redis-heartbeat", daemon=True)
        self._heart.start()
        logger.info("Worker %s joined job %s", self.worker, self.keys.name)
        return self.local.open(spider)

    def close(self, reason: str) -> Any:
        self._beating.set()
        if self._heart is not None:
            self._heart.join(5)
        keys = self.keys
        released = self._release(
            keys=[keys.queue, keys.lease(self.worker), keys.claims(self.worker)],
            args=[keys.prefix],
        )
        if released:
            logger.info("Handed %d leased requests back to job %s", released, keys.name)
        self.client.delete(keys.alive(self.worker))
        self.client.srem(keys.workers, self.worker)
        self._count_requeued()
        if reason == "finished":
            self._end_job_if_done()
        return self.local.close(reason)

    def _beat(self) -> None:
        """Keep this worker alive in Redis and requeue dead workers' leases (a thread: a
        reactor busy for a while does not make the worker look dead)."""
        keys = self.keys
        while not self._beating.wait(self.ttl_ms / 3000):
            try:
                self.client.set(keys.alive(self.worker), "1", px=self.ttl_ms)
                self._requeued += self._reap(keys=[keys.workers, keys.queue], args=[keys.prefix])
            except Exception as exc:  # the client retries; what is left is said, not fatal
                logger.warning("Redis heartbeat of job %s failed: %s", keys.name, exc)

    def _count_requeued(self) -> None:
        if self._requeued:
            requeued, self._requeued = self._requeued, 0
            logger.warning("Requeued %d requests leased by workers that stopped", requeued)
            self.stats.inc_value("redis/requeued", requeued)

    def _end_job_if_done(self) -> None:
        """No worker left, no request queued: the job is done, its keys go."""
        keys = self.keys
        queued, leased = self._pending(keys=[keys.workers, keys.queue], args=[keys.prefix])
        if queued or leased or self.client.scard(keys.workers):
            return
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
        rid = self._leased.pop(request, None)
        if rid is not None:
            keys = self.keys
            self._ack_script(keys=[keys.lease(self.worker), keys.requests], args=[rid])

    # -- the frontier -----------------------------------------------------------------------
    def claim(self, key: str, max_pages: int | None) -> int:
        """Claim the page of seen-set key ``key`` for this worker to request: 0 when
        the job met it before, -1 when the job's ``max_pages`` are given out (recorded
        over the budget, by this worker only), else the job's page count with it."""
        bucket, member = seen_slot(key)
        keys = self.keys
        verdict = int(
            self._claim(
                keys=[keys.seen(bucket), keys.requested, keys.claims(self.worker)],
                args=[member, max_pages or 0, f"{bucket:x}:{member}"],
            )
        )
        if verdict == 0:
            self.stats.inc_value("redis/dupefilter/filtered")
        elif verdict < 0:
            self.stats.inc_value("redis/over_max_pages")
        return verdict

    def enqueue_request(self, request: Request) -> bool:
        meta = request.meta
        if not meta.get("page_fetch"):
            return self.local.enqueue_request(request)
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
        rid = self._enqueue(
            keys=[keys.queue, keys.requests, keys.sequence, seen_key, keys.claims(self.worker)],
            args=[member, -request.priority, payload, claim],
        )
        if not rid:
            self.stats.inc_value("redis/dupefilter/filtered")
            return False
        self.stats.inc_value("redis/enqueued")
        return True

    def next_request(self) -> Request | None:
        request = self.local.next_request()
        if request is not None:
            return request
        keys, worker = self.keys, self.worker
        got = self._lease(
            keys=[keys.queue, keys.requests, keys.lease(worker), keys.workers, keys.alive(worker)],
            args=[worker, self.ttl_ms],
        )
        if not got:
            self._count_requeued()
            return None
        rid, payload = got
        request = request_from_dict(pickle.loads(payload), spider=self.spider)
        self._leased[request] = rid
        self.stats.inc_value("redis/leased")
        return request

    def has_pending_requests(self) -> bool:
        if self.local.has_pending_requests():
            return True
        keys = self.keys
        queued, leased = self._pending(keys=[keys.workers, keys.queue], args=[keys.prefix])
        return bool(queued or leased)

    def __len__(self) -> int:
        return len(self.local) + int(self.client.zcard(self.keys.queue))


def _glob_escape(text: str) -> str:
    """``text`` matched literally by SCAN's MATCH (the job's braces, a name's brackets)."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)
