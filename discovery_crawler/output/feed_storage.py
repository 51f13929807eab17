"""The feed's file (``FEED_STORAGES`` for local paths): Scrapy's ``FileFeedStorage``, with
a file that cannot be opened or stored (a read-only folder, a full disk) told to the run's
owner in one line, which stops the run, instead of a traceback and a crawl that goes on
with nowhere to put what it finds."""

from __future__ import annotations

import io
from typing import IO, TYPE_CHECKING, Any

from scrapy.extensions.feedexport import FileFeedStorage

from discovery_crawler.extensions.run import run_of

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from twisted.internet.defer import Deferred

    from discovery_crawler.extensions.run import DiscoveryRun


class FeedFile(FileFeedStorage):
    """A local feed file whose write failures stop the run (``DiscoveryRun.output_failed``)."""

    crawler: Crawler | None = None

    @classmethod
    def from_crawler(
        cls, crawler: Crawler, uri: str, *, feed_options: dict[str, Any] | None = None
    ) -> Self:
        storage = cls(uri, feed_options=feed_options)
        storage.crawler = crawler  # its run is looked up later: built with the extensions
        return storage

    @property
    def run(self) -> DiscoveryRun | None:
        return run_of(self.crawler) if self.crawler is not None else None

    def open(self, spider: Spider) -> IO[bytes]:
        try:
            return super().open(spider)
        except OSError as exc:
            run = self.run
            if run is None:
                raise
            run.output_failed(self.path, exc)
            return io.BytesIO()  # nothing is kept: the run is stopping

    def store(self, file: IO[bytes]) -> Deferred[None] | None:
        try:
            file.close()  # the last buffered bytes are written here
        except OSError as exc:
            run = self.run
            if run is None:
                raise
            run.output_failed(self.path, exc)
        return None
