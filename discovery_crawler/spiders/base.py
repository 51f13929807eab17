"""What the entry points (``discover``, ``links``) do before a crawl starts: check the
``-a`` arguments and the feeds once, apply the profile, and describe the run for its
owner (``extensions/run.py``, the ``DISCOVERY_RUN`` setting)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from scrapy.settings import SETTINGS_PRIORITIES, Settings

from discovery_crawler.arguments import (
    INVENTORY_NAME,
    ArgumentError,
    RunOptions,
    check_budget_limits,
    check_url_length,
    out_dir_of,
)
from discovery_crawler.distributed.job import (
    JobKeys,
    JobMismatch,
    default_job_name,
    job_identity,
    join_job,
)
from discovery_crawler.extensions.job import JOBDIR_SETTING, lock_job, use_jobdir
from discovery_crawler.extensions.run import RUN_SETTING, DiscoveryRun, run_of
from discovery_crawler.output.crawl_log import os_error_text
from discovery_crawler.output.folder_lock import hold_folder, taken_over, takeover_line
from discovery_crawler.output.state import check_origin
from discovery_crawler.output.writable import (
    OutputUnwritable,
    check_feed_file,
    check_out_dir,
    local_feed_paths,
)
from discovery_crawler.profiles import available_profiles, load_profile
from discovery_crawler.urls.normalize import UrlError, normalize, origin_of

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

FEED_FORMATS = ("jsonl", "jsonlines", "json", "csv")
DEFAULT_JOB_FOLDER = "_job"  # under the out folder: a chunked run's job, without JOBDIR


def default_feeds(options: RunOptions, settings: BaseSettings) -> dict[str, Any]:
    """The feed of a run given none (no ``-O``/``-o``, no ``FEEDS`` or ``FEED_URI``):
    ``<out>/inventory.jsonl``, JSON lines, rewritten at every start as ``-O`` is (so a
    chunked or resumed job ends with the whole inventory). A Scrapyd job too: with an
    ``items_dir`` Scrapyd passes its own feed in ``FEEDS``, the only one; without, none,
    and the inventory is where the same command line would put it."""
    if settings.getdict("FEEDS") or settings.get("FEED_URI"):
        return {}
    path = out_dir_of(options) / INVENTORY_NAME
    if urlsplit(str(path)).scheme:  # "a:b/…" would name a feed storage: the path is absolute
        path = path.absolute()
    return {str(path): {"format": "jsonlines", "overwrite": True}}


def check_feed_formats(feeds: dict[str, Any]) -> None:
    """Refuse feed formats that would not write one record per URL."""
    for uri, options in feeds.items():
        fmt = (options or {}).get("format")
        if fmt and fmt not in FEED_FORMATS:
            raise ArgumentError(
                "-O/-o", f"{uri}: format {fmt!r} is not supported; use .jsonl, .json or .csv"
            )


def check_outputs(options: RunOptions, settings: BaseSettings, jobdir: str | None = None) -> None:
    """The out folder, every local feed (the default one when none is given) and the job
    folder (``JOBDIR``) can be written (``OutputUnwritable`` if not), and this process
    holds the out folder and the job folder (``FolderBusy`` when a live run holds one):
    before any feed is looked at, so a refused run touches nothing."""
    out = out_dir_of(options)
    check_out_dir(out)
    hold_out_dir(out)
    feeds = settings.getdict("FEEDS") or default_feeds(options, settings)
    for path in local_feed_paths(feeds):
        check_feed_file(path)
    if jobdir:
        check_out_dir(Path(jobdir), "the job folder (JOBDIR)")
        lock_job(Path(jobdir))  # held until the process ends: one invocation of a job at once


def hold_out_dir(out: Path) -> None:
    """Hold the out folder until the process ends (``output/folder_lock.py``); one run
    writes a folder at a time. A lock taken over from a run that is gone is said on
    stderr (and in the crawl log, ``RunEntry.note_takeovers``)."""
    try:
        gone = hold_folder(out)
    except OSError as exc:
        raise OutputUnwritable(
            f"cannot write to the out folder {out}: {os_error_text(exc)}"
        ) from None
    if gone is not None:
        print(f"warning: {takeover_line(out, gone)}", file=sys.stderr)


def hold_run_folders(options: RunOptions, settings: BaseSettings) -> None:
    """As the crawler is configured: the out folder and the job folder held, for a run
    that did not come through the ``crawl`` command (a script, ``CrawlerProcess``); a no-op
    where the command holds them already."""
    out = out_dir_of(options)
    out.mkdir(parents=True, exist_ok=True)
    hold_out_dir(out)
    if jobdir := settings.get(JOBDIR_SETTING):
        lock_job(Path(jobdir))


def job_folder_of(options: RunOptions, settings: BaseSettings) -> str | None:
    """The run's job folder: ``JOBDIR``, or ``<out>/_job/`` for a run in bounded chunks
    (``MAX_CHUNK_PAGES`` > 0, from ``-s`` or the profile); None: not a job."""
    if settings.get("JOBDIR"):
        return str(settings.get("JOBDIR"))
    chunk = settings.get("MAX_CHUNK_PAGES")
    if (settings.getpriority("MAX_CHUNK_PAGES") or 0) < SETTINGS_PRIORITIES["spider"]:
        chunk = load_profile(options.profile).get("MAX_CHUNK_PAGES", chunk)
    if int(chunk or 0) > 0:
        return str(out_dir_of(options) / DEFAULT_JOB_FOLDER)
    return None


def check_run_settings(options: RunOptions, settings: BaseSettings) -> None:
    """What the arguments are checked against once the settings are known: the feeds'
    formats, and the start URL's length against ``URLLENGTH_LIMIT`` (``-s`` may raise
    it). Both entry points call it before a crawler is built (the ``crawl`` command) and
    again as the crawler is configured (Scrapyd, a script)."""
    check_setting_values(settings)
    check_feed_formats(settings.getdict("FEEDS"))
    check_url_length(options.url, settings.getint("URLLENGTH_LIMIT"))


COMMAND_LINE = SETTINGS_PRIORITIES["cmdline"]  # -s, and Scrapyd's setting=


_KINDS = (
    (bool, "getbool", "True or False (or 1 or 0)"),
    # An int default says "a number", not "a whole number": Scrapy reads many of them as
    # seconds with getfloat (DOWNLOAD_TIMEOUT = 180, DOWNLOAD_DELAY = 0, CLOSESPIDER_TIMEOUT).
    (int, "getfloat", "a number"),
    (float, "getfloat", "a number"),
    (dict, "getdict", "a JSON object"),
)


def setting_mistake(name: str, value: str, default: Any) -> str | None:
    """``-s HOST_INTERVAL=abc: expected a number (HOST_INTERVAL's default: 1.0)`` when
    ``value`` is not what Scrapy's getter for ``default``'s type reads; None when it is,
    or the default says nothing of the type (None, a string, a list)."""
    for kind, getter, words in _KINDS:
        if isinstance(default, kind):
            try:
                getattr(Settings({name: value}), getter)(name)
            except (ValueError, TypeError):
                shown = "{…}" if isinstance(default, dict) else repr(default)
                return f"-s {name}={value}: expected {words}, e.g. -s {name}={shown} (its default)"
            return None
    return None


def check_setting_values(settings: BaseSettings) -> None:
    """Each ``-s NAME=value`` (Scrapyd's ``setting=``) read as its setting's type — the
    default's, in this project's ``settings.py`` or Scrapy's — before anything runs: a
    value a component cannot read ended the crawl at its start in two tracebacks and
    exit 1 (``-s HOST_INTERVAL=abc``). ``ValueError``, one line naming what was typed
    (``setting_mistake``: the ``crawl`` command applies it before Scrapy reads ``-s``
    too, ``commands/mistakes.py``)."""
    from scrapy.settings import default_settings

    from discovery_crawler import settings as project

    for name, value in settings.items():
        if not isinstance(value, str) or settings.getpriority(name) != COMMAND_LINE:
            continue
        default = getattr(project, name, getattr(default_settings, name, None))
        if (mistake := setting_mistake(name, value, default)) is not None:
            raise ValueError(mistake)


REDIS_SCHEDULER = "discovery_crawler.distributed.scheduler.RedisScheduler"
REDIS_INTERVAL_BUDGET = "discovery_crawler.distributed.interval.RedisBudget"
REDIS_JOB_SETTING = "REDIS_JOB"  # read by the RedisScheduler (distributed/scheduler.py)


def distributed_job(spider: str, arguments: dict[str, Any], options: RunOptions) -> dict[str, Any]:
    """The job a distributed worker joins: its name (``-a job=``, else derived from the
    identity: ``distributed/job.py``) and its identity (spider, ``-a`` arguments)."""
    identity = job_identity(spider, arguments)
    return {"name": options.job or default_job_name(identity), "identity": identity}


def check_distributed(
    spider: str, arguments: dict[str, Any], options: RunOptions, settings: BaseSettings
) -> None:
    """With ``REDIS_URL``: Redis answers (``RedisUnavailable``, one line naming the address)
    and this worker's arguments are the job's (``ArgumentError`` naming the difference),
    before any file is touched. ``-a job=`` without ``REDIS_URL`` is a bad argument."""
    url = settings.get("REDIS_URL")
    if not url:
        if options.job:
            raise ArgumentError(
                "job", "names a distributed job; give -s REDIS_URL=redis://host:port/db too"
            )
        return
    from discovery_crawler.distributed.connection import connect  # the redis extra

    job = distributed_job(spider, arguments, options)
    client = connect(str(url), reconnect_timeout=0)
    try:
        join_job(client, JobKeys(job["name"]), job["identity"])
    except JobMismatch as exc:
        raise ArgumentError("job", str(exc)) from None
    finally:
        client.close()


def distributed_settings(
    spider: str, arguments: dict[str, Any], options: RunOptions, settings: BaseSettings
) -> None:
    """With ``REDIS_URL``, as the crawler is configured: the Redis scheduler and its job,
    and the hosts' turns kept in Redis, so each host's interval, Retry-After and back-off
    pauses hold job-wide (``HOST_INTERVAL_BUDGET``). Local runs are left as they were."""
    if not settings.get("REDIS_URL") or settings.frozen:
        return
    settings.set("SCHEDULER", REDIS_SCHEDULER, priority="spider")
    settings.set(REDIS_JOB_SETTING, distributed_job(spider, arguments, options), "spider")
    settings.set("HOST_INTERVAL_BUDGET", REDIS_INTERVAL_BUDGET, priority="spider")


def check_state_origin(options: RunOptions) -> None:
    """A re-run must start at the site its out folder's ``state.json`` belongs to (SPEC
    §10): refused here, before crawling. A sitemap given as input names its site by its
    first URL, so the state stage checks that one when it is known."""
    if options.input_kind == "sitemap":
        return
    try:
        origin = origin_of(normalize(options.url))
    except UrlError:
        return  # the spider reports an unusable start URL
    problem = check_origin(out_dir_of(options), origin)
    if problem:
        raise ArgumentError("url", problem)


class RunEntry:
    """Mixin of the spiders that are entry points of a discovery run."""

    # The settings the crawl log records, and how each is read (Settings getter name).
    settings_in_log: ClassVar[dict[str, str]] = {}
    crawler: Crawler

    @classmethod
    def parse_options(cls, arguments: dict[str, Any]) -> RunOptions:
        """The ``-a`` arguments, checked; ``ArgumentError`` on the first wrong one."""
        options = RunOptions.from_arguments(arguments, available_profiles())
        check_state_origin(options)
        cls.check_options(options)
        check_budget_limits(options, load_profile(options.profile))
        return options

    @classmethod
    def check_options(cls, options: RunOptions) -> None:
        """What this spider refuses beyond the arguments' own rules (none by default)."""

    @staticmethod
    def apply_profile(options: RunOptions, settings: BaseSettings) -> None:
        """The profile's defaults, at spider priority (``-s`` still wins). The run's owner
        is put back in ``EXTENSIONS`` when a ``-s EXTENSIONS=…`` replaced the project's
        (the run cannot go without it, and a user adding an extension does not mean to
        remove it). ``JOBDIR`` makes the run resumable the project's way
        (``extensions/job.py``); a run in bounded chunks (``MAX_CHUNK_PAGES``, on in
        ``service``) is always one, in ``<out>/_job/`` when no ``JOBDIR`` is given, so the
        same command run again continues it."""
        settings.setdict(load_profile(options.profile), priority="spider")
        settings.setdefault_in_component_priority_dict("EXTENSIONS", DiscoveryRun, 0)
        if feeds := default_feeds(options, settings):  # before the feed exporter reads FEEDS
            settings.set("FEEDS", feeds, priority="spider")
        if settings.getint("MAX_CHUNK_PAGES") > 0 and not settings.get("JOBDIR"):
            settings.set("JOBDIR", str(out_dir_of(options) / DEFAULT_JOB_FOLDER), "spider")
        use_jobdir(settings)

    def note_takeovers(self) -> None:
        """The crawl log says which of this run's folders it took over from a run that
        is gone (killed or crashed while it held them)."""
        for lock, gone in taken_over().items():
            self.run.record.note(takeover_line(Path(lock).parent, gone))

    def describe_run(self, arguments: dict[str, Any], mode: str) -> None:
        """Tell the run's owner what to run (``DISCOVERY_RUN``), as plain data."""
        settings = self.crawler.settings
        logged = {name: getattr(settings, get)(name) for name, get in self.settings_in_log.items()}
        run = {"arguments": dict(arguments), "mode": mode, "log_settings": logged}
        settings.set(RUN_SETTING, run, priority="spider")

    @property
    def run(self) -> DiscoveryRun:
        found = run_of(self.crawler)
        if found is None:
            raise RuntimeError(f"{RUN_SETTING}: no run (is DiscoveryRun in EXTENSIONS?)")
        return found
