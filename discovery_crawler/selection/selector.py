"""Selection under a cap (SPEC §8), streaming: never a sort of the whole inventory.

What is kept, given every candidate's total, type and slot (``scoring.Rater``):

1. **Checklist pass.** Each checklist slot's best candidate is its *winner*. One winner per
   page type, in checklist order (home, pillar, article, listing, form, data, subsection),
   then the other pillar winners (one per top section) best first — while the cap allows.
2. **Score pass.** The rest of the cap goes to the best remaining candidates.

"Best" everywhere: higher total, then later ``lastmod`` (ISO 8601 strings compared as
text; none sorts last), then the URL alphabetically. The kept list is in selection order.

Why streaming is exact: a candidate kept in pass 2 has only kept candidates ranked above it,
so it is within the best ``cap`` overall. The selector therefore holds a bounded heap of the
best ``cap + cut_listed`` candidates (the extra ones are the best of the cut, the sample the
crawl log lists) and the current best of each slot — memory is ``cap + cut_listed + slots``
records, whatever the inventory's size. A property test checks it against a full sort.

Never kept: the feed kinds that are not pages (``NOT_PAGES``) and the records the junk stage
flagged ``junk`` (SPEC §7) — both scored, counted (``not_pages``, ``junk``), never
candidates. ``pages=`` names are never flagged junk, so they stay selectable.

Modes (``SelectionPlan``): a cap (``cap=N``, ``single=1``, the profile's or the default
``SELECTION_CAP``), ``all=1`` (everything kept; the best ``listed`` are listed) and
``pages=`` (exactly the named pages: by slug, path or full URL; a name that matched nothing
is an error line).
"""

from __future__ import annotations

import heapq
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from discovery_crawler.selection.checklist import CHECKLIST, GENERIC
from discovery_crawler.selection.paths import DEFAULT_KEYWORDS, url_path
from discovery_crawler.selection.scoring import score_record
from discovery_crawler.urls.normalize import UrlError, normalize
from discovery_crawler.urls.slugs import base_slug

# Feed kinds that are not pages to select (SPEC §5: recorded, never fetched).
NOT_PAGES = frozenset({"document", "media", "archive", "asset", "api"})
MIN_TEMPLATES = 3  # fewer distinct page types than this → a warning (SPEC §8)
CAP_SOURCES = ("default", "profile", "argument", "pages", "all", "single")


class Candidate:
    """A URL in the running: ordered so that ``a < b`` means a is *worse* than b."""

    __slots__ = ("lastmod", "rec", "score", "slot", "type", "url")

    def __init__(self, score: int, rec: dict[str, Any], kind: str, slot: str | None):
        self.score = score
        self.rec = rec
        self.url: str = rec["url"]
        lastmod = rec.get("lastmod")
        self.lastmod: str = lastmod if lastmod.__class__ is str else ""
        self.type = kind
        self.slot = slot

    def __lt__(self, other: Candidate) -> bool:
        if self.score != other.score:
            return self.score < other.score
        if self.lastmod != other.lastmod:
            return self.lastmod < other.lastmod
        return self.url > other.url

    def __repr__(self) -> str:
        return f"<Candidate {self.score} {self.url}>"


def _beats(rec: dict[str, Any], other: Candidate) -> bool:
    """``other < Candidate(other.score, rec, …)``: ``rec`` ties ``other`` on score and wins
    on lastmod (later), then URL (smaller)."""
    lastmod = rec.get("lastmod")
    if lastmod.__class__ is not str:
        lastmod = ""
    if lastmod != other.lastmod:
        return other.lastmod < lastmod  # type: ignore[operator]
    return other.url > rec["url"]


def best_first(candidates: Iterable[Candidate]) -> list[Candidate]:
    """Candidates ordered best first (sorts a bounded set only)."""
    return sorted(candidates, reverse=True)


def choose(
    cap: int, winners: dict[str, Candidate], ranked: list[Candidate]
) -> tuple[list[Candidate], set[str]]:
    """The kept list: checklist pass over the slot ``winners``, then the score pass over
    ``ranked`` (best first; must hold at least the best ``cap`` candidates)."""
    kept: list[Candidate] = []
    taken: set[str] = set()

    def take(c: Candidate) -> None:
        if len(kept) < cap and c.url not in taken:
            kept.append(c)
            taken.add(c.url)

    by_type: dict[str, list[Candidate]] = {}
    for c in winners.values():
        by_type.setdefault(c.type, []).append(c)
    for kind in CHECKLIST:
        group = by_type.get(kind)
        if group:
            take(max(group))
    for c in best_first(by_type.get("pillar", ())):
        take(c)
    for c in ranked:
        if len(kept) >= cap:
            break
        take(c)
    return kept, taken


@dataclass
class SelectionPlan:
    """How many pages to keep and why (``cap_source``)."""

    mode: str  # cap | all | pages
    cap: int | None  # None for all / pages
    cap_source: str  # default | profile | argument | pages | all | single
    pages: tuple[str, ...] = ()
    ignored: list[str] = field(default_factory=list)  # other selection arguments overridden


def plan_selection(
    *,
    cap: int | None,
    all_pages: bool,
    pages: tuple[str, ...],
    single: bool,
    setting_cap: int,
    setting_source: str,
) -> SelectionPlan:
    """Resolve ``cap``/``all``/``pages``/``single`` and the SELECTION_CAP setting.

    Precedence when several are given: pages, then all, then single, then cap; the ones
    overridden are named in ``ignored`` (and in a warning). ``setting_source`` says where
    SELECTION_CAP came from (``default``, ``profile`` or ``argument`` for ``-s``);
    SELECTION_CAP = 0 means no cap (everything kept).
    """
    given = []
    if pages:
        given.append(("pages", "pages=" + ",".join(pages)))
    if all_pages:
        given.append(("all", "all=1"))
    if single:
        given.append(("single", "single=1"))
    if cap is not None:
        given.append(("argument", f"cap={cap}"))
    ignored = [text for _, text in given[1:]]
    source = given[0][0] if given else setting_source
    if source == "pages":
        return SelectionPlan("pages", None, "pages", pages, ignored)
    if source == "all":
        return SelectionPlan("all", None, "all", (), ignored)
    if source == "single":
        return SelectionPlan("cap", 1, "single", (), ignored)
    if source == "argument" and cap is not None:
        return SelectionPlan("cap", cap, "argument", (), ignored)
    if setting_cap <= 0:
        return SelectionPlan("all", None, setting_source, (), ignored)
    return SelectionPlan("cap", setting_cap, setting_source, (), ignored)


class _PageNames:
    """``pages=`` names (slug, path or full URL) and the first record each matched."""

    def __init__(self, names: tuple[str, ...]):
        self.names = names
        self.urls: dict[str, str] = {}
        self.paths: dict[str, str] = {}
        self.slugs: dict[str, str] = {}
        for name in names:
            if "://" in name:
                try:
                    self.urls[normalize(name)] = name
                except UrlError:
                    self.urls[name] = name
            elif name.startswith("/"):
                self.paths[name.rstrip("/") or "/"] = name
            else:
                self.slugs[name.strip("/").lower()] = name
                self.paths["/" + name.strip("/")] = name  # "about" is also the path /about
        self.matched: dict[str, Candidate] = {}

    def match(self, rec: dict[str, Any]) -> str | None:
        url = rec["url"]
        name = self.urls.get(url)
        if name is None:
            path = url_path(url)
            name = self.paths.get(path.rstrip("/") or "/")
            if name is None and self.slugs:
                name = self.slugs.get(base_slug(url))
        return name


class Selector:
    """Streams scored candidates; keeps a bounded heap and the best of each slot."""

    def __init__(
        self,
        plan: SelectionPlan,
        cut_listed: int = 100,
        keywords: re.Pattern[str] = DEFAULT_KEYWORDS,
    ):
        self.plan = plan
        self.keywords = keywords
        self.cut_listed = max(0, cut_listed)
        if plan.mode == "cap":
            self.size = (plan.cap or 0) + self.cut_listed
        else:  # all: the best `cut_listed` are listed as kept; pages: the cut sample
            self.size = self.cut_listed
        self.heap: list[Candidate] = []
        self.floor: int | None = None  # heap[0].score once the heap is full
        self.winners: dict[str, Candidate] = {}
        self.names = _PageNames(plan.pages) if plan.mode == "pages" else None
        self.seen = 0  # candidates offered
        self.not_pages = 0  # records of a file kind: scored, not selectable
        self.junk = 0  # pages flagged junk: scored, not selectable
        self.types: Counter[str] = Counter()
        self.sources: Counter[str] = Counter()  # batch source -> URLs (sitemap, link, ...)

    # -- streaming ------------------------------------------------------------------------
    def offer_many(
        self,
        records: list[dict[str, Any]],
        totals: list[int],
        types: list[str],
        slots: list[str | None],
        junk: int = 0,
    ) -> None:
        """Offer a batch (records with their totals, types and slots, in order); ``junk``:
        how many of its records are flagged junk (``UrlBatch.junk``; 0 looks at none)."""
        if not junk and self.names is None and self.floor is not None and len(records) >= 16:
            kinds = [rec.get("kind") for rec in records]
            if NOT_PAGES.isdisjoint(kinds):
                self._offer_pages(records, totals, types, slots)
                return
        heap = self.heap
        size = self.size
        winners = self.winners
        floor = self.floor
        names = self.names
        offered = 0
        for rec, total, kind, slot in zip(records, totals, types, slots, strict=True):
            if rec.get("kind") in NOT_PAGES:
                self.not_pages += 1
                continue
            if junk and "junk_pattern" in rec:
                self.junk += 1
                continue
            offered += 1
            self.types[kind] += 1
            if names is not None:
                name = names.match(rec)
                if name is not None and name not in names.matched:
                    names.matched[name] = Candidate(total, rec, kind, slot)
                    continue
            # A Candidate is built only for a URL that gets in: at the floor, ties are
            # many on big sites, and ``_beats`` compares without one (same order).
            if size and (floor is None or total >= floor):  # size 0: none listed
                if len(heap) < size:
                    heapq.heappush(heap, Candidate(total, rec, kind, slot))
                    if len(heap) == size:
                        floor = heap[0].score
                elif total > floor or _beats(rec, heap[0]):
                    heapq.heapreplace(heap, Candidate(total, rec, kind, slot))
                    floor = heap[0].score
            if slot is not None:
                best = winners.get(slot)
                if (
                    best is None
                    or total > best.score
                    or (total == best.score and _beats(rec, best))
                ):
                    winners[slot] = Candidate(total, rec, kind, slot)
        self.floor = floor
        self.seen += offered

    def _offer_pages(
        self,
        records: list[dict[str, Any]],
        totals: list[int],
        types: list[str],
        slots: list[str | None],
    ) -> None:
        """``offer_many`` for a batch of pages once the heap is full and no page is named
        (a big site's every batch): only the records that could get in — a total at the
        heap's floor or above, or at their slot's best or above — are looked at one by one
        (the others lose whatever comes after them), the rest are counted in C."""
        self.types.update(types)
        self.seen += len(records)
        heap, winners = self.heap, self.winners
        floor = self.floor
        assert floor is not None
        for j in [j for j, total in enumerate(totals) if total >= floor]:
            total = totals[j]
            if total < floor:  # the floor rose within the batch
                continue
            rec = records[j]
            if total > floor or _beats(rec, heap[0]):  # the heap is full: it has a floor
                heapq.heapreplace(heap, Candidate(total, rec, types[j], slots[j]))
                floor = heap[0].score
        self.floor = floor
        best = {slot: candidate.score for slot, candidate in winners.items()}
        contenders = [
            j
            for j, (slot, total) in enumerate(zip(slots, totals, strict=True))
            if slot is not None and total >= best.get(slot, total)
        ]
        for j in contenders:
            slot, total, rec = slots[j], totals[j], records[j]
            current = winners.get(slot)
            if (
                current is None
                or total > current.score
                or (total == current.score and _beats(rec, current))
            ):
                winners[slot] = Candidate(total, rec, types[j], slot)

    # -- result ---------------------------------------------------------------------------
    def result(self) -> Selection:
        plan = self.plan
        ranked = best_first(self.heap)
        errors: list[str] = []
        if plan.mode == "all":
            kept = ranked  # the best listed; every candidate is kept
            kept_count = self.seen
            cut: list[Candidate] = []
        elif plan.mode == "pages":
            assert self.names is not None
            kept = [self.names.matched[n] for n in plan.pages if n in self.names.matched]
            kept_count = len(kept)
            cut = ranked
            for name in plan.pages:
                if name not in self.names.matched:
                    errors.append(f"pages={name} matched no discovered page")
        else:
            kept, taken = choose(plan.cap or 0, self.winners, ranked)
            kept_count = len(kept)
            rest = {c.url: c for c in ranked if c.url not in taken}
            for c in self.winners.values():
                if c.url not in taken:
                    rest.setdefault(c.url, c)
            cut = best_first(rest.values())[: self.cut_listed]
        templates = [t for t in CHECKLIST if self.types.get(t)]
        warnings = [f"{text} ignored: {plan.cap_source} decides" for text in plan.ignored]
        if self.seen and len(templates) < MIN_TEMPLATES:
            warnings.append(
                f"fewer than {MIN_TEMPLATES} distinct page templates found "
                f"({', '.join(templates) or 'none'}): the selection cannot cover the "
                "checklist; name pages with pages= or lift the cap"
            )
        return Selection(
            plan=plan,
            candidates=self.seen,
            not_pages=self.not_pages,
            junk=self.junk,
            kept=kept,
            kept_count=kept_count,
            cut=cut,
            cut_count=self.seen - kept_count,
            templates=templates,
            type_counts={t: self.types[t] for t in (*CHECKLIST, GENERIC) if self.types.get(t)},
            warnings=warnings,
            errors=errors,
            keywords=self.keywords,
            sources=dict(self.sources),
        )


def _entry(c: Candidate, keywords: re.Pattern[str]) -> dict[str, Any]:
    rec = c.rec
    scored = score_record(rec, keywords)
    return {
        "url": c.url,
        "slug": rec.get("slug"),
        "score": c.score,
        "breakdown": scored.breakdown_list(),
        "type": c.type,
        "lastmod": rec.get("lastmod"),
        "priority": rec.get("priority"),
    }


@dataclass
class Selection:
    """What selection kept and cut; ``as_dict`` is the crawl log's ``selection``."""

    plan: SelectionPlan
    candidates: int
    not_pages: int
    kept: list[Candidate]
    kept_count: int
    cut: list[Candidate]
    cut_count: int
    templates: list[str]
    type_counts: dict[str, int]
    warnings: list[str]
    errors: list[str]
    junk: int = 0  # pages flagged junk, never candidates
    scores: dict[str, Any] = field(default_factory=dict)  # the crawl log's capped scores
    sources: dict[str, int] = field(default_factory=dict)  # batch source -> URLs
    keywords: re.Pattern[str] = DEFAULT_KEYWORDS  # to rebuild breakdowns

    def as_dict(self) -> dict[str, Any]:
        return {
            "cap": self.plan.cap,
            "cap_source": self.plan.cap_source,
            "mode": self.plan.mode,
            "candidates": self.candidates,
            "not_pages": self.not_pages,
            "junk": self.junk,
            "kept": {
                "count": self.kept_count,
                "listed": len(self.kept),
                "items": [_entry(c, self.keywords) for c in self.kept],
            },
            "cut": {
                "count": self.cut_count,
                "listed": len(self.cut),
                "items": [_entry(c, self.keywords) for c in self.cut],
            },
            "templates": self.templates,
            "type_counts": self.type_counts,
            "warnings": self.warnings,
            "errors": self.errors,
            "scores": self.scores,
        }
