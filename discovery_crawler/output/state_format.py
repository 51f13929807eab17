"""``state.json``, the file: what the previous runs on a site found, laid out so that it is
read and written as a stream (a 10M-URL site must never sit in memory as a dict of dicts)::

    {"format": "discovery-crawler/state/2", "origin": "https://example.com", ..., "entries": [
    ["https://example.com/", "home", 1, 3, "2026-11-28", "known"],
    ...
    ["https://example.com/old/", "old", 1, 2, null, "removed"]
    ], "count": 1234, "counts": {"new": 12, ...}, "runs": [{"run": 3, ...}]}

One JSON document, as the SPEC names it. Line 1 is the header (format, origin, the input
origins that led to it, run number, ``fields``, and since format 2 ``sitemaps``: the
name of the file of its sitemap sections, ``output/state_sitemaps.py``); then one entry a
line, ``[url, slug, first_seen, last_seen, lastmod, status]``; the last line closes the
list and carries what is known only at the end (the count, counts per status, the history
of runs). Any JSON tool reads it whole (``jq``); this module reads the first line to
learn the origin (the argument check before crawling) and the entries a chunk of lines at
a time. Arrays, not
objects: smaller and faster to parse. One file, not a header plus an entries file: one
``os.replace`` makes the new state visible, so there is no moment where the two disagree.

A file that does not read back exactly as written — not JSON in this layout, a truncated
tail, a count that disagrees, a URL of another origin — raises ``StateError``; the run
moves it aside (``move_aside``), never uses nor overwrites it.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import time
from json.encoder import encode_basestring
from typing import IO, TYPE_CHECKING, Any

from discovery_crawler.compiled import extension
from discovery_crawler.output.crawl_log import keep_aside

# entry_lines in C (``_lines.c``); where it was not built, in Python
_lines = extension("discovery_crawler.output._lines")

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

STATE_NAME = "state.json"
FORMAT = "discovery-crawler/state/2"
# Format 1 (no sitemap sections) is read as it is and written back as 2 (``RunState``).
FORMAT_V1 = "discovery-crawler/state/1"
FORMATS = (FORMAT_V1, FORMAT)
# The state a job's run replaced, hard-linked while the job is not marked finished: a job
# killed after its state was written judges its resume against it (``state.py``).
PREVIOUS_NAME = f".{STATE_NAME}.previous"
FIELDS = ("url", "slug", "first_seen", "last_seen", "lastmod", "status")
# ``unconfirmed``: listed before, not seen by the run that wrote the file, and not judged
# removed by it (a source it could not read, a narrower scope: ``state_scope.py``).
STATUSES = ("new", "known", "changed", "removed", "unconfirmed")
HISTORY_CAP = 100  # runs kept in the header's history

_ENTRIES_OPEN = ', "entries": [\n'
_FOOTER_START = b"], "


class StateError(Exception):
    """The state file is not one this project wrote (corrupt, truncated or hand-edited)."""


# -- writing ----------------------------------------------------------------------------
def header_line(header: dict[str, Any]) -> str:
    """Line 1: the header, opening the entries."""
    return json.dumps(header, ensure_ascii=False)[:-1] + _ENTRIES_OPEN


def footer_line(footer: dict[str, Any]) -> str:
    """The last line: closes the entries, then what is known at the end."""
    return "], " + json.dumps(footer, ensure_ascii=False)[1:] + "\n"


ENTRY_SEPARATOR = ",\n"  # between two entries of state.json


def entry_line(url: str, slug: str, first: int, last: int, lastmod: Any, status: str) -> str:
    enc = encode_basestring
    lm = enc(lastmod) if lastmod.__class__ is str else "null"
    return f'[{enc(url)}, {enc(slug)}, {first}, {last}, {lm}, "{status}"]'


def _entry_lines(
    urls: list[str], slugs: list[str], first: int, last: int, lastmods: list[Any], status: str
) -> list[str]:
    """``entry_line`` of many URLs that share their runs and status, in one comprehension
    (a first run's entries; the sitemap worker writes them with it too). ``_lines`` has
    the same function in C, used where built."""
    enc = encode_basestring
    runs = f", {first}, {last}, "
    end = f', "{status}"]'
    return [
        f"[{enc(url)}, {enc(slug)}{runs}{enc(lastmod) if lastmod.__class__ is str else 'null'}{end}"
        for url, slug, lastmod in zip(urls, slugs, lastmods, strict=True)
    ]


# The same lines from C where ``output/_lines.c`` was built.
entry_lines = _lines.entry_lines if _lines is not None else _entry_lines


# copy_file_range refusing this pair of files (another file system, a kernel without it):
# they are copied by blocks instead.
_NO_KERNEL_COPY = {errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EBADF}


def copy_entries(path: Path, body: IO[str]) -> str | None:
    """Copy a spool of entries (``ENTRY_SEPARATOR`` between them, none after the last) to
    ``body`` as it is, in the kernel where it can. Returns None for an empty spool, else
    ``""``: the caller writes ``pending + ",\n"`` before what follows, as after a line it
    holds back."""
    body.flush()
    out = body.buffer  # type: ignore[attr-defined]
    out.flush()
    with open(path, "rb") as spool:
        size = os.fstat(spool.fileno()).st_size
        if not size:
            return None
        done = 0
        try:
            while done < size:
                copied = os.copy_file_range(spool.fileno(), out.fileno(), size - done)
                if not copied:
                    break
                done += copied
        except AttributeError:  # no copy_file_range on this system
            pass
        except OSError as exc:
            if exc.errno not in _NO_KERNEL_COPY:
                raise  # a full disk, an I/O error: state.json is not written
        if done < size:  # the rest by blocks
            spool.seek(done)
            out.seek(0, os.SEEK_END)
            shutil.copyfileobj(spool, out, 1 << 20)
        out.seek(0, os.SEEK_END)
    return ""


# -- reading ----------------------------------------------------------------------------
def _parse_header(line: bytes, path: Path) -> dict[str, Any]:
    text = line.decode("utf-8", "strict")
    if not text.endswith(_ENTRIES_OPEN):
        raise StateError(f"{path} is not a state file in the expected layout (line 1)")
    header = json.loads(text[: -len(_ENTRIES_OPEN)] + "}")
    if not isinstance(header, dict):
        raise StateError(f"{path} is not a state file in the expected layout (line 1)")
    if header.get("format") not in FORMATS:
        raise StateError(f"{path}: unknown format {header.get('format')!r}, expected {FORMAT}")
    origin = header.get("origin")
    run = header.get("run")
    if not isinstance(origin, str) or "://" not in origin:
        raise StateError(f"{path}: no origin in the header")
    if not isinstance(run, int) or run < 1:
        raise StateError(f"{path}: header has no valid run number")
    origins = header.get("input_origins", [])
    if not isinstance(origins, list) or not all(isinstance(o, str) for o in origins):
        raise StateError(f"{path}: input_origins is not a list of origins")
    return header


def read_header(path: Path) -> dict[str, Any]:
    """The header of the state file at ``path`` (its first line); ``StateError`` if it
    is not one."""
    try:
        with open(path, "rb") as fh:
            line = fh.readline(1 << 20)
        return _parse_header(line, path)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, bad UTF-8 too
        raise StateError(f"{path} is not a valid state file ({exc})") from None


def _parse_footer(raw: bytes, path: Path, entries: int) -> dict[str, Any]:
    footer = json.loads(b"{" + raw[len(_FOOTER_START) :])
    if not isinstance(footer, dict) or footer.get("count") != entries:
        raise StateError(
            f"{path}: {entries:,} entries, but its last line says {footer.get('count')!r}"
        )
    if not isinstance(footer.get("runs", []), list):
        raise StateError(f"{path}: runs is not a list")
    return footer


def read_count(path: Path) -> int:
    """The entry count on the last line (read from the end; sizes the tables at load)."""
    with open(path, "rb") as fh:
        size = fh.seek(0, os.SEEK_END)
        fh.seek(max(0, size - (1 << 20)))
        tail = fh.read()
    start = tail.rfind(b"\n" + _FOOTER_START, 0, len(tail) - 1)
    if start < 0:
        raise StateError(f"{path} ends early (truncated: no closing line)")
    try:
        count = json.loads(b"{" + tail[start + 1 + len(_FOOTER_START) :]).get("count")
    except (UnicodeDecodeError, ValueError, AttributeError):
        raise StateError(f"{path}: its last line is not valid JSON") from None
    if not isinstance(count, int) or count < 0:
        raise StateError(f"{path}: its last line has no valid count")
    return count


def _check_entries(entries: list[Any], prefix: str, path: Path, line: int) -> None:
    statuses = STATUSES
    for offset, entry in enumerate(entries):
        if (
            entry.__class__ is not list
            or len(entry) != 6
            or entry[0].__class__ is not str
            or not entry[0].startswith(prefix)
            or entry[1].__class__ is not str
            or not entry[1]
            or entry[2].__class__ is not int
            or entry[3].__class__ is not int
            or not (entry[4] is None or entry[4].__class__ is str)
            or entry[5] not in statuses
        ):
            raise StateError(f"{path}: line {line + offset} is not a valid entry")


def iter_entry_chunks(
    path: Path, footer: dict[str, Any] | None = None, chunk: int = 1000
) -> Iterator[Any]:
    """The header, then lists of up to ``chunk`` entries ``[url, slug, first_seen,
    last_seen, lastmod, status]``, checked; ``StateError`` at the first thing that is
    wrong. The last line (count, counts, runs) is checked and put into ``footer``.

    A chunk of lines is parsed by one ``json.loads`` (the lines joined into one array),
    which also checks the commas between them: far fewer calls than a parse per line.
    """
    try:
        with open(path, encoding="utf-8") as fh:
            header = _parse_header(fh.readline(1 << 20).encode(), path)
            yield header
            prefix = header["origin"] + "/"
            footer_start = _FOOTER_START.decode()
            loads = json.loads
            lines: list[str] = []
            done = 0  # entries yielded
            ended = False  # the last entry seen had no comma: only the footer may follow

            def parse() -> list[Any]:
                nonlocal ended
                if ended:
                    raise StateError(f"{path}: line {done + 1} lacks its comma")
                last = lines[-1]
                if last.endswith(",\n"):
                    lines[-1] = last[:-2]
                else:
                    ended = True
                entries = loads("[" + "".join(lines) + "]")
                _check_entries(entries, prefix, path, done + 2)
                lines.clear()
                return entries

            for raw in fh:
                if raw.startswith(footer_start):
                    if lines:
                        entries = parse()
                        done += len(entries)
                        yield entries
                    if not ended and done:
                        raise StateError(f"{path}: line {done + 1} ends with a comma")
                    parsed = _parse_footer(raw.encode(), path, done)
                    if footer is not None:
                        footer.update(parsed)
                    if fh.read(1):
                        raise StateError(f"{path}: content after its closing line")
                    return
                lines.append(raw)
                if len(lines) >= chunk:
                    entries = parse()
                    done += len(entries)
                    yield entries
        raise StateError(f"{path} ends early (truncated: no closing line)")
    except (TypeError, ValueError, RecursionError, AttributeError, KeyError) as exc:
        # (JSONDecodeError and bad UTF-8 are ValueErrors)
        raise StateError(f"{path} is not a valid state file ({exc})") from None


def iter_entries(path: Path, footer: dict[str, Any] | None = None) -> Iterator[Any]:
    """The header, then every entry (see ``iter_entry_chunks``)."""
    chunks = iter_entry_chunks(path, footer)
    yield next(chunks)
    for chunk in chunks:
        yield from chunk


def move_aside(path: Path) -> Path:
    """Move an unusable state file out of the way (never overwritten); return where."""
    return keep_aside(path)


# A run holds an exclusive flock on each work file it has open beside state.json (its
# spool, the state it is writing): a file of these names that nobody holds, and that is
# not brand new, is what a killed run left, a line per URL it saw, never to be read.
WORK_FILES = (f".{STATE_NAME}.*.spool", f".{STATE_NAME}.*.tmp")
_ORPHAN_AFTER = 1.0  # seconds: a file this young may be one a run made but not locked yet


def hold(fd: int) -> None:
    """Mark an open work file as in use (``sweep_orphans`` leaves it alone)."""
    try:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (ImportError, OSError):
        pass  # no flock here: such a file is only ever left, never removed by mistake


def sweep_orphans(out_dir: Path, min_age: float = _ORPHAN_AFTER) -> list[Path]:
    """Remove the work files of killed runs from ``out_dir``; returns what was removed.
    ``min_age`` 0: the caller holds every work file it made (at a run's end)."""
    try:
        import fcntl
    except ImportError:
        return []
    removed = []
    now = time.time()
    for pattern in WORK_FILES:
        for path in out_dir.glob(pattern):
            try:
                fd = os.open(path, os.O_RDONLY)
            except OSError:
                continue
            try:
                if now - os.fstat(fd).st_mtime < min_age:
                    continue
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                path.unlink()
                removed.append(path)
            except OSError:
                continue  # held by a live run, or already gone
            finally:
                os.close(fd)
    return removed


def check_origin(out_dir: Path, input_origin: str) -> str | None:
    """Why a run starting at ``input_origin`` may not use the state in ``out_dir``, or
    None. An unreadable state is not a reason (the run moves it aside and starts afresh)."""
    path = out_dir / STATE_NAME
    if not path.is_file():
        return None
    try:
        header = read_header(path)
    except (StateError, OSError, TypeError, KeyError, AttributeError):
        return None
    accepted = {header["origin"], *header.get("input_origins", [])}
    if input_origin in accepted:
        return None
    return (
        f"{input_origin} is not the site recorded in {path} ({header['origin']}); "
        "use another -a out= folder, or move that state.json away to start afresh"
    )
