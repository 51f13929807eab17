"""Junk filter stage (SPEC §7): drafts, samples, test pages and campaign one-offs that
CMSs leave in sitemaps are dropped, each with the pattern that matched.

The pattern table lives in ``urls/junk.py``. ``-a junk_filter=0`` turns the stage off;
URLs named in ``-a pages=`` (by slug or by path) are never filtered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from discovery_crawler.items import UrlBatch
from discovery_crawler.pipelines.base import BatchStage, worker_facts
from discovery_crawler.urls.junk import junk_patterns_many
from discovery_crawler.urls.normalize import UrlError, normalize
from discovery_crawler.urls.slugs import base_slug, normalized_paths, path_of

if TYPE_CHECKING:
    pass


class JunkFilterPipeline(BatchStage):
    """Drops likely-junk URLs, recording the pattern for each."""

    def open_spider(self) -> None:
        super().open_spider()
        options = self.options
        self.enabled = options.junk_filter
        # -a pages= names pages by slug, path or full URL; none of them is ever junk.
        wanted = set(options.pages)
        self.exempt_slugs = wanted
        self.exempt_paths = set()
        for page in wanted:
            if "://" in page:
                try:
                    page = path_of(normalize(page))
                except UrlError:
                    continue
            self.exempt_paths.add(page if page.startswith("/") else "/" + page)

    def _exempt(self, url: str, path: str) -> bool:
        if not self.exempt_slugs:
            return False
        return (
            path in self.exempt_paths
            or path.rstrip("/") in self.exempt_paths
            or (base_slug(url) in self.exempt_slugs)
        )

    def process_item(self, item: Any) -> Any:
        if not self.enabled or not isinstance(item, UrlBatch) or not item.records:
            return item
        records = item.records
        worked = worker_facts(item)
        if worked is not None:  # the pattern names the sitemap worker found
            names = [f[7] for f in worked]
        else:
            paths = normalized_paths([rec["url"] for rec in records])
            names = [p.name if p is not None else None for p in junk_patterns_many(paths)]
        if not any(names):
            return item
        kept = []
        junk = 0
        for rec, name in zip(records, names, strict=True):
            if name is not None:
                url = rec["url"]
                path = normalized_paths([url])[0]
                if not self._exempt(url, path):
                    self.record.junk.append({"url": url, "path": path, "pattern": name})
                    junk += 1
                    continue
            kept.append(rec)
        item.records = kept
        if junk:
            self.record.filtered["junk"] += junk
            self.stats.inc_value("discovery/urls/filtered/junk", junk)
        return item
