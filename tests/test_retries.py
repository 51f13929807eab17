"""What a crawl's retries add up to (``retries.py``): the summary's line and the crawl log's
``retries`` section. The middleware that fills it: ``tests/middlewares/test_retry.py``."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from discovery_crawler.arguments import RunOptions
from discovery_crawler.profiles import available_profiles
from discovery_crawler.retries import RetrySummary
from discovery_crawler.run_record import RunRecord
from tests.conftest import free_port

U = f"http://127.0.0.1:{free_port()}"


def test_nothing_retried_nothing_said():
    summary = RetrySummary(5, 1.0, 30.0, [503, 500])
    assert summary.line() == ""
    data = summary.as_dict()
    assert data["settings"] == {
        "times": 5,
        "backoff_base": 1.0,
        "backoff_max": 30.0,
        "http_codes": [500, 503],
    }
    assert (data["requests_retried"], data["retries"], data["recovered"]) == (0, 0, 0)
    assert data["failed_after_retries"] == {
        "count": 0,
        "by_reason": {},
        "listed": 0,
        "requests": [],
    }


def test_the_line_says_what_was_retried_how_often_and_what_failed():
    summary = RetrySummary(5, 1.0, 30.0, list_cap=1)
    for _ in range(3):
        summary.retried("connection refused", first=True)
        summary.retried("connection refused", first=False)
    summary.retried("503 Service Unavailable", first=True)
    for _ in range(3):
        summary.answered_after_retries()
    summary.gave_up(f"{U}/a", "500 Internal Server Error", 5)
    summary.gave_up(f"{U}/b", "connection refused", 2, host_given_up=True)
    summary.paused(1.0)
    summary.paused(2.5)
    summary.paused(16.0)
    assert summary.line() == (
        "Retried 4 requests (7 retries: 6 × connection refused, 1 × 503 Service Unavailable); "
        "3 recovered, 2 failed after retries (1 × 500 Internal Server Error, "
        "1 × connection refused); host paused 3 times, 19.5 s"
    )
    data = summary.as_dict()
    assert data["by_reason"] == {"connection refused": 6, "503 Service Unavailable": 1}
    failed = data["failed_after_retries"]
    assert (failed["count"], failed["listed"]) == (2, 1)  # counts exact, list capped
    assert failed["requests"] == [
        {"url": f"{U}/a", "reason": "500 Internal Server Error", "retries": 5}
    ]
    assert (data["host_pauses"], data["host_pause_seconds"]) == (3, 19.5)


def test_a_host_given_up_is_named():
    summary = RetrySummary(1)
    summary.retried("timed out", first=True)
    summary.paused(1.0)
    summary.host_given_up("example.com", 2)
    assert summary.line() == (
        "Retried 1 request (1 retry: 1 × timed out); 0 recovered, 0 failed after retries; "
        "host paused once, 1.0 s; gave up on example.com after 2 failures in a row"
    )
    assert summary.as_dict()["hosts_given_up"] == {"example.com": 2}


def test_failures_without_a_retry_are_still_said():
    summary = RetrySummary(0)
    summary.gave_up(f"{U}/a", "connection refused", 0)
    assert summary.line() == (
        "Retried no request; 0 recovered, 1 failed after retries (1 × connection refused)"
    )


@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.booleans()), max_size=50))
def test_retries_add_up(events):
    summary = RetrySummary()
    for reason, first in events:
        summary.retried(reason, first)
    data = summary.as_dict()
    assert data["retries"] == len(events) == sum(data["by_reason"].values())
    assert data["requests_retried"] == sum(first for _, first in events)


def test_run_record_carries_the_section():
    options = RunOptions.from_arguments({"url": "https://example.com/"}, available_profiles())
    record = RunRecord(options, {})
    assert record.as_dict()["retries"] is None
    record.retries = RetrySummary(5)
    record.retries.retried("timed out", first=True)
    assert record.as_dict()["retries"]["by_reason"] == {"timed out": 1}
