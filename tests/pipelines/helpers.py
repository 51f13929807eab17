"""Building batch stages without a crawl: a crawler with a discovery run
(``tests.conftest.run_crawler``), the stage built from it, batches fed to it."""

from __future__ import annotations

from typing import Any

from scrapy.utils.misc import build_from_crawler

from discovery_crawler.extensions.run import DiscoveryRun, run_of
from discovery_crawler.items import UrlBatch
from discovery_crawler.sitemaps.parser import Entry
from tests.conftest import run_crawler

SITE = "https://example.com"
SITEMAP = SITE + "/sitemap.xml"


def crawler_for(settings: dict[str, Any] | None = None, mode: str | None = None, **arguments: Any):
    return run_crawler(SITE + "/", settings, mode, **arguments)


def run_for(crawler: Any) -> DiscoveryRun:
    run = run_of(crawler)
    assert run is not None
    return run


def build(stage: type, crawler: Any) -> Any:
    return build_from_crawler(stage, crawler)


def entries_batch(*locs: str, sitemap: str = SITEMAP, **fields: Any) -> UrlBatch:
    """A sitemap batch as the parser yields it: raw entries."""
    return UrlBatch("sitemap", sitemap, [Entry(loc, **fields) for loc in locs])


def record(path: str, **fields: Any) -> dict[str, Any]:
    """A record as the normalize stage makes it."""
    return {
        "url": SITE + path,
        "source": "sitemap",
        "sitemap": SITEMAP,
        "lastmod": None,
        "priority": None,
        "changefreq": None,
        "alternates": None,
        **fields,
    }


def records_batch(*paths: str, **fields: Any) -> UrlBatch:
    batch = UrlBatch("sitemap", SITEMAP)
    batch.records = [record(p, **fields) for p in paths]
    return batch
