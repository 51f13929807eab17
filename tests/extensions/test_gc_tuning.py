"""The collector tuned while the spider runs, and left as it was when it closes."""

from __future__ import annotations

import gc

import pytest
from scrapy import Spider
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from discovery_crawler.extensions.gc_tuning import GcTuning


def test_the_threshold_holds_while_the_spider_runs_and_the_old_one_comes_back():
    crawler = get_crawler(Spider, settings_dict={"GC_GEN0_THRESHOLD": 12_345})
    crawler.stats.open_spider()
    ext = GcTuning.from_crawler(crawler)
    before, frozen_before = gc.get_threshold(), gc.get_freeze_count()
    spider = Spider("s")

    ext.spider_opened(spider)
    try:
        assert gc.get_threshold() == (12_345, *before[1:])
        assert gc.get_freeze_count() > frozen_before  # the start-up heap is out of collections
        cycle: list[object] = []
        cycle.append(cycle)
        del cycle
        gc.collect()
    finally:
        ext.spider_closed(spider)

    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
    assert crawler.stats.get_value("gc/collections") >= 1
    assert crawler.stats.get_value("gc/seconds") >= 0
    ext.spider_closed(spider)  # a second close changes nothing
    assert gc.get_threshold() == before


def test_a_zero_threshold_leaves_the_collector_alone():
    crawler = get_crawler(Spider, settings_dict={"GC_GEN0_THRESHOLD": 0})
    with pytest.raises(NotConfigured):
        GcTuning.from_crawler(crawler)
