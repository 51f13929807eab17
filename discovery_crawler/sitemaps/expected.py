"""How many URLs a sitemap walk will list, estimated as its urlsets are read.

Why: the per-URL tables (``urls.seen.SeenSet``) double at 70% load, and each doubling
rehashes every fingerprint in a Python loop — on a large walk the dedup set and the slug
allocator rehash their fingerprints again and again, a noticeable part of the spider's CPU,
and each doubling briefly holds the old and the new table at once. Sized from an estimate
after the first urlset, each table resizes once, while it is small.
"""

from __future__ import annotations


class ExpectedUrls:
    """URLs per urlset read so far × urlsets read and still to read, capped at ``cap``
    (``INVENTORY_RESERVE_URLS``; an estimate can be wrong, a table past the cap grows as
    URLs arrive)."""

    __slots__ = ("cap", "estimate", "urls", "urlsets")

    def __init__(self, cap: int) -> None:
        self.cap = max(0, cap)
        self.urlsets = 0
        self.urls = 0
        self.estimate = 0  # the largest estimate given so far

    def urlset_read(self, urls: int, pending: int) -> int | None:
        """A document listing ``urls`` page URLs was read, with ``pending`` other sitemap
        documents still to read; the new estimate if it grew, else None."""
        if urls <= 0 or not self.cap:
            return None
        self.urlsets += 1
        self.urls += urls
        estimate = min(self.cap, self.urls + self.urls * max(0, pending) // self.urlsets)
        if estimate <= self.estimate:
            return None
        self.estimate = estimate
        return estimate
