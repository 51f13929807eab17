"""The sitemap sections of ``state.json`` (state format 2): per sitemap the walk read whole,
its validators (``ETag``, ``Last-Modified``), the ``<lastmod>`` its index gave it, the
child sitemaps it lists (with theirs) and its entries as written — so a re-run can ask it
conditionally and, on a ``304`` or an unchanged index ``<lastmod>``, carry its URLs over
without downloading nor parsing it again (``crawling/walk.py``).

A file beside ``state.json``, ``state.sitemaps.<run>.jsonl``, that the state's header names
(``"sitemaps"``): one JSON value a line, so a section is read by a seek and one
``json.loads`` a part, never the whole file::

    [3, ["https://e.com/a", ...], ["2026-11-01", ...], ["daily", ...], ["0.8", ...], {"7": [...]}]
    ...                                       (parts: section id, then its entries in columns)
    {"sitemap": "https://e.com/s1.xml", "etag": "\\"ab\\"", "last_modified": "...", ...}
    ...                                       (one meta line per section, after every part)
    {"format": "discovery-crawler/sitemaps/1", "run": 3, "meta_at": 123456, "sections": 2}

The last line says where the meta lines start: loading reads it and the meta lines only.
Parts of sections read at once interleave (documents are parsed a few at a time), so each
meta line lists its parts' byte ranges. The run that writes it spools the parts as it goes
(a carried-over section is copied from the previous file), then adds the meta lines and
the last line at the end, and renames it into place *before* ``state.json`` is replaced:
a run killed in between leaves the previous state naming the previous file, which is
removed only after. A missing or unreadable file costs a full walk, never a wrong answer.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from discovery_crawler.output.crawl_log import give_usual_mode
from discovery_crawler.output.state_format import STATE_NAME, hold

if TYPE_CHECKING:
    from collections.abc import Collection, Iterator

SECTIONS_FORMAT = "discovery-crawler/sitemaps/1"
SECTIONS_PREFIX = "state.sitemaps."
SECTIONS_SUFFIX = ".jsonl"
_TAIL_MAX = 1 << 16  # the last line is short


class SectionsError(Exception):
    """The sections file is not one this project wrote (missing, truncated, edited)."""


def sections_name(run: int) -> str:
    return f"{SECTIONS_PREFIX}{run}{SECTIONS_SUFFIX}"


@dataclass
class Section:
    """One sitemap as the last run that read it whole found it."""

    sitemap: str
    etag: str | None = None
    last_modified: str | None = None
    index_lastmod: str | None = None  # what its parent index said of it
    urls: int = 0  # entries kept (every part's length summed)
    children: list[list[Any]] = field(default_factory=list)  # [[loc, lastmod or None], ...]
    parts: list[list[int]] = field(default_factory=list)  # [[offset, length], ...]
    carried: int = 0  # runs in a row it was carried over without a read (for the record)
    format: str | None = None  # as the parser named it (urlset, sitemapindex, ...)
    document: str | None = None  # the URL it was read from, when a redirect moved it

    @property
    def conditional(self) -> bool:
        """Whether a request for it can be conditional (it had a validator)."""
        return bool(self.etag or self.last_modified)

    def meta(self) -> dict[str, Any]:
        return {
            "sitemap": self.sitemap,
            "etag": self.etag,
            "last_modified": self.last_modified,
            "index_lastmod": self.index_lastmod,
            "urls": self.urls,
            "children": self.children,
            "parts": self.parts,
            "carried": self.carried,
            "format": self.format,
            "document": self.document,
        }


def _section(meta: Any, path: Path) -> Section:
    if not isinstance(meta, dict) or not isinstance(meta.get("sitemap"), str):
        raise SectionsError(f"{path}: a meta line without a sitemap")
    parts = meta.get("parts")
    children = meta.get("children")
    if not isinstance(parts, list) or not all(
        isinstance(p, list) and len(p) == 2 and all(isinstance(n, int) for n in p) for p in parts
    ):
        raise SectionsError(f"{path}: {meta['sitemap']}: parts are not byte ranges")
    if not isinstance(children, list):
        raise SectionsError(f"{path}: {meta['sitemap']}: children is not a list")
    for key in ("etag", "last_modified", "index_lastmod", "format", "document"):
        if meta.get(key) is not None and not isinstance(meta[key], str):
            raise SectionsError(f"{path}: {meta['sitemap']}: {key} is not a string")
    return Section(
        meta["sitemap"],
        meta.get("etag"),
        meta.get("last_modified"),
        meta.get("index_lastmod"),
        int(meta.get("urls") or 0),
        children,
        parts,
        int(meta.get("carried") or 0),
        meta.get("format"),
        meta.get("document"),
    )


class SectionsReader:
    """The previous run's sections: sitemap URL → ``Section``; ``entries(section)`` reads
    its entries back, a part at a time."""

    def __init__(self, path: Path, sections: dict[str, Section], size: int) -> None:
        self.path = path
        self.sections = sections
        self.size = size

    @classmethod
    def load(cls, path: Path, run: int) -> SectionsReader:
        """The file at ``path``, written by run ``run``; ``SectionsError`` if it is not."""
        try:
            with open(path, "rb") as fh:
                size = fh.seek(0, os.SEEK_END)
                fh.seek(max(0, size - _TAIL_MAX))
                tail = fh.read()
                if not tail.endswith(b"\n"):
                    raise SectionsError(f"{path} ends early (truncated)")
                last = json.loads(tail[tail.rfind(b"\n", 0, -1) + 1 :])
                if not isinstance(last, dict) or last.get("format") != SECTIONS_FORMAT:
                    raise SectionsError(f"{path} is not a sitemap sections file")
                if last.get("run") != run:
                    raise SectionsError(f"{path} was written by run {last.get('run')}, not {run}")
                meta_at = last.get("meta_at")
                if not isinstance(meta_at, int) or not 0 <= meta_at <= size:
                    raise SectionsError(f"{path}: no valid meta_at")
                fh.seek(meta_at)
                sections: dict[str, Section] = {}
                for line in fh:
                    value = json.loads(line)
                    if "meta_at" in value:
                        break
                    section = _section(value, path)
                    for offset, length in section.parts:
                        if offset < 0 or offset + length > meta_at:
                            raise SectionsError(f"{path}: {section.sitemap}: a part out of range")
                    sections[section.sitemap] = section
                if len(sections) != last.get("sections"):
                    raise SectionsError(
                        f"{path}: {len(sections)} sections, its last line says "
                        f"{last.get('sections')!r}"
                    )
        except (UnicodeDecodeError, ValueError, TypeError, AttributeError) as exc:
            raise SectionsError(f"{path} is not a valid sections file ({exc})") from None
        return cls(path, sections, size)

    def get(self, sitemap: str) -> Section | None:
        return self.sections.get(sitemap)

    def iter_parts(self, section: Section) -> Iterator[bytes]:
        """The section's part lines as stored (copied as they are into the next file)."""
        with open(self.path, "rb") as fh:
            for offset, length in section.parts:
                fh.seek(offset)
                line = fh.read(length)
                if len(line) != length or not line.endswith(b"\n"):
                    raise SectionsError(f"{self.path}: a part of {section.sitemap} is cut short")
                yield line


def part_entries(line: bytes) -> list[tuple[Any, ...]]:
    """A part line's entries, as the parser yields them: ``(loc, lastmod, changefreq,
    priority, alternates)`` with '' for an absent value."""
    _sid, locs, lastmods, changefreqs, priorities, alternates = json.loads(line)
    n = len(locs)
    if alternates:
        alts: list[Any] = [None] * n
        for i, pairs in alternates.items():
            alts[int(i)] = tuple((h, href) for h, href in pairs)
    else:
        alts = [None] * n
    return list(zip(locs, lastmods, changefreqs, priorities, alts, strict=True))


# A worked batch joins a column's values by NUL, a character no XML value holds
# (``sitemaps/facts.WorkedBatch``); JSON escapes it as below.
_NUL = "\x00"
_NUL_JSON = "\\u0000"
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def json_column(column: str | list[str], n: int) -> str:
    """A column of ``n`` values as a JSON array, as ``json.dumps`` writes the list. A
    NUL-joined column is escaped whole and its escaped NULs turned into ``","``: one pass
    in C instead of one a value (the walk's main thread spent ~1 µs a URL on the four
    columns). A backslash could end just before a NUL's escape, so such a column is split
    and escaped a value at a time."""
    if column.__class__ is str:
        if not n:
            return "[]"
        if "\\" not in column:
            return "[" + _dumps(column).replace(_NUL_JSON, '","') + "]"
        column = column.split(_NUL)  # type: ignore[union-attr]
    return _dumps(column)


def part_line(
    sid: int,
    locs: str | list[str],
    lastmods: str | list[str],
    changefreqs: str | list[str],
    priorities: str | list[str],
    alternates: dict[int, Any],
    n: int | None = None,
) -> bytes:
    """A part's line: ``[sid, locs, lastmods, changefreqs, priorities, alternates]``; a
    column is a list or its ``n`` values joined by NUL (a worked batch's)."""
    if n is None:
        n = len(locs)
    columns = ",".join([json_column(c, n) for c in (locs, lastmods, changefreqs, priorities)])
    return f"[{sid},{columns},{_dumps(alternates)}]\n".encode()


class SectionsWriter:
    """This run's sections, spooled as the walk reads; ``finish`` makes the file."""

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir
        self._fh: IO[bytes] | None = None
        self._path: Path | None = None
        self._open: dict[str, tuple[int, Section]] = {}  # sitemap → (id, section) being read
        self.done: dict[str, Section] = {}
        self._next_id = 0
        self.size = 0

    # -- a section being read ---------------------------------------------------------------
    def begin(self, sitemap: str, index_lastmod: str | None) -> None:
        self._next_id += 1
        self._open[sitemap] = (self._next_id, Section(sitemap, index_lastmod=index_lastmod))

    def reading(self, sitemap: str) -> bool:
        return sitemap in self._open

    def add(
        self,
        sitemap: str,
        locs: str | list[str],
        lastmods: str | list[str],
        changefreqs: str | list[str],
        priorities: str | list[str],
        alternates: dict[int, Any],
        n: int | None = None,
    ) -> None:
        """A batch's entries in columns: lists, or (``n`` given) a worked batch's columns,
        lists or values joined by NUL."""
        held = self._open.get(sitemap)
        if held is None:
            return
        sid, section = held
        if n is None:
            n = len(locs)
        line = part_line(sid, locs, lastmods, changefreqs, priorities, alternates, n)
        self._write(section, line)
        section.urls += n

    def end(
        self,
        sitemap: str,
        kept: bool,
        etag: str | None = None,
        last_modified: str | None = None,
        children: list[list[Any]] | None = None,
        format: str | None = None,
        document: str | None = None,
    ) -> None:
        """The document's read is over: ``kept`` when it was read whole (its parts stand
        for it next time); else its parts are left unnamed in the file."""
        held = self._open.pop(sitemap, None)
        if held is None or not kept:
            return
        section = held[1]
        section.etag, section.last_modified = etag, last_modified
        section.children = children or []
        section.format = format
        section.document = document if document != sitemap else None
        self.done[sitemap] = section

    def abandon_open(self) -> None:
        self._open.clear()

    # -- a section carried over -------------------------------------------------------------
    def carry_begin(self, previous: Section, index_lastmod: str | None) -> Section:
        """A section not read again, its validators kept (``index_lastmod``: what the
        index says now); its parts follow by ``carry_part``, copied as they are."""
        section = Section(
            previous.sitemap,
            previous.etag,
            previous.last_modified,
            index_lastmod if index_lastmod is not None else previous.index_lastmod,
            previous.urls,
            previous.children,
            carried=previous.carried + 1,
            format=previous.format,
            document=previous.document,
        )
        self.done[section.sitemap] = section
        return section

    def carry_abandon(self, section: Section) -> None:
        """A carried section whose parts could not be read back: not named in this run's
        file (its parts copied so far stay unnamed), so the next run reads it in full."""
        if self.done.get(section.sitemap) is section:
            del self.done[section.sitemap]

    def carry_part(self, section: Section, line: bytes) -> None:
        self._write(section, line)

    def _write(self, section: Section, line: bytes) -> None:
        if self._fh is None:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(
                prefix=f".{STATE_NAME}.sitemaps-", suffix=".spool", dir=self.out_dir
            )
            give_usual_mode(fd)  # renamed into place as state.sitemaps.<run>.jsonl
            hold(fd)
            self._fh = os.fdopen(fd, "wb")
            self._path = Path(name)
        self._fh.write(line)
        section.parts.append([self.size, len(line)])
        self.size += len(line)

    # -- the end ------------------------------------------------------------------------------
    def finish(self, run: int) -> str | None:
        """The file ``state.sitemaps.<run>.jsonl``, in place; its name (None: no section)."""
        self._open.clear()
        if not self.done:
            self.drop()
            return None
        if self._fh is None:  # sections without parts (indexes only)
            self._write(Section(""), b"")
        assert self._fh is not None and self._path is not None
        fh = self._fh
        meta_at = self.size
        for section in self.done.values():
            fh.write(json.dumps(section.meta(), ensure_ascii=False).encode("utf-8") + b"\n")
        last = {"format": SECTIONS_FORMAT, "run": run, "meta_at": meta_at}
        last["sections"] = len(self.done)
        fh.write(json.dumps(last).encode("utf-8") + b"\n")
        fh.flush()
        os.fsync(fh.fileno())
        fh.close()
        self._fh = None
        name = sections_name(run)
        os.replace(self._path, self.out_dir / name)
        self._path = None
        return name

    def drop(self) -> None:
        if self._fh is not None:
            with contextlib.suppress(OSError):
                self._fh.close()
            self._fh = None
        if self._path is not None:
            self._path.unlink(missing_ok=True)
            self._path = None

    # -- resuming (a pickled RunState) ------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if self._fh is not None:
            self._fh.flush()
        state["_fh"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self._path is not None and self._path.exists():
            self._fh = open(self._path, "ab")  # noqa: SIM115
            hold(self._fh.fileno())
            self.size = self._fh.tell()


def remove_other_sections(out_dir: Path, keep: Collection[str | None]) -> list[Path]:
    """Remove every ``state.sitemaps.*.jsonl`` in ``out_dir`` whose name is not in ``keep``."""
    removed = []
    for path in out_dir.glob(f"{SECTIONS_PREFIX}*{SECTIONS_SUFFIX}"):
        if path.name not in keep:
            with contextlib.suppress(OSError):
                path.unlink()
                removed.append(path)
    return removed
