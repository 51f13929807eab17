"""Slugs: the filesystem name of each discovered URL (SPEC §10).

A slug keys ``state.json`` and names ``current/pages/<slug>.json`` and
``prototypes/<slug>-proposed.html``, so it must be safe as a file name on Linux, macOS and
Windows, stable across runs and machines, and unique within a site. The URL itself is always
kept next to it; the slug is only a name.

``base_slug(url)`` — a pure function of the URL's *path* (host, query and fragment ignored):
1. Drop leading and trailing slashes; an empty path is ``home``.
2. Split on ``/`` and percent-decode each segment as UTF-8 (so ``%2F`` stays inside its
   segment, and ``/caf%C3%A9`` is ``café``); join the segments with ``__``.
3. Every character other than ``A-Z a-z 0-9 _`` — ``-`` included — in a run becomes one ``-``
   (non-ASCII letters are not transliterated); lowercase; trim ``-`` at both ends. So
   ``/Blog/Post One`` → ``blog__post-one``, ``/caf%C3%A9`` → ``caf``, ``/tag/前処理/`` →
   ``tag__``.
4. Empty now (``/%E2%9C%93/``, ``/---/``) → ``_`` + the first 10 hex digits of the SHA-1 of
   the path: stable across runs, processes and machines (Python's ``hash()`` is not).
5. Windows device names — con, prn, aux, nul, com0–com9, lpt0–lpt9 — are refused by Windows
   whatever the extension (``con.json`` is the console), so a slug, or a ``__``-separated
   part of it, equal to one gets ``-x`` appended: ``/CON`` → ``con-x``, ``/a/nul/b`` →
   ``a__nul-x__b``. (A suffix holding no ``_`` keeps the ``__`` boundaries where they were;
   ``-_`` would not: ``con-___b`` splits into ``con-`` and ``_b``.) A dot becomes ``-`` in
   step 3, so ``/aux.html`` is ``aux-html``, not a device name.
6. Longer than ``BASE_MAX_LENGTH`` (110) → cut to 101 characters, then ``-`` + the first 8
   hex digits of the SHA-1 of the path: two long paths sharing a prefix keep distinct slugs,
   and the same path always gets the same one.

Every base slug is thus non-empty, made of ``[a-z0-9_-]``, without ``--`` or a leading or
trailing ``-`` (so no trailing dot or space either), and all lowercase, so a case-insensitive
file system (macOS, Windows) cannot merge two of them.

Queries: ignored. ``/search?q=a`` and ``/search?q=b`` share the base ``search``; the
allocator makes them ``search`` and ``search-2`` in discovery order. (A query-derived slug
would grow with every parameter and tracking value; SPEC §10 says "path".)

``SlugAllocator`` makes slugs unique: the first URL with a base gets it bare, later ones get
``-2``, ``-3``… in discovery order (``MAX_LENGTH`` = 120 leaves room for ``-N`` after a
110-character base). A suffix is never a slug another URL holds: ``/a-2`` discovered after the
second ``/a?…`` becomes ``a-2-2``. The same URL asked twice gets the same slug;
``from_existing`` reserves a previous run's slugs, as they are, so they never move.

Memory, for 10M-URL sites: no URL or slug string is kept for a URL that got its bare base (a
re-ask recomputes the base and checks the owner) — only two 64-bit fingerprints (Python
``hash()``, used in-process only) per slug given: the slug's and its owner URL's, in an
open-addressing table inside one ``array('q')``, 16 bytes a slot, 35–70% full. Measured:
33.5 MB for 1M URLs; 10M fit in 268 MB. URLs whose slug differs from their base (suffixed,
or kept by ``from_existing``) also cost a dict entry fingerprint → slug, ~190 bytes each
(measured on 200k URLs sharing one path); each base that collided keeps its next counter.
Two URLs with the same base and the same 64-bit fingerprint would share a slug — odds ~k/2⁶⁴
for k URLs with that base. Results do not depend on the hash seed (a test checks two).

Speed (same VM): ``base_slug`` ~1.8 µs for short URLs, ~3.8 µs for ~100-character real
paths; ``SlugAllocator.slug`` ~2.5–4.6 µs for a new URL, table growth included.
"""

from __future__ import annotations

import hashlib
import re
from array import array
from collections.abc import Mapping
from urllib.parse import unquote

MAX_LENGTH = 120  # no slug from SlugAllocator is longer
BASE_MAX_LENGTH = 110  # base slugs; leaves room for an allocator suffix "-N" (N < 10⁹)
_HASH_CUT = BASE_MAX_LENGTH - 9  # a cut slug keeps this much, then "-" + 8 hex digits
HOME = "home"
RESERVED_SUFFIX = "-x"
WINDOWS_RESERVED = frozenset(
    ["con", "prn", "aux", "nul"] + [f"{d}{i}" for d in ("com", "lpt") for i in range(10)]
)

_OTHER = re.compile(r"[^A-Za-z0-9_-]+")
_OTHER_LOWER = re.compile(r"[^a-z0-9_-]+")
_DASHES = re.compile(r"--+")


def _path_of(url: str) -> str:
    """The path of ``url`` (``scheme://host/…``, ``//host/…`` or a bare path), without its
    query or fragment."""
    start = url.find("//")
    if start >= 0 and (start == 0 or url[start - 1] == ":") and url.find("/", 0, start) < 0:
        start += 2
        end = url.find("/", start)
        if end < 0 or url.find("?", start, end) >= 0 or url.find("#", start, end) >= 0:
            return ""  # what follows the host is a query or a fragment, not a path
        url = url[end:]
    cut = url.find("?")
    if cut >= 0:
        url = url[:cut]
    cut = url.find("#")
    return url if cut < 0 else url[:cut]


def _hex(path: str, digits: int) -> str:
    """A stable hash of ``path``: the first ``digits`` hex digits of its SHA-1."""
    data = path.encode("utf-8", "surrogatepass")
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()[:digits]


def base_slug(url: str) -> str:
    """The slug of ``url`` before de-duplication (a function of its path alone)."""
    path = _path_of(url)
    stripped = path.strip("/")
    if not stripped:
        return HOME
    if "%" in stripped:
        stripped = "__".join(unquote(segment, errors="replace") for segment in stripped.split("/"))
    else:
        stripped = stripped.replace("/", "__")
    if stripped.isascii():
        slug = stripped.lower()
        if _OTHER_LOWER.search(slug) is not None:  # a search is ~3x cheaper than a sub
            slug = _OTHER_LOWER.sub("-", slug)
    else:  # replace before lowercasing: "K" (the Kelvin sign) must not become "k"
        slug = _OTHER.sub("-", stripped).lower()
    if "--" in slug:
        slug = _DASHES.sub("-", slug)
    slug = slug.strip("-")
    if not slug:
        return "_" + _hex(path, 10)
    parts = slug.split("__")
    if not WINDOWS_RESERVED.isdisjoint(parts):
        slug = "__".join(p + RESERVED_SUFFIX if p in WINDOWS_RESERVED else p for p in parts)
    if len(slug) > BASE_MAX_LENGTH:
        slug = slug[:_HASH_CUT].rstrip("-") + "-" + _hex(path, 8)
    return slug


def _with_suffix(base: str, n: int) -> str:
    """``base-n``, cut so that it fits in ``MAX_LENGTH``."""
    suffix = f"-{n}"
    if len(base) + len(suffix) > MAX_LENGTH:
        base = base[: MAX_LENGTH - len(suffix)].rstrip("-")
    return base + suffix


_EMPTY = 0
_MIN_SLOTS = 1 << 16  # 1 MB


class SlugAllocator:
    """Gives every URL a slug unique within the allocator, in discovery order."""

    __slots__ = ("_count", "_limit", "_mask", "_next", "_slots", "_suffixed")

    def __init__(self, capacity: int = 0) -> None:
        size = _MIN_SLOTS
        while size * 0.7 < capacity:
            size <<= 1
        # Slot i is (_slots[2i], _slots[2i+1]) = (fingerprint of a slug, of its owner URL).
        self._slots = array("q", bytes(16 * size))
        self._mask = size - 1
        self._limit = int(size * 0.7)
        self._count = 0
        self._next: dict[str, int] = {}  # base → next suffix to try, for bases that collided
        self._suffixed: dict[int, str] = {}  # URL fingerprint → slug, when slug ≠ base

    @classmethod
    def from_existing(cls, mapping: Mapping[str, str]) -> SlugAllocator:
        """An allocator that keeps a previous run's ``url → slug`` assignments; raises
        ``ValueError`` if two URLs share a slug."""
        allocator = cls(capacity=len(mapping))
        for url, slug in mapping.items():
            owner = hash(url) or 1
            if allocator._claim(slug, owner) != owner:
                raise ValueError(f"slug {slug!r} is assigned to more than one URL")
            if slug != base_slug(url):
                allocator._suffixed[owner] = slug
        return allocator

    def __len__(self) -> int:
        """Number of slugs assigned."""
        return self._count

    @property
    def nbytes(self) -> int:
        """Bytes held by the fingerprint table (not the dicts of suffixed URLs)."""
        return self._slots.itemsize * len(self._slots)

    def slug(self, url: str) -> str:
        """The slug of ``url``: its base slug if free, else the base with the first free
        ``-N`` (N from 2); the same URL always gets the same slug."""
        owner = hash(url) or 1
        suffixed = self._suffixed
        if suffixed:
            known = suffixed.get(owner)
            if known is not None:
                return known
        base = base_slug(url)
        if self._claim(base, owner) == owner:
            return base
        n = self._next.get(base, 2)
        while True:
            candidate = _with_suffix(base, n)
            n += 1
            if self._claim(candidate, owner) == owner:
                self._next[base] = n
                suffixed[owner] = candidate
                return candidate

    def _claim(self, slug: str, owner: int) -> int:
        """Give ``slug`` to ``owner`` unless it is taken; return the slug's owner."""
        key = hash(slug) or 1
        slots, mask = self._slots, self._mask
        i = key & mask
        while True:
            found = slots[2 * i]
            if found == key:
                return slots[2 * i + 1]
            if found == _EMPTY:
                slots[2 * i] = key
                slots[2 * i + 1] = owner
                self._count += 1
                if self._count > self._limit:
                    self._grow()
                return owner
            i = (i + 1) & mask

    def _grow(self) -> None:
        old = self._slots
        size = len(old)  # twice the slot count: each slot is two numbers
        slots = array("q", bytes(16 * size))
        mask = size - 1
        for j in range(0, len(old), 2):
            key = old[j]
            if key:
                i = key & mask
                while slots[2 * i]:
                    i = (i + 1) & mask
                slots[2 * i] = key
                slots[2 * i + 1] = old[j + 1]
        self._slots, self._mask, self._limit = slots, mask, int(size * 0.7)
