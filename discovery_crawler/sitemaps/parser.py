"""Streaming sitemap parser: XML urlset / sitemapindex (any or no namespace), plain-text
sitemaps, RSS 2.0 and Atom feeds, each read by its format's reader (``sitemaps.formats``),
chosen once per document.

``iter_sitemap(body, url)`` is the public entry point: it yields ``Entry`` tuples, each
``loc`` resolved against the document's URL. ``iter_sitemap_batches`` is the crawler's: raw
locations as written, in lists (resolution and normalization happen in the URL pipeline,
in batches).

What is read as an entry (and what is not):

- several ``<loc>`` in one ``<url>`` or ``<sitemap>`` (an unclosed element: the generator
  left out ``</url><url>``) are each an entry, with the fields that follow each one; the
  split is counted in ``ParseResult.repairs``;
- a ``<url>`` in an RSS or Atom feed (the channel's ``<image><url>``, which every WordPress
  feed has) is the feed's picture, not a page; an RSS ``<guid isPermaLink="false">`` is an
  identifier, not a URL (RSS 2.0), so an item with only such a guid has no location;
- an ``xhtml:link`` is an alternate only with ``rel="alternate"``;
- a text sitemap's line is a location when it starts with ``http(s)://`` or ``/``, or names
  a host without a scheme (``urls.normalize.host_first``).
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
from typing import TYPE_CHECKING, Any

from discovery_crawler.sitemaps.body import SitemapBody
from discovery_crawler.sitemaps.formats import choose, plain_urlset
from discovery_crawler.sitemaps.reading import (
    HEAD_BYTES,
    SEVERAL_LOCS,
    Declined,
    Entry,
    Head,
    ParseResult,
    sniff_format,
)
from discovery_crawler.urls.normalize import UrlError, resolve_location

if TYPE_CHECKING:
    from collections.abc import Iterator

    from discovery_crawler.sitemaps.reading import Reader

__all__ = [
    "SEVERAL_LOCS",
    "Entry",
    "ParseResult",
    "iter_sitemap",
    "iter_sitemap_batches",
    "priority_value",
    "sniff_format",
]

_WINDOW = plain_urlset.WINDOW  # how much the fast path reads at a time (tests size by it)


@functools.lru_cache(maxsize=256)  # a site uses a handful of priority values
def priority_value(value: str) -> float | str:
    """A sitemap priority as a number when it is a finite one, else as written."""
    try:
        number = float(value)
    except ValueError:
        return value
    return number if math.isfinite(number) else value


def iter_sitemap(
    body: bytes | SitemapBody,
    url: str | None = None,
    *,
    result: ParseResult | None = None,
    max_bytes: int = 0,
    fast: bool = True,
) -> Iterator[Entry]:
    """Yield the entries of a sitemap body (bytes, gzipped or not) found at ``url``, child
    sitemaps (``is_sitemap``) after the pages.

    With ``url``, each ``loc`` (and alternate ``href``) is resolved against it as the
    crawler resolves sitemap locations (``urls.normalize.resolve_location``: ``/a`` and
    ``./a`` against the document, ``www.example.com/`` as that host); one that cannot be
    resolved is left as written. Without it, locations are as written. ``result`` (a
    ``ParseResult``) is filled in as the document is read: format, counts, malformed
    entries, the problem recovered from; ``max_bytes`` caps the decompressed size
    (``SitemapTooLarge``); ``fast=False`` skips the plain-urlset fast path.
    """
    if result is None:
        result = ParseResult()
    make = Entry._make
    where = _resolver(url)
    for batch in iter_sitemap_batches(body, result, 1000, max_bytes, fast, url=url):
        for fields in batch:
            if len(fields) == 5:  # a fast-path tuple: '' marks a missing field
                loc, lastmod, changefreq, priority, alternates = fields
                entry = make(
                    (
                        loc,
                        lastmod or None,
                        changefreq or None,
                        priority or None,
                        alternates or None,
                        False,
                    )
                )
            else:
                entry = fields
            yield where(entry)
    for loc in result.children:
        yield where(Entry(loc, is_sitemap=True))


def _resolver(url: str | None) -> Any:
    """A function giving an entry with its locations resolved against ``url`` (if any)."""
    if url is None:
        return lambda entry: entry

    def resolved(raw: str) -> str:
        try:
            return resolve_location(raw, url)
        except UrlError:
            return raw

    def where(entry: Entry) -> Entry:
        alternates = entry.alternates
        if alternates:
            alternates = tuple((lang, resolved(href)) for lang, href in alternates)
        return entry._replace(loc=resolved(entry.loc), alternates=alternates)

    return where


def iter_sitemap_batches(
    body: bytes | SitemapBody,
    result: ParseResult | None = None,
    batch_size: int = 1000,
    max_bytes: int = 0,
    fast: bool = True,
    url: str | None = None,
    max_entries: int = 0,
    describe: bool = True,
) -> Iterator[list[tuple[Any, ...]]]:
    """Yield the page entries of a sitemap body in lists of up to ``batch_size``.

    Each entry is a tuple whose first four fields are loc, lastmod, changefreq and
    priority (``''`` or None when absent), optionally followed by alternates. Child
    sitemaps of an index are collected in ``result.children`` (raw locations). ``url``,
    the document's address, tells a text sitemap's scheme-less line naming the site's
    host from a word (``host_first``). ``fast=False`` leaves out the fast paths (the
    plain-urlset reader). ``max_entries`` (0: none) stops reading after that many entries,
    pages and child sitemaps together (the protocol's 50,000 a file): ``result.capped``
    then says so, and the rest of the document is not read. ``describe=False`` leaves a
    plain urlset's malformed blocks undescribed (``plain_urlset.describe_malformed``).
    """
    if result is None:
        result = ParseResult()
    if not isinstance(body, SitemapBody):
        body = SitemapBody(body, max_bytes)
    result.gzipped = body.gzipped
    head = Head.of(body.peek(HEAD_BYTES))
    chosen = [reader for reader in choose(head) if fast or not reader.fast]
    try:
        if chosen:
            batches = _bounded_fields(_read(chosen, body, result, batch_size, url), result)
            if max_entries > 0:
                batches = _capped(batches, result, max_entries)
            yield from batches
        else:
            result.format = head.kind  # "empty": no reader claims a document without bytes
    finally:
        if describe:
            plain_urlset.describe_malformed(result)
        result.decompressed_bytes = body.size
        if body.problem:
            result.problem = f"{body.problem}; {result.problem}" if result.problem else body.problem


def _read(
    chosen: list[Reader], body: SitemapBody, result: ParseResult, size: int, url: str | None
) -> Iterator[list[tuple[Any, ...]]]:
    """The first chosen reader's batches; when it declines, the next one's from the
    document's start, without the rows already yielded (readers of one document yield
    the same rows in the same order)."""
    yielded = 0
    for reader in chosen:
        try:
            batches = reader.read(body, result, size, url)
            if yielded:
                batches = _skipping(batches, yielded)
            for batch in batches:
                yielded += len(batch)
                yield batch
            return
        except Declined:
            if reader is chosen[-1]:
                raise
            body.restart()
            _start_over(result)


FIELD_MAX = 64
"""The longest lastmod, changefreq or priority kept (a W3C datetime is at most 32
characters): a longer one — a hostile 40 MB text node — is dropped and counted."""
LONG_FIELD = f"a lastmod, changefreq or priority over {FIELD_MAX} characters: dropped"
"""The ``ParseResult.repairs`` reason for it."""
LOC_MAX = 8_192
"""The longest ``<loc>`` kept (the protocol allows 2,048 characters; no server or browser
takes 8 KiB): a longer entry is malformed (``LONG_LOC``), not a 20 MB record."""
LONG_LOC = f"location over {LOC_MAX:,} characters"


def _too_long(row: tuple[Any, ...]) -> bool:
    return len(row[0]) > LOC_MAX or any(f and len(f) > FIELD_MAX for f in row[1:4])


_LOCS = operator.itemgetter(0)
_FIELDS = operator.itemgetter(1, 2, 3)


def _any_too_long(batch: list[tuple[Any, ...]]) -> bool:
    """Whether a row of the batch has a location over ``LOC_MAX`` or a field over
    ``FIELD_MAX``: the longest of each found by C-level maps (a generator a row was a
    noticeable part of the sitemap worker's per-URL cost); rows with a None field (the
    XML reader's) a row at a time."""
    try:
        return (
            max(map(len, map(_LOCS, batch)), default=0) > LOC_MAX
            or max(map(len, itertools.chain.from_iterable(map(_FIELDS, batch))), default=0)
            > FIELD_MAX
        )
    except TypeError:  # a None field
        return any(
            len(r[0]) > LOC_MAX
            or (r[1] and len(r[1]) > FIELD_MAX)
            or (r[2] and len(r[2]) > FIELD_MAX)
            or (r[3] and len(r[3]) > FIELD_MAX)
            for r in batch
        )


def _bounded_fields(
    batches: Iterator[list[tuple[Any, ...]]], result: ParseResult
) -> Iterator[list[tuple[Any, ...]]]:
    """The batches without a location over ``LOC_MAX`` (malformed) and with every field
    over ``FIELD_MAX`` emptied (a repair): one cheap scan a batch, rows rebuilt only in a
    batch that has one."""
    for batch in batches:
        if _any_too_long(batch):
            rows = []
            for row in batch:
                if _too_long(row):
                    if len(row[0]) > LOC_MAX:
                        result.urls -= 1
                        result.malformed_count += 1
                        result.malformed_reasons[LONG_LOC] = (
                            result.malformed_reasons.get(LONG_LOC, 0) + 1
                        )
                        continue
                    fields = [f if not f or len(f) <= FIELD_MAX else "" for f in row[1:4]]
                    result.add_repair(LONG_FIELD, 1, row[0][:200])
                    values = (row[0], *fields, *row[4:])
                    row = row._make(values) if hasattr(row, "_make") else values
                rows.append(row)
            batch = rows
        yield batch


def _capped(
    batches: Iterator[list[tuple[Any, ...]]], result: ParseResult, cap: int
) -> Iterator[list[tuple[Any, ...]]]:
    """The first ``cap`` entries (rows yielded and children collected); past them the
    reader is closed, so a file of a million ``<loc>`` costs what 50,000 do."""
    yielded = 0
    for batch in batches:
        room = cap - yielded - len(result.children)
        if len(batch) > room:
            if room > 0:
                yielded += room
                yield batch[:room]
            del result.children[max(0, cap - yielded) :]
            batches.close()  # type: ignore[attr-defined]
            result.capped = cap
            result.urls, result.sitemaps = yielded, len(result.children)
            return
        yielded += len(batch)
        yield batch
    if yielded + len(result.children) > cap:  # an index: its children, past the cap
        del result.children[max(0, cap - yielded) :]
        result.capped = cap
        result.urls, result.sitemaps = yielded, len(result.children)


def _skipping(
    batches: Iterator[list[tuple[Any, ...]]], skip: int
) -> Iterator[list[tuple[Any, ...]]]:
    """The batches without their first ``skip`` rows. A reader declines after whole
    batches (the fast path yields only full ones before its end), so the batches after
    them keep their sizes."""
    for batch in batches:
        if skip >= len(batch):
            skip -= len(batch)
            continue
        if skip:
            batch = batch[skip:]
            skip = 0
        yield batch


def _start_over(result: ParseResult) -> None:
    """Forget what a reader that declined counted: the next counts the whole document."""
    fresh = ParseResult(gzipped=result.gzipped)
    for name in result.__dataclass_fields__:
        setattr(result, name, getattr(fresh, name))
