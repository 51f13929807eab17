"""``pipelines/verify.py`` on its own: on only with -a verify=1."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy.exceptions import NotConfigured

from discovery_crawler.pipelines.verify import VerifyPipeline, VerifyTallyPipeline
from discovery_crawler.verdicts import VerifyTally
from tests.pipelines.helpers import build, crawler_for, records_batch, run_for


class Verifier:
    def verify_listed(self, records: list[dict[str, Any]], sitemap: str) -> list[dict[str, Any]]:
        return records[1:]  # the first one is held for its fetch


def test_off_without_verify_and_the_holding_stage_off_in_union_mode():
    with pytest.raises(NotConfigured):
        build(VerifyPipeline, crawler_for())
    with pytest.raises(NotConfigured):
        build(VerifyTallyPipeline, crawler_for())
    with pytest.raises(NotConfigured):
        build(VerifyPipeline, crawler_for(mode="union", verify="1"))
    build(VerifyTallyPipeline, crawler_for(mode="union", verify="1"))


def test_pages_to_verify_leave_their_batch():
    crawler = crawler_for(verify="1")
    run_for(crawler).verifier = Verifier()
    stage = build(VerifyPipeline, crawler)
    batch = records_batch("/a/", "/b/")
    batch.worked = (["h", "h"], ["t", "t"], ["s", "s"])
    stage.process_item(batch)
    assert [r["url"] for r in batch.records] == ["https://example.com/b/"]
    assert batch.worked is None


def test_the_tally_counts_what_leaves():
    crawler = crawler_for(verify="1")
    run = run_for(crawler)
    run.record.verify = VerifyTally(10, mode="fetch", method="HEAD", host_interval=0)
    stage = build(VerifyTallyPipeline, crawler)
    stage.process_item(records_batch("/a/", "/b/"))
    assert run.record.verify.as_dict()["advertised"] == 2
