"""Items. The unit of work is a batch (SPEC §2): one item carries up to
``DISCOVERY_BATCH_SIZE`` discovered URLs from one document, because Scrapy's per-item
cost would otherwise cap a sitemap walk far below the speed a site of millions of URLs
needs (SPEC §2, bench/README.md).

A batch enters the pipelines with raw sitemap ``entries`` and leaves them with
``records`` — one dict per URL with the feed's fields (``RECORD_FIELDS``); the feed
exporters write one line per record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from discovery_crawler.record_fields import CRAWL, EXTRA, LISTING, STAGE, names

if TYPE_CHECKING:
    from discovery_crawler.sitemaps.parser import Entry
    from discovery_crawler.urls.seen import SeenSet

# The feed's columns, in order, and its parts: declared once in ``record_fields`` (SPEC §10).
# JSON feeds carry STAGE_FIELDS only when the URL stages produced them, CRAWL_FIELDS on
# link-crawl records, EXTRA_FIELDS when the record has them; CSV always has every column.
RECORD_FIELDS = names()
BASE_FIELDS = names(LISTING)
CRAWL_FIELDS = names(CRAWL)
STAGE_FIELDS = names(STAGE)
# A stage that sets one of these on a record of a batch carrying the sitemap worker's lines
# (``UrlBatch.worked``) clears ``worked``: those lines have no extra fields.
EXTRA_FIELDS = names(EXTRA)


@dataclass(repr=False)
class UrlBatch:
    """Up to a batch of URLs discovered in one document."""

    source: str  # how the URLs were found: sitemap | link | ...
    document: str  # URL of the document they came from (base for relative locations)
    entries: list[Entry] = field(default_factory=list)
    # From the sitemap worker: the batch in columns (``sitemaps.facts.worked_batch``), which
    # the normalize stage turns into records (or entries) — never both this and entries.
    columns: tuple[Any, ...] | None = None
    records: list[dict[str, Any]] = field(default_factory=list)
    # Not exported: lets the feed exporters merge sources of duplicates at the end.
    seen: SeenSet | None = None
    # Link-crawl batches are deduplicated by the link crawl (its seen-set is ``seen``).
    deduplicated: bool = False
    # Parsed in the sitemap worker: each entry's loc is already normalized (or a UrlError),
    # with this ``OriginCache.version`` of the run's origin rewrites.
    normalized: int | None = None
    # ... and the site its filter decisions were made for (None: not made there).
    decided_for: str | None = None
    # From the sitemap worker on a first run, while every record keeps what the worker
    # assumed: its feed lines' heads and tails and its state.json entries, one per record.
    # A stage that drops records makes the lengths differ; the slug stage clears it when a
    # base slug was taken (``feed_lines.worked_text``, ``RunState.observe``).
    worked: tuple[list[str], list[str], list[str]] | None = None
    # Union mode: flags decided when the crawl is over (``flags_for(url)``), applied by
    # the feed exporters when they finish.
    finals: Any = None
    # Records the junk stage flagged ``junk`` (the selector skips them; 0: look at none).
    junk: int = 0

    def __repr__(self) -> str:  # Scrapy logs items; never log 1,000 URLs
        count = len(self.records) or len(self.entries) or (self.columns or (0,))[0]
        return f"<UrlBatch {count} URLs from {self.document}>"
