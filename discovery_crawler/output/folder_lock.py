"""One run at a time per output folder.

Two runs writing one folder interleave its feed, crawl log and ``state.json`` (issue 34:
68 URLs twice, 98 missing, a crashed exporter, both runs "completed"). So every run of
``discover`` and ``links`` holds its out folder (and its ``JOBDIR``), and ``rediscover``
its root, before it writes anything: an exclusive ``flock`` on a lock file in the folder,
kept until the process ends. The kernel drops the lock with the process (a kill -9
included), so a lock is never left behind; two processes started in the same instant
cannot both get it.

The lock file also holds a record of its holder (pid, start time, command) — what a run
refused names — which the holder clears when it exits normally. A record found by the
process that gets the lock was left by a holder that did not exit normally (killed, or
crashed): that lock is taken over, and the caller says so.

Plain functions, no Scrapy: the crawl command, the spiders and ``rediscover`` call them.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import fcntl
import json
import os
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

LOCK_NAME = "_run.lock"  # in every out folder and rediscover root
_HELD: dict[str, int] = {}  # lock file (resolved) → its descriptor, open until the process ends
_TAKEN_OVER: dict[str, Holder] = {}  # lock file → the gone holder whose lock this process took
_RECORD_WAIT = 1.0  # s: how long a refused run waits for a new holder's record to be written


@dataclass(frozen=True)
class Holder:
    """Who holds (or held) a lock, as its record says."""

    pid: int | None
    started_at: str | None
    command: str | None = None

    def describe(self) -> str:
        """``pid 1234, started 2026-12-07T19:40:02Z``."""
        pid = self.pid if self.pid is not None else "unknown"
        return f"pid {pid}, started {self.started_at or 'at an unknown time'}"


class FolderBusy(Exception):
    """Another live run holds the folder; the message names the folder and the holder."""

    def __init__(self, folder: Path, holder: Holder):
        self.folder = folder
        self.holder = holder
        super().__init__(
            f"{folder} is in use by another run ({holder.describe()}); nothing was touched"
        )


def parse_record(text: str) -> Holder | None:
    """The holder a lock file's text names; None when it names none (empty: released).
    A bare pid is read too (``job.lock`` of earlier versions held only that)."""
    text = text.strip()
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        pid = data.get("pid")
        return Holder(
            pid if isinstance(pid, int) else None,
            str(data["started_at"]) if data.get("started_at") else None,
            str(data["command"]) if data.get("command") else None,
        )
    if isinstance(data, int) or text.isdigit():
        return Holder(int(text), None)
    return Holder(None, None)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _command_line() -> str:
    return " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv))


def _read(fd: int) -> str:
    return os.pread(fd, 64 * 1024, 0).decode("utf-8", "replace")


def hold_folder(folder: Path, name: str = LOCK_NAME) -> Holder | None:
    """Hold ``folder`` (which exists) for this process until it ends: ``FolderBusy`` when a
    live run holds it, ``OSError`` when the lock file cannot be made. Returns the holder a
    lock was taken over from (a run that is gone without releasing it), else None. Holding
    a folder this process holds already is a no-op."""
    path = folder / name
    key = str(path.resolve())
    if key in _HELD:
        return None
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno not in (errno.EWOULDBLOCK, errno.EACCES):
            os.close(fd)
            raise
        holder = _holder_of(fd)
        os.close(fd)
        raise FolderBusy(folder, holder) from None
    gone = parse_record(_read(fd))
    record = {"pid": os.getpid(), "started_at": _now(), "command": _command_line()}
    os.ftruncate(fd, 0)
    os.pwrite(fd, (json.dumps(record) + "\n").encode(), 0)
    _HELD[key] = fd
    if gone is not None:
        _TAKEN_OVER[key] = gone
    return gone


def _holder_of(fd: int) -> Holder:
    """The live holder's record; a holder that got the lock an instant ago may not have
    written it yet (two runs started together), so it is waited for a moment."""
    deadline = time.monotonic() + _RECORD_WAIT
    while True:
        holder = parse_record(_read(fd))
        if (holder is not None and holder.pid is not None) or time.monotonic() > deadline:
            return holder or Holder(None, None)
        time.sleep(0.01)


def taken_over() -> dict[str, Holder]:
    """Lock file → the gone holder, of every lock this process took over."""
    return dict(_TAKEN_OVER)


def takeover_line(folder: Path, gone: Holder) -> str:
    """What a run says when it took a lock over."""
    return f"took over the lock of {folder} from a run that is gone ({gone.describe()})"


@atexit.register
def _release() -> None:
    """A normal exit clears the records, so the next holder does not report a takeover;
    the locks themselves go with the process."""
    for fd in _HELD.values():
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
