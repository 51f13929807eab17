"""What the scoring rules and the page-type checklist read from a URL's path (SPEC §8).

Both look at the same few facts — the non-empty segments, an IA-pillar keyword in the first
segment, a date-like archive, a version/test marker — so they are read once, here, by a
plain, readable function (``path_facts``). It is the reference: the batch fast path in
``scoring.Rater`` must agree with it on every path (a property test checks that).

A trailing directory-index file name (``index.html``, ``index.php``, ``default.aspx``…) is
not a segment: ``/blog/index.html`` is the page ``/blog/`` (static exports such as Simply
Static and many CMSs link them so), and ``/index.html`` is the home page.

Paths are matched lowercased, on whole segments (``/new/`` is a marker, ``/news/`` and
``/new-york/`` are not). A keyword matches a *token* of the first segment, tokens being
separated by ``-``, ``_`` or ``.``: ``/about``, ``/about-us``, ``/our_team`` match,
``/aboutface`` does not. Keywords may hold ``-`` (``chi-siamo``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

# SPEC §8: the IA-pillar keywords (English; extendable by SELECTION_PILLAR_KEYWORDS).
PILLAR_KEYWORDS: tuple[str, ...] = (
    "about",
    "pricing",
    "contact",
    "products",
    "services",
    "solutions",
    "features",
    "team",
    "careers",
    "blog",
    "docs",
    "support",
    "faq",
    "company",
    "customers",
)

# File names a web server answers a directory with: ``/x/index.html`` is the page ``/x/``.
INDEX_FILES = frozenset(
    f"{stem}.{ext}"
    for stem in ("index", "default")
    for ext in ("html", "htm", "shtml", "xhtml", "php", "asp", "aspx", "jsp", "cfm")
)

# Version/test markers, as whole segments (SPEC §8: /v2/, /new/, /old/, /beta/, a bare
# number /2/, /feed/). "alpha" and "test" are of the same nature.
MARKER_WORDS = frozenset({"new", "old", "beta", "alpha", "test", "feed"})
_VERSION = re.compile(r"v\d+(?:\.\d+)*")
_BARE_NUMBER = re.compile(r"\d{1,3}")  # a 4-digit year alone is not a marker (/reports/2023/)
_YEAR = re.compile(r"(?:19|20)\d\d")
_MONTH = re.compile(r"0?[1-9]|1[0-2]")
_DAY = re.compile(r"0?[1-9]|[12]\d|3[01]")
_ISO_DATE = re.compile(r"(?:19|20)\d\d-(?:0[1-9]|1[0-2])(?:-(?:0[1-9]|[12]\d|3[01]))?")


def keyword_matcher(keywords: Iterable[str]) -> re.Pattern[str]:
    """A regex finding a keyword as a token of a (lowercased) segment."""
    words = sorted({k.strip().lower().strip("/") for k in keywords if k.strip()}, key=len)
    words.reverse()  # longest first: "customers" before "customer"
    if not words:
        return re.compile(r"(?!)")
    alternation = "|".join(re.escape(w) for w in words)
    return re.compile(rf"(?:^|[-_.])({alternation})(?=[-_.]|$)")


DEFAULT_KEYWORDS = keyword_matcher(PILLAR_KEYWORDS)


def pillar_keywords(settings: Any) -> tuple[str, ...]:
    """The run's pillar keywords: SPEC §8's plus the ``SELECTION_PILLAR_KEYWORDS`` setting."""
    return PILLAR_KEYWORDS + tuple(settings.getlist("SELECTION_PILLAR_KEYWORDS"))


@dataclass(frozen=True, slots=True)
class PathFacts:
    """The facts of one path the rules need."""

    segments: tuple[str, ...]  # non-empty, lowercased
    keyword: str | None  # the IA-pillar keyword found in the first segment
    date_like: bool  # /2023/06/, /2023/06/23/, /2023-06-23/, /2023-06/
    marker: bool  # a version/test marker segment (date segments excluded)
    date_only: bool  # every segment is part of the date (an archive listing)

    @property
    def depth(self) -> int:
        return len(self.segments)


def _date_spans(segments: tuple[str, ...]) -> set[int]:
    """Indexes of the segments that form a date (year/month[/day] or an ISO date)."""
    used: set[int] = set()
    for i, seg in enumerate(segments):
        if _ISO_DATE.fullmatch(seg):
            used.add(i)
        elif (
            _YEAR.fullmatch(seg)
            and i + 1 < len(segments)
            and _MONTH.fullmatch(segments[i + 1])
            and len(segments[i + 1]) <= 2
        ):
            used.update((i, i + 1))
            if i + 2 < len(segments) and _DAY.fullmatch(segments[i + 2]):
                used.add(i + 2)
    return used


def is_marker(segment: str) -> bool:
    """A version/test marker segment: /v2/, /new/, /old/, /beta/, /feed/, /2/."""
    return (
        segment in MARKER_WORDS
        or _VERSION.fullmatch(segment) is not None
        or _BARE_NUMBER.fullmatch(segment) is not None
    )


def path_facts(path: str, keywords: re.Pattern[str] = DEFAULT_KEYWORDS) -> PathFacts:
    """The facts of ``path`` (``/a/b/``, no query), read plainly: the reference."""
    segments = tuple(s for s in path.lower().split("/") if s)
    if segments and segments[-1] in INDEX_FILES:
        segments = segments[:-1]
    keyword = None
    if segments:
        found = keywords.search(segments[0])
        keyword = found.group(1) if found else None
    dates = _date_spans(segments)
    marker = any(is_marker(seg) for i, seg in enumerate(segments) if i not in dates)
    return PathFacts(
        segments=segments,
        keyword=keyword,
        date_like=bool(dates),
        marker=marker,
        date_only=bool(dates) and len(dates) == len(segments),
    )


def url_path(url: str) -> str:
    """The path of a normalized ``http(s)://host/...`` URL (or of a bare path), no query."""
    if url.startswith("/"):
        return url.partition("?")[0]
    start = url.find("/", url.find("//") + 2) if "//" in url else -1
    if start < 0:
        return "/"
    return url[start:].partition("?")[0].partition("#")[0]
