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
    note: str | None = None  # how it was read when not as it says (a urlset of sitemaps)
    # Not read after its retries: server_error (a 5xx), timeout or network (``unread.py``);
    # None when it was read, or when the site's answer (a 404, a 403) says why not.
    failure_class: str | None = None

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


_SITEMAP_SUFFIXES = (".xml", ".xml.gz")


class SitemapListing:
    """Whether every location a ``<urlset>`` lists is a sitemap document (a path ending in
    ``.xml`` or ``.xml.gz``): such a urlset is an index written as a urlset, and its
    locations are tried as child sitemaps. Fed a batch at a time; a document whose first
    location is not one costs one ``endswith``, and the locations are only kept while all
    of them are."""

    __slots__ = ("locations", "possible")

    def __init__(self) -> None:
        self.possible: bool | None = None  # None until the first location is seen
        self.locations: list[str] = []

    def admits(self, first: str) -> bool:
        """Whether a batch whose first location is ``first`` is to be ``see``n: False,
        for good, once a location is not a sitemap's."""
        if self.possible is None and not _looks_like_sitemap(first):
            self.possible = False
        return self.possible is not False

    def see(self, locations: list[str]) -> None:
        """The next batch's locations (raw or normalized; '' for an unreadable one)."""
        if self.possible is False or not locations:
            return
        readable = [loc for loc in locations if loc]
        if all(map(_looks_like_sitemap, readable)):
            self.possible = True
            self.locations.extend(readable)
        else:
            self.possible = False
            self.locations = []


def _looks_like_sitemap(location: str) -> bool:
    return location.strip().lower().endswith(_SITEMAP_SUFFIXES)


def content_preference(url: str) -> int:
    """Higher for sitemaps whose names look like content; used to order truncation."""
    name = url.rsplit("/", 1)[-1]
    score = 0
    if _CONTENT.search(name):
        score += 1
    if _NON_CONTENT.search(name):
        score -= 1
    return score
