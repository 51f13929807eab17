"""Bounded chunks (``MAX_CHUNK_PAGES``): one invocation of a resumable job sends at most
this many requests to the network, then ends with ``more_to_do`` (exit status 6); the
next invocation with the same job folder replays what the journal holds (nothing fetched
again) and sends the next chunk, until the job completes.

Closest to the downloader, after the journal middleware (950): a request that reaches it
is one the journal could not answer, a request the host will see. robots.txt, sitemaps,
pages and retries count alike: each is a request the host interval paces (the seed's
"tasks per invocation"). The first ``MAX_CHUNK_PAGES`` pass. The next one stops the run
(``DiscoveryRun.stop(CHUNK_DONE_REASON)``) and goes back to the scheduler unsent (a
downloader middleware may return a request): Scrapy's close waits for the requests
already sent, so every response fetched is journaled before the run ends, and the
requests left over are dropped with the queue — the next invocation's replay asks for
them again. So a chunk stops only when there is more to fetch: a job whose last chunk
needs exactly ``MAX_CHUNK_PAGES`` requests completes in it.

The middleware's own robots.txt fetches (``robots_fetch``: fetched with
``engine.download``, which has no scheduler to hand a request back to) always pass.

Off (``NotConfigured``) unless ``MAX_CHUNK_PAGES`` > 0 and the run is a job
(``JOBDIR``, ``extensions/job.py``; ``spiders/base.py`` gives a chunked run a default job
folder). Counts: stats ``chunk/fetched``, ``chunk/held``; the crawl log's ``chunk``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.exceptions import NotConfigured

from discovery_crawler.extensions.job import ResumableJob
from discovery_crawler.extensions.run import run_of
from discovery_crawler.middlewares.journal import REPLAYED
from discovery_crawler.outcomes import CHUNK_DONE_REASON

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from discovery_crawler.extensions.run import DiscoveryRun

logger = logging.getLogger(__name__)

CHUNK_SETTING = "MAX_CHUNK_PAGES"


class ChunkMiddleware:
    """Lets ``MAX_CHUNK_PAGES`` requests reach the network, then ends the invocation."""

    def __init__(self, crawler: Crawler, run: DiscoveryRun, max_pages: int):
        self.crawler = crawler
        self.run = run
        self.stats = crawler.stats
        self.max_pages = max_pages
        self.fetched = 0
        self.chunk = {
            "max_pages": max_pages,
            "fetched": 0,
            "held": 0,
            "answered": 0,  # responses from the network (0: the site may be down)
            "more_to_do": False,
        }
        run.record.chunk = self.chunk

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        max_pages = crawler.settings.getint(CHUNK_SETTING, 0)
        if max_pages <= 0:
            raise NotConfigured
        job = crawler.get_extension(ResumableJob)
        run = run_of(crawler)
        if run is None or job is None or job.journal is None:
            # (a discovery run always has a job here: spiders/base.py gives it a folder)
            raise NotConfigured(f"{CHUNK_SETTING} needs a job folder (JOBDIR)")
        return cls(crawler, run, max_pages)

    def process_response(self, request: Request, response: Response) -> Response:
        if REPLAYED not in response.flags:
            self.chunk["answered"] += 1
        return response

    def process_request(self, request: Request) -> Request | None:
        chunk = self.chunk
        if self.fetched < self.max_pages or request.meta.get("robots_fetch"):
            self.fetched += 1
            chunk["fetched"] = self.fetched
            self.stats.inc_value("chunk/fetched")
            return None
        chunk["held"] += 1
        self.stats.inc_value("chunk/held")
        if not chunk["more_to_do"]:
            chunk["more_to_do"] = True
            logger.info(
                "%s=%d reached: the requests sent are finished, the rest wait for the next "
                "invocation of the job",
                CHUNK_SETTING,
                self.max_pages,
            )
            self.run.stop(CHUNK_DONE_REASON)
        # Back to the scheduler, unsent; the closing engine schedules nothing more.
        return request.replace(dont_filter=True)
