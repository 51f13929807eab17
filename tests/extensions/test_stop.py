"""The prompt stop's parts in process (``extensions/stop.py``, ``middlewares/stop.py``): the
signal handlers chain to Scrapy's (first: Scrapy's graceful stop and nothing more sent;
second: the close stops waiting; third: Scrapy's unclean shutdown), a request waiting for
its host's turn is dropped unsent, and the middleware hands requests back unsent. The whole
run, measured at a server, is ``e2e/test_stop.py``'s."""

from __future__ import annotations

import signal
from types import SimpleNamespace
from typing import Any

import pytest
from scrapy import Request
from scrapy.crawler import CrawlerProcessBase
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler
from twisted.internet.defer import Deferred

from discovery_crawler.extensions.stop import SHUTDOWN_SIGNALS, PromptStop, StopRequested
from discovery_crawler.extensions.throttle import HostThrottle
from discovery_crawler.middlewares.stop import StopMiddleware
from tests.extensions.fake_time import use_fake_time


class FakeProcess(CrawlerProcessBase):
    """Stands for Scrapy's CrawlerProcess: its two handlers, as it installs them."""

    def __init__(self) -> None:  # no settings, logging or reactor
        self.calls: list[str] = []

    def start(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError

    def crawl(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def _stop_dfd(self) -> Any:
        raise NotImplementedError

    def _signal_shutdown(self, signum: int, _: Any) -> None:
        self.calls.append("graceful")
        for sig in SHUTDOWN_SIGNALS:
            signal.signal(sig, self._signal_kill)

    def _signal_kill(self, signum: int, _: Any) -> None:
        self.calls.append("kill")


@pytest.fixture
def handlers():
    """Restores the process's signal handlers after the test."""
    saved = {sig: signal.getsignal(sig) for sig in SHUTDOWN_SIGNALS}
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


def prompt_stop(**settings: Any) -> tuple[PromptStop, list[tuple[Any, ...]]]:
    crawler = get_crawler(settings_dict=settings)
    crawler.stats.open_spider()
    stop = PromptStop.from_crawler(crawler)
    scheduled: list[tuple[Any, ...]] = []
    return stop, scheduled


def test_the_handlers_chain_to_scrapys_first_second_third(handlers):
    process = FakeProcess()
    for sig in SHUTDOWN_SIGNALS:
        signal.signal(sig, process._signal_shutdown)
    stop, scheduled = prompt_stop()
    stop._scrapy = {sig: signal.getsignal(sig) for sig in SHUTDOWN_SIGNALS}
    stop._call_soon = lambda *call: scheduled.append(call)
    stop._install(stop._first_signal)

    signal.getsignal(signal.SIGINT)(signal.SIGINT, None)  # Ctrl-C
    assert process.calls == ["graceful"]
    assert scheduled == [(stop.stop_sending, signal.SIGINT)]
    assert signal.getsignal(signal.SIGTERM) == stop._second_signal

    signal.getsignal(signal.SIGTERM)(signal.SIGTERM, None)  # then SIGTERM
    assert process.calls == ["graceful"]  # not Scrapy's unclean shutdown yet
    assert scheduled[-1] == (stop.force, signal.SIGTERM, process._signal_kill)
    assert signal.getsignal(signal.SIGINT) == process._signal_kill

    signal.getsignal(signal.SIGINT)(signal.SIGINT, None)  # a third: Scrapy's
    assert process.calls == ["graceful", "kill"]


def test_handlers_are_left_alone_when_they_are_not_scrapys(handlers):
    """A host application's CrawlerRunner: its signals are its own."""
    mine = lambda signum, frame: None  # noqa: E731
    for sig in SHUTDOWN_SIGNALS:
        signal.signal(sig, mine)
    stop, _ = prompt_stop()
    stop.engine_started()
    assert all(signal.getsignal(sig) is mine for sig in SHUTDOWN_SIGNALS)


def test_the_first_signal_drops_what_waits_for_its_hosts_turn_unsent():
    stop, _ = prompt_stop(HOST_INTERVAL=1.0)
    throttle = HostThrottle.from_crawler(stop.crawler)  # it answers the run_stopping signal
    use_fake_time(throttle)
    waiting: list[Deferred[None]] = []
    for host, n in (("a.example", 3), ("b.example", 2)):
        for i in range(n):
            waiter = throttle.turns.turn(host, Request(f"https://{host}/{i}"))
            if waiter is not None:  # each host's first one went: the others wait
                waiting.append(waiter)
    failures: list[Any] = []
    for waiter in waiting:
        waiter.addErrback(failures.append)
    downloader = SimpleNamespace(active={Request(f"https://x.example/{i}") for i in range(5)})
    stop.crawler.engine = SimpleNamespace(downloader=downloader)  # type: ignore[assignment]
    stop.stop_sending(signal.SIGTERM)
    assert stop.stopping
    assert len(failures) == 3 and throttle.turns.waiting() == 0
    assert all(f.check(StopRequested) for f in failures)
    assert stop.stats.get_value("stop/dropped") == 3
    assert stop.stats.get_value("stop/signal") == "SIGTERM"
    stop.stop_sending(signal.SIGTERM)  # once
    assert stop.stats.get_value("stop/dropped") == 3
    stop.dropped()  # one more reached the download handler afterwards
    assert stop.stats.get_value("stop/dropped") == 4


def test_off_by_setting():
    with pytest.raises(NotConfigured):
        PromptStop.from_crawler(get_crawler(settings_dict={"PROMPT_STOP_ENABLED": False}))


def test_the_middleware_hands_requests_back_unsent_once_stopping():
    stop, _ = prompt_stop()
    mw = StopMiddleware(stop)
    page = Request("https://example.com/a")
    robots = Request("https://example.com/robots.txt", meta={"robots_fetch": True})
    response = HtmlResponse(page.url, body=b"<html></html>", request=page)
    assert mw.process_request(page) is None  # not stopping: sent
    assert mw.process_exception(page, StopRequested()) is not None
    assert mw.process_exception(page, ValueError()) is None  # others: not ours

    stop.stopping = True
    back = mw.process_request(page)
    assert isinstance(back, Request) and back.url == page.url and back.dont_filter
    with pytest.raises(StopRequested):  # engine.download has no scheduler to go back to
        mw.process_request(robots)
    assert mw.process_exception(robots, StopRequested()) is None  # to the robots middleware
    assert stop.stats.get_value("stop/held") == 2
    assert mw.process_response(page, response) is response  # on the wire before: kept

    stop.forced = True  # the second signal: the run's files are being written
    assert isinstance(mw.process_response(page, response), Request)
    assert mw.process_response(robots, response) is response
