"""``_crawl-log.json``: an append-only ``runs[]`` record of every run on a site.

Written atomically (temporary file + ``os.replace``), so a crash never leaves a
half-written log. An existing file that is not a valid crawl log is never overwritten:
it is moved aside (``_crawl-log.json.corrupt-<time>``) and the run says so in one line.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

CRAWL_LOG_NAME = "_crawl-log.json"


class CrawlLogError(Exception):
    """The existing crawl log could not be read as one."""


def os_error_text(exc: BaseException) -> str:
    """An OS error in words with its code, without Python's repr: ``No space left on
    device (ENOSPC)``; any other exception as its type and message (a bug in a write
    path is told in the same one line)."""
    if not isinstance(exc, OSError):
        return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    name = errno.errorcode.get(exc.errno or 0)
    words = exc.strerror or str(exc) or type(exc).__name__
    return f"{words} ({name})" if name else words


def json_shallow(value: Any, depth: int = 4, newline: str = "\n") -> str:
    """``value`` as JSON, one item a line (indented a space a level) down to ``depth``
    levels and compact below. The compact parts are json's C encoder's, while any ``indent``
    takes json's pure-Python one, which is several times slower on a big run's log."""
    if depth and value and isinstance(value, dict | list):
        inner = newline + " "
        if isinstance(value, list):
            items = [inner + json_shallow(v, depth - 1, inner) for v in value]
            return "[" + ",".join(items) + newline + "]"
        items = [f"{inner}{_key(k)}: {json_shallow(v, depth - 1, inner)}" for k, v in value.items()]
        return "{" + ",".join(items) + newline + "}"
    return json.dumps(value, ensure_ascii=False)


def _key(key: Any) -> str:
    """A dict key as json writes it (an int, float, bool or None becomes a string)."""
    return json.dumps({key: 0}, ensure_ascii=False)[1:-4]


def write_json_atomic(path: Path, data: Any) -> None:
    """Write ``data`` as JSON to ``path`` so readers see the old or the new file, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json_shallow(data))
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_crawl_log(path: Path) -> dict[str, Any]:
    """Read an existing crawl log; raise ``CrawlLogError`` saying what is wrong with it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # JSONDecodeError, bad UTF-8 too
        raise CrawlLogError(f"{path} is not valid JSON ({type(exc).__name__})") from None
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list):
        raise CrawlLogError(f"{path} has no runs[] list")
    if not all(isinstance(run, dict) for run in data["runs"]):
        raise CrawlLogError(f"{path} has a run in runs[] that is not an object")
    return data


def _free_name(path: Path) -> Path:
    """``path``, or ``path-2``, ``path-3``… whichever does not exist yet."""
    candidate, n = path, 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}-{n}")
    return candidate


def keep_aside(path: Path) -> Path:
    """Move a file the run cannot use (a corrupt crawl log, ``state.json``, ``job.json``)
    out of the way as ``<name>.corrupt-<time>``, never over another; return where."""
    aside = _free_name(path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}"))
    os.replace(path, aside)
    return aside


def append_run(path: Path, run: dict[str, Any]) -> Path:
    """Append ``run`` to the crawl log at ``path`` (created if missing); return the path."""
    log: dict[str, Any] = {"runs": []}
    if path.exists():
        try:
            log = read_crawl_log(path)
        except CrawlLogError as exc:
            aside = keep_aside(path)
            logger.error("%s; kept it aside as %s and started a new log", exc, aside.name)
            run.setdefault("warnings", []).append(
                f"previous crawl log unreadable, kept as {aside.name}"
            )
    log["runs"].append(run)
    write_json_atomic(path, log)
    return path
