"""The timeline extension (``extensions/timeline.py``) built with ``get_crawler``
(``run_crawler``): what it counts from the downloader, refusal and throttle signals, and
what the throttle and the refusal middleware send it. The bucket arithmetic:
``test_timeline_buckets.py``; end to end: ``tests/e2e/test_timeline.py``."""

from __future__ import annotations

import asyncio
from time import monotonic
from types import SimpleNamespace
from typing import Any

import pytest
from scrapy import Request, Spider, signals
from scrapy.core.downloader import Slot
from scrapy.exceptions import DownloadConnectionRefusedError, NotConfigured
from scrapy.http import HtmlResponse

from discovery_crawler.extensions.run import DiscoveryRun, run_of
from discovery_crawler.extensions.throttle import HostThrottle
from discovery_crawler.extensions.timeline import RunTimeline
from discovery_crawler.middlewares.refusals import PAGE_FETCH, RefusalMiddleware
from discovery_crawler.middlewares.retry import BackoffRetryMiddleware
from discovery_crawler.signals import host_held, host_interval, page_refused
from tests.conftest import free_port, run_crawler

HOST = "127.0.0.1"
ORIGIN = f"http://{HOST}:{free_port()}"  # nothing listens: never reached
OTHER = "https://example.org"


def build(**settings: Any) -> tuple[Any, RunTimeline]:
    extensions = {DiscoveryRun: 0, HostThrottle: 0, RunTimeline: 2}
    crawler = run_crawler(settings={"EXTENSIONS": extensions, **settings})
    crawler.spider = Spider.from_crawler(crawler, name="probe")
    # a downloader with one slot (Scrapy's Slot), for the throttle to drive
    slots = {HOST: Slot(8, 0.0, 0.0)}
    crawler.engine = SimpleNamespace(downloader=SimpleNamespace(slots=slots))
    timeline = crawler.get_extension(RunTimeline)
    crawler.signals.send_catch_log(signal=signals.spider_opened, spider=crawler.spider)
    return crawler, timeline


def reached(crawler: Any, request: Request) -> None:
    crawler.signals.send_catch_log(
        signal=signals.request_reached_downloader, request=request, spider=crawler.spider
    )


def answered(crawler: Any, request: Request) -> None:
    """``request`` joined its slot's queue, was sent and answered (or failed)."""
    reached(crawler, request)
    crawler.signals.send_catch_log(
        signal=signals.request_left_downloader, request=request, spider=crawler.spider
    )


def logged(crawler: Any) -> dict[str, Any]:
    return run_of(crawler).record.as_dict()["timeline"]


def test_it_is_off_when_timeline_enabled_is_false():
    crawler = run_crawler(settings={"TIMELINE_ENABLED": False})
    with pytest.raises(NotConfigured):
        RunTimeline.from_crawler(crawler)


def test_requests_refusals_intervals_and_events_go_to_the_run_record():
    crawler, _ = build(TIMELINE_MAX_BUCKETS=50, TIMELINE_MAX_HOSTS=5, CRAWL_LOG_LIST_CAP=2)
    send = crawler.signals.send_catch_log
    for path in ("/robots.txt", "/a", "/b"):
        answered(crawler, Request(ORIGIN + path))
    answered(crawler, Request(OTHER + "/x"))
    send(signal=page_refused, request=Request(ORIGIN + "/b"), refusal={"class": "missing"})
    send(signal=host_interval, origin=ORIGIN, seconds=1.0)
    for seconds in (0.5, 1.0, 2.0):
        send(signal=host_held, origin=ORIGIN, kind="backoff", seconds=seconds)
    data = logged(crawler)
    assert data["max_buckets"] == 50 and data["bucket_seconds"] == 1.0
    assert set(data["hosts"]) == {ORIGIN, OTHER}
    assert sum(data["hosts"][ORIGIN]["requests"]) == 3
    assert sum(data["hosts"][OTHER]["requests"]) == 1
    assert sum(data["hosts"][ORIGIN]["refusals"]) == 1
    assert all(len(h["requests"]) == data["buckets"] for h in data["hosts"].values())
    [[t, seconds]] = data["hosts"][ORIGIN]["interval"]
    assert seconds == 1.0 and 0 <= t < 60
    assert data["events_count"] == 3 and len(data["events"]) == 2  # CRAWL_LOG_LIST_CAP
    assert [e["seconds"] for e in data["events"]] == [0.5, 1.0]
    assert {e["host"] for e in data["events"]} == {ORIGIN}


def test_without_a_run_it_counts_and_nothing_writes_it():
    from scrapy.utils.test import get_crawler

    crawler = get_crawler(Spider, settings_dict={"EXTENSIONS": {RunTimeline: 0}})
    timeline = crawler.get_extension(RunTimeline)
    crawler.signals.send_catch_log(signal=signals.spider_opened, spider=None)
    answered(crawler, Request(ORIGIN + "/"))
    assert timeline.timeline.requests_total() == 1


def test_a_request_counts_when_its_download_ends_not_when_it_joins_the_queue():
    """With a host interval, a batch of requests joins the slot's queue at once and waits
    there (issue 37.2: 7 requests over 6 s drawn as 7 in the first second): a request
    waiting in the queue is not yet counted, and counts in the bucket its answer came."""
    crawler, timeline = build()
    clock = [0.0]
    timeline.now = lambda: clock[0]
    queued = [Request(f"{ORIGIN}/{i}") for i in range(3)]
    for request in queued:
        reached(crawler, request)
    assert timeline.timeline.requests_total() == 0
    for second, request in enumerate(queued):
        clock[0] = second + 0.5
        crawler.signals.send_catch_log(
            signal=signals.request_left_downloader, request=request, spider=crawler.spider
        )
    assert logged(crawler)["hosts"][ORIGIN]["requests"] == [1, 1, 1]


# -- what the throttle sends ------------------------------------------------------------------
def with_slot(crawler: Any, throttle: HostThrottle, request: Request) -> None:
    """``request`` reaches the downloader's slot, as the downloader says."""
    request.meta["download_slot"] = HOST
    crawler.engine.downloader.slots[HOST].active.add(request)
    reached(crawler, request)


def test_the_throttle_sends_back_offs_give_ups_and_the_intervals_in_force():
    crawler, _ = build(HOST_INTERVAL=0.5, RETRY_TIMES=2, RETRY_BACKOFF_BASE=1.0)
    throttle = crawler.get_extension(HostThrottle)
    retry = BackoffRetryMiddleware.from_crawler(crawler)
    first = Request(ORIGIN + "/")
    with_slot(crawler, throttle, first)
    response = HtmlResponse(first.url, status=200, body=b"<html></html>", request=first)
    retry.response_downloaded(response, first, crawler.spider)  # it answered once
    for path in ("/a", "/b", "/c"):
        request = Request(ORIGIN + path)
        with_slot(crawler, throttle, request)
        retry.process_exception(request, DownloadConnectionRefusedError("refused"))
    data = logged(crawler)
    kinds = [(e["kind"], e["seconds"]) for e in data["events"]]
    assert kinds == [("backoff", 1.0), ("backoff", 2.0), ("give_up", 0.0)]
    # 0.5 s, then a failing host's pause (1 s, 2 s), then 0.5 s again once it is given
    # up; all in the first bucket, so the step function keeps what it ended with
    assert [step[1] for step in data["hosts"][ORIGIN]["interval"]] == [0.5]
    timeline = crawler.get_extension(RunTimeline).timeline
    assert timeline.requests_total() == 0  # counted when their downloads end
    for path in ("/", "/a", "/b", "/c"):
        crawler.signals.send_catch_log(
            signal=signals.request_left_downloader, request=Request(ORIGIN + path)
        )
    assert timeline.requests_total() == 4


def test_the_interval_steps_follow_the_host_over_time():
    crawler, ext = build(HOST_INTERVAL=0.5, RETRY_BACKOFF_BASE=1.0)
    throttle = crawler.get_extension(HostThrottle)
    retry = BackoffRetryMiddleware.from_crawler(crawler)
    ext.start -= 10  # the run began 10 s ago: changes land in buckets 10, 11, 12
    with_slot(crawler, throttle, Request(ORIGIN + "/"))
    ext.start -= 1
    failed = Request(ORIGIN + "/a")
    with_slot(crawler, throttle, failed)
    retry.process_exception(failed, DownloadConnectionRefusedError("refused"))
    ext.start -= 1
    answered = Request(ORIGIN + "/b")
    with_slot(crawler, throttle, answered)
    response = HtmlResponse(answered.url, status=200, body=b"<html></html>", request=answered)
    retry.response_downloaded(response, answered, crawler.spider)
    steps = logged(crawler)["hosts"][ORIGIN]["interval"]
    assert [seconds for _, seconds in steps] == [0.5, 1.0, 0.5]
    assert [int(t) for t, _ in steps] == [10, 11, 12]


def test_a_retry_after_is_sent_as_a_hold_of_the_seconds_applied():
    crawler, _ = build(MAX_RETRY_AFTER=5.0)
    throttle = crawler.get_extension(HostThrottle)
    request = Request(ORIGIN + "/busy")
    with_slot(crawler, throttle, request)
    headers = {"Retry-After": "120"}
    response = HtmlResponse(request.url, status=503, headers=headers, body=b"", request=request)
    throttle.response_downloaded(response, request, crawler.spider)
    [event] = logged(crawler)["events"]
    assert event["kind"] == "retry_after" and event["seconds"] == 5.0  # capped
    assert event["host"] == ORIGIN


def test_the_refusal_middleware_sends_each_refusal_it_counts():
    crawler, _ = build()
    mw = RefusalMiddleware.from_crawler(crawler)
    for path, status in (("/gone", 404), ("/ok", 200), ("/private", 403)):
        request = Request(ORIGIN + path, meta={PAGE_FETCH: True})
        body = b"<html><head><title>t</title></head><body>" + b"word " * 200 + b"</body></html>"
        response = HtmlResponse(request.url, status=status, body=body, request=request)
        asyncio.run(mw.process_response(request, response))
    assert sum(logged(crawler)["hosts"][ORIGIN]["refusals"]) == 2
    assert mw.summary.total == 2


def test_a_jobs_first_request_to_a_host_waiting_out_the_interval_is_a_pause():
    crawler, _ = build(HOST_INTERVAL=2.0)
    throttle = crawler.get_extension(HostThrottle)
    # as spider_opened sets it from job.json: the invocation before sent its last request
    # to the host half a second ago
    throttle._earlier[HOST] = monotonic() - 0.5
    with_slot(crawler, throttle, Request(ORIGIN + "/"))
    with_slot(crawler, throttle, Request(ORIGIN + "/a"))  # not the first: no pause
    [event] = logged(crawler)["events"]
    assert event["kind"] == "pause" and event["host"] == ORIGIN
    assert 1.0 < event["seconds"] <= 1.5
