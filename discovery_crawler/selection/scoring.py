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
(title, links) take the reference path. A property test checks both agree. Where it was
built, the bulk path runs in C (``_rater.c``, one pass a batch); ``_rate_bulk`` is its
Python form.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import compress
from typing import Any

from discovery_crawler.compiled import extension
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
    _DAY,
    _ISO_DATE,
    _MONTH,
    _YEAR,
    DEFAULT_KEYWORDS,
    INDEX_FILES,
    MARKER_WORDS,
    PILLAR_KEYWORDS,
    PathFacts,
    is_marker,
    keyword_matcher,
    path_facts,
    url_path,
)

# the bulk path in C (``_rater.c``); where it was not built, in Python (``_rate_bulk``)
_rater = extension("discovery_crawler.selection._rater")

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
CACHE_LIMIT = 50_000  # steps, segments, outcomes remembered; cleared when full (bounded)
# Prefixes remembered; cleared when full. Fewer: a large sitemap's prefixes are mostly
# distinct, so a prefix is rarely met again except as its siblings' parent, met next; as
# many as CACHE_LIMIT held more of the worker's RSS for the same speed (bench/README.md).
PREFIX_CACHE_LIMIT = 5_000
# A segment of this many ASCII digits or more (an id: ``/questions/4181375/``) says the same
# as any other (no month, day, year, date nor bare-number marker has as many) unless a word
# list holds a number: its steps are taken as this one's, so a tree of a folder a URL does
# not work out, cache and soon forget a step per URL (``Rater._prefix``).
_ID_DIGITS = 5
_AN_ID = "10000"


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
# ... or of words joined by "-", "_" or ".", percent-encoded characters in them (a word's
# first character is what a date, a number or a version marker starts with: a letter or
# an escape's "%" is neither).
_SAFE_LAST = re.compile(r"[a-z%][a-z0-9%]*(?:[-_.][a-z0-9%]+)*").fullmatch
_SPLIT_TOKENS = re.compile(r"[-_.]").split
_SPLIT_SEP = re.compile(r"[-_.]").search
_SEPARATORS = str.maketrans("_.", "--")
_QUERIES = re.compile(r"\?[^\n]*").sub  # in URLs joined by "\n" (none holds one)
_SPECIAL_TOKENS = FORM_WORDS | DATA_WORDS | UTILITY_WORDS | {"sign"}
_SPECIAL_LAST = LISTING_WORDS | MARKER_WORDS
_VERSIONISH = re.compile(r"v\d").match
_PRIORITY_POINTS = {p / 10: priority_points(p / 10) for p in range(11)}
_PRIORITY_POINTS.update({0.25: 1, 0.75: 3, 1: 4, 0: 0})
_BULK_MIN = 16  # URLs: below this a batch is rated one URL at a time
# What ``_rater.rate_bulk`` tests words against (a last segment's words; the whole last
# segment; a lowercased changefreq) and the types it gives (``_bulk_outcome``'s).
_COMPILED_WORDS = (_SPECIAL_TOKENS, _SPECIAL_LAST | INDEX_FILES, BUSY_CHANGEFREQ)
_COMPILED_KINDS = (GENERIC, "form", "data", "listing", "article", "subsection")


def _priority_total(p: Any) -> int:
    """The points of a priority as ``Rater._rate_each`` counts them."""
    if p is None:
        return 0
    total = _PRIORITY_POINTS.get(p) if p.__class__ is float else None
    return total if total is not None else priority_points(p)


def _bulk_outcome(
    info: _Prefix | None, busy: bool, three_words: bool
) -> tuple[int, str, str | None]:
    """The prefix points with the checklist bonus, the type and the slot of a URL under a
    prefix of ``info`` whose last segment holds no form or data word: what the prefix, a
    busy changefreq and three words or more in the last segment decide (both ``Rater``
    paths use it); ``info`` None: one segment (rated apart)."""
    if info is None:
        return 0, GENERIC, None
    n_segs, points, forced, article, state, _ = info
    if state[5]:
        kind = slot = "form"
    elif state[6]:
        kind = slot = "data"
    elif forced is not None and forced != "marker":
        kind = slot = forced
    else:
        if n_segs == 2 and busy:
            kind = "listing"
        elif forced is not None:  # a marker
            kind = GENERIC
        elif three_words or article:
            kind = "article"
        elif n_segs == 2:
            kind = "subsection"
        else:
            kind = GENERIC
        slot = None if kind is GENERIC else kind
    return points + (CHECKLIST_HIT if slot is not None else 0), kind, slot


def _picked(columns: tuple[Any, ...], where: list[int]) -> list[Any]:
    """The values at ``where`` of each column (None stays None)."""
    return [[column[j] for j in where] if column is not None else None for column in columns]


def _odd_last(head: str, last: str) -> bool:
    """Whether a URL (its stripped, lowercased path as ``head/last``) needs the full rules
    rather than ``Rater._rate_bulk``'s: one segment, or a last segment that is not words
    (letter first, joined by ``-``, ``_`` or ``.``) or holds a listing, marker, form,
    data, utility or version word."""
    return (
        not head
        or _SAFE_LAST(last) is None
        or last in _SPECIAL_LAST
        or _VERSIONISH(last) is not None
        or not _SPECIAL_TOKENS.isdisjoint(_SPLIT_TOKENS(last))
    )


# What a prefix fixes: the segment count with the last one, the points of its facts, the
# type it forces (form, data, listing by taxonomy, marker) and whether anything below it is
# an article (content section or dated path); the keyword (for pillar slots).
# The running state along a path: segments, keyword, first segment a content section,
# date-like, marker, form, data, date tail (None | "year" | "ym"), last segment a taxonomy.
_State = tuple[int, str | None, bool, bool, bool, bool, bool, str | None, bool]
_ROOT: _State = (0, None, False, False, False, False, False, None, False)
_Prefix = tuple[int, int, str | None, bool, _State, int]  # ... and the state's number
# What a segment says by itself (``Rater._segment``).
_Segment = tuple[str | None, bool, bool, bool, bool, bool, bool, bool, bool, bool]


class Rater:
    """Totals, page types and slots of a batch of records (the pipeline's hot path)."""

    def __init__(self, keywords: Iterable[str] | None = None):
        self.words = tuple(keywords) if keywords is not None else None  # as given
        self.keywords = keyword_matcher(keywords) if keywords is not None else DEFAULT_KEYWORDS
        self._prefixes: dict[str, _Prefix] = {}
        self._segments: dict[str, _Segment] = {}
        # The states a prefix can leave (``_State``), numbered, with their facts; and the
        # step from a state through a segment to the next.
        self._states: list[_State] = []
        self._state_ids: dict[_State, int] = {}
        self._infos: list[_Prefix] = []
        self._steps: dict[tuple[int, str], int] = {}
        # (prefix's state, busy changefreq, three words) -> what ``_rate_bulk`` gives a URL
        self._outcomes: dict[tuple[int, bool, bool], tuple[int, str, str | None]] = {}
        self._generation = 0  # counts ``_forget``: state numbers change then
        self._new_state(_ROOT)
        self._kw_search = self.keywords.search
        words = [w.strip().lower().strip("/") for w in (keywords or PILLAR_KEYWORDS)]
        # single-token keywords are found by a set test on the last segment's tokens; a
        # keyword holding a separator needs the regex
        self._kw_tokens = frozenset(w for w in words if w and not _SPLIT_SEP(w))
        self._kw_multi = any(_SPLIT_SEP(w) for w in words if w)
        sets = (CONTENT_SECTIONS, FORM_WORDS, DATA_WORDS, TAXONOMY_WORDS, MARKER_WORDS)
        self._ids_alike = not any(w.isdigit() for ws in (words, *sets) for w in ws)

    def _prefix(self, prefix: str) -> _Prefix:
        """The facts of a prefix (``a/b``, stripped, lowercased): its parent prefix's (``a``,
        remembered, else worked out the same way) and one step through its last segment,
        each step (a state and a segment) cached, so a prefix never seen costs about a
        dictionary look-up (a sitemap has very many distinct prefixes made of a few
        thousand segments, and their parents are shared)."""
        up, _, seg = prefix.rpartition("/")
        if not up:
            sid = 0  # the root's state
        elif (info := self._prefixes.get(up)) is not None:
            sid = info[5]
        elif up.count("/") < 32:
            sid = self._prefix(up)[5]
        else:  # a very deep path: folded from the root, no recursion
            steps = self._steps
            sid = 0
            for part in up.split("/"):
                if part:
                    nxt = steps.get((sid, part))
                    sid = nxt if nxt is not None else self._step(sid, part)
        if seg:
            if len(seg) >= _ID_DIGITS and self._ids_alike and seg.isdigit() and seg.isascii():
                seg = _AN_ID
            nxt = self._steps.get((sid, seg))
            sid = nxt if nxt is not None else self._step(sid, seg)
        info = self._infos[sid]
        if len(self._prefixes) >= PREFIX_CACHE_LIMIT:
            self._prefixes.clear()
        self._prefixes[prefix] = info
        return info

    def _prefix_states(self, prefixes: list[str]) -> dict[str, int]:
        """The state number of each prefix's facts (``_prefix``)."""
        found = list(map(self._prefixes.get, prefixes))
        if None in found:
            prefix = self._prefix
            found = [
                info if info is not None else prefix(head)
                for head, info in zip(prefixes, found, strict=True)
            ]
        return dict(zip(prefixes, [info[5] for info in found], strict=True))

    def _step(self, sid: int, seg: str) -> int:
        """The state (its number) after ``seg`` from state ``sid``."""
        state = self._extend(self._states[sid], seg)
        nid = self._state_ids.get(state)
        if nid is None:
            nid = self._new_state(state)
        self._steps[(sid, seg)] = nid
        return nid

    def _bound(self) -> None:
        """Start the numbered states over when they are many, between batches only (a
        state's number stays valid through a batch; memory stays bounded)."""
        if len(self._steps) >= CACHE_LIMIT or len(self._states) >= CACHE_LIMIT:
            self._forget()

    def _new_state(self, state: _State) -> int:
        n_segs, keyword, content, date_like, marker, form, data, _tail, taxonomy = state
        n = n_segs + 1
        points = KEYWORD if keyword is not None else 0
        points += 1 if n == 2 else (3 - n if n > 3 else 0)
        if date_like:
            points += DATE
        if marker:
            points += MARKER
        forced = (
            "form"
            if form
            else "data"
            if data
            else "listing"
            if taxonomy
            else "marker"
            if marker
            else None
        )
        nid = len(self._states)
        self._states.append(state)
        self._state_ids[state] = nid
        self._infos.append((n, points, forced, content or date_like, state, nid))
        return nid

    def _forget(self) -> None:
        """Start the caches over (memory stays bounded whatever the sitemap)."""
        self._generation += 1
        self._prefixes.clear()
        self._outcomes.clear()
        self._steps.clear()
        self._states = []
        self._state_ids = {}
        self._infos = []
        self._new_state(_ROOT)

    def _extend(self, state: _State, seg: str) -> _State:
        """The state after one more segment (the incremental form of ``path_facts``)."""
        if not seg:
            return state
        n_segs, keyword, content, date_like, marker, form, data, tail, _tax = state
        facts = self._segments.get(seg)
        if facts is None:
            facts = self._segment(seg)
        if n_segs == 0:
            keyword, content = facts[0], facts[1]
        form = form or facts[2]
        data = data or facts[3]
        if tail == "year" and facts[4]:
            date_like, tail = True, "ym"
        elif tail == "ym" and facts[5]:
            tail = None
        elif facts[6]:
            date_like, tail = True, None
        elif facts[7]:
            tail = "year"
        else:
            tail = None
            marker = marker or facts[8]
        return (n_segs + 1, keyword, content, date_like, marker, form, data, tail, facts[9])

    def _segment(self, seg: str) -> _Segment:
        """What one segment says, whatever comes before it (cached: a site's paths are
        made of a few thousand words, in very many combinations): its keyword and content
        section (read for a first segment), form and data words, what it is as a part of
        a date (month, day, ISO date, year), marker, taxonomy word."""
        found = self._kw_search(seg)
        toks = _SPLIT_TOKENS(seg)
        facts = (
            found.group(1) if found is not None else None,
            seg in CONTENT_SECTIONS,
            not FORM_WORDS.isdisjoint(toks) or "sign-up" in seg or "sign_up" in seg,
            not DATA_WORDS.isdisjoint(toks),
            len(seg) <= 2 and _MONTH.fullmatch(seg) is not None,
            _DAY.fullmatch(seg) is not None,
            _ISO_DATE.fullmatch(seg) is not None,
            _YEAR.fullmatch(seg) is not None,
            is_marker(seg),
            seg in TAXONOMY_WORDS,
        )
        if len(self._segments) >= CACHE_LIMIT:
            self._segments.clear()
        self._segments[seg] = facts
        return facts

    def rate_many(
        self, records: list[dict[str, Any]], fetched: bool = True, write: bool = False
    ) -> tuple[list[int], list[str], list[str | None]]:
        """``(totals, types, slots)`` of the records, in order.

        ``fetched=False`` promises no record has a ``title`` or ``links`` (sitemap batches),
        which saves two look-ups a URL; ``write=True`` also sets each record's ``score``.
        Records are feed records: normalized URLs, no fragment.
        """
        rated = self.rate_columns(
            [rec["url"] for rec in records],
            [rec.get("priority") for rec in records],
            [rec.get("changefreq") for rec in records],
            [rec.get("flags") for rec in records],
            records,
            fetched,
        )
        if write:
            for rec, total in zip(records, rated[0], strict=True):
                rec["score"] = total
        return rated

    def rate_columns(
        self,
        urls: list[str],
        priorities: list[Any],
        changefreqs: list[str | None],
        flags: list[Any] | None = None,
        records: list[dict[str, Any]] | None = None,
        fetched: bool = False,
    ) -> tuple[list[int], list[str], list[str | None]]:
        """``rate_many`` over columns (the sitemap worker has no record dicts). ``records``:
        the columns' records, which the full rules read (a title a page-level record may
        hold even in a sitemap batch); ``fetched`` as in ``rate_many``."""
        self._bound()
        if (
            len(urls) >= _BULK_MIN
            and not (fetched and records is not None)
            and (flags is None or not any(flags))
        ):
            rated = (
                self._rate_compiled(urls, priorities, changefreqs, records, fetched)
                if _rater is not None
                else None
            )
            if rated is None:
                rated = self._rate_bulk(urls, priorities, changefreqs, records, fetched)
            if rated is not None:
                return rated
        return self._rate_each(urls, priorities, changefreqs, flags, records, fetched)

    def _rate_compiled(
        self,
        urls: list[str],
        priorities: list[Any],
        changefreqs: list[str | None],
        records: list[dict[str, Any]] | None,
        fetched: bool,
    ) -> tuple[list[int], list[str], list[str | None]] | None:
        """``_rate_bulk`` in C (``_rater.c``): one pass over the batch, any batch (the
        URLs of other origins, with queries, index files or empty segments too); the URLs
        whose last segment needs the full rules (``_odd_last``), non-ASCII ones and odd
        changefreqs are rated by ``_rate_each``. None: the columns are not lists."""
        rated = _rater.rate_bulk(
            urls,
            priorities,
            changefreqs,
            self._steps,
            self._infos,
            self._prefix,
            priority_points,
            _COMPILED_WORDS,
            _COMPILED_KINDS,
            CHECKLIST_HIT,
        )
        if rated is None:
            return None
        totals, types, slots, odd = rated
        if odd:
            self._rate_odd(
                odd, (totals, types, slots), urls, priorities, changefreqs, records, fetched
            )
        return totals, types, slots

    def _rate_odd(
        self,
        odd: list[int],
        rated: tuple[list[int], list[str], list[str | None]],
        urls: list[str],
        priorities: list[Any],
        changefreqs: list[str | None],
        records: list[dict[str, Any]] | None,
        fetched: bool,
    ) -> None:
        """Put ``_rate_each``'s totals, types and slots of the URLs at ``odd`` in ``rated``."""
        totals, types, slots = rated
        each = self._rate_each(
            [urls[j] for j in odd],
            [priorities[j] for j in odd],
            [changefreqs[j] for j in odd],
            None,
            [records[j] for j in odd] if records is not None else None,
            fetched,
        )
        for j, total, kind, slot in zip(odd, *each, strict=True):
            totals[j], types[j], slots[j] = total, kind, slot

    def _rate_bulk(
        self,
        urls: list[str],
        priorities: list[Any],
        changefreqs: list[str | None],
        records: list[dict[str, Any]] | None,
        fetched: bool,
    ) -> tuple[list[int], list[str], list[str | None]] | None:
        """``_rate_each`` for a batch of one origin's URLs without queries (a sitemap's
        usual batch), with the per-URL steps done once for the whole batch where Python's
        string methods allow: the paths cut, lowercased and stripped as one text, the
        last segments checked by a mapped regex and set tests, each prefix's facts looked
        up once. URLs whose last segment needs the full rules (one segment, a listing,
        form, data, utility or version word, not plain) are rated by ``_rate_each``.
        None: not such a batch (a query, another origin, an index file, an empty
        segment)."""
        n = len(urls)
        text = "\n".join(urls)
        cut = urls[0].find("/", 8)
        origin = "\n" + urls[0][:cut]
        if cut < 8 or text.count("\n") != n - 1:
            return None
        on_origin = ("\n" + text).count(origin + "/")
        if on_origin != n:
            if on_origin < n // 2:
                return None
            # a few URLs of other hosts among the site's (they are dropped later): rated
            # apart, the others together
            prefix = origin[1:] + "/"
            others = [j for j, url in enumerate(urls) if not url.startswith(prefix)]
            return self._rate_apart(others, urls, priorities, changefreqs, records, fetched)
        if "?" in text:  # the rules read the path only
            text = _QUERIES("", text)
        paths = ("\n" + text + "\n").replace(origin, "\n").lower()
        if "//" in paths:  # an empty segment: strip("/") would take more than one slash
            return None
        # strip("/") of every path: each starts with one slash, ends with at most one
        stripped = paths.replace("\n/", "\n").replace("/\n", "\n")[1:-1].split("\n")
        parts = [s.rpartition("/") for s in stripped]
        lasts = [part[2] for part in parts]
        if not INDEX_FILES.isdisjoint(lasts):
            return None
        heads = [part[0] for part in parts]
        joined = "\n" + "\n".join(lasts)
        # the last segments' words joined by "-" alone: "_" and "." separate words too
        words = joined.translate(_SEPARATORS) if "_" in joined or "." in joined else joined
        # The URLs whose last segment needs the full rules (``_odd_last``), found rule by
        # rule over the batch (C-level maps), not URL by URL.
        odd_sets = []
        if "" in heads:
            odd_sets.append(compress(range(n), map(operator.not_, heads)))
        if not all(map(_SAFE_LAST, lasts)):
            odd_sets.append(compress(range(n), [m is None for m in map(_SAFE_LAST, lasts)]))
        if "\nv" in joined and any(map(_VERSIONISH, lasts)):
            odd_sets.append(compress(range(n), map(_VERSIONISH, lasts)))
        if not _SPECIAL_LAST.isdisjoint(lasts):
            odd_sets.append(compress(range(n), map(_SPECIAL_LAST.__contains__, lasts)))
        found = _SPECIAL_TOKENS.intersection(words.replace("\n", "-").split("-"))
        if found:
            holds = re.compile(
                "(?:^|-)(?:" + "|".join(map(re.escape, sorted(found))) + ")(?:-|$)"
            ).search
            split_lasts = words[1:].split("\n")
            odd_sets.append(compress(range(n), map(holds, split_lasts)))
        odd = sorted(set().union(*odd_sets)) if odd_sets else []
        try:
            points = {p: _priority_total(p) for p in set(priorities)}
        except TypeError:  # an unhashable priority (a record's own): the per-URL rules
            return None
        distinct = list(set(heads).difference(("",)))
        states = self._prefix_states(distinct)
        states[""] = -1  # a one-segment URL: rated apart (odd)
        # What a URL gets depends on its prefix's state, whether its changefreq is a busy one
        # and whether its last segment has three words or more: worked out once per
        # distinct triple (kept across batches), then mapped in C.
        busy = {cf: cf is not None and cf.lower() in BUSY_CHANGEFREQ for cf in set(changefreqs)}
        keys = list(
            zip(
                map(states.__getitem__, heads),
                map(busy.__getitem__, changefreqs),
                [
                    last.count("-") >= 2
                    for last in (words[1:].split("\n") if words is not joined else lasts)
                ],
                strict=True,
            )
        )
        decided = self._outcomes
        if len(decided) >= CACHE_LIMIT:
            decided.clear()
        infos = self._infos
        for key in set(keys).difference(decided):
            sid = key[0]
            decided[key] = _bulk_outcome(infos[sid] if sid >= 0 else None, key[1], key[2])
        outcomes = list(map(decided.__getitem__, keys))
        totals = list(
            map(operator.add, [o[0] for o in outcomes], map(points.__getitem__, priorities))
        )
        types = [o[1] for o in outcomes]
        slots = [o[2] for o in outcomes]
        if odd:
            self._rate_odd(
                odd, (totals, types, slots), urls, priorities, changefreqs, records, fetched
            )
        return totals, types, slots

    def _rate_apart(
        self,
        apart: list[int],
        urls: list[str],
        priorities: list[Any],
        changefreqs: list[str | None],
        records: list[dict[str, Any]] | None,
        fetched: bool,
    ) -> tuple[list[int], list[str], list[str | None]] | None:
        """``_rate_bulk`` of the URLs not in ``apart``, ``_rate_each`` of those in it."""
        skip = set(apart)
        rest = [j for j in range(len(urls)) if j not in skip]
        columns = (urls, priorities, changefreqs, records)
        bulk = self._rate_bulk(*_picked(columns, rest), fetched)
        if bulk is None:
            return None
        some_urls, some_priorities, some_changefreqs, some_records = _picked(columns, apart)
        each = self._rate_each(
            some_urls, some_priorities, some_changefreqs, None, some_records, fetched
        )
        n = len(urls)
        totals: list[int] = [0] * n
        types: list[str] = [GENERIC] * n
        slots: list[str | None] = [None] * n
        for where, (got_totals, got_types, got_slots) in ((rest, bulk), (apart, each)):
            for j, total, kind, slot in zip(where, got_totals, got_types, got_slots, strict=True):
                totals[j], types[j], slots[j] = total, kind, slot
        return totals, types, slots

    def _rate_each(
        self,
        urls: list[str],
        priorities: list[Any],
        changefreqs: list[str | None],
        flags: list[Any] | None,
        records: list[dict[str, Any]] | None,
        fetched: bool,
    ) -> tuple[list[int], list[str], list[str | None]]:
        """``rate_columns`` one URL at a time (any batch)."""
        totals: list[int] = []
        types: list[str] = []
        slots: list[str | None] = []
        prefixes = self._prefixes
        plain_last = _PLAIN_LAST
        safe_last = _SAFE_LAST
        split_tokens = _SPLIT_TOKENS
        special_tokens = _SPECIAL_TOKENS
        special_last = _SPECIAL_LAST
        versionish = _VERSIONISH
        pri_points = _PRIORITY_POINTS
        index_files = INDEX_FILES
        kw_search = self._kw_search
        busy = BUSY_CHANGEFREQ
        keywords = self.keywords
        kw_tokens = self._kw_tokens
        kw_multi = self._kw_multi
        form_words, data_words, utility_words = FORM_WORDS, DATA_WORDS, UTILITY_WORDS
        page_fields = (
            [rec.get("title") is not None or rec.get("links") is not None for rec in records]
            if fetched and records is not None
            else None
        )
        for j, url in enumerate(urls):
            s = url[url.find("/", 8) :].partition("?")[0].lower().strip("/")
            i = s.rfind("/")
            last = s[i + 1 :]
            if last in index_files:  # /x/index.html is the page /x/ (paths.INDEX_FILES)
                s = s[:i] if i >= 0 else ""
                i = s.rfind("/")
                last = s[i + 1 :]
            if plain_last(last) is not None:
                toks = last.split("-")
            elif safe_last(last) is not None:
                toks = split_tokens(last)
            else:
                toks = None
            if (
                toks is None
                or last in special_last
                or versionish(last) is not None
                or (page_fields is not None and page_fields[j])
            ):
                rec = (
                    records[j]
                    if records is not None
                    else {
                        "url": url,
                        "priority": priorities[j],
                        "changefreq": changefreqs[j],
                        "flags": flags[j] if flags is not None else None,
                    }
                )
                scored = score_record(rec, keywords)
                totals.append(scored.total)
                types.append(scored.type)
                slots.append(scored.slot)
                continue
            p = priorities[j]
            if p is None:
                total = 0
            else:
                total = pri_points.get(p) if p.__class__ is float else None
                if total is None:
                    total = priority_points(p)
            if flags is not None and (f := flags[j]) and "requires_auth" in f:
                total += AUTH
            words = len(toks)
            if special_tokens.isdisjoint(toks):
                last_form = last_data = utility = False
            else:  # a form, data or utility word in the last segment (rare)
                last_form = not form_words.isdisjoint(toks) or (
                    "sign" in toks and ("sign-up" in last or "sign_up" in last)
                )
                last_data = not data_words.isdisjoint(toks)
                utility = not utility_words.isdisjoint(toks)
            if i < 0:  # one segment
                total += 2
                found = kw_search(last) if kw_multi or not kw_tokens.isdisjoint(toks) else None
                if found is not None:
                    total += KEYWORD
                cf = changefreqs[j]
                if last_form:
                    kind = slot = "form"
                elif last_data:
                    kind = slot = "data"
                elif cf is not None and cf.lower() in busy:
                    kind = slot = "listing"
                elif found is not None:
                    kind, slot = "pillar", "pillar:" + found.group(1)
                elif words >= 3:
                    kind = slot = "article"
                elif utility:
                    kind, slot = GENERIC, None
                else:
                    kind, slot = "pillar", "pillar:section"
                if kind in BONUS_TYPES:
                    total += CHECKLIST_HIT
            else:
                prefix = s[:i]
                info = prefixes.get(prefix)
                if info is None:
                    info = self._prefix(prefix)
                if last_form or (last_data and not info[4][5]):  # the last segment decides
                    kind = slot = "form" if last_form else "data"
                    total += info[1] + CHECKLIST_HIT
                else:  # the prefix decides, with the changefreq and word count
                    cf = changefreqs[j] if info[0] == 2 else None
                    busy_cf = cf is not None and cf.lower() in busy
                    points, kind, slot = _bulk_outcome(info, busy_cf, words >= 3)
                    total += points
            totals.append(total)
            types.append(kind)
            slots.append(slot)
        return totals, types, slots
