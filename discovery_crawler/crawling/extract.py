"""What a BFS crawl needs from an HTML page, in one pass of lxml: title, ``<base href>``,
``<link rel=canonical>``, ``<meta http-equiv=refresh>``, a page-level ``nofollow`` and the
``<a href>`` links.

Why not Scrapy's ``LinkExtractor``: it builds a ``Link`` object per ``<a>`` (URL joined,
``safe_url_string``-ed, text extracted, deduplicated) before anything can tell that most
of them were seen on the previous page; one lxml pass is a fraction of its cost
(bench/README.md). The caller then resolves and normalizes each href and probes the seen-set;
anchor text is only built for links that turn out new (``anchor_text``).

No Scrapy imports: a plain function over bytes, unit-tested on fixture pages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lxml import etree

if TYPE_CHECKING:
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
_PARSERS: dict[str, etree.HTMLParser] = {}


def _parser(encoding: str | None) -> etree.HTMLParser:
    key = (encoding or "").lower()
    parser = _PARSERS.get(key)
    if parser is None:
        try:
            parser = etree.HTMLParser(encoding=encoding or None, recover=True, no_network=True)
        except LookupError:
            parser = etree.HTMLParser(recover=True, no_network=True)
        _PARSERS[key] = parser
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
    nofollow: bool = False  # <meta name=robots content=...nofollow...>
    # <meta http-equiv=refresh content="N; url=...">: the raw URL and the delay in seconds
    # (the first such element; one without a URL reloads the page, and is not recorded)
    refresh: str | None = None
    refresh_delay: float = 0.0
    # (raw href, the <a> element) for followable links, in document order; a repeated
    # href is listed once (the first anchor names it).
    links: list[tuple[str, _Element]] = field(default_factory=list)
    nofollow_links: int = 0  # <a rel=nofollow> skipped


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


def scan_html(
    body: bytes, encoding: str | None = None, refresh_ignore: tuple[str, ...] = ("noscript",)
) -> PageScan:
    """Scan an HTML document (bytes as served). Never raises on bad markup.
    ``refresh_ignore``: a refresh inside these elements does not count (Scrapy's
    ``METAREFRESH_IGNORE_TAGS``: a ``<noscript>`` refresh is for browsers without
    JavaScript)."""
    scan = PageScan()
    if not body or not body.strip():
        return scan
    try:
        root = etree.fromstring(body, _parser(encoding))
    except (etree.XMLSyntaxError, ValueError):
        return scan
    if root is None:
        return scan
    links = scan.links
    hrefs: set[str] = set()
    for el in root.iter("a", "link", "base", "title", "meta"):
        tag = el.tag
        if tag == "a":
            href = el.get("href")
            if not href:
                continue
            href = href.strip()
            if not href or href in hrefs or href.startswith(_SKIP_SCHEMES):
                continue
            rel = el.get("rel")
            if rel is not None and "nofollow" in rel.lower():
                scan.nofollow_links += 1
                continue
            hrefs.add(href)
            links.append((href, el))
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
        elif (el.get("name") or "").lower() == "robots" and "nofollow" in (
            el.get("content") or ""
        ).lower():
            scan.nofollow = True
        elif (
            scan.refresh is None
            and (el.get("http-equiv") or "").strip().lower() == "refresh"
            and not any(a.tag in refresh_ignore for a in el.iterancestors())
        ):
            found = refresh_target(el.get("content") or "")
            if found is not None:
                scan.refresh_delay, scan.refresh = found
    return scan


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
