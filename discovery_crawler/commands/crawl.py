"""``scrapy crawl`` for this project: the stock command, plus

- a wrong spider argument prints one line naming it and what it accepts, and exits with
  status 2 — before Scrapy starts, so no traceback and no start-up log (the spider
  validates the same way when run under Scrapyd or from a script);
- an out folder or feed that cannot be written is said in one line, and the run does not
  start (status 4);
- the exit status says how the run ended (``outcomes.py``; docs/operations.md, "Exit status"): 0
  completed, 1 failed, 2 bad arguments, 3 interrupted (resumable with ``JOBDIR``), 4 an
  output could not be written, 5 a limit stopped it early, 6 a bounded chunk done with
  more to do (``MAX_CHUNK_PAGES``: run it again), 8 another live run holds the out folder
  or the job folder (said in one line naming it, before anything is touched).
"""

from __future__ import annotations

import gc
import sys
from typing import TYPE_CHECKING, NoReturn

from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from scrapy.spiderloader import get_spider_loader

from discovery_crawler.arguments import ArgumentError
from discovery_crawler.commands.mistakes import CommandLineMistake, check_command_line
from discovery_crawler.distributed.connection import RedisUnavailable
from discovery_crawler.extensions.run import run_of
from discovery_crawler.middlewares.ssrf import guard_policy, unguarded_connections
from discovery_crawler.outcomes import (
    BAD_ARGUMENTS,
    BAD_ARGUMENTS_OUTCOME,
    BUSY,
    BUSY_OUTCOME,
    EXIT_CODES,
    FAILED,
    INTERRUPTED,
    OUTPUT_FAILED,
    exit_code,
)
from discovery_crawler.output.folder_lock import FolderBusy
from discovery_crawler.output.log_file import log_refusal
from discovery_crawler.output.writable import OutputUnwritable
from discovery_crawler.profiles import available_profiles, load_profile
from discovery_crawler.rendering import RenderUnavailable, plan_render

if TYPE_CHECKING:
    import argparse

    from scrapy.settings import Settings


class Command(ScrapyCrawlCommand):
    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        self._check_command_line(args, opts)  # before Scrapy reads -o/-O its own way
        super().process_options(args, opts)
        if len(args) != 1:
            return
        try:
            spidercls = get_spider_loader(self.settings).load(args[0])
        except KeyError:
            return  # said above (_check_command_line)
        validate = getattr(spidercls, "validate_arguments", None)
        if validate is None:
            return
        try:
            validate(opts.spargs, self.settings)
            settings = self._profile_settings(opts.spargs.get("profile"))
            render = opts.spargs.get("render")
            if render is not None:
                self._plan_render(str(render).strip().lower(), settings)
            if settings.getbool("SSRF_GUARD_ENABLED"):
                guard_policy(settings)  # a wrong allow-list: one line, before anything runs
                if (why := unguarded_connections(settings)) is not None:
                    raise ValueError(f"SSRF_GUARD_ENABLED: {why}")
        except ArgumentError as exc:
            self._refuse(f"error: {exc}", BAD_ARGUMENTS_OUTCOME, BAD_ARGUMENTS)
        except ValueError as exc:  # a setting's value: the SSRF guard's allow-lists
            self._refuse(f"error: {exc}", BAD_ARGUMENTS_OUTCOME, BAD_ARGUMENTS)
        except OutputUnwritable as exc:
            self._refuse(f"error: {exc}", OUTPUT_FAILED, EXIT_CODES[OUTPUT_FAILED])
        except FolderBusy as exc:
            self._refuse(f"error: {exc} (exit {BUSY})", BUSY_OUTCOME, BUSY)
        except RedisUnavailable as exc:  # REDIS_URL does not answer: nothing written
            self._refuse(f"error: {exc}", FAILED, EXIT_CODES[FAILED])

    def _refuse(self, line: str, outcome: str, status: int) -> NoReturn:
        """End before any run: the one line on stderr, and in ``LOG_FILE`` when one is
        set (a Scrapyd job's log: Scrapy's logging is not set up yet, so the line would
        reach only Scrapyd's own log), with the outcome as the run's stats would say it."""
        print(line, file=sys.stderr)
        log_refusal(self.settings, line, outcome, status)
        raise SystemExit(status)

    def _check_command_line(self, args: list[str], opts: argparse.Namespace) -> None:
        """A slip of the hand (a misspelled spider, Scrapy's ``--profile`` for ``-a
        profile=``, a feed format no spider here writes): one line, status 2."""
        loader = get_spider_loader(self.settings)

        def formats_of(name: str) -> list[str]:
            own = (getattr(loader.load(name), "custom_settings", None) or {}).get("FEED_EXPORTERS")
            return list(own or self.settings.getdict("FEED_EXPORTERS"))

        try:
            check_command_line(
                args,
                opts,
                loader.list(),
                available_profiles(),
                formats_of,
                self.settings.getwithbase("FEED_EXPORTERS"),
            )
        except CommandLineMistake as exc:
            print(f"error: {exc}", file=sys.stderr)
            raise SystemExit(BAD_ARGUMENTS) from None

    def _profile_settings(self, profile: str | None) -> Settings:
        """The settings the crawl will run with: the project's, the profile's, ``-s``."""
        settings = self.settings.copy()
        if profile:  # at spider priority, as the spider applies it (-s still wins)
            settings.setdict(load_profile(str(profile)), priority="spider")
        return settings

    def _plan_render(self, mode: str, settings: Settings) -> None:
        """``-a render=`` becomes ``RENDER_MODE`` (read by ``rendering.RenderAddon``); a
        browser asked for and missing, or the SSRF guard on, is a bad argument, said in
        one line."""
        try:
            plan_render(mode, settings)
        except (RenderUnavailable, ValueError) as exc:
            raise ArgumentError("render", str(exc)) from None
        self.settings.set("RENDER_MODE", mode, priority="cmdline")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1:
            super().run(args, opts)
            return
        assert self.crawler_process
        crawler = self._create_crawler(args[0])
        self.crawler_process.crawl(crawler, **opts.spargs)
        self.crawler_process.start()
        # The process ends next: its last collections would walk every object left, for
        # nothing; files and feeds are closed by now.
        gc.freeze()
        try:
            run = run_of(crawler)
        except RuntimeError:  # the crawler never got its extensions
            run = None
        if run is not None:
            # A run never judged did not reach its end (its spider never closed).
            judged = run.record.judged
            self.exitcode = exit_code(run.record.outcome if judged else INTERRUPTED)
        elif outcome := crawler.stats.get_value("discovery/outcome"):  # a run of its own
            self.exitcode = exit_code(outcome)
        elif self.crawler_process.bootstrap_failed or crawler.stats.get_value("discovery/failed"):
            self.exitcode = 1
