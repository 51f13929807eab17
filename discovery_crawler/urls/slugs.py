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
   ``/Blog/Post One`` → ``blog__post-one``, ``/caf%C3%A9`` → ``caf``. A segment whose
   letters are all non-ASCII would leave only dashes: when another segment keeps letters,
   it is ``_`` + the first 6 hex digits of the SHA-1 of the decoded segment instead
   (``/tag/前処理/`` → ``tag___`` + 6 digits), so a site written in Korean or Arabic keeps
   one slug a page, the same in every run.
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
second ``/a?…`` becomes ``a-2-2``. Within one batch, bare bases are claimed first, then
the suffixes in order (so a real ``/a-2`` in the same batch as two ``/a?…`` keeps ``a-2``
and the second query variant gets ``a-3``); batches are deterministic, so re-runs agree.
Each URL is asked for once — the dedup stage admits a URL once per run; a URL asked twice is
a new claimant and gets the next suffix. A previous run's ``url → slug`` assignments
(``from_existing``) are kept as they are, so they never move.

Memory, for 10M-URL sites: no URL or slug string is kept — one 64-bit fingerprint (Python
``hash()``, in-process only) per slug given, in the open-addressing table of
``urls.seen.SeenSet``: 8 bytes a slot, 35–70% full, to 85% once reserved. Each base that
collided keeps its next counter; ``from_existing`` keeps its mapping. Two different slugs
with the same 64-bit fingerprint would make the second one take a suffix it did not need —
odds ~n²/2⁶⁵. Results do not depend on the hash seed (a test checks two).

Speed: ``slugs_many`` settles plain lowercase paths with ``bases_many``'s fast path and one
batch claim, several times cheaper than ``base_slug``'s general path. Timings: bench/README.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import unquote

from discovery_crawler.compiled import extension
from discovery_crawler.private_names import sha1
from discovery_crawler.urls.seen import SeenSet

# bases_many's fast path in C (``_plain_bases.c``); where it was not built, in Python
_plain_bases = extension("discovery_crawler.urls._plain_bases")

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


_MIN_SLOTS = 1 << 16  # 512 KB; grows with the site


def path_of(url: str) -> str:
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
    return sha1(data, usedforsecurity=False).hexdigest()[:digits]


def base_slug(url: str) -> str:
    """The slug of ``url`` before de-duplication (a function of its path alone)."""
    return _base_of_path(path_of(url))


def _named(segments: list[str]) -> list[str]:
    """Segments whose letters are all non-ASCII (``前処理``, ``이벤트-루프``) would leave
    nothing in the slug but dashes, so every page under ``/tag/`` would be ``tag__``: when
    another segment keeps letters, each such segment is named ``_`` + 6 hex digits of its
    SHA-1 instead (when none does, the whole path is hashed: step 4)."""
    empty = [not s.isascii() and not _OTHER.sub("", s).strip("-_") for s in segments]
    if not any(empty) or all(empty):
        return segments
    return ["_" + _hex(s, 6) if e else s for s, e in zip(segments, empty, strict=True)]


def _base_of_path(path: str) -> str:
    stripped = path.strip("/")
    if not stripped:
        return HOME
    if "%" in stripped:
        segments = [unquote(segment, errors="replace") for segment in stripped.split("/")]
        stripped = "__".join(_named(segments))
    elif stripped.isascii():
        stripped = stripped.replace("/", "__")
    else:
        stripped = "__".join(_named(stripped.split("/")))
    if stripped.isascii():
        slug = stripped.lower()
        if _OTHER_LOWER.search(slug) is not None:  # a search is cheaper than a sub
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


# The fast path of ``bases_many``: a stripped path whose segments are lowercase ASCII
# letters and digits joined by single ``-``, ``.`` or ``_``, and that names no Windows
# device, already is its base slug once ``.`` → ``-`` and ``/`` → ``__`` (nothing to
# collapse, trim, decode or mark): one C-speed ``fullmatch`` decides it, far cheaper than the
# general rules (the same test over a whole batch joined by newlines is slower: Python's ``re``
# is slow at multi-line alternations). A differential test checks both ways agree on generated
# paths.
_DEVICE_AHEAD = r"(?!(?:con|prn|aux|nul|com[0-9]|lpt[0-9])(?:/|$))"
_SEGMENT = _DEVICE_AHEAD + r"[a-z0-9]+(?:[-._][a-z0-9]+)*"
_PLAIN_PATH = re.compile(f"(?:{_SEGMENT}(?:/{_SEGMENT})*)?")


def normalized_paths(urls: list[str]) -> list[str]:
    """The paths of a batch of URLs as the normalize stage writes them (``http(s)://host/…``,
    no fragment; the host holds no ``/`` or ``?``), without query; in C where
    ``_plain_bases`` was built (a find and a slice of each URL, without a bytecode loop)."""
    if _plain_bases is not None and urls.__class__ is list:
        return _plain_bases.normalized_paths(urls)
    return [url[url.find("/", 8) :].partition("?")[0] for url in urls]


def bases_many(paths: list[str]) -> list[str]:
    """``base_slug`` of each path (``/…``, no query or fragment). In C where
    ``_plain_bases`` was built: every ASCII path whose base needs no hash or device suffix,
    %-escapes included; else plain paths by ``_PLAIN_PATH``. The general rules for the
    others."""
    if _plain_bases is not None and paths.__class__ is list:
        return _plain_bases.plain_bases(paths, BASE_MAX_LENGTH, HOME, _base_of_path)
    plain = _PLAIN_PATH.fullmatch
    out = []
    append = out.append
    for path in paths:
        stripped = path.strip("/")
        if len(stripped) <= BASE_MAX_LENGTH and plain(stripped) is not None:
            append(stripped.replace(".", "-").replace("/", "__") or HOME)
        else:
            append(_base_of_path(path))
    return out


def _with_suffix(base: str, n: int) -> str:
    """``base-n``, cut so that it fits in ``MAX_LENGTH``."""
    suffix = f"-{n}"
    if len(base) + len(suffix) > MAX_LENGTH:
        base = base[: MAX_LENGTH - len(suffix)].rstrip("-")
    return base + suffix


class SlugAllocator:
    """Gives every URL a slug unique within the allocator, in discovery order."""

    __slots__ = ("_known", "_next", "_taken")

    def __init__(self, capacity: int = 0) -> None:
        self._taken = SeenSet(capacity, min_slots=_MIN_SLOTS)  # fingerprints of slugs given
        self._next: dict[str, int] = {}  # base → next suffix to try, for bases that collided
        self._known: dict[str, str] = {}  # url → slug kept from a previous run

    @classmethod
    def from_existing(cls, mapping: Mapping[str, str]) -> SlugAllocator:
        """An allocator that keeps a previous run's ``url → slug`` assignments; raises
        ``ValueError`` if two URLs share a slug."""
        allocator = cls(capacity=len(mapping))
        for slug in mapping.values():
            if not allocator._taken.add(slug):
                raise ValueError(f"slug {slug!r} is assigned to more than one URL")
        allocator._known = dict(mapping)
        return allocator

    def claim_many(self, slugs: list[str]) -> list[bool]:
        """Take ``slugs`` as they are (a previous run's, ``output/state_previous.py``), so
        no URL is given one of them; False for a slug already taken."""
        return self._taken.add_many(slugs)

    def __len__(self) -> int:
        """Number of slugs assigned."""
        return len(self._taken)

    @property
    def nbytes(self) -> int:
        """Bytes held by the fingerprint table (not the counters or a kept mapping)."""
        return self._taken.nbytes

    def reserve(self, count: int) -> None:
        """Size the table for ``count`` slugs now (``SeenSet.reserve``)."""
        self._taken.reserve(count)

    @property
    def resizes(self) -> int:
        return self._taken.resizes

    def slug(self, url: str) -> str:
        """The slug of one URL (see ``slugs_many``)."""
        return self.slugs_many([url], [path_of(url)])[0]

    def slugs_many(
        self, urls: list[str], paths: list[str] | None = None, bases: list[str] | None = None
    ) -> list[str]:
        """The slugs of a batch of URLs, given each URL's path (``path_of``) or its base
        slug (``bases_many``): the base if free, else with the first free ``-N`` (N ≥ 2)."""
        if bases is None:
            assert paths is not None, "slugs_many needs paths or bases"
            bases = bases_many(paths)
        known = self._known
        if known:
            kept = [known.get(url) for url in urls]
            if any(kept):
                fresh = [i for i, slug in enumerate(kept) if slug is None]
                for i, slug in zip(fresh, self._allocate([bases[i] for i in fresh]), strict=True):
                    kept[i] = slug
                return kept  # type: ignore[return-value]
        return self._allocate(bases)

    def _allocate(self, bases: list[str]) -> list[str]:
        new = self._taken.add_many(bases)
        if all(new):
            return bases
        return [base if free else self._suffix(base) for base, free in zip(bases, new, strict=True)]

    def _suffix(self, base: str) -> str:
        """The first free ``base-N``."""
        n = self._next.get(base, 2)
        add = self._taken.add
        while True:
            candidate = _with_suffix(base, n)
            n += 1
            if add(candidate):
                self._next[base] = n
                return candidate
