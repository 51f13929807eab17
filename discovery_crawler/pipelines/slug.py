"""Slug stage (SPEC §10): every kept URL gets a slug, unique within the site in discovery
order and filesystem-safe everywhere (rules in ``urls/slugs.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from discovery_crawler.items import UrlBatch
from discovery_crawler.urls.slugs import SlugAllocator, normalized_paths

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler


class SlugPipeline:
    """Assigns slugs to the records of each batch."""

    def __init__(self, crawler: Crawler):
        self.crawler = crawler
        self.allocator = SlugAllocator()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def process_item(self, item: Any) -> Any:
        if not isinstance(item, UrlBatch) or not item.records:
            return item
        records = item.records
        urls = [rec["url"] for rec in records]
        for rec, slug in zip(
            records, self.allocator.slugs_many(urls, normalized_paths(urls)), strict=True
        ):
            rec["slug"] = slug
        return item
