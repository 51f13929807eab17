"""Scrapy's "Stored … feed (N items)" line said in URLs (``output/feed_log.py``); the real
line of a crawl: ``e2e/test_default_feed.py``."""

from __future__ import annotations

import logging

import pytest

from discovery_crawler.output.feed_log import FEED_LOGGER, FeedCountWords


def stored(text: str) -> logging.LogRecord:
    return logging.LogRecord(FEED_LOGGER, logging.INFO, __file__, 1, "Stored %s", (text,), None)


@pytest.mark.parametrize(
    ("uri", "name"),
    [("/tmp/out/inventory.jsonl", "/tmp/out/inventory.jsonl"), ("file:///tmp/i.csv", "/tmp/i.csv")],
)
def test_stored_line_counts_urls_and_batches(uri, name):
    words = FeedCountWords()
    words.finished(name, 165, 1)
    record = stored(f"jsonl feed (1 items) in: {uri}")
    assert words.filter(record) is True
    assert record.getMessage() == f"Stored jsonl feed (165 URLs in 1 batch) in: {uri}"


def test_other_feeds_keep_scrapys_words():
    words = FeedCountWords()
    words.finished("/tmp/a.jsonl", 3, 2)
    record = stored("jsonl feed (4 items) in: /tmp/b/a.jsonl.other")
    words.filter(record)
    assert record.getMessage() == "Stored jsonl feed (4 items) in: /tmp/b/a.jsonl.other"
    words.finished("/tmp/b.jsonl", 2_000, 3)
    record = stored("csv feed (3 items) in: /tmp/b.jsonl")
    words.filter(record)
    assert record.getMessage() == "Stored csv feed (2,000 URLs in 3 batches) in: /tmp/b.jsonl"
