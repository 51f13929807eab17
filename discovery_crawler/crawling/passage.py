"""The items a callback yielded, until the item pipelines are through with them.

Scrapy hands a callback's output to the pipelines through a queue of its own
(``2 × CONCURRENT_ITEMS`` places, worked by ``CONCURRENT_ITEMS`` tasks): a callback can end
while its last items still wait there, and a callback that starts after it can have its
items pass the stages first. That is how a resumed run, whose journal answers every
sitemap at once, saw a URL first in the second sitemap listing it: the sitemap walk reads
documents in the order it asked for them, but it counted a document done when its parse
ended, not when its listings had passed the stages that keep the first one (union, dedup).
The walk waits here (``through``) before it lets the next document in.

An item has passed when Scrapy says so for the response that yielded it
(``item_scraped``, ``item_dropped`` or ``item_error``): counted by response, not by item, as
a pipeline may hand on another object than it was given.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response


class _Yielded:
    """One response's items not through the pipelines yet."""

    __slots__ = ("passed", "response", "waiting")

    def __init__(self, response: Response):
        self.response = response  # held: its id keys it while it is counted
        self.waiting = 0
        self.passed: asyncio.Event | None = None


class ItemPassage:
    """Counts what callbacks yield until the pipelines are through with it."""

    def __init__(self, crawler: Crawler):
        self._yielded: dict[int, _Yielded] = {}
        for signal in (signals.item_scraped, signals.item_dropped, signals.item_error):
            crawler.signals.connect(self._passed, signal=signal)

    def sent(self, response: Response, output: Any) -> Any:
        """``output``, yielded by the callback of ``response``: counted when it is an item
        (a request goes to the scheduler, not the pipelines)."""
        if not isinstance(output, Request):
            yielded = self._yielded.get(id(response))
            if yielded is None:
                yielded = self._yielded[id(response)] = _Yielded(response)
            yielded.waiting += 1
        return output

    async def through(self, response: Response) -> None:
        """Until every item ``response``'s callback yielded has passed the pipelines."""
        yielded = self._yielded.get(id(response))
        if yielded is None:
            return
        yielded.passed = asyncio.Event()
        await yielded.passed.wait()

    def _passed(self, response: Any = None, **kwargs: Any) -> None:
        yielded = self._yielded.get(id(response))
        if yielded is None or yielded.response is not response:
            return
        yielded.waiting -= 1
        if yielded.waiting <= 0:
            del self._yielded[id(response)]
            if yielded.passed is not None:
                yielded.passed.set()

    def __len__(self) -> int:
        """Responses with items still in the pipelines."""
        return len(self._yielded)
