"""Indexability stage: each record leaving the pipeline gets its indexability verdict
(``indexing.indexability_of``) on its feed line, and the run's tally counts it — every
record once, those a sitemap lists apart (``N sitemap URLs are not indexable: …``).

It sits after every stage that sets what the verdict reads (flags, fetch fields), just
before the crawl-log stage. A record with nothing to judge (not fetched, no flag) keeps
its line as it was: its verdict, ``unfetched``, is the field's absence.

Off (``NotConfigured``) with ``INDEXABILITY_ENABLED = False``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured

from discovery_crawler.indexing import index_tally
from discovery_crawler.items import UrlBatch
from discovery_crawler.pipelines.base import BatchStage

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


class IndexabilityPipeline(BatchStage):
    """Judges the records that were fetched or flagged; sets ``indexability`` on fetched ones."""

    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        if not crawler.settings.getbool("INDEXABILITY_ENABLED"):
            raise NotConfigured
        self.tally = index_tally(self.record)

    def process_item(self, item: Any) -> Any:
        if not isinstance(item, UrlBatch) or not item.records:
            return item
        if self.tally.observe(item.records):
            item.worked = None  # the worker's lines have no extra field
        return item
