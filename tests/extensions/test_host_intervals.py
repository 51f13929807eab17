"""The per-host throttle's pure arithmetic (SPEC §6; ``extensions/host_intervals.py``):
Retry-After parsing, host intervals and the pauses of failing hosts. Measured at the server:
``tests/e2e/test_throttle.py``, ``tests/e2e/test_retries.py``."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from discovery_crawler.arguments import RunOptions
from discovery_crawler.extensions.host_intervals import (
    HostIntervals,
    effective_interval,
    failure_pause,
    parse_http_date,
    parse_retry_after,
    valid_seconds,
)
from discovery_crawler.profiles import available_profiles
from discovery_crawler.run_record import RunRecord

# -- pure parts -------------------------------------------------------------------------------
NOW = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("120", 120.0),
        (" 5 ", 5.0),
        (b"7", 7.0),
        ("0", 0.0),
        ("1.5", 1.5),
        (format_datetime(NOW + timedelta(seconds=30), usegmt=True), 30.0),
        ("Saturday, 01-Mar-25 12:00:45 GMT", 45.0),  # RFC 850
        ("Sat Mar  1 12:01:00 2025", 60.0),  # asctime
        (format_datetime(NOW - timedelta(hours=1), usegmt=True), 0.0),  # past: no wait
    ],
)
def test_retry_after_values(value, expected):
    assert parse_retry_after(value, NOW) == expected


@pytest.mark.parametrize(
    "value",
    [None, "", "  ", "-5", "+5", "soon", "5s", "1e3", "nan", "inf", "Wed, 99 Foo 2015", "9" * 400],
)
def test_retry_after_garbage_is_none(value):
    assert parse_retry_after(value, NOW) is None


def test_retry_after_date_without_reference_uses_the_wall_clock():
    value = format_datetime(datetime.now(UTC) + timedelta(seconds=100), usegmt=True)
    assert 98 <= parse_retry_after(value) <= 100


def test_http_date():
    assert parse_http_date(b"Sat, 01 Mar 2025 12:00:00 GMT") == NOW
    assert parse_http_date("yesterday") is None
    assert parse_http_date(None) is None


@given(st.text())
def test_retry_after_never_raises(value):
    seconds = parse_retry_after(value, NOW)
    assert seconds is None or seconds >= 0


@given(st.integers(min_value=0, max_value=10**9))
def test_retry_after_seconds_round_trip(n):
    assert parse_retry_after(str(n), NOW) == n


@pytest.mark.parametrize(
    ("base", "crawl_delay", "cap", "expected"),
    [
        (1.0, None, 30, 1.0),
        (1.0, 0.5, 30, 1.0),  # a smaller Crawl-delay does not speed up
        (1.0, 5, 30, 5.0),
        (1.0, 60, 30, 30.0),  # capped
        (0.0, 2, 30, 2.0),  # HOST_INTERVAL=0 still honours Crawl-delay
        (1.0, 5, 0, 1.0),  # MAX_CRAWL_DELAY=0 ignores it
        (-1.0, None, 30, 0.0),
    ],
)
def test_effective_interval(base, crawl_delay, cap, expected):
    assert effective_interval(base, crawl_delay, cap) == expected


@given(
    st.floats(0, 100, allow_nan=False),
    st.none() | st.floats(0, 1000, allow_nan=False),
    st.floats(0, 100, allow_nan=False),
)
def test_effective_interval_bounds(base, crawl_delay, cap):
    interval = effective_interval(base, crawl_delay, cap)
    assert interval >= base
    assert interval <= max(base, cap)


def test_valid_seconds():
    assert valid_seconds("2.5") == 2.5
    assert valid_seconds(3) == 3.0
    for bad in (None, "x", -1, float("nan"), float("inf"), True):
        assert valid_seconds(bad) is None


def test_host_intervals_crawl_delay_changes():
    intervals = HostIntervals(1.0, max_crawl_delay=10, overrides={"Slow.Example": 3.0})
    assert intervals.interval_for("slow.example") == 3.0
    assert intervals.interval_for("a.example") == 1.0
    change = intervals.set_crawl_delay("a.example", 4.0, "https://a.example")
    assert change is not None and (change.old, change.new, change.capped) == (1.0, 4.0, False)
    assert intervals.set_crawl_delay("a.example", 4.0, "https://a.example") is None  # same
    # the largest Crawl-delay among a host's origins applies, capped
    change = intervals.set_crawl_delay("a.example", 20.0, "http://a.example")
    assert change is not None and (change.new, change.crawl_delay, change.capped) == (
        10.0,
        20.0,
        True,
    )
    assert intervals.set_crawl_delay("a.example", 2.0, "https://a.example") is None
    change = intervals.set_crawl_delay("a.example", None, "http://a.example")
    assert change is not None and change.new == 2.0 and change.old == 10.0
    # below the base: recorded, no change to the interval
    assert intervals.set_crawl_delay("slow.example", 1.0) is None
    assert intervals.as_dict()["hosts"]["slow.example"]["interval"] == 3.0


def test_host_intervals_back_off():
    intervals = HostIntervals(0.5, max_retry_after=60)
    assert intervals.not_before("a") == 0.0
    assert intervals.back_off("a", 10, now=100.0) == (10, False)
    assert intervals.not_before("a") == 110.0
    assert intervals.back_off("a", 1, now=101.0) == (1, False)
    assert intervals.not_before("a") == 110.0  # a shorter one never shortens it
    assert intervals.back_off("a", 3600, now=102.0) == (60, True)
    assert intervals.not_before("a") == 162.0
    assert intervals.not_before("b") == 0.0
    entry = intervals.as_dict()["hosts"]["a"]
    assert (entry["retry_after"], entry["retry_after_max"], entry["retry_after_capped"]) == (
        3,
        3600,
        1,
    )


@pytest.mark.parametrize(
    ("failures", "base", "cap", "expected"),
    [
        (0, 1.0, 30.0, 0.0),  # no failure, no pause
        (1, 1.0, 30.0, 1.0),
        (2, 1.0, 30.0, 2.0),
        (5, 1.0, 30.0, 16.0),
        (6, 1.0, 30.0, 30.0),  # 32 capped
        (50, 1.0, 30.0, 30.0),
        (3, 0.25, 0.0, 1.0),  # cap 0: none
        (4, 0.0, 30.0, 0.0),  # base 0: back-off off
        (1, 5.0, 2.0, 2.0),  # a cap below the base binds from the first
        (10_000, 1.0, 60.0, 60.0),  # no overflow
    ],
)
def test_failure_pause(failures, base, cap, expected):
    assert failure_pause(failures, base, cap) == expected
    assert math.isfinite(failure_pause(failures, base, 0.0))


@given(
    n=st.integers(1, 200),
    base=st.floats(0.001, 100, allow_nan=False),
    cap=st.floats(0.001, 1000, allow_nan=False),
)
def test_failure_pause_doubles_up_to_its_cap(n, base, cap):
    pause, following = failure_pause(n, base, cap), failure_pause(n + 1, base, cap)
    assert failure_pause(1, base, cap) == min(base, cap)
    assert 0 < pause <= cap
    assert following == min(2 * pause, cap)  # doubled until the cap, then the cap


def test_a_failing_host_is_paused_longer_each_time_and_an_answer_resets_it():
    intervals = HostIntervals(0.0, backoff_base=1.0, backoff_max=4.0, give_up_after=4)
    first = intervals.fail("a", now=100.0)
    assert (first.failures, first.pause, first.counted, first.down) == (1, 1.0, True, False)
    assert intervals.not_before("a") == 101.0 and intervals.failing("a")
    assert intervals.pause_of("a") == 1.0
    # a request already on its way when that pause began: the same outage, not counted
    seen_again = intervals.fail("a", now=100.1, counted=False)
    assert (seen_again.failures, seen_again.pause, seen_again.counted) == (1, 0.0, False)
    assert intervals.not_before("a") == 101.0
    assert intervals.fail("a", now=101.0).pause == 2.0  # the probe failed: twice as long
    third = intervals.fail("a", now=103.0)
    assert (third.failures, third.pause) == (3, 4.0) and intervals.not_before("a") == 107.0
    assert intervals.pause_of("b") == 0.0 and not intervals.failing("b")
    assert intervals.answered("a") is True
    assert not intervals.failing("a") and intervals.pause_of("a") == 0.0
    assert intervals.not_before("a") == 107.0  # a pause under way is not cut short
    assert intervals.answered("a") is False  # it was not failing any more
    assert intervals.fail("a", now=110.0).pause == 1.0  # a new streak starts from the base
    entry = intervals.as_dict()["hosts"]["a"]
    assert entry["failures"] == 5 and entry["longest_streak"] == 3
    assert (entry["paused"], entry["pause_seconds"], entry["given_up"]) == (4, 8.0, 0)
    summary = intervals.as_dict()
    assert (summary["paused"], summary["pause_seconds"], summary["give_up_after"]) == (4, 8.0, 4)


def test_a_host_failing_too_often_in_a_row_is_given_up_until_it_answers():
    intervals = HostIntervals(0.0, backoff_base=1.0, backoff_max=30.0, give_up_after=3)
    pauses = [intervals.fail("a", now=float(t)).pause for t in (0, 10, 20)]
    assert pauses == [1.0, 2.0, 0.0]  # the third gives it up: no more waiting
    assert intervals.hosts["a"].down and not intervals.failing("a")
    again = intervals.fail("a", now=30.0)
    assert again.down and not again.given_up and again.pause == 0.0
    assert intervals.hosts["a"].given_up == 1
    assert intervals.answered("a")
    fresh = intervals.fail("a", now=40.0)
    assert (fresh.down, fresh.pause, fresh.failures) == (False, 1.0, 1)


def test_no_back_off_means_no_pause_and_no_give_up():
    intervals = HostIntervals(0.0, backoff_base=0.0, give_up_after=2)
    for t in range(5):
        failure = intervals.fail("a", now=float(t))
        assert failure.pause == 0.0 and not failure.down
    assert intervals.not_before("a") == 0.0 and intervals.hosts["a"].longest_streak == 5


def test_a_failure_pause_and_a_retry_after_share_the_wait():
    intervals = HostIntervals(0.0, backoff_base=1.0, backoff_max=30.0, give_up_after=6)
    intervals.back_off("a", 10.0, now=0.0)  # Retry-After: 10
    failure = intervals.fail("a", now=0.0)
    assert failure.pause == 0.0 and intervals.not_before("a") == 10.0  # inside it already
    assert intervals.pause_of("a") == 1.0  # still probed one at a time


def test_summary_lists_notable_hosts_up_to_the_cap():
    intervals = HostIntervals(1.0, list_cap=2)
    for i in range(5):
        intervals.set_crawl_delay(f"h{i}", 3.0)
    intervals.state("quiet")
    summary = intervals.as_dict()
    assert summary["hosts_seen"] == 6
    assert summary["hosts_notable"] == 5
    assert summary["hosts_listed"] == len(summary["hosts"]) == 2


def test_run_record_carries_the_summary():
    """The crawl log's run entry has the throttle's summary when the throttle ran."""
    options = RunOptions.from_arguments({"url": "https://example.com/"}, available_profiles())
    record = RunRecord(options, {})
    assert record.as_dict()["throttle"] is None
    record.throttle = HostIntervals(1.0)
    record.throttle.set_crawl_delay("example.com", 4.0)
    assert record.as_dict()["throttle"]["hosts"]["example.com"]["interval"] == 4.0
