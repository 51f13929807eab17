"""``state.json``: what the previous runs on a site found, so a re-run can say what changed.

Per URL (SPEC §10): its slug (kept across runs), when it was first and last seen (run
numbers), its ``lastmod`` and its status — ``new`` (first seen by the run that wrote the
file), ``known``, ``changed`` (``lastmod`` differs from the previous run's) or ``removed``
(listed before, not any more). A re-run reads it, marks every record it discovers new /
known / changed, keeps known URLs' slugs, reports what was removed, and writes it back.

**Format.** One JSON document, as the SPEC names it, laid out so that it can be read and
written as a stream (a 10M-URL site must never sit in memory as a dict of dicts)::

    {"format": "discovery-crawler/state/1", "origin": "https://example.com", ..., "entries": [
    ["https://example.com/", "home", 1, 3, "2026-11-28", "known"],
    ...
    ["https://example.com/old/", "old", 1, 2, null, "removed"]
    ], "count": 1234, "counts": {"new": 12, ...}, "runs": [{"run": 3, ...}]}

Line 1 is the header (format, origin, the input origins that led to it, run number,
``fields``); then one entry a line, ``[url, slug, first_seen, last_seen, lastmod,
status]``; the last line closes the list and carries what is known only at the end (the
count, counts per status, the history of runs). Any JSON tool reads it whole (``jq``);
this module reads the first line to learn the origin (the argument check before crawling)
and the entries one line at a time. Arrays, not objects: ~40% smaller and ~30% faster to
parse. One file, not a header plus an entries file: one ``os.replace`` makes the new state
visible, so there is no moment where the two disagree.

**Safety.** Written to a temporary file and renamed (``os.replace``): a crash leaves the
old state or the new one, never half of one (a left-over temporary is ignored). A file
that does not read back exactly as written — not JSON in this layout, a truncated tail,
a count that disagrees, a duplicate URL or slug, a URL of another origin — is never used
nor overwritten: it is moved aside as ``state.json.corrupt-<time>`` with one log line, and
the run continues as a first run.

**Memory.** The previous run is held as an open-addressing table of 64-bit URL
fingerprints (Python ``hash()``; the table is rebuilt from the URLs at each load, so the
per-process salt does not matter) with one packed 64-bit value per slot: a 32-bit hash of
``lastmod`` (to tell "changed"), the first-seen run, and three flags (seen this run,
removed before, asked to refresh). Slugs are not kept: a known URL's slug is recomputed
from its path (``urls.slugs.bases_many``) plus its allocator suffix ``-N`` (a 32-bit
number per slot; 0 for none); only a slug of neither form (older rules, hand-made) is kept
in a dict; the slugs themselves are reserved in a
``SlugAllocator`` (fingerprints only) so new URLs never take one. 20 bytes a table slot
plus 8 a slug slot, tables 35–70% full and sized from the count on the file's last line:
measured 68 bytes per previous URL for 1M URLs (RSS of a load in a fresh process,
``tests/test_state.py``), where ``SlugAllocator.from_existing(mapping)`` needs the
``url → slug`` mapping itself (~200 B/URL of strings and dict) plus its copy (~60 B/URL).
This run's entries are spooled to a temporary file as records pass and streamed into the
new state at the end, together with the previous entries not seen this run.

A URL is identified by its trailing-slash twin key (``urls.normalize.twin_key``), as the
dedup stage does, so ``/about`` and ``/about/`` are one page across runs too.

Speed (same VM, 1,000-URL batches): ``observe`` ~2.0 µs a URL on a first run, ~2.8 on a
re-run; ``load`` ~3.5; writing at close ~0.9 (first run) to ~2.5 (re-run, which reads the
previous file once more to carry over unseen entries).

Two URLs sharing a 64-bit fingerprint (odds ~n²/2⁶⁵) would be taken for one; two
``lastmod`` values sharing a 32-bit hash would hide one change (2⁻³² per changed URL).
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import time
from array import array
from collections import Counter
from dataclasses import dataclass, field
from json.encoder import encode_basestring
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from discovery_crawler.output.crawl_log import _free_name, write_json_atomic
from discovery_crawler.run_record import CappedList
from discovery_crawler.sitemaps.facts import FROM_ENTRY, holding
from discovery_crawler.urls.normalize import twin_key, twin_keys
from discovery_crawler.urls.seen import SeenSet
from discovery_crawler.urls.slugs import (
    SlugAllocator,
    _with_suffix,
    bases_many,
    normalized_paths,
)

try:  # entry_lines in C (``_lines.c``); where it was not built, in Python
    from discovery_crawler.output import _lines
except ImportError:
    _lines = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from collections.abc import Iterator

logger = logging.getLogger(__name__)

STATE_NAME = "state.json"
CHANGES_NAME = "changes.json"
FORMAT = "discovery-crawler/state/1"
FIELDS = ("url", "slug", "first_seen", "last_seen", "lastmod", "status")
STATUSES = ("new", "known", "changed", "removed")
HISTORY_CAP = 100  # runs kept in the header's history

_ENTRIES_OPEN = ', "entries": [\n'
_FOOTER_START = b"], "
_SEEN = 1  # flags in the packed value of a table slot
_REMOVED = 2
_REFRESH = 4
_FLAGS = 3  # bits
_FIRST_MASK = (1 << (32 - _FLAGS)) - 1
_ODD = 0xFFFFFFFF  # a slug neither the URL's base nor base-N: kept in a dict


class StateError(Exception):
    """The state file is not one this module wrote (corrupt, truncated or hand-edited)."""


def lastmod_hash(lastmod: str | None) -> int:
    """32 bits that tell two ``lastmod`` values apart (0: none)."""
    if lastmod is None:
        return 0
    return (hash(lastmod) & 0xFFFFFFFF) or 1


def suffix_of(slug: str, base: str) -> int:
    """N when ``slug`` is ``base-N`` as the allocator makes it (cut to fit), else ``_ODD``."""
    head, dash, digits = slug.rpartition("-")
    if dash and head and digits.isdigit() and digits[0] != "0" and len(digits) < 10:
        n = int(digits)
        if n >= 2 and _with_suffix(base, n) == slug:
            return n
    return _ODD


def _entry_line(url: str, slug: str, first: int, last: int, lastmod: Any, status: str) -> str:
    enc = encode_basestring
    lm = enc(lastmod) if lastmod.__class__ is str else "null"
    return f'[{enc(url)}, {enc(slug)}, {first}, {last}, {lm}, "{status}"]'


def _entry_lines(
    urls: list[str], slugs: list[str], first: int, last: int, lastmods: list[Any], status: str
) -> list[str]:
    """``_entry_line`` of many URLs that share their runs and status, in one comprehension
    (a first run's entries; the sitemap worker writes them with it too). ``_lines`` has
    the same function in C (~0.15 µs against ~0.5 µs a URL, measured), used where built."""
    enc = encode_basestring
    runs = f", {first}, {last}, "
    end = f', "{status}"]'
    return [
        f"[{enc(url)}, {enc(slug)}{runs}{enc(lastmod) if lastmod.__class__ is str else 'null'}{end}"
        for url, slug, lastmod in zip(urls, slugs, lastmods, strict=True)
    ]


# The same lines from C where ``output/_lines.c`` was built.
entry_lines = _lines.entry_lines if _lines is not None else _entry_lines


def _has_worker_entry(records: list[dict[str, Any]]) -> bool:
    """Whether the sitemap worker wrote state entries for these records: for none when
    SITEMAP_WORKER_LINES is off, else for most; the ends of the batch tell (rendering an
    entry it wrote is never wrong, only slower)."""
    return any(f is not None and f.state for f in holding(records[:1] + records[-1:], FROM_ENTRY))


def _copy_lines(path: Path, body: IO[str]) -> str | None:
    """Copy the lines of ``path`` to ``body`` as entries (``,\n`` between them) in
    blocks, holding back the last one, which is returned (the caller decides what follows
    it). A per-line loop cost ~1 s for a 1M-URL spool; blocks of text ~0.2 s, of bytes
    (both files are UTF-8) half that."""
    pending: bytes | None = None
    rest = b""
    body.flush()
    out = body.buffer  # type: ignore[attr-defined]
    with open(path, "rb") as spool:
        while block := spool.read(1 << 20):
            block = rest + block
            end = block.rfind(b"\n")
            if end < 0:
                rest = block
                continue
            rest = block[end + 1 :]
            complete = block[:end]
            if pending is not None:
                out.write(pending + b",\n")
            last = complete.rfind(b"\n")
            if last >= 0:
                out.write(complete[:last].replace(b"\n", b",\n") + b",\n")
            pending = complete[last + 1 :]
    if rest:  # a spool always ends with a newline; never lose a line if not
        if pending is not None:
            out.write(pending + b",\n")
        pending = rest
    return pending.decode("utf-8") if pending is not None else None


# -- reading ----------------------------------------------------------------------------
def _parse_header(line: bytes, path: Path) -> dict[str, Any]:
    text = line.decode("utf-8", "strict")
    if not text.endswith(_ENTRIES_OPEN):
        raise StateError(f"{path} is not a state file in the expected layout (line 1)")
    header = json.loads(text[: -len(_ENTRIES_OPEN)] + "}")
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise StateError(f"{path}: unknown format {header.get('format')!r}, expected {FORMAT}")
    origin = header.get("origin")
    run = header.get("run")
    if not isinstance(origin, str) or "://" not in origin:
        raise StateError(f"{path}: no origin in the header")
    if not isinstance(run, int) or run < 1:
        raise StateError(f"{path}: header has no valid run number")
    if not isinstance(header.get("input_origins", []), list):
        raise StateError(f"{path}: input_origins is not a list")
    return header


def read_header(path: Path) -> dict[str, Any]:
    """The header of the state file at ``path`` (its first line); ``StateError`` if it
    is not one."""
    try:
        with open(path, "rb") as fh:
            line = fh.readline(1 << 20)
        return _parse_header(line, path)
    except (UnicodeDecodeError, ValueError) as exc:  # JSONDecodeError is a ValueError
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
    which also checks the commas between them: ~3x faster than a parse per line.
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
    except (UnicodeDecodeError, TypeError, ValueError) as exc:  # JSONDecodeError too
        raise StateError(f"{path} is not a valid state file ({exc})") from None


def iter_entries(path: Path, footer: dict[str, Any] | None = None) -> Iterator[Any]:
    """The header, then every entry (see ``iter_entry_chunks``)."""
    chunks = iter_entry_chunks(path, footer)
    yield next(chunks)
    for chunk in chunks:
        yield from chunk


def move_aside(path: Path) -> Path:
    """Move an unusable state file out of the way (never overwritten); return where."""
    aside = _free_name(path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}"))
    os.replace(path, aside)
    return aside


def check_origin(out_dir: Path, input_origin: str) -> str | None:
    """Why a run starting at ``input_origin`` may not use the state in ``out_dir``, or
    None. An unreadable state is not a reason (the run moves it aside and starts afresh)."""
    path = out_dir / STATE_NAME
    if not path.is_file():
        return None
    try:
        header = read_header(path)
    except (StateError, OSError):
        return None
    accepted = {header["origin"], *header.get("input_origins", [])}
    if input_origin in accepted:
        return None
    return (
        f"{input_origin} is not the site recorded in {path} ({header['origin']}); "
        "use another -a out= folder, or move that state.json away to start afresh"
    )


# -- the previous run, compact ----------------------------------------------------------
class _Table:
    """Open addressing: URL fingerprint → packed (lastmod hash, first_seen, flags)."""

    __slots__ = ("count", "keys", "mask", "sfx", "vals")

    def __init__(self, capacity: int) -> None:
        size = 1 << 10
        while size * 0.7 < capacity:
            size <<= 1
        self.keys = array("q", bytes(8 * size))
        self.vals = array("Q", bytes(8 * size))
        self.sfx = array("I", bytes(4 * size))  # slug: 0 the base, N base-N, _ODD the dict
        self.mask = size - 1
        self.count = 0

    @property
    def nbytes(self) -> int:
        return 20 * len(self.keys)

    def insert(self, fp: int, val: int, sfx: int = 0) -> bool:
        keys, mask = self.keys, self.mask
        i = fp & mask
        while True:
            key = keys[i]
            if key == 0:
                keys[i] = fp
                self.vals[i] = val
                self.sfx[i] = sfx
                self.count += 1
                if self.count > 0.7 * len(keys):
                    self._grow()
                return True
            if key == fp:
                return False
            i = (i + 1) & mask

    def _grow(self) -> None:
        old_keys, old_vals, old_sfx = self.keys, self.vals, self.sfx
        size = len(old_keys) * 2
        keys = array("q", bytes(8 * size))
        vals = array("Q", bytes(8 * size))
        sfx = array("I", bytes(4 * size))
        mask = size - 1
        for fp, val, suffix in zip(old_keys, old_vals, old_sfx, strict=True):
            if fp:
                i = fp & mask
                while keys[i]:
                    i = (i + 1) & mask
                keys[i] = fp
                vals[i] = val
                sfx[i] = suffix
        self.keys, self.vals, self.sfx, self.mask = keys, vals, sfx, mask

    def find(self, fp: int) -> int:
        """The slot of ``fp``, or -1."""
        keys, mask = self.keys, self.mask
        i = fp & mask
        while True:
            key = keys[i]
            if key == fp:
                return i
            if key == 0:
                return -1
            i = (i + 1) & mask


class StateSlugs(SlugAllocator):
    """A ``SlugAllocator`` that reserves a previous run's slugs without keeping the
    ``url → slug`` mapping that ``from_existing`` copies (see the module docstring)."""

    __slots__ = ()

    def reserve_many(self, slugs: list[str]) -> list[bool]:
        """Reserve ``slugs``; False for one already reserved or given."""
        return self._taken.add_many(slugs)


# -- the run's changes ------------------------------------------------------------------
@dataclass
class Changes:
    """New / removed / changed since the previous run (``run_record.changes``)."""

    run: int
    list_cap: int
    previous_run: int | None = None
    since: str | None = None  # when the previous run finished
    new: CappedList = field(init=False)
    removed: CappedList = field(init=False)
    changed: CappedList = field(init=False)
    known: int = 0
    refreshed: int = 0
    refresh_all: bool = False
    refresh_unknown: list[str] = field(default_factory=list)
    removals_judged: bool = True
    not_judged_because: str | None = None
    urls: int = 0  # entries in the state written
    written: str | None = None  # path of the state written
    started_afresh: str | None = None  # why the previous state was not used

    def __post_init__(self) -> None:
        self.new = CappedList(self.list_cap)
        self.removed = CappedList(self.list_cap)
        self.changed = CappedList(self.list_cap)

    @property
    def first_run(self) -> bool:
        return self.previous_run is None

    def as_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "previous_run": self.previous_run,
            "since": self.since,
            "new": self.new.as_dict(),
            "removed": self.removed.as_dict(),
            "changed": self.changed.as_dict(),
            "known": self.known,
            "refreshed": self.refreshed,
            "refresh_all": self.refresh_all,
            "refresh_unknown": self.refresh_unknown,
            "removals_judged": self.removals_judged,
            "removals_not_judged_because": self.not_judged_because,
            "state": self.written,
            "state_urls": self.urls,
            "started_afresh": self.started_afresh,
        }

    def lines(self) -> list[str]:
        """The summary lines (``Since the previous run (2026-11-28): 12 new, …``)."""
        if self.first_run:
            why = f" ({self.started_afresh})" if self.started_afresh else ""
            return [f"State: first run on this folder{why}; {self.urls:,} URLs recorded"]
        day = (self.since or "")[:10] or f"run {self.previous_run}"
        if self.removals_judged:
            text = (
                f"Since the previous run ({day}): {self.new.count:,} new, "
                f"{self.removed.count:,} removed, {self.changed.count:,} changed."
            )
        else:
            text = (
                f"Since the previous run ({day}): {self.new.count:,} new, "
                f"{self.changed.count:,} changed; removals not judged "
                f"({self.not_judged_because})."
            )
        lines = [text]
        if self.refresh_all:
            lines.append("Refreshed: all URLs (refresh_all=1)")
        elif self.refreshed:
            lines.append(f"Refreshed: {self.refreshed:,} URL(s)")
        if self.refresh_unknown:
            lines.append(f"refresh: no URL with slug {', '.join(self.refresh_unknown)} in state")
        return lines


# -- the run ------------------------------------------------------------------------------
class RunState:
    """The state of one run: the previous run (compact) plus this run's entries (spooled).

    ``load`` → ``observe(records)`` per batch → ``close(...)``. ``is_known(url)`` is the
    hook for page fetchers (the BFS link spider): True for a URL the previous runs listed
    and still listed, unless ``refresh``/``refresh_all`` asks for it again.
    """

    def __init__(
        self,
        out_dir: Path,
        input_origin: str | None = None,
        refresh: tuple[str, ...] = (),
        refresh_all: bool = False,
        list_cap: int = 1000,
    ) -> None:
        self.path = out_dir / STATE_NAME
        self.out_dir = out_dir
        self.input_origin = input_origin
        self.refresh = tuple(refresh)
        self.refresh_all = refresh_all
        self.list_cap = list_cap
        self.header: dict[str, Any] | None = None  # the previous state's header
        self.table: _Table | None = None
        self.slugs = StateSlugs()
        self.slug_exceptions: dict[int, str] = {}  # fp → slug neither base nor base-N
        self.new_seen = SeenSet(min_slots=1 << 12)  # this run's new URLs (no double entry)
        self.changes = Changes(run=1, list_cap=list_cap, refresh_all=refresh_all)
        self.previous_live = 0  # previous entries not removed
        self.seen_known = 0
        self._spool: IO[str] | None = None
        self._spool_path: Path | None = None
        self.spooled = 0
        self.spooled_counts: Counter[str] = Counter()  # spooled entries by status
        self.closed = False

    # -- loading --------------------------------------------------------------------------
    @classmethod
    def load(cls, out_dir: Path, **kwargs: Any) -> RunState:
        """The run's state, with the previous one read from ``out_dir/state.json`` when
        it exists and reads back as written; otherwise moved aside (one log line)."""
        state = cls(out_dir, **kwargs)
        if state.path.exists():
            try:
                state._read_previous()
            except (StateError, OSError) as exc:
                state._forget_previous()
                try:
                    aside = move_aside(state.path)
                except OSError as move_exc:
                    logger.error("%s; could not move it aside (%s)", exc, move_exc)
                    raise
                logger.error(
                    "%s; kept it aside as %s; this run starts afresh (every URL new)",
                    exc,
                    aside.name,
                )
                state.changes.started_afresh = f"previous state unreadable, kept as {aside.name}"
        if state.table is None:  # nothing to refresh on a first run
            state.changes.refresh_unknown = list(state.refresh)
        return state

    def _forget_previous(self) -> None:
        self.header = None
        self.table = None
        self.slugs = StateSlugs()
        self.slug_exceptions = {}
        self.changes = Changes(run=1, list_cap=self.list_cap, refresh_all=self.refresh_all)
        self.previous_live = 0

    def _read_previous(self) -> None:
        count = read_count(self.path)
        footer: dict[str, Any] = {}
        chunks = iter_entry_chunks(self.path, footer)
        header = next(chunks)
        table = _Table(count)
        slugs = StateSlugs(capacity=count)
        exceptions = self.slug_exceptions
        refresh = set(self.refresh)
        found_refresh: set[str] = set()
        live = 0
        insert = table.insert
        for chunk in chunks:
            urls = [e[0] for e in chunk]
            if not all(slugs.reserve_many([e[1] for e in chunk])):
                raise StateError(f"{self.path}: a slug is given to more than one URL")
            bases = bases_many(normalized_paths(urls))
            for entry, base, twin in zip(chunk, bases, twin_keys(urls), strict=True):
                _url, slug, first, _last, lastmod, status = entry
                fp = hash(twin) or 1
                if status == "removed":
                    flags = _REMOVED
                else:
                    flags = 0
                    live += 1
                if refresh and slug in refresh:
                    flags |= _REFRESH
                    found_refresh.add(slug)
                if not 0 <= first <= _FIRST_MASK:
                    raise StateError(f"{self.path}: first_seen {first} out of range")
                val = (lastmod_hash(lastmod) << 32) | (first << _FLAGS) | flags
                sfx = 0 if slug == base else suffix_of(slug, base)
                if not insert(fp, val, sfx):
                    raise StateError(f"{self.path}: {entry[0]} is listed twice")
                if sfx == _ODD:
                    exceptions[fp] = slug
        header["count"] = footer["count"]
        header["runs"] = footer.get("runs", [])
        self.header = header
        self.table = table
        self.slugs = slugs
        self.previous_live = live
        history = header["runs"] or [{}]
        self.changes = Changes(
            run=header["run"] + 1,
            list_cap=self.list_cap,
            previous_run=header["run"],
            since=history[-1].get("finished_at") or header.get("updated_at"),
            refresh_all=self.refresh_all,
        )
        self.changes.refresh_unknown = [s for s in self.refresh if s not in found_refresh]

    @property
    def origin(self) -> str | None:
        """The site origin recorded by the previous run (None on a first run)."""
        return self.header["origin"] if self.header else None

    @property
    def nbytes(self) -> int:
        """Bytes held for the previous run (table + reserved slugs), not the exceptions."""
        return (self.table.nbytes if self.table else 0) + self.slugs.nbytes

    # -- the hook for page fetchers -------------------------------------------------------
    def is_known(self, url: str) -> bool:
        """True when ``url`` (normalized) was listed by the previous run and is not to be
        re-done (``refresh``, ``refresh_all``): a page fetcher may skip fetching it."""
        table = self.table
        if table is None or self.refresh_all:
            return False
        slot = table.find(hash(twin_key(url)) or 1)
        return slot >= 0 and not table.vals[slot] & (_REMOVED | _REFRESH)

    # -- during the run -------------------------------------------------------------------
    def observe(
        self,
        records: list[dict[str, Any]],
        run_started_at: str = "",
        unique: bool = False,
        worked: list[str] | None = None,
    ) -> None:
        """Mark each record ``change`` = new / known / changed, give known URLs their
        previous slug (new URLs one no previous URL holds), and spool this run's entries.

        ``unique``: the caller promises no URL comes twice in the run (the dedup stage's
        batches), so a first run keeps no set of its own. ``worked``: the records' entries
        as the sitemap worker wrote them for a first run (``feed_lines.worked_entries``)."""
        changes = self.changes
        run = changes.run
        table = self.table
        lines = []
        if table is None:  # first run: the slug stage's slugs stand
            if unique:
                need = records
            else:
                fresh = self.new_seen.add_many(twin_keys([rec["url"] for rec in records]))
                need = [rec for rec, is_new in zip(records, fresh, strict=True) if is_new]
            missing = [rec for rec in need if not rec.get("slug")]
            if missing:
                urls = [rec["url"] for rec in missing]
                for rec, slug in zip(
                    missing, self.slugs.slugs_many(urls, normalized_paths(urls)), strict=True
                ):
                    rec["slug"] = slug
            for rec in records:
                rec["change"] = "new"
            urls = [rec["url"] for rec in need]
            changes.new.extend(urls)
            if worked is not None and need is records and not missing:
                self.spooled_counts["new"] += len(worked)
                self._spool_lines(worked)
                return
            if _has_worker_entry(need):
                # The sitemap worker's entry stands where its base slug did; render the others.
                lines = [
                    f.state if f is not None and rec["slug"] is f.base_slug else ""
                    for rec, f in zip(need, holding(need, FROM_ENTRY), strict=True)
                ]
                todo = [i for i, line in enumerate(lines) if not line]
                rendered = entry_lines(
                    [urls[i] for i in todo],
                    [need[i]["slug"] for i in todo],
                    run,
                    run,
                    [need[i]["lastmod"] for i in todo],
                    "new",
                )
                for i, line in zip(todo, rendered, strict=True):
                    lines[i] = line
            else:  # it wrote none (SITEMAP_WORKER_LINES off): all at once, no look per record
                slugs = [rec["slug"] for rec in need]
                lastmods = [rec["lastmod"] for rec in need]
                lines = entry_lines(urls, slugs, run, run, lastmods, "new")
            self.spooled_counts["new"] += len(lines)
            self._spool_lines(lines)
            return
        keys, vals, sfxs, mask = table.keys, table.vals, table.sfx, table.mask
        spooled_counts = self.spooled_counts
        exceptions = self.slug_exceptions
        fresh_recs = []
        known_recs = []
        for rec, twin in zip(records, twin_keys([rec["url"] for rec in records]), strict=True):
            fp = hash(twin) or 1
            i = fp & mask
            while True:
                key = keys[i]
                if key == fp or key == 0:
                    break
                i = (i + 1) & mask
            if key == 0:
                fresh_recs.append(rec)
                continue
            val = vals[i]
            vals[i] = val | _SEEN
            known_recs.append((rec, fp, val, sfxs[i]))
        if known_recs:
            urls = [rec["url"] for rec, _, _, _ in known_recs]
            bases = bases_many(normalized_paths(urls))
            for (rec, fp, val, sfx), base in zip(known_recs, bases, strict=True):
                if sfx == 0:
                    slug = base
                elif sfx == _ODD:
                    slug = exceptions[fp]
                else:
                    slug = _with_suffix(base, sfx)
                rec["slug"] = slug
                if val & _SEEN:  # listed twice in this run: one entry
                    rec["change"] = "known"
                    continue
                lastmod = rec.get("lastmod")
                first = (val >> _FLAGS) & _FIRST_MASK
                if val & _REFRESH:
                    changes.refreshed += 1
                if val & _REMOVED:  # listed again after a removal: new to this run
                    status = "new"
                    changes.new.append(rec["url"])
                elif lastmod is not None and lastmod_hash(lastmod) != val >> 32:
                    status = "changed"
                    changes.changed.append({"url": rec["url"], "lastmod": lastmod})
                    self.seen_known += 1
                else:
                    status = "known"
                    changes.known += 1
                    self.seen_known += 1
                rec["change"] = status
                spooled_counts[status] += 1
                lines.append(_entry_line(rec["url"], slug, first, run, lastmod, status))
        if fresh_recs and not unique:
            fresh = self.new_seen.add_many(twin_keys([rec["url"] for rec in fresh_recs]))
            fresh_recs = [rec for rec, is_new in zip(fresh_recs, fresh, strict=True) if is_new]
        if fresh_recs:
            urls = [rec["url"] for rec in fresh_recs]
            for rec, slug in zip(
                fresh_recs, self.slugs.slugs_many(urls, normalized_paths(urls)), strict=True
            ):
                rec["slug"] = slug
                rec["change"] = "new"
                changes.new.append(rec["url"])
                spooled_counts["new"] += 1
                lines.append(_entry_line(rec["url"], slug, run, run, rec.get("lastmod"), "new"))
        if self.refresh_all:
            changes.refreshed += sum(1 for known in known_recs if not known[2] & _SEEN)
        self._spool_lines(lines)

    def _spool_lines(self, lines: list[str]) -> None:
        if not lines:
            return
        if self._spool is None:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix=f".{STATE_NAME}.", suffix=".spool", dir=self.out_dir)
            self._spool = os.fdopen(fd, "w", encoding="utf-8")
            self._spool_path = Path(name)
        self._spool.write("\n".join(lines))
        self._spool.write("\n")
        self.spooled += len(lines)

    # -- the end --------------------------------------------------------------------------
    def close(
        self,
        origin: str | None,
        started_at: str,
        finished_at: str,
        not_judged_because: str | None = None,
        upgrades: dict[int, dict[str, Any]] | None = None,
    ) -> Changes:
        """Write the new state (atomically) and return the run's changes.

        ``not_judged_because``: the run may not have seen every URL (it failed, ended
        early, a limit bound, a sitemap failed): URLs it did not see keep their previous
        status instead of becoming ``removed``. ``upgrades``: ``SeenSet.upgrades`` of the
        dedup stage (a URL listed after its record passed, as its slash twin or after an
        hreflang alternate): the entry takes the listed URL and ``lastmod``, as the feed does.
        """
        changes = self.changes
        if self.closed:
            return changes
        self.closed = True
        if not_judged_because:
            changes.removals_judged = False
            changes.not_judged_because = not_judged_because
        try:
            if origin is None:
                origin = self.origin
            if origin is None:  # nothing was discovered and there is no previous state
                changes.urls = 0
                return changes
            self._write(origin, started_at, finished_at, upgrades or {})
            changes.written = str(self.path)
        finally:
            self._drop_spool()
        return changes

    def _drop_spool(self) -> None:
        if self._spool is not None:
            self._spool.close()
            self._spool = None
        if self._spool_path is not None:
            self._spool_path.unlink(missing_ok=True)
            self._spool_path = None

    def _write(
        self, origin: str, started_at: str, finished_at: str, upgrades: dict[int, Any]
    ) -> None:
        """One pass: header, this run's entries (spool), the previous entries not seen
        this run, the closing line; to a temporary file renamed over the old state."""
        changes = self.changes
        judged = changes.removals_judged
        previous = self.header or {}
        input_origins = [*previous.get("input_origins", []), self.input_origin]
        input_origins = [o for o in dict.fromkeys(input_origins) if o][-20:]
        head = {
            "format": FORMAT,
            "origin": origin,
            "input_origins": input_origins,
            "run": changes.run,
            "updated_at": finished_at,
            "fields": list(FIELDS),
        }
        counts: Counter[str] = Counter(dict.fromkeys(STATUSES, 0))
        self.out_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{STATE_NAME}.", suffix=".tmp", dir=self.out_dir)
        tmp = Path(tmp_name)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(json.dumps(head, ensure_ascii=False)[:-1] + _ENTRIES_OPEN)
                pending = self._copy_spool(out, counts, upgrades)
                pending = self._copy_unseen(out, counts, pending, judged)
                if pending is not None:
                    out.write(pending + "\n")
                total = sum(counts.values())
                run_entry = {
                    "run": changes.run,
                    "started_at": started_at,
                    "finished_at": finished_at,
                    "removals_judged": judged,
                    "new": changes.new.count,
                    "removed": changes.removed.count,
                    "changed": changes.changed.count,
                    "urls": total,
                }
                footer = {
                    "count": total,
                    "counts": dict(counts),
                    "runs": [*previous.get("runs", []), run_entry][-HISTORY_CAP:],
                }
                out.write("], " + json.dumps(footer, ensure_ascii=False)[1:] + "\n")
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        changes.urls = total

    def _copy_spool(
        self, body: IO[str], counts: Counter[str], upgrades: dict[int, Any]
    ) -> str | None:
        pending: str | None = None
        if self._spool is None or self._spool_path is None:
            return None
        self._spool.close()
        self._spool = None
        if not upgrades:
            counts.update(self.spooled_counts)
            return _copy_lines(self._spool_path, body)
        statuses = STATUSES
        with open(self._spool_path, encoding="utf-8") as spool:
            for line in spool:
                line = line.rstrip("\n")
                if upgrades:
                    entry = json.loads(line)
                    upgrade = upgrades.get(hash(twin_key(entry[0])) or 1)
                    if upgrade is not None:
                        # a RecordPatch (trailing-slash twin) keeps the lastmod
                        entry[0], entry[4] = upgrade["url"], upgrade.get("lastmod", entry[4])
                        line = _entry_line(*entry)
                if pending is not None:
                    body.write(pending + ",\n")
                pending = line
                # the status is the last field: '..., "known"]'
                status = line[line.rfind('"', 0, -2) + 1 : -2]
                if status in statuses:
                    counts[status] += 1
        return pending

    def _copy_unseen(
        self, body: IO[str], counts: Counter[str], pending: str | None, judged: bool
    ) -> str | None:
        """Previous entries not seen this run: ``removed`` (when removals are judged) or
        as they were."""
        table = self.table
        if table is None:
            return pending
        entries = iter_entries(self.path)
        header = next(entries)
        if self.header is None or header.get("run") != self.header.get("run"):
            raise StateError(f"{self.path} changed while this run was going on")
        find, vals = table.find, table.vals
        removed = self.changes.removed
        for url, slug, first, last, lastmod, status in entries:  # type: ignore[misc]
            slot = find(hash(twin_key(url)) or 1)
            if slot >= 0 and vals[slot] & _SEEN:
                continue
            if judged and status != "removed":
                removed.append(url)
                status = "removed"
            line = _entry_line(url, slug, first, last, lastmod, status)
            if pending is not None:
                body.write(pending + ",\n")
            pending = line
            counts[status] += 1
        return pending

    def abandon(self) -> None:
        """Drop this run's spool without writing (the previous state stays as it was)."""
        self.closed = True
        self._drop_spool()


def write_changes(out_dir: Path, changes: Changes) -> Path:
    """``changes.json``: this run's new / removed / changed, for cron jobs and scripts."""
    path = out_dir / CHANGES_NAME
    write_json_atomic(path, changes.as_dict())
    return path
