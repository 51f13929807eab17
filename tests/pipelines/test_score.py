"""``pipelines/score.py`` on its own: every record scored, the selection the run's."""

from __future__ import annotations

from discovery_crawler.pipelines.score import ScorePipeline
from tests.pipelines.helpers import build, crawler_for, records_batch, run_for


def test_records_are_scored_and_the_best_kept():
    crawler = crawler_for(cap=2)
    run = run_for(crawler)
    stage = build(ScorePipeline, crawler)
    batch = records_batch("/", "/about/", "/blog/2024/05/a-post/", kind="page")
    stage.process_item(batch)
    assert all(isinstance(r["score"], int) for r in batch.records)
    assert run.selection.selector is stage.selector
    stage.close_spider()
    selection = run.record.selection
    assert selection.kept_count == 2
    assert selection.kept[0].url == "https://example.com/"
