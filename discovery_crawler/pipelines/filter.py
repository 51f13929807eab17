"""Filter stage: give every URL its kind, drop what is not a page of the site — each drop
counted per reason and listed — and flag auth-walled pages (kept, not crawled).

The rules live in ``urls/kinds.py`` and ``urls/filters.py`` (pure functions); this stage
calls them once per batch and does the bookkeeping: the tally of all seven kinds (taken
before filtering, so it says what the site is), per-reason counts in Scrapy stats
(``discovery/urls/filtered/<reason>``) and capped lists in the crawl log.

A kind is judged from the URL, except where a fetch settled it: a link-crawl record that
arrives with a ``kind`` (an ``/api/…`` path whose answer was an HTML page or JSON/XML,
``kinds.fetch_decides``) keeps it.
"""

from __future__ import annotations

from collections import Counter
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from discovery_crawler.items import UrlBatch
from discovery_crawler.pipelines.base import BatchStage, worker_facts
from discovery_crawler.sitemaps.facts import UrlFacts
from discovery_crawler.urls.filters import KEEP, FilterPolicy
from discovery_crawler.urls.kinds import url_kinds_many

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

_KIND = itemgetter(UrlFacts._fields.index("kind"))
_DECISION = itemgetter(UrlFacts._fields.index("decision"))


class FilterPipeline(BatchStage):
    """Kinds, filter reasons and flags for each batch."""

    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        self.policy: FilterPolicy | None = None

    def _policy(self, site: str) -> FilterPolicy:
        if self.policy is None or self.policy.site_origin != site:
            opts = self.options
            self.policy = FilterPolicy(site, opts.include_paths, opts.exclude_paths)
        return self.policy

    def process_item(self, item: Any) -> Any:
        if not isinstance(item, UrlBatch) or not item.records:
            return item
        record = self.record
        site = record.site_origin
        if site is None:
            return item
        records = item.records
        worked = worker_facts(item) if item.decided_for == site else None
        decisions = list(map(_DECISION, worked)) if worked is not None else [None]
        if None not in decisions:
            kinds = list(map(_KIND, worked))  # type: ignore[arg-type]
        else:
            urls = [rec["url"] for rec in records]
            kinds = url_kinds_many(urls)
            if item.deduplicated:  # from the link crawl: a fetch may have said the kind
                for i, rec in enumerate(records):
                    fetched = rec.get("kind")
                    if fetched is not None:
                        kinds[i] = fetched
            decisions = self._policy(site).decide_many(urls, kinds)
        tally = record.kinds
        kept = []
        dropped: Counter[str] = Counter()
        if decisions.count(KEEP) == len(decisions):  # all kept as they are (the usual batch)
            for rec, kind in zip(records, kinds, strict=True):
                rec["kind"] = kind
            counts = Counter(kinds)
            tally.update(counts)
            for kind, count in counts.items():
                self.stats.inc_value(f"discovery/kinds/{kind}", count)
            return item
        for rec, kind, decision in zip(records, kinds, decisions, strict=True):
            tally[kind] += 1
            rec["kind"] = kind
            if not decision.keep:
                reason = decision.reason or "filtered"
                dropped[reason] += 1
                record.filtered_list(reason).append(rec["url"])
                continue
            if decision.flags:
                rec["flags"] = list(decision.flags)
                if "requires_auth" in decision.flags:
                    record.requires_auth.append(rec["url"])
            kept.append(rec)
        item.records = kept
        for kind, count in Counter(kinds).items():
            self.stats.inc_value(f"discovery/kinds/{kind}", count)
        for reason, count in dropped.items():
            record.filtered[reason] += count
            self.stats.inc_value(f"discovery/urls/filtered/{reason}", count)
        return item
