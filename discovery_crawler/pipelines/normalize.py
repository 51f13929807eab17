"""Normalize stage: resolve every raw location against its document, normalize it, and
keep only URLs of the site.

Per-URL work is the hot path of a sitemap walk, so host-level work happens once per
origin (``OriginCache``) and counters are updated once per batch. URLs on another host
are counted per host and sitemap (SPEC §4: "post-sitemap.xml: 99 URLs on
https://example.org, not this site"); entries that cannot be resolved go to
``malformed`` with their raw value and the reason. A location without a scheme that names
a host is read as that host (``urls.normalize.resolve_location``) and counted, by batch,
in ``repaired``.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import TYPE_CHECKING, Any

from discovery_crawler.items import UrlBatch
from discovery_crawler.pipelines.base import BatchStage
from discovery_crawler.sitemaps.facts import FACTS, entries_of, facts_for, worked_records
from discovery_crawler.sitemaps.parser import priority_value
from discovery_crawler.urls.normalize import UrlError, resolve_location

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

_ABSOLUTE = ("https://", "http://")


class NormalizePipeline(BatchStage):
    """Turns a batch's raw sitemap entries into normalized same-site records."""

    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        # The run's cache, so the site's origin rewrites (scheme, www) apply here too.
        self.origins = self.run.origins

    def normalize(self, raw: str, base: str) -> str:
        if not raw.startswith(_ABSOLUTE):
            raw = resolve_location(raw, base)
        return self.origins.normalize(raw)

    def _alternates(
        self,
        pairs: tuple[tuple[str | None, str], ...],
        url: str,
        site: str,
        base: str,
        records: list[dict[str, Any]],
    ) -> list[dict[str, Any]]:
        """Normalize hreflang alternates; same-site ones also enter the inventory."""
        alternates: list[dict[str, Any]] = []
        for hreflang, href in pairs:
            try:
                alt = self.normalize(href, base)
            except UrlError:
                alternates.append({"hreflang": hreflang, "href": href})
                continue
            alternates.append({"hreflang": hreflang, "href": alt})
            if alt[: alt.find("/", 8)] == site and alt != url:
                records.append(
                    {
                        "url": alt,
                        "source": "alternate",
                        "sitemap": base,
                        "lastmod": None,
                        "priority": None,
                        "changefreq": None,
                        "alternates": None,
                    }
                )
        return alternates

    def _name_site(self, item: UrlBatch) -> None:
        """A sitemap given as input: its first usable URL names the site, before the batch
        is normalized (so the site's www/scheme twins are rewritten from the first batch)."""
        for entry in item.entries:
            if entry[0].__class__ is not str:  # a UrlError from the sitemap worker
                continue
            try:
                url = self.normalize(entry[0], item.document)
            except UrlError:
                continue
            origin = url[: url.find("/", 8)]
            self.run.name_site(origin, f"site taken from the sitemap's first URL: {origin}")
            return

    def _urls(self, item: UrlBatch) -> list[Any]:
        """The batch's normalized URLs (or the ``UrlError`` of each that has none)."""
        locs = [e[0] for e in item.entries]
        if item.normalized is None:
            return self.origins.normalize_many(locs, item.document)
        if item.normalized != self.origins.version:
            # The site's origin rewrites changed after the worker normalized these (the
            # first batch named the site): normalizing again is idempotent and applies them.
            fresh = iter(self.origins.normalize_many([u for u in locs if u.__class__ is str], ""))
            locs = [next(fresh) if u.__class__ is str else u for u in locs]
        return locs

    def process_item(self, item: Any) -> Any:
        if not isinstance(item, UrlBatch):
            return item
        record = self.record
        base = item.document
        source = item.source
        if item.columns is not None:  # from the sitemap worker
            site = record.site_origin
            if site is not None:
                # ``fresh``: the origin rewrites are those the worker normalized with (naming
                # the site from a sitemap's first URL changes them for the documents already
                # sent); when they are not, ``worked_records`` takes only what they leave as
                # it was.
                fresh = item.normalized == self.origins.version
                worked = worked_records(item.columns, source, base, site + "/", fresh)
                if worked is not None:  # the common batch: straight to records
                    item.records = worked.records
                    # lines written for another site's filter decisions do not stand
                    item.worked = worked.lines if item.decided_for == site else None
                    item.columns = None
                    for error in worked.malformed:
                        record.malformed.append(
                            {"raw": error.raw[:500], "reason": error.reason, "sitemap": base}
                        )
                    self._count(base, worked.other_hosts, len(worked.malformed))
                    return item
            item.entries = entries_of(item.columns)
            item.columns = None
        if not item.entries:
            return item
        if record.site_origin is None:
            self._name_site(item)
        site = record.site_origin
        site_prefix = site + "/" if site else None
        other_hosts: Counter[str] = Counter()
        records: list[dict[str, Any]] = []
        alternate_records: list[dict[str, Any]] = []  # after the locs: a <loc> wins
        malformed = 0
        entries = item.entries
        worker = item.normalized is not None
        stale = worker and item.normalized != self.origins.version
        urls = self._urls(item)
        if self.origins.repairs:  # a scheme-less location read as a host: noted, counted
            record.repaired.add_counted(*self.origins.take_repairs())
        for entry, url in zip(entries, urls, strict=True):
            # entry: (loc, lastmod, changefreq, priority[, alternates, ...]); '' = absent
            if url.__class__ is not str:
                reason = url.reason  # type: ignore[union-attr]
                raw = entry[0] if entry[0].__class__ is str else url.raw  # type: ignore[union-attr]
                record.malformed.append({"raw": raw[:500], "reason": reason, "sitemap": base})
                malformed += 1
                continue
            # site is known here: _name_site set it from the first URL that normalizes
            if not url.startswith(site_prefix):  # type: ignore[union-attr,arg-type]
                other_hosts[url[: url.find("/", 8)]] += 1  # type: ignore[index,union-attr]
                continue
            alternates = None
            if len(entry) > 4 and entry[4]:
                alternates = self._alternates(entry[4], url, site, base, alternate_records)  # type: ignore[arg-type]
            priority = entry[3]
            rec = {
                "url": url,
                "source": source,
                "sitemap": base,
                "lastmod": entry[1] or None,
                "priority": priority_value(priority) if priority else None,
                "changefreq": entry[2] or None,
                "alternates": alternates,
            }
            if worker and entry.facts is not None:  # what the sitemap worker worked out
                rec[FACTS] = facts_for(rec, entry.facts, stale)
            records.append(rec)
        if alternate_records:
            records.extend(alternate_records)
        item.records = records
        item.entries = []
        self._count(base, other_hosts, malformed)
        return item

    def _count(self, base: str, other_hosts: Counter[str], malformed: int) -> None:
        """A batch's URLs on other hosts (by origin) and malformed entries, counted."""
        record = self.record
        if other_hosts:
            record.add_other_hosts(base, other_hosts)
            count = sum(other_hosts.values())
            record.filtered["other_host"] += count
            self.stats.inc_value("discovery/urls/filtered/other_host", count)
        if malformed:
            record.counts["malformed"] += malformed
            self.stats.inc_value("discovery/urls/malformed", malformed)
