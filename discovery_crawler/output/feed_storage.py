"""The feed's file (``FEED_STORAGES`` for local paths): Scrapy's ``FileFeedStorage``, written
under a temporary name in the same folder (``inventory.jsonl.partial``) and renamed into
place only when the feed is whole, so a reader never takes a cut-short feed for a complete
one — whatever stopped it: a full disk, a kill, a crash.

- ``-O`` (overwrite) and the default feed: written to ``<name>.partial``, renamed over
  ``<name>`` at the end. A previous complete feed stays as it was until then.
- ``-o`` (append): the existing feed is copied to ``<name>.partial`` and appended to
  there, so the feed at ``<name>`` grows by a whole run's lines or not at all.

A file that cannot be opened or written, or an output of the run that failed before the
feed was stored (``signals.output_failed``: the run stops, its files are partial), leaves
the temporary file as it is, named ``.partial``, and the feed at ``<name>`` untouched; the
run's owner says it in one line and the run exits 4 (``output_failed``).
"""

from __future__ import annotations

import errno
import io
import logging
import os
import shutil
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from scrapy.extensions.feedexport import FileFeedStorage

from discovery_crawler.output.writable import make_folder
from discovery_crawler.signals import output_failed

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from twisted.internet.defer import Deferred

logger = logging.getLogger(__name__)

PARTIAL_SUFFIX = ".partial"


def partial_path(path: Path) -> Path:
    """Where the feed at ``path`` is written until it is whole."""
    return path.with_name(path.name + PARTIAL_SUFFIX)


class FeedFile(FileFeedStorage):
    """A local feed file written under a temporary name and renamed when whole; its write
    failures are signalled (``signals.output_failed``)."""

    crawler: Crawler | None = None

    def __init__(self, uri: str, *, feed_options: dict[str, Any] | None = None):
        super().__init__(uri, feed_options=feed_options)
        self.target = Path(self.path)
        self.partial = partial_path(self.target)
        self.failed = False  # an output of the run failed: the feed is not whole
        self._inode: int | None = None  # the file this run writes (open)

    @classmethod
    def from_crawler(
        cls, crawler: Crawler, uri: str, *, feed_options: dict[str, Any] | None = None
    ) -> Self:
        storage = cls(uri, feed_options=feed_options)
        storage.crawler = crawler
        crawler.signals.connect(storage.output_failed, signal=output_failed)
        return storage

    def output_failed(self, path: object = None, error: object = None) -> None:
        """A file of the run could not be written: the run stops, so the feed is short."""
        self.failed = True

    def _failed(self, exc: OSError, path: Path | None = None) -> None:
        self.failed = True
        if self.crawler is None:
            raise exc
        self.crawler.signals.send_catch_log(output_failed, path=path or self.partial, error=exc)

    def open(self, spider: Spider) -> IO[bytes]:
        try:
            make_folder(self.partial.parent)
            # A file of its own (a new inode), never one a killed or a concurrent run
            # still writes: two runs' lines are never mixed in one file.
            self.partial.unlink(missing_ok=True)
            if self.write_mode == "ab" and self.target.exists():
                # -o: the lines already there, then this run's; <name> moves in one step
                shutil.copyfile(self.target, self.partial)
                file = self.partial.open("ab")
            else:
                file = self.partial.open("xb")
            self._inode = os.fstat(file.fileno()).st_ino
            return file
        except OSError as exc:
            self._failed(exc)
            return io.BytesIO()  # nothing is kept: the run is stopping

    def _still_ours(self) -> bool:
        """``<name>.partial`` is still the file this run wrote (not one another run
        writing the same feed put there since)."""
        try:
            return os.stat(self.partial).st_ino == self._inode
        except OSError:
            return False

    def store(self, file: IO[bytes]) -> Deferred[None] | None:
        try:
            if not self.failed and self._inode is not None:
                file.flush()  # the last buffered bytes are written here,
                os.fsync(file.fileno())  # and on disk before the name says "whole"
        except OSError as exc:
            self._failed(exc)
        try:
            file.close()
        except OSError as exc:
            if not self.failed:
                self._failed(exc)
        if not self.failed and not self._still_ours():
            self._failed(
                FileExistsError(
                    errno.EEXIST,
                    "another run writing the same feed replaced it; this run's feed is lost",
                )
            )
            return None
        if not self.failed:
            try:
                os.replace(self.partial, self.target)
                return None
            except OSError as exc:
                self._failed(exc, self.target)
        if self.partial.exists():
            logger.warning(
                "the feed is partial: what was written is kept as %s; %s is left as it was",
                self.partial,
                self.target,
            )
        return None
