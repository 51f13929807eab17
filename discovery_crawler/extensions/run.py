"""The run's one owner: what the run was asked (options, mode), what it found (the record)
and every structure its components share, reached the Scrapy way:
``crawler.get_extension(DiscoveryRun)``.

An entry point (the ``discover`` and ``links`` spiders) validates its ``-a`` arguments and
describes the run in the ``DISCOVERY_RUN`` setting, a plain dict::

    {"arguments": {"url": "https://example.com/", ...},  # the -a arguments as given
     "mode": "union",                                   # the mode it runs (a profile may pick it)
     "log_settings": {"HOST_INTERVAL": 1.0, ...}}       # the settings the crawl log records

Without that setting the extension is off (``NotConfigured``): a spider of another kind
runs without a run, and the stages switch themselves off. A unit test builds a run with
``get_crawler(settings_dict={"EXTENSIONS": {DiscoveryRun: 0}, "DISCOVERY_RUN": {...}})``.

What the run accumulates lives here and only here, as plain data (counters, lists,
arrays, dicts): ``jobdir_state()`` names every piece. A resumable run (``JOBDIR``) does not
pickle them: it builds them again by replaying the job's journal of responses
(``extensions/job.py``), which holds however the pieces change. Stages take their
references to these structures when they are built, after the extensions.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.extensions.feedexport import FeedExporter
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from twisted.internet.defer import Deferred

from discovery_crawler.arguments import RunOptions, out_dir_of
from discovery_crawler.compiled import extracted_line, fallback_line
from discovery_crawler.outcomes import OUTPUT_FAILED_REASON
from discovery_crawler.output.crawl_log import CRAWL_LOG_NAME, os_error_text
from discovery_crawler.profiles import available_profiles
from discovery_crawler.run_record import RunRecord
from discovery_crawler.signals import output_failed
from discovery_crawler.unread import broken_reference_warning, broken_references, not_read_of
from discovery_crawler.urls.normalize import OriginCache
from discovery_crawler.urls.seen import SeenSet
from discovery_crawler.urls.slugs import SlugAllocator

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

RUN_SETTING = "DISCOVERY_RUN"
# a distributed job ({"name": ..., "identity": ...}): spiders/base.py sets it with REDIS_URL
JOB_SETTING = "REDIS_JOB"


def run_mode(options: RunOptions, settings: BaseSettings) -> str:
    """The mode a run of ``discover`` runs: ``-a mode=``, else the profile's
    ``DISCOVERY_MODE`` (``polite`` runs ``union``)."""
    if options.mode != "auto":
        return options.mode
    return str(settings.get("DISCOVERY_MODE", "auto"))


def unify_site_origin(origins: OriginCache, origin: str) -> None:
    """Make every spelling of the site's origin (http/https, www/bare) the one given.

    SPEC §4: a sitemap advertising http:// for a site served over https:// (or the
    reverse) is reconciled to the scheme of the root fetched. SPEC §5 rule 8: www vs bare
    host resolves to the form the user passed or the site redirected to. Rewrites
    actually applied are noted in the crawl log (``OriginCache.rewritten``).
    """
    host = origin.partition("://")[2].rpartition("@")[2]
    name, colon, port = host.rpartition(":") if not host.endswith("]") else (host, "", "")
    if not colon:
        name, port = host, ""
    twin = name[4:] if name.startswith("www.") else f"www.{name}"
    suffix = f":{port}" if port else ""
    for variant_scheme in ("http", "https"):
        for variant_name in (name, twin):
            variant = f"{variant_scheme}://{variant_name}{suffix}"
            if variant != origin:
                origins.rewrite[variant] = origin
    origins.invalidate()


class LazySeenSet:
    """A ``SeenSet`` that costs nothing until the first add (most sites have no hreflang)."""

    def __init__(self) -> None:
        self._set: SeenSet | None = None

    def add(self, url: str) -> bool:
        if self._set is None:
            self._set = SeenSet(min_slots=1 << 12)
        return self._set.add(url)

    def add_many(self, urls: list[str]) -> list[bool]:
        if not urls:
            return []
        if self._set is None:
            self._set = SeenSet(min_slots=1 << 12)
        return self._set.add_many(urls)

    def __contains__(self, url: str) -> bool:
        return self._set is not None and url in self._set


class DiscoveryRun:
    """One run of discovery: its options, its record, the structures its stages share."""

    # Everything the run accumulates, by attribute: what a resumable crawl saves.
    JOBDIR_STATE = (
        "record",  # counts, attempts, lists, the seen-set and its twins, groups, tree,
        # the selection and the changes once made, the verify tally, the crawl's account
        "origins",  # the site's origin rewrites (and the normalizer's per-origin cache)
        "alternates_only",  # URLs in the inventory only as hreflang alternates
        "slugs",  # the slugs given (fingerprints)
        "selection",  # the score stage's streaming selector and score listing
        "walk",  # the sitemap walk's progress (visited sitemaps, documents, estimate)
        "state",  # state.json: the previous run (rebuilt from the file) and this run's spool
    )

    def __init__(
        self,
        crawler: Crawler,
        options: RunOptions,
        mode: str,
        log_settings: dict[str, Any] | None = None,
    ) -> None:
        settings = crawler.settings
        self.crawler = crawler
        self.options = options
        self.mode = mode
        self.out_dir: Path = out_dir_of(options)
        self.crawl_log_path = self.out_dir / CRAWL_LOG_NAME
        self.record = RunRecord(
            options, dict(log_settings or {}), settings.getint("CRAWL_LOG_LIST_CAP", 1000)
        )
        self.origins = OriginCache()
        self.alternates_only = LazySeenSet()
        self.slugs = SlugAllocator()
        self.selection: Any = None  # pipelines/score.py: ScoreProgress
        self.walk: Any = None  # crawling/walk.py: WalkProgress, when the run walks sitemaps
        self.state: Any = None  # output/state: RunState, when STATE_ENABLED (state stage)
        # Components of the entry point that stages hand records to (None: not this run's).
        self.links: Any = None  # crawling/links.py: LinkCrawl (admit_listed, union mode)
        self.verifier: Any = None  # crawling/verify.py: ListedPageVerifier (verify_listed)
        # distributed/scheduler.py: RedisScheduler (claim), when the run is a worker of a job
        self.frontier: Any = None
        self.feeds_closed = False  # Scrapy's feed exporter has stored every feed
        self._failed_paths: set[str] = set()  # the files that could not be written
        self._after_feeds: list[Deferred[None]] = []
        # Work on the stored feeds before the run is reported (a distributed job's worker
        # hands its records over; the job's last worker writes the job's one inventory):
        # awaited once, by the first reporter, the others wait for it.
        self.feed_hooks: list[Callable[[], Awaitable[None]]] = []
        self._hooks_state: list[Deferred[None]] | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        spec = crawler.settings.getdict(RUN_SETTING)
        if not spec:
            raise NotConfigured  # not a discovery run (no message: nothing is wrong)
        options = RunOptions.from_arguments(spec.get("arguments") or {}, available_profiles())
        mode = spec.get("mode") or run_mode(options, crawler.settings)
        run = cls(crawler, options, mode, spec.get("log_settings"))
        crawler.signals.connect(run.output_failed, signal=output_failed)
        if line := fallback_line():  # an install (or egg) without its C extensions
            logger.warning(line)
        if line := extracted_line():  # a Scrapyd job: its egg's C code runs too
            logger.info(line)
        crawler.signals.connect(run._feeds_stored, signal=signals.feed_exporter_closed)
        return run

    # -- the feeds ------------------------------------------------------------------------
    def _feeds_stored(self) -> None:
        self.feeds_closed = True
        waiting, self._after_feeds = self._after_feeds, []
        for waiter in waiting:
            waiter.callback(None)

    async def feeds_stored(self) -> None:
        """Return once the feeds are stored: at once when they are (or there are none),
        else when Scrapy's feed exporter says so (``feed_exporter_closed``). Scrapy
        finishes a feed (its final pass, its rename into place) in a task that runs after
        the other ``spider_closed`` handlers: what reports the run's outcome (the summary,
        the crawl log, the job) awaits this, so a feed that fails there is told too."""
        engine = self.crawler.engine
        if not (
            self.feeds_closed or engine is None or self.crawler.get_extension(FeedExporter) is None
        ):
            waiter: Deferred[None] = Deferred()
            self._after_feeds.append(waiter)
            await maybe_deferred_to_future(waiter)
        await self._run_feed_hooks()

    async def _run_feed_hooks(self) -> None:
        """``feed_hooks``, once: the first caller runs them, later ones wait for them."""
        if self._hooks_state is None:
            self._hooks_state = []
            for hook in self.feed_hooks:
                try:
                    await hook()
                except Exception:
                    logger.exception("a step after the feeds were stored failed")
            waiting, self._hooks_state = self._hooks_state, None
            self.feed_hooks = []
            for waiter in waiting:
                waiter.callback(None)
            return
        if not self.feed_hooks:
            return
        waiter: Deferred[None] = Deferred()
        self._hooks_state.append(waiter)
        await maybe_deferred_to_future(waiter)

    # -- the site -------------------------------------------------------------------------
    def name_site(self, origin: str, note: str | None = None) -> None:
        """The site is ``origin``: every other spelling of it is rewritten to it."""
        self.record.site_origin = origin
        if note:
            self.record.note(note)
        unify_site_origin(self.origins, origin)

    # -- the end --------------------------------------------------------------------------
    def output_failed(self, path: object, error: BaseException) -> None:
        """A file could not be written: said in one line, and the run stops at once
        rather than crawl on with nowhere to put what it finds. A later failure of
        another file (the crawl log on the disk the feed filled) is one line more, so
        a file that is missing is never missing in silence."""
        record = self.record
        if record.write_error is not None:
            if str(path) not in self._failed_paths:
                self._failed_paths.add(str(path))
                logger.error("could not write %s either: %s", path, os_error_text(error))
            return
        self._failed_paths.add(str(path))
        record.write_error = f"could not write {path}: {os_error_text(error)}"
        logger.error("OUTPUT FAILED: %s; the run stops", record.write_error)
        self.crawler.stats.set_value("discovery/write_error", record.write_error)
        self.stop(OUTPUT_FAILED_REASON)

    def stop(self, reason: str) -> None:
        """Close the spider with ``reason``, scheduled rather than awaited: a stage calling
        it holds an item that closing waits for."""
        engine = self.crawler.engine
        if engine is None or engine.spider is None:
            return
        closing = deferred_from_coro(engine.close_spider_async(reason=reason))
        closing.addErrback(lambda failure: logger.error("could not stop: %s", failure))

    def finish(self, reason: str | None = None) -> None:
        """Judge the run once everything is in: did discovery do its job? Called by each
        component that reports it at the end (the summary, the state, the crawl log),
        whichever is first; the judgement is made once."""
        record = self.record
        if not record.start_judging(reason):
            return
        stats = self.crawler.stats
        record.not_read = not_read = self._not_read()
        if not_read:  # a monitor reading stats (Scrapyd, a stats collector) sees it too
            stats.set_value("discovery/not_read/sitemaps", not_read.sitemaps_count)
            stats.set_value("discovery/not_read/robots", not_read.robots is not None)
            stats.set_value("discovery/not_read/pages", not_read.page_count)
        if record.failure:
            stats.set_value("discovery/failed", record.failure)
            return
        chunk = record.chunk or {}
        if chunk.get("more_to_do"):
            if not chunk.get("answered"):
                # More to do, and no step closer: a poller should know the job is stuck.
                record.warn(
                    f"no request of this chunk got an answer ({chunk.get('fetched', 0)} "
                    "sent): the site may be down; the job goes on where it stopped when "
                    "run again"
                )
            return  # a chunk saw part of the job: the last chunk judges the whole
        tally = record.verify
        if tally is not None and tally.mode == "fetch" and tally.waiting:
            record.warn(
                f"verify: {tally.waiting:,} listed URLs were still waiting for an answer when "
                "the run ended; they are not in the feed (run again, or set JOBDIR to resume)"
            )
        attempts = list(record.attempts.values())
        fetched = [a for a in attempts if a.status is not None]
        robots = record.robots or {}
        crawl = record.crawl
        pages = crawl.fetched if crawl is not None else 0
        if (
            self.frontier is not None
            and not pages
            and not (crawl and crawl.requested)
            and not fetched
            and robots.get("status") is None
        ):
            # a worker of a distributed job that requested nothing: the job's other
            # workers took every page (the job's result is theirs), not an unreachable site
            record.note(
                f"this worker of job {self._job()} fetched no page and read no sitemap: "
                "the job's other workers took them all"
            )
        elif not fetched and (robots.get("status") is None) and not pages:
            refusals = [r.get("reason") for r in crawl.refusals.items] if crawl else []
            # robots.txt's own error first: when it failed, the attempts after it were
            # only refused for that (fail closed), which says less
            errors = [robots.get("error"), *(a.error for a in attempts if a.error), *refusals]
            errors = [e for e in errors if e]
            record.failure = record.input_failure or (
                f"site unreachable: {errors[0] if errors else 'no response'}"
            )
        elif (closed := self._closed_by_robots(record)) is not None and not (
            pages or any(a.ok or a.urls for a in attempts)
        ):
            # robots.txt could not be read and fails closed (RFC 9309 §2.3.1.4): nothing of
            # the site may be fetched, so its inventory is unknown, not empty
            record.failure = record.input_failure or (
                f"robots.txt of {closed.origin} could not be read "
                f"({closed.reason.partition(':')[0]}): fail closed (RFC 9309 §2.3.1.4), "
                "nothing of the site was fetched"
            )
        elif record.not_read and not self._read_anything(record):
            # every source tried failed after its retries (an outage): nothing of the site
            # was read, so its inventory is unknown, not empty
            record.failure = f"nothing of the site could be read: {record.not_read.line()}"
        elif self.mode != "links" and not any(a.ok or a.urls for a in attempts):
            # (a sitemap cut at SITEMAP_MAX_BYTES is no ok attempt, but its URLs were kept)
            record.warn("no sitemap yielded any URL (see discovery.sitemap_attempts for why)")
        if (broken := broken_reference_warning(broken_references(attempts))) is not None:
            record.warn(broken)
        if crawl is not None and crawl.union is not None:
            for name in ("sitemap_only", "links_only"):
                if (why := crawl.union.unjudged(name)) is not None:
                    record.note(f"no page is flagged {name}: {why}")
        if record.failure:
            stats.set_value("discovery/failed", record.failure)
        for raw, to in self.origins.rewritten.items():
            why = "www vs bare host" if raw.split("://")[1] != to.split("://")[1] else "scheme"
            record.note(
                f"URLs on {raw} were rewritten to {to} ({why}; the form fetched or passed wins)"
            )
        if record.other_hosts:
            for sitemap, hosts in record.other_hosts_by_sitemap.items():
                for origin, count in hosts.most_common(3):
                    record.warn(f"{sitemap}: {count:,} URLs on {origin}, not this site")

    def _job(self) -> str | None:
        """The distributed job this run is a worker of (``REDIS_JOB``, set by the spider
        with ``REDIS_URL``), else None."""
        return self.crawler.settings.getdict(JOB_SETTING).get("name")

    def _not_read(self) -> Any:
        """What the run tried and could not read after its retries (``unread.py``)."""
        record = self.record
        crawl = record.crawl
        tallies = [
            crawl.refusal_classes if crawl is not None else {},
            record.refusals.counts if record.refusals is not None else {},
        ]
        retries = record.retries.settings.get("times") if record.retries is not None else None
        return not_read_of(record.attempts.values(), record.robots, tallies, retries)

    @staticmethod
    def _read_anything(record: Any) -> bool:
        """Whether any source of the site was read: a sitemap that listed URLs (an index
        that only named sitemaps not read lists none), or a page that answered other than
        with a failure (a 404 is an answer; a 5xx after its retries is not)."""
        if any(a.urls for a in record.attempts.values()):
            return True
        crawl = record.crawl
        if crawl is None:
            return False
        failed_answers = sum(n for status, n in crawl.status.items() if status >= 500)
        return crawl.fetched > failed_answers

    @staticmethod
    def _closed_by_robots(record: Any) -> Any:
        """The site's robots policy when its robots.txt failed closed, else None."""
        summary = record.robots_summary
        if summary is None:
            return None
        for policy in summary.policies.values():
            if policy.outcome == "fail_closed" and policy.origin == record.site_origin:
                return policy
        return None

    # -- resuming -------------------------------------------------------------------------
    def jobdir_state(self) -> dict[str, Any]:
        """Every structure the run accumulated (``JOBDIR_STATE``), by name: plain data a
        resumable crawl can pickle with Scrapy's queue."""
        return {name: getattr(self, name) for name in self.JOBDIR_STATE}


def run_of(crawler: Crawler) -> DiscoveryRun | None:
    """The crawler's run, or None (not a discovery run: the component stays inert)."""
    return crawler.get_extension(DiscoveryRun)
