"""Dedup stage: a URL enters the inventory once; later sightings add their source.

First seen wins, with two exceptions: a URL that entered only as an hreflang alternate and
is later listed as a ``<loc>`` takes that listing's record (source, lastmod, priority…), and
a URL listed as ``/foo`` then as ``/foo/`` takes the slash form's (SPEC §5 rule 7, unless a
fetched canonical fixed the form), the other form kept in ``aliases``; ``/foo/`` then
``/foo`` notes ``/foo`` in the aliases. The feed exporter applies these when the run ends
(``SeenSet.upgrades``); the twin bookkeeping is the seen-set's (``SeenSet.twins``), shared
with the link crawl, so a sitemap listing and a crawled page agree on one URL. Also
enforces the URL limit (``SITEMAP_MAX_URLS``) exactly: URLs past it are counted as seen but
not kept, and the limit is recorded as bound. In a distributed job the URLs kept are also
counted job-wide (``RedisScheduler.count_urls``): the walk reads no further document once
the job's count reached the limit, and the finisher keeps the first URLs in one run's
reading order (``distributed/result.py``).
"""

from __future__ import annotations

from itertools import compress
from operator import is_not, itemgetter, not_
from typing import TYPE_CHECKING, Any

from discovery_crawler.items import UrlBatch
from discovery_crawler.pipelines.base import BatchStage
from discovery_crawler.signals import urls_expected
from discovery_crawler.urls.normalize import twin_keys
from discovery_crawler.urls.seen import ALIASED, RENAMED

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

_URL = itemgetter("url")
_SOURCE = itemgetter("source")
_ALT = "alternate"


class DedupPipeline(BatchStage):
    """Drops records already in the inventory, remembering where else they were listed."""

    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        self.max_urls = crawler.settings.getint("SITEMAP_MAX_URLS")
        # URLs that entered as hreflang alternates only (the run's; allocated on first use).
        self.alternates_only = self.run.alternates_only
        crawler.signals.connect(self.urls_expected, signal=urls_expected)

    def urls_expected(self, urls: int) -> None:
        """Size the run's seen-set for the walk's estimate (``signals.urls_expected``)."""
        self.record.seen.reserve(urls)

    def close_spider(self) -> None:
        seen = self.record.seen
        self.stats.set_value("discovery/tables/seen_bytes", seen.nbytes)
        self.stats.set_value("discovery/tables/seen_resizes", seen.resizes)

    def process_item(self, item: Any) -> Any:
        if not isinstance(item, UrlBatch) or not item.records or item.deduplicated:
            return item  # a link-crawl batch: the link crawl admitted each URL once
        record = self.record
        seen = record.seen
        records = item.records
        urls = list(map(_URL, records))
        keys = twin_keys(urls)
        new = seen.add_many(keys)
        given = self._given_back(keys, new) if seen.listed_over_link else None
        room = self.max_urls - record.counts["unique"] if self.max_urls else -1
        if new.count(True) == len(new) and (room < 0 or room >= len(new)):
            kept = records  # the usual batch: every URL new, under the limit
            duplicates = over_limit = aliased = 0
            self._admitted(records, urls, keys)
        else:
            kept, duplicates, over_limit, aliased = self._sort_out(records, urls, keys, new, room)
        if given:
            aliased += self._sighted(given)
        item.records = kept
        item.seen = seen
        record.counts["unique"] += len(kept)
        self.stats.inc_value("discovery/urls/unique", len(kept))
        frontier = self.run.frontier
        if frontier is not None and self.max_urls and kept:
            frontier.count_urls(len(kept))  # the job's count: its walk stops at the limit
        if aliased:
            record.counts["twin_aliases"] += aliased
        if duplicates:
            record.counts["duplicates"] += duplicates
            self.stats.inc_value("discovery/urls/duplicate", duplicates)
        if over_limit:
            record.counts["over_limit"] += over_limit
            self.stats.inc_value("discovery/urls/over_limit", over_limit)
            record.limit_bound(
                "SITEMAP_MAX_URLS",
                value=self.max_urls,
                kept=record.counts["unique"],
                seen=record.counts["unique"] + record.counts["over_limit"],
            )
        return item

    def _given_back(self, keys: list[str], new: list[bool]) -> list[tuple[str, list[str]]]:
        """Listings of keys a held link gave up (``SeenSet.listed_over_link``): new after
        all (``new`` set True); (key, the link's other spellings) for ``_sighted``."""
        given_back = self.record.seen.listed_over_link
        given = []
        for i, key in enumerate(keys):
            if not new[i] and key in given_back:
                new[i] = True
                given.append((key, given_back.pop(key)))
        return given

    def _sighted(self, given: list[tuple[str, list[str]]]) -> int:
        """The spellings the links that gave way were met in, once their listing is
        written, as if met after it (its aliases, or rule 7's rename); twins noted."""
        record = self.record
        twins = record.seen.twins
        aliased = 0
        for key, spellings in given:
            for spelling in spellings:
                twin = twins.sighted(key, spelling)
                if twin == RENAMED:
                    record.counts["slash_twins"] += 1
                elif twin == ALIASED:
                    aliased += 1
        return aliased

    def _admitted(self, records: list[dict[str, Any]], urls: list[str], keys: list[str]) -> None:
        """Bookkeeping of records new to the inventory, a batch at a time: the hreflang
        alternates among them, and the slashless twin keys (``Twins.wrote`` of each)."""
        sources = list(map(_SOURCE, records))
        if _ALT in sources:
            alternates = list(compress(keys, map(_ALT.__eq__, sources)))
            self.alternates_only.add_many(alternates)
            self.record.counts["alternate_only"] += len(alternates)
        self.record.seen.twins.wrote_many(list(compress(keys, map(is_not, urls, keys))))

    def _sort_out(
        self,
        records: list[dict[str, Any]],
        urls: list[str],
        keys: list[str],
        new: list[bool],
        room: int,
    ) -> tuple[list[dict[str, Any]], int, int, int]:
        """A batch with duplicates or past the URL limit: (kept records, duplicates, over the
        limit, twins noted in aliases). A duplicate's handling reads what the records
        before it added, and only under its own key, so without a limit the new records
        are admitted a batch at a time and the duplicates then handled one by one, in order;
        under a limit, record by record."""
        if room < 0:
            kept = list(compress(records, new))
            self._admitted(kept, list(compress(urls, new)), list(compress(keys, new)))
            old = list(map(not_, new))
            aliased = renamed = 0
            for rec, url, key in zip(
                compress(records, old), compress(urls, old), compress(keys, old), strict=True
            ):
                twin = self._duplicate(rec, url, key)
                renamed += twin == RENAMED
                aliased += twin == ALIASED
            if renamed:
                self.record.counts["slash_twins"] += renamed
            return kept, len(records) - len(kept), 0, aliased
        record = self.record
        alternates_only = self.alternates_only
        twins = record.seen.twins
        kept = []
        duplicates = over_limit = aliased = 0
        for rec, url, key, is_new in zip(records, urls, keys, new, strict=True):
            if is_new:
                if room == 0:
                    over_limit += 1
                    continue
                room -= 1
                kept.append(rec)
                if rec["source"] == _ALT:
                    alternates_only.add(key)
                    record.counts["alternate_only"] += 1
                if url is not key:  # not in the slash form: /foo, not /foo/
                    twins.wrote(key, url)
                continue
            duplicates += 1
            twin = self._duplicate(rec, url, key)
            if twin == RENAMED:
                record.counts["slash_twins"] += 1
            elif twin == ALIASED:
                aliased += 1
        return kept, duplicates, over_limit, aliased

    def _duplicate(self, rec: dict[str, Any], url: str, key: str) -> str | None:
        """A record whose URL is already in the inventory: its listing joins the sources,
        upgrades a URL first met as an alternate, or settles a trailing-slash twin
        (``RENAMED``: the slash form took this listing's record; ``ALIASED``: the other
        form noted in the record's aliases)."""
        seen = self.record.seen
        if seen.upgraded(key):
            seen.add_source(key, rec["sitemap"])
            return None
        if rec["source"] != _ALT and key in self.alternates_only:
            # first met as an hreflang alternate, now listed: the listing wins
            seen.upgrade(key, rec)
            self.record.counts["alternate_only"] -= 1
            return None
        # trailing-slash twins: the slash form wins (SPEC §5 rule 7), taking this listing's
        # record; or the other form is noted in the record's aliases
        twin = seen.twins.sighted(key, url, rec)
        if twin == RENAMED:
            return RENAMED
        seen.add_source(key, rec["sitemap"])
        return ALIASED if twin is not None else None
