"""Robots verdicts on every URL of the inventory, fetched or not (SPEC §6, issue 14 point 1):
the stage on its own, built with ``get_crawler`` and fed batches (the real spider:
``tests/e2e/test_robots_verdicts.py``)."""

from __future__ import annotations

import pytest

from discovery_crawler.items import UrlBatch
from discovery_crawler.middlewares.robots import RobotsSummary, policy_store
from discovery_crawler.pipelines.robots_verdict import RobotsVerdictPipeline
from discovery_crawler.robots import RobotsPolicy
from tests.conftest import run_crawler

ORIGIN = "https://example.com"
ROBOTS = b"User-agent: *\nDisallow: /internal/\nAllow: /internal/open/\n"


def listed(path: str, **fields: object) -> dict[str, object]:
    return {
        "url": ORIGIN + path,
        "source": "sitemap",
        "sitemap": ORIGIN + "/sitemap.xml",
        "lastmod": None,
        "priority": None,
        "changefreq": None,
        "alternates": None,
        **fields,
    }


def stage_for(robots: bytes | None) -> RobotsVerdictPipeline:
    crawler = run_crawler(ORIGIN + "/", {"CRAWL_LOG_LIST_CAP": 10})
    stage = RobotsVerdictPipeline.from_crawler(crawler)
    stage.record.site_origin = ORIGIN
    store = policy_store(crawler)
    stage.record.robots_summary = RobotsSummary(store, 10)
    if robots is not None:
        store.put(ORIGIN, RobotsPolicy.from_text(robots, url=ORIGIN + "/robots.txt"))
    return stage


def test_stage_flags_disallowed_records_with_rule_and_group():
    stage = stage_for(ROBOTS)
    batch = UrlBatch("sitemap", ORIGIN + "/sitemap.xml")
    batch.records = [listed("/a/"), listed("/internal/x/"), listed("/internal/open/y/")]
    batch.worked = (["h"] * 3, ["t"] * 3, ["s"] * 3)
    stage.process_item(batch)
    flagged = [r for r in batch.records if r.get("flags")]
    assert [r["url"] for r in flagged] == [ORIGIN + "/internal/x/"]
    assert flagged[0]["flags"] == ["robots_disallowed"]
    assert flagged[0]["robots_rule"] == "Disallow: /internal/"
    assert flagged[0]["robots_group"] == "*"
    assert "robots_rule" not in batch.records[0] and "robots_rule" not in batch.records[2]
    assert batch.worked is None  # the worker's lines know nothing of the new fields
    assert stage.record.counts["robots_disallowed"] == 1
    assert stage.stats.get_value("discovery/urls/robots_disallowed") == 1
    listed_entry = stage.record.robots_summary.disallowed.items[0]
    assert listed_entry["url"] == ORIGIN + "/internal/x/"
    assert listed_entry["found_on"] == ORIGIN + "/sitemap.xml"
    assert listed_entry["fetched"] is False


def test_stage_keeps_other_flags_and_lists_a_refused_fetch_once():
    """A record the link crawl already flagged (its request was refused, and listed, by the
    middleware) gets the rule and group, and is not listed a second time."""
    stage = stage_for(ROBOTS)
    batch = UrlBatch("link", ORIGIN + "/")
    batch.records = [
        listed("/internal/a.pdf", flags=["requires_auth"]),
        listed("/internal/b/", flags=["robots_disallowed"]),
    ]
    stage.process_item(batch)
    assert batch.records[0]["flags"] == ["requires_auth", "robots_disallowed"]
    assert batch.records[1]["flags"] == ["robots_disallowed"]
    assert batch.records[1]["robots_rule"] == "Disallow: /internal/"
    assert stage.record.robots_summary.disallowed.count == 1
    assert stage.record.counts["robots_disallowed"] == 2


@pytest.mark.parametrize(
    "robots", [None, b"User-agent: *\nAllow: /\n", b"User-agent: x\nDisallow: /"]
)
def test_stage_without_a_policy_or_a_rule_changes_nothing(robots):
    stage = stage_for(robots)
    batch = UrlBatch("sitemap", ORIGIN + "/sitemap.xml")
    batch.records = [listed("/internal/x/")]
    batch.worked = (["h"], ["t"], ["s"])
    stage.process_item(batch)
    assert "flags" not in batch.records[0] and batch.worked is not None


def test_the_group_named_for_our_token_decides():
    stage = stage_for(
        b"User-agent: *\nDisallow: /all/\n\nUser-agent: discovery-crawler\nDisallow: /ours/\n"
    )
    batch = UrlBatch("sitemap", ORIGIN + "/sitemap.xml")
    batch.records = [listed("/all/a/"), listed("/ours/b/")]
    stage.process_item(batch)
    assert "flags" not in batch.records[0]
    assert batch.records[1]["robots_group"] == "discovery-crawler"
    assert batch.records[1]["robots_rule"] == "Disallow: /ours/"
