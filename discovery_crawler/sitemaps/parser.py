"""Streaming sitemap parser: XML urlset / sitemapindex (any or no namespace), plain-text
sitemaps, RSS 2.0 and Atom feeds.

Safe by construction, like Scrapy's own ``scrapy.utils.sitemap``: entities are never
resolved (no XXE, no billion laughs), nothing is fetched from the network, and malformed
XML is recovered (``recover=True``) with the problem recorded in ``ParseResult``.
Streaming: ``lxml.etree.iterparse`` reads the body in chunks and handled elements are
cleared, so memory stays flat whatever the document's size.

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
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from discovery_crawler.sitemaps.body import SitemapBody, SitemapTooLarge
from discovery_crawler.urls.normalize import UrlError, host_first, resolve_location

if TYPE_CHECKING:
    from collections.abc import Iterator

    import lxml.etree

_RECORD_TAGS = ("{*}url", "{*}sitemap", "{*}item", "{*}entry")
_CLEAR_EVERY = 512
_WHITESPACE = b" \t\r\n"
_BOM = b"\xef\xbb\xbf"


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
    malformed: list[str] = field(default_factory=list)  # raw entries without a usable loc
    malformed_count: int = 0
    children: list[str] = field(default_factory=list)  # child sitemaps of an index
    problem: str | None = None  # recovered error, in words
    decompressed_bytes: int = 0
    gzipped: bool = False
    repairs: dict[str, int] = field(default_factory=dict)  # entries read other than as written
    repair_examples: list[dict[str, str]] = field(default_factory=list)  # a few, with raw

    def add_malformed(self, raw: str, cap: int = 100) -> None:
        self.malformed_count += 1
        if len(self.malformed) < cap:
            self.malformed.append(raw[:500])

    def add_repair(self, reason: str, count: int, raw: str, cap: int = 100) -> None:
        self.repairs[reason] = self.repairs.get(reason, 0) + count
        if len(self.repair_examples) < cap:
            self.repair_examples.append({"raw": raw[:500], "reason": reason})


SEVERAL_LOCS = "several <loc> in one <url> or <sitemap>: each read as its own entry"
"""The ``ParseResult.repairs`` reason for a record split at each of its ``<loc>``."""


@functools.lru_cache(maxsize=256)  # a site uses a handful of priority values
def priority_value(value: str) -> float | str:
    """A sitemap priority as a number when it is a finite one, else as written."""
    try:
        number = float(value)
    except ValueError:
        return value
    return number if math.isfinite(number) else value


class _SkipLeadingWhitespace:
    """Drop whitespace before the first ``<`` (libxml2 rejects it before ``<?xml``), and
    remember the tail of what was read."""

    def __init__(self, body: SitemapBody):
        self._body = body
        self._started = False
        self.tail = b""  # the last bytes handed to the parser

    def read(self, n: int) -> bytes:
        data = self._body.read(n)
        if not self._started:
            while data and not data.lstrip(_WHITESPACE):
                data = self._body.read(n)
            data = data.lstrip(_WHITESPACE)
            self._started = bool(data)
        if data:
            self.tail = (self.tail + data)[-512:] if len(data) < 512 else data[-512:]
        return data


def sniff_format(head: bytes) -> str:
    """Guess ``xml``, ``text`` or ``empty`` from the first bytes of a (decompressed) body."""
    head = head.removeprefix(_BOM).lstrip(_WHITESPACE + b"\x00")
    if not head:
        return "empty"
    if head[:1] == b"<":
        return "xml"
    return "text"


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
) -> Iterator[list[tuple[Any, ...]]]:
    """Yield the page entries of a sitemap body in lists of up to ``batch_size``.

    Each entry is a tuple whose first four fields are loc, lastmod, changefreq and
    priority (``''`` or None when absent), optionally followed by alternates. Child
    sitemaps of an index are collected in ``result.children`` (raw locations). ``url``,
    the document's address, tells a text sitemap's scheme-less line naming the site's
    host from a word (``host_first``).
    """
    if result is None:
        result = ParseResult()
    if not isinstance(body, SitemapBody):
        body = SitemapBody(body, max_bytes)
    result.gzipped = body.gzipped
    head = body.peek(4096)
    kind = sniff_format(head)
    try:
        if kind == "xml":
            skip = 0
            careful = b"<!DOCTYPE" in head or b"<!ENTITY" in head
            if fast and not careful and _PLAIN_URLSET_HEAD.search(head):
                try:
                    for batch in _plain_urlset_batches(body, result, batch_size):
                        skip += len(batch)
                        yield batch
                    return
                except _NotPlain:
                    # Not the plain shape after all: parse it again with lxml, without
                    # yielding again the entries already yielded (same document order);
                    # lxml counts the whole document again.
                    body.restart()
                    result.urls = 0
                    result.malformed.clear()
                    result.malformed_count = 0
                    result.extensions.clear()
            entries = _iter_xml(body, result, careful)
            yield from _batched(entries, result, batch_size, skip)
        elif kind == "text":
            result.format = "text"
            yield from _batched(_iter_text(body, result, url), result, batch_size, 0)
        else:
            result.format = "empty"
    finally:
        result.decompressed_bytes = body.size
        if body.problem:
            result.problem = f"{body.problem}; {result.problem}" if result.problem else body.problem


def _batched(
    entries: Iterator[Entry], result: ParseResult, size: int, skip: int
) -> Iterator[list[tuple[Any, ...]]]:
    batch: list[tuple[Any, ...]] = []
    try:
        for entry in entries:
            if entry[5]:
                result.children.append(entry[0])
                continue
            if skip:
                skip -= 1
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


# -- fast path for plain urlsets ---------------------------------------------------------
# Most large sitemaps are machine-written urlsets of <url> blocks: loc, lastmod, changefreq,
# priority in the protocol's order, then perhaps hreflang alternates (``xhtml:link``) and
# extension elements (image, news, video). For those a compiled regex does in C what lxml +
# per-element Python does a URL at a time (bench/README.md has the numbers): most of the
# per-URL budget of a large walk. Written by hand for that measured reason; the guards below
# send anything else (comments, CDATA, entities other than the predefined ones, other
# encodings, odd order, undeclared prefixes, badly nested extensions) back to lxml, and the
# tests check that both paths give the same entries on every real sitemap.
_PLAIN_URLSET_HEAD = re.compile(rb"<urlset[\s>]")
# Values of these four fields never contain whitespace (a URL, a date, a word, a number), so
# ``\s*([^<\s]*)\s*`` captures them already stripped; a value with inner whitespace does not
# match, the counts below disagree, and the document goes to lxml.
# Possessive quantifiers (Python ≥ 3.11): what they repeat can never match what follows
# them (``<`` ends a value, whitespace never starts a tag), so giving nothing back changes
# no match and spares the engine its backtracking records.
# The fifth group holds a block's extension children, raw: from its first prefixed tag to
# ``</url>`` ('' for a block without any; ``_read_tail`` reads them). A window with no
# prefixed tag is matched without looking for them (the empty group costs nothing), so the
# plain urlset pays nothing for the others.
_LOC = r"<url>\s*+<loc>([^<]*+)</loc>"
_FIELD_TAGS = (
    r"(?:\s*+<lastmod>([^<]*+)</lastmod>)?"
    r"(?:\s*+<changefreq>([^<]*+)</changefreq>)?"
    r"(?:\s*+<priority>([^<]*+)</priority>)?"
)
_CHILDREN = r"(\s*+<[A-Za-z_][\w.-]*+:(?:[^<]++|<(?!/url>))*+)?"
_TIGHT_URL_BLOCK = re.compile(_LOC + _FIELD_TAGS + r"()\s*+</url>")
_TIGHT_URL_BLOCK_WITH_CHILDREN = re.compile(_LOC + _FIELD_TAGS + _CHILDREN + r"\s*+</url>")
# The loose form of each (``\s*`` around values): for a window where many values have
# whitespace around them (elsewhere those are stripped one by one, ``_stripped``).
_LOOSE = {r"([^<]*+)": r"\s*+([^<\s]*+)\s*+"}


def _loosened(pattern: str) -> str:
    for tight, loose in _LOOSE.items():
        pattern = pattern.replace(tight, loose)
    return pattern


_URL_BLOCK = re.compile(_loosened(_LOC + _FIELD_TAGS + r"()\s*+</url>"))
_URL_BLOCK_WITH_CHILDREN = re.compile(_loosened(_LOC + _FIELD_TAGS + _CHILDREN + r"\s*+</url>"))
# A block whose <loc> is missing (loc ''): a malformed entry; ``_malformed_window`` reads a
# window that has one block by block, with this.
_ANY_URL_BLOCK = re.compile(
    _loosened(r"<url>(?:\s*+<loc>([^<]*+)</loc>)?" + _FIELD_TAGS + _CHILDREN + r"\s*+</url>")
)
# One tag of a block's extension children: every one is prefixed (``xhtml:link``,
# ``image:loc``), with quoted attributes; an unprefixed tag (a second ``<loc>``, a missing
# ``</url>``) is not one, so the tail's tags and ``<`` counts disagree and lxml reads it.
_TAIL_TAG = re.compile(
    r"<(/?)([A-Za-z_][\w.-]*+):([A-Za-z_][\w.-]*+)"
    r"((?:[ \t\r\n]++[A-Za-z_][\w.:-]*+[ \t\r\n]*+=[ \t\r\n]*+(?:\"[^\"<]*+\"|'[^'<]*+'))*+)"
    r"[ \t\r\n]*+(/?)>"
)
# The two tails generators write most: hreflang alternates only, in the order next-sitemap,
# Hugo and the protocol's examples write their attributes (no reference, no whitespace XML
# would normalize); images only, each a loc and simple fields.
_ALTERNATE_LINK = re.compile(
    r'<([A-Za-z_][\w.-]*+):link rel="alternate" hreflang="([^"<&\t\n\r]*+)"'
    r' href="([^"<&\t\n\r]*+)"[ \t\r\n]*+/>'
)
_ALTERNATES_ONLY = re.compile(rf"(?:[ \t\r\n]*+{_ALTERNATE_LINK.pattern})++[ \t\r\n]*+")
_IMAGES_ONLY = re.compile(
    r"(?:[ \t\r\n]*+<([A-Za-z_][\w.-]*+):image>[ \t\r\n]*+<\1:loc>[^<]*+</\1:loc>"
    r"(?:[ \t\r\n]*+<\1:([A-Za-z_][\w.-]*+)>[^<]*+</\1:\2>)*+[ \t\r\n]*+</\1:image>)++"
    r"[ \t\r\n]*+"
)
_IMAGE_OPEN = re.compile(r"<([A-Za-z_][\w.-]*+):image>")
_TAIL_ATTRIBUTE = re.compile(
    r"([A-Za-z_][\w.:-]*+)[ \t\r\n]*+=[ \t\r\n]*+(?:\"([^\"<]*+)\"|'([^'<]*+)')"
)
_SITEMAP_FIELDS = frozenset(("loc", "lastmod", "changefreq", "priority"))
# Every character ``str.split()`` (and ``\s``) takes for whitespace.
_UNICODE_WHITESPACE = "".join(c for c in map(chr, range(0x3001)) if c.isspace())
_FIFTH = operator.itemgetter(4)
_FIELDS = operator.itemgetter(0, 1, 2, 3)
# Control characters XML forbids, as bytes for ``bytes.translate`` (measured ~3× faster
# than a regex character-class search over the window).
_NOT_XML_BYTES = bytes(range(0x00, 0x09)) + b"\x0b\x0c" + bytes(range(0x0E, 0x20))
# What ``\s`` and ``str.split()`` take for whitespace among ASCII characters.
_ASCII_WHITESPACE = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"
_ENCODING = re.compile(r"""^\s*<\?xml[^>]*encoding=["']([A-Za-z0-9._-]+)""")
# The first window's text before its first <url>: an optional XML declaration (version
# first, then encoding and standalone, quoted), processing instructions
# (``<?xml-stylesheet …?>``) and the <urlset …> start tag with quoted attributes — checked
# once per document, so that a broken header (a mangled declaration, an unquoted or
# unclosed attribute, a start tag without ``>``) goes to lxml, which recovers it and
# records the problem, instead of being read as if it were well-formed.
_S = "[ \t\r\n]"
_PLAIN_HEADER = re.compile(
    rf"{_S}*(?:<\?xml{_S}+version{_S}*={_S}*(?:\"1\.[0-9]+\"|'1\.[0-9]+')"
    rf"(?:{_S}+encoding{_S}*={_S}*(?:\"[A-Za-z][\w.-]*\"|'[A-Za-z][\w.-]*'))?"
    rf"(?:{_S}+standalone{_S}*={_S}*(?:\"(?:yes|no)\"|'(?:yes|no)'))?{_S}*\?>)?"
    rf"(?:{_S}*<\?(?![Xx][Mm][Ll](?:{_S}|\?))[A-Za-z_][\w.:-]*(?:{_S}(?:[^?]|\?(?!>))*)?\?>)*"
    rf"{_S}*(<urlset((?:{_S}+[A-Za-z_][\w.:-]*{_S}*={_S}*(?:\"[^\"<]*\"|'[^'<]*'))*){_S}*>){_S}*"
)
_ATTRIBUTE_NAME = re.compile(rf"([A-Za-z_][\w.:-]*){_S}*=")
# Comments between tags (lxml drops them: ``remove_comments=True``), as generators write
# them: a run after a ``>`` (or at a window's start, between blocks), before a ``<`` or the
# window's end. One inside a value, or not well-formed (``--`` inside), is left in place,
# and its ``<!`` sends the document to lxml.
_COMMENTS = re.compile(
    r"(?:^|(?<=>))(?:[ \t\r\n]*+<!--(?:[^-]|-(?!-))*+-->)++(?=[ \t\r\n]*+(?:<|\Z))"
)
_END = re.compile(r"[ \t\r\n]*</urlset>[ \t\r\n]*")
_ENTITY = re.compile(r"&(#[0-9]+|#x[0-9A-Fa-f]+|[A-Za-z]+);")
_PREDEFINED = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}
_FIRST = operator.itemgetter(0)
_WINDOW = 1 << 18
_MAX_PENDING = 8 << 20


class _NotPlain(Exception):
    """The document is not (or not only) plain <url> blocks: use the general parser."""


def _unescape_entity(match: re.Match[str]) -> str:
    name = match.group(1)
    if name[0] == "#":
        code = int(name[2:], 16) if name[1] in "xX" else int(name[1:])
        return chr(code)
    return _PREDEFINED[name]


def _check_entities(text: str) -> None:
    """Every ``&`` of the window starts a reference lxml expands: a predefined entity or a
    character reference to an XML character (anything else: lxml recovers and reports it)."""
    names = _ENTITY.findall(text)
    if text.count("&") != len(names):
        raise _NotPlain  # a bare '&' is not XML; let lxml recover it
    for name in set(names):
        if name[0] != "#":
            if name not in _PREDEFINED:
                raise _NotPlain
            continue
        try:
            code = int(name[2:], 16) if name[1] in "xX" else int(name[1:])
        except ValueError:
            raise _NotPlain from None
        if not _is_xml_char(code):
            raise _NotPlain  # lxml rejects it (and records the error)


def _unescape_values(matches: list[tuple[str, ...]]) -> list[Any]:
    """Expand the references in the four fields of the blocks that have one (a block's
    extension children are read apart, ``_read_tail``); ``_check_entities`` checked them."""
    line = _values_line(matches)
    if "&" not in line:
        return matches
    out = list(matches)
    for i in _rows_holding(line, "&", len(matches)):
        m = matches[i]
        values = tuple(_ENTITY.sub(_unescape_entity, v).strip() if "&" in v else v for v in m[:4])
        if not values[0]:
            raise _NotPlain  # a location that was only character references to whitespace
        out[i] = (*values, *m[4:])
    return out


def _values_line(matches: list[tuple[str, ...]]) -> str:
    """The four fields of each block, a block a row, rows joined by NUL (no XML text holds
    one): what the window's checks search at C speed."""
    return "\x00".join(map("".join, map(_FIELDS, matches)))


def _rows_holding(line: str, chars: str, n: int) -> Any:
    """The rows of ``_values_line`` holding one of ``chars``, in order (all of them when
    that is many: looking at each row is cheaper then). Found by ``str.find`` (memchr)."""
    hits = []
    for char in chars:
        at = line.find(char)
        while at >= 0:
            hits.append(at)
            if len(hits) > 256:
                return range(n)
            at = line.find(char, at + 1)
    rows: list[int] = []
    row = at = 0
    for hit in sorted(hits):
        row += line.count("\x00", at, hit)  # in order: each NUL counted once
        at = hit
        if not rows or rows[-1] != row:
            if len(rows) >= 64:
                return range(n)
            rows.append(row)
    return rows


def _is_xml_char(code: int) -> bool:
    """XML 1.0 ``Char``: what a character reference may name."""
    return (
        code in (0x9, 0xA, 0xD)
        or 0x20 <= code <= 0xD7FF
        or 0xE000 <= code <= 0xFFFD
        or 0x10000 <= code <= 0x10FFFF
    )


def _block_matches(text: str, children: bool) -> tuple[list[tuple[str, ...]], int]:
    """``_URL_BLOCK.findall(text)`` (through the tight regex, its values stripped where they
    hold whitespace; with the blocks' extension ``children`` when the window has prefixed
    tags), and how many tags those blocks hold: 4 each (url, loc), 2 per optional field
    with a value, and the ``<`` of their extension children.

    The caller compares the tag count with the window's ``<`` count: equal means every tag
    of the window is in a matched block (nothing skipped, no other element). One ``count``
    of one character instead of counting ``<url``, ``<loc`` and ``xmlns`` one by one. A
    field present but empty counts as absent, so such a window goes to lxml (a block
    without a ``<loc>``: ``_malformed_window`` reads it).
    """
    tight = _TIGHT_URL_BLOCK_WITH_CHILDREN if children else _TIGHT_URL_BLOCK
    matches = tight.findall(text)
    if children:
        values = "".join(itertools.chain.from_iterable(map(_FIELDS, matches)))
    else:
        values = "".join(itertools.chain.from_iterable(matches))
    if values.isascii():
        # one memchr per character str.split() splits on (~40× faster than splitting)
        spaced = any(c in values for c in _ASCII_WHITESPACE)
    else:
        pieces = values.split()
        spaced = len(pieces) != 1 or len(pieces[0]) != len(values)
    if spaced and values:
        line = _values_line(matches)
        chars = _ASCII_WHITESPACE if line.isascii() else _UNICODE_WHITESPACE
        rows = _rows_holding(line, chars, len(matches))
        if rows.__class__ is range:  # whitespace around most values: the loose regex
            matches = (_URL_BLOCK_WITH_CHILDREN if children else _URL_BLOCK).findall(text)
        else:
            matches = _stripped(matches, rows)
    fields = list(itertools.chain.from_iterable(matches))
    # each block: 10 tags if every field is there, 2 fewer per absent one; its fifth group
    # (children) counts the '' of a block without any: 2 back for each of those
    if not children:
        return matches, 10 * len(matches) - 2 * (fields.count("") - len(matches))
    tails = list(filter(None, map(_FIFTH, matches)))
    empty = len(matches) - len(tails)
    return matches, 10 * len(matches) - 2 * (fields.count("") - empty) + "".join(tails).count("<")


def _stripped(matches: list[tuple[str, ...]], rows: Any) -> list[tuple[str, ...]]:
    """The blocks with the values of ``rows`` stripped, as ``_URL_BLOCK`` captures them:
    a value with whitespace inside (not only around) is not one it matches."""
    out = list(matches)
    for i in rows:
        m = matches[i]
        values = tuple(v.strip() for v in m[:4])
        if any(len(v.split()) > 1 for v in values):
            raise _NotPlain
        out[i] = (*values, m[4])
    return out


def _read_tail(tail: str, prefixes: frozenset[str], extensions: dict[str, int]) -> Any:
    """A block's extension children (the regex's last group): its hreflang alternates as
    ``_sitemap_entries`` reads them (a tuple of (hreflang, href), or '' for none), counting
    the other children in ``extensions``. The two shapes generators write most (only
    alternates, only images) by one regex each; any other by ``_read_children``."""
    if _ALTERNATES_ONLY.fullmatch(tail) is not None:
        links = _ALTERNATE_LINK.findall(tail)
        if not prefixes.issuperset([link[0] for link in links]):
            raise _NotPlain
        return tuple((hreflang, href.strip()) for _, hreflang, href in links)
    if _IMAGES_ONLY.fullmatch(tail) is not None:
        names = _IMAGE_OPEN.findall(tail)
        if not prefixes.issuperset(names):
            raise _NotPlain
        extensions["image"] = extensions.get("image", 0) + len(names)
        return ""
    return _read_children(tail, prefixes, extensions)


def _read_children(tail: str, prefixes: frozenset[str], extensions: dict[str, int]) -> Any:
    """``_read_tail`` for any tail, tag by tag. ``_NotPlain`` for anything lxml would read
    otherwise: an undeclared prefix, bad nesting, a namespace declared here, a child named
    like a sitemap field, an attribute given twice or one whose value XML normalizes."""
    tags = _TAIL_TAG.findall(tail)
    if len(tags) != tail.count("<"):
        raise _NotPlain
    open_tags: list[tuple[str, str]] = []
    alternates = []
    for close, prefix, name, attributes, empty in tags:
        if prefix not in prefixes:
            raise _NotPlain
        if close:
            if attributes or empty or not open_tags or open_tags.pop() != (prefix, name):
                raise _NotPlain
            continue
        values: dict[str, str] = {}
        if attributes:
            for key, double, single in _TAIL_ATTRIBUTE.findall(attributes):
                if key in values or key.startswith("xmlns"):
                    raise _NotPlain
                if ":" in key and key.partition(":")[0] not in prefixes and key[:4] != "xml:":
                    raise _NotPlain
                values[key] = double or single
        if not open_tags:  # a child of <url>: what _sitemap_entries reads
            if name in _SITEMAP_FIELDS:
                raise _NotPlain  # another field, out of the protocol's order
            href = values.get("href")
            rel = values.get("rel")
            if name == "link" and href and rel and "alternate" in _attribute(rel).lower().split():
                hreflang = values.get("hreflang")
                alternates.append(
                    (
                        _attribute(hreflang) if hreflang is not None else None,
                        _attribute(href).strip(),
                    )
                )
            else:
                extensions[name] = extensions.get(name, 0) + 1
        if not empty:
            open_tags.append((prefix, name))
    if open_tags:
        raise _NotPlain
    return tuple(alternates) if alternates else ""


def _attribute(value: str) -> str:
    """An attribute value as lxml gives it: references expanded; a value holding a tab, a
    line break or a character reference is left to lxml (XML normalizes those)."""
    if "\t" in value or "\n" in value or "\r" in value or "&#" in value:
        raise _NotPlain
    return _ENTITY.sub(_unescape_entity, value) if "&" in value else value


def _malformed_window(
    text: str, result: ParseResult, open_tag: str, prefixes: frozenset[str]
) -> tuple[list[tuple[str, ...]], int]:
    """A window whose tags the blocks do not account for, or holding a block with no usable
    ``<loc>``: read block by block, a missing ``<loc>`` allowed. Each block without one is
    reported as lxml reports it (``result.add_malformed`` with its element as lxml writes
    it, its extension children counted); the others are returned, with the tags of all."""
    kept = []
    tags = 0
    for match in _ANY_URL_BLOCK.finditer(text):
        raw = match.group(0)
        tags += raw.count("<")
        values = match.groups("")
        if values[0]:
            if 4 + 2 * sum(map(bool, values[1:4])) + values[4].count("<") != raw.count("<"):
                raise _NotPlain  # a field present but empty: lxml reads it
            kept.append(values)
            continue
        if values[4]:  # read as lxml would: a <loc> among them is not an extension
            _read_tail(values[4], prefixes, result.extensions)
        result.add_malformed(_described(raw, open_tag))
    return kept, tags


def _described(block: str, open_tag: str) -> str:
    """``_describe`` of a block as lxml reads it in its document (``open_tag``, the
    document's ``<urlset …>``, gives the namespaces in scope)."""
    import lxml.etree  # only a document with a malformed entry pays for the import

    parser = lxml.etree.XMLParser(
        recover=True,
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        remove_comments=True,
        remove_pis=True,
        remove_blank_text=True,
        huge_tree=True,
    )
    root = lxml.etree.fromstring(f"{open_tag}{block}</urlset>".encode(), parser)
    return _describe(root[0])


def _plain_urlset_batches(
    body: SitemapBody, result: ParseResult, size: int
) -> Iterator[list[tuple[str, ...]]]:
    pending = b""
    first = True
    prefixes: frozenset[str] = frozenset()
    open_tag = ""
    carry: list[tuple[str, ...]] = []  # matches not yet yielded (< size)
    while True:
        try:
            chunk = body.read(_WINDOW)
        except SitemapTooLarge:
            if carry:  # keep what was read before the cap
                yield carry
            raise
        if not chunk:
            break
        data = pending + chunk if pending else chunk
        cut = data.rfind(b"</url>")
        if cut < 0:
            pending = data
            if len(pending) > _MAX_PENDING:
                raise _NotPlain
            continue
        cut += 6
        window, pending = data[:cut], data[cut:]
        if len(window.translate(None, _NOT_XML_BYTES)) != len(window):
            raise _NotPlain  # control characters XML forbids: lxml drops and reports them
        if not window.isascii() and (b"\xef\xbf\xbe" in window or b"\xef\xbf\xbf" in window):
            raise _NotPlain  # U+FFFE / U+FFFF, not XML characters either
        try:
            text = window.decode("utf-8")
        except UnicodeDecodeError:
            raise _NotPlain from None
        if "!" in text and "<!" in text:  # "!" is rare: one memchr, not a "<" every 20 bytes
            if first and text.lstrip(" \t\r\n\ufeff").startswith("<!"):
                raise _NotPlain  # before the XML declaration (if any): lxml decides
            text = _COMMENTS.sub("", text)
            if "<!" in text:
                raise _NotPlain  # CDATA, DOCTYPE, a comment inside a value
        if "]" in text and "]]>" in text:  # "]" is rare: one memchr first
            raise _NotPlain  # not allowed in text: lxml reports it
        header_tags = 0
        if first:
            text = text.removeprefix("\ufeff")
            declared = _ENCODING.match(text)
            if declared and declared.group(1).lower() not in ("utf-8", "utf8", "us-ascii", "ascii"):
                raise _NotPlain
            start = text[: text.find("<url>")]
            if text.count("xmlns=") > 1 or "<urlset" not in start:
                raise _NotPlain
            header_tags = start.count("<")
            if header_tags - start.count("<?") != 1:
                raise _NotPlain  # only <urlset> after the declarations, nothing else
            header = _PLAIN_HEADER.fullmatch(start)
            if header is None:
                raise _NotPlain  # a broken header: lxml recovers it and says so
            open_tag = header.group(1)
            names = _ATTRIBUTE_NAME.findall(header.group(2))
            if len(set(names)) != len(names):
                raise _NotPlain  # an attribute given twice is not XML either
            declared = {n[6:] for n in names if n.startswith("xmlns:")} | {"xmlns", "xml"}
            if any(n.partition(":")[0] not in declared for n in names if ":" in n):
                raise _NotPlain  # a prefix no xmlns: declares (namespace well-formedness)
            prefixes = frozenset(declared - {"xmlns", "xml"})
        children = bool(prefixes) and any(f"<{prefix}:" in text for prefix in prefixes)
        matches, tags = _block_matches(text, children)
        # Every "<" of the window is in a matched block: no block the regex skipped, no
        # other element (unprefixed, out of order, another xmlns).
        opened = text.count("<") - header_tags
        if tags != opened or not all(map(_FIRST, matches)):
            # blocks with no usable <loc> (malformed entries), or not the plain shape
            matches, tags = _malformed_window(text, result, open_tag, prefixes)
            if tags != opened:
                raise _NotPlain
        if "&" in text:
            _check_entities(text)
            matches = _unescape_values(matches)
        if any(map(_FIFTH, matches)):  # some blocks have extension children: read them
            extensions = result.extensions
            for i in itertools.compress(range(len(matches)), map(_FIFTH, matches)):
                m = matches[i]
                matches[i] = (*m[:4], _read_tail(m[4], prefixes, extensions))
        first = False
        count = len(matches)
        result.urls += count
        if carry:
            matches = carry + matches
            count = len(matches)
        full = count - count % size
        for i in range(0, full, size):
            yield matches[i : i + size]
        carry = matches[full:]
    if first or not _plain_end(pending):
        raise _NotPlain
    if carry:
        yield carry
    result.format = "urlset"


def _plain_end(rest: bytes) -> bool:
    """What follows the last ``</url>`` is the root's end tag, then perhaps comments (Yoast
    signs its sitemaps with one)."""
    if len(rest.translate(None, _NOT_XML_BYTES)) != len(rest):
        return False
    try:
        text = rest.decode("utf-8")
    except UnicodeDecodeError:
        return False
    if "<!" in text:
        text = _COMMENTS.sub("", text)
    return _END.fullmatch(text) is not None


def _iter_text(body: SitemapBody, result: ParseResult, url: str | None) -> Iterator[Entry]:
    first = True
    while line_bytes := body.readline():
        if first:
            line_bytes = line_bytes.removeprefix(_BOM)
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


def _local(tag: object) -> str:
    if tag.__class__ is not str:
        return ""
    return tag[tag.rfind("}") + 1 :]  # type: ignore[attr-defined]


def _iter_xml(body: SitemapBody, result: ParseResult, careful: bool = False) -> Iterator[Entry]:
    """lxml path. ``careful``: the document declares a DTD, so a field may hold an
    (unexpanded) entity reference; every entry takes the field-by-field path, which
    refuses such fields instead of reading the text before the reference.

    One entry is held back until the next arrives: libxml2's recovery closes elements
    left open at the end of a truncated document, and a ``<loc>`` cut off there must not
    become a URL the sitemap never listed.
    """
    # Imported here: the sitemap worker parses plain documents without it (4 MB of RSS).
    import lxml.etree

    source = _SkipLeadingWhitespace(body)
    parser = lxml.etree.iterparse(
        source,
        events=("end",),
        tag=_RECORD_TAGS,
        recover=True,
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        remove_comments=True,
        remove_pis=True,
        remove_blank_text=True,
        huge_tree=True,
    )
    make = Entry._make  # tuple.__new__: no Python-level __new__ per URL
    keys: _Keys | None = None
    held: Entry | None = None
    in_feed: bool | None = None  # the root is rss/RDF/feed: known at the first odd record
    n = 0
    try:
        for _, el in parser:
            tag = el.tag
            ns = tag[: tag.rfind("}") + 1]
            name = tag[len(ns) :]
            entry: Any = None
            try:
                if careful and (name == "url" or name == "sitemap"):
                    if in_feed is None:
                        in_feed = _is_feed(el)
                    entry = _sitemap_entries(el, name == "sitemap", result, in_feed)
                elif name == "url" or name == "sitemap":
                    # Fast path (measured ~2 µs less per URL than walking children by local
                    # name): map the children's qualified tags to their text in one C-level
                    # comprehension, then look the sitemap fields up under this namespace.
                    if keys is None or keys.ns != ns:
                        keys = _Keys(ns)
                    fields = {child.tag: child.text for child in el}
                    loc = fields.get(keys.loc)
                    # (a field twice, e.g. two <loc>, leaves fewer keys than children)
                    if loc is not None and fields.keys() <= keys.plain and len(fields) == len(el):
                        loc = loc.strip()
                        if loc:
                            lastmod = fields.get(keys.lastmod)
                            changefreq = fields.get(keys.changefreq)
                            priority = fields.get(keys.priority)
                            entry = make(
                                (
                                    loc,
                                    (lastmod.strip() or None) if lastmod else None,
                                    (changefreq.strip() or None) if changefreq else None,
                                    (priority.strip() or None) if priority else None,
                                    None,
                                    name == "sitemap",
                                )
                            )
                    else:  # alternates, extensions, other namespaces, odd shapes
                        if in_feed is None:
                            in_feed = _is_feed(el)
                        entry = _sitemap_entries(el, name == "sitemap", result, in_feed)
                elif name == "item":
                    entry = _rss_entry(el)
                elif name == "entry":
                    entry = _atom_entry(el)
            except UnicodeDecodeError:  # text lxml cannot decode (a reference to a surrogate)
                entry = None
            if entry is None:
                result.add_malformed(_describe(el))
            elif entry.__class__ is list:  # several <loc>, malformed parts, or a feed's <url>
                for part in entry:
                    if part is None:
                        result.add_malformed(_describe(el))
                    elif held is None:
                        held = part
                    else:
                        yield _counted(held, result)
                        held = part
            elif held is None:
                held = entry
            else:
                yield _counted(held, result)
                held = entry
            n += 1
            el.clear(keep_tail=True)
            if n % _CLEAR_EVERY == 0:
                parent = el.getparent()
                if parent is not None:
                    del parent[: parent.index(el)]
    except lxml.etree.XMLSyntaxError as exc:
        result.problem = f"malformed XML, stopped at line {exc.lineno}: {exc.msg}"
    except (UnicodeError, ValueError) as exc:  # e.g. a character reference to a surrogate
        result.problem = f"malformed XML, stopped: {exc}"
    except SitemapTooLarge:
        if held is not None:  # its end tag was read: a complete entry before the cap
            yield _counted(held, result)
        raise
    if held is not None:
        if _LOC_LEFT_OPEN.search(source.tail) and (
            result.problem or body.problem or parser.error_log
        ):
            result.add_malformed(f"{held[0]} (cut off by the end of the document)")
        else:
            yield _counted(held, result)
    root = getattr(parser, "root", None)
    result.format = _document_format(root, result)
    if result.problem is None:
        errors = [e for e in parser.error_log if e.level >= lxml.etree.ErrorLevels.ERROR]
        if errors:
            first = errors[0]
            result.problem = (
                f"malformed XML recovered ({len(errors)} error(s)); first at line "
                f"{first.line}: {first.message}"
            )


# The last loc/link tag in the document's tail is an opening one: the value was cut off.
_LOC_LEFT_OPEN = re.compile(rb"<(?:[\w.-]+:)?(?:loc|link)>[^<]*\Z")


def _counted(entry: Entry, result: ParseResult) -> Entry:
    if entry[5]:
        result.sitemaps += 1
    else:
        result.urls += 1
    return entry


class _Keys:
    """Qualified tag names of the sitemap fields under one namespace."""

    __slots__ = ("changefreq", "lastmod", "loc", "ns", "plain", "priority")

    def __init__(self, ns: str):
        self.ns = ns
        self.loc = ns + "loc"
        self.lastmod = ns + "lastmod"
        self.changefreq = ns + "changefreq"
        self.priority = ns + "priority"
        self.plain = frozenset((self.loc, self.lastmod, self.changefreq, self.priority))


def _document_format(root: lxml.etree._Element | None, result: ParseResult) -> str:
    if root is None:
        return "unparseable"
    name = _local(root.tag).lower()
    if name in ("urlset", "sitemapindex"):
        return "sitemapindex" if result.sitemaps and not result.urls else name
    if name == "rss" or name == "rdf":
        return "rss"
    if name == "feed":
        return "atom"
    if name == "html":
        return "html"
    return f"xml:{name}" if name else "unparseable"


def _text(el: lxml.etree._Element) -> str | None:
    text = el.text
    if text is None:
        return None
    text = text.strip()
    return text or None


def _is_feed(el: lxml.etree._Element) -> bool:
    """Whether the document being parsed (``el``'s) is an RSS (2.0 or RDF) or Atom feed."""
    root = el.getroottree().getroot()
    return root is not None and _local(root.tag).lower() in ("rss", "rdf", "feed")


class _Record:
    """The fields of one entry of a ``<url>``/``<sitemap>`` being read."""

    __slots__ = ("alternates", "changefreq", "lastmod", "loc", "priority", "usable")

    def __init__(self) -> None:
        self.loc = self.lastmod = self.changefreq = self.priority = None
        self.alternates: list[tuple[str | None, str]] | None = None
        self.usable = True  # False: its <loc> held markup or an entity reference

    def entry(self, is_sitemap: bool) -> Entry | None:
        if not self.usable or not self.loc:
            return None
        alternates = tuple(self.alternates) if self.alternates else None
        return Entry(self.loc, self.lastmod, self.changefreq, self.priority, alternates, is_sitemap)


def _sitemap_entries(
    el: lxml.etree._Element, is_sitemap: bool, result: ParseResult, in_feed: bool
) -> Entry | list[Entry | None] | None:
    """The entry of a ``<url>``/``<sitemap>`` (None: no usable location), or a list when it
    holds several ``<loc>``: each starts an entry, with the fields that follow it (the
    generator left out ``</url><url>``), and None stands for each one without a usable
    location. In a feed a ``<url>`` is not a sitemap entry (RSS's ``<image><url>`` is
    the channel's picture): an empty list."""
    if in_feed:
        result.extensions["image"] = result.extensions.get("image", 0) + 1
        return []
    extensions = result.extensions
    records = [_Record()]
    record = records[0]
    for child in el:
        tag = child.tag
        if tag.__class__ is not str:
            continue
        name = tag[tag.rfind("}") + 1 :]
        if name == "loc":
            if record.loc is not None or not record.usable:
                record = _Record()
                records.append(record)
            if len(child):  # an entity reference (never expanded) or markup inside <loc>
                record.usable = False
            else:
                record.loc = _text(child)
        elif name == "lastmod":
            record.lastmod = _text(child)
        elif name == "changefreq":
            record.changefreq = _text(child)
        elif name == "priority":
            record.priority = _text(child)
        elif name == "link":
            href = child.get("href")
            rel = child.get("rel")
            if href and rel and "alternate" in rel.lower().split():
                if record.alternates is None:
                    record.alternates = []
                record.alternates.append((child.get("hreflang"), href.strip()))
            else:  # rel="canonical", no rel: not an alternate of this page
                extensions[name] = extensions.get(name, 0) + 1
        else:
            extensions[name] = extensions.get(name, 0) + 1
    if len(records) == 1:
        if record.loc is None and record.usable and len(el) == 0:
            # Lenient, like crawler-commons: ``<sitemap>https://…</sitemap>`` with no <loc>.
            record.loc = _text(el)
        return record.entry(is_sitemap)
    result.add_repair(SEVERAL_LOCS, len(records) - 1, " ".join(str(r.loc) for r in records))
    return [r.entry(is_sitemap) for r in records]


def _rss_entry(el: lxml.etree._Element) -> Entry | None:
    link = guid = lastmod = None
    for child in el:
        name = _local(child.tag)
        if name == "link" and child.text:
            link = _text(child)
        elif name == "guid" and child.get("isPermaLink", "true").strip().lower() != "false":
            guid = _text(child)
        elif name in ("pubDate", "date", "updated"):
            lastmod = lastmod or _text(child)
    loc = link or guid
    return Entry(loc, lastmod) if loc else None


def _atom_entry(el: lxml.etree._Element) -> Entry | None:
    href = lastmod = None
    for child in el:
        name = _local(child.tag)
        if name == "link" and child.get("rel", "alternate") == "alternate":
            href = href or (child.get("href") or "").strip() or None
        elif name in ("updated", "published"):
            lastmod = lastmod or _text(child)
    return Entry(href, lastmod) if href else None


def _describe(el: lxml.etree._Element) -> str:
    """A short raw rendering of an entry that had no usable location."""
    import lxml.etree  # only an lxml-parsed document has such an entry (see _iter_xml)

    try:
        return lxml.etree.tostring(el, encoding="unicode", with_tail=False)[:500]
    except (TypeError, ValueError):
        return f"<{_local(el.tag)}> without a location"
