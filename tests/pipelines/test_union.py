"""``pipelines/union.py`` on its own: on only in union mode, hands records to the crawl."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy.exceptions import NotConfigured

from discovery_crawler.pipelines.union import UnionPipeline
from tests.pipelines.helpers import build, crawler_for, records_batch, run_for


class Links:
    def __init__(self) -> None:
        self.given: list[tuple[list[str], str]] = []

    def admit_listed(self, records: list[dict[str, Any]], sitemap: str) -> list[dict[str, Any]]:
        self.given.append(([r["url"] for r in records], sitemap))
        return records[1:]  # the first one enters the crawl


def test_off_unless_the_run_is_a_union():
    with pytest.raises(NotConfigured):
        build(UnionPipeline, crawler_for())


def test_listed_records_go_to_the_link_crawl():
    crawler = crawler_for(mode="union")
    links = run_for(crawler).links = Links()
    stage = build(UnionPipeline, crawler)
    batch = records_batch("/a/", "/b/")
    stage.process_item(batch)
    assert [r["url"] for r in batch.records] == ["https://example.com/b/"]
    assert links.given == [(["https://example.com/a/", "https://example.com/b/"], batch.document)]
