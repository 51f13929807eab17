"""``sitemaps/_tails.c`` (a plain urlset's extension children read in C) reads every tail as
``plain_urlset._read_tail`` does: the same alternates, the same extension counts, and the
same refusal (``_NotPlain``) of what lxml must read — on hypothesis tails made of what
generators write and of what they should not (undeclared prefixes, bad nesting, references,
non-ASCII names, attributes given twice, stray ``<``)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discovery_crawler.sitemaps.formats import plain_urlset
from discovery_crawler.sitemaps.formats.plain_urlset import _NotPlain, _read_tail
from tests import conftest

_tails = plain_urlset._tails
PREFIXES = frozenset({"xhtml", "image", "news", "video"})

_WS = st.sampled_from(["", " ", "\n    ", "\t", "\r\n  "])
_PREFIX = st.sampled_from(["xhtml", "image", "news", "video", "nope", "é", "x_1"])
_VALUE = st.sampled_from(
    ["en", "", "https://h/a/", " https://h/b ", "a&amp;b", "a&#38;b", "x\ty", "Alternate", "é", "<"]
)
_ATTR = st.tuples(
    st.sampled_from(["rel", "href", "hreflang", "xmlns:a", "xml:lang", "news:x", "a.b", "rel"]),
    _WS,
    _VALUE,
    st.sampled_from(['"', "'"]),
).map(lambda a: f" {a[0]}{a[1]}={a[3]}{a[2]}{a[3]}")


@st.composite
def _element(draw, depth=0):
    prefix = draw(_PREFIX)
    name = draw(st.sampled_from(["link", "image", "loc", "title", "caption", "news", "lastmod"]))
    attrs = "".join(draw(st.lists(_ATTR, max_size=3)))
    ws = draw(_WS)
    if draw(st.booleans()):
        return f"{ws}<{prefix}:{name}{attrs}{draw(_WS)}/>"
    inner = draw(st.sampled_from(["", "text", "a > b", "x&amp;y"]))
    if depth < 2 and draw(st.booleans()):
        inner = "".join(draw(st.lists(_element(depth + 1), max_size=3))) + draw(_WS)
    close = draw(st.sampled_from([f"</{prefix}:{name}>", f"</{prefix}:{name}>", "</x:y>", ""]))
    return f"{ws}<{prefix}:{name}{attrs}>{inner}{close}"


_LINK = st.tuples(_WS, _PREFIX, _VALUE, _VALUE).map(
    lambda t: f'{t[0]}<{t[1]}:link rel="alternate" hreflang="{t[2]}" href="{t[3]}"{t[0]}/>'
)
_IMAGE = st.tuples(_WS, _PREFIX, st.lists(st.sampled_from(["title", "image", "caption"]))).map(
    lambda t: (
        f"{t[0]}<{t[1]}:image>{t[0]}<{t[1]}:loc>https://h/i.jpg</{t[1]}:loc>"
        + "".join(f"{t[0]}<{t[1]}:{c}>c</{t[1]}:{c}>" for c in t[2])
        + f"{t[0]}</{t[1]}:image>"
    )
)


@st.composite
def _good(draw, depth=0):
    """An element as generators write them: declared prefixes, closed, plain values."""
    prefix = draw(st.sampled_from(sorted(PREFIXES)))
    name = draw(st.sampled_from(["link", "image", "title", "publication", "name"]))
    attrs = "".join(
        f' {key}="{draw(st.sampled_from(["alternate", "en", "https://h/a", "", "alternate x"]))}"'
        for key in draw(st.lists(st.sampled_from(["rel", "hreflang", "href", "type"]), unique=True))
    )
    ws = draw(_WS)
    if draw(st.booleans()):
        return f"{ws}<{prefix}:{name}{attrs}{draw(_WS)}/>"
    inner = "text"
    if depth < 2 and draw(st.booleans()):
        inner = "".join(draw(st.lists(_good(depth + 1), max_size=3))) + draw(_WS)
    return f"{ws}<{prefix}:{name}{attrs}>{inner}</{prefix}:{name}>"


_TAILS = st.lists(
    st.one_of(_LINK, _IMAGE, _element(), _good(), _good()), min_size=1, max_size=4
).map("".join)


def _read(tail, compiled, monkeypatch):
    monkeypatch.setattr(plain_urlset, "_tails", compiled)
    extensions = {"image": 1}
    rows = [("https://h/", "", "", "", tail), ("https://h/2", "", "", "", "")]
    try:
        plain_urlset._read_tails(rows, PREFIXES, extensions)
    except _NotPlain:
        return "declined", extensions
    return rows, extensions


@conftest.needs_compiled(_tails)
@settings(max_examples=1500, deadline=None)
@given(_TAILS | st.text(alphabet="<>/:=\"' \nxhtmlinkag&;é", max_size=40))
def test_the_compiled_reader_reads_every_tail_as_python_does(tail):
    with pytest.MonkeyPatch.context() as monkeypatch:
        compiled = _read(tail, _tails, monkeypatch)
        python = _read(tail, None, monkeypatch)
    # a declined document is read again by lxml: the counts made before do not matter then
    assert compiled[0] == python[0]
    if python[0] != "declined":
        assert compiled[1] == python[1]


@conftest.needs_compiled(_tails)
def test_the_shapes_generators_write_most():
    alternates = (
        '<xhtml:link rel="alternate" hreflang="en" href=" https://h/a "/>'
        '\n <xhtml:link rel="alternate" hreflang="de" href="https://h/de/a"/>'
    )
    images = "<image:image><image:loc>https://h/i.jpg</image:loc></image:image>"
    rows = [("u", "", "", "", alternates), ("v", "", "", "", images), ("w", "", "", "", "")]
    extensions: dict[str, int] = {}
    assert _tails.read_tails(rows, PREFIXES, extensions, _read_tail) is True
    assert rows[0][4] == (("en", "https://h/a"), ("de", "https://h/de/a"))
    assert rows[1][4] == ""
    assert extensions == {"image": 1}
    with pytest.raises(_NotPlain):  # undeclared: left to _read_tail, which refuses it
        _tails.read_tails([("u", "", "", "", "<q:x/>")], PREFIXES, {}, _read_tail)
    assert _tails.read_tails([("u", "")], PREFIXES, {}, _read_tail) is False  # not 5-tuples
