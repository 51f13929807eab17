"""Before a run starts: can its files be written? An out folder or a feed path that cannot
be (``-a out=/proc/x``, a read-only folder) is said in one line and the run does not start
(exit status 4), rather than crawling a whole site with nowhere to put it. Nothing is
truncated or left behind by the check."""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path
from typing import Any

from discovery_crawler.output.crawl_log import os_error_text


class OutputUnwritable(Exception):
    """A file of the run cannot be written; the message names it and the OS error."""


def make_folder(path: Path) -> None:
    """``mkdir -p``, but a file where a folder should be is "Not a directory" (``mkdir``
    says "File exists", which reads as if all were well)."""
    for ancestor in (path, *path.parents):
        if ancestor.exists():
            if not ancestor.is_dir():
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR))
            break
    path.mkdir(parents=True, exist_ok=True)


def check_out_dir(path: Path, what: str = "the out folder") -> None:
    """``path`` exists (made if missing) and a file can be created in it."""
    try:
        make_folder(path)
        fd, probe = tempfile.mkstemp(prefix=".discovery-write-check-", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OutputUnwritable(f"cannot write to {what} {path}: {os_error_text(exc)}") from None


def check_feed_file(path: Path) -> None:
    """The feed file can be opened for writing (its folder made if missing); opened to
    append, so an existing feed is not truncated; removed again when the check made it."""
    existed = path.exists()
    try:
        make_folder(path.parent)
        with path.open("ab"):
            pass
        if not existed:
            path.unlink()
    except OSError as exc:
        raise OutputUnwritable(f"cannot write the feed {path}: {os_error_text(exc)}") from None


def local_feed_paths(feeds: dict[str, Any]) -> list[Path]:
    """The local files among ``FEEDS``'s URIs (a path, or ``file://``); stdout and remote
    storages are left to Scrapy."""
    found = []
    for uri in feeds:
        uri = str(uri)
        if uri.startswith("file://"):
            found.append(Path(uri[len("file://") :]))
        elif "://" not in uri and not uri.startswith(("stdout:", "-")):
            found.append(Path(uri))
    return found
