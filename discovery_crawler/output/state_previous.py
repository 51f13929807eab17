"""The previous run on a site, compact: what a re-run needs of ``state.json`` to say of each
URL whether it is new, known or changed, and to give a known URL its slug again.

Per URL, one slot of the project's seen-set (``urls.seen.SeenSet``: 64-bit fingerprints of
trailing-slash twin keys, probed in C) and, beside it, one packed 64-bit value — a 32-bit
hash of ``lastmod`` (to tell "changed"), the first-seen run, three flags (seen this run,
removed before, asked to refresh) — and the slug's allocator suffix (32 bits: 0 for the
URL's base slug, N for ``base-N``). Slugs themselves are not kept: a known URL's slug is
its base (``urls.slugs.bases_many``) plus that suffix; only a slug of neither form (older
rules, hand-made) is kept, in a dict. The slugs are claimed in a ``SlugAllocator``
(fingerprints only) so that no new URL takes one. The table is sized once from the count
on the file's last line and never grows, so the slots stay where the values are.

The fingerprint is Python's ``hash()``, salted per process: the table is rebuilt from the
URLs at each load. Two URLs sharing a fingerprint (odds ~n²/2⁶⁵) would be taken for one;
two ``lastmod`` values sharing a 32-bit hash would hide one change (2⁻³² per changed URL).
"""

from __future__ import annotations

import json
from array import array
from typing import TYPE_CHECKING, Any

from discovery_crawler.output.state_format import (
    StateError,
    iter_entry_chunks,
    read_count,
    read_header,
)
from discovery_crawler.urls.normalize import twin_key, twin_keys
from discovery_crawler.urls.seen import SeenSet
from discovery_crawler.urls.slugs import SlugAllocator, _with_suffix, bases_many, normalized_paths

if TYPE_CHECKING:
    from pathlib import Path

SEEN = 1  # flags in the packed value of a slot
REMOVED = 2
REFRESH = 4
FLAGS = 3  # bits
FIRST_MASK = (1 << (32 - FLAGS)) - 1
ODD = 0xFFFFFFFF  # a slug neither the URL's base nor base-N: kept in a dict


def lastmod_hash(lastmod: str | None) -> int:
    """32 bits that tell two ``lastmod`` values apart (0: none)."""
    if lastmod is None:
        return 0
    return (hash(lastmod) & 0xFFFFFFFF) or 1


def suffix_of(slug: str, base: str) -> int:
    """N when ``slug`` is ``base-N`` as the allocator makes it (cut to fit), else ``ODD``."""
    head, dash, digits = slug.rpartition("-")
    if dash and head and digits.isdigit() and digits[0] != "0" and len(digits) < 10:
        n = int(digits)
        if n >= 2 and _with_suffix(base, n) == slug:
            return n
    return ODD


class PreviousRun:
    """The previous run's URLs: slot → packed value and slug suffix (see the module)."""

    __slots__ = (
        "exceptions",
        "header",
        "keys",
        "live",
        "refresh_found",
        "sfx",
        "sighted",
        "slugs",
        "vals",
    )

    def __init__(self, capacity: int) -> None:
        self.keys = SeenSet(capacity, min_slots=1 << 10)
        size = self.keys.size  # the values sit beside its slots
        self.vals = array("Q", bytes(8 * size))
        self.sfx = array("I", bytes(4 * size))  # slug: 0 the base, N base-N, ODD the dict
        self.slugs = SlugAllocator(capacity=capacity)  # the slugs taken (fingerprints)
        self.exceptions: dict[int, str] = {}  # slot -> a slug neither base nor base-N
        self.header: dict[str, Any] = {}
        self.live = 0  # entries not removed
        self.refresh_found: set[str] = set()  # slugs of ``refresh`` found
        self.sighted = 0  # entries seen this run (``sight``): all of them, none is unseen

    @property
    def count(self) -> int:
        return len(self.keys)

    @property
    def nbytes(self) -> int:
        """Bytes held: the table and its values, the slugs taken (not the exceptions)."""
        return self.keys.nbytes + 12 * len(self.vals) + self.slugs.nbytes

    @classmethod
    def load(cls, path: Path, refresh: set[str]) -> PreviousRun:
        """The state file at ``path``, read as a stream and checked (``StateError``);
        ``refresh``: slugs asked for again (``-a refresh=``)."""
        count = read_count(path)
        footer: dict[str, Any] = {}
        chunks = iter_entry_chunks(path, footer)
        header = next(chunks)
        previous = cls(count)
        keys, vals, sfxs = previous.keys, previous.vals, previous.sfx
        exceptions = previous.exceptions
        found_refresh = previous.refresh_found
        live = 0
        for chunk in chunks:
            urls = [e[0] for e in chunk]
            if not all(previous.slugs.claim_many([e[1] for e in chunk])):
                raise StateError(f"{path}: a slug is given to more than one URL")
            if len(chunk) > keys.room:
                raise StateError(f"{path}: more entries than its last line counts")
            bases = bases_many(normalized_paths(urls))
            slots = keys.place_many(twin_keys(urls))
            # once per URL of the previous run: kept plain (lastmod_hash inlined, a base
            # slug's suffix left at the 0 the table starts with)
            for entry, base, slot in zip(chunk, bases, slots, strict=True):
                _url, slug, first, _last, lastmod, status = entry
                if status == "removed":
                    flags = REMOVED
                else:
                    flags = 0
                    live += 1
                if refresh and slug in refresh:
                    flags |= REFRESH
                    found_refresh.add(slug)
                if not 0 <= first <= FIRST_MASK:
                    raise StateError(f"{path}: first_seen {first} out of range")
                if slot < 0:
                    raise StateError(f"{path}: {entry[0]} is listed twice")
                if lastmod is not None:
                    flags |= ((hash(lastmod) & 0xFFFFFFFF) or 1) << 32
                vals[slot] = flags | (first << FLAGS)
                if slug != base:
                    sfx = suffix_of(slug, base)
                    sfxs[slot] = sfx
                    if sfx == ODD:
                        exceptions[slot] = slug
        header["count"] = footer["count"]
        header["runs"] = footer.get("runs", [])
        header["counts"] = footer.get("counts", {})
        if "unconfirmed_scope" in footer:  # state_scope.py: what the unconfirmed were found in
            header["unconfirmed_scope"] = footer["unconfirmed_scope"]
        previous.header = header
        previous.live = live
        return previous

    def is_known(self, url: str) -> bool:
        """Whether ``url`` (normalized) was listed and not removed nor asked for again."""
        slot = self.keys.slots_of([twin_key(url)])[0]
        return slot >= 0 and not self.vals[slot] & (REMOVED | REFRESH)

    def slug(self, slot: int, base: str) -> str:
        """The slug the URL in ``slot`` had, its base slug being ``base``."""
        sfx = self.sfx[slot]
        if sfx == 0:
            return base
        if sfx == ODD:
            return self.exceptions[slot]
        return _with_suffix(base, sfx)

    def sight(
        self, records: list[dict[str, Any]]
    ) -> tuple[list[dict[str, Any]], list[tuple[dict[str, Any], int, int]]]:
        """Mark the records' URLs seen this run: (those the previous run did not list,
        [(record, slot, packed value before this sighting)] for those it did)."""
        vals = self.vals
        fresh = []
        known = []
        slots = self.keys.slots_of(twin_keys([rec["url"] for rec in records]))
        for rec, slot in zip(records, slots, strict=True):
            if slot < 0:
                fresh.append(rec)
                continue
            val = vals[slot]
            if not val & SEEN:
                vals[slot] = val | SEEN
                self.sighted += 1
            known.append((rec, slot, val))
        return fresh, known

    def unseen(self, path: Path) -> Any:
        """The entries of the file at ``path`` (the one loaded) not seen this run, in file
        order; ``StateError`` if it is not the file loaded any more.

        The file was checked whole when it was loaded: a re-run that saw every entry (an
        unchanged site) does not read it again, and the others parse only the lines of the
        entries not seen — each line's URL is sliced out of it (a URL with an escape in its
        JSON is parsed), its slot looked up in C, and the line parsed only when unseen."""
        if read_header(path).get("run") != self.header.get("run"):
            raise StateError(f"{path} changed while this run was going on")
        if self.sighted >= self.count:
            return
        vals = self.vals
        slots_of = self.keys.slots_of
        loads = json.loads
        with open(path, "rb") as fh:
            fh.readline(1 << 20)  # the header
            lines: list[bytes] = []
            for raw in fh:
                if raw.startswith(_FOOTER):
                    break
                lines.append(raw)
                if len(lines) >= _SCAN_CHUNK:
                    yield from _unseen_lines(lines, slots_of, vals, loads, path)
                    lines = []
            if lines:
                yield from _unseen_lines(lines, slots_of, vals, loads, path)


_FOOTER = b"], "
_SCAN_CHUNK = 4096
_URL_END = b'", "'


def _entry_url(line: bytes) -> str | None:
    """The URL of an entry line as written (``["<url>", "<slug>", ...``), or None when its
    JSON has an escape (parse the line)."""
    end = line.find(_URL_END)
    if end < 2 or not line.startswith(b'["') or line[2:end].find(b"\\") >= 0:
        return None
    return line[2:end].decode("utf-8")


def _unseen_lines(lines: list[bytes], slots_of: Any, vals: Any, loads: Any, path: Path) -> Any:
    urls = [_entry_url(line) for line in lines]
    for i, url in enumerate(urls):
        if url is None:
            urls[i] = loads(lines[i].rstrip(b",\n"))[0]
    slots = slots_of(twin_keys(urls))
    for line, slot in zip(lines, slots, strict=True):
        if slot < 0 or not vals[slot] & SEEN:
            entry = loads(line.rstrip(b",\n"))
            if entry.__class__ is not list or len(entry) != 6:
                raise StateError(f"{path} changed while this run was going on")
            yield entry
