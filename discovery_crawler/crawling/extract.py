"""What a BFS crawl needs from an HTML page, in one pass of lxml: title, ``<base href>``,
``<link rel=canonical>``, ``<meta http-equiv=refresh>``, the page's robots meta directives
(``noindex``, ``nofollow``: ``<meta name=robots>`` and the tag named after the agent token)
and the ``<a href>`` links.

Why not Scrapy's ``LinkExtractor``: it builds a ``Link`` object per ``<a>`` (URL joined,
``safe_url_string``-ed, text extracted, deduplicated) before anything can tell that most
of them were seen on the previous page; one lxml pass is a fraction of its cost
(bench/README.md). The caller then resolves and normalizes each href and probes the seen-set;
anchor text is only built for links that turn out new (``anchor_text``).

The pass is lxml's pull parser (elements at their end tags, the body fed 64 KiB at a
time): a page's links can be kept up to a number (``scan_html(keep=…)``) and the rest
read again, in lists, by ``iter_links``, the document freed behind them as it goes. A page
of 200,000 links then costs the links held at once, not a tree of all of them
(bench/bench_big_page.py).

No Scrapy imports: a plain function over bytes, unit-tested on fixture pages.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lxml import etree

from discovery_crawler.indexing import directives, meta_applies, verdict_flags

if TYPE_CHECKING:
    from collections.abc import Iterator

    from lxml.etree import _Element

ANCHOR_MAX = 160
TITLE_MAX = 300
_SPACE = re.compile(r"\s+")
_SKIP_SCHEMES = ("javascript:", "mailto:", "tel:", "data:", "#", "about:", "sms:", "ftp:")
# The content of a refresh declaration, as the HTML standard parses it ("shared declarative
# refresh steps"): a delay, then optionally ``;`` or ``,``, ``URL=``, and the URL, quoted
# or not. w3lib's (Scrapy's) parser insists on ``; url=`` and misses ``0;/next``.
_REFRESH = re.compile(
    r"[ \t\n\f\r]*(\d+|(?=\.))[\d.]*[ \t\n\f\r]*(?:[;,][ \t\n\f\r]*)?"
    r"(?:url[ \t\n\f\r]*=[ \t\n\f\r]*)?(.*)",
    re.IGNORECASE | re.DOTALL,
)
_TAGS = ("a", "link", "base", "title", "meta")
# While links past ``keep`` are read, the document read so far is freed every this many
# elements: a small page never reaches it.
_PRUNE_EVERY = 1024
_FEED = 1 << 16  # bytes fed to the parser at a time: its events are read between feeds
# One parser per encoding for scan_html, which reads a document to its end without handing
# control back: a parser per document would make a reference cycle (lxml's document and
# parser context), so every page's tree would wait for the cyclic garbage collector.
_PARSERS: dict[str | None, etree.HTMLPullParser] = {}
_ENCODINGS: dict[str, str | None] = {}


def _known_encoding(encoding: str | None) -> str | None:
    """``encoding`` when lxml knows it, else None (lxml then reads the document's own
    declaration, as it does without one)."""
    if not encoding:
        return None
    key = encoding.lower()
    if key not in _ENCODINGS:
        try:
            etree.HTMLParser(encoding=encoding)
        except LookupError:
            _ENCODINGS[key] = None
        else:
            _ENCODINGS[key] = encoding
    return _ENCODINGS[key]


def _pull_parser(encoding: str | None) -> etree.HTMLPullParser:
    return etree.HTMLPullParser(
        events=("end",), tag=_TAGS, recover=True, no_network=True, encoding=encoding
    )


def _shared_parser(encoding: str | None) -> etree.HTMLPullParser:
    parser = _PARSERS.get(encoding)
    if parser is None:
        parser = _PARSERS[encoding] = _pull_parser(encoding)
    return parser


def collapse(text: str, limit: int) -> str:
    """Whitespace runs to one space, trimmed, at most ``limit`` characters."""
    text = _SPACE.sub(" ", text).strip()
    return text[:limit]


@dataclass
class PageScan:
    """The parts of one HTML page the crawl uses."""

    title: str | None = None
    base: str | None = None  # <base href>, raw
    canonical: str | None = None  # <link rel=canonical href>, raw
    nofollow: bool = False  # <meta name=robots content=...nofollow...> (or none)
    noindex: bool = False  # <meta name=robots content=...noindex...> (or none)
    # <meta http-equiv=refresh content="N; url=...">: the raw URL and the delay in seconds
    # (the first such element; one without a URL reloads the page, and is not recorded)
    refresh: str | None = None
    refresh_delay: float = 0.0
    # (raw href, the <a> element) for followable links, in document order; a repeated
    # href is listed once (the first anchor names it).
    links: list[tuple[str, _Element]] = field(default_factory=list)
    nofollow_links: int = 0  # <a rel=nofollow> skipped
    more: int = 0  # followable links past ``keep``, counted, not kept (``iter_links``)


def refresh_target(content: str) -> tuple[float, str] | None:
    """(delay, raw URL) of a ``<meta http-equiv=refresh>`` ``content``, or None when it
    names no URL (a plain reload) or does not parse."""
    match = _REFRESH.match(content)
    if match is None:
        return None
    digits, url = match.groups()
    url = url.strip()
    if url[:1] in ("'", '"'):
        quote = url[0]
        url = url[1:].partition(quote)[0]
    url = url.strip()
    if not url:
        return None
    return float(digits or 0), url


def _elements(body: bytes, encoding: str | None, shared: bool = True) -> Iterator[_Element]:
    """The ``<a>``, ``<link>``, ``<base>``, ``<title>`` and ``<meta>`` elements of an HTML
    document, each at its end tag (its subtree complete), in document order; nothing for
    an empty body or one lxml cannot read. ``shared``: parse with this encoding's one
    parser (only for a caller that reads to the end before anything else parses)."""
    if not body or not body.strip():
        return
    encoding = _known_encoding(encoding)
    parser = _shared_parser(encoding) if shared else _pull_parser(encoding)
    done = False
    try:
        for start in range(0, len(body), _FEED):
            parser.feed(body[start : start + _FEED])
            for _, el in parser.read_events():
                yield el
        done = True
        parser.close()
        for _, el in parser.read_events():
            yield el
    except (etree.XMLSyntaxError, ValueError):
        return
    finally:
        if not done:  # stopped early, or unreadable: the parser starts afresh next time
            with contextlib.suppress(etree.XMLSyntaxError, ValueError):
                parser.close()


def _prune(el: _Element) -> None:
    """Free the document before ``el`` (its earlier siblings, and each ancestor's): what
    was read is gone, so a page costs the links held at once, not all of them. Elements a
    caller still holds survive (lxml keeps a referenced subtree)."""
    node: _Element | None = el
    while node is not None:
        parent = node.getparent()
        if parent is not None:
            while node.getprevious() is not None:
                del parent[0]
        node = parent


def _followable(el: _Element, hrefs: set[str], scan: PageScan) -> str | None:
    """The href of an ``<a>`` the crawl may follow, first time met; None for none, a
    repeat, a skipped scheme or ``rel=nofollow`` (counted in ``scan``)."""
    href = el.get("href")
    if not href:
        return None
    href = href.strip()
    if not href or href in hrefs or href.startswith(_SKIP_SCHEMES):
        return None
    rel = el.get("rel")
    if rel is not None and "nofollow" in rel.lower():
        scan.nofollow_links += 1
        return None
    hrefs.add(href)
    return href


def scan_html(
    body: bytes,
    encoding: str | None = None,
    refresh_ignore: tuple[str, ...] = ("noscript",),
    keep: int | None = None,
    agent: str = "",
) -> PageScan:
    """Scan an HTML document (bytes as served). Never raises on bad markup.
    ``refresh_ignore``: a refresh inside these elements does not count (Scrapy's
    ``METAREFRESH_IGNORE_TAGS``: a ``<noscript>`` refresh is for browsers without
    JavaScript). ``keep``: keep the first ``keep`` followable links (None: all); the
    others are only counted (``more``) and the document is freed as it is read, so a page
    of 200,000 links costs the links kept, not a tree of all of them: read the rest with
    ``iter_links``. ``agent``: the crawler's token, whose ``<meta name=…>`` counts as the
    robots meta tag does."""
    scan = PageScan()
    links = scan.links
    hrefs: set[str] = set()
    for read, el in enumerate(_elements(body, encoding), 1):
        tag = el.tag
        if tag == "a":
            href = _followable(el, hrefs, scan)
            if href is not None:
                if keep is None or len(links) < keep:
                    links.append((href, el))
                else:
                    scan.more += 1
        elif tag == "link":
            if scan.canonical is None:
                rel = el.get("rel")
                if rel is not None and "canonical" in rel.lower().split():
                    href = (el.get("href") or "").strip()
                    if href:
                        scan.canonical = href
        elif tag == "title":
            if scan.title is None:
                text = el.text or ""
                scan.title = collapse(text, TITLE_MAX) or None
        elif tag == "base":
            if scan.base is None:
                scan.base = (el.get("href") or "").strip() or None
        elif (name := el.get("name")) is not None and meta_applies(name, agent):
            noindex, nofollow = verdict_flags(directives(el.get("content") or ""))
            scan.noindex = scan.noindex or noindex
            scan.nofollow = scan.nofollow or nofollow
        elif (
            scan.refresh is None
            and (el.get("http-equiv") or "").strip().lower() == "refresh"
            and not any(a.tag in refresh_ignore for a in el.iterancestors())
        ):
            found = refresh_target(el.get("content") or "")
            if found is not None:
                scan.refresh_delay, scan.refresh = found
        if read % _PRUNE_EVERY == 0 and keep is not None:
            _prune(el)
    return scan


def iter_links(
    body: bytes,
    encoding: str | None = None,
    size: int = 1000,
    skip: int = 0,
    limit: int = 0,
) -> Iterator[list[tuple[str, _Element]]]:
    """The followable links of a page, as ``scan_html`` finds them (document order, a
    repeated href once, ``rel=nofollow`` and skipped schemes left out), in lists of up to
    ``size``: for a page with more links than ``scan_html`` kept. The first ``skip`` are
    left out (those it kept), and it stops after ``limit`` (0: all). A list's elements
    are valid until the next list is asked for; the document read before them is then
    freed."""
    size = max(1, size)
    scan = PageScan()  # counts only: nofollow links were counted by scan_html
    hrefs: set[str] = set()
    seen = given = 0
    chunk: list[tuple[str, _Element]] = []
    last: _Element | None = None
    for el in _elements(body, encoding, shared=False):  # it yields between lists
        if el.tag != "a":
            continue
        href = _followable(el, hrefs, scan)
        if href is None:
            continue
        seen += 1
        if seen <= skip:
            continue
        chunk.append((href, el))
        given += 1
        last = el
        if len(chunk) >= size or given == limit:
            yield chunk
            chunk = []
            _prune(last)
            if given == limit:
                return
    if chunk:
        yield chunk


def anchor_text(el: _Element) -> str | None:
    """The text a link shows (or its title / aria-label / image alt), ≤ 160 chars."""
    text = collapse("".join(el.itertext()), ANCHOR_MAX)
    if text:
        return text
    for name in ("aria-label", "title"):
        value = el.get(name)
        if value and value.strip():
            return collapse(value, ANCHOR_MAX)
    for img in el.iter("img"):
        alt = img.get("alt")
        if alt and alt.strip():
            return collapse(alt, ANCHOR_MAX)
    return None
