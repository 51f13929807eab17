"""``scrapy`` whose feed cannot be moved into place at the end (``os.replace`` of a
``.partial`` feed fails with EACCES, as a folder made read-only mid-run would make it):
the failure comes after every line is written, in Scrapy's closing task. Used by
``tests/e2e/test_write_faults.py``.

    python tests/probes/failing_rename.py crawl discover -a url=… -a out=…
"""

from __future__ import annotations

import errno
import os
import sys
from typing import Any

from scrapy.cmdline import execute

from discovery_crawler.output import feed_storage

_replace = os.replace


def _replace_failing(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
    if str(src).endswith(feed_storage.PARTIAL_SUFFIX):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(dst))
    _replace(src, dst, *args, **kwargs)


feed_storage.os.replace = _replace_failing  # type: ignore[attr-defined]

if __name__ == "__main__":
    sys.argv = ["scrapy", *sys.argv[1:]]
    execute()
