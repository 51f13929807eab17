"""The scope estimate's pure judgement (``discovery_crawler/estimate.py``): languages from paths
and hreflang, the URL range, the expected time, the transport."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from discovery_crawler.estimate import (
    expected_seconds,
    hreflang_language,
    path_language,
    transport_for,
    url_range,
)


# -- pure -------------------------------------------------------------------------------
def test_path_language():
    assert path_language("https://e.com/en/about/") == "en"
    assert path_language("https://e.com/de-DE/produkte/") == "de-de"
    assert path_language("https://e.com/pt_br/") == "pt-br"
    assert path_language("https://e.com/es-419/x") == "es-419"
    assert path_language("https://e.com/en") is None  # a page, not a folder
    assert path_language("https://e.com/enterprise/") is None
    assert path_language("https://e.com/xx/") is None  # not ISO 639-1
    assert path_language("https://e.com/blog/en/") is None  # first segment only
    assert path_language("https://e.com/") is None


def test_hreflang_language():
    assert hreflang_language("en") == "en"
    assert hreflang_language("en-US") == "en-us"
    assert hreflang_language("zh-Hant-TW") == "zh-tw"
    assert hreflang_language("x-default") is None
    assert hreflang_language("") is None and hreflang_language(None) is None


@given(st.text(max_size=40))
def test_language_detectors_never_raise(text):
    path_language(text)
    path_language("https://e.com/" + text)
    hreflang_language(text)


def test_url_range():
    assert url_range(37, 0) == (37, 37, True)
    assert url_range(0, 531) == (531_000, 26_550_000, False)
    assert url_range(10, 0, unread=2) == (2_010, 100_010, False)


def test_expected_seconds_formula():
    # 533 documents at one per second, then 26.55M URLs at 100k/s
    assert expected_seconds(26_550_000, 533, 1.0, 4, 0.2, 100_000) == pytest.approx(798.5)
    # no interval: the fetch time shared by the concurrent fetches
    assert expected_seconds(1_000, 10, 0.0, 4, 0.4, 1_000) == pytest.approx(2.0)


def test_transport():
    assert transport_for([("robots.txt", 200, None), ("sitemap", 200, None)])[0] == "fetch"
    assert transport_for([("robots.txt", 403, None)]) == (
        "browser",
        "robots.txt answered HTTP 403",
    )
    assert transport_for([("robots.txt", 404, None), ("sitemap x", None, "timeout")]) == (
        "browser",
        "sitemap x timed out",
    )
