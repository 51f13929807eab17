"""Union stage (mode ``union``, SPEC §3): sitemap URLs seed the link crawl.

Sits between normalize and dedup: it sees every normalized sitemap record, tells the
spider each one is listed (for the ``sitemap_only`` / ``links_only`` marks), and hands the
URLs not yet known to the spider, which enqueues them at depth 1 with ``via`` sitemap.
Those records leave the batch and are written when their page is fetched (with its
title and status); the rest go on to dedup as in sitemap mode.
"""

from __future__ import annotations

from typing import Any

from discovery_crawler.items import UrlBatch
from discovery_crawler.pipelines.base import BatchStage


class UnionPipeline(BatchStage):
    """Feeds normalized sitemap URLs to the link crawl."""

    def process_item(self, item: Any) -> Any:
        if not isinstance(item, UrlBatch) or item.deduplicated or not item.records:
            return item
        admit = getattr(self.crawler.spider, "admit_listed", None)
        if admit is not None:
            item.records = admit(item.records, item.document)
        return item
