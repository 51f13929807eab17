"""The project's download handler (``handlers.py``) in process, over a stand-in for the
handler that connects: a request goes through once its host's turn is taken, goes back
unsent once the run is stopping, and its turn ends with its download. Measured at a
server: ``tests/e2e/test_throttle.py``, ``tests/e2e/test_stop.py``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from scrapy import Request
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from discovery_crawler.extensions.stop import PromptStop, StopRequested
from discovery_crawler.extensions.throttle import HostThrottle
from discovery_crawler.handlers import HostTurnHandler
from tests.extensions.fake_time import use_fake_time


class Connecting:
    """Stands for Scrapy's HTTP/1.1 handler: notes what it was asked to send."""

    sent: list[str] = []  # noqa: RUF012
    closed = False

    def __init__(self, crawler: Any) -> None:
        pass

    @classmethod
    def from_crawler(cls, crawler: Any) -> Connecting:
        return cls(crawler)

    async def download_request(self, request: Request) -> HtmlResponse:
        Connecting.sent.append(request.url)
        return HtmlResponse(request.url, body=b"<html></html>", request=request)

    async def close(self) -> None:
        Connecting.closed = True


def handler(**settings: Any) -> HostTurnHandler:
    Connecting.sent = []
    crawler = get_crawler(
        settings_dict={
            "HOST_INTERVAL_HANDLER": f"{__name__}.Connecting",
            "EXTENSIONS": {HostThrottle: 0, PromptStop: 0},
            **settings,
        }
    )
    crawler.stats.open_spider()
    return HostTurnHandler.from_crawler(crawler)


def test_a_request_is_sent_through_the_inner_handler_at_its_hosts_turn():
    h = handler(HOST_INTERVAL=5.0)
    fake = use_fake_time(h.throttle)
    request = Request("https://example.com/a")
    response = asyncio.run(h.download_request(request))
    assert response.url == request.url and Connecting.sent == [request.url]
    assert request.meta["throttle_wait"] == 0.0  # the host's first turn: at once
    assert h.throttle.turns.lines == {}  # its download ended: nothing on its way
    second = h.throttle.turns.turn("example.com", Request("https://example.com/b"))
    assert second is not None and not second.called
    assert fake.pending() == [pytest.approx(5.0)]  # the next turn is 5 s away
    asyncio.run(h.close())
    assert Connecting.closed


def test_once_the_run_is_stopping_nothing_more_is_sent():
    h = handler(HOST_INTERVAL=0)
    h.stop.stopping = True
    with pytest.raises(StopRequested):
        asyncio.run(h.download_request(Request("https://example.com/a")))
    assert Connecting.sent == []
    assert h.stop.stats.get_value("stop/dropped") == 1


def test_without_the_throttle_it_sends_at_once():
    h = handler(EXTENSIONS={})
    assert h.throttle is None and h.stop is None
    asyncio.run(h.download_request(Request("https://example.com/a")))
    asyncio.run(h.download_request(Request("https://example.com/b")))
    assert len(Connecting.sent) == 2
