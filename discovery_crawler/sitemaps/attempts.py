"""Sitemap attempts: one record per address tried, so "found 0 URLs" always says why.

Also the preference used when a document limit binds: sitemaps whose names look like
content are kept before image, video, product, news or partition sitemaps (SPEC §4).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

_CONTENT = re.compile(r"pages?|content|posts?|articles?", re.IGNORECASE)
_NON_CONTENT = re.compile(r"image|video|products?|news|partition", re.IGNORECASE)


@dataclass
class SitemapAttempt:
    """An address tried as a sitemap and what came of it (a ``_crawl-log.json`` row)."""

    url: str
    source: str  # robots | conventional | index | input
    parent: str | None = None  # the index (or robots.txt) that named it
    depth: int = 0  # index nesting: 0 for top-level sitemaps
    status: int | None = None  # HTTP status; None when no response came
    ok: bool = False  # parsed as a sitemap and carried at least one <loc>
    urls: int = 0  # page entries listed
    sitemaps: int = 0  # child sitemaps listed
    index: bool = False
    format: str | None = None  # urlset | sitemapindex | text | rss | atom | html | ...
    gzipped: bool = False
    bytes: int = 0  # decompressed size
    malformed: int = 0  # entries without a usable location
    error: str | None = None  # why it yielded nothing (or stopped early)
    problem: str | None = None  # recovered trouble (malformed XML, truncated gzip)

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def content_preference(url: str) -> int:
    """Higher for sitemaps whose names look like content; used to order truncation."""
    name = url.rsplit("/", 1)[-1]
    score = 0
    if _CONTENT.search(name):
        score += 1
    if _NON_CONTENT.search(name):
        score -= 1
    return score
