"""``pipelines/state.py`` on its own: new/known per record, state.json at close."""

from __future__ import annotations

import json

from discovery_crawler.output.state import STATE_NAME
from discovery_crawler.pipelines.state import StatePipeline
from tests.pipelines.helpers import SITE, build, crawler_for, records_batch, run_for


def run_once(tmp_path, *paths: str) -> tuple[list[dict], dict]:
    crawler = crawler_for(out=str(tmp_path))
    run = run_for(crawler)
    run.name_site(SITE)
    run.record.robots = {"status": 200}  # the site answered: removals can be judged
    stage = build(StatePipeline, crawler)
    stage.open_spider()
    assert run.state is stage.state
    batch = records_batch(*paths)
    for i, rec in enumerate(batch.records):
        rec["slug"] = f"s{i}"
    stage.process_item(batch)
    stage.spider_idle()
    stage.close_spider()
    return batch.records, run.record.changes.as_dict()


def test_first_run_then_a_re_run(tmp_path):
    records, changes = run_once(tmp_path, "/a/", "/b/")
    assert [r["change"] for r in records] == ["new", "new"]
    assert changes["state_urls"] == 2
    assert json.loads((tmp_path / STATE_NAME).read_text())["origin"] == SITE
    records, changes = run_once(tmp_path, "/a/", "/c/")
    assert [r["change"] for r in records] == ["known", "new"]
    assert records[0]["slug"] == "s0"  # a known URL keeps its slug
    assert changes["removed"]["count"] == 1
