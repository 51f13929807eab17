"""The link crawl's own account (``_crawl-log.json`` → ``discovery.crawl``) and, in union
mode, which URLs were listed by a sitemap, linked from a page, or both.

Counts are exact; lists are capped (``CRAWL_LOG_LIST_CAP``) like the rest of the crawl
log. Membership is kept as 64-bit fingerprints (``SeenSet``), never as URL lists.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from discovery_crawler.run_record import CappedList
from discovery_crawler.urls.normalize import twin_key
from discovery_crawler.urls.seen import SeenSet


class UnionTally:
    """Union mode: each URL is listed (a sitemap names it), linked (a fetched page links
    to it, or it is the seed), or both. ``sitemap_only`` pages are orphans; ``links_only``
    pages are missing from every sitemap. Counts move as sightings arrive, so they are
    exact at any time; the samples keep the first ``cap`` current members."""

    def __init__(self, cap: int):
        self.cap = cap
        self._listed = SeenSet(min_slots=1 << 14)
        self._linked = SeenSet(min_slots=1 << 14)
        self.both = 0
        self._only: dict[str, dict[str, str]] = {"sitemap_only": {}, "links_only": {}}
        self._counts: Counter[str] = Counter(sitemap_only=0, links_only=0)

    def _move(self, key: str, url: str, gained: str, other: SeenSet) -> None:
        lost = "links_only" if gained == "sitemap_only" else "sitemap_only"
        if key in other:  # the other side saw it first: now both
            self.both += 1
            self._counts[lost] -= 1
            self._only[lost].pop(key, None)
        else:
            self._counts[gained] += 1
            sample = self._only[gained]
            if len(sample) < self.cap:
                sample[key] = url

    def listed(self, key: str, url: str) -> None:
        """A sitemap lists ``url`` (``key``: its twin key)."""
        if self._listed.add(key):
            self._move(key, url, "sitemap_only", self._linked)

    def linked(self, key: str, url: str) -> None:
        """A fetched page links to ``url`` (or it is the seed)."""
        if self._linked.add(key):
            self._move(key, url, "links_only", self._listed)

    def is_listed(self, url: str) -> bool:
        """A sitemap lists ``url`` (or its trailing-slash twin)."""
        return twin_key(url) in self._listed

    def flags_for(self, url: str) -> list[str] | None:
        """The union flag of a feed record, decided once the crawl is over."""
        key = twin_key(url)
        listed = key in self._listed
        linked = key in self._linked
        if listed and not linked:
            return ["sitemap_only"]
        if linked and not listed:
            return ["links_only"]
        return None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"listed": len(self._listed), "linked": len(self._linked)}
        for name in ("sitemap_only", "links_only"):
            items = list(self._only[name].values())
            out[name] = {"count": self._counts[name], "listed": len(items), "items": items}
        out["both"] = self.both
        return out


class CrawlAccount:
    """What the link crawl did: pages requested and fetched, budgets, what was not
    fetched and why, canonical aliases, redirects, refusals."""

    def __init__(self, list_cap: int, max_pages: int | None, max_depth: int | None):
        self.max_pages = max_pages
        self.max_depth = max_depth
        self.requested = 0  # page requests admitted to the scheduler (max_pages counts these)
        self.fetched = 0  # responses that reached the callback
        self.status: Counter[int] = Counter()
        self.depths: Counter[int] = Counter()  # pages fetched per depth
        self.not_fetched: Counter[str] = Counter()  # reason -> URLs recorded, not requested
        self.nofollow = 0  # <a rel=nofollow> links skipped
        self.nofollow_pages = 0  # pages with <meta name=robots content=nofollow>
        self.malformed_links = 0
        self.other_host_links = 0
        self.canonical_aliases = CappedList(list_cap)
        self.redirects = CappedList(list_cap)
        self.truncated = CappedList(list_cap)  # pages over PAGE_MAX_BYTES, parsed in part
        self.refusals = CappedList(list_cap)
        self.refusal_classes: Counter[str] = Counter()
        self.union: UnionTally | None = None

    def refused(self, url: str, refusal: dict[str, Any], found_on: str | None) -> None:
        self.refusal_classes[str(refusal.get("class"))] += 1
        self.refusals.append({"url": url, **refusal, "found_on": found_on})

    def as_dict(self) -> dict[str, Any]:
        out = {
            "max_pages": self.max_pages,
            "max_depth": self.max_depth,
            "requested": self.requested,
            "fetched": self.fetched,
            "status": {str(k): v for k, v in sorted(self.status.items())},
            "pages_per_depth": {str(k): v for k, v in sorted(self.depths.items())},
            "not_fetched": dict(sorted(self.not_fetched.items())),
            "nofollow_links": self.nofollow,
            "nofollow_pages": self.nofollow_pages,
            "malformed_links": self.malformed_links,
            "other_host_links": self.other_host_links,
            "canonical_aliases": self.canonical_aliases.as_dict(),
            "redirects": self.redirects.as_dict(),
            "truncated": self.truncated.as_dict(),
            "refusals": {"by_class": dict(self.refusal_classes), **self.refusals.as_dict()},
        }
        if self.union is not None:
            out["union"] = self.union.as_dict()
        return out
