"""One result per job: every worker hands its inventory records to Redis once its feed
is stored; the worker that ends the job writes the job's one inventory.

- **Hand-over** (every worker, after its feed is stored: ``DiscoveryRun.feed_hooks``):
  its feed's lines go to its ``records:<worker>`` list, its account (pages fetched,
  requested, records, its out folder) to ``reported``; the sitemaps it read are then
  done (``read:<worker>``: until now a killed worker's were read again by another).
- **The finisher**: the worker that closes last (no worker left in the frontier, no
  request queued or leased) takes ``finisher`` (``SET NX``: exactly one), waits for every
  worker that joined to have handed over (or to be gone: its heartbeat lapsed), merges
  the records (``merge.py``: one per URL, the job's best citation) into its own feed —
  the job's inventory — and says in its crawl-log entry (``distributed``) which workers
  did what. Then the job's keys are deleted.
- A worker whose records never came (killed before its feed was stored): named in one
  warning line and in the crawl log (``missing_workers``). Nothing of it is lost: every
  page it fetched and sitemap it read stayed on its account (``read:<worker>``) until
  its hand-over, so the others fetched them again once its heartbeat lapsed.

Needs a local JSON-lines feed (the default ``<out>/inventory.jsonl``, or ``-O x.jsonl``)."""

from __future__ import annotations

import json
import logging
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import reactor
from twisted.internet.task import deferLater

from discovery_crawler.distributed.job import DONE_SECONDS
from discovery_crawler.distributed.merge import allocate_slugs, merge_records, union_flags
from discovery_crawler.output.writable import local_feed_paths
from discovery_crawler.urls.normalize import twin_key

logger = logging.getLogger(__name__)

PUSH_LINES = 1000  # feed lines per RPUSH
JSON_LINES = (".jsonl", ".jsonlines")


def feed_path(feeds: dict[str, Any]) -> Path | None:
    """The run's local JSON-lines feed (the job's records are read from it), or None."""
    for path in local_feed_paths(feeds):
        if path.suffix in JSON_LINES:
            return path
    return None


def _nothing() -> None:
    return None


class JobResult:
    """A worker's part in the job's one result (see the module's docstring)."""

    def __init__(self, scheduler: Any, run: Any) -> None:  # scheduler: RedisScheduler
        self.scheduler = scheduler
        self.run = run
        self.feed = feed_path(scheduler.crawler.settings.getdict("FEEDS"))

    async def after_feeds(self) -> None:
        """The run's feed is stored: hand it over; end the job when this worker is last."""
        scheduler = self.scheduler
        if scheduler.lost is not None:
            return
        try:
            self._hand_over()
            if scheduler.finished and self._job_done() and self._take_finisher():
                await self._finish()
        except scheduler._errors as exc:
            scheduler.lose_connection(exc)

    # -- every worker ---------------------------------------------------------------------
    def _hand_over(self) -> None:
        scheduler, keys = self.scheduler, self.scheduler.keys
        client = scheduler.client
        count = 0
        if self.feed is not None and self.feed.exists():
            with self.feed.open("rb") as lines:
                chunk: list[bytes] = []
                for line in lines:
                    if line.strip():
                        chunk.append(line.rstrip(b"\n"))
                    if len(chunk) >= PUSH_LINES:
                        client.rpush(keys.records_of(scheduler.worker), *chunk)
                        count += len(chunk)
                        chunk = []
                if chunk:
                    client.rpush(keys.records_of(scheduler.worker), *chunk)
                    count += len(chunk)
        else:
            self.run.record.warn(
                "distributed: this worker has no local JSON-lines feed (-O x.jsonl, or the "
                "default <out>/inventory.jsonl): its records are not in the job's inventory"
            )
        union = self._union()
        if union is not None:
            union.flush()  # its last sightings, before it counts as handed over
        crawl = self.run.record.crawl
        account = {
            "worker": scheduler.worker,
            "out": str(self.run.out_dir),
            "records": count,
            "fetched": crawl.fetched if crawl is not None else 0,
            "requested": crawl.requested if crawl is not None else 0,
            "finish_reason": scheduler.close_reason,
            # its share of the crawl log's counts: the finisher sums them (_job_counts)
            "counts": dict(self.run.record.counts),
            **(
                {
                    "status": dict(crawl.status),
                    "depths": dict(crawl.depths),
                    "not_fetched": dict(crawl.not_fetched),
                }
                if crawl is not None
                else {}
            ),
            **(
                {
                    "pages_not_read": union.pages_not_read,
                    "sitemaps_not_read": union.sitemaps_not_read,
                }
                if union is not None
                else {}
            ),
        }
        client.hset(keys.reported, scheduler.worker, json.dumps(account))
        scheduler.handed_over()  # the sitemaps it read: done for good
        client.delete(keys.alive(scheduler.worker))
        self.run.record.distributed = {"job": keys.name, "worker": account}
        logger.info("Handed %d records to job %s", count, keys.name)

    def _union(self) -> Any:
        """Union mode's tally of listed and linked URLs (``UnionTally``), or None."""
        links = getattr(self.run, "links", None)
        account = getattr(links, "account", None)
        return getattr(account, "union", None)

    def _job_done(self) -> bool:
        scheduler, keys = self.scheduler, self.scheduler.keys
        queued, leased, exists = scheduler._pending(
            keys=[keys.workers, keys.queue, keys.identity], args=[keys.prefix]
        )
        if not exists:
            scheduler._lost_job()
            return False
        return not (queued or leased or scheduler.client.scard(keys.workers))

    def _take_finisher(self) -> bool:
        keys = self.scheduler.keys
        return bool(self.scheduler.client.set(keys.finisher, self.scheduler.worker, nx=True))

    # -- the finisher ---------------------------------------------------------------------
    async def _finish(self) -> None:
        scheduler, keys = self.scheduler, self.scheduler.keys
        client = scheduler.client
        members = {m.decode() for m in client.smembers(keys.members)}
        deadline = time.monotonic() + scheduler.ttl_ms / 1000 + 5
        while True:
            reported = {m.decode() for m in client.hkeys(keys.reported)}
            # a worker still handing over keeps its heartbeat key (REDIS_HEARTBEAT_TIMEOUT)
            waiting = [m for m in members - reported if client.exists(keys.alive(m))]
            if not waiting or time.monotonic() > deadline:
                break
            await maybe_deferred_to_future(deferLater(reactor, 0.2, _nothing))
        accounts = [json.loads(v) for v in client.hvals(keys.reported)]
        accounts.sort(key=lambda a: a["worker"])
        missing = sorted(members - {a["worker"] for a in accounts})
        places = scheduler.sitemap_order()
        records = merge_records(
            (line for a in accounts for line in client.lrange(keys.records_of(a["worker"]), 0, -1)),
            client.hgetall(keys.citations),
            places,
        )
        self._job_counts(accounts, records)
        if self._union() is not None:
            union_flags(
                records,
                scheduler.sighted([twin_key(rec["url"]) for rec in records]),
                sum(a.get("pages_not_read", 0) for a in accounts),
                sum(a.get("sitemaps_not_read", 0) for a in accounts),
            )
        crawled = any(rec.get("depth") is not None for rec in records)
        walk_only = self.run.mode == "sitemap" or (self.run.mode == "auto" and not crawled)
        if walk_only:
            records = self._url_limit(records)
            allocate_slugs(records)  # one run's discovery order is the reading order
        written = self._write(records)
        record = self.run.record
        record.counts["discovered"] = len(records)
        record.distributed = {
            "job": keys.name,
            "finisher": scheduler.worker,
            "records": len(records),
            "fetched": sum(a["fetched"] for a in accounts),
            "requested": sum(a["requested"] for a in accounts),
            "workers": accounts,
            "missing_workers": missing,
        }
        if missing:
            record.warn(
                f"job {keys.name}: {len(missing)} worker(s) stopped before handing over their "
                f"records ({', '.join(missing)}): the pages they fetched and the sitemaps "
                "they read were fetched again by the others"
            )
        if written:
            record.note(
                f"job {keys.name}: the job's inventory ({len(records):,} URLs from "
                f"{len(accounts)} workers) is {written}"
            )
        scheduler.delete_job_keys()
        # a worker starting now would find no job and crawl it all again alone: refused
        mark = {
            "finisher": scheduler.worker,
            "out": str(self.run.out_dir),
            "inventory": str(written or ""),
        }
        client.set(keys.done, json.dumps(mark), ex=DONE_SECONDS)

    def _job_counts(self, accounts: list[dict[str, Any]], records: list[dict[str, Any]]) -> None:
        """The finisher's crawl-log counts become the job's: every worker's summed, a URL
        several workers wrote counted once (``unique``; the extra lines are
        ``duplicates``), and the link crawl's pages fetched, requested, per status, per
        depth and not fetched summed (each worker's own share stays in ``workers``)."""
        record = self.run.record
        total: Counter[str] = Counter()
        for account in accounts:
            total.update(account.get("counts") or {})
        collapsed = max(0, sum(a["records"] for a in accounts) - len(records))
        for name in record.counts:
            record.counts[name] = total.get(name, 0)
        record.counts["unique"] = max(len(records), total["unique"] - collapsed)
        record.counts["duplicates"] += collapsed
        crawl = record.crawl
        if crawl is None:
            return
        crawl.fetched = sum(a["fetched"] for a in accounts)
        crawl.requested = sum(a["requested"] for a in accounts)
        for name in ("status", "depths", "not_fetched"):
            summed: Counter[Any] = Counter()
            for account in accounts:
                for key, n in (account.get(name) or {}).items():
                    summed[int(key) if name != "not_fetched" else key] += n
            setattr(crawl, name, summed)

    def _url_limit(self, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``SITEMAP_MAX_URLS`` job-wide: the first URLs in one run's reading order (the
        merge's order), as one run keeps; the rest are over the limit."""
        limit = self.scheduler.crawler.settings.getint("SITEMAP_MAX_URLS")
        if not limit or len(records) <= limit:
            return records
        record = self.run.record
        over = len(records) - limit
        record.counts["over_limit"] += over
        record.counts["unique"] = limit
        record.limit_bound("SITEMAP_MAX_URLS", value=limit, kept=limit, seen=len(records))
        logger.info("Job's inventory cut to SITEMAP_MAX_URLS=%d (%d URLs over)", limit, over)
        return records[:limit]

    def _write(self, records: list[dict[str, Any]]) -> Path | None:
        """The merged records over this worker's feed (temp file + rename)."""
        if self.feed is None:
            return None
        tmp = self.feed.with_name(f".{self.feed.name}.job.tmp")
        try:
            with tmp.open("w", encoding="utf-8") as out:
                for rec in records:
                    out.write(json.dumps(rec, ensure_ascii=False) + "\n")
            os.replace(tmp, self.feed)
        except OSError as exc:
            self.run.output_failed(self.feed, exc)
            return None
        return self.feed
