"""``pipelines/crawl_log.py`` on its own: what leaves is counted, the run appended."""

from __future__ import annotations

import json

from discovery_crawler.output.crawl_log import CRAWL_LOG_NAME
from discovery_crawler.pipelines.crawl_log import CrawlLogPipeline
from tests.pipelines.helpers import SITE, build, crawler_for, records_batch, run_for


def test_discovered_is_what_leaves_and_the_run_is_written(tmp_path):
    crawler = crawler_for({"REPORT_ENABLED": False}, out=str(tmp_path))
    run = run_for(crawler)
    run.name_site(SITE)
    stage = build(CrawlLogPipeline, crawler)
    stage.process_item(records_batch("/a/", "/b/"))
    assert run.record.counts["discovered"] == 2
    stage.spider_closed("finished")
    log = json.loads((tmp_path / CRAWL_LOG_NAME).read_text())
    [entry] = log["runs"]
    assert entry["finish_reason"] == "finished"
    assert entry["discovery"]["counts"]["discovered"] == 2


def test_depths_count_every_record_that_leaves_by_click_and_path_depth(tmp_path):
    crawler = crawler_for({"REPORT_ENABLED": False}, out=str(tmp_path))
    run = run_for(crawler)
    run.name_site(SITE)
    stage = build(CrawlLogPipeline, crawler)
    stage.process_item(records_batch("/", "/a/", "/a/b/c"))  # sitemap records: no depth
    links = records_batch("/x", "/x/y/", "/x/y/?q=/1/2", source="link")
    for rec, depth in zip(links.records, (0, 1, 2), strict=True):
        rec["depth"] = depth
    stage.process_item(links)
    stage.spider_closed("finished")
    [entry] = json.loads((tmp_path / CRAWL_LOG_NAME).read_text())["runs"]
    depths = entry["discovery"]["depths"]
    assert depths == {
        "click": {"0": 1, "1": 1, "2": 1},
        "click_none": 3,
        "path": {"0": 1, "1": 2, "2": 2, "3": 1},
    }
    discovered = entry["discovery"]["counts"]["discovered"]
    assert sum(depths["click"].values()) + depths["click_none"] == discovered == 6
    assert sum(depths["path"].values()) == discovered
