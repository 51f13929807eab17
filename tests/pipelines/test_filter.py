"""``pipelines/filter.py`` on its own: kinds, drops with their reason, auth flags."""

from __future__ import annotations

from discovery_crawler.pipelines.filter import FilterPipeline
from tests.pipelines.helpers import SITE, build, crawler_for, records_batch, run_for


def test_kinds_drops_and_flags():
    crawler = crawler_for(exclude_paths="/private")
    run = run_for(crawler)
    run.name_site(SITE)
    stage = build(FilterPipeline, crawler)
    batch = records_batch("/a/", "/style.css", "/report.pdf", "/private/x/", "/account/")
    stage.process_item(batch)
    kept = {r["url"][len(SITE) :]: r for r in batch.records}
    assert set(kept) == {"/a/", "/report.pdf", "/account/"}
    assert kept["/report.pdf"]["kind"] == "document"
    assert kept["/account/"]["flags"] == ["requires_auth"]
    record = run.record
    assert record.filtered["asset"] == 1 and record.filtered["exclude_paths"] == 1
    assert record.kinds["page"] == 3 and record.kinds["asset"] == 1
