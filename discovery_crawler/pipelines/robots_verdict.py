"""Robots verdict stage (SPEC §6): every URL of the inventory that the site's robots.txt
disallows for our agent token is flagged ``robots_disallowed``, with the rule and its group
on the record — fetched or not, in every mode.

A page request is checked by the robots middleware (``middlewares/robots.py``) before it
is sent; a URL that is only listed (sitemap mode), or recorded without a fetch (a file, an
auth-walled page, a URL over a budget), never meets the middleware, so this stage asks the
same policy of each record. It reads the policies the middleware keeps for the crawl
(``policy_store``) and adds the URLs it flags to the middleware's list of disallowed URLs
(``record.robots_summary``), so the crawl log and the summary count each URL once. No
policy for the site (a sitemap given as input is read without robots.txt): no verdict.
"""

from __future__ import annotations

from operator import itemgetter
from typing import TYPE_CHECKING, Any

from discovery_crawler.items import UrlBatch
from discovery_crawler.middlewares.robots import policy_store
from discovery_crawler.pipelines.base import BatchStage

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

FLAG = "robots_disallowed"
_URL = itemgetter("url")


class RobotsVerdictPipeline(BatchStage):
    """Flags the records robots.txt disallows, with the rule and group that decide."""

    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        self.policies = policy_store(crawler)

    def process_item(self, item: Any) -> Any:
        if not isinstance(item, UrlBatch) or not item.records:
            return item
        site = self.record.site_origin
        policy = self.policies.get(site) if site else None
        if policy is None:
            return item
        records = item.records
        rules = policy.disallowed_many(list(map(_URL, records)), site)  # type: ignore[arg-type]
        if rules.count(None) == len(rules):
            return item
        summary = self.record.robots_summary
        flagged = 0
        for rec, rule in zip(records, rules, strict=True):
            if rule is None:
                continue
            flags = rec.get("flags")
            if flags is None or FLAG not in flags:
                rec["flags"] = [*flags, FLAG] if flags else [FLAG]
                if summary is not None:  # refused requests were listed by the middleware
                    summary.disallowed.append(
                        {
                            "url": rec["url"],
                            "rule": rule,
                            "group": policy.group,
                            "origin": site,
                            "found_on": rec.get("found_on") or rec.get("sitemap"),
                            "fetched": False,
                        }
                    )
            rec["robots_rule"] = rule
            rec["robots_group"] = policy.group
            flagged += 1
        item.worked = None  # the sitemap worker's lines know nothing of these fields
        self.record.counts["robots_disallowed"] += flagged
        self.stats.inc_value("discovery/urls/robots_disallowed", flagged)
        return item
