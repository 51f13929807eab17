"""State stage (SPEC §10): incremental re-runs, and the preview file of profile ``service``.

After slug (600) and groups (700), before the crawl log (900). For each batch it marks
every record ``change`` = ``new`` / ``known`` / ``changed`` (``lastmod`` differs), gives
URLs a previous run knew their previous slug (new URLs get one no previous URL holds), and
spools this run's entries; when the spider closes it writes ``state.json`` (atomically),
``changes.json`` and ``run_record.changes`` — before the summary and the crawl log, which
report them. The rules and the file format live in ``output/state.py``.

Both are files of the out folder that follow the records as they pass, so the preview
(``output/preview.py``, ``PREVIEW_ENABLED``) rides in the same stage: it keeps the first
pages and rewrites ``preview.json`` after every bounded chunk.

The state it loads is the run's (``run.state``, an ``output.state.RunState``): for page
fetchers, ``run.state.is_known(url)`` is True for a normalized URL the previous run
listed, unless ``-a refresh=SLUG`` / ``refresh_all=1`` asks for it again: such a page may
be listed without fetching it again. ``run.state`` is None when ``STATE_ENABLED`` is off.

Removals are judged only when the run saw everything: it did not fail, ended on its own
(the spider went idle), no limit bound, every sitemap something lists was read (a child an
index lists answering 404 included) and no page fetch failed; and only within the scope
this run shares with the one the URLs were found under (mode, paths, profile:
``output/state_scope.py``). URLs not judged keep their previous record with status
``unconfirmed``, and the summary says why.

With a resumable job (``JOBDIR``) the state records the job's id; the state it replaced is
kept until the job is marked finished (``ResumableJob.when_finished``), so a job killed
after writing its state judges its resume against the state before it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals

from discovery_crawler.extensions.job import ResumableJob
from discovery_crawler.items import UrlBatch
from discovery_crawler.outcomes import STOPPING_LIMITS, limit_name
from discovery_crawler.output.feed_lines import worked_entries
from discovery_crawler.output.preview import (
    COMPLETED,
    FAILED,
    PREVIEW_NAME,
    PROCESSING,
    PreviewWriter,
)
from discovery_crawler.output.state import RunState, StateError
from discovery_crawler.output.state_scope import RunScope, listed_sitemap_unread
from discovery_crawler.pipelines.base import BatchStage
from discovery_crawler.run_record import now_iso
from discovery_crawler.urls.normalize import UrlError, normalize, origin_of

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path
    from typing import Self

    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


def input_origin(url: str) -> str | None:
    """The normalized origin of a start URL (None when it does not normalize)."""
    try:
        return origin_of(normalize(url))
    except UrlError:
        return None


# Refusal classes of a fetch that failed for a reason that may pass (the page's links were
# not read this time): a run with any of them cannot say the pages it did not find are gone.
UNREAD_REFUSALS = ("network", "timeout", "server_error")


class StatePipeline(BatchStage):
    """Marks records new / known / changed; writes state.json and preview.json."""

    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        settings = crawler.settings
        self.state_enabled = settings.getbool("STATE_ENABLED", True)
        self.preview_enabled = settings.getbool("PREVIEW_ENABLED")
        self.preview_args = (
            settings.getint("PREVIEW_MAX_PAGES", 200),
            settings.getint("PREVIEW_CHUNK", 500),
            settings.getfloat("PREVIEW_INTERVAL", 5.0),
        )
        self.list_cap = settings.getint("CRAWL_LOG_LIST_CAP", 1000)
        self.state: RunState | None = None
        self.preview: PreviewWriter | None = None
        self.out_dir: Path = self.run.out_dir
        self.idle = False  # the spider went idle after the last batch: it ends on its own
        self.site_checked = False
        self.job: ResumableJob | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        stage = cls(crawler)
        stage.job = crawler.get_extension(ResumableJob)
        crawler.signals.connect(stage.spider_idle, signal=signals.spider_idle)
        return stage

    # -- open -------------------------------------------------------------------------------
    def open_spider(self) -> None:
        options = self.options
        if self.state_enabled:
            try:
                self.state = RunState.load(
                    self.out_dir,
                    input_origin=input_origin(options.url),
                    refresh=options.refresh,
                    refresh_all=options.refresh_all,
                    list_cap=self.list_cap,
                    job_id=self.job.id if self.job is not None else None,
                    resumed=self.job is not None and self.job.resumed,
                )
            except OSError as exc:  # could not even move a bad file aside
                self.record.warn(f"state.json not used: {exc}")
            else:
                self.run.state = self.state
                if self.state.sections_unused:
                    self.record.note(f"state.json: {self.state.sections_unused}")
                if self.job is not None:
                    self.job.when_finished.append(lambda: RunState.drop_previous(self.out_dir))
                why = self.state.changes.started_afresh
                if why:
                    self.record.warn(f"state.json: {why}; this run started afresh")
                for slug in self.state.changes.refresh_unknown:
                    logger.warning("refresh: no URL with slug %r in state.json; ignored", slug)
        if self.preview_enabled:
            max_pages, chunk, interval = self.preview_args
            self.preview = PreviewWriter(self.out_dir / PREVIEW_NAME, max_pages, chunk, interval)
            self._write_preview()

    def spider_idle(self) -> None:
        self.idle = True

    # -- batches ------------------------------------------------------------------------------
    def process_item(self, item: Any) -> Any:
        if not isinstance(item, UrlBatch) or not item.records:
            return item
        self.idle = False
        state = self.state
        if state is not None:
            if not self.site_checked:
                self._check_site()
                state = self.state
            if state is not None:
                # Batches that passed the dedup stage hold URLs new to the run.
                try:
                    state.observe(
                        item.records,
                        unique=item.seen is self.record.seen,
                        worked=worked_entries(item),
                    )
                except OSError as exc:  # its spool: a full disk, say
                    # One line and the run stops (exit 4), not a traceback per batch; the
                    # previous state.json stays as it was.
                    self.run.output_failed(state.spool_path, exc)
                    state.abandon()
                    self.state = self.run.state = None
        preview = self.preview
        if preview is not None:
            preview.add(item.records)
            if preview.due():
                self._write_preview()
        return item

    def _check_site(self) -> None:
        """The site this run found must be the one the state belongs to (a sitemap given
        as input names its site by its first URL, after the argument check)."""
        state, record = self.state, self.record
        site = record.site_origin
        if state is None or site is None:
            return
        self.site_checked = True
        if state.origin is None or site == state.origin:
            return
        message = (
            f"{site} is not the site recorded in {state.path} ({state.origin}); "
            "use another -a out= folder, or move that state.json away to start afresh"
        )
        logger.error("refused: %s", message)
        record.failure = f"refused: {message}"
        state.abandon()
        self.state = self.run.state = None
        self.run.stop("state_origin_mismatch")

    def _write_preview(self, status: int | None = None, extra: Iterable[str] = ()) -> None:
        preview, record = self.preview, self.record
        if preview is None:
            return
        try:
            if status is None:
                preview.write(list(record.warnings))
            else:
                preview.finish(status, [*record.warnings, *extra])
        except OSError as exc:
            logger.error("could not write %s: %s", preview.path, exc)
            self.preview = None

    # -- close --------------------------------------------------------------------------------
    def close_spider(self) -> None:
        record = self.record
        self.run.finish()  # judges failure before the state and preview say it
        state = self.state
        if state is not None:
            self._close_state(state)
        if self.preview is not None:
            if record.failure:
                status = FAILED
            elif self.idle:
                status = COMPLETED
            else:
                status = PROCESSING  # a chunk with work left (MAX_CHUNK_PAGES) says no more
                if not (record.chunk or {}).get("more_to_do"):
                    record.warn("the run stopped before it finished (resumable with JOBDIR)")
            extra = self._limits_bound()
            # A poller hears it (exit 7) from a job's last chunk; a chunk with work left
            # says its own warning, and the next chunk asks what failed again.
            if record.not_read and not record.failure and status != PROCESSING:
                extra.insert(0, f"incomplete: {record.not_read.line()}")
            self._write_preview(status, extra)

    def _limits_bound(self) -> list[str]:
        """The limits that stopped the run early, in words: a poller reading a preview of
        status 1 learns the inventory is complete up to them only (exit status 5)."""
        lines = []
        for name, details in self.record.limits.items():
            if name in STOPPING_LIMITS:
                said = ", ".join(
                    f"{k}={v}" for k, v in details.items() if k not in ("limit", "given")
                )
                lines.append(
                    f"stopped at a limit ({limit_name(details)}: {said}): complete up to it only"
                )
        return lines

    def _close_state(self, state: RunState) -> None:
        record = self.record
        if record.write_error or not self.idle:
            # An interrupted run saw part of the site: its entries would make the next
            # run (or this job resumed) take its URLs for known ones. The baseline stays.
            state.abandon()
            record.note(f"{state.path.name} kept as it was: the run did not finish")
            return
        try:
            changes = state.close(
                record.site_origin,
                record.started_at,
                now_iso(),
                not_judged_because=self._not_judged_because(),
                upgrades=getattr(getattr(record, "seen", None), "upgrades", None),
                scope=self._scope(),
            )
        except OSError as exc:
            self.run.output_failed(state.path, exc)
            record.warn(f"state.json not written ({exc.strerror}); the previous state is kept")
            state.abandon()
            return
        except StateError as exc:
            logger.error("could not write %s: %s; the previous state is kept", state.path, exc)
            record.warn(f"state.json not written: {exc}")
            state.abandon()
            return
        record.changes = changes
        stats = self.stats
        stats.set_value("state/urls/new", changes.new.count)
        stats.set_value("state/urls/known", changes.known)
        stats.set_value("state/urls/changed", changes.changed.count)
        stats.set_value("state/urls/removed", changes.removed.count)
        stats.set_value("state/urls/unconfirmed", changes.unconfirmed.count)
        stats.set_value("state/urls/total", changes.urls)

    def _scope(self) -> RunScope:
        """What this run looked at: the sources that ran (``auto`` runs the link crawl only
        when it fell back: then the crawl log has a crawl section), paths, profile."""
        options, record = self.options, self.record
        mode = self.run.mode
        sources = set()
        if mode != "links":
            sources.add("sitemap")
        if mode in ("links", "union") or getattr(record, "crawl", None) is not None:
            sources.add("link")
        return RunScope.of_run(
            mode, sources, options.include_paths, options.exclude_paths, options.profile
        )

    def _not_judged_because(self) -> str | None:
        """Why this run may not have seen every URL of the site (None: it saw them all)."""
        record = self.record
        if record.failure:
            return "the run failed"
        if not self.idle:
            return "the run ended early"
        if record.limits:
            return f"limit bound: {', '.join(record.limits)}"
        for attempt in getattr(record, "attempts", {}).values():
            error = attempt.error
            if listed_sitemap_unread(attempt.source, attempt.status, error):
                parent = attempt.parent or "robots.txt"
                listed = f", still listed by {parent}" if attempt.source != "input" else ""
                return f"sitemap {attempt.url} not read ({error}{listed})"
        refusals = record.refusals
        counts = refusals.counts if refusals is not None else {}
        failed = {name: counts[name] for name in UNREAD_REFUSALS if counts.get(name)}
        if failed:  # the pages only they link to were never found
            classes = ", ".join(f"{n:,} {name}" for name, n in failed.items())
            return f"{sum(failed.values()):,} page fetches failed ({classes})"
        return None
