"""The link crawl's own account (``_crawl-log.json`` → ``discovery.crawl``) and, in union
mode, which URLs were listed by a sitemap, linked from a page, or both.

Counts are exact; lists are capped (``CRAWL_LOG_LIST_CAP``) like the rest of the crawl
log. Membership is kept as 64-bit fingerprints (``SeenSet``), never as URL lists.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from discovery_crawler.run_record import CappedList
from discovery_crawler.urls.normalize import twin_key
from discovery_crawler.urls.seen import SeenSet

SIGHTINGS_BATCH = 1000  # union sightings sent to a distributed job at a time


class UnionTally:
    """Union mode: each URL is listed (a sitemap names it), linked (a fetched page links
    to it, or it is the seed), or both. ``sitemap_only`` pages are orphans; ``links_only``
    pages are missing from every sitemap. Counts move as sightings arrive, so they are
    exact at any time; the samples keep the first ``cap`` current members.

    A flag is a claim about every source of one side, so it is only made when that side
    was read in full (``unread.py``). A page fetch that failed after its retries (5xx,
    timeout, connection) left that page's links unread, and any listed page may be linked
    from it: no page is flagged ``sitemap_only`` — the failed page least of all, which was
    never confirmed either way. A sitemap (or the robots.txt naming them) not read after
    its retries may list any linked page: no page is flagged ``links_only``. The counts
    stay in the crawl log, with ``judged`` false and why."""

    def __init__(self, cap: int):
        self.cap = cap
        self._listed = SeenSet(min_slots=1 << 14)
        self._linked = SeenSet(min_slots=1 << 14)
        self.both = 0
        self._only: dict[str, dict[str, str]] = {"sitemap_only": {}, "links_only": {}}
        self._counts: Counter[str] = Counter(sitemap_only=0, links_only=0)
        self.pages_not_read = 0  # page fetches failed after retries: links not read
        self.sitemaps_not_read = 0  # sitemaps not read after retries
        # A distributed job's workers each see part of both sides: the keys new here go
        # to the job (``sink(side, keys)``, a batch at a time; the finisher flags from
        # the job's sightings). None in a local run.
        self.sink: Callable[[str, list[str]], None] | None = None
        self._unsent: dict[str, list[str]] = {"listed": [], "linked": []}

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
            if self.sink is not None:
                self._send("listed", key)

    def linked(self, key: str, url: str) -> None:
        """A fetched page links to ``url`` (or it is the seed)."""
        if self._linked.add(key):
            self._move(key, url, "links_only", self._listed)
            if self.sink is not None:
                self._send("linked", key)

    def _send(self, side: str, key: str) -> None:
        unsent = self._unsent[side]
        unsent.append(key)
        if len(unsent) >= SIGHTINGS_BATCH:
            self.flush()

    def flush(self) -> None:
        """Every sighting not yet sent, to the job (``sink``)."""
        if self.sink is None:
            return
        for side, keys in self._unsent.items():
            if keys:
                self.sink(side, keys)
                self._unsent[side] = []

    @property
    def listed_count(self) -> int:
        """URLs a sitemap listed so far."""
        return len(self._listed)

    def is_linked(self, key: str) -> bool:
        return key in self._linked

    def is_listed(self, url: str) -> bool:
        """A sitemap lists ``url`` (or its trailing-slash twin)."""
        return twin_key(url) in self._listed

    def page_not_read(self) -> None:
        """A page fetch failed after its retries: its links were not read."""
        self.pages_not_read += 1

    def sitemap_not_read(self) -> None:
        """A sitemap was not read after its retries: what it lists is unknown."""
        self.sitemaps_not_read += 1

    def unjudged(self, name: str) -> str | None:
        """Why flag ``name`` is not given (a source of the side it speaks of was not
        read), or None: it is."""
        if name == "sitemap_only" and self.pages_not_read:
            n = self.pages_not_read
            return (
                f"{n:,} page fetch{'es' if n != 1 else ''} failed after retries: "
                "their links were not read, so no listed page is known to be unlinked"
            )
        if name == "links_only" and self.sitemaps_not_read:
            n = self.sitemaps_not_read
            return (
                f"{n:,} sitemap{'s' if n != 1 else ''} not read after retries: "
                "no linked page is known to be missing from every sitemap"
            )
        return None

    def flags_for(self, url: str) -> list[str] | None:
        """The union flag of a feed record, decided once the crawl is over."""
        key = twin_key(url)
        listed = key in self._listed
        linked = key in self._linked
        if listed and not linked and not self.pages_not_read:
            return ["sitemap_only"]
        if linked and not listed and not self.sitemaps_not_read:
            return ["links_only"]
        return None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"listed": len(self._listed), "linked": len(self._linked)}
        for name in ("sitemap_only", "links_only"):
            items = list(self._only[name].values())
            why = self.unjudged(name)
            out[name] = {
                "count": self._counts[name],
                "listed": len(items),
                "items": items,
                # False: not flagged in the feed (``why``); count and items are candidates
                "judged": why is None,
                **({"why": why} if why else {}),
            }
        out["both"] = self.both
        return out


class CrawlAccount:
    """What the link crawl did: pages requested and fetched, budgets, what was not
    fetched and why, canonical aliases and twins, redirects (slash-only ones apart), meta
    refreshes, redirect loops, refusals.

    ``requested`` counts pages admitted (``max_pages`` binds on it); ``fetched`` counts
    responses, so a page reached through a slash-only redirect counts one request and two
    responses (the redirect is in ``slash_redirects``)."""

    def __init__(self, list_cap: int, max_pages: int | None, max_depth: int | None):
        self.max_pages = max_pages
        self.max_depth = max_depth
        self.requested = 0  # page requests admitted to the scheduler (max_pages counts these)
        # ... of which a sitemap listed (union mode): no page's links grew the frontier
        self.listed_requested = 0
        self.fetched = 0  # responses that reached the callback
        self.failed = 0  # page requests that ended without a response (the errback)
        self.status: Counter[int] = Counter()
        self.depths: Counter[int] = Counter()  # pages fetched per depth
        self.not_fetched: Counter[str] = Counter()  # reason -> URLs recorded, not requested
        self.nofollow = 0  # <a rel=nofollow> links skipped
        self.nofollow_pages = 0  # pages with <meta name=robots content=nofollow>
        self.malformed_links = 0
        self.other_host_links = 0
        self.canonical_aliases = CappedList(list_cap)
        self.canonical_twins = CappedList(list_cap)  # canonical = the trailing-slash twin
        # canonical = another page: the page keeps its record, the canonical is noted on it
        self.canonical_elsewhere = CappedList(list_cap)
        self.canonical_ignored = CappedList(list_cap)  # unusable (an empty path segment)
        self.redirects = CappedList(list_cap)  # every 3xx with a Location
        self.slash_redirects = CappedList(list_cap)  # ... that only added/dropped the slash
        self.refreshes = CappedList(list_cap)  # <meta http-equiv=refresh> followed
        self.redirect_loops = 0  # records flagged redirect_loop
        self.redirected = 0  # records sent to another page (3xx or refresh), target admitted
        self.truncated = CappedList(list_cap)  # pages over PAGE_MAX_BYTES, parsed in part
        self.links_capped = CappedList(list_cap)  # pages over LINKS_PER_PAGE_MAX links
        self.links_dropped = 0  # links of those pages not read (past the cap)
        self.refusals = CappedList(list_cap)
        self.refusal_classes: Counter[str] = Counter()
        self.union: UnionTally | None = None

    @property
    def done(self) -> int:
        """Page requests over (answered or failed), in ``max_pages``' units: a slash-only
        redirect and its target's answer are one page."""
        return max(0, self.fetched + self.failed - self.slash_redirects.count)

    @property
    def queued(self) -> int:
        """Page requests admitted and not over yet: the frontier the progress line shows."""
        return max(0, self.requested - self.done)

    def refused(self, url: str, refusal: dict[str, Any], found_on: str | None) -> None:
        self.refusal_classes[str(refusal.get("class"))] += 1
        self.refusals.append({"url": url, **refusal, "found_on": found_on})

    def rewrites_line(self, counts: Any) -> str | None:
        """The summary's line of what the crawl merged or rewrote (the run's ``counts``
        carry the twins the dedup stage and the crawl collapsed), biggest first."""
        parts = [
            (counts.get("slash_redirects", 0), "slash-only redirects followed (one record)"),
            (self.refreshes.count, "meta refreshes followed"),
            (self.redirected, "redirects to another page"),
            (self.redirect_loops, "redirect loops"),
            (self.canonical_aliases.count, "pages recorded under their canonical"),
            (self.canonical_elsewhere.count, "pages naming another page canonical"),
            (counts.get("canonical_twins", 0), "canonical twins"),
            (counts.get("slash_twins", 0), "slash twins collapsed"),
            (counts.get("twin_aliases", 0), "twin forms noted in aliases"),
        ]
        shown = [f"{text} {n:,}" for n, text in sorted(parts, key=lambda p: -p[0]) if n > 0]
        return "Redirects and twins: " + ", ".join(shown) if shown else None

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
            "canonical_twins": self.canonical_twins.as_dict(),
            "canonical_elsewhere": self.canonical_elsewhere.as_dict(),
            "canonical_ignored": self.canonical_ignored.as_dict(),
            "redirects": self.redirects.as_dict(),
            "slash_redirects": self.slash_redirects.as_dict(),
            "meta_refreshes": self.refreshes.as_dict(),
            "redirect_loops": self.redirect_loops,
            "redirected": self.redirected,
            "truncated": self.truncated.as_dict(),
            "links_capped": self.links_capped.as_dict(),
            "links_dropped": self.links_dropped,
            "refusals": {"by_class": dict(self.refusal_classes), **self.refusals.as_dict()},
        }
        if self.union is not None:
            out["union"] = self.union.as_dict()
        return out
