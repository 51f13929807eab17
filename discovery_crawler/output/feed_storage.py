"""The feed's file (``FEED_STORAGES`` for local paths): Scrapy's ``FileFeedStorage``, with
a file that cannot be opened or stored (a read-only folder, a full disk) told with the
``output_failed`` signal — the run's owner says it in one line and stops the run — instead
of a traceback and a crawl that goes on with nowhere to put what it finds."""

from __future__ import annotations

import io
from typing import IO, TYPE_CHECKING, Any

from scrapy.extensions.feedexport import FileFeedStorage

from discovery_crawler.signals import output_failed

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from twisted.internet.defer import Deferred


class FeedFile(FileFeedStorage):
    """A local feed file whose write failures are signalled (``signals.output_failed``)."""

    crawler: Crawler | None = None

    @classmethod
    def from_crawler(
        cls, crawler: Crawler, uri: str, *, feed_options: dict[str, Any] | None = None
    ) -> Self:
        storage = cls(uri, feed_options=feed_options)
        storage.crawler = crawler
        return storage

    def _failed(self, exc: OSError) -> None:
        if self.crawler is None:
            raise exc
        self.crawler.signals.send_catch_log(output_failed, path=self.path, error=exc)

    def open(self, spider: Spider) -> IO[bytes]:
        try:
            return super().open(spider)
        except OSError as exc:
            self._failed(exc)
            return io.BytesIO()  # nothing is kept: the run is stopping

    def store(self, file: IO[bytes]) -> Deferred[None] | None:
        try:
            file.close()  # the last buffered bytes are written here
        except OSError as exc:
            self._failed(exc)
        return None
