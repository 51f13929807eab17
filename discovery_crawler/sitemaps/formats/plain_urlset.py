"""The fast path for plain urlsets: a guarded regex reader, tried before the XML reader.

Most large sitemaps are machine-written urlsets of <url> blocks: loc, lastmod, changefreq,
priority in the protocol's order, then perhaps hreflang alternates (``xhtml:link``) and
extension elements (image, news, video). For those a compiled regex does in C what lxml and
per-element Python do a URL at a time: most of the per-URL budget of a large walk
(bench/README.md has the numbers). The guards below decline anything else (comments inside
values, CDATA, entities other than the predefined ones, other encodings, odd order,
undeclared prefixes, badly nested extensions), and the XML reader reads the document from
its start, the entries yielded already left out; the tests check that both readers give
the same entries on every real sitemap. Where it was built, ``_windows.c`` reads each window
instead, in one pass over its bytes, exactly as the regex and its guards do
(``_window_text``, ``_window_rows``), and leaves them any window it is not sure of.

Rows are bare 5-tuples (loc, lastmod, changefreq, priority, alternates), ``''`` for a
missing field.
"""

from __future__ import annotations

import itertools
import operator
import re
from typing import TYPE_CHECKING, Any, NamedTuple

from discovery_crawler.compiled import extension
from discovery_crawler.sitemaps.body import SitemapTooLarge
from discovery_crawler.sitemaps.formats.xml import describe
from discovery_crawler.sitemaps.reading import LXML_OPTIONS, Declined, Reader, declares_dtd

# Where they were built, the windows are read in C (``_windows.c``), and the blocks'
# extension children of a window read in Python in C too (``_tails.c``); elsewhere all in
# Python.
_tails = extension("discovery_crawler.sitemaps._tails")
_windows = extension("discovery_crawler.sitemaps._windows")

if TYPE_CHECKING:
    from collections.abc import Iterator

    from discovery_crawler.sitemaps.body import SitemapBody
    from discovery_crawler.sitemaps.reading import Head, ParseResult

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
# Control characters XML forbids, as bytes for ``bytes.translate`` (faster than a regex
# character-class search over the window).
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
# A namespace declaration's value, and the URIs taken as they are: an absolute URI whose
# characters need no escape, the authority's port (if any) digits. libxml2 reports any
# other value it finds no valid URI (``http://a:/b``, ``%zz``, non-ASCII) as an error, so
# such a document goes to lxml, which records it.
_NS_VALUE = re.compile(rf"xmlns(?::[A-Za-z_][\w.-]*)?{_S}*={_S}*(?:\"([^\"<]*)\"|'([^'<]*)')")
_PLAIN_NS_URI = re.compile(
    r"[A-Za-z][A-Za-z0-9+.-]*:"
    r"(?://[A-Za-z0-9._~-]+(?::[0-9]+)?(?:/[A-Za-z0-9._~!$'()*+,;=:@-]*)*"
    r"|(?!/)[A-Za-z0-9._~!$'()*+,;=:@/-]+)"
)
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
WINDOW = 1 << 18  # how much of the body is read at a time
_MAX_PENDING = 8 << 20


class _NotPlain(Declined):
    """The document is not (or not only) plain <url> blocks: the XML reader reads it."""


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
        # one memchr per character str.split() splits on (far cheaper than splitting)
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


def _read_tails(
    matches: list[tuple[str, ...]], prefixes: frozenset[str], extensions: dict[str, int]
) -> None:
    """Each block's tail replaced, in place, by what ``_read_tail`` reads in it: in C where
    it was built (``_tails.c``: a tail is slow to read in Python, and many blocks have one),
    which leaves to ``_read_tail`` any tail it is not sure of."""
    compiled = _tails is not None and matches.__class__ is list
    if compiled and _tails.read_tails(matches, prefixes, extensions, _read_tail):
        return
    for i in itertools.compress(range(len(matches)), map(_FIFTH, matches)):
        m = matches[i]
        matches[i] = (*m[:4], _read_tail(m[4], prefixes, extensions))


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
    if "&" not in value:
        return value
    # Checked here too: the tail of a block without a <loc> is read before the window's
    # references are (``_malformed_window``), and ``&nbsp;`` is no entity lxml expands.
    _check_entities(value)
    return _ENTITY.sub(_unescape_entity, value)


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
        result.add_malformed(Undescribed(raw, open_tag))
    return kept, tags


class Undescribed(NamedTuple):
    """A malformed block, to be described as lxml writes it (``describe_malformed``). Not
    described here: the sitemap worker would import lxml for it, which swells its RSS
    (bench/README.md); the spider, which has lxml, describes the worker's."""

    block: str
    open_tag: str


def describe_malformed(result: ParseResult) -> None:
    """Describe the malformed blocks ``result`` still holds, in place, in their order."""
    malformed = result.malformed
    for i, raw in enumerate(malformed):
        if raw.__class__ is Undescribed:
            malformed[i] = _described(raw.block, raw.open_tag)[:500]


def _described(block: str, open_tag: str) -> str:
    """``describe`` of a block as lxml reads it in its document (``open_tag``, the
    document's ``<urlset …>``, gives the namespaces in scope)."""
    import lxml.etree  # only a document with a malformed entry pays for the import

    parser = lxml.etree.XMLParser(**LXML_OPTIONS)
    root = lxml.etree.fromstring(f"{open_tag}{block}</urlset>".encode(), parser)
    return describe(root[0])


def read(
    body: SitemapBody, result: ParseResult, batch_size: int, url: str | None = None
) -> Iterator[list[tuple[str, ...]]]:
    """The page rows of a plain urlset, ``batch_size`` at a time; ``_NotPlain`` (a
    ``Declined``) as soon as the document is seen not to be one."""
    size = batch_size
    pending = b""
    first = True
    prefixes: frozenset[str] = frozenset()
    open_tag = ""
    carry: list[tuple[str, ...]] = []  # matches not yet yielded (< size)
    while True:
        try:
            chunk = body.read(WINDOW)
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
        text = None
        start = header_tags = 0
        if first:
            text = _window_text(data[:cut], first)
            open_tag, prefixes, header_tags = _header(text)
            start = data.find(b"<url>")
        matches = None
        if _windows is not None:
            matches = _compiled_window(data, start, cut, prefixes, result, open_tag)
        if matches is None:
            if text is None:
                text = _window_text(data[:cut], first)
            matches = _window_rows(text, header_tags, result, open_tag, prefixes)
        pending = data[cut:]
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


def _compiled_window(
    data: bytes,
    start: int,
    end: int,
    prefixes: frozenset[str],
    result: ParseResult,
    open_tag: str,
) -> list[tuple[Any, ...]] | None:
    """The rows of the window ``data[:end]`` (its blocks from ``start``) as
    ``_window_text`` and ``_window_rows`` read them, read in C (``_windows.c``), its
    malformed blocks and extensions counted in ``result``; None where the C leaves the
    window to them."""
    got = _windows.read_window(data, start, end, prefixes, _read_tail)
    if got is None:
        return None
    rows, malformed, extensions = got
    for block in malformed:
        result.add_malformed(Undescribed(block, open_tag))
    if extensions:
        counts = result.extensions
        for name, count in extensions.items():
            counts[name] = counts.get(name, 0) + count
    return rows


def _window_text(window: bytes, first: bool) -> str:
    """A window's text (the ``first``'s without its byte order mark), its comments between
    tags left out; ``_NotPlain`` for what only lxml reads as XML does (forbidden
    characters, not UTF-8, CDATA, a DOCTYPE)."""
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
    return text.removeprefix("\ufeff") if first else text


def _header(text: str) -> tuple[str, frozenset[str], int]:
    """The first window's header (declaration, processing instructions, <urlset …>):
    its start tag, the prefixes it declares and its tags; ``_NotPlain`` for one lxml must
    read."""
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
    names = _ATTRIBUTE_NAME.findall(header.group(2))
    for double, single in _NS_VALUE.findall(header.group(2)):
        if _PLAIN_NS_URI.fullmatch(double or single) is None:
            raise _NotPlain  # a namespace name libxml2 finds no valid URI
    if len(set(names)) != len(names):
        raise _NotPlain  # an attribute given twice is not XML either
    declared_prefixes = {n[6:] for n in names if n.startswith("xmlns:")} | {"xmlns", "xml"}
    if any(n.partition(":")[0] not in declared_prefixes for n in names if ":" in n):
        raise _NotPlain  # a prefix no xmlns: declares (namespace well-formedness)
    return header.group(1), frozenset(declared_prefixes - {"xmlns", "xml"}), header_tags


def _window_rows(
    text: str, header_tags: int, result: ParseResult, open_tag: str, prefixes: frozenset[str]
) -> list[tuple[Any, ...]]:
    """The rows of a window's text (``header_tags``: the tags of its header), its
    malformed blocks and extensions counted in ``result``; ``_NotPlain`` for a window
    that is not only plain blocks."""
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
        _read_tails(matches, prefixes, result.extensions)
    return matches


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


def _claims(head: Head) -> bool:
    # No DTD: a field may then name an entity, which only lxml's careful reading refuses.
    data = head.data
    return head.kind == "xml" and not declares_dtd(data) and bool(_PLAIN_URLSET_HEAD.search(data))


READER = Reader("plain urlset", order=10, claims=_claims, read=read, fast=True)
