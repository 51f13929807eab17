"""Crawl-log writer: appends the run's record to ``_crawl-log.json`` when the spider
closes (on ``spider_closed``, so the record carries Scrapy's finish reason)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import Spider, signals

from discovery_crawler.output.crawl_log import append_run
from discovery_crawler.output.report import REPORT_NAME, write_report
from discovery_crawler.run_record import now_iso

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


class CrawlLogPipeline:
    """Passes items through; writes the run record when the spider closes."""

    def __init__(self, crawler: Crawler):
        self.crawler = crawler
        self.report_enabled = crawler.settings.getbool("REPORT_ENABLED", True)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        pipeline = cls(crawler)
        crawler.signals.connect(pipeline.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(pipeline.spider_closed, signal=signals.spider_closed)
        return pipeline

    def spider_opened(self, spider: Spider) -> None:
        # Named up front: the end-of-run summary is logged before this pipeline writes.
        record = getattr(spider, "record", None)
        log_path = getattr(spider, "crawl_log_path", None)
        if record is not None and log_path is not None and self.report_enabled:
            record.report_path = log_path.with_name(REPORT_NAME)

    def process_item(self, item: Any) -> Any:
        # Last stage: what leaves here is the inventory (one feed line per record).
        records = getattr(item, "records", None)
        if records:
            record = self.crawler.spider.record  # type: ignore[union-attr]
            record.counts["discovered"] += len(records)
            self.crawler.stats.inc_value("discovery/urls/discovered", len(records))
        return item

    def spider_closed(self, spider: Spider, reason: str) -> None:
        record = getattr(spider, "record", None)
        if record is None:
            return
        spider.finalize_record(reason)  # type: ignore[attr-defined]
        record.finished_at = now_iso()
        run = record.as_dict()
        try:
            append_run(spider.crawl_log_path, run)  # type: ignore[attr-defined]
        except OSError as exc:
            logger.error("could not write the crawl log %s: %s", spider.crawl_log_path, exc)  # type: ignore[attr-defined]
        report_path = getattr(record, "report_path", None)
        if report_path is not None:
            try:
                write_report(report_path, run)
            except OSError as exc:
                logger.error("could not write the report %s: %s", report_path, exc)
