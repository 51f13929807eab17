"""End-to-end rules of what a discovery run writes and says (SPEC §4), one small site per rule
(``conftest.py`` here): other-host URLs counted, duplicates listed once in every feed
format, batches, a clean failure on an unreachable host, progress lines and the summary."""

from __future__ import annotations

import csv
import json
import re
from typing import Any

import pytest

from tests.conftest import free_port
from tests.e2e.rules.conftest import (
    assert_completed,
    by_url,
)


# -- 15. other-host URLs -------------------------------------------------------------------
def test_other_host_urls_counted_not_kept(site, discover):
    """3 URLs on https://staging.example.org and 2 same-site ones: the inventory has the 2,
    the crawl log counts 3 for that origin, and a warning and the summary say so."""
    server = site("other-hosts")
    o = server.origin
    sm = o + "/sitemap.xml"
    staging = "https://staging.example.org"
    result = discover(o + "/")
    assert_completed(result)
    assert sorted(result.urls) == [o + "/mine-1", o + "/mine-2"]
    assert result.discovery["site"] == o
    assert result.discovery["other_hosts"] == {staging: 3}
    assert result.discovery["other_hosts_by_sitemap"] == {sm: {staging: 3}}
    warnings = [w for w in result.run["warnings"] if staging in w]
    assert len(warnings) == 1, result.run["warnings"]
    assert "sitemap.xml" in warnings[0] and "3 URLs" in warnings[0], warnings
    assert f"3 URLs on {staging}, not this site" in result.stderr
    assert "Discovered 2 URLs" in result.stderr


# -- 18. dedup across sitemaps, in every feed format ---------------------------------------
def read_feed(result: Any, fmt: str) -> list[dict[str, Any]]:
    text = result.feed.read_text(encoding="utf-8")
    if fmt == "jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    if fmt == "json":
        return json.loads(text)
    rows = list(csv.DictReader(text.splitlines()))
    for row in rows:
        row["sources"] = json.loads(row["sources"])
    return rows


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "json"])
def test_duplicate_listed_once_with_all_sources(site, discover, fmt):
    """A URL listed by two sitemaps appears once, with both sitemaps in ``sources`` (the
    first one also in ``sitemap``) — in JSON lines, CSV and JSON feeds alike."""
    server = site("dedup")
    o = server.origin
    a, b = o + "/a.xml", o + "/b.xml"
    result = discover(o + "/index.xml", feed=f"inventory.{fmt}")
    assert_completed(result)
    records = read_feed(result, fmt)
    urls = [r["url"] for r in records]
    assert sorted(urls) == [o + "/only-a", o + "/only-b", o + "/shared"]
    rows = by_url(records)
    shared = rows[o + "/shared"]
    assert sorted(shared["sources"]) == [a, b], shared
    assert shared["sitemap"] == shared["sources"][0]
    assert rows[o + "/only-a"]["sources"] == [a]
    assert rows[o + "/only-b"]["sources"] == [b]
    assert result.discovery["counts"]["duplicates"] == 1
    assert result.discovery["counts"]["discovered"] == 3


# -- 19. batches ---------------------------------------------------------------------------
def test_batches_of_discovery_batch_size(site, discover):
    """2,500 URLs with ``DISCOVERY_BATCH_SIZE=1000`` travel as 3 Scrapy items but the feed
    has one line per URL."""
    server = site("batches")
    o = server.origin
    result = discover(o + "/sitemap.xml", "-s", "DISCOVERY_BATCH_SIZE=1000")
    assert_completed(result)
    assert len(result.records) == 2500
    assert len(set(result.urls)) == 2500
    assert result.urls[0] == o + "/p/1" and result.urls[-1] == o + "/p/2500"
    assert "'item_scraped_count': 3," in result.stderr
    assert result.discovery["counts"]["discovered"] == 2500


# -- 20. unreachable host ------------------------------------------------------------------
def test_unreachable_host_fails_cleanly(discover):
    """Nothing listening: exit status 1, crawl log status failed with the reason, a
    one-line FAILED summary and no traceback."""
    result = discover(f"http://127.0.0.1:{free_port()}/", timeout=120)
    assert result.returncode == 1, result.stderr[-3000:]
    assert result.run["status"] == "failed"
    failure = result.run["failure"] or ""
    assert "unreachable" in failure and "refused" in failure.lower(), failure
    failed = [line for line in result.stderr.splitlines() if "FAILED:" in line]
    assert len(failed) == 1, result.stderr[-3000:]
    assert "refused" in failed[0].lower()
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert result.records == []


# -- 21. progress and summary --------------------------------------------------------------
def test_progress_lines_and_summary(site, discover):
    """With ``PROGRESS_INTERVAL=0.2`` on a walk of an index and 6 children that takes about
    a second, progress lines appear, and the summary names the count and the crawl log."""
    server = site("progress")
    o = server.origin
    result = discover(o + "/index.xml", settings={"PROGRESS_INTERVAL": 0.2, "HOST_INTERVAL": 0.15})
    assert_completed(result)
    assert len(result.records) == 30
    assert re.search(r"Progress: sitemaps \d+ done / \d+ pending", result.stderr), result.stderr
    assert f"Discovered 30 URLs on {o}" in result.stderr
    crawl_log = result.out / "_crawl-log.json"
    assert f"Crawl log: {crawl_log}" in result.stderr
    assert "Sitemaps tried: 7 (1 input, 6 index); 7 ok" in result.stderr
