"""Junk stage (SPEC §7): drafts, samples, test pages and campaign one-offs that CMSs leave in
sitemaps are **flagged**, not dropped: the record keeps its place in the inventory with the
flag ``junk`` and its ``junk_pattern``, the selection never keeps it (it is still scored), and
the crawl log lists it under ``discovery.flagged_as_junk`` with the pattern.

The pattern table lives in ``urls/junk.py``. ``-a junk_filter=0`` turns the stage off (no
flag at all); URLs named in ``-a pages=`` (by slug or by path) are never flagged.
``JUNK_IN_FEED = False`` (the ``sample`` profile) leaves the flagged records out of the feed
as well: counted (``filtered.junk``) and listed all the same.
"""

from __future__ import annotations

from operator import itemgetter
from typing import TYPE_CHECKING, Any

from discovery_crawler.items import UrlBatch
from discovery_crawler.pipelines.base import BatchStage, worker_facts
from discovery_crawler.sitemaps.facts import UrlFacts
from discovery_crawler.urls.junk import junk_patterns_many
from discovery_crawler.urls.normalize import UrlError, normalize
from discovery_crawler.urls.slugs import base_slug, normalized_paths, path_of

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

_JUNK = itemgetter(UrlFacts._fields.index("junk"))

JUNK = "junk"


class JunkFilterPipeline(BatchStage):
    """Flags likely-junk URLs with the pattern that matched (or drops them from the feed)."""

    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        options = self.options
        self.enabled = options.junk_filter
        self.in_feed = self.crawler.settings.getbool("JUNK_IN_FEED", True)
        self.record.junk_in_feed = self.in_feed
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
            names = list(map(_JUNK, worked))
        else:
            paths = normalized_paths([rec["url"] for rec in records])
            names = [p.name if p is not None else None for p in junk_patterns_many(paths)]
        if not any(names):
            return item
        flagged = 0
        dropped = []
        for i, (rec, name) in enumerate(zip(records, names, strict=True)):
            if name is None:
                continue
            url = rec["url"]
            path = normalized_paths([url])[0]
            if self._exempt(url, path):
                continue
            self.record.junk.append({"url": url, "path": path, "pattern": name})
            flagged += 1
            if not self.in_feed:
                dropped.append(i)
                continue
            flags = rec.get("flags")
            rec["flags"] = [*flags, JUNK] if flags else [JUNK]
            rec["junk_pattern"] = name
        if not flagged:
            return item
        # The sitemap worker's lines say "no flags": they do not stand for this batch.
        item.worked = None
        item.junk += flagged - len(dropped)
        if dropped:
            gone = set(dropped)
            item.records = [rec for i, rec in enumerate(records) if i not in gone]
            self.record.filtered[JUNK] += len(dropped)
            self.stats.inc_value("discovery/urls/filtered/junk", len(dropped))
        self.stats.inc_value("discovery/urls/flagged/junk", flagged)
        return item
