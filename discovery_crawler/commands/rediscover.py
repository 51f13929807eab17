"""``scrapy rediscover SITES_FILE [--root DIR] [--parallel N] [-s NAME=VALUE …]``: the
command a cron job runs — discover every site of a sites file again (``sites_file.py``),
each into ``DIR/<host>/`` (default ``./discovery``, where a plain run goes), and say per
site how it ended and what changed.

Each site is its own ``scrapy crawl discover`` process (``-a url=… -a out=DIR/<host>``,
the line's arguments, every ``-s``), so one site's crash cannot take the others down; its
log goes to ``DIR/_logs/<host>.log``. One at a time by default; ``--parallel N`` runs N at
once. The sites file is checked whole before any site runs: a malformed line, or an
argument the spider refuses, is said by its number and nothing runs.

``rediscover`` holds ``DIR`` itself (``output/folder_lock.py``), so two scheduled runs
never overlap; each site's run holds its own folder as every run does.

Exit status: 0 every site completed, was bounded by a limit, or did a chunk of its job
(more to do: the next run goes on); 1 some site did not (failed, incomplete,
interrupted, an output failed, or its folder busy with another run) — the others still
ran; 2 a bad or unreadable sites file or option; 3 rediscover itself was stopped
(SIGINT/SIGTERM: passed on to the running sites, no new site started); 4 the root
cannot be written; 8 another rediscover (or run) holds the root.

With ``-s REDIS_URL=redis://host:port/db`` the sites are shared with every rediscover
started with the same file (on this machine or others: a *round*, ``--job NAME``,
``distributed/sites.py``): each takes the next site not taken, runs it here as above
(a local crawl: ``REDIS_URL`` is not passed on) and records its outcome in Redis; a
rediscover that stops beating has its running sites taken again by another. Each
machine stays until no site is queued or running anywhere, and the last writes the
round's results (every site's outcome, machine and folder) to ``DIR/_round-<name>.json``.
The exit status is of the sites this machine ran; Redis unreachable at start, or lost
mid-round (past ``REDIS_RECONNECT_TIMEOUT``, or restarted without its data): one line, the
running sites stopped, exit 1; another file under the round's name: exit 2.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from discovery_crawler.commands.mistakes import one_line_errors
from discovery_crawler.distributed.connection import RedisUnavailable
from discovery_crawler.distributed.sites import RoundLost, RoundMismatch, RoundOver, SitesRound
from discovery_crawler.outcomes import (
    BAD_ARGUMENTS,
    BOUNDED,
    BUSY,
    BUSY_OUTCOME,
    COMPLETED,
    EXIT_CODES,
    INTERRUPTED,
    MORE_TO_DO,
    OUTPUT_FAILED,
)
from discovery_crawler.output.crawl_log import CRAWL_LOG_NAME
from discovery_crawler.output.folder_lock import FolderBusy, hold_folder, takeover_line
from discovery_crawler.sites_file import (
    Problem,
    Site,
    SitesFileError,
    parse_sites,
    problem_lines,
    read_text,
)
from discovery_crawler.spiders.base import check_run_settings, check_setting_values
from discovery_crawler.spiders.discover import DiscoverSpider

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from types import FrameType

DEFAULT_ROOT = "discovery"  # where a plain run keeps ./discovery/<host>/
LOGS_FOLDER = "_logs"  # DIR/_logs/<host>.log: each site's crawl log output, last run
# The outcomes that count as done: a limit is the user's choice, and a chunked job's next
# chunk is the next scheduled run.
DONE = frozenset(EXIT_CODES[o] for o in (COMPLETED, BOUNDED, MORE_TO_DO))
_WORDS = {code: word for word, code in EXIT_CODES.items()} | {
    BAD_ARGUMENTS: "bad arguments",
    BUSY: BUSY_OUTCOME,
}
SOME_SITE_NOT_DONE = 1
STOPPED = EXIT_CODES[INTERRUPTED]
_POLL = 0.05  # s between looks at the running sites
_EXIT_SAID = re.compile(r" \(exit \d+\)\Z")  # a refusal's own "(exit 8)": the line says it
_PR_SET_PDEATHSIG = 1
ROUND_FILE_PREFIX = "_round-"  # ROOT/_round-<name>.json: a shared round's results


def _stop_with_parent(parent: int) -> Callable[[], None] | None:
    """In the site's process, before it runs (Linux): a SIGTERM when rediscover ends, a
    kill -9 included — the site stops as after Ctrl-C (its files and crawl-log entry
    written) rather than run on unwatched, holding its folder."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def arm() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:  # rediscover was gone before the line above
            os.kill(os.getpid(), signal.SIGTERM)

    return arm


def outcome_word(code: int) -> str:
    """A site's exit status in words: the outcome's, ``busy``, or the signal that killed it."""
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return _WORDS.get(code, f"exit status {code}")


def _runs(folder: Path) -> list[Any]:
    try:
        runs = json.loads((folder / CRAWL_LOG_NAME).read_text(encoding="utf-8"))["runs"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return runs if isinstance(runs, list) else []


def _last_error(log: Path) -> str | None:
    """The last ``error: …`` line the site's run printed (a refusal before it ran)."""
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    errors = [line.strip() for line in lines if line.startswith("error: ")]
    return _EXIT_SAID.sub("", errors[-1].removeprefix("error: ")) if errors else None


def site_line(folder: str, code: int, run: dict[str, Any] | None, log: Path) -> str:
    """What rediscover says of one site: outcome, exit status, URLs, what changed; why,
    when it did not complete."""
    line = f"{folder}: {outcome_word(code)} (exit {code})"
    if run is not None:
        changes = run.get("changes") or {}
        # The inventory's URLs, one feed line each (state.json may keep more: removed ones).
        urls = ((run.get("discovery") or {}).get("counts") or {}).get("discovered", 0)
        line += f", {urls:,} URL{'' if urls == 1 else 's'}"
        if changes and changes.get("previous_run") is None:
            line += ", first run"
        elif changes:
            new, changed = changes["new"]["count"], changes["changed"]["count"]
            if changes.get("removals_judged"):
                removed = changes["removed"]["count"]
                line += f", {new:,} new, {removed:,} removed, {changed:,} changed"
            else:
                line += f", {new:,} new, {changed:,} changed, removals not judged"
    if code not in DONE:
        why = (run or {}).get("write_error") or (run or {}).get("failure") or _last_error(log)
        line += f": {why}" if why else ""
        line += f" (log: {log})"
    return line


@dataclass
class Running:
    site: Site
    out: Path
    log: Path
    runs_before: int
    process: subprocess.Popen[bytes]
    told: bool = False  # the stop signal was passed on to it
    said: str = ""  # the line rediscover printed of it


class Command(ScrapyCommand):
    requires_project = True
    requires_crawler_process = False
    default_settings = {"LOG_ENABLED": False}  # noqa: RUF012 — Scrapy's class attribute

    def syntax(self) -> str:
        return "SITES_FILE [--root DIR] [--parallel N] [--job NAME] [-s NAME=VALUE ...]"

    def short_desc(self) -> str:
        return "Discover every site of a sites file again, each into DIR/<host>/ (for cron)"

    def long_desc(self) -> str:
        return (
            "Discover every site of SITES_FILE again, each into DIR/<host>/ in its own "
            "process, and print one line per site (outcome, URLs, new / removed / changed). "
            "SITES_FILE: one site URL a line, optionally followed by key=value spider "
            "arguments; # comments. A malformed line refuses the whole file. Exit status: "
            "0 every site completed or bounded, 1 some site did not, 2 a bad sites file, "
            "3 stopped by a signal, 4 the root cannot be written, 8 another run holds DIR. "
            "With -s REDIS_URL=redis://host:port/db, rediscover started on several machines "
            "with the same file shares its sites: each site runs on one machine, into that "
            "machine's DIR; the exit status says of the sites this machine ran."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        one_line_errors(parser)
        parser.add_argument(
            "--root",
            metavar="DIR",
            default=DEFAULT_ROOT,
            help=f"each site runs into DIR/<host>/ (default: ./{DEFAULT_ROOT})",
        )
        parser.add_argument(
            "--job",
            metavar="NAME",
            default=None,
            help="with -s REDIS_URL: the round of the sites list the machines share "
            "(default: sites-<digest of the file's sites>)",
        )
        parser.add_argument(
            "--parallel",
            metavar="N",
            type=int,
            default=1,
            help="sites run at once (default: 1, one after another)",
        )

    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        super().process_options(args, opts)
        if len(args) != 1:
            raise UsageError("give one sites file (one URL a line): scrapy rediscover SITES_FILE")
        if opts.parallel < 1:
            raise UsageError("--parallel must be 1 or more")
        if opts.job is not None and not self.settings.get("REDIS_URL"):
            raise UsageError(
                "--job names a round of a sites list shared over Redis; "
                "give -s REDIS_URL=redis://host:port/db too"
            )

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        path, root = Path(args[0]), Path(opts.root)
        try:
            sites, problems = parse_sites(read_text(path))
        except SitesFileError as exc:
            self._fail(exc.lines, BAD_ARGUMENTS)
        try:
            check_setting_values(self.settings)  # each -s, once, before the lines
        except ValueError as exc:
            self._fail([str(exc)], BAD_ARGUMENTS)
        problems += self._check(root, sites)
        if problems or not sites:
            self._fail(problem_lines(path, sites, problems), BAD_ARGUMENTS)
        source = None
        if redis_url := self.settings.get("REDIS_URL"):
            source = self._join_round(str(redis_url), opts.job, root, sites)
            if source is None:
                return  # the round was over: said
        try:
            root.mkdir(parents=True, exist_ok=True)
            gone = hold_folder(root)
            (root / LOGS_FOLDER).mkdir(exist_ok=True)
        except FolderBusy as exc:
            self._fail([f"{exc} (exit {BUSY})"], BUSY)
        except OSError as exc:
            code = EXIT_CODES[OUTPUT_FAILED]
            self._fail([f"cannot write to the root {root}: {exc.strerror} (exit {code})"], code)
        if gone is not None:
            print(f"warning: {takeover_line(root, gone)}", file=sys.stderr, flush=True)
        # Each site runs here as a local crawl (the round is of sites, not of one site's
        # pages): REDIS_URL stays with rediscover.
        local = [s for s in opts.set if s.partition("=")[0].strip() != "REDIS_URL"]
        self.exitcode = self._run_sites(sites, root, local, opts.parallel, source)

    def _join_round(
        self, url: str, name: str | None, root: Path, sites: list[Site]
    ) -> SharedSites | None:
        """This machine in the round of ``sites`` (before the root is touched); None when
        the round was finished before (said, exit 0)."""
        settings = self.settings
        listed = [{"line": s.line, "url": s.url, "arguments": s.arguments} for s in sites]
        try:
            round_ = SitesRound.join(
                url,
                name,
                listed,
                settings.getfloat("REDIS_HEARTBEAT_TIMEOUT", 30.0),
                settings.getfloat("REDIS_RECONNECT_TIMEOUT", 60.0),
            )
        except RedisUnavailable as exc:
            self._fail([f"{exc} (exit {SOME_SITE_NOT_DONE})"], SOME_SITE_NOT_DONE)
        except RoundLost as exc:
            self._fail([f"{exc} (exit {SOME_SITE_NOT_DONE})"], SOME_SITE_NOT_DONE)
        except RoundMismatch as exc:
            self._fail([f"{exc} (exit {BAD_ARGUMENTS})"], BAD_ARGUMENTS)
        except RoundOver as exc:
            print(f"rediscover: {exc}", flush=True)
            self.exitcode = 0
            return None
        print(
            f"rediscover: machine {round_.worker} in round {round_.name} "
            f"({len(sites)} site(s)) at {round_.address}",
            flush=True,
        )
        return SharedSites(round_, root, len(sites))

    @staticmethod
    def _fail(lines: list[str], code: int) -> None:
        for line in lines:
            print(f"error: {line}", file=sys.stderr)
        raise SystemExit(code)

    def _check(self, root: Path, sites: list[Site]) -> list[Problem]:
        """Every site's arguments as the spider will check them, before any site runs."""
        problems = []
        for site in sites:
            arguments = {"url": site.url, "out": str(root / site.folder), **site.arguments}
            try:
                options = DiscoverSpider.parse_options(arguments)
                check_run_settings(options, self.settings)
            except ValueError as exc:  # ArgumentError, and what a setting's value raises
                problems.append(Problem(site.line, str(exc)))
        return problems

    # -- the sites' runs --------------------------------------------------------------------
    def _command(self, site: Site, out: Path, settings: list[str]) -> list[str]:
        cmd = [sys.executable, "-m", "scrapy", "crawl", "discover", "-a", f"url={site.url}"]
        cmd += ["-a", f"out={out}"]
        for name, value in site.arguments.items():
            cmd += ["-a", f"{name}={value}"]
        for setting in settings:
            cmd += ["-s", setting]
        return cmd

    def _start(self, site: Site, root: Path, settings: list[str]) -> Running:
        out, log = root / site.folder, root / LOGS_FOLDER / f"{site.folder}.log"
        before = len(_runs(out))
        with log.open("wb") as sink:
            # Its own session: a Ctrl-C at the terminal reaches rediscover only, which
            # passes it on once (a second SIGINT would stop a crawl uncleanly).
            process = subprocess.Popen(
                self._command(site, out, settings),
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_stop_with_parent(os.getpid()),  # safe: rediscover runs no threads
            )
        return Running(site, out, log, before, process)

    def _finish(self, running: Running) -> int:
        code = running.process.returncode
        runs = _runs(running.out)
        run = runs[-1] if len(runs) > running.runs_before and isinstance(runs[-1], dict) else None
        if code in (BUSY, BAD_ARGUMENTS):
            # Refused before it ran, it wrote no entry: a new one is the holder's (a plain
            # run that finished meanwhile), not this site's — its URLs were said as ours.
            run = None
        running.said = site_line(running.site.folder, code, run, running.log)
        print(running.said, flush=True)
        return code

    def _run_sites(
        self,
        sites: list[Site],
        root: Path,
        settings: list[str],
        parallel: int,
        source: LocalSites | SharedSites | None = None,
    ) -> int:
        """Run the sites ``source`` hands out (the file's, one after another; or a round's
        shared over Redis), ``parallel`` at a time; the exit status."""
        source = source if source is not None else LocalSites(sites)
        running: list[Running] = []
        codes: list[int] = []
        stop: list[int] = []  # the signals received

        def tell(each: Running, signum: int) -> None:
            if each.process.poll() is None:
                os.kill(each.process.pid, signum)
                each.told = True

        def on_signal(signum: int, _frame: FrameType | None) -> None:
            stop.append(signum)
            for each in running:
                tell(each, signum)

        previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            while True:
                while len(running) < parallel and not stop and not source.failed:
                    site = source.take()
                    if site is None:
                        break
                    running.append(self._start(site, root, settings))
                    if stop and not running[-1].told:
                        # The signal came while the site's process was being started:
                        # not yet in ``running``, it was not told, and would run on.
                        tell(running[-1], stop[0])
                if source.failed and not stop:  # Redis gone: the sites here stop too
                    on_signal(signal.SIGTERM, None)
                if stop:
                    for site in source.not_run():
                        print(f"{site.folder}: not run (rediscover was stopped)", flush=True)
                for each in [r for r in running if r.process.poll() is not None]:
                    running.remove(each)
                    code = self._finish(each)
                    codes.append(code)
                    source.ended(each, code, stopped=bool(stop))
                if not running and (stop or source.failed or not source.more()):
                    break
                source.tick()
                time.sleep(_POLL)
            source.end(stopped=bool(stop))
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        done = sum(code in DONE for code in codes)
        if source.failed:
            status = SOME_SITE_NOT_DONE
        elif stop:
            status = STOPPED
        else:
            status = 0 if done == len(codes) else SOME_SITE_NOT_DONE
        print(source.summary(len(codes), done, status), flush=True)
        return status


class LocalSites:
    """The sites file's sites, all run here, in the file's order."""

    failed: str | None = None

    def __init__(self, sites: list[Site]) -> None:
        self.count = len(sites)
        self.pending = deque(sites)

    def take(self) -> Site | None:
        return self.pending.popleft() if self.pending else None

    def not_run(self) -> list[Site]:
        left = list(self.pending)
        self.pending.clear()
        return left

    def ended(self, running: Running, code: int, stopped: bool) -> None:
        return None

    def more(self) -> bool:  # nothing runs here: done once nothing is left to take
        return bool(self.pending)

    def tick(self) -> None:
        return None

    def end(self, stopped: bool) -> None:
        return None

    def summary(self, ran: int, done: int, status: int) -> str:
        return (
            f"rediscover: {self.count} site(s), {done} done, {self.count - done} not; exit {status}"
        )


class SharedSites:
    """The sites of a round shared over Redis (``distributed/sites.py``): taken one at a
    time by whichever machine has a free slot; a site that ended is recorded there
    (outcome, host, root); a site stopped before its end goes back to the round. This
    machine stays in the round while any machine runs a site, so the site of one that
    stops beating is taken again."""

    ASK_EVERY = 0.5  # s between two looks at an empty queue

    def __init__(self, round_: SitesRound, root: Path, count: int) -> None:
        self.round = round_
        self.root = root
        self.count = count
        self.failed: str | None = None
        self._sites: dict[int, dict[str, Any]] = {}  # line -> the site as leased
        self._quiet_until = 0.0  # no asking for a site before (the queue was empty)
        self._look_after = 0.0  # no asking whether the round is done before
        self._waiting_said = False

    def _lost(self, exc: RoundLost) -> None:
        if self.failed is None:
            self.failed = str(exc)
            print(f"error: {exc}", file=sys.stderr, flush=True)

    def take(self) -> Site | None:
        if time.monotonic() < self._quiet_until or self.failed:
            return None
        try:
            self.tick()
            got = self.round.take()
        except RoundLost as exc:
            self._lost(exc)
            return None
        if got is None:
            self._quiet_until = time.monotonic() + self.ASK_EVERY
            return None
        self._sites[got["line"]] = got
        return Site(got["line"], got["url"], got["arguments"])

    def not_run(self) -> list[Site]:
        return []  # the round's queue keeps them for the other machines

    def ended(self, running: Running, code: int, stopped: bool) -> None:
        if self.failed or (stopped and code not in DONE):
            return  # stopped before its end: handed back to the round (leave)
        site = self._sites.pop(running.site.line)
        result = {
            "folder": running.site.folder,
            "url": running.site.url,
            "exit": code,
            "outcome": outcome_word(code),
            "said": running.said,
            "root": str(self.root.resolve()),
            "out": str(running.out.resolve()),
            "log": str(running.log.resolve()),
        }
        try:
            self.round.ended(site, result)
        except RoundLost as exc:
            self._lost(exc)

    def more(self) -> bool:
        """Whether to stay: a site is queued, or runs on another machine."""
        if self.failed:
            return False
        if time.monotonic() < self._look_after:
            return True
        self._look_after = time.monotonic() + self.ASK_EVERY
        try:
            queued, leased = self.round.pending()
        except RoundLost as exc:
            self._lost(exc)
            return False
        if leased and not queued and not self._waiting_said:
            self._waiting_said = True
            print(
                f"rediscover: waiting for {leased} site(s) of round {self.round.name} running "
                "on other machines (taken again here if their machine stops)",
                flush=True,
            )
        return bool(queued or leased)

    def tick(self) -> None:
        if self.failed:
            return
        try:
            back = self.round.beat()
        except RoundLost as exc:
            self._lost(exc)
            return
        if back:
            print(
                f"rediscover: {back} site(s) of a machine that stopped beating went back to "
                f"round {self.round.name}",
                flush=True,
            )
            self._quiet_until = 0.0

    def summary(self, ran: int, done: int, status: int) -> str:
        return (
            f"rediscover: round {self.round.name}, {self.count} site(s) in all; "
            f"{ran} ran here, {done} done, {ran - done} not; exit {status}"
        )

    def end(self, stopped: bool) -> None:
        """This machine leaves the round; the last one to see it done writes the round's
        results (every site: outcome, machine, folder) into its root."""
        if not self.failed and not stopped:
            try:
                results = self.round.finish()
            except RoundLost as exc:
                self._lost(exc)
                results = None
            if results is not None:
                path = self.root / f"{ROUND_FILE_PREFIX}{self.round.name}.json"
                try:
                    path.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
                    where = f"every site's outcome and machine in {path}"
                except OSError as exc:
                    where = f"its results not written to {path}: {exc.strerror}"
                hosts = {r["host"] for r in results["sites"].values()}
                print(
                    f"rediscover: round {self.round.name} is done: "
                    f"{len(results['sites'])} site(s) on {len(hosts)} machine(s); {where}",
                    flush=True,
                )
        if self.failed:
            # Redis gone: its sites go back when another machine sees this one's heartbeat
            # lapse; a round that is gone must not get a stray queue key back
            return
        back = self.round.leave()
        if back:
            print(
                f"rediscover: {back} site(s) stopped here went back to round "
                f"{self.round.name} for another machine",
                flush=True,
            )
