"""What a sitemap format reader is and what it makes: the contract between
``sitemaps.parser`` (which chooses a reader once per document) and the readers in
``sitemaps.formats``.

A reader is declared by a ``Reader``: its name, the documents it claims (from their
``Head``: the first bytes, decompressed, and what they look like), its place in the order
claims are tried, and ``read(body, result, batch_size, url)``. ``read`` yields the
document's page entries in lists of up to ``batch_size`` rows, in document order; every
row has one shape: a tuple whose first five fields are loc, lastmod, changefreq, priority
and alternates (``''`` or None when absent). An ``Entry`` is such a row (with
``is_sitemap`` after them); so is the fast path's bare 5-tuple. Child sitemaps of an
index go to ``result.children``, not into the rows (``batched`` does both). ``read`` fills
in ``result`` as it goes, ``result.format`` included; it may raise ``Declined`` (before or
after yielding rows): the document is then read again from the start by the next reader
that claimed it, without the rows already yielded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from discovery_crawler.sitemaps.body import SitemapTooLarge

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from discovery_crawler.sitemaps.body import SitemapBody

HEAD_BYTES = 4096
"""How much of a document (decompressed) its ``Head`` holds."""

BOM = b"\xef\xbb\xbf"
WHITESPACE = b" \t\r\n"


class Entry(NamedTuple):
    """One ``<url>`` / ``<sitemap>`` / feed item / text line of a sitemap."""

    loc: str
    lastmod: str | None = None
    changefreq: str | None = None
    priority: str | None = None
    # (hreflang or None, href) pairs from xhtml:link rel="alternate"
    alternates: tuple[tuple[str | None, str], ...] | None = None
    is_sitemap: bool = False


@dataclass
class ParseResult:
    """What one document turned out to be, filled in while it is iterated."""

    format: str = "unknown"  # urlset | sitemapindex | text | rss | atom | html | empty | ...
    urls: int = 0
    sitemaps: int = 0
    extensions: dict[str, int] = field(default_factory=dict)  # image/video/news... elements
    # raw entries without a usable loc; a plain urlset's wait as blocks (``Undescribed``)
    # until ``iter_sitemap_batches`` (or the spider, for the worker's) describes them
    malformed: list[Any] = field(default_factory=list)
    malformed_count: int = 0
    malformed_reasons: dict[str, int] = field(default_factory=dict)  # other than no <loc>
    children: list[str] = field(default_factory=list)  # child sitemaps of an index
    # ... and the <lastmod> the index gives each ('' for none), in the same order
    child_lastmods: list[str] = field(default_factory=list)
    problem: str | None = None  # recovered error, in words
    decompressed_bytes: int = 0
    gzipped: bool = False
    repairs: dict[str, int] = field(default_factory=dict)  # entries read other than as written
    repair_examples: list[dict[str, str]] = field(default_factory=list)  # a few, with raw
    capped: int = 0  # the entry cap that stopped reading (SITEMAP_MAX_URLS_PER_FILE); 0: none

    def add_malformed(self, raw: Any, cap: int = 100) -> None:
        self.malformed_count += 1
        if len(self.malformed) < cap:
            self.malformed.append(raw[:500] if raw.__class__ is str else raw)

    def add_repair(self, reason: str, count: int, raw: str, cap: int = 100) -> None:
        self.repairs[reason] = self.repairs.get(reason, 0) + count
        if len(self.repair_examples) < cap:
            self.repair_examples.append({"raw": raw[:500], "reason": reason})


# How lxml reads a sitemap wherever it does: recovering from broken XML, entities never
# resolved and nothing fetched (no XXE, no billion laughs), comments and PIs dropped.
LXML_OPTIONS: dict[str, bool] = {
    "recover": True,
    "resolve_entities": False,
    "no_network": True,
    "load_dtd": False,
    "remove_comments": True,
    "remove_pis": True,
    "remove_blank_text": True,
    "huge_tree": True,
}
SEVERAL_LOCS = "several <loc> in one <url> or <sitemap>: each read as its own entry"
"""The ``ParseResult.repairs`` reason for a record split at each of its ``<loc>``."""


class Declined(Exception):
    """The reader cannot read this document as the next reader that claimed it would."""


def sniff_format(head: bytes) -> str:
    """Guess ``xml``, ``text`` or ``empty`` from the first bytes of a (decompressed) body."""
    head = head.removeprefix(BOM).lstrip(WHITESPACE + b"\x00")
    if not head:
        return "empty"
    if head[:1] == b"<":
        return "xml"
    return "text"


def declares_dtd(head: bytes) -> bool:
    """Whether the document's head declares a DTD or an entity (which a field may name)."""
    return b"<!DOCTYPE" in head or b"<!ENTITY" in head


# What may stand before an XML document's root element: whitespace, the declaration and
# other processing instructions, comments, a DOCTYPE (with its internal subset).
_PROLOG = re.compile(
    rb"(?:[ \t\r\n]+|<\?(?:[^?]|\?(?!>))*\?>|<!--(?:[^-]|-(?!->))*-->"
    rb"|<!DOCTYPE(?:[^\[>]|\[[^\]]*\])*>)*"
)
_ROOT = re.compile(rb"<([A-Za-z_][\w.:-]*)")


class Head(NamedTuple):
    """The first bytes of a document, what readers claim documents by."""

    data: bytes  # up to HEAD_BYTES, decompressed
    kind: str  # xml | text | empty (``sniff_format``)
    root: str | None  # the root element's local name, lowercase, when the head holds it

    @classmethod
    def of(cls, data: bytes) -> Head:
        kind = sniff_format(data)
        root = None
        if kind == "xml":
            text = data.removeprefix(BOM).lstrip(WHITESPACE + b"\x00")
            match = _ROOT.match(text, _PROLOG.match(text).end())
            if match is not None:
                root = match.group(1).rpartition(b":")[2].decode("ascii").lower()
        return cls(data, kind, root)


class Reader(NamedTuple):
    """The declaration of a format's reader (see the module's docstring)."""

    name: str
    order: int  # claims are tried in increasing order
    claims: Callable[[Head], bool]
    read: Callable[[SitemapBody, ParseResult, int, str | None], Iterator[list[tuple[Any, ...]]]]
    # A fast path for documents a later reader reads too: left out with ``fast=False``.
    fast: bool = False


def batched(
    entries: Iterator[Entry], result: ParseResult, size: int
) -> Iterator[list[tuple[Any, ...]]]:
    """A reader's entries as rows in lists of up to ``size``, child sitemaps (``is_sitemap``)
    moved to ``result.children``."""
    batch: list[tuple[Any, ...]] = []
    try:
        for entry in entries:
            if entry[5]:
                result.children.append(entry[0])
                result.child_lastmods.append(entry[1] or "")
                continue
            batch.append(entry)
            if len(batch) >= size:
                yield batch
                batch = []
    except SitemapTooLarge:
        if batch:  # keep what was read before the cap
            yield batch
        raise
    if batch:
        yield batch
