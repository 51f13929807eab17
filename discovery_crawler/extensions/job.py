"""A resumable run (``-s JOBDIR=folder``): stopped by SIGKILL, one SIGINT or a crash and
started again with the same arguments, it ends with the inventory an uninterrupted run
would have.

How: every response the run receives goes to the job's journal (``journal.py``, through
``middlewares/journal.py``); a run started again on an unfinished job runs from its start,
and every request whose response the journal holds is answered from it, so what the run
builds (its record, seen-sets, selection, groups, tree and state) is built again exactly,
from the same inputs, and only what was in flight at the stop is fetched again. The feed
is written again whole: ``-O`` truncates it as ever, and an ``-o`` feed is cut back to
the size it had when the job began, so no line is there twice.

Scrapy's own ``JOBDIR`` machinery (pickled disk queues, ``requests.seen``, ``spider.state``)
is not used: its queue's state is written on a clean close only, so after a SIGKILL it
loses requests, and its ``requests.seen`` makes a restarted run filter out its own start.
The spiders move ``JOBDIR`` to ``DISCOVERY_JOBDIR`` (``use_jobdir``) before Scrapy reads it.

``job.json`` in the folder says which arguments the job runs, the feeds' sizes when it
began and each invocation (start, end, outcome). A finished job (completed, failed, or
stopped at a limit) drops its journal; a run started on it begins a new job.
"""

from __future__ import annotations

import contextlib
import json
import logging
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured

from discovery_crawler.extensions.run import RUN_SETTING, run_of
from discovery_crawler.journal import ResponseJournal
from discovery_crawler.outcomes import INTERRUPTED, MORE_TO_DO, OUTPUT_FAILED
from discovery_crawler.output.crawl_log import (
    append_run,
    keep_aside,
    os_error_text,
    write_json_atomic,
)
from discovery_crawler.output.folder_lock import hold_folder
from discovery_crawler.output.writable import OutputUnwritable, local_feed_paths
from discovery_crawler.run_record import now_iso

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

JOBDIR_SETTING = "DISCOVERY_JOBDIR"
JOB_FILE = "job.json"
JOURNAL_FILE = "responses.journal"
LOCK_FILE = "job.lock"  # held by the invocation running the job (output/folder_lock.py)
RESUMABLE = (INTERRUPTED, OUTPUT_FAILED, MORE_TO_DO)  # outcomes whose job is kept for a resume


def use_jobdir(settings: BaseSettings) -> None:
    """``JOBDIR`` becomes this project's resumable job (``DISCOVERY_JOBDIR``), and Scrapy's
    own use of it (disk queues, ``requests.seen``, ``spider.state``) is turned off."""
    jobdir = settings.get("JOBDIR")
    if not jobdir:
        return
    priority = settings.getpriority("JOBDIR") or 0
    settings.set(JOBDIR_SETTING, str(jobdir), priority=priority)
    settings.set("JOBDIR", None, priority=priority)


def lock_job(folder: Path) -> None:
    """Hold the job folder for this process (``output/folder_lock.py``): a second
    invocation of a job while one runs would fetch the same pages again and interleave its
    journal, ``job.json`` and feeds with the first one's. ``FolderBusy`` when a live run
    holds it, ``OutputUnwritable`` when its lock file cannot be made."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        hold_folder(folder, LOCK_FILE)
    except OSError as exc:
        raise OutputUnwritable(
            f"cannot write to the job folder {folder}: {os_error_text(exc)}"
        ) from None


def job_arguments(arguments: dict[str, Any] | None) -> dict[str, Any]:
    """The arguments that make a job: Scrapyd's own (``_job``, ``_version``: a leading
    underscore) differ for each job it schedules, so a cancelled job scheduled again with
    its ``JOBDIR`` resumes."""
    return {k: v for k, v in (arguments or {}).items() if not str(k).startswith("_")}


def _feed_sizes(feeds: dict[str, Any]) -> dict[str, int]:
    """The appended (``-o``) local feeds and their sizes now (0: not there yet)."""
    sizes = {}
    for uri, options in feeds.items():
        if (options or {}).get("overwrite"):
            continue  # -O: truncated at every start anyway
        for path in local_feed_paths({uri: options}):
            sizes[str(path)] = path.stat().st_size if path.exists() else 0
    return sizes


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def job_file_problem(data: Any) -> str | None:
    """What makes ``data`` (a parsed ``job.json``) unusable, or None: the shape this
    module writes, checked whole, so a file of any other shape is never half used."""
    if not isinstance(data, dict):
        return "is not a JSON object"
    run = data.get("run")
    if not isinstance(run, dict) or not isinstance(run.get("arguments"), dict):
        return "has no run arguments"
    if not isinstance(run.get("mode"), str | None):
        return "has a mode that is not a word"
    feeds = data.get("feeds", {})
    if not isinstance(feeds, dict) or not all(_is_count(v) for v in feeds.values()):
        return "has feed sizes that are not byte counts"
    invocations = data.get("invocations")
    if not isinstance(invocations, list) or not all(isinstance(i, dict) for i in invocations):
        return "has no invocations list"
    if not isinstance(data.get("finished"), bool):
        return "does not say whether the job finished"
    last = data.get("last_requests", {})
    if not isinstance(last, dict) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in last.values()
    ):
        return "has last requests that are not times"
    return None


def read_job_file(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """``(job, None)``; ``(None, None)``: no file; ``(None, problem)``: a file that is not
    a job file (unreadable, not JSON, or another shape) — never an exception."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"is unreadable ({os_error_text(exc)})"
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # bad UTF-8, not JSON, too deep
        return None, f"is not valid JSON ({type(exc).__name__})"
    problem = job_file_problem(data)
    return (None, problem) if problem else (data, None)


class ResumableJob:
    """The job of a resumable run: its folder, journal and invocations."""

    def __init__(self, crawler: Crawler, folder: Path):
        self.crawler = crawler
        self.folder = folder
        self.job_path = folder / JOB_FILE
        lock_job(folder)  # already held when the crawl command checked the outputs
        spec = crawler.settings.getdict(RUN_SETTING)
        self.arguments = {
            "arguments": job_arguments(spec.get("arguments")),
            "mode": spec.get("mode"),
        }
        previous = self._read()
        self.resumed = bool(
            previous and not previous.get("finished") and previous.get("run") == self.arguments
        )
        self.abandoned: dict[str, Any] | None = None
        if previous and previous.get("finished"):
            logger.info("JOBDIR %s held a finished job; a new job starts", folder)
        elif previous and not self.resumed:
            # An unfinished job for other arguments is abandoned, its partial lines in an
            # appended feed with it: the new job's lines must not follow them.
            self._cut_feeds(previous.get("feeds") or {})
            self.abandoned = {
                "arguments": (previous.get("run") or {}).get("arguments"),
                "invocations": len(previous.get("invocations") or ()),
            }
            logger.warning(
                "JOBDIR %s held an unfinished job for other arguments (%s); it is abandoned "
                "(its lines in the appended feeds removed) and a new job starts",
                folder,
                self.abandoned["arguments"],
            )
        if self.resumed:
            self.job = previous
            self._cut_feeds(self.job.get("feeds") or {})
        else:
            (folder / JOURNAL_FILE).unlink(missing_ok=True)
            feeds = _feed_sizes(crawler.settings.getdict("FEEDS"))
            self.job = {"run": self.arguments, "feeds": feeds, "invocations": [], "finished": False}
            self.job["id"] = uuid.uuid4().hex
            if previous and isinstance(previous.get("last_requests"), dict):
                self.job["last_requests"] = previous["last_requests"]  # the host remembers
        # The job's identity: the state its run writes names it (output/state.py), so a
        # resume tells the state it wrote itself before it was killed (an older job.json
        # has none: it gets one now).
        self.id: str = str(self.job.setdefault("id", uuid.uuid4().hex))
        # Called once the job is marked finished (the state keeps its previous until then).
        self.when_finished: list[Callable[[], None]] = []
        self.journal: ResponseJournal | None = ResponseJournal(folder / JOURNAL_FILE)
        self.stored_at_start = len(self.journal)
        self.journal_damage = self._damage(self.journal)
        self.earlier = list(self.job["invocations"])
        self.invocation: dict[str, Any] = {"started_at": now_iso(), "ended_at": None}
        self.job["invocations"].append(self.invocation)
        self._write()

    def _damage(self, journal: ResponseJournal) -> dict[str, Any] | None:
        """Damaged entries the journal skipped on opening: told in one warning (their
        responses are fetched again), and kept for the crawl log's ``job``."""
        if not journal.damaged:
            return None
        first = journal.damaged[0][0]
        skipped = sum(size for _, size in journal.damaged)
        logger.warning(
            "JOBDIR %s: %s has %d damaged entr%s (first at byte %d, %d bytes skipped); "
            "%d whole entries kept, the responses of the damaged ones are fetched again",
            self.folder,
            JOURNAL_FILE,
            len(journal.damaged),
            "y" if len(journal.damaged) == 1 else "ies",
            first,
            skipped,
            len(journal),
        )
        return {"entries": len(journal.damaged), "first_offset": first, "bytes": skipped}

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        folder = crawler.settings.get(JOBDIR_SETTING)
        if not folder:
            raise NotConfigured
        job = cls(crawler, Path(folder))
        crawler.signals.connect(job.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(job._spider_closed, signal=signals.spider_closed)
        return job

    # -- the job file -----------------------------------------------------------------------
    def _read(self) -> dict[str, Any] | None:
        """The job file, or None: none there, or one of another shape (kept aside)."""
        data, problem = read_job_file(self.job_path)
        if problem is None:
            return data
        try:
            aside = keep_aside(self.job_path)
        except OSError as exc:
            raise OutputUnwritable(
                f"{self.job_path} {problem}, and cannot be moved aside: {os_error_text(exc)}"
            ) from None
        logger.warning(
            "JOBDIR %s: %s %s; kept it aside as %s and a new job starts",
            self.folder,
            JOB_FILE,
            problem,
            aside.name,
        )
        return None

    def _write(self) -> None:
        write_json_atomic(self.job_path, self.job)

    def _cut_feeds(self, sizes: dict[str, int]) -> None:
        """An appended feed back to its size when the job began (its lines are replayed)."""
        for name, size in sizes.items():
            path = Path(name)
            if path.exists() and path.stat().st_size > size:
                with path.open("r+b") as fh:
                    fh.truncate(size)

    # -- the run ----------------------------------------------------------------------------
    def spider_opened(self) -> None:
        run = run_of(self.crawler)
        if run is None:
            return
        run.record.job = self
        if not self.resumed:
            return
        journal = self.journal
        logger.info(
            "resuming the job in %s: %d responses to replay (invocation %d)",
            self.folder,
            len(journal) if journal is not None else 0,
            len(self.job["invocations"]),
        )
        # An invocation killed before it could write its crawl-log entry gets one now.
        stubs = False
        for number, earlier in enumerate(self.earlier, 1):
            if earlier.get("ended_at") is None and not earlier.get("logged"):
                with contextlib.suppress(OSError):
                    append_run(run.crawl_log_path, self._stub(number, earlier))
                    earlier["logged"] = stubs = True
        if stubs:
            self._write()

    def _stub(self, number: int, invocation: dict[str, Any]) -> dict[str, Any]:
        return {
            "provenance": {"started_at": invocation.get("started_at"), "finished_at": None},
            "status": INTERRUPTED,
            "finish_reason": "killed",
            "job": {
                "jobdir": str(self.folder),
                "invocation": number,
                "note": "stopped without an end (a kill or a crash); resumed by a later run",
            },
        }

    def last_requests(self) -> dict[str, float]:
        """Host → when (wall clock) the job's last request to it ended, kept in ``job.json``
        for the next invocation: its first request to the host waits the host's interval
        from then (``extensions/throttle.py``), as chunks run back to back would not."""
        found = self.job.get("last_requests")
        if not isinstance(found, dict):
            found = self.job["last_requests"] = {}
        return found

    def journal_failed(self, exc: OSError) -> None:
        run = run_of(self.crawler)
        if run is not None and self.journal is not None:
            run.output_failed(self.journal.path, exc)

    async def _spider_closed(self, reason: str) -> None:
        run = run_of(self.crawler)
        if run is not None:
            await run.feeds_stored()  # a feed that failed leaves the job resumable
        self.spider_closed(reason)

    def spider_closed(self, reason: str) -> None:
        run = run_of(self.crawler)
        if run is not None:
            run.finish(reason)  # judged now if not yet: the outcome decides the journal's fate
        outcome = run.record.outcome if run is not None else INTERRUPTED
        self.invocation.update(ended_at=now_iso(), finish_reason=reason, status=outcome)
        journal = self.journal
        if journal is not None:
            self.invocation["responses_replayed"] = journal.replayed
            journal.close()
        if outcome not in RESUMABLE:
            self.job["finished"] = True
            (self.folder / JOURNAL_FILE).unlink(missing_ok=True)  # its disk is freed
        try:
            self._write()
        except OSError as exc:
            logger.error("could not write %s: %s", self.job_path, exc)
            return
        if self.job["finished"]:
            for callback in self.when_finished:
                try:
                    callback()
                except OSError as exc:
                    logger.warning("JOBDIR %s: after the job finished: %s", self.folder, exc)

    def as_dict(self) -> dict[str, Any]:
        """The crawl log's ``job``: which invocation this is and what it resumed."""
        journal = self.journal
        return {
            "jobdir": str(self.folder),
            "invocation": len(self.job["invocations"]),
            "resumed": self.resumed,
            "responses_replayed": journal.replayed if journal is not None else 0,
            "responses_in_journal_at_start": self.stored_at_start,
            "abandoned_job": self.abandoned,
            "journal_damaged": self.journal_damage,
            "earlier_invocations": [
                {
                    "started_at": e.get("started_at"),
                    "ended_at": e.get("ended_at"),
                    "status": e.get("status") or "killed (no end recorded)",
                }
                for e in self.earlier
            ],
        }
