"""Tests for ``selection/selector.py``: the streaming selector equals a full sort of the
inventory (hypothesis), memory stays bounded on 1M URLs, cap sources, all/pages/single,
ties, and the summary lines."""

from __future__ import annotations

import random
import tracemalloc
from collections import Counter
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discovery_crawler.run_record import CappedList
from discovery_crawler.selection.checklist import CHECKLIST
from discovery_crawler.selection.scoring import Rater
from discovery_crawler.selection.selector import (
    Candidate,
    SelectionPlan,
    Selector,
    plan_selection,
)
from discovery_crawler.selection.summary import selection_lines

SITE = "https://example.com"


def plan(cap: int | None = 5, **kw) -> SelectionPlan:
    args = {"cap": cap, "all_pages": False, "pages": (), "single": False}
    args.update(kw)
    return plan_selection(setting_cap=5, setting_source="default", **args)


def run(records: list[dict], p: SelectionPlan | None = None, cut_listed: int = 100, size=7):
    rater = Rater()
    selector = Selector(p or plan(), cut_listed)
    for i in range(0, len(records), size):  # odd batch size: batches must not matter
        batch = records[i : i + size]
        totals, types, slots = rater.rate_many(batch)
        junk = sum("junk_pattern" in r for r in batch)  # as the junk stage counts them
        selector.offer_many(batch, totals, types, slots, junk)
    return selector.result()


def rec(path: str, lastmod: str | None = None, priority: float | None = None, **kw) -> dict:
    r = {"url": SITE + path, "lastmod": lastmod, "priority": priority, "changefreq": None}
    r.update(kw)
    return r


def reference(records: list[dict], cap: int) -> list[str]:
    """The selection by a full sort of the whole inventory (what streaming must equal)."""
    rater = Rater()
    totals, types, slots = rater.rate_many(records)
    cands = [
        Candidate(t, r, k, s)
        for r, t, k, s in zip(records, totals, types, slots, strict=True)
        if r.get("kind") not in ("document", "media", "archive")
    ]
    ordered = sorted(cands, key=lambda c: (-c.score, _neg(c.lastmod), c.url))
    winners: dict[str, Candidate] = {}
    for c in ordered:  # first in best-first order = the slot's best
        if c.slot is not None and c.slot not in winners:
            winners[c.slot] = c
    kept: list[Candidate] = []
    for kind in CHECKLIST:
        firsts = [c for c in ordered if winners.get(c.slot) is c and c.type == kind]
        if firsts and len(kept) < cap and firsts[0] not in kept:
            kept.append(firsts[0])
    for c in ordered:
        if c.type == "pillar" and winners.get(c.slot) is c and len(kept) < cap and c not in kept:
            kept.append(c)
    for c in ordered:
        if len(kept) < cap and c not in kept:
            kept.append(c)
    return [c.url for c in kept]


def _neg(text: str) -> tuple[int, ...]:
    return (*(-ord(ch) for ch in text), 1)  # later lastmod first; "" last


PATHS = st.lists(
    st.sampled_from(
        [
            "about",
            "pricing",
            "blog",
            "2023",
            "06",
            "v2",
            "contact",
            "data",
            "team",
            "x",
            "y",
            "how-we-work-here",
            "tag",
            "community",
            "2",
        ]
    ),
    max_size=4,
).map(lambda segs: "/" + "/".join(segs))
RECORDS = st.lists(
    st.tuples(
        PATHS,
        st.none() | st.sampled_from(["2024-01-01", "2024-06-01", "2023-12-31T10:00:00+00:00"]),
        st.none() | st.sampled_from([0.1, 0.5, 1.0]),
        st.sampled_from(["page", "page", "document"]),
        st.integers(0, 3),
    ),
    max_size=60,
)


@settings(max_examples=400, deadline=None)
@given(RECORDS, st.integers(1, 12))
def test_streaming_equals_full_sort(raw, cap):
    """Same kept set, same order as selecting from a full sort of the inventory."""
    seen: set[str] = set()
    records = []
    for path, lastmod, priority, kind, q in raw:
        url = path + (f"?q={q}" if q else "")
        if url in seen:
            continue
        seen.add(url)
        records.append(rec(url, lastmod, priority, kind=kind))
    result = run(records, plan(cap))
    assert [c.url for c in result.kept] == reference(records, cap)
    pages = [r for r in records if r["kind"] == "page"]
    assert result.kept_count + result.cut_count == len(pages) == result.candidates
    # the cut sample is the best of what was cut, best first
    kept = {c.url for c in result.kept}
    assert not kept & {c.url for c in result.cut}
    assert result.cut == sorted(result.cut, reverse=True)


@settings(max_examples=300, deadline=None)
@given(RECORDS, st.integers(1, 12), st.booleans())
def test_whole_batches_of_pages_select_as_one_at_a_time(raw, cap, pages_only):
    """Batches of 20 pages (each offered as a whole once the heap is full) keep, cut and
    count exactly what batches of one do, ties included."""
    records = [
        rec(f"{path}?n={n}", lastmod, priority, kind="page" if pages_only else kind)
        for n, (path, lastmod, priority, kind, _) in enumerate(raw * 5)
    ]
    one = run(records, plan(cap), cut_listed=3, size=1)
    whole = run(records, plan(cap), cut_listed=3, size=20)
    assert [c.url for c in whole.kept] == [c.url for c in one.kept]
    assert [c.url for c in whole.cut] == [c.url for c in one.cut]
    assert (whole.kept_count, whole.cut_count, whole.candidates) == (
        one.kept_count,
        one.cut_count,
        one.candidates,
    )


def test_about_outranks_markers_in_selection():
    """/about (7) is kept over /2/, /new/, /feed/ (−2 each) with a cap of 1 among them."""
    records = [rec("/2/"), rec("/new/"), rec("/feed/"), rec("/about")]
    result = run(records, plan(1))
    assert [c.url for c in result.kept] == [SITE + "/about"]
    assert result.kept[0].score == 7
    assert [c.url for c in result.cut] == [SITE + "/2/", SITE + "/feed/", SITE + "/new/"]


def test_checklist_pass_covers_templates_before_scores():
    """Cap 5: one page per type (home, pillar, article, listing, form) before a second
    article, although articles score higher than pillars."""
    records = [rec("/")] + [rec(f"/blog/post-{i}/") for i in range(20)]
    records += [rec("/about"), rec("/pricing"), rec("/blog/"), rec("/contact")]
    result = run(records, plan(5))
    assert [c.type for c in result.kept] == ["home", "pillar", "article", "listing", "form"]
    assert result.templates == ["home", "pillar", "article", "listing", "form"]
    assert result.cut_count == len(records) - 5
    assert not result.warnings


def test_ties_lastmod_desc_then_alphabetical():
    records = [
        rec("/x/b/c", "2024-01-01"),
        rec("/x/a/c", "2024-01-01"),
        rec("/x/z/c", "2024-06-01"),
        rec("/x/y/c"),
    ]
    result = run(records, plan(4))
    assert [c.url for c in result.kept] == [
        SITE + "/x/z/c",
        SITE + "/x/a/c",
        SITE + "/x/b/c",
        SITE + "/x/y/c",
    ]


def test_fewer_than_three_templates_warns():
    result = run([rec("/"), rec("/a/b/c"), rec("/a/b/d")])
    assert any("fewer than 3 distinct page templates" in w for w in result.warnings)


def test_all_pages_single_and_sources():
    records = [
        rec("/"),
        rec("/about"),
        rec("/blog/"),
        rec("/a/b/c"),
        rec("/x.pdf", kind="document"),
    ]
    everything = run(records, plan(None, all_pages=True))
    assert everything.kept_count == 4 and everything.cut_count == 0
    assert everything.plan.cap_source == "all"
    assert everything.not_pages == 1
    single = run(records, plan(None, single=True))
    assert [c.url for c in single.kept] == [SITE + "/"] and single.plan.cap_source == "single"
    named = run(records, plan(None, pages=("about", "/blog", f"{SITE}/a/b/c", "nope")))
    assert [c.url for c in named.kept] == [SITE + "/about", SITE + "/blog/", SITE + "/a/b/c"]
    assert named.errors == ["pages=nope matched no discovered page"]
    assert named.cut_count == 1


@pytest.mark.parametrize(
    ("kw", "setting_source", "setting_cap", "expected"),
    [
        ({}, "default", 5, ("cap", 5, "default")),
        ({}, "profile", 3, ("cap", 3, "profile")),
        ({"cap": 7}, "profile", 3, ("cap", 7, "argument")),
        ({"single": True}, "default", 5, ("cap", 1, "single")),
        ({"all_pages": True, "cap": 7}, "default", 5, ("all", None, "all")),
        ({"pages": ("a",), "all_pages": True}, "default", 5, ("pages", None, "pages")),
        ({}, "argument", 0, ("all", None, "argument")),
    ],
)
def test_cap_source(kw, setting_source, setting_cap, expected):
    args = {"cap": None, "all_pages": False, "pages": (), "single": False}
    args.update(kw)
    p = plan_selection(setting_cap=setting_cap, setting_source=setting_source, **args)
    assert (p.mode, p.cap, p.cap_source) == expected
    assert len(p.ignored) == len(kw) - 1 if len(kw) > 1 else not p.ignored


def test_memory_bounded_on_a_million_urls():
    """1M synthetic URLs in 1,000-URL batches: the selector's memory is cap + cut sample +
    slots, not the inventory (tracemalloc peak, the current batch excluded)."""
    rater = Rater()
    selector = Selector(plan(5), cut_listed=100)
    rng = random.Random(7)
    sections = ["blog", "docs", "about", "news", "shop", "x"]
    tracemalloc.start()
    peak_over_batch = 0
    try:
        for b in range(1000):
            batch = [
                {
                    "url": f"{SITE}/{rng.choice(sections)}/item-{b}-{i}/",
                    "lastmod": f"2024-01-{i % 28 + 1:02d}",
                    "priority": rng.randrange(11) / 10,
                    "changefreq": None,
                    "kind": "page",
                }
                for i in range(1000)
            ]
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
            totals, types, slots = rater.rate_many(batch)
            selector.offer_many(batch, totals, types, slots)
            del totals, types, slots
            peak_over_batch = max(peak_over_batch, tracemalloc.get_traced_memory()[1] - before)
        retained = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert selector.seen == 1_000_000
    assert len(selector.heap) == 105
    # a batch's working lists are ~100 KB; 1M URLs held would be >100 MB
    assert peak_over_batch < 2_000_000, peak_over_batch
    assert retained < 3_000_000, retained
    result = selector.result()
    assert result.kept_count == 5 and result.cut_count == 999_995


@pytest.mark.parametrize("size", [1, 7, 40])  # 40: the full-heap fast path's batches
def test_junk_is_scored_never_kept(size):
    """A page flagged junk is never a candidate — not even the best-scoring one, nor its
    checklist slot's winner, nor under all=1 — but it is counted."""
    pages = [rec(f"/blog/post-{i}/") for i in range(60)]
    junk = [
        rec("/", flags=["junk"], junk_pattern="test", priority=1.0),  # would be home
        rec("/about-copy/", flags=["junk"], junk_pattern="copy-suffix"),
        rec("/contact-old/", flags=["junk"], junk_pattern="old-suffix"),
    ]
    records = pages[:30] + junk + pages[30:]
    for p in (plan(3), plan(100)):
        result = run(records, p, size=size)
        kept = {c.url for c in result.kept} | {c.url for c in result.cut}
        assert not kept & {r["url"] for r in junk}
        assert result.junk == 3 and result.candidates == 60
        assert result.as_dict()["junk"] == 3
    everything = run(records, plan(None, all_pages=True), size=size)
    assert everything.kept_count == 60 and everything.junk == 3


def test_selection_lines():
    records = [rec("/"), rec("/about"), rec("/blog/")] + [rec(f"/blog/post-{i}/") for i in range(8)]
    records.append(rec("/test/", flags=["junk"], junk_pattern="test"))  # offered, not kept
    result = run(records, plan(3))
    result.sources = {"sitemap": len(records)}
    junk = CappedList(10)
    junk.append({"path": "/test/"})
    junk.append({"path": "/sample-page/"})
    record = SimpleNamespace(
        selection=result,
        junk=junk,
        filtered=Counter(junk=1),  # /sample-page/: left out of the feed (JUNK_IN_FEED off)
        site_origin=SITE,
        options=SimpleNamespace(url=SITE),
        attempts={"a": SimpleNamespace(ok=True, depth=0, url=SITE + "/sitemap.xml")},
    )
    lines = selection_lines(record)
    assert lines[0] == f"Discovered 13 pages on {SITE} (sitemap.xml)."
    assert lines[1] == "Selecting 3 highest-priority pages:"
    assert lines[2:5] == ["  - / (home)", "  - /about (pillar)", "  - /blog/post-0/ (article)"]
    assert lines[5].startswith(
        "Not selected (8 pages, in the inventory all the same; all=1 selects all): "
        "/blog/, /blog/post-1/, "
    )
    assert lines[5].endswith(", …")


def test_keep_everything_with_no_cut_url_listed():
    """``SELECTION_CAP=0`` (keep everything) with ``SELECTION_CUT_LISTED=0`` (list none):
    every URL is kept and counted (a heap of size 0 used to compare a total with no floor,
    and every batch failed in the score stage)."""
    everything = plan_selection(
        setting_cap=0, setting_source="default", cap=None, all_pages=False, pages=(), single=False
    )
    assert everything.mode == "all"
    result = run([rec(f"/blog/post-{i}/", kind="page") for i in range(40)], everything, 0)
    assert (result.kept_count, result.cut_count) == (40, 0)
    assert result.kept == [] and result.cut == []
