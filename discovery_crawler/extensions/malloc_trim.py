"""Freed heap memory handed back to the OS while the spider runs (glibc's ``malloc_trim``
and mmap threshold).

Peak RSS is a target (SPEC §14). glibc raises its mmap threshold each time a large mmapped
block is freed, so after the first sitemap body or worker reply, blocks of that size come
from the heap; freed, their pages stay resident until something trims them, and the next
body lands elsewhere, fragmenting the heap. ``MALLOC_MMAP_THRESHOLD`` pins the threshold
(``mallopt``) above a worker reply and below a large sitemap's body: each body is mapped
and handed back whole when freed, while the many smaller buffers still come from the heap
(a threshold low enough for the replies would map, fault in and unmap every one). A
periodic trim hands back the heap's freed pages at a small cost (bench/README.md,
"Measurements behind the code").

Linux with glibc only: elsewhere (musl, macOS, Windows) it is not configured.
"""

from __future__ import annotations

import ctypes
import logging
import time
from typing import TYPE_CHECKING, Any

from scrapy import Spider, signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.asyncio import create_looping_call

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


_M_MMAP_THRESHOLD = -3  # glibc's malloc.h


def glibc_malloc_trim() -> Any:
    """glibc's ``malloc_trim``, or None where there is no glibc."""
    try:
        # The process's own symbols, which include its C library's: ``find_library`` would
        # run ``ldconfig -p`` in a subprocess on every start.
        return ctypes.CDLL(None).malloc_trim  # AttributeError without glibc
    except (OSError, AttributeError):
        return None


def pin_mmap_threshold(size: int) -> bool:
    """Blocks of ``size`` bytes and more mapped on their own from now on (glibc's
    ``mallopt``); False where there is no glibc, it refused the size, or the size is not a
    C ``int`` (ctypes would wrap it into another)."""
    if not 0 < size < 1 << 31:
        return False
    try:
        return ctypes.CDLL(None).mallopt(_M_MMAP_THRESHOLD, size) == 1
    except (OSError, AttributeError):
        return False


class MallocTrim:
    """``MALLOC_TRIM_INTERVAL`` seconds between trims (0 = off), ``MALLOC_MMAP_THRESHOLD``
    bytes from which a block is mapped on its own (0 = glibc's sliding threshold). Stats:
    ``memory/trims`` and ``memory/trim_seconds`` while the spider ran,
    ``memory/mmap_threshold`` once pinned."""

    def __init__(self, crawler: Crawler, interval: float, trim: Any) -> None:
        self.stats = crawler.stats
        self.interval = interval
        self._trim = trim
        self.trims = 0
        self.seconds = 0.0
        self.task: Any = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        interval = crawler.settings.getfloat("MALLOC_TRIM_INTERVAL")
        threshold = crawler.settings.getint("MALLOC_MMAP_THRESHOLD")
        # A bare NotConfigured: with a message, Scrapy logs a warning on every run of a
        # platform without glibc, or of a user who turned it off.
        if interval <= 0 and threshold <= 0:
            raise NotConfigured
        trim = glibc_malloc_trim()
        if trim is None:
            logger.debug("MallocTrim: no glibc malloc_trim on this platform; off")
            raise NotConfigured
        if threshold > 0 and pin_mmap_threshold(threshold):
            crawler.stats.set_value("memory/mmap_threshold", threshold)
        ext = cls(crawler, interval, trim)
        if interval > 0:
            crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
            crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_opened(self, spider: Spider) -> None:
        self.task = create_looping_call(self.trim)
        self.task.start(self.interval, now=False)

    def trim(self) -> None:
        started = time.perf_counter()
        self._trim(0)
        self.seconds += time.perf_counter() - started
        self.trims += 1

    def spider_closed(self, spider: Spider) -> None:
        if self.task is not None and self.task.running:
            self.task.stop()
        self.stats.set_value("memory/trims", self.trims)
        self.stats.set_value("memory/trim_seconds", round(self.seconds, 3))
