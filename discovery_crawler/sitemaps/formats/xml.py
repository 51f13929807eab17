"""The XML reader: urlset and sitemapindex (any or no namespace), RSS 2.0 (and RDF) and
Atom feeds, through lxml; it reads any XML document, and every document the plain-urlset
fast path declines.

Safe by construction, like Scrapy's own ``scrapy.utils.sitemap``: entities are never
resolved (no XXE, no billion laughs), nothing is fetched from the network, and malformed
XML is recovered (``recover=True``) with the problem recorded in ``ParseResult``.
Streaming: ``lxml.etree.iterparse`` reads the body in chunks and handled elements are
cleared, so memory stays flat whatever the document's size.

Records are read by element in one pass (``<url>`` / ``<sitemap>``, RSS ``<item>``, Atom
``<entry>``), whatever the root: what the root is decides only how a ``<url>`` is read (in a
feed it is the channel's picture) and the document's ``format``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from discovery_crawler.sitemaps.body import SitemapTooLarge
from discovery_crawler.sitemaps.reading import (
    HEAD_BYTES,
    LXML_OPTIONS,
    SEVERAL_LOCS,
    WHITESPACE,
    Entry,
    Reader,
    batched,
    declares_dtd,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    import lxml.etree

    from discovery_crawler.sitemaps.body import SitemapBody
    from discovery_crawler.sitemaps.reading import Head, ParseResult

_RECORD_TAGS = ("{*}url", "{*}sitemap", "{*}item", "{*}entry")
_CLEAR_EVERY = 512


def read(
    body: SitemapBody, result: ParseResult, batch_size: int, url: str | None = None
) -> Iterator[list[tuple[Any, ...]]]:
    """The document's page entries, ``batch_size`` at a time (child sitemaps to
    ``result.children``)."""
    careful = declares_dtd(body.peek(HEAD_BYTES))
    return batched(_entries(body, result, careful), result, batch_size)


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
            while data and not data.lstrip(WHITESPACE):
                data = self._body.read(n)
            data = data.lstrip(WHITESPACE)
            self._started = bool(data)
        if data:
            self.tail = (self.tail + data)[-512:] if len(data) < 512 else data[-512:]
        return data


def _local(tag: object) -> str:
    if tag.__class__ is not str:
        return ""
    return tag[tag.rfind("}") + 1 :]  # type: ignore[attr-defined]


def _entries(body: SitemapBody, result: ParseResult, careful: bool = False) -> Iterator[Entry]:
    """lxml path. ``careful``: the document declares a DTD, so a field may hold an
    (unexpanded) entity reference; every entry takes the field-by-field path, which
    refuses such fields instead of reading the text before the reference.

    One entry is held back until the next arrives: libxml2's recovery closes elements
    left open at the end of a truncated document, and a ``<loc>`` cut off there must not
    become a URL the sitemap never listed.
    """
    # Imported here: the sitemap worker parses plain documents without it (lxml's memory).
    import lxml.etree

    source = _SkipLeadingWhitespace(body)
    parser = lxml.etree.iterparse(
        source,
        events=("end",),
        tag=_RECORD_TAGS,
        **LXML_OPTIONS,
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
                    # Shortcut (cheaper per URL than walking children by local name): map
                    # the children's qualified tags to their text in one C-level
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
                result.add_malformed(describe(el))
            elif entry.__class__ is list:  # several <loc>, malformed parts, or a feed's <url>
                for part in entry:
                    if part is None:
                        result.add_malformed(describe(el))
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


# A loc/link tag in the document's tail whose closing tag never began: the value was cut
# off (also after a CDATA section or a comment inside it, which hold "<"; a value followed
# by a cut closing tag, ``…/</lo``, is whole, as crawler-commons reads it); or a <sitemap>
# never closed and holding no <loc>, whose text is its location (``_sitemap_entries``'
# lenient form).
_LOC_LEFT_OPEN = re.compile(
    rb"<((?:[\w.-]+:)?(?:loc|link))>(?:(?!</).)*\Z"
    rb"|<((?:[\w.-]+:)?sitemap)>(?:(?!</\2>|<(?:[\w.-]+:)?loc>).)*\Z",
    re.DOTALL,
)


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


def describe(el: lxml.etree._Element) -> str:
    """A short raw rendering of an entry that had no usable location."""
    import lxml.etree  # only an lxml-parsed document has such an entry (see _entries)

    try:
        return lxml.etree.tostring(el, encoding="unicode", with_tail=False)[:500]
    except (TypeError, ValueError):
        return f"<{_local(el.tag)}> without a location"


def _claims(head: Head) -> bool:
    return head.kind == "xml"


READER = Reader("xml", order=90, claims=_claims, read=read)
