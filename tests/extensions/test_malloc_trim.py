"""Freed heap memory handed back while the spider runs (``extensions/malloc_trim.py``)."""

from __future__ import annotations

import platform
import sys

import pytest
from scrapy import Spider
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from discovery_crawler.extensions.malloc_trim import MallocTrim, glibc_malloc_trim
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
