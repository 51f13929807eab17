"""``pipelines/junk.py`` on its own: flagged, kept in the feed unless JUNK_IN_FEED is off."""

from __future__ import annotations

from discovery_crawler.pipelines.junk import JunkFilterPipeline
from tests.pipelines.helpers import build, crawler_for, records_batch, run_for


def test_junk_is_flagged_with_its_pattern():
    crawler = crawler_for()
    stage = build(JunkFilterPipeline, crawler)
    batch = records_batch("/test/", "/about/")
    stage.process_item(batch)
    assert [r.get("flags") for r in batch.records] == [["junk"], None]
    assert batch.records[0]["junk_pattern"]
    assert batch.junk == 1
    assert run_for(crawler).record.junk.count == 1


def test_junk_left_out_of_the_feed_when_asked():
    crawler = crawler_for({"JUNK_IN_FEED": False})
    stage = build(JunkFilterPipeline, crawler)
    batch = records_batch("/test/", "/about/")
    stage.process_item(batch)
    assert len(batch.records) == 1
    record = run_for(crawler).record
    assert record.filtered["junk"] == 1 and record.junk_in_feed is False


def test_pages_asked_for_are_never_junk():
    crawler = crawler_for(pages="/test/")
    stage = build(JunkFilterPipeline, crawler)
    batch = records_batch("/test/")
    stage.process_item(batch)
    assert batch.records[0].get("flags") is None
