"""``ItemPassage``: a response's items counted until Scrapy says each has passed the
pipelines (scraped, dropped or failed), whatever object a stage handed on."""

from __future__ import annotations

import asyncio

from scrapy import Request, Spider, signals
from scrapy.exceptions import DropItem
from scrapy.http import Response
from scrapy.utils.test import get_crawler
from twisted.python.failure import Failure

from discovery_crawler.crawling.passage import ItemPassage

URL = "https://example.com/sitemap.xml"


def _passed(crawler, signal, item, response) -> None:
    extra = {
        signals.item_scraped: {},
        signals.item_dropped: {"exception": DropItem("empty")},
        signals.item_error: {"failure": Failure(ValueError("a stage failed"))},
    }[signal]
    crawler.signals.send_catch_log(signal, item=item, response=response, spider=None, **extra)


def test_through_waits_for_each_item_scraped_dropped_or_failed():
    crawler = get_crawler(Spider)
    passage = ItemPassage(crawler)
    response, other = Response(URL), Response(URL)
    items = [{"n": 1}, {"n": 2}, {"n": 3}]

    async def run() -> None:
        for item in items:
            assert passage.sent(response, item) is item
        passage.sent(response, Request(URL))  # to the scheduler: not counted
        waiting = asyncio.ensure_future(passage.through(response))
        _passed(crawler, signals.item_scraped, {"another": "object"}, response)
        _passed(crawler, signals.item_scraped, items[1], other)  # another response's
        _passed(crawler, signals.item_dropped, items[1], response)
        await asyncio.sleep(0)
        assert not waiting.done() and len(passage) == 1
        _passed(crawler, signals.item_error, items[2], response)
        await asyncio.wait_for(waiting, 1)
        assert len(passage) == 0

    asyncio.run(run())


def test_through_returns_at_once_when_nothing_waits():
    crawler = get_crawler(Spider)
    passage = ItemPassage(crawler)
    response = Response(URL)

    async def run() -> None:
        await asyncio.wait_for(passage.through(response), 1)  # nothing yielded
        passage.sent(response, Request(URL))
        passage.sent(response, {"n": 1})
        _passed(crawler, signals.item_scraped, {"n": 1}, response)  # passed before the end
        await asyncio.wait_for(passage.through(response), 1)

    asyncio.run(run())
