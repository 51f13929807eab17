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
    # Citation and fetch (link crawl, SPEC §10): written only on records that have them.
    "via",  # seed | sitemap | link: how the crawl reached it first
    "found_on",  # the page (or sitemap) that named it first
    "anchor",  # that link's text, whitespace collapsed, ≤ 160 characters
    "depth",  # link hops from the seed (a sitemap URL enters at 1)
    "title",  # <title> of the fetched page
    "status",  # HTTP status of the fetch (null: not fetched)
    "refusal",  # {"class": ..., ...} when the fetch did not yield a page (SPEC §11)
    "kind",  # page | paginated | api | asset | document | media | archive
    "flags",  # ["requires_auth", ...]
    "slug",  # unique within the site, stable across re-runs
    "score",  # the selection score (SPEC §8); its breakdown is in the crawl log
    "change",  # since the previous run in this folder: new | known | changed (state.json)
    # Extra fields: on a JSON line only when the record has them (CSV: always a column).
    "robots_rule",  # the robots.txt rule that disallows the URL (flag robots_disallowed)
    "robots_group",  # ... and the group it is in ("*", or our agent token)
    "junk_pattern",  # the junk pattern the URL matched (flag junk, SPEC §7)
    "aliases",  # other URLs that are this page: its trailing-slash twin, a slash redirect
    "redirected_to",  # where a fetch of the URL was sent (a 3xx Location or a meta refresh)
    "live",  # verify: the listed URL answered a page (2xx) without being redirected
    "canonical",  # the other page a fetched page names canonical (flag canonical_elsewhere)
    # indexable, or why not (indexing.REASONS); absent: not fetched, nothing against it
    "indexability",
)
STAGE_FIELDS = ("kind", "flags", "slug", "score", "change")
CRAWL_FIELDS = ("via", "found_on", "anchor", "depth", "title", "status", "refusal")
# A stage that sets one of these on a record of a batch carrying the sitemap worker's lines
# (``UrlBatch.worked``) clears ``worked``: those lines have no extra fields.
EXTRA_FIELDS = (
    "robots_rule",
    "robots_group",
    "junk_pattern",
    "aliases",
    "redirected_to",
    "live",
    "canonical",
    "indexability",
)
BASE_FIELDS = tuple(f for f in RECORD_FIELDS if f not in STAGE_FIELDS + CRAWL_FIELDS + EXTRA_FIELDS)


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
