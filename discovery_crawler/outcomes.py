"""How a run ended, in one word, and the exit status that says it (docs/operations.md).

A run is ``completed`` only when it saw everything in its scope: it was not stopped by a
signal, a shutdown or a crash, every output was written, and no limit stopped it early.
Scripts (cron, Scrapyd, a service) read the exit status; people read the word, which the
summary, ``_crawl-log.json`` (``runs[].status``) and ``preview.json`` carry.
"""

from __future__ import annotations

from collections.abc import Iterable

COMPLETED = "completed"
FAILED = "failed"  # the run could not do its job (the site unreachable, nothing found)
INTERRUPTED = "interrupted"  # a signal, a shutdown or a crash: resumable with JOBDIR
OUTPUT_FAILED = "output_failed"  # a file could not be written: the run stopped at once
BOUNDED = "bounded"  # a limit stopped it early: complete up to the limit only
MORE_TO_DO = "more_to_do"  # a chunk (MAX_CHUNK_PAGES) done, work left: run the job again
# Some source in scope was not read after its retries (a sitemap or page answering 5xx, a
# timeout, a refused connection): the inventory is short of the site, so not "completed".
INCOMPLETE = "incomplete"

BAD_ARGUMENTS = 2  # before any run: a wrong -a/-s argument or feed (commands/crawl.py)
# The word a job's log gives that status in (no run, so no run's outcome: a monitor reading
# Scrapyd's job log finds ``'discovery/outcome': 'bad_arguments'`` where a run's stats are).
BAD_ARGUMENTS_OUTCOME = "bad_arguments"
# Before any run: another live run holds the output folder's lock. Its own code, so a
# scheduler tells "try later" from "failed" (1) and "wrong command" (2).
BUSY = 8
BUSY_OUTCOME = "busy"  # the word a refused run's LOG_FILE and rediscover's line give exit 8
EXIT_CODES = {
    COMPLETED: 0,
    FAILED: 1,
    INTERRUPTED: 3,
    OUTPUT_FAILED: 4,
    BOUNDED: 5,
    MORE_TO_DO: 6,
    INCOMPLETE: 7,
}

# The limits that stop a run before it has seen its whole scope (others, such as
# PAGE_MAX_BYTES or REDIRECT_MAX_TIMES, shape one record and let the run go on).
STOPPING_LIMITS = frozenset(
    {
        "BFS_MAX_PAGES",
        "BFS_MAX_DEPTH",
        "SITEMAP_MAX_DEPTH",
        "SITEMAP_MAX_DOCUMENTS",
        "SITEMAP_MAX_URLS",
        "SITEMAP_MAX_URLS_PER_FILE",  # a file's entries past it are not read
        "LINKS_PER_PAGE_MAX",  # a page's links past it are not read
        "LINKS_MAX_URLS",  # links found past it are not recorded
    }
)


def limit_name(details: dict[str, object]) -> str:
    """A bound limit (``RunRecord.limits``' entry) named as the person gave it: the
    ``-a`` argument (``max_pages``) when it came from one, else its setting."""
    return str(details.get("given") or details.get("limit"))


def limit_words(details: dict[str, object]) -> str:
    """``max_pages=50`` (its value), or the name alone when it has none."""
    value = details.get("value")
    return limit_name(details) + ("" if value is None else f"={value}")


# Scrapy's finish reasons of a run stopped by its CloseSpider extension (a limit).
_CLOSESPIDER = "closespider_"
OUTPUT_FAILED_REASON = "output_failed"  # the finish reason a failed write closes with
CHUNK_DONE_REASON = "chunk_done"  # the finish reason of a chunk that left work to do


def outcome_of(
    failure: str | None,
    finish_reason: str | None,
    limits: Iterable[str] = (),
    write_error: str | None = None,
) -> str:
    """The run's outcome, worst first: a failed write, a failure, a chunk with work left,
    an interruption, a limit."""
    if write_error or finish_reason == OUTPUT_FAILED_REASON:
        return OUTPUT_FAILED
    if failure:
        return FAILED
    if finish_reason == CHUNK_DONE_REASON:
        return MORE_TO_DO
    if finish_reason is not None and finish_reason != "finished":
        return BOUNDED if finish_reason.startswith(_CLOSESPIDER) else INTERRUPTED
    if not STOPPING_LIMITS.isdisjoint(limits):
        return BOUNDED
    return COMPLETED


def exit_code(outcome: str | None) -> int:
    """The exit status of a run that ended with ``outcome`` (None: no run was judged —
    the crawl never started its run, which is a failure)."""
    return EXIT_CODES.get(outcome or FAILED, EXIT_CODES[FAILED])
