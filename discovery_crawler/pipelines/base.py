"""What every batch stage shares: built from the crawler (``from_crawler``), reporting to
its stats collector, and bound at ``open_spider`` to the run's record and options."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from discovery_crawler.items import UrlBatch
from discovery_crawler.sitemaps.facts import FROM_URL, UrlFacts, all_holding

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


def worker_facts(item: UrlBatch) -> list[UrlFacts] | None:
    """The sitemap worker's facts of every record of the batch that depend on its URL
    alone (``facts.FROM_URL``), or None when the batch was not worked out there or a
    record has none that holds (an alternate, a URL a stage changed)."""
    if item.normalized is None:
        return None
    return all_holding(item.records, FROM_URL)
