"""The Python API (docs/api.md): ``discover(url, **options)`` runs a discovery and
returns its records; ``parse_sitemap``, ``normalize_url`` and ``robots_policy`` are the
pure pieces the crawl is made of, callable without one.

``discover`` runs ``scrapy crawl discover`` in a child process (``sys.executable -m
scrapy``, the project's settings named by ``SCRAPY_SETTINGS_MODULE``, so any working
folder will do): Scrapy's reactor and signal handlers live and die with that process,
so a script, a notebook, a web server or a running asyncio loop can call it — any number
of times — without a reactor of its own. The child's exit status is the run's (docs/operations.md,
"Exit status"): 0, 5 (bounded) and 6 (a chunk done, more to do) return the records;
the others raise a ``DiscoveryError`` subclass carrying the run's one-line message.

Nothing here imports Scrapy: the package's lazy exports (``discovery_crawler.discover``)
import this module on first use only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from discovery_crawler.arguments import INVENTORY_NAME
from discovery_crawler.outcomes import (
    BAD_ARGUMENTS,
    BOUNDED,
    COMPLETED,
    EXIT_CODES,
    FAILED,
    INTERRUPTED,
    MORE_TO_DO,
    OUTPUT_FAILED,
)
from discovery_crawler.output.crawl_log import CRAWL_LOG_NAME
from discovery_crawler.robots import RobotsPolicy
from discovery_crawler.sitemaps.parser import Entry, iter_sitemap
from discovery_crawler.urls.normalize import normalize

SETTINGS_MODULE = "discovery_crawler.settings"
TERMINATE_GRACE = 10.0  # seconds a timed-out run gets to close, twice, before a kill
SITEMAP_MAX_BYTES = 52_428_800 + 1_048_576  # settings.py's default: 50 MiB + margin
_OUTCOME_OF_STATUS = {code: outcome for outcome, code in EXIT_CODES.items()}
_FILES = (INVENTORY_NAME, CRAWL_LOG_NAME, "state.json", "report.html", "changes.json")
_FILES_MORE = ("preview.json",)


# -- errors ---------------------------------------------------------------------------------
class DiscoveryError(Exception):
    """A run that did not do its job. ``str(error)`` is its one-line message (what the
    command prints after ``error:``, or the summary's ``FAILED:`` line), ``exit_code``
    the child's exit status, ``outcome`` the word for it, ``result`` what the run left
    (a ``Discovery``, possibly with partial records; None when nothing ran)."""

    exit_code: int | None = None

    def __init__(self, message: str, exit_code: int | None = None, result: Discovery | None = None):
        super().__init__(message)
        self.message = message
        if exit_code is not None:
            self.exit_code = exit_code
        self.result = result

    @property
    def outcome(self) -> str | None:
        return _OUTCOME_OF_STATUS.get(self.exit_code) if self.exit_code is not None else None


class BadArguments(DiscoveryError):
    """Exit 2: a wrong argument, setting or feed; nothing was started."""

    exit_code = BAD_ARGUMENTS


class RunFailed(DiscoveryError):
    """Exit 1: the run could not do its job (the site unreachable, refused whole…)."""

    exit_code = EXIT_CODES[FAILED]


class Interrupted(DiscoveryError):
    """Exit 3: a signal, a timeout (``timeout=``) or a crash stopped the run; with a
    ``JOBDIR`` setting, the same call continues it."""

    exit_code = EXIT_CODES[INTERRUPTED]


class OutputFailed(DiscoveryError):
    """Exit 4: a file could not be written, or the job folder is in use."""

    exit_code = EXIT_CODES[OUTPUT_FAILED]


_ERRORS: dict[int, type[DiscoveryError]] = {
    BAD_ARGUMENTS: BadArguments,
    EXIT_CODES[FAILED]: RunFailed,
    EXIT_CODES[INTERRUPTED]: Interrupted,
    EXIT_CODES[OUTPUT_FAILED]: OutputFailed,
}


# -- the result -----------------------------------------------------------------------------
class Discovery(list):  # type: ignore[type-arg]
    """The records of a run (a list of dicts, one per URL, the feed's fields), with what
    else the run said: ``outcome`` (``completed``, ``bounded``, ``more_to_do``),
    ``exit_code``, ``run`` (this run's entry of ``_crawl-log.json``, parsed), ``files``
    (name → path of the files left in ``out``; empty when no ``out`` was given: the
    temporary folder is gone) and ``log`` (the run's log, stderr)."""

    def __init__(
        self,
        records: list[dict[str, Any]],
        *,
        exit_code: int,
        run: dict[str, Any] | None,
        files: dict[str, Path],
        log: str,
    ):
        super().__init__(records)
        self.exit_code = exit_code
        self.outcome = _OUTCOME_OF_STATUS.get(exit_code, FAILED)
        self.run = run
        self.files = files
        self.log = log

    @property
    def records(self) -> list[dict[str, Any]]:
        return list(self)

    @property
    def crawl_log(self) -> dict[str, Any] | None:
        """This run's crawl-log entry (``runs[-1]`` of ``_crawl-log.json``)."""
        return self.run

    @property
    def complete(self) -> bool:
        return self.outcome == COMPLETED

    def __repr__(self) -> str:
        return f"<Discovery {len(self)} records, {self.outcome}>"


# -- discover ------------------------------------------------------------------------------
def _arg_value(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (list, tuple, set, frozenset)):
        return ",".join(str(v) for v in value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return str(value)


def _setting_value(value: Any) -> str:
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value)
    return str(value)


def command(
    url: str,
    *,
    mode: str = "auto",
    out: str | os.PathLike[str],
    settings: dict[str, Any] | None = None,
    **arguments: Any,
) -> list[str]:
    """The child's command line: ``python -m scrapy crawl discover -a url=… -a mode=…
    -a out=… [-a name=value…] -O <out>/inventory.jsonl [-s NAME=value…]``."""
    out = Path(out)
    cmd = [sys.executable, "-m", "scrapy", "crawl", "discover", "-a", f"url={url}"]
    if mode and mode != "auto":  # auto is the default: a profile may pick another (polite)
        cmd += ["-a", f"mode={mode}"]
    cmd += ["-a", f"out={out}"]
    for name, value in arguments.items():
        if value is not None:
            cmd += ["-a", f"{name}={_arg_value(value)}"]
    cmd += ["-O", str(out / INVENTORY_NAME)]
    for name, value in (settings or {}).items():
        cmd += ["-s", f"{name}={_setting_value(value)}"]
    return cmd


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["SCRAPY_SETTINGS_MODULE"] = SETTINGS_MODULE  # the project, from any folder
    root = Path(__file__).resolve().parent.parent
    if (root / "scrapy.cfg").is_file():  # a clone: the child imports the package from it
        paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        env["PYTHONPATH"] = os.pathsep.join([str(root), *[p for p in paths if p != str(root)]])
    return env


def _run_child(cmd: list[str], timeout: float | None) -> tuple[int, str, bool]:
    """Run the crawl; ``(exit status, stderr, timed out)``. A run over ``timeout`` is
    asked to stop as Ctrl-C asks it (SIGTERM: Scrapy closes the spider, writes its files
    and crawl-log entry); one still running ``TERMINATE_GRACE`` seconds later is told
    again (``extensions/stop.py``: the requests on the wire are abandoned, the files and
    crawl-log entry still written), then killed."""
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="replace",
        env=_environment(),
    )
    try:
        _, err = proc.communicate(timeout=timeout)
        return proc.returncode, err, False
    except subprocess.TimeoutExpired:
        pass
    except BaseException:  # KeyboardInterrupt in the caller: the child goes with it
        proc.kill()
        proc.wait()
        raise
    err = ""
    for stop in (proc.terminate, proc.terminate, proc.kill):
        stop()
        try:
            _, err = proc.communicate(timeout=TERMINATE_GRACE)
            break
        except subprocess.TimeoutExpired:
            continue
    return proc.returncode, err, True


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def _read_records(path: Path, before: tuple[int, int, int] | None) -> list[dict[str, Any]]:
    """The feed's records, if this run wrote it (``-O`` truncated it: it changed since
    ``before``): a run that never started leaves the last run's feed, not its own."""
    if _signature(path) in (None, before):
        return []
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _runs_in(out: Path) -> list[Any]:
    try:
        runs = json.loads((out / CRAWL_LOG_NAME).read_text(encoding="utf-8"))["runs"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return runs if isinstance(runs, list) else []


def _read_run(out: Path, before: int) -> dict[str, Any] | None:
    """This run's crawl-log entry: the last one, if the log has more than ``before``."""
    runs = _runs_in(out)
    if len(runs) <= before or not isinstance(runs[-1], dict):
        return None
    return runs[-1]


def _message(status: int, err: str, run: dict[str, Any] | None) -> str:
    """The run's one line: its failure or write error from the crawl log, else the last
    ``error: …`` line it printed, else the last line of its log."""
    if run is not None:
        if status == EXIT_CODES[OUTPUT_FAILED] and run.get("write_error"):
            return f"OUTPUT FAILED: {run['write_error']}"
        if run.get("failure"):
            return f"FAILED: {run['failure']}"
    lines = [line.strip() for line in err.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error: ")]
    if errors:
        return errors[-1].removeprefix("error: ")
    return lines[-1] if lines else f"the crawl exited with status {status}"


def discover(
    url: str,
    *,
    mode: str = "auto",
    out: str | os.PathLike[str] | None = None,
    settings: dict[str, Any] | None = None,
    timeout: float | None = None,
    **arguments: Any,
) -> Discovery:
    """Discover the pages of ``url`` (a homepage, a sitemap or a robots.txt URL) and
    return their records (a ``Discovery``: a list of dicts with ``outcome``, ``run``,
    ``files``).

    ``mode`` and every other keyword are the spider's ``-a`` arguments (``profile``,
    ``max_pages``, ``verify=True``, ``include_paths=["/docs/"]``…); ``settings`` its ``-s``
    settings (``{"HOST_INTERVAL": 0.5}``); ``out`` the folder its files stay in
    (``inventory.jsonl``, ``_crawl-log.json``, ``state.json``, ``report.html``; a re-run
    into it reports what changed; a job in bounded chunks, profile ``service``, keeps its
    job there: call again while ``outcome == "more_to_do"``) — without one the run works
    in a temporary folder, removed before this returns (and a job runs in one go,
    ``MAX_CHUNK_PAGES=0`` unless ``settings`` say otherwise). ``timeout`` (seconds) stops
    the run, which then raises ``Interrupted``. A run that does not complete its job
    raises a ``DiscoveryError``: ``BadArguments`` (exit 2), ``RunFailed`` (1),
    ``Interrupted`` (3), ``OutputFailed`` (4); a bounded run (5) or a chunk with more to
    do (6) returns, ``outcome`` says so."""
    temporary = out is None
    folder = Path(tempfile.mkdtemp(prefix="discovery-")) if temporary else Path(out)
    settings = dict(settings or {})
    if temporary:  # a job's next chunk could not find its folder: the job in one go
        settings.setdefault("MAX_CHUNK_PAGES", 0)
    try:
        cmd = command(url, mode=mode, out=folder, settings=settings, **arguments)
        feed = folder / INVENTORY_NAME
        before, feed_before = len(_runs_in(folder)), _signature(feed)
        status, err, timed_out = _run_child(cmd, timeout)
        run = _read_run(folder, before)
        records = _read_records(feed, feed_before)
        files = {}
        if not temporary:
            for name in (*_FILES, *_FILES_MORE):
                if (folder / name).is_file():
                    files[name] = folder / name
        if timed_out:
            status = EXIT_CODES[INTERRUPTED]
        result = Discovery(records, exit_code=status, run=run, files=files, log=err)
    finally:
        if temporary:
            shutil.rmtree(folder, ignore_errors=True)
    if status in (EXIT_CODES[COMPLETED], EXIT_CODES[BOUNDED], EXIT_CODES[MORE_TO_DO]):
        return result
    if timed_out:
        message = f"timed out after {timeout:g} s: the run was stopped"
    else:
        message = _message(status, err, run)
    raise _ERRORS.get(status, DiscoveryError)(message, status, result)


# -- the pure pieces -----------------------------------------------------------------------
def parse_sitemap(
    body: bytes, url: str | None = None, *, max_bytes: int = SITEMAP_MAX_BYTES
) -> list[Entry]:
    """The entries of a sitemap body (urlset, index, text, RSS/Atom; gzipped or not) as
    the crawl reads them: ``Entry`` tuples (``loc``, ``lastmod``, ``changefreq``,
    ``priority``, ``alternates``, ``is_sitemap`` for an index's children, which come last),
    locations resolved against ``url`` when given. A body over ``max_bytes``
    decompressed raises ``SitemapTooLarge``."""
    return list(iter_sitemap(body, url, max_bytes=max_bytes))


def normalize_url(url: str, base: str | None = None) -> str:
    """``url`` (resolved against ``base`` when given) normalized as the crawl normalizes
    every URL (docs/usage.md, "URLs: normalization"); ``UrlError`` (a ``ValueError``) when it
    cannot be."""
    return normalize(url, base)


class Robots:
    """A robots.txt read as the crawl reads it (RFC 9309, Protego): ``allowed(url,
    agent)``, ``rule(url, agent)`` (the rule that blocks it), ``crawl_delay`` and
    ``sitemaps`` (resolved against the file's URL)."""

    def __init__(self, text: str | bytes, url: str, agent: str):
        self._text = text
        self.url = url
        self.agent = agent
        self._policies: dict[str, RobotsPolicy] = {}

    def policy(self, agent: str | None = None) -> RobotsPolicy:
        """The crawl's own policy object for ``agent`` (the group that applies to it)."""
        key = (agent or self.agent).strip().lower()
        if key not in self._policies:
            self._policies[key] = RobotsPolicy.from_text(self._text, token=key, url=self.url)
        return self._policies[key]

    def allowed(self, url: str, agent: str | None = None) -> bool:
        return self.policy(agent).allowed(url)

    def rule(self, url: str, agent: str | None = None) -> str | None:
        """The verbatim rule that disallows ``url`` for ``agent``, None when allowed."""
        return self.policy(agent).check(url)[1]

    @property
    def crawl_delay(self) -> float | None:
        return self.policy().crawl_delay

    @property
    def sitemaps(self) -> list[str]:
        return list(self.policy().sitemaps)

    @property
    def group(self) -> str | None:
        """The user-agent group that applies to ``agent`` (``*`` when none names it)."""
        return self.policy().group

    def __repr__(self) -> str:
        return f"<Robots {self.url} agent={self.agent!r} group={self.group!r}>"


def robots_policy(
    robots_txt: str | bytes, url: str = "https://example.com/robots.txt", agent: str = "*"
) -> Robots:
    """A robots.txt's content as a policy (``Robots``), as if served with 200 at ``url``
    (its origin resolves relative ``Sitemap:`` lines); ``agent`` the default user-agent
    token asked (``*``: any crawler no group names; the crawl's is
    ``discovery-crawler``)."""
    return Robots(robots_txt, url, agent)
