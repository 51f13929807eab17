"""``pipelines/dedup.py`` on its own: one record per URL, the URL limit held."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from discovery_crawler.pipelines.dedup import DedupPipeline
from tests.pipelines.helpers import SITE, SITEMAP, build, crawler_for, records_batch, run_for


def test_a_url_is_kept_once_and_its_other_sitemap_remembered():
    crawler = crawler_for()
    run = run_for(crawler)
    stage = build(DedupPipeline, crawler)
    first = records_batch("/a/", "/b/")
    stage.process_item(first)
    again = records_batch("/a/", "/c/", sitemap=SITE + "/other.xml")
    stage.process_item(again)
    assert [r["url"] for r in again.records] == [SITE + "/c/"]
    assert run.record.counts["unique"] == 3 and run.record.counts["duplicates"] == 1
    assert run.record.seen.sources_of(SITE + "/a/") == [SITE + "/other.xml"]
    assert again.seen is run.record.seen


def test_slash_twins_are_one_record():
    crawler = crawler_for()
    run = run_for(crawler)
    stage = build(DedupPipeline, crawler)
    stage.process_item(records_batch("/a"))
    later = records_batch("/a/")
    stage.process_item(later)
    assert later.records == []
    assert run.record.counts["slash_twins"] == 1


def test_the_url_limit_is_held_exactly():
    crawler = crawler_for({"SITEMAP_MAX_URLS": 2})
    run = run_for(crawler)
    stage = build(DedupPipeline, crawler)
    batch = records_batch("/a/", "/b/", "/c/")
    stage.process_item(batch)
    assert len(batch.records) == 2
    assert run.record.counts["over_limit"] == 1
    assert run.record.limits["SITEMAP_MAX_URLS"]["kept"] == 2


def test_a_batch_of_new_urls_and_a_batch_with_duplicates_keep_the_same_books():
    # All new (one add_many each for alternates and slashless keys), then the same URLs
    # met again within one batch, where each duplicate reads what came before it.
    for first, second in ((("/a", "/x/"), ("/a/", "/x/")), ((), ("/a", "/x/", "/a/", "/x/"))):
        crawler = crawler_for()
        run = run_for(crawler)
        stage = build(DedupPipeline, crawler)
        batch = records_batch(*first)
        if first:
            batch.records[1]["source"] = "alternate"
        stage.process_item(batch)
        later = records_batch(*second)
        if not first:
            later.records[1]["source"] = "alternate"
        stage.process_item(later)
        counts = run.record.counts
        assert counts["unique"] == 2 and counts["slash_twins"] == 1
        assert counts["alternate_only"] == 0  # the alternate was then listed
        assert [r["url"] for r in batch.records + later.records] == [SITE + "/a", SITE + "/x/"]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(
                st.sampled_from(["/a", "/a/", "/b/", "/b", "/c/", "/d", "/e/"]),
                st.booleans(),  # an hreflang alternate
                st.sampled_from([SITEMAP, SITE + "/other.xml"]),
            ),
            min_size=1,
            max_size=8,
        ),
        min_size=1,
        max_size=4,
    )
)
def test_without_a_limit_the_books_are_those_kept_record_by_record(batches):
    """No URL limit: a batch's new records admitted at once, then its duplicates one by
    one, keep the same records and books as under a limit never reached (where each
    record is taken in turn)."""
    outcomes = []
    for settings_dict in ({}, {"SITEMAP_MAX_URLS": 10**9}):
        crawler = crawler_for(settings_dict)
        run = run_for(crawler)
        stage = build(DedupPipeline, crawler)
        kept = []
        for rows in batches:
            batch = records_batch(*(path for path, _, _ in rows))
            for rec, (_, alternate, sitemap) in zip(batch.records, rows, strict=True):
                rec["source"] = "alternate" if alternate else "sitemap"
                rec["sitemap"] = sitemap
            stage.process_item(batch)
            kept.append([(r["url"], r["source"]) for r in batch.records])
        seen = run.record.seen
        urls = sorted({SITE + path for rows in batches for path, _, _ in rows})
        outcomes.append(
            (
                kept,
                {k: v for k, v in run.record.counts.items() if k != "over_limit"},
                [seen.sources_of(url) for url in urls],
                sorted(map(str, seen.upgrades.values())),
            )
        )
    assert outcomes[0] == outcomes[1]
