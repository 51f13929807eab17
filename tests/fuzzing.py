"""Hostile inputs and the properties they must keep, for the three fuzzed targets: the
sitemap parser (its regex fast path and its lxml path), the robots policy and the URL
normalizer. ``bench/fuzz.py`` runs them for minutes; ``sitemaps/test_parser_fuzz.py``,
``test_robots_fuzz.py`` and ``urls/test_normalize_fuzz.py`` for seconds in CI. One place, so
both run the same inputs and the same checks.

Each target is a strategy of inputs and a ``check_*`` function that raises
``AssertionError`` when a property does not hold (any other exception is a crash). Run a
check under ``cpu_bound`` to count an input that takes too long as a failure (``Hang``).
"""

from __future__ import annotations

import contextlib
import gzip
import json
import signal
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from hypothesis import strategies as st

from discovery_crawler.robots import PARSED, RobotsPolicy, is_robots_url
from discovery_crawler.sitemaps.body import SitemapTooLarge
from discovery_crawler.sitemaps.formats.plain_urlset import WINDOW
from discovery_crawler.sitemaps.parser import ParseResult, iter_sitemap
from discovery_crawler.urls import slugs
from discovery_crawler.urls.normalize import OriginCache, UrlError, normalize

if TYPE_CHECKING:
    from collections.abc import Iterator

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


# -- time bound ------------------------------------------------------------------------------


class Hang(Exception):
    """An input took more CPU time than its bound."""


@contextlib.contextmanager
def cpu_bound(seconds: float) -> Iterator[None]:
    """Raise ``Hang`` in the block once it has used ``seconds`` of CPU time (the process's,
    ``ITIMER_PROF``: a machine shared with other work slows the wall clock, not this).
    Python's regex engine and lxml's iterparse both return to the interpreter often, so the
    signal is seen inside them. Main thread only; a no-op elsewhere."""
    try:
        signal.signal(signal.SIGPROF, _hang)  # left installed: a late signal is ignored
    except ValueError:  # not the main thread
        yield
        return
    _armed[0] = True
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        _armed[0] = False


_armed = [False]


def _hang(signum: int, frame: Any) -> None:
    if _armed[0]:
        _armed[0] = False
        raise Hang("over its CPU time bound")


# -- shared pieces ---------------------------------------------------------------------------

# Text that breaks parsers: markup characters, references good and bad, whitespace of every
# kind, controls XML forbids, non-characters, non-ASCII letters.
HOSTILE_PIECES = [
    "a", "Z", "0", "/", "-", ".", "_", "~", "?", "=", "&", ";", "#", "%", "%2F", "%2f",
    "%7E", "%e9", "%C3%A9", "%zz", "%", "%ED%A0%80", "é", "中", "😀", "\u200b", "\u00a0",
    "\u2003", "\u3000", "\u0085", "\u2028", " ", "\t", "\n", "\r", "\x00", "\x01", "\x0b",
    "\x1f", "\x7f", "\ufeff", "\ufffd", "\ufffe", "\uffff", "<", ">", '"', "'", "\\",
    "[", "]", "]]>", "@", ":", "*", "$", "index.html", "//", "..", "utm_source=x",
    "ref=y", "gclid=1", "./", "../", "/.", "/..", "/./", "/../", "%2E", "%2e%2E/", ".%2E",
]  # fmt: skip
ENTITIES = [
    "&amp;", "&lt;", "&gt;", "&quot;", "&apos;", "&#38;", "&#x26;", "&#233;", "&#xE9;",
    "&#x1F600;", "&#32;", "&#x20;", "&#9;", "&#10;", "&#xA0;", "&#x3000;", "&#0;", "&#x1;",
    "&#xD800;", "&#xDFFF;", "&#xFFFE;", "&#x110000;", "&#99999999999;", "&#;", "&#x;",
    "&nbsp;", "&foo;", "&AMP;", "&", "&amp", "&#38", "&e1;",
]  # fmt: skip


def _joined(pieces: list[str], max_size: int) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(pieces) | st.text(max_size=3), max_size=max_size).map("".join)


# -- sitemaps --------------------------------------------------------------------------------

HOSTS = ["example.com", "WWW.Example.ORG", "xn--bcher-kva.de", "bücher.de", "example.com:8080"]
FIELD_VALUES = {
    "lastmod": ["2024-01-01", "2024-01-01T10:00:00+00:00", "", " ", "yesterday", "2024-13-45"],
    "changefreq": ["daily", "never", "DAILY", "", "sometimes"],
    "priority": ["0.5", "1.0", "0", ".8", "high", "nan", "1e999", "-1", ""],
}
FIELD_NAMES = ["loc", "lastmod", "changefreq", "priority"]
EXTENSION_CHILDREN = [
    '<xhtml:link rel="alternate" hreflang="de" href="https://example.com/de/x"/>',
    "<xhtml:link href='https://example.com/fr?a=1&amp;b=2' rel='alternate' hreflang='fr' />",
    '<xhtml:link rel="alternate" href=" https://example.com/nolang "/>',
    '<xhtml:link rel="Alternate nofollow" hreflang="x-default" href="/x"></xhtml:link>',
    '<xhtml:link rel="canonical" href="https://example.com/c"/>',
    '<xhtml:link rel="alternate" hreflang="es"/>',
    '<xhtml:link rel="alternate" hreflang="en" href="https://example.com/&#233;"/>',
    '<xhtml:link rel="alternate" hreflang="en" href="a\tb"/>',
    '<xhtml:link rel="alternate" rel="alternate" href="/twice"/>',
    '<xhtml:link rel="alternate" hreflang="de" href="https://example.com/&nbsp;"/>',
    '<xhtml:link rel="alternate" xml:lang="de" href="/l"/>',
    '<xhtml:link xmlns:xhtml="urn:other" rel="alternate" href="/redeclared"/>',
    "<image:image>\n  <image:loc>https://example.com/i.png</image:loc>\n"
    "  <image:caption>Tom &amp; Jerry &lt;3</image:caption>\n</image:image>",
    "<image:image><image:loc>https://example.com/j.png</image:loc></image:image>",
    "<news:news><news:publication><news:name>N</news:name></news:publication></news:news>",
    "<mobile:mobile/>",
    "<image:loc>https://example.com/misplaced.png</image:loc>",
    "<image:image><image:loc>https://example.com/bad.png</image:image>",
    "<undeclared:thing/>",
    "<image:image><![CDATA[x]]></image:image>",
    "<image:image><!-- c --></image:image>",
    "<extra>x</extra>",
    "<b>bold</b>",
    "<loc>https://example.com/second-loc</loc>",
    "<url><loc>https://example.com/nested</loc></url>",
]
ODD_BLOCKS = [
    "<!-- a comment -->",
    "<!-- not -- well-formed -->",
    "<?pi data?>",
    "<url></url>",
    "<url/>",
    "<url><loc/></url>",
    "<url><lastmod>2024-01-01</lastmod></url>",
    '<url xmlns="urn:other"><loc>https://example.com/other-ns</loc></url>',
    "<s:url><s:loc>https://example.com/prefixed</s:loc></s:url>",
    "<sitemap><loc>https://example.com/child.xml</loc></sitemap>",
    "<sitemap>https://example.com/bare-child.xml</sitemap>",
    "<url><loc>https://example.com/unclosed</loc>",
    "</url>",
    "<url><loc>https://example.com/a</loc></url junk>",
    "</urlset><url><loc>https://example.com/after-root</loc></url>",
    "text between blocks",
    "<![CDATA[<url><loc>https://example.com/in-cdata</loc></url>]]>",
    "&amp;",
    "&bogus;",
    "\x00",
    "<url><loc>https://example.com/x</loc><loc>https://example.com/y</loc></url>",
]
DECLARATIONS = [
    "",
    '<?xml version="1.0" encoding="UTF-8"?>\n',
    "<?xml version='1.0'?>",
    '<?xml version="1.1" encoding="utf-8" standalone="yes"?>',
    '<?xml version="1.0" encoding="ISO-8859-1"?>',
    '<?xml version="1.0" encoding="UTF-16"?>',
    '<?xml version="1.0" encoding="bogus"?>',
    '<?xml version="1.0" encoding="UTF-8" ?',
    '<?xml encoding="UTF-8"?>',
    "<?xml?>",
    '\n  <?xml version="1.0"?>',
    '<?xml-stylesheet type="text/xsl" href="/s.xsl"?>',
    '<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY e1 "https://example.com/entity">]>',
    '<?xml version="1.0"?><!DOCTYPE urlset SYSTEM "file:///etc/passwd">',
    "<!-- before the root -->",
]
ROOTS = [
    (f'<urlset xmlns="{NS}">', "</urlset>"),
    ("<urlset>", "</urlset>"),
    (
        f'<urlset xmlns="{NS}" xmlns:xhtml="http://www.w3.org/1999/xhtml" '
        'xmlns:image="urn:img" xmlns:news="urn:news" xmlns:mobile="urn:m">',
        "</urlset>",
    ),
    (f'<urlset xmlns="{NS}" xmlns:image="urn:img">', "</urlset>"),
    (f'<s:urlset xmlns:s="{NS}">', "</s:urlset>"),
    (f'<urlset xmlns="{NS}" xmlns="{NS}">', "</urlset>"),
    (f'<urlset xmlns="{NS}" id=1>', "</urlset>"),
    (f'<urlset xmlns="{NS}" a="1" a="2">', "</urlset>"),
    (f'<urlset xmlns="{NS}" x:y="z">', "</urlset>"),
    (f'<urlset xmlns="{NS}"', "</urlset>"),
    (f'<sitemapindex xmlns="{NS}">', "</sitemapindex>"),
    ("<rss><channel>", "</channel></rss>"),
    ("<html><body>", "</body></html>"),
    (f'<urlset xmlns="{NS}">', ""),
]
PADDING = ["", " ", "\n", "\t", "\r\n", "  \n    ", "\u00a0", "\u3000", "\x0c"]


@st.composite
def _loc_text(draw: Any) -> str:
    """A location: mostly a URL written as generators write it, often with hostile parts."""
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(_joined(HOSTILE_PIECES + ENTITIES, 8))
    scheme = draw(st.sampled_from(["https://", "http://", "HTTP://", "", "/", "//", "ftp://"]))
    host = draw(st.sampled_from(HOSTS)) if scheme not in ("", "/") else ""
    path = draw(st.lists(st.sampled_from(["a", "b/", "x.html", "%20", "é", "?q=1"]), max_size=4))
    text = f"{scheme}{host}/{''.join(path)}"
    if kind <= 3:  # a hostile piece, entity, CDATA section or comment somewhere inside
        at = draw(st.integers(0, len(text)))
        extra = draw(
            st.sampled_from(HOSTILE_PIECES + ENTITIES)
            | st.sampled_from(["<![CDATA[a&b]]>", "<!-- c -->", "&e1;", "<b>x</b>"])
        )
        text = text[:at] + extra + text[at:]
    return text


@st.composite
def _url_block(draw: Any) -> str:
    fields = [("loc", draw(_loc_text()))]
    for name in FIELD_NAMES[1:]:
        if draw(st.booleans()):
            fields.append((name, draw(st.sampled_from(FIELD_VALUES[name]))))
    shape = draw(st.integers(0, 19))
    if shape == 0:
        fields = draw(st.permutations(fields))
    elif shape == 1:
        fields = fields[1:]  # no loc
    elif shape == 2:
        fields.append(("loc", draw(_loc_text())))  # a second loc
    pad = st.sampled_from(PADDING)
    inner = "".join(
        f"{draw(pad)}<{name}>{draw(pad)}{value}{draw(pad)}</{name}>" for name, value in fields
    )
    children = draw(st.lists(st.sampled_from(EXTENSION_CHILDREN), max_size=3))
    inner += "".join(draw(pad) + child for child in children)
    open_tag = draw(st.sampled_from(["<url>", "<url>", "<url>", '<url id="1">', "<URL>"]))
    return f"{open_tag}{inner}{draw(pad)}</url>"


def _mutated(draw: Any, data: bytes) -> bytes:
    """A few byte-level edits: truncation, insertion, deletion, duplication, flips."""
    for _ in range(draw(st.integers(1, 3))):
        n = len(data)
        at = draw(st.integers(0, n))
        op = draw(st.sampled_from(["cut", "insert", "delete", "repeat", "flip"]))
        if op == "cut":
            data = data[:at]
        elif op == "insert":
            data = data[:at] + draw(st.binary(min_size=1, max_size=8)) + data[at:]
        elif op == "delete":
            data = data[:at] + data[at + draw(st.integers(1, 16)) :]
        elif op == "repeat":
            data = data[:at] + data[at : at + draw(st.integers(1, 64))] * 2 + data[at:]
        elif at < n:
            data = data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :]
    return data


class SitemapCase(NamedTuple):
    """A sitemap body and where to cut it (None: not cut), to check a truncated copy too."""

    body: bytes
    cut: int | None


@st.composite
def sitemap_cases(draw: Any, big: bool | None = None) -> SitemapCase:
    """A hostile urlset (or a near relative: index, feed, HTML, text), as bytes: generated
    blocks with odd ones anywhere, declarations, roots, encodings, gzip, byte mutations;
    sometimes over several fast-path windows (``big``: always or never)."""
    blocks = draw(st.lists(_url_block(), min_size=1, max_size=10))
    for _ in range(draw(st.integers(0, 2))):
        blocks.insert(draw(st.integers(0, len(blocks))), draw(st.sampled_from(ODD_BLOCKS)))
    sep = draw(st.sampled_from(["\n", "", "\r\n", "\n  ", "\r", " \t"]))
    if big is None:
        big = draw(st.integers(0, 49)) == 0
    if big:  # repeat the blocks over three windows, an odd block perhaps deep inside
        size = len(sep.join(blocks).encode()) + 1
        blocks = blocks * (3 * WINDOW // size + 1)
        if draw(st.booleans()):
            at = draw(st.integers(len(blocks) // 3, len(blocks)))
            blocks.insert(at, draw(st.sampled_from(ODD_BLOCKS + EXTENSION_CHILDREN)))
    root_open, root_close = draw(st.sampled_from(ROOTS))
    declaration = draw(st.sampled_from(DECLARATIONS))
    tail = draw(st.sampled_from(["\n", "", "\n<!-- generated -->\n", "<!--a--><!--b-->", "x"]))
    text = f"{declaration}{root_open}{sep}{sep.join(blocks)}{sep}{root_close}{tail}"
    encoding = draw(st.sampled_from(["utf-8"] * 8 + ["utf-8-sig", "latin-1", "utf-16", "cp1252"]))
    data = text.encode(encoding, errors="replace")
    if not big and draw(st.integers(0, 3)) == 0:
        data = _mutated(draw, data)
    if draw(st.integers(0, 9)) == 0:
        data = gzip.compress(data, compresslevel=1)
        if draw(st.booleans()):
            data = data[: draw(st.integers(0, len(data)))]  # a truncated gzip stream
    cut = draw(st.none() | st.integers(0, len(data)))
    return SitemapCase(data, cut)


@dataclass
class Parsed:
    entries: list[Any]
    result: ParseResult
    too_large: bool


MAX_SITEMAP_BYTES = 8 << 20  # the cap the fuzzed parses run under (SitemapTooLarge past it)


def parse_sitemap(body: bytes, fast: bool) -> Parsed:
    """Every entry of ``body`` on one path; ``SitemapTooLarge`` (the parser's own error) is
    an answer, any other exception a crash."""
    result = ParseResult()
    entries: list[Any] = []
    try:
        for entry in iter_sitemap(body, result=result, fast=fast, max_bytes=MAX_SITEMAP_BYTES):
            entries.append(entry)
    except SitemapTooLarge:
        return Parsed(entries, result, True)
    return Parsed(entries, result, False)


def check_sitemap(case: SitemapCase) -> None:
    """The fast path and the lxml path give the same entries and the same account of the
    document (counts, format, malformed entries, extensions, the problem), every field of
    each entry a stripped non-empty location and strings or None; a truncated copy of a
    well-formed XML document lists no location the whole does not (the XML reader holds
    back a cut-off one)."""
    full = _agreed(case.body)
    if case.cut is not None and case.cut < len(case.body):
        cut = _agreed(case.body[: case.cut])
        well_formed = full.result.problem is None
        if cut.result.format not in ("text", "empty") and not cut.result.gzipped and well_formed:
            # (a text sitemap has no end tags: its last line, cut, is another location; a
            # cut gzip stream decodes to any prefix, which the next check covers; in a
            # malformed document, what lxml's recovery makes of an entry depends on what
            # follows it, which a copy cut before the error does not hold)
            extra = {e.loc for e in cut.entries} - {e.loc for e in full.entries}
            assert not extra, f"the truncated document lists {sorted(extra)[:5]}"


def _agreed(body: bytes) -> Parsed:
    fast = parse_sitemap(body, fast=True)
    slow = parse_sitemap(body, fast=False)
    assert fast.too_large == slow.too_large
    assert fast.entries == slow.entries
    for name in ("urls", "sitemaps", "format", "malformed_count", "malformed", "extensions"):
        assert getattr(fast.result, name) == getattr(slow.result, name), name
    assert fast.result.problem == slow.result.problem
    for entry in fast.entries:
        assert entry.loc.__class__ is str and entry.loc and entry.loc == entry.loc.strip()
        assert all(v is None or v.__class__ is str for v in entry[1:4])
    return fast


# -- robots.txt ------------------------------------------------------------------------------

TOKEN = "discovery-crawler"
AGENT_KEYS = ["User-agent", "user-agent", "USER-AGENT", "useragent", "User agent", " user-agent"]
AGENT_VALUES = [
    "*", TOKEN, "Discovery-Crawler/1.0", "discovery", "discovery-crawler*", "* foo",
    "googlebot", "", "discovery crawler", "DISCOVERY-CRAWLER", "*bot", "discovery_crawler",
]  # fmt: skip
RULE_KEYS = ["Allow", "Disallow", "disallow", "DISALLOW", "dissallow", "Disallow ", "allow"]
RULE_PIECES = [
    "/", "a", "b", "*", "$", "%2F", "%2f", "%7E", "~", "%e9", "%C3%A9", "é", "?", "=", "&",
    ";", " ", "%", "%zz", "//", "index.html", "\\", ".php", "%24", "%3F", "%3D", "日",
]  # fmt: skip
OTHER_LINES = [
    "Sitemap: https://example.com/sitemap.xml", "Sitemap: /relative.xml", "Sitemap:",
    "sitemap: http://[bad/", "Crawl-delay: 1", "Crawl-delay: 0.5", "Crawl-delay: -1",
    "Crawl-delay: nan", "Crawl-delay: inf", "Crawl-delay: 1e400", "Crawl-delay: abc",
    "Crawl-delay:", "Crawl-delay: 10 s", "Request-rate: 1/10", "Request-rate: x/y",
    "Request-rate: 1/0", "Host: example.com", "Clean-param: ref /a", "Noindex: /x",
    "# a comment", "", "   ", "Disallow", ":", "::::", "<html><body>Not found</body></html>",
]  # fmt: skip
STATUSES = [200] * 12 + [0, 199, 204, 206, 301, 304, 404, 401, 418, 429, 500, 503, 599, 600]


class RobotsCase(NamedTuple):
    status: int
    body: bytes
    max_bytes: int
    paths: list[str]


@st.composite
def _robots_line(draw: Any) -> str:
    kind = draw(st.integers(0, 9))
    sep = draw(st.sampled_from([":", ": ", " : ", ":\t", " ", ""]))
    comment = draw(st.sampled_from(["", "", " # note", "#x"]))
    if kind <= 2:
        value = draw(st.sampled_from(AGENT_VALUES) | st.text(max_size=6))
        return f"{draw(st.sampled_from(AGENT_KEYS))}{sep}{value}{comment}"
    if kind <= 7:
        value = draw(_joined(RULE_PIECES, 6))
        return f"{draw(st.sampled_from(RULE_KEYS))}{sep}{value}{comment}"
    if kind == 8:
        return draw(st.sampled_from(OTHER_LINES))
    return draw(_joined(HOSTILE_PIECES, 6))


@st.composite
def robots_cases(draw: Any) -> RobotsCase:
    """A hostile robots.txt answer (status, body, the policy's byte cap) and the paths asked
    about: directive lines of every spelling, patterns with wildcards, anchors and escapes,
    line endings, byte order marks, encodings, binary garbage, byte mutations."""
    if draw(st.integers(0, 19)) == 0:
        body = draw(st.binary(max_size=200))
    else:
        lines = draw(st.lists(_robots_line(), max_size=16))
        if draw(st.booleans()):
            lines.insert(0, f"User-agent: {draw(st.sampled_from(['*', TOKEN]))}")
        ending = draw(st.sampled_from(["\n", "\r\n", "\r", "\n\n"]))
        text = ending.join(lines)
        encoding = draw(st.sampled_from(["utf-8"] * 6 + ["utf-8-sig", "utf-16", "latin-1"]))
        body = text.encode(encoding, errors="replace")
        if draw(st.integers(0, 4)) == 0:
            body = _mutated(draw, body)
    max_bytes = draw(st.sampled_from([500 * 1024] * 4 + [0, 1, 16, 64]))
    paths = draw(st.lists(_robots_path(), min_size=1, max_size=6))
    return RobotsCase(draw(st.sampled_from(STATUSES)), body, max_bytes, paths)


def _robots_path() -> st.SearchStrategy[str]:
    return st.sampled_from(["/robots.txt", "/robots.txt?x=1", "/", "/a/index.html"]) | _joined(
        RULE_PIECES + HOSTILE_PIECES, 8
    ).map(lambda p: "/" + p)


ORIGIN = "https://example.com"


def check_robots(case: RobotsCase) -> None:
    """Any answer builds a policy and a JSON record; a verdict is a pure function of the
    file and the URL (the same twice, and from a policy built again); the verdict is
    Protego's, its reason a disallow rule of the applicable group, and the explainer's
    deciding rule agrees with it; the batch verdicts are ``check``'s, URL by URL."""
    url = ORIGIN + "/robots.txt"
    policy = _policy(case, url)
    json.dumps(policy.as_dict())
    again = _policy(case, url)
    assert again.as_dict() == policy.as_dict()
    disallows = {rule.text for rule in policy.rules if rule.field == "disallow"}
    parsed = policy.outcome == PARSED and policy.group is not None
    urls = [ORIGIN + path for path in case.paths]
    for target in urls:
        verdict = policy.check(target)
        assert policy.check(target) == verdict
        assert again.check(target) == verdict
        allowed, why = verdict
        assert allowed == (why is None)
        if not parsed:
            continue
        assert policy.parser is not None and policy.group is not None
        assert allowed == policy.parser.can_fetch(target, policy.group)
        if not allowed:
            assert why in disallows, (why, disallows)
        if not is_robots_url(target) and "/robots.txt" not in target:
            rule = policy._deciding_rule(target)
            assert allowed == (rule is None or rule.field == "allow"), rule
    normalized = []
    for target in urls:
        with contextlib.suppress(UrlError):
            normalized.append(normalize(target))
    on_origin = [u for u in normalized if u.startswith(ORIGIN + "/")]
    assert policy.disallowed_many(on_origin, ORIGIN) == [policy.check(u)[1] for u in on_origin]


def _policy(case: RobotsCase, url: str) -> RobotsPolicy:
    return RobotsPolicy.from_response(url, case.status, case.body, TOKEN, max_bytes=case.max_bytes)


# -- the URL normalizer ----------------------------------------------------------------------

SCHEMES = ["http://", "https://", "HTTP://", "hTtPs://", "http:/", "http:", "ftp://", "", "//"]
USERINFO = ["", "", "", "user@", "u:p@", "@", "a@b@", "%40@", "ü@", "u p@", "[::1]@", "[@"]
URL_HOSTS = [
    "example.com", "EXAMPLE.COM", "www.example.com", "example.com.", "bücher.de",
    "BÜCHER.de", "xn--bcher-kva.de", "xn--zz", "xn--", "%65xample.com", "%FF.com",
    "%C3%BC.de", "127.0.0.1", "[::1]", "[v1.fe]", "[", "[::1", ".example.com", "a..b",
    "a.", "", " example.com", "exa mple.com", "ex\tample.com", "ex\nample.com", "a\x01b",
    "example。com", "ex\u200bample.com", "a" * 64 + ".com", "ß.de", "xn--ss-fla.de",
    "example.com\\evil", "ex%2Fample.com", "Ⅸ.com", "ｅｘａｍｐｌｅ.com",
]  # fmt: skip
URL_PORTS = [
    "", "", "", ":80", ":443", ":", ":0", ":8080", ":65535", ":65536", ":-1", ":ab", ":00080",
]  # fmt: skip
BASES = [
    None, None, "https://example.com/dir/sitemap.xml", "http://Example.com:80",
    "https://a.b/c/d?e#f",
]  # fmt: skip


class UrlCase(NamedTuple):
    raw: str
    base: str | None


@st.composite
def url_cases(draw: Any) -> UrlCase:
    """A hostile URL (or any text), and perhaps a base to resolve it against: odd schemes,
    userinfo, hosts (IDN, punycode good and bad, percent-encoded, IP literals, empty
    labels, controls, fullwidth), ports, paths and queries of hostile pieces, fragments."""
    base = draw(st.sampled_from(BASES))
    if draw(st.integers(0, 9)) == 0:
        return UrlCase(draw(st.text(max_size=40)), base)
    head = (
        draw(st.sampled_from(SCHEMES))
        + draw(st.sampled_from(USERINFO))
        + draw(st.sampled_from(URL_HOSTS))
        + draw(st.sampled_from(URL_PORTS))
    )
    rest = draw(_joined(HOSTILE_PIECES, 10))
    if rest and rest[0] not in "/?#" and draw(st.booleans()):
        rest = "/" + rest
    pad = st.sampled_from(["", "", " ", "\t", "\n", "\u00a0"])
    return UrlCase(f"{draw(pad)}{head}{rest}{draw(pad)}", base)


def _outcome(function: Any, *args: Any) -> Any:
    """The URL ``function`` gives, or ``UrlError`` with its reason (the documented error)."""
    try:
        return function(*args)
    except UrlError as exc:
        return ("UrlError", exc.reason)


def check_normalize(case: UrlCase) -> None:
    """``normalize`` gives a valid absolute http(s) URL or raises ``UrlError`` (nothing
    else); the URL is a fixed point; the origin cache's fast path (a known origin), its slow
    path and the batch form agree; the base slug of the URL's path is the same from the C
    extension (``_plain_bases``), the Python fast path and the general rules."""
    raw, base = case
    out = _outcome(normalize, raw, base)
    if out.__class__ is str:
        _check_normal(out)
        assert _outcome(normalize, out) == out
    if base is None:
        fresh = OriginCache()
        first, second = _outcome(fresh.normalize, raw), _outcome(fresh.normalize, raw)
        assert first == second
        primed = OriginCache()
        slash = raw.find("/", 8)
        if slash > 0:
            _outcome(primed.normalize, raw[:slash] + "/primer")
        assert _outcome(primed.normalize, raw) == first
    many_base = base or "https://example.com/dir/sitemap.xml"
    many = OriginCache()
    many.normalize("https://example.com/")  # a warm origin, as mid-walk
    batch = many.normalize_many([raw, "https://example.com/plain", raw], many_base)
    expected = _outcome(normalize, raw, many_base)
    for got in (batch[0], batch[2]):
        assert (got if got.__class__ is str else "UrlError") == (
            expected if expected.__class__ is str else "UrlError"
        )
    if out.__class__ is str:
        _check_bases(slugs.normalized_paths([out])[0])
    _check_bases("/" + raw.lstrip("/").partition("?")[0].partition("#")[0])


_URL_CHARS = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?[]@!$&'()*+,;=%"
)


def _check_normal(url: str) -> None:
    from urllib.parse import urlsplit

    assert url.startswith(("http://", "https://")), url
    parts = urlsplit(url)
    assert parts.hostname, url
    assert parts.fragment == "" and "#" not in url, url
    rest = url[len(parts.scheme) + 3 + len(parts.netloc) :]
    assert rest.startswith("/"), url
    assert set(rest) <= _URL_CHARS, f"{url!r}: characters a normalized path never holds"
    segments = rest.partition("?")[0].split("/")
    assert "." not in segments and ".." not in segments, f"{url!r}: a dot segment"
    host = parts.netloc.rpartition("@")[2]
    assert host.isascii() and host == host.lower(), url
    assert not any(c in host for c in " \t\r\n\x00\x7f"), url


def _check_bases(path: str) -> None:
    general = slugs._base_of_path(path)
    compiled = slugs._plain_bases
    if compiled is not None:
        fast = compiled.plain_bases([path], slugs.BASE_MAX_LENGTH, slugs.HOME, lambda p: None)[0]
        assert fast is None or fast == general, (path, fast, general)
    stripped = path.strip("/")
    if len(stripped) <= slugs.BASE_MAX_LENGTH and slugs._PLAIN_PATH.fullmatch(stripped):
        assert (stripped.replace(".", "-").replace("/", "__") or slugs.HOME) == general, path
    assert slugs.bases_many([path]) == [general]


# -- the targets, by name --------------------------------------------------------------------


class Target(NamedTuple):
    strategy: st.SearchStrategy[Any]
    check: Any
    size: Any  # an input's size, for the report


TARGETS = {
    "sitemap": Target(sitemap_cases(), check_sitemap, lambda case: len(case.body)),
    "robots": Target(robots_cases(), check_robots, lambda case: len(case.body)),
    "normalize": Target(url_cases(), check_normalize, lambda case: len(case.raw)),
}
