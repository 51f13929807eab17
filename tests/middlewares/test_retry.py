"""The retry middleware (``middlewares/retry.py``) in-process, with the host throttle it
paces retries through, on requests, responses and failures made here; the host's turns on
a clock the test moves. End to end (a host down mid-crawl): ``tests/e2e/test_retries.py``."""

from __future__ import annotations

import logging
from time import monotonic
from typing import Any

import pytest
from scrapy import Request, Spider
from scrapy.exceptions import DownloadConnectionRefusedError, DownloadTimeoutError, NotConfigured
from scrapy.http import HtmlResponse

from discovery_crawler.extensions.run import DiscoveryRun, run_of
from discovery_crawler.extensions.throttle import HostThrottle
from discovery_crawler.middlewares.retry import BackoffRetryMiddleware
from tests.conftest import free_port, run_crawler
from tests.extensions.fake_time import use_fake_time

HOST = "127.0.0.1"
U = f"http://{HOST}:{free_port()}"  # nothing listens: never reached


def build(extensions: dict[Any, int] | None = None, **settings: Any):
    """(crawler, middleware, throttle): the project's settings, a run, the throttle."""
    crawler = run_crawler(
        settings={"EXTENSIONS": extensions or {DiscoveryRun: 0, HostThrottle: 0}, **settings}
    )
    # get_retry_request reads the crawler's settings and stats through the spider
    crawler.spider = Spider.from_crawler(crawler, name="probe")
    return (
        crawler,
        BackoffRetryMiddleware.from_crawler(crawler),
        crawler.get_extension(HostThrottle),
    )


def refused(mw: BackoffRetryMiddleware, request: Request) -> Request | None:
    return mw.process_exception(request, DownloadConnectionRefusedError("refused"))


def answer(mw: BackoffRetryMiddleware, request: Request, status: int = 200):
    """A response as the downloader hands it over: the signal first, then the hook."""
    response = HtmlResponse(request.url, status=status, body=b"<html></html>", request=request)
    mw.response_downloaded(response, request, mw.crawler.spider)
    return mw.process_response(request, response)


def sent(throttle: HostThrottle, *requests: Request) -> None:
    """Each request takes its host's turn (none may wait: HOST_INTERVAL 0), as the
    download handler asks before sending."""
    for request in requests:
        assert throttle.turns.turn(HOST, request) is None


# -- what is retried, and when ---------------------------------------------------------------
def test_a_refused_connection_is_retried_once_its_host_has_paused():
    crawler, mw, throttle = build(RETRY_BACKOFF_BASE=1.0)
    retry = refused(mw, Request(f"{U}/a"))
    assert isinstance(retry, Request) and retry.meta["retry_times"] == 1 and retry.dont_filter
    assert throttle.intervals.not_before(HOST) > monotonic() + 0.9  # the host waits 1 s
    assert mw.summary.reasons == {"connection refused": 1}
    stats = crawler.stats.get_stats()
    assert stats["retry/requests"] == stats["retry/count"] == 1  # ours and Scrapy's
    assert stats["retry/reason/connection refused"] == 1
    assert stats["throttle/host_paused"] == 1
    assert mw.summary.pauses == 1 and 0.9 < mw.summary.pause_seconds <= 1.0


def test_each_failure_in_a_row_doubles_the_pause_and_an_answer_resets_it():
    _, mw, throttle = build(RETRY_BACKOFF_BASE=1.0, RETRY_BACKOFF_MAX=4.0)
    state = throttle.intervals.state(HOST)
    assert answer(mw, Request(f"{U}/")).status == 200  # a host that answered: no early give-up
    pauses = []
    for path in ("/a", "/b", "/c", "/d"):
        assert refused(mw, Request(U + path)) is not None
        pauses.append(state.pause)
    assert pauses == [1.0, 2.0, 4.0, 4.0]  # capped by RETRY_BACKOFF_MAX
    assert answer(mw, Request(f"{U}/e")).status == 200
    assert not throttle.intervals.failing(HOST)
    refused(mw, Request(f"{U}/f"))
    assert state.pause == 1.0 and state.failures == 1  # a new streak


def test_a_request_that_spent_its_retries_fails_and_is_listed():
    crawler, mw, _ = build(RETRY_TIMES=2)
    request = Request(f"{U}/a", meta={"retry_times": 2})
    assert mw.process_exception(request, DownloadTimeoutError("took longer than 30 s")) is None
    assert mw.summary.failed == {"timed out": 1}
    assert mw.summary.failed_requests == [{"url": f"{U}/a", "reason": "timed out", "retries": 2}]
    stats = crawler.stats.get_stats()
    assert stats["retry/gave_up"] == stats["retry/max_reached"] == 1
    assert stats["retry/gave_up/timed out"] == 1


def test_a_host_that_keeps_failing_is_given_up_until_it_answers(caplog):
    crawler, mw, _ = build(RETRY_TIMES=2)  # given up at 3 failures in a row
    caplog.set_level(logging.WARNING)
    assert refused(mw, Request(f"{U}/a")) is not None
    assert refused(mw, Request(f"{U}/b")) is not None
    assert refused(mw, Request(f"{U}/c")) is None  # its first failure, but the host's third
    assert refused(mw, Request(f"{U}/d")) is None
    assert mw.summary.hosts_given_up == {HOST: 3}
    assert [r["host_given_up"] for r in mw.summary.failed_requests] == [True, True]
    assert crawler.stats.get_value("retry/host_given_up") == 2
    assert crawler.stats.get_value("throttle/host_given_up") == 1
    assert "127.0.0.1 failed 3 times in a row (connection refused); given up" in caplog.text
    answer(mw, Request(f"{U}/e"))
    assert refused(mw, Request(f"{U}/f")) is not None  # it answered: retried again
    assert "gave up on 127.0.0.1 after 3 failures in a row" in mw.summary.line()


def test_a_5xx_pauses_the_host_as_it_arrives_and_the_retry_that_answers_recovers():
    crawler, mw, throttle = build(RETRY_BACKOFF_BASE=1.0)
    request = Request(f"{U}/a")
    response = HtmlResponse(request.url, status=503, body=b"busy", request=request)
    mw.response_downloaded(response, request, crawler.spider)
    # before the middleware's hook runs (the slot may send its next request in between)
    assert throttle.intervals.not_before(HOST) > monotonic() + 0.9
    retry = mw.process_response(request, response)
    assert isinstance(retry, Request) and retry.meta["retry_times"] == 1
    assert mw.summary.reasons == {"503 Service Unavailable": 1}
    assert mw.summary.pauses == 1  # counted once, not again by the hook
    assert answer(mw, retry).status == 200
    assert mw.summary.recovered == 1 and crawler.stats.get_value("retry/recovered") == 1
    assert "1 recovered, 0 failed after retries" in mw.summary.line()


def test_a_5xx_that_spent_its_retries_goes_on_to_the_refusals():
    _, mw, _ = build(RETRY_TIMES=1)
    request = Request(f"{U}/a", meta={"retry_times": 1})
    response = answer(mw, request, 500)
    assert response.status == 500  # the refusal middleware below makes it server_error
    assert mw.summary.failed == {"500 Internal Server Error": 1}


def test_an_answer_not_downloaded_just_now_says_nothing_of_the_host():
    _, mw, throttle = build()
    request = Request(f"{U}/a")
    response = HtmlResponse(request.url, status=503, body=b"", request=request)
    assert isinstance(mw.process_response(request, response), Request)  # Scrapy's retry
    assert throttle.intervals.not_before(HOST) == 0.0 and mw.summary.pauses == 0


def test_dont_retry_is_left_alone():
    crawler, mw, throttle = build()
    request = Request(f"{U}/a", meta={"dont_retry": True})
    assert refused(mw, request) is None
    response = HtmlResponse(request.url, status=503, body=b"", request=request)
    mw.response_downloaded(response, request, crawler.spider)
    assert mw.process_response(request, response) is response
    assert throttle.intervals.hosts == {} and mw.summary.line() == ""


def test_with_no_retries_allowed_it_is_scrapys_middleware():
    _, mw, throttle = build(RETRY_TIMES=0)
    assert refused(mw, Request(f"{U}/a")) is None
    assert refused(mw, Request(f"{U}/b", meta={"max_retry_times": 1})) is not None  # its own
    assert throttle.intervals.state(HOST).failures == 1  # only the one that may be retried
    assert mw.summary.failed == {"connection refused": 1} and mw.summary.hosts_given_up == {}


def test_off_when_retries_are():
    with pytest.raises(NotConfigured):
        build(RETRY_ENABLED=False)


def test_without_the_throttle_retries_are_sent_at_once(caplog):
    caplog.set_level(logging.WARNING)
    _, mw, throttle = build(extensions={DiscoveryRun: 0})
    assert throttle is None
    assert "retries are sent at once, with no back-off" in caplog.text
    assert isinstance(refused(mw, Request(f"{U}/a")), Request)
    assert mw.summary.pauses == 0


def test_the_run_record_gets_the_summary():
    crawler, mw, _ = build()
    assert run_of(crawler).record.retries is mw.summary
    assert run_of(crawler).record.as_dict()["retries"]["settings"]["times"] == 5


# -- the host's turns ----------------------------------------------------------------------
def test_a_failing_host_sends_one_request_at_a_time_until_it_answers():
    _, mw, throttle = build(RETRY_BACKOFF_BASE=2.0, HOST_INTERVAL=0.5)
    fake = use_fake_time(throttle)
    first = Request(f"{U}/a")
    sent(throttle, first)
    throttle.sent(first)  # its download failed...
    refused(mw, first)  # ...and the failure reaches the middleware: a 2 s pause
    probe, then = Request(f"{U}/b"), Request(f"{U}/c")
    waiting = [throttle.turns.turn(HOST, probe), throttle.turns.turn(HOST, then)]
    assert fake.pending() == [pytest.approx(2.0)]  # one probe per pause at most
    fake.advance(2.0)
    assert waiting[0].called and not waiting[1].called
    fake.advance(10.0)
    assert not waiting[1].called  # one at a time: the probe is still on its way
    answer(mw, probe)  # it answered: the next one goes at the host's interval
    assert waiting[1].called


def test_requests_already_on_their_way_do_not_grow_the_pause():
    crawler, mw, throttle = build(RETRY_BACKOFF_BASE=1.0, HOST_INTERVAL=0)
    fake = use_fake_time(throttle)
    first, on_way, late = Request(f"{U}/a"), Request(f"{U}/b"), Request(f"{U}/late")
    sent(throttle, first, on_way, late)
    state = throttle.intervals.state(HOST)
    throttle.sent(first)
    refused(mw, first)
    queued = Request(f"{U}/c")
    waiter = throttle.turns.turn(HOST, queued)  # waits: it leaves after the pause, a probe
    assert waiter is not None and not waiter.called
    throttle.sent(on_way)
    retry = refused(mw, on_way)  # sent before the pause began: the same outage seen again
    assert (state.failures, state.pause) == (1, 1.0)
    assert retry not in throttle._on_their_way  # its retry will be a probe
    throttle.sent(late)
    answer(mw, late)  # answered, but sent before the pause began: no news of the host
    assert throttle.intervals.failing(HOST)
    fake.advance(1.0)
    assert waiter.called
    throttle.sent(queued)
    refused(mw, queued)  # the probe failed: the host is still down
    assert (state.failures, state.pause) == (2, 2.0)
    assert crawler.stats.get_value("throttle/host_paused") == 2


def test_failures_that_ended_before_the_pause_began_do_not_grow_it():
    """Two downloads fail at once; their failures reach the middleware one after the other:
    the second is the same outage, though it is no longer on its way when the first one
    pauses the host."""
    crawler, mw, throttle = build(RETRY_BACKOFF_BASE=1.0)
    first, second = Request(f"{U}/a"), Request(f"{U}/b")
    for request in (first, second):
        throttle.request_left_downloader(request, crawler.spider)
    refused(mw, first)
    refused(mw, second)
    state = throttle.intervals.state(HOST)
    assert (state.failures, state.pause, state.failed) == (1, 1.0, 2)
    probe = Request(f"{U}/c")
    throttle.request_left_downloader(probe, crawler.spider)  # sent after the pause
    refused(mw, probe)
    assert (state.failures, state.pause) == (2, 2.0)


def test_a_host_that_never_answered_is_given_up_after_retry_unanswered_times():
    """A dead or wrong address: given up after RETRY_UNANSWERED_TIMES + 1 failures (3 by
    default, ~3 s of pauses), not after the back-off a host failing mid-crawl gets."""
    _, mw, throttle = build(RETRY_BACKOFF_BASE=1.0, RETRY_UNANSWERED_TIMES=2)
    state = throttle.intervals.state(HOST)
    for path in ("/a", "/b"):
        assert refused(mw, Request(U + path)) is not None  # retried, after a pause
    assert refused(mw, Request(U + "/c")) is None  # the third failure: given up, final
    assert state.down and state.pauses == 2  # 1 s, then 2 s
