"""Crawl-log writer: at the end of a run, append the run's record to ``_crawl-log.json``."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from discovery_crawler.output.crawl_log import append_run
from discovery_crawler.run_record import now_iso

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


class CrawlLogPipeline:
    """Passes items through; writes the run record when the spider closes."""

    def __init__(self, crawler: Crawler):
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def process_item(self, item: Any) -> Any:
        return item

    def close_spider(self) -> None:
        spider = self.crawler.spider
        record = spider.record  # type: ignore[union-attr]
        record.finished_at = now_iso()
        record.finish_reason = self.crawler.stats.get_value("finish_reason")
        spider.finalize_record()  # type: ignore[union-attr]
        path = append_run(spider.out_dir, record.as_dict())  # type: ignore[union-attr]
        spider.crawl_log_path = path  # type: ignore[union-attr]
