"""The job's one inventory from its workers' records (``distributed/merge.py``): pure,
no Redis."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from discovery_crawler.distributed.merge import (
    allocate_slugs,
    citation_fields,
    citation_order,
    merge_records,
)
from discovery_crawler.urls.normalize import twin_key

SITE = "https://example.com"


def rec(path: str, depth: int, found_on: str | None, status: int | None = 200, **more) -> dict:
    url = SITE + path
    via = "seed" if found_on is None else "link"
    return {
        "url": url,
        "source": via,
        "via": via,
        "found_on": found_on,
        "anchor": "a",
        "depth": depth,
        "status": status,
        **more,
    }


def line(record: dict) -> str:
    return json.dumps(record)


def test_one_record_per_url_a_fetched_one_first():
    unfetched = rec("/a", 1, SITE + "/", status=None, flags=["over_max_pages"])
    fetched = rec("/a", 2, SITE + "/b")
    merged = merge_records([line(unfetched), line(fetched)], {})
    assert merged == [fetched]


def test_the_best_citation_any_worker_saw_wins():
    """Worker A fetched /x citing /z at depth 3; worker B met it on /c (depth 3 too, a
    smaller citing URL): the record takes B's citation, as one run would."""
    fetched = rec("/x", 3, SITE + "/z")
    key = twin_key(SITE + "/x")
    order = citation_order(3, SITE + "/c")
    cited = {key.encode(): f"{order}\n{citation_fields(3, SITE + '/c', 'link', 'go')}".encode()}
    (merged,) = merge_records([line(fetched)], cited)
    assert (merged["found_on"], merged["anchor"], merged["depth"]) == (SITE + "/c", "go", 3)


def test_a_worse_citation_changes_nothing():
    fetched = rec("/x", 2, SITE + "/a")
    key = twin_key(SITE + "/x")
    cited = {
        key: f"{citation_order(2, SITE + '/b')}\n{citation_fields(2, SITE + '/b', 'link', 'b')}"
    }
    assert merge_records([line(fetched)], cited) == [fetched]


@given(
    st.lists(
        st.tuples(st.integers(0, 20), st.integers(1, 4), st.sampled_from(["/p", "/q", "/r"])),
        min_size=1,
        max_size=30,
    )
)
def test_the_order_records_arrive_in_does_not_matter(rows):
    """Workers hand their records over in any order: the merge is the same."""
    records = [rec(f"/{n}", depth, SITE + page, status=None) for n, depth, page in rows]
    lines = [line(r) for r in records]
    assert merge_records(lines, {}) == merge_records(list(reversed(lines)), {})
    merged = merge_records(lines, {})
    assert len(merged) == len({r["url"] for r in records})
    for out in merged:
        same = [r for r in records if r["url"] == out["url"]]
        assert (out["depth"], out["found_on"]) == min((r["depth"], r["found_on"]) for r in same)


# -- sitemap records: one run's reading order (walk.reading_place) --------------------------
EN, JA = SITE + "/en/sitemap.xml", SITE + "/ja/sitemap.xml"
PLACES = {EN: "01000000000000", JA: "01000000000001"}  # the index lists en, then ja


def listed(path: str, sitemap: str, source: str = "sitemap", **more) -> dict:
    return {"url": SITE + path, "source": source, "sitemap": sitemap, "sources": [sitemap], **more}


def test_a_loc_listing_beats_an_alternate_read_before_it():
    """en (read first) names /x as an hreflang alternate, ja lists it as a <loc>: the
    record is ja's listing, its sources in reading order (en, then ja), at the place /x
    first entered (as one run upgrades the alternate's record in place)."""
    lines = [
        line(listed("/a", EN, slug="a")),
        line(listed("/x", EN, source="alternate", lastmod=None)),
        line(listed("/b", JA, slug="b")),
        line(listed("/x", JA, lastmod="2024-01-01")),
    ]
    merged = merge_records(lines, {}, PLACES)
    assert [r["url"] for r in merged] == [SITE + "/a", SITE + "/x", SITE + "/b"]
    x = merged[1]
    assert (x["source"], x["sitemap"], x["lastmod"]) == ("sitemap", JA, "2024-01-01")
    assert x["sources"] == [EN, JA]


def test_the_first_listing_in_reading_order_wins_whichever_worker_sent_it():
    ja_first = [line(listed("/y", JA, priority=0.1)), line(listed("/y", EN, priority=0.9))]
    (y,) = merge_records(ja_first, {}, PLACES)
    assert (y["sitemap"], y["priority"], y["sources"]) == (EN, 0.9, [EN, JA])


def test_the_jobs_slugs_follow_the_reading_order():
    """/a-b/ (en) and /A-B (ja) share the base slug 'a-b'; each worker, reading one of
    them, gave its own 'a-b'. The job's: the first entered keeps it, the next is
    numbered, as one run allocates."""
    lines = [line(listed("/A-B", JA, slug="a-b")), line(listed("/a-b/", EN, slug="a-b"))]
    merged = merge_records(lines, {}, PLACES)
    allocate_slugs(merged)
    assert [(r["url"], r["slug"]) for r in merged] == [
        (SITE + "/a-b/", "a-b"),
        (SITE + "/A-B", "a-b-2"),
    ]
