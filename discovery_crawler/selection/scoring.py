"""Scoring (SPEC §8, pass 2): every URL's total is the sum of a small table of rules, and
the breakdown says which rules gave what, so a user can see why a page was kept or cut.

| rule | points |
|---|---|
| ``home`` | +10 |
| ``pillar_keyword`` — an IA-pillar keyword in the first segment | +5 |
| ``sitemap_priority`` — priority p in [0, 1] | +round(4·p) |
| ``shallow_path`` — 1 segment / 2 segments | +2 / +1 |
| ``extra_depth`` — each segment beyond 3 | −1 each |
| ``date_archive`` — /2023/06/, /2023-06-23/ | −3 |
| ``version_marker`` — /v2/, /new/, /old/, /beta/, /2/, /feed/ | −4 |
| ``auth_walled`` — flags hold requires_auth | −10 |
| ``checklist`` — a page type of the checklist (article, listing, form, data, subsection) | +8 |

So ``/about`` scores 7 (keyword 5 + shallow 2). Home and pillars are checklist types too,
but score through their own rules (``checklist.BONUS_TYPES``). Each rule counts once per
URL. A priority that is not a number in [0, 1] scores nothing.

``score_url`` / ``score_record`` are the reference: readable, one URL at a time, with the
breakdown. ``Rater.rate_many`` is what the pipeline runs on every batch: totals and types
only (breakdowns are rebuilt with the reference for the few URLs the crawl log lists), with
the facts of each path *prefix* (everything before the last segment) cached, because in a
sitemap thousands of URLs share a prefix (``/blog/``, ``/docs/guide/``). A last segment that
could change a fact (digits first, a marker, a listing or form word…) and fetched records
(title, links) take the reference path. A property test checks both agree.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from discovery_crawler.selection.checklist import (
    BONUS_TYPES,
    BUSY_CHANGEFREQ,
    CONTENT_SECTIONS,
    DATA_WORDS,
    FORM_WORDS,
    GENERIC,
    LISTING_WORDS,
    TAXONOMY_WORDS,
    UTILITY_WORDS,
    PageType,
    classify,
)
from discovery_crawler.selection.paths import (
    DEFAULT_KEYWORDS,
    MARKER_WORDS,
    PathFacts,
    keyword_matcher,
    path_facts,
    url_path,
)

# (rule, points, what it means) — the table above, as the crawl log lists it.
RULES: tuple[tuple[str, str, str], ...] = (
    ("home", "+10", "the root path"),
    ("pillar_keyword", "+5", "an IA-pillar keyword in the first segment"),
    ("sitemap_priority", "+round(4*p)", "sitemap priority p in [0, 1]"),
    ("shallow_path", "+2 / +1", "1 segment / 2 segments"),
    ("extra_depth", "-1 each", "each segment beyond 3"),
    ("date_archive", "-3", "date-like archive (/2023/06/, /2023-06-23/)"),
    ("version_marker", "-4", "version/test marker (/v2/, /new/, /old/, /beta/, /2/, /feed/)"),
    ("auth_walled", "-10", "flags hold requires_auth"),
    ("checklist", "+8", "page-type checklist hit (article, listing, form, data, subsection)"),
)
HOME, KEYWORD, DATE, MARKER, AUTH, CHECKLIST_HIT = 10, 5, -3, -4, -10, 8
CACHE_LIMIT = 50_000  # prefixes remembered; cleared when full (memory stays bounded)


def priority_points(priority: Any) -> int:
    """+round(4·p) for a sitemap priority p in [0, 1]; nothing for anything else."""
    if priority is None or priority.__class__ is bool:
        return 0
    if isinstance(priority, str):
        try:
            priority = float(priority)
        except ValueError:
            return 0
    if not isinstance(priority, (int, float)) or math.isnan(priority):
        return 0
    if not 0 <= priority <= 1:
        return 0
    return round(4 * priority)


def _auth(flags: Any) -> bool:
    return bool(flags) and "requires_auth" in flags


@dataclass(frozen=True, slots=True)
class Scored:
    """A URL's total, its breakdown ([rule, points], table order) and its page type."""

    total: int
    breakdown: tuple[tuple[str, int], ...]
    type: str
    slot: str | None

    def breakdown_list(self) -> list[list[Any]]:
        return [[rule, points] for rule, points in self.breakdown]


def breakdown(
    facts: PathFacts, priority: Any, flags: Any, page: PageType
) -> tuple[tuple[str, int], ...]:
    """The rules that gave points to a URL, in table order (zeros left out)."""
    parts: list[tuple[str, int]] = []
    n = facts.depth
    if n == 0:
        parts.append(("home", HOME))
    if facts.keyword is not None:
        parts.append(("pillar_keyword", KEYWORD))
    points = priority_points(priority)
    if points:
        parts.append(("sitemap_priority", points))
    if n in (1, 2):
        parts.append(("shallow_path", 3 - n))
    if n > 3:
        parts.append(("extra_depth", 3 - n))
    if facts.date_like:
        parts.append(("date_archive", DATE))
    if facts.marker:
        parts.append(("version_marker", MARKER))
    if _auth(flags):
        parts.append(("auth_walled", AUTH))
    if page.type in BONUS_TYPES:
        parts.append(("checklist", CHECKLIST_HIT))
    return tuple(parts)


def score_url(
    url: str,
    priority: Any = None,
    flags: Any = None,
    changefreq: str | None = None,
    title: str | None = None,
    links: int | None = None,
    keywords: re.Pattern[str] = DEFAULT_KEYWORDS,
) -> Scored:
    """Score one URL (or path) with its breakdown and page type: the reference."""
    facts = path_facts(url_path(url), keywords)
    if links is not None and links.__class__ is not int:
        links = None
    page = classify(facts, changefreq, title, links)
    parts = breakdown(facts, priority, flags, page)
    return Scored(sum(p for _, p in parts), parts, page.type, page.slot)


def score_record(rec: dict[str, Any], keywords: re.Pattern[str] = DEFAULT_KEYWORDS) -> Scored:
    """Score a feed record (url, priority, flags, changefreq, title, links)."""
    return score_url(
        rec["url"],
        rec.get("priority"),
        rec.get("flags"),
        rec.get("changefreq"),
        rec.get("title"),
        rec.get("links"),
        keywords,
    )


# -- the batch fast path -------------------------------------------------------------------

# A last segment that is plain words (letter first) and none of these tokens or whole
# segments cannot change a fact the prefix fixed; anything else takes the reference path.
_PLAIN_LAST = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*").fullmatch
_SPECIAL_TOKENS = FORM_WORDS | DATA_WORDS | UTILITY_WORDS | MARKER_WORDS | {"sign"}
_SPECIAL_LAST = LISTING_WORDS | MARKER_WORDS
_VERSIONISH = re.compile(r"v\d").match
_PRIORITY_POINTS = {p / 10: priority_points(p / 10) for p in range(11)}
_PRIORITY_POINTS.update({0.25: 1, 0.75: 3, 1: 4, 0: 0})

# What a prefix fixes: the segment count with the last one, the points of its facts, the
# type it forces (form, data, listing by taxonomy, marker) and whether anything below it is
# an article (content section or dated path); the keyword (for pillar slots).
_Prefix = tuple[int, int, str | None, bool]


class Rater:
    """Totals, page types and slots of a batch of records (the pipeline's hot path)."""

    def __init__(self, keywords: Iterable[str] | None = None):
        self.keywords = keyword_matcher(keywords) if keywords is not None else DEFAULT_KEYWORDS
        self._prefixes: dict[str, _Prefix] = {}
        self._kw_search = self.keywords.search

    def _prefix(self, prefix: str) -> _Prefix:
        facts = path_facts(prefix, self.keywords)
        segs = facts.segments
        n = len(segs) + 1
        points = KEYWORD if facts.keyword is not None else 0
        points += 1 if n == 2 else (3 - n if n > 3 else 0)
        forced = None
        if any(
            not FORM_WORDS.isdisjoint(_tok(s)) or "sign-up" in s or "sign_up" in s for s in segs
        ):
            forced = "form"
        elif any(not DATA_WORDS.isdisjoint(_tok(s)) for s in segs):
            forced = "data"
        elif segs[-1] in TAXONOMY_WORDS:
            forced = "listing"
        elif facts.marker:
            forced = "marker"
        if facts.date_like:
            points += DATE
        if facts.marker:
            points += MARKER
        article = segs[0] in CONTENT_SECTIONS or facts.date_like
        if len(self._prefixes) >= CACHE_LIMIT:
            self._prefixes.clear()
        info = self._prefixes[prefix] = (n, points, forced, article)
        return info

    def rate_many(
        self, records: list[dict[str, Any]]
    ) -> tuple[list[int], list[str], list[str | None]]:
        """``(totals, types, slots)`` of the records, in order."""
        totals: list[int] = []
        types: list[str] = []
        slots: list[str | None] = []
        prefixes = self._prefixes
        plain_last = _PLAIN_LAST
        special_tokens = _SPECIAL_TOKENS
        special_last = _SPECIAL_LAST
        versionish = _VERSIONISH
        pri_points = _PRIORITY_POINTS
        kw_search = self._kw_search
        busy = BUSY_CHANGEFREQ
        for rec in records:
            url = rec["url"]
            path = url[url.find("/", 8) :].partition("?")[0].lower()
            s = path.strip("/")
            i = s.rfind("/")
            last = s[i + 1 :]
            if (
                not s
                or plain_last(last) is None
                or last in special_last
                or versionish(last) is not None
                or not special_tokens.isdisjoint(last.split("-"))
                or rec.get("title") is not None
                or rec.get("links") is not None
            ):
                scored = score_record(rec, self.keywords)
                totals.append(scored.total)
                types.append(scored.type)
                slots.append(scored.slot)
                continue
            p = rec["priority"]
            if p is None:
                total = 0
            else:
                total = pri_points.get(p) if p.__class__ is float else None
                if total is None:
                    total = priority_points(p)
            flags = rec.get("flags")
            if flags and "requires_auth" in flags:
                total += AUTH
            words = last.count("-") + 1
            if i < 0:  # one segment
                total += 2
                found = kw_search(last)
                if found is not None:
                    total += KEYWORD
                cf = rec["changefreq"]
                if cf is not None and cf.lower() in busy:
                    kind = slot = "listing"
                    total += CHECKLIST_HIT
                elif found is not None:
                    kind, slot = "pillar", "pillar:" + found.group(1)
                elif words >= 3:
                    kind = slot = "article"
                    total += CHECKLIST_HIT
                else:
                    kind, slot = "pillar", "pillar:section"
            else:
                prefix = s[:i]
                info = prefixes.get(prefix)
                if info is None:
                    info = self._prefix(prefix)
                n, points, forced, article = info
                total += points
                if forced is not None and forced != "marker":
                    kind = slot = forced
                else:
                    cf = rec["changefreq"] if n == 2 else None
                    if cf is not None and cf.lower() in busy:
                        kind = "listing"
                    elif forced is not None:  # a marker
                        kind = GENERIC
                    elif words >= 3 or article:
                        kind = "article"
                    elif n == 2:
                        kind = "subsection"
                    else:
                        kind = GENERIC
                    slot = None if kind is GENERIC else kind
                if slot is not None:
                    total += CHECKLIST_HIT
            totals.append(total)
            types.append(kind)
            slots.append(slot)
        return totals, types, slots


def _tok(segment: str) -> list[str]:
    return re.split(r"[-_.]", segment)
