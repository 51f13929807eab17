"""Score stage (SPEC §8): every URL gets its score in the feed; the selector keeps the few
pages that best cover the site's templates under the cap — streaming, in bounded memory.

A record the junk stage flagged is scored and listed but never kept (``UrlBatch.junk``).

Runs after the junk stage and before the slug stage (SPEC §2 order), so identity is the
URL. The selector holds references to the record dicts it may keep; the slug stage writes
``slug`` into those same dicts later in the batch's pass, so the kept list has slugs when
the spider closes.

At close the selection goes to ``record.selection`` (``selection.selector.Selection``):
the crawl log's ``selection`` (cap, cap_source, kept, cut, templates, scores, warnings) and
the summary's "Selecting …" lines. Stats: ``selection/candidates``, ``selection/kept``,
``selection/cut``, ``selection/templates``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import repeat
from operator import contains, itemgetter
from typing import TYPE_CHECKING, Any

from scrapy.settings import SETTINGS_PRIORITIES

from discovery_crawler.items import UrlBatch
from discovery_crawler.pipelines.base import BatchStage
from discovery_crawler.run_record import CappedList
from discovery_crawler.selection.paths import pillar_keywords
from discovery_crawler.selection.scoring import AUTH, RULES, Rater, score_record
from discovery_crawler.selection.selector import Selector, plan_selection
from discovery_crawler.sitemaps.facts import FROM_RATING, UrlFacts, holding
from discovery_crawler.urls.normalize import twin_key

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

_SCORE = itemgetter(UrlFacts._fields.index("score"))
_PAGE_TYPE = itemgetter(UrlFacts._fields.index("page_type"))
_SLOT = itemgetter(UrlFacts._fields.index("slot"))


def cap_setting_source(settings: BaseSettings) -> str:
    """Where SELECTION_CAP came from: ``default`` (settings.py), ``profile`` or
    ``argument`` (``-s SELECTION_CAP=N`` on the command line)."""
    priority = settings.getpriority("SELECTION_CAP") or 0
    if priority <= SETTINGS_PRIORITIES["project"]:
        return "default"
    if priority <= SETTINGS_PRIORITIES["spider"]:
        return "profile"
    return "argument"


@dataclass
class ScoreProgress:
    """What the score stage accumulates, kept by the run (``run.selection``): the
    streaming selector, the first records listed with their breakdowns, the histogram."""

    selector: Selector
    listed: CappedList
    histogram: Counter[int] = field(default_factory=Counter)


class ScorePipeline(BatchStage):
    """Scores each batch, writes ``score`` into each record, feeds the selector."""

    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        settings = crawler.settings
        self.rater = Rater(pillar_keywords(settings))
        opts = self.options
        self.plan = plan_selection(
            cap=opts.cap,
            all_pages=opts.all,
            pages=opts.pages,
            single=opts.single,
            setting_cap=settings.getint("SELECTION_CAP"),
            setting_source=cap_setting_source(settings),
        )
        progress = self.run.selection = ScoreProgress(
            Selector(self.plan, settings.getint("SELECTION_CUT_LISTED"), self.rater.keywords),
            CappedList(self.record.list_cap),  # the first URLs, with breakdowns
        )
        self.selector = progress.selector
        self.listed = progress.listed
        self.histogram = progress.histogram

    def process_item(self, item: Any) -> Any:
        if not isinstance(item, UrlBatch) or not item.records:
            return item
        records = item.records
        # Sitemap batches rarely carry fetched fields (title, links; union mode's fetched
        # listed pages do): the fast rules skip two look-ups a URL, the full ones read them.
        fetched = item.source != "sitemap"
        if item.normalized is not None:
            totals, types, slots = self._rate_from_facts(records)
        else:
            totals, types, slots = self.rater.rate_many(records, fetched, write=True)
        self.selector.sources[item.source] += len(records)
        self.selector.offer_many(records, totals, types, slots, item.junk)
        self.histogram.update(totals)
        listed = self.listed
        room = listed.cap - len(listed.items)
        if room > 0:
            listed.items.extend(records[:room])
        listed.count += len(records)
        self.stats.inc_value("selection/scored", len(records))
        return item

    def _rate_from_facts(
        self, records: list[dict[str, Any]]
    ) -> tuple[list[int], list[str], list[str | None]]:
        """``rate_many`` for records whose facts the sitemap worker worked out (the same
        rater, run there): only the auth rule, which needs the filter stage's flags, is
        added here. Records without facts that hold (hreflang alternates, a URL a stage
        changed) are rated here."""
        facts = holding(records, FROM_RATING)
        if None in facts:
            return self._rate_some(records, facts)
        totals = list(map(_SCORE, facts))
        if any(map(contains, records, repeat("flags"))):  # the filter stage flagged some
            for i, rec in enumerate(records):
                flags = rec.get("flags")
                if flags and "requires_auth" in flags:
                    totals[i] += AUTH
        for rec, total in zip(records, totals, strict=True):
            rec["score"] = total
        return totals, list(map(_PAGE_TYPE, facts)), list(map(_SLOT, facts))

    def _rate_some(
        self, records: list[dict[str, Any]], holding_facts: list[UrlFacts | None]
    ) -> tuple[list[int], list[str], list[str | None]]:
        """``_rate_from_facts`` of a batch where some records have no facts that hold."""
        totals: list[int] = []
        types: list[Any] = []
        slots: list[str | None] = []
        missing = []
        for i, (rec, facts) in enumerate(zip(records, holding_facts, strict=True)):
            if facts is None:
                missing.append(i)
                total, kind, slot = 0, None, None
            else:
                total, kind, slot = facts.score, facts.page_type, facts.slot
                flags = rec.get("flags")
                if flags and "requires_auth" in flags:
                    total += AUTH
                rec["score"] = total
            totals.append(total)
            types.append(kind)
            slots.append(slot)
        if missing:
            rated = self.rater.rate_many([records[i] for i in missing], False, write=True)
            for i, total, kind, slot in zip(missing, *rated, strict=True):
                totals[i], types[i], slots[i] = total, kind, slot
        return totals, types, slots

    def close_spider(self) -> None:
        selection = self.selector.result()
        keywords = self.rater.keywords
        selection.scores = {
            "rules": [{"rule": r, "points": p, "means": m} for r, p, m in RULES],
            "count": self.listed.count,
            "listed": len(self.listed.items),
            "items": [
                {"url": rec["url"], "score": s.total, "breakdown": s.breakdown_list()}
                for rec in self.listed.items
                for s in (score_record(rec, keywords),)
            ],
            "totals": {str(k): v for k, v in sorted(self.histogram.items(), reverse=True)},
        }
        self.listed.items = []
        record = self.record
        # A /foo later listed as /foo/ (or an alternate later listed as a <loc>) shows in the
        # feed in its final form; the selection names it the same way.
        upgrades = getattr(record.seen, "upgrades", None)
        if upgrades:
            for c in (*selection.kept, *selection.cut):
                upgrade = upgrades.get(hash(twin_key(c.url)) or 1)
                if upgrade is not None:
                    c.url = upgrade["url"]
        record.selection = selection
        for warning in selection.warnings:
            record.warn(warning)
        stats = self.stats
        stats.set_value("selection/candidates", selection.candidates)
        stats.set_value("selection/kept", selection.kept_count)
        stats.set_value("selection/cut", selection.cut_count)
        stats.set_value("selection/templates", len(selection.templates))
