"""Items. The unit of work is a batch (SPEC §2): one item carries up to
``DISCOVERY_BATCH_SIZE`` discovered URLs from one document, because Scrapy's per-item
cost (~60 µs) would otherwise cap a sitemap walk under 10k URLs/s.

A batch enters the pipelines with raw sitemap ``entries`` and leaves them with
``records`` — one dict per URL with the feed's fields (``RECORD_FIELDS``); the feed
exporters write one line per record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from discovery_crawler.sitemaps.parser import Entry
    from discovery_crawler.urls.seen import SeenSet

# The feed's columns, in order (SPEC §10; later stages add score, title, ...). JSON feeds
# carry STAGE_FIELDS only when the URL stages produced them; CSV always has every column.
RECORD_FIELDS = (
    "url",
    "source",  # sitemap | alternate | link | seed | robots
    "sitemap",  # the sitemap that listed it first
    "sources",  # every sitemap that listed it
    "lastmod",
    "priority",
    "changefreq",
    "alternates",  # [{"hreflang": ..., "href": ...}] from xhtml:link
    "kind",  # page | paginated | api | asset | document | media | archive
    "flags",  # ["requires_auth", ...]
    "slug",  # unique within the site, stable across re-runs
    "score",  # the selection score (SPEC §8); its breakdown is in the crawl log
)
STAGE_FIELDS = ("kind", "flags", "slug", "score")
BASE_FIELDS = RECORD_FIELDS[: -len(STAGE_FIELDS)]


@dataclass(repr=False)
class UrlBatch:
    """Up to a batch of URLs discovered in one document."""

    source: str  # how the URLs were found: sitemap | link | ...
    document: str  # URL of the document they came from (base for relative locations)
    entries: list[Entry] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    # Not exported: lets the feed exporters merge sources of duplicates at the end.
    seen: SeenSet | None = None

    def __repr__(self) -> str:  # Scrapy logs items; never log 1,000 URLs
        count = len(self.records) or len(self.entries)
        return f"<UrlBatch {count} URLs from {self.document}>"
