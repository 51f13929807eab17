"""Replay on resume: a request whose response the job's journal holds (``journal.py``) is
answered from it, without the network; every response that came from the network is added
to it. Closest to the downloader (below HTTP compression, redirects, retries, robots and
refusals), so a replayed response passes through every other middleware as the original
did: a redirect is followed again, a 500 is retried again and answered by the response
that came next.

Off (``NotConfigured``) unless the run is resumable (``JOBDIR``, ``extensions/job.py``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured
from scrapy.http import Headers
from scrapy.utils.misc import load_object

from discovery_crawler.extensions.job import ResumableJob

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

REPLAYED = "journal"  # the flag of a response replayed from the journal


def response_parts(response: Response) -> dict[str, Any]:
    """What a response is made of, as plain data for the journal."""
    cls = type(response)
    return {
        "cls": f"{cls.__module__}.{cls.__qualname__}",
        "url": response.url,
        "status": response.status,
        "headers": {bytes(k): list(v) for k, v in response.headers.items()},
        "body": response.body,
        "flags": list(response.flags),
        "protocol": response.protocol,
    }


def response_from(parts: dict[str, Any], request: Request) -> Response:
    """The response again, for ``request``, flagged ``journal``."""
    cls = load_object(parts["cls"])
    return cls(
        url=parts["url"],
        status=parts["status"],
        headers=Headers(parts["headers"]),
        body=parts["body"],
        flags=[*parts["flags"], REPLAYED],
        request=request,
        protocol=parts.get("protocol"),
    )


class ResponseJournalMiddleware:
    """Answers from the job's journal what it holds; journals what the network answers."""

    def __init__(self, crawler: Crawler, job: ResumableJob):
        self.crawler = crawler
        self.job = job
        self.journal = job.journal
        self.fingerprint = crawler.request_fingerprinter.fingerprint
        self.stats = crawler.stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        job = crawler.get_extension(ResumableJob)
        if job is None or job.journal is None:
            raise NotConfigured
        return cls(crawler, job)

    def process_request(self, request: Request) -> Response | None:
        parts = self.journal.take(self.fingerprint(request))
        if parts is None:
            return None
        self.stats.inc_value("job/responses_replayed")
        return response_from(parts, request)

    def process_response(self, request: Request, response: Response) -> Response:
        if REPLAYED in response.flags:
            return response
        try:
            self.journal.append(self.fingerprint(request), response_parts(response))
        except OSError as exc:
            self.job.journal_failed(exc)
        else:
            self.stats.inc_value("job/responses_journaled")
        return response
