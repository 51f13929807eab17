"""Nothing more is sent once the run is stopping (``extensions/stop.py``: the first SIGINT
or SIGTERM).

Between the journal (950: a resumed job's replayed answers cost the host nothing) and the
chunk's count (960: a request handed back was never fetched), so it is the last
middleware a request passes before the downloader's slot:

* a request that reaches it after the signal goes back to the scheduler unsent (a
  downloader middleware may return a request; the closing engine schedules nothing more:
  it is dropped with the queue, and a resumed job asks for it again);
* a request the prompt stop dropped from its slot's queue fails with ``StopRequested``,
  seen here first (``process_exception`` runs from the downloader's side), and goes back
  the same way: no other middleware sees it, so no retry, refusal or errback records it;
* robots.txt fetched by the robots middleware (``robots_fetch``: ``engine.download`` has no
  scheduler to hand a request back to) fails with ``StopRequested`` instead, which the
  robots middleware passes on to the requests waiting for that robots.txt, so they come
  back here and go back unsent, and no policy is kept from a fetch that never was;
* after a second signal, an answer to a request abandoned on the wire is not passed on:
  the run's files are being written or are written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.exceptions import NotConfigured

from discovery_crawler.extensions.stop import StopRequested, prompt_stop_of

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from discovery_crawler.extensions.stop import PromptStop


class StopMiddleware:
    """Hands every request back unsent once the run is stopping."""

    def __init__(self, stop: PromptStop):
        self.stop = stop

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        stop = prompt_stop_of(crawler)
        if stop is None:
            raise NotConfigured("the prompt stop is off")
        return cls(stop)

    def process_request(self, request: Request) -> Request | None:
        if not self.stop.stopping:
            return None
        self.stop.held()
        if request.meta.get("robots_fetch"):
            raise StopRequested(f"the run is stopping: {request.url} not sent")
        return _unsent(request)

    def process_exception(self, request: Request, exception: Exception) -> Request | None:
        if not isinstance(exception, StopRequested) or request.meta.get("robots_fetch"):
            return None
        return _unsent(request)

    def process_response(self, request: Request, response: Response) -> Request | Response:
        if self.stop.forced and not request.meta.get("robots_fetch"):
            return _unsent(request)  # abandoned on the wire: the run is no longer there
        return response


def _unsent(request: Request) -> Request:
    """``request`` handed back to the (closing) scheduler: past its duplicate filter,
    which saw it once already."""
    return request.replace(dont_filter=True)
