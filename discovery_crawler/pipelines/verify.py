"""Verify stages (``-a verify=1``, SPEC §3): listed pages are fetched, and every URL a
sitemap names that the inventory keeps gets one verdict (``discovery_crawler/verdicts.py``).

- ``VerifyPipeline`` (``sitemap`` and ``auto`` modes) sits right after dedup: it hands the
  new listed records to the run's verifier (``crawling/verify.py``), which takes the pages
  to fetch out of the batch and writes each when its answer arrives, in a batch of its
  own that goes through the stages after dedup. Union mode has no such stage: the crawl
  fetches listed pages anyway (``pipelines/union.py``).
- ``VerifyTallyPipeline`` (every mode with verify) sits just before the crawl-log stage:
  it counts the verdict of each advertised record that leaves the pipeline, so only what
  the inventory keeps is counted, and each URL once.

Both are off (``NotConfigured``) when the run does not verify.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured

from discovery_crawler.items import UrlBatch
from discovery_crawler.pipelines.base import BatchStage

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


class VerifyPipeline(BatchStage):
    """Takes the listed pages to verify out of each new sitemap batch."""

    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        if not self.options.verify or self.run.mode == "union":
            raise NotConfigured

    def process_item(self, item: Any) -> Any:
        if not isinstance(item, UrlBatch) or item.deduplicated or not item.records:
            return item
        verifier = self.run.verifier
        if verifier is None:
            return item
        kept = verifier.verify_listed(item.records, item.document)
        if len(kept) != len(item.records) or any("flags" in rec for rec in kept):
            item.worked = None  # the worker's lines were written for the whole batch
        item.records = kept
        return item


class VerifyTallyPipeline(BatchStage):
    """Counts each advertised record's verdict as it leaves the pipeline."""

    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        if not self.options.verify:
            raise NotConfigured

    def process_item(self, item: Any) -> Any:
        tally = self.record.verify
        if tally is None or not isinstance(item, UrlBatch) or not item.records:
            return item
        if tally.observe(item.records):
            item.worked = None
        return item
