"""Slug stage (SPEC §10): every kept URL gets a slug, unique within the site in discovery
order and filesystem-safe everywhere (rules in ``urls/slugs.py``)."""

from __future__ import annotations

from itertools import repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from discovery_crawler.items import UrlBatch
from discovery_crawler.pipelines.base import BatchStage
from discovery_crawler.signals import urls_expected
from discovery_crawler.sitemaps.facts import FROM_URL, UrlFacts, holding
from discovery_crawler.urls.slugs import bases_many, normalized_paths

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

_URL = itemgetter("url")
_BASE_SLUG = itemgetter(UrlFacts._fields.index("base_slug"))


class SlugPipeline(BatchStage):
    """Assigns slugs to the records of each batch."""

    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        self.allocator = self.run.slugs  # the run's: the slugs given so far
        crawler.signals.connect(self.urls_expected, signal=urls_expected)

    def urls_expected(self, urls: int) -> None:
        """Size the slug table for the walk's estimate (``signals.urls_expected``)."""
        self.allocator.reserve(urls)

    def close_spider(self) -> None:
        stats = self.stats
        stats.set_value("discovery/tables/slugs_bytes", self.allocator.nbytes)
        stats.set_value("discovery/tables/slugs_resizes", self.allocator.resizes)

    def process_item(self, item: Any) -> Any:
        if not isinstance(item, UrlBatch) or not item.records:
            return item
        records = item.records
        if any(map(dict.__contains__, records, repeat("slug"))):  # a C loop, not a genexpr
            # A page the link crawl admitted took its slug then, in its deterministic
            # admission order (``LinkCrawl._bfs_admit``), not in the order pages answer.
            rest = [r for r in records if "slug" not in r]
            if not rest:
                return item
            self._assign(rest, item, None)
            return item
        self._assign(records, item, item.normalized)
        return item

    def _assign(self, records: list[dict[str, Any]], item: UrlBatch, normalized: Any) -> None:
        urls = list(map(_URL, records))
        if normalized is not None:  # base slugs from the sitemap worker
            facts = holding(records, FROM_URL)
            if None not in facts:
                bases = list(map(_BASE_SLUG, facts))
            else:
                bases = [f.base_slug if f else None for f in facts]
            if None in bases:
                missing = [i for i, base in enumerate(bases) if base is None]
                paths = normalized_paths([urls[i] for i in missing])
                for i, base in zip(missing, bases_many(paths), strict=True):
                    bases[i] = base
            slugs = self.allocator.slugs_many(urls, bases=bases)  # type: ignore[arg-type]
            if slugs is not bases:  # a base was taken: the worker's lines do not stand
                item.worked = None
        else:
            slugs = self.allocator.slugs_many(urls, normalized_paths(urls))
        for rec, slug in zip(records, slugs, strict=True):
            rec["slug"] = slug
