"""What every batch stage shares: built from the crawler (``from_crawler``), reporting to
its stats collector, and bound at ``open_spider`` to the run's record and options."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from discovery_crawler.items import URL_FACTS, UrlBatch

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

    from discovery_crawler.arguments import RunOptions
    from discovery_crawler.run_record import RunRecord


class BatchStage:
    """Base of the item pipelines that work on ``UrlBatch`` items."""

    record: RunRecord
    options: RunOptions

    def __init__(self, crawler: Crawler):
        self.crawler = crawler
        self.stats = crawler.stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def open_spider(self) -> None:
        spider: Any = self.crawler.spider
        self.record = spider.record
        self.options = spider.options


def worker_facts(item: UrlBatch) -> list[tuple[Any, ...]] | None:
    """The sitemap worker's facts of every record of the batch (``items.URL_FACTS``), or
    None when the batch was not worked out there or a record has none (an alternate)."""
    if item.normalized is None:
        return None
    facts = [rec.get(URL_FACTS) for rec in item.records]
    return None if None in facts else facts
