"""Garbage-collector tuning for the crawl: the start-up heap frozen, young objects
collected less often, as long as the spider runs.

A record is an acyclic dict, freed by reference counting the moment its batch is done, yet
every batch allocates thousands of containers. At CPython's default gen-0 threshold (700)
a large sitemap walk runs many young and several full collections, each full one walking
every object Scrapy's imports made; with the start-up heap frozen (``gc.freeze``) and a
higher gen-0 threshold they nearly vanish (bench/README.md). Reference cycles are still
collected, only less often. The old
thresholds come back and the heap is unfrozen when the spider closes, so a process that
runs several crawls (tests, Scrapyd) is left as it was.
"""

from __future__ import annotations

import gc
import time
from typing import TYPE_CHECKING, Any

from scrapy import Spider, signals
from scrapy.exceptions import NotConfigured

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler


class GcTuning:
    """``GC_GEN0_THRESHOLD`` (0 = leave the collector as Python set it). Stats:
    ``gc/collections`` and ``gc/seconds`` while the spider ran."""

    def __init__(self, crawler: Crawler, gen0: int) -> None:
        self.stats = crawler.stats
        self.gen0 = gen0
        self._thresholds: tuple[int, int, int] | None = None
        self._collections = 0
        self._seconds = 0.0
        self._started = 0.0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        gen0 = crawler.settings.getint("GC_GEN0_THRESHOLD")
        if gen0 <= 0:
            raise NotConfigured("GC_GEN0_THRESHOLD is 0")
        ext = cls(crawler, gen0)
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_opened(self, spider: Spider) -> None:
        self._thresholds = gc.get_threshold()
        gc.collect()  # start from a clean heap, then keep it out of every later collection
        gc.freeze()
        gc.set_threshold(self.gen0, *self._thresholds[1:])
        gc.callbacks.append(self._timed)

    def spider_closed(self, spider: Spider) -> None:
        if self._thresholds is None:
            return
        gc.callbacks.remove(self._timed)
        gc.set_threshold(*self._thresholds)
        gc.unfreeze()
        self._thresholds = None
        self.stats.set_value("gc/collections", self._collections)
        self.stats.set_value("gc/seconds", round(self._seconds, 3))

    def _timed(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self._collections += 1
            self._seconds += time.perf_counter() - self._started
