"""The text reader: a plain-text sitemap, one location a line.

A line is a location when it starts with ``http(s)://`` or ``/``, or names a host without
a scheme (``urls.normalize.host_first``, which needs the document's ``url``); blank lines
are skipped and any other line is a malformed entry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from discovery_crawler.sitemaps.reading import BOM, Entry, Reader, batched
from discovery_crawler.urls.normalize import host_first

if TYPE_CHECKING:
    from collections.abc import Iterator

    from discovery_crawler.sitemaps.body import SitemapBody
    from discovery_crawler.sitemaps.reading import Head, ParseResult


def read(
    body: SitemapBody, result: ParseResult, batch_size: int, url: str | None = None
) -> Iterator[list[tuple[Any, ...]]]:
    """The document's locations as entries, ``batch_size`` at a time."""
    result.format = "text"
    return batched(_entries(body, result, url), result, batch_size)


def _entries(body: SitemapBody, result: ParseResult, url: str | None) -> Iterator[Entry]:
    first = True
    while line_bytes := body.readline():
        if first:
            line_bytes = line_bytes.removeprefix(BOM)
            first = False
        line = line_bytes.decode("utf-8", "replace").strip()
        if not line:
            continue
        if (line.startswith(("http://", "https://", "/")) or host_first(line, url)) and not any(
            c.isspace() for c in line
        ):
            result.urls += 1
            yield Entry(line)
        else:
            result.add_malformed(line)


def _claims(head: Head) -> bool:
    return head.kind == "text"


READER = Reader("text", order=90, claims=_claims, read=read)
