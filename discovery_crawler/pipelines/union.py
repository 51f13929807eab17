"""Union stage (mode ``union``, SPEC §3): sitemap URLs seed the link crawl.

Sits between normalize and dedup: it sees every normalized sitemap record, tells the
run's link crawl (``run.links``) each one is listed (for the ``sitemap_only`` /
``links_only`` marks), and hands it the URLs not yet known, which it enqueues at depth 1
with ``via`` sitemap. Those records leave the batch and are written when their page is
fetched (with its title and status); the rest go on to dedup as in sitemap mode. In any
other mode the stage is off (``NotConfigured``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured

from discovery_crawler.items import UrlBatch
from discovery_crawler.pipelines.base import BatchStage

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


class UnionPipeline(BatchStage):
    """Feeds normalized sitemap URLs to the link crawl."""

    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        if self.run.mode != "union":
            raise NotConfigured

    def process_item(self, item: Any) -> Any:
        if not isinstance(item, UrlBatch) or item.deduplicated or not item.records:
            return item
        links = self.run.links
        if links is not None:
            item.records = links.admit_listed(item.records, item.document)
        return item
