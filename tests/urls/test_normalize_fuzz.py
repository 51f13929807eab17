"""The URL normalizer under hostile input, briefly (``bench/fuzz.py normalize`` runs the
same for minutes): any text gives a valid absolute http(s) URL or ``UrlError``, never
another exception; the URL is a fixed point; the origin cache's fast and slow paths and the
batch form agree; the base slug of its path is the same from the C extension, the Python
fast path and the general rules. Each input is checked under a CPU-time bound.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings

from discovery_crawler.urls.normalize import UrlError, normalize
from tests.fuzzing import UrlCase, check_normalize, cpu_bound, url_cases

BOUND = 5.0  # CPU seconds an input may take


@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(url_cases())
@example(UrlCase("http://example.com\xa0a", None))  # found by the fuzzer: see below
@example(UrlCase("http://a%40b.com/", None))
@example(UrlCase("http://[::1]@example.com/", None))
def test_hostile_urls_normalize_to_valid_fixed_points(case):
    with cpu_bound(BOUND):
        check_normalize(case)


@pytest.mark.parametrize(
    "raw",
    [
        "http://example.com\xa0a/",  # IDNA maps U+00A0 to a space
        "http://example.com\u00b4/",  # U+00B4 to a space and a combining accent
        "http://ex\uff05\uff12\uff26a.com/",  # fullwidth "%2F" to "%2F"
        "http://a%40b.com/",  # "@": the URL written would name the host b.com
        "http://ex%3Fample.com/",  # "?"
        "http://ex%23a.com/",  # "#"
        "http://exam%3Aple.com/",  # ":"
        "http://a%25b.com/",  # "%"
        "http://example.com\\evil/",
        "http://exa<mple.com/",
    ],
)
def test_a_host_that_decodes_to_a_delimiter_is_rejected(raw):
    """Regression (fuzzer): a host whose percent-decoding or IDNA mapping gives a space or a
    character that ends or splits a host (WHATWG's forbidden domain code points) was kept,
    so the URL written named another host or was no URL (``http://example.com a/``)."""
    with pytest.raises(UrlError, match="a character no host name holds"):
        normalize(raw)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("http://[::1]@example.com/", "http://[::1]@example.com/"),
        ("http://[::1]@b%40c.com/", UrlError),
        ("http://[::1]@a..b/", UrlError),
        ("http://u@[::1]:8/", "http://u@[::1]:8/"),
        ("http://[::1]@example.com[\xa0a", UrlError),  # found by the fuzzer: "[ a]"
        ("http://evil.com[v1.fe]/", UrlError),  # urlsplit's host: v1.fe
        ("http://[::1]@[\xb8", UrlError),  # found by the fuzzer: "[xn-- -3db]"
        ("http://[::1]@[example.com]/", UrlError),
        ("http://[::1]@[::1%7E", UrlError),  # found by the fuzzer: "[::1~]"
        ("http://[fe80::1%25eth0]/", "http://[fe80::1%eth0]/"),
        ("http://[::1]@[::2]:8/", "http://[::1]@[::2]:8/"),
    ],
)
def test_brackets_in_the_userinfo_do_not_make_the_host_a_literal(raw, expected):
    """Regression: a "[" anywhere in the authority made the host an IP literal, so
    ``http://[::1]@example.com/`` became ``http://[::1]@[example.com]/`` (no URL: it does
    not normalize again), and the checks of a host name were skipped."""
    if expected is UrlError:
        with pytest.raises(UrlError):
            normalize(raw)
    else:
        assert normalize(raw) == expected
        assert normalize(expected) == expected
