"""What every batch stage shares: built from the crawler (``from_crawler``), reporting to
its stats collector, and bound to the run (``extensions/run.py``) it works for — its
record and options — when it is built. Without a run the stage is off (``NotConfigured``).

A stage is tested on its own: ``get_crawler(settings_dict={"EXTENSIONS": {DiscoveryRun:
0}, "DISCOVERY_RUN": {...}})``, ``build_from_crawler(Stage, crawler)``, then batches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.exceptions import NotConfigured

from discovery_crawler.extensions.run import run_of
from discovery_crawler.items import UrlBatch
from discovery_crawler.sitemaps.facts import FROM_URL, UrlFacts, all_holding

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler


class BatchStage:
    """Base of the item pipelines that work on ``UrlBatch`` items."""

    def __init__(self, crawler: Crawler):
        run = run_of(crawler)
        if run is None:
            raise NotConfigured  # not a discovery run: nothing to do (no message needed)
        self.crawler = crawler
        self.stats = crawler.stats
        self.run = run
        self.record = run.record
        self.options = run.options

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)


def worker_facts(item: UrlBatch) -> list[UrlFacts] | None:
    """The sitemap worker's facts of every record of the batch that depend on its URL
    alone (``facts.FROM_URL``), or None when the batch was not worked out there or a
    record has none that holds (an alternate, a URL a stage changed)."""
    if item.normalized is None:
        return None
    return all_holding(item.records, FROM_URL)
