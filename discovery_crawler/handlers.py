"""The project's HTTP(S) download handler: a request is sent at its host's turn.

``HostTurnHandler`` wraps the download handler that connects (``HOST_INTERVAL_HANDLER``:
Scrapy's HTTP/1.1 handler, the one whose connections resolve through the SSRF guard's
pinned resolver, ``middlewares/ssrf.py``). Before handing a request on it

* gives it back unsent when the run is stopping (``extensions/stop.py``: the first
  SIGINT / SIGTERM) — a request that waited in its download slot's queue ends here;
* waits for its host's turn (``extensions/throttle.py``: ``HostThrottle.turn``): the
  per-host interval, Crawl-delay, Retry-After and back-off pauses are kept at the moment
  the request is sent, whatever the download slots do, and job-wide in distributed mode.

Without the throttle in ``EXTENSIONS`` it sends at once, as the wrapped handler would.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.core.downloader.handlers.base import BaseDownloadHandler
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.misc import build_from_crawler, load_object

from discovery_crawler.extensions.stop import StopRequested, prompt_stop_of
from discovery_crawler.extensions.throttle import HostThrottle

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

HTTP11_HANDLER = "scrapy.core.downloader.handlers.http11.HTTP11DownloadHandler"


class HostTurnHandler(BaseDownloadHandler):
    """Sends each request through the wrapped handler once its host's turn has come."""

    lazy = False

    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        path = crawler.settings.get("HOST_INTERVAL_HANDLER") or HTTP11_HANDLER
        self.inner = build_from_crawler(load_object(path), crawler)
        self.throttle = crawler.get_extension(HostThrottle)
        self.stop = prompt_stop_of(crawler)

    async def download_request(self, request: Request) -> Response:
        if self.stop is not None and self.stop.stopping:
            self.stop.dropped()
            raise StopRequested(f"the run is stopping: {request.url} not sent")
        throttle = self.throttle
        if throttle is None:
            return await self._send(request)
        await throttle.turn(request)
        try:
            return await self._send(request)
        finally:
            throttle.sent(request)

    async def _send(self, request: Request) -> Response:
        result = self.inner.download_request(request)
        if hasattr(result, "addCallback"):  # a Deferred-based handler
            return await maybe_deferred_to_future(result)
        return await result

    async def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close is None:
            return
        result = close()
        if hasattr(result, "addCallback"):
            await maybe_deferred_to_future(result)
        elif result is not None:
            await result
