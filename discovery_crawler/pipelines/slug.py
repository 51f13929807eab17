"""Slug stage (SPEC §10): every kept URL gets a slug, unique within the site in discovery
order and filesystem-safe everywhere (rules in ``urls/slugs.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from discovery_crawler.items import UrlBatch
from discovery_crawler.urls.slugs import SlugAllocator

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
        slug = self.allocator.slug
        for rec in item.records:
            rec["slug"] = slug(rec["url"])
        return item
