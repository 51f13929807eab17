"""``extensions/timeline_buckets.py`` as plain classes: buckets that widen by merging pairs
(counts conserved, never more than ``max_buckets``), hosts capped into ``(other hosts)``,
intervals as a step function with at most one change a bucket, events capped and
counted."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from discovery_crawler.extensions.timeline_buckets import (
    OTHER_HOSTS,
    REQUESTS,
    Buckets,
    Timeline,
)

times = st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)
adds = st.lists(
    st.tuples(st.sampled_from("abc"), times, st.integers(min_value=1, max_value=5)),
    max_size=200,
)


@given(adds, st.integers(min_value=1, max_value=50))
def test_merges_conserve_totals_and_bound_the_arrays(added, max_buckets):
    buckets = Buckets(max_buckets)
    for key, t, n in added:
        buckets.add(key, t, n)
        assert buckets.count <= max_buckets
        assert all(len(values) <= max_buckets for values in buckets.series.values())
    for key in "abc":
        assert buckets.total(key) == sum(n for k, _, n in added if k == key)
        assert len(buckets.values(key)) == buckets.count
    # each count sits in the bucket its time falls in, at the final width
    for key in "abc":
        expected = [0] * buckets.count
        for k, t, n in added:
            if k == key:
                expected[int(t / buckets.width)] += n
        assert buckets.values(key) == expected


@given(st.lists(times, min_size=1, max_size=100), st.integers(min_value=1, max_value=20))
def test_the_width_is_the_least_doubling_that_holds_the_latest_time(ts, max_buckets):
    buckets = Buckets(max_buckets, width=1.0)
    for t in ts:
        buckets.index(t)
    assert int(max(ts) / buckets.width) < max_buckets
    if buckets.width > 1.0:  # half as wide would not have held it
        assert int(max(ts) / (buckets.width / 2)) >= max_buckets


def test_a_merge_adds_pairs_and_keeps_series_aligned():
    buckets = Buckets(4)
    for t in (0, 1, 2, 3):
        buckets.add("a", t, t + 1)
    buckets.add("b", 0.5)
    assert buckets.values("a") == [1, 2, 3, 4] and buckets.values("b") == [1, 0, 0, 0]
    buckets.add("a", 4.0)  # past 4 buckets of 1 s: 2 s wide now
    assert buckets.width == 2.0
    assert buckets.values("a") == [3, 7, 1] and buckets.values("b") == [1, 0, 0]


def test_bad_bounds_are_refused():
    with pytest.raises(ValueError):
        Buckets(0)
    with pytest.raises(ValueError):
        Buckets(10, width=0)


def test_hosts_past_the_cap_are_summed_under_other_hosts():
    timeline = Timeline(max_buckets=10, max_hosts=2)
    for i, host in enumerate(["https://a", "https://b", "https://c", "https://d", "https://a"]):
        timeline.request(host, float(i))
    timeline.refusal("https://d", 1.0)
    data = timeline.as_dict()
    assert list(data["hosts"]) == ["https://a", "https://b", OTHER_HOSTS]
    assert data["hosts"]["https://a"][REQUESTS] == [1, 0, 0, 0, 1]
    assert data["hosts"][OTHER_HOSTS][REQUESTS] == [0, 0, 1, 1, 0]
    assert data["hosts"][OTHER_HOSTS]["refusals"] == [0, 1, 0, 0, 0]
    assert data["hosts"][OTHER_HOSTS]["interval"] == []
    assert timeline.requests_total() == 5
    assert data["buckets"] == 5 and data["bucket_seconds"] == 1.0 and data["max_buckets"] == 10


def test_intervals_are_a_step_function_one_change_a_bucket():
    timeline = Timeline(max_buckets=4)
    timeline.interval("https://a", 0.1, 1.0)
    timeline.interval("https://a", 0.2, 1.0)  # no change
    timeline.interval("https://a", 1.2, 2.0)
    timeline.interval("https://a", 1.7, 4.0)  # same bucket: its value, from 1.2
    timeline.interval("https://a", 2.5, 1.0)
    assert timeline.as_dict()["hosts"]["https://a"]["interval"] == [
        [0.1, 1.0],
        [1.2, 4.0],
        [2.5, 1.0],
    ]
    timeline.request("https://a", 6.0)  # 2 s buckets: 0.1 and 1.2 share one now
    assert timeline.as_dict()["hosts"]["https://a"]["interval"] == [[0.1, 4.0], [2.5, 1.0]]


@given(
    st.lists(st.tuples(times, st.sampled_from([0.0, 1.0, 2.5, 30.0])), max_size=100).map(sorted),
    st.integers(min_value=1, max_value=30),
)
def test_intervals_never_outnumber_the_buckets(changes, max_buckets):
    timeline = Timeline(max_buckets=max_buckets)
    for t, seconds in changes:
        timeline.interval("https://a", t, seconds)
    steps = timeline.as_dict()["hosts"].get("https://a", {"interval": []})["interval"]
    assert len(steps) <= timeline.buckets.count <= max_buckets
    assert all(a[1] != b[1] for a, b in pairwise(steps))
    if changes:  # the interval in force at the end is the last one set
        assert steps[-1][1] == round(changes[-1][1], 3)


def test_events_are_listed_up_to_the_cap_and_all_counted():
    timeline = Timeline(list_cap=2)
    for i in range(5):
        timeline.event("https://a", i + 0.12345, "backoff", 0.5 * i)
    data = timeline.as_dict()
    assert data["events_count"] == 5
    assert data["events"] == [
        {"t": 0.123, "host": "https://a", "kind": "backoff", "seconds": 0.0},
        {"t": 1.123, "host": "https://a", "kind": "backoff", "seconds": 0.5},
    ]
