"""Crawl-log writer: appends the run's record to ``_crawl-log.json`` when the spider
closes (on ``spider_closed``, so the record carries Scrapy's finish reason; once the feeds
are stored, so it says whether they were), and writes ``report.html`` beside it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy import signals

from discovery_crawler.items import UrlBatch
from discovery_crawler.output.crawl_log import append_run
from discovery_crawler.output.report import REPORT_NAME, write_report
from discovery_crawler.pipelines.base import BatchStage
from discovery_crawler.run_record import now_iso

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


class CrawlLogPipeline(BatchStage):
    """Counts what leaves the pipeline, and how deep it is; writes the run record when the
    spider closes."""

    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        # Named up front: the end-of-run summary is logged before this stage writes.
        if crawler.settings.getbool("REPORT_ENABLED", True):
            self.record.report_path = self.run.crawl_log_path.with_name(REPORT_NAME)
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)

    async def _spider_closed(self, reason: str) -> None:
        await self.run.feeds_stored()  # the feed's fate in the log
        self.spider_closed(reason)

    def process_item(self, item: Any) -> Any:
        # Last stage: what leaves here is the inventory (one feed line per record).
        if isinstance(item, UrlBatch) and item.records:
            count = len(item.records)
            self.record.counts["discovered"] += count
            self.record.depths.add_many(item.records)
            self.stats.inc_value("discovery/urls/discovered", count)
        return item

    def spider_closed(self, reason: str) -> None:
        record = self.record
        self.run.finish(reason)
        record.finished_at = now_iso()
        run = record.as_dict()
        path = self.run.crawl_log_path
        try:
            append_run(path, run)
        except OSError as exc:
            self.run.output_failed(path, exc)
        report_path = record.report_path
        if report_path is not None:
            try:
                write_report(report_path, run)
            except OSError as exc:
                self.run.output_failed(report_path, exc)
