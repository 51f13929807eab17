"""``sitemaps/_windows.c`` (a plain urlset's window read in C) reads every window as the
Python reader does (``_window_text`` then ``_window_rows``): the same rows, malformed
blocks and extension counts, and never rows where the Python declines (``_NotPlain``) —
the C may leave a window to the Python (None), never answer otherwise. Checked on
hypothesis windows made of what generators write and of what they should not (whitespace
around and inside values, references good and bad, comments, CDATA, non-ASCII and Unicode
whitespace, forbidden characters, bytes that are not UTF-8, blocks cut off, out of order,
without a location, stray tags, extension children), on whole documents read a few
hundred bytes a window, and on every real sitemap."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from discovery_crawler.sitemaps.body import SitemapBody
from discovery_crawler.sitemaps.formats import plain_urlset
from discovery_crawler.sitemaps.formats.plain_urlset import _NotPlain
from discovery_crawler.sitemaps.reading import Declined, ParseResult
from tests import conftest
from tests.sitemaps.test_tails_compiled import _IMAGE, _LINK, _element, _good

_windows = plain_urlset._windows
PREFIXES = frozenset({"xhtml", "image", "news", "video"})
OPEN_TAG = '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'

_GOOD_WS = st.sampled_from(["", " ", "\n    ", "\t", "\r\n    "])
_ODD_WS = st.sampled_from(["\u00a0", "\u3000", "\x85", "\n\u2028 ", "\u200b", "x"])
_GOOD_VALUE = st.sampled_from(
    [
        "https://h/a",
        "https://h/a?x=1&amp;y=2",
        " https://h/b ",
        "\n      https://h/c\n    ",
        "https://h/日本/",
        "2024-01-01",
        "2024-01-01T10:00:00+00:00",
        "weekly",
        "0.5",
    ]
)
_ODD_VALUE = st.sampled_from(
    [
        "a b",
        "a&#38;b",
        "a&#x26;b",
        "&#32;",
        "&#x20;x",
        "&#160;",
        "x&#xA0;",
        "a&#32;b",
        "&#x1F600;",
        "&#X41;",
        "&#0;",
        "&#1114112;",
        "&#99999999999999999999;",
        "&#00065;",
        "&#xD800;",
        "&nbsp;",
        "&AMP;",
        "&",
        "&amp",
        "&#;",
        "&lt;&gt;&quot;&apos;",
        "é",
        "\u00a0https://h/d",
        "https://h/e\u3000",
        " \u00a0 https://h/f \x85",
        "a\u2028b",
        "a\x85",
        "",
        " ",
        "\u00a0",
        "a>b",
        "]]",
    ]
)
_FIELD_NAMES = ["loc", "lastmod", "changefreq", "priority"]


def _rarely(draw, rare: int) -> bool:
    """True about one time in ``rare`` (not at 0, which hypothesis draws often and
    shrinks towards)."""
    return draw(st.integers(0, rare)) == rare // 2


@st.composite
def _block(draw, rare):
    """A <url> block: the protocol's fields in order, children, whitespace; one time in
    ``rare`` (about) for each, something else."""

    def odd() -> bool:
        return _rarely(draw, rare)

    names = [name for name in _FIELD_NAMES if draw(st.integers(0, 4)) > 0]
    if odd():
        names = draw(st.permutations(names))
    if odd():
        names = [*names, draw(st.sampled_from(_FIELD_NAMES))]
    parts = ["<url>"]
    for name in names:
        close = draw(st.sampled_from(["", "</x>", f"</{name} >"])) if odd() else f"</{name}>"
        value = draw(_ODD_VALUE if odd() else _GOOD_VALUE)
        parts.append(f"{draw(_ODD_WS if odd() else _GOOD_WS)}<{name}>{value}{close}")
    if draw(st.integers(0, 2)) == 0:
        children = (
            st.one_of(_element(), _LINK, _IMAGE) if odd() else st.one_of(_PLAIN_CHILD, _good())
        )
        parts.extend(draw(st.lists(children, min_size=1, max_size=3)))
    parts.append(draw(_ODD_WS if odd() else _GOOD_WS))
    parts.append(draw(st.sampled_from(["", "</urlx>", "<url>"])) if odd() else "</url>")
    return "".join(parts)


_BETWEEN = st.sampled_from(
    [
        "\n  ",
        "",
        " text ",
        "a &amp; b",
        "é",
        "\u00a0",
    ]
)
_ODD_BETWEEN = st.sampled_from(
    [
        "&bogus;",
        "<!-- a comment -->",
        "<![CDATA[x]]>",
        "]]>",
        "\x01",
        "\x0b",
        "\ufffe",
        "<",
        "</url>",
        "<urlx>",
        "<url >",
        "<other/>",
    ]
)
_BYTES = st.sampled_from(
    [b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82", b"\xc3", b"\x80"]
)


@st.composite
def _window(draw, plain=False):
    """The bytes of a window: blocks, text between them, now and then what XML refuses;
    ``plain``: well-formed blocks only, which the C must read itself."""
    rare = draw(st.sampled_from([3, 12, 40, 1000]))
    pieces: list[bytes] = []
    for _ in range(draw(st.integers(0, 6))):
        if not plain and _rarely(draw, rare):
            between = _ODD_BETWEEN if draw(st.booleans()) else _BETWEEN
            pieces.append(draw(between).encode("utf-8", "surrogatepass"))
        if not plain and _rarely(draw, 3 * rare):
            pieces.append(draw(_BYTES))
        pieces.append(draw(_block(rare) if not plain else _plain_block()).encode())
        pieces.append(b"\n  ")
    data = b"".join(pieces)
    if not plain and data and _rarely(draw, rare):  # cut anywhere
        data = data[: draw(st.integers(0, len(data)))]
    return data


_PLAIN_VALUE = st.sampled_from(
    ["https://h/a", "https://h/a?x=1&amp;y=2", " https://h/b\n", "https://h/日本/", "0.5"]
)


_PLAIN_CHILD = st.sampled_from(
    [
        '\n    <xhtml:link rel="alternate" hreflang="en" href="https://h/en/a"/>',
        '<xhtml:link rel="alternate" hreflang="de" href="https://h/de/a?x=1&amp;y=2"/>',
        "<image:image><image:loc>https://h/i.jpg</image:loc></image:image>",
        "\n    <news:news><news:publication><news:name>A &amp; B</news:name>"
        "</news:publication></news:news>",
    ]
)


@st.composite
def _plain_block(draw):
    """A block as generators write it (loc perhaps missing: a malformed entry)."""
    kept = [
        name for name in _FIELD_NAMES if draw(st.integers(0, 9) if name == "loc" else st.booleans())
    ]
    fields = "".join(
        f"{draw(st.sampled_from(['', chr(10) + '    ']))}<{name}>{draw(_PLAIN_VALUE)}</{name}>"
        for name in kept
    )
    children = "".join(draw(st.lists(st.one_of(_PLAIN_CHILD, _good()), max_size=2)))
    return f"<url>{fields}{children}\n  </url>"


def _python(data: bytes, prefixes: frozenset[str]):
    result = ParseResult()
    try:
        text = plain_urlset._window_text(data, False)
        rows = plain_urlset._window_rows(text, 0, result, OPEN_TAG, prefixes)
    except _NotPlain:
        return "declined"
    return rows, result.malformed, result.malformed_count, list(result.extensions.items())


def _compiled(data: bytes, prefixes: frozenset[str]):
    result = ParseResult()
    try:
        rows = plain_urlset._compiled_window(data, 0, len(data), prefixes, result, OPEN_TAG)
    except _NotPlain:
        return "declined"
    if rows is None:
        return None  # left to the Python
    return rows, result.malformed, result.malformed_count, list(result.extensions.items())


@conftest.needs_compiled(_windows)
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_window(), st.sampled_from([PREFIXES, PREFIXES, frozenset(), frozenset({"image"})]))
def test_the_compiled_reader_reads_every_window_as_python_does(data, prefixes):
    compiled = _compiled(data, prefixes)
    if compiled is not None:
        assert compiled == _python(data, prefixes)


@conftest.needs_compiled(_windows)
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_window(plain=True))
def test_the_compiled_reader_reads_plain_windows_itself(data):
    compiled = _compiled(data, PREFIXES)
    assert compiled is not None
    assert compiled == _python(data, PREFIXES)


@conftest.needs_compiled(_windows)
def test_what_the_compiled_reader_leaves_to_python():
    block = b"<url><loc>https://h/a</loc></url>"
    assert _compiled(block, PREFIXES)[0] == [("https://h/a", "", "", "", "")]
    spaced = b"<url>\xe3\x80\x80<loc>\xc2\xa0b&amp;c</loc>\xc2\xa0</url>"  # \s: Unicode's
    assert _compiled(spaced, PREFIXES)[0] == [("b&c", "", "", "", "")]
    assert _compiled(spaced, PREFIXES) == _python(spaced, PREFIXES)
    for odd in (
        b"<url><loc>a b</loc></url>",  # whitespace inside: the Python declines
        b"<url><loc>a</loc><!-- c --></url>",  # a comment: the Python takes it out
        b"<url><loc>a</loc><lastmod></lastmod></url>",  # a field present but empty
        b"<url><loc>&#32;</loc></url>",  # a location of references to whitespace
        b"<url><loc>a&bogus;</loc></url>",
        b"<url><loc>a\x01</loc></url>",
        b"<url><loc>a\xff</loc></url>",
        b"<url><lastmod>x</lastmod><loc>a</loc></url>",
    ):
        assert _compiled(block + odd, PREFIXES) is None, odd
    # without a location: a malformed entry, its children read (and counted) first
    rows, malformed, count, extensions = _compiled(
        b"<url><loc>a</loc><news:news/></url><url><lastmod>x</lastmod><image:image>"
        b"<image:loc>i</image:loc></image:image></url>",
        PREFIXES,
    )
    assert rows == [("a", "", "", "", "")]
    assert [m.block[:14] for m in malformed] == ["<url><lastmod>"] and count == 1
    assert extensions == [("image", 1), ("news", 1)]
    with pytest.raises(_NotPlain):  # an undeclared prefix: _read_tail declines the document
        plain_urlset._compiled_window(
            b"<url><loc>a</loc><q:x/></url>", 0, 29, PREFIXES, ParseResult(), OPEN_TAG
        )


_HEADER = st.sampled_from(
    [
        '<?xml version="1.0" encoding="UTF-8"?>\n',
        "\ufeff<?xml version='1.0'?>",
        "",
        "<!-- generator -->\n",
        '<?xml version="1.0" encoding="ISO-8859-1"?>',
    ]
)
_URLSET = st.sampled_from(
    [
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">',
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
        ' xmlns:xhtml="http://www.w3.org/1999/xhtml"'
        ' xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"'
        ' xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">',
        '<urlset xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" a="&amp;">',
    ]
)
_END = st.sampled_from(["\n</urlset>\n", "</urlset><!-- signed -->", "", "\n</urlset>x"])


def _read(document: bytes, compiled, window: int):
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(plain_urlset, "_windows", compiled)
        monkeypatch.setattr(plain_urlset, "WINDOW", window)
        result = ParseResult()
        try:
            batches = list(plain_urlset.read(SitemapBody(document), result, 7))
        except Declined:
            return "declined"
    return batches, result, list(result.extensions.items())


@conftest.needs_compiled(_windows)
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _HEADER,
    _URLSET,
    st.lists(st.one_of(_window(plain=True), _window()), max_size=4),
    _END,
    st.sampled_from([64, 300, 1 << 18]),
)
def test_whole_documents_read_alike(header, urlset, windows, end, window):
    document = (header + urlset).encode() + b"".join(windows) + end.encode()
    assert _read(document, _windows, window) == _read(document, None, window)


def _real_sitemaps() -> list[str]:
    root = conftest.REALDATA / "sitemaps"
    if not root.is_dir():
        return ["<missing>"]  # realdata() below then skips (or fails in CI)
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


@conftest.needs_compiled(_windows)
@pytest.mark.parametrize("name", _real_sitemaps())
def test_every_real_sitemap_reads_alike(name):
    data = conftest.realdata("sitemaps", *name.split("/")).read_bytes()
    for window in (1 << 18, 4096):
        assert _read(data, _windows, window) == _read(data, None, window)
