"""``scrapy`` with a disk that fills up: every file the feed storage opens takes
``FULL_DISK_BYTES`` bytes (env, default 64 KiB) and then fails with ``ENOSPC``, as a full
disk does. Used by ``tests/e2e/test_outcomes.py`` where no small tmpfs can be mounted.

    python tests/probes/full_disk.py crawl discover -a url=… -O feed.jsonl
"""

from __future__ import annotations

import errno
import io
import os
import sys
from typing import Any

from scrapy.cmdline import execute

from discovery_crawler.output import feed_storage

_open = feed_storage.FeedFile.open
ROOM = int(os.environ.get("FULL_DISK_BYTES", 65536))


class FullDiskFile(io.BufferedWriter):
    """A file on a disk with ``ROOM`` bytes left."""

    written = 0

    def write(self, data: Any) -> int:
        self.written += len(data)
        if self.written > ROOM:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return super().write(data)


def _open_on_full_disk(self: Any, spider: Any) -> Any:
    file = _open(self, spider)
    raw = file.detach()
    return FullDiskFile(raw)


feed_storage.FeedFile.open = _open_on_full_disk  # type: ignore[method-assign]

if __name__ == "__main__":
    sys.argv = ["scrapy", *sys.argv[1:]]
    execute()
