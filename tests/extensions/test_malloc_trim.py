"""Freed heap memory handed back while the spider runs (``extensions/malloc_trim.py``)."""

from __future__ import annotations

import platform
import sys

import pytest
from scrapy import Spider
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from discovery_crawler.extensions.malloc_trim import (
    MallocTrim,
    glibc_malloc_trim,
    pin_mmap_threshold,
)
from tests.conftest import IN_CI

GLIBC = sys.platform == "linux" and platform.libc_ver()[0] == "glibc"


def need_glibc() -> None:
    """CI runs on Debian (glibc): there a missing glibc is a failure, elsewhere a skip."""
    if not GLIBC:
        if IN_CI:
            pytest.fail("no glibc on this CI machine; in CI this is a failure, not a skip")
        pytest.skip("glibc's malloc_trim: Linux with glibc only (outside CI, a skip)")


def test_glibc_malloc_trim_is_found_and_runs():
    need_glibc()
    trim = glibc_malloc_trim()
    assert trim is not None
    assert trim(0) in (0, 1)  # 1: memory was released


def test_a_zero_interval_turns_it_off():
    crawler = get_crawler(Spider, settings_dict={"MALLOC_TRIM_INTERVAL": 0})
    with pytest.raises(NotConfigured):
        MallocTrim.from_crawler(crawler)


def test_the_mmap_threshold_is_pinned_even_with_trims_off():
    """``MALLOC_MMAP_THRESHOLD`` is applied when the extension is built (glibc's
    ``mallopt`` took it: the stat says so), whether or not it also trims."""
    need_glibc()
    crawler = get_crawler(
        Spider, settings_dict={"MALLOC_TRIM_INTERVAL": 0, "MALLOC_MMAP_THRESHOLD": 1 << 20}
    )
    ext = MallocTrim.from_crawler(crawler)
    assert crawler.stats.get_value("memory/mmap_threshold") == 1 << 20
    assert ext.task is None  # no trims: nothing was scheduled
    assert crawler.stats.get_value("memory/trims") is None


def test_a_threshold_past_a_c_int_is_refused_not_wrapped():
    """ctypes would wrap a size past a C ``int`` into another one: refused, no stat."""
    need_glibc()
    assert pin_mmap_threshold(1 << 20)
    assert not pin_mmap_threshold(1 << 40)
    crawler = get_crawler(Spider, settings_dict={"MALLOC_MMAP_THRESHOLD": 1 << 40})
    MallocTrim.from_crawler(crawler)
    assert crawler.stats.get_value("memory/mmap_threshold") is None
