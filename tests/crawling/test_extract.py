"""The page scan of the link crawl (``crawling/extract.py``): one pass over the HTML, bad input
that never raises, anchor text, meta refresh."""

from __future__ import annotations

import gc

import pytest
from hypothesis import given
from hypothesis import strategies as st

from discovery_crawler.crawling.extract import anchor_text, iter_links, refresh_target, scan_html


def test_scan_html_one_pass():
    body = (
        b"<html><head><title> A \n title </title><base href='/x/'>"
        b"<link rel='Canonical' href='/c/'></head><body>"
        b"<a href='/1'>One</a><a href='/1'>again</a><a rel='external NoFollow' href='/n'>n</a>"
        b"<a href='javascript:void(0)'>js</a><a href=' /2 '><img alt='Two'></a><a>no href</a>"
        b"</body></html>"
    )
    scan = scan_html(body, "utf-8")
    assert scan.title == "A title"
    assert (scan.base, scan.canonical, scan.nofollow) == ("/x/", "/c/", False)
    assert [h for h, _ in scan.links] == ["/1", "/2"]
    assert scan.nofollow_links == 1
    assert anchor_text(scan.links[1][1]) == "Two"


def test_scan_html_bad_input_never_raises():
    for body in (b"", b"   ", b"\x00\xff\xfe<", b"<html><a href='/x'>", "é".encode("latin-1")):
        scan_html(body, "utf-8")
    assert scan_html(b"<meta name=robots content='NOFOLLOW'><a href=/a>a</a>").nofollow


def test_anchor_text_collapses_and_caps():
    scan = scan_html(b"<a href='/a'>" + b"word  \n " * 100 + b"</a>")
    text = anchor_text(scan.links[0][1])
    assert text is not None and len(text) == 160 and "  " not in text


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("0; url=/x/", (0.0, "/x/")),
        ("0;URL='/x/'", (0.0, "/x/")),
        ('3 , url = "a b"', (3.0, "a b")),
        ("0;/next", (0.0, "/next")),  # the HTML standard allows it; w3lib does not
        ("0 url=/w", (0.0, "/w")),
        ("0.5; url=/z?q=1", (0.0, "/z?q=1")),
        ("300", None),  # a reload, no redirect
        ("0; url=", None),
        ("soon", None),
    ],
)
def test_refresh_target(content, expected):
    assert refresh_target(content) == expected


def test_scan_html_reads_the_first_refresh_outside_noscript():
    body = (
        b"<html><head><noscript><meta http-equiv=refresh content='0;url=/nojs'></noscript>"
        b"<meta http-equiv='Refresh' content='5; url=/v3/'><meta http-equiv=refresh "
        b"content='0;url=/second'></head><body><a href=/a>a</a></body></html>"
    )
    scan = scan_html(body)
    assert (scan.refresh, scan.refresh_delay, [h for h, _ in scan.links]) == ("/v3/", 5.0, ["/a"])
    assert scan_html(body, refresh_ignore=()).refresh == "/nojs"
    assert scan_html(b"<meta http-equiv=refresh content=60><title>t</title>").refresh is None


# -- a page of many links: kept up to a number, the rest read again in lists --------------


def many_links(n: int, start: int = 0) -> bytes:
    """A page of ``n`` distinct links (``/p/i``) each wrapped in a list item, with a repeat,
    a nofollow link and a ``javascript:`` link among them, and its head at the top."""
    items = "".join(
        f"<li><a href='/p/{i}'>page <b>{i}</b></a> <a href='/p/{i}'>again</a></li>"
        for i in range(start, start + n)
    )
    return (
        "<html><head><title>Many</title><link rel=canonical href='/many'></head><body><ul>"
        f"<li><a rel=nofollow href='/n'>n</a><a href='javascript:x()'>js</a></li>{items}"
        "</ul></body></html>"
    ).encode()


def test_scan_html_keeps_the_first_links_and_counts_the_rest():
    body = many_links(5_000)
    whole = scan_html(body)
    scan = scan_html(body, keep=100)
    assert (scan.title, scan.canonical, scan.nofollow_links) == ("Many", "/many", 1)
    assert [h for h, _ in scan.links] == [h for h, _ in whole.links][:100]
    assert scan.more == 4_900 and whole.more == 0
    # the kept elements outlive the parse that freed the document around them
    assert [anchor_text(el) for _, el in scan.links[:3]] == ["page 0", "page 1", "page 2"]
    assert scan_html(body, keep=0).links == [] and scan_html(body, keep=0).more == 5_000


@pytest.mark.parametrize(
    ("size", "skip", "limit"), [(1, 0, 0), (7, 0, 0), (100, 30, 0), (64, 10, 250)]
)
def test_iter_links_reads_what_scan_html_finds_in_lists(size, skip, limit):
    body = many_links(2_000)
    expected = [h for h, _ in scan_html(body).links][skip:]
    if limit:
        expected = expected[:limit]
    lists = []
    anchors = []
    for links in iter_links(body, "utf-8", size, skip=skip, limit=limit):
        lists.append(len(links))
        anchors += [(href, anchor_text(el)) for href, el in links]  # valid within its list
    assert [href for href, _ in anchors] == expected
    assert all(text == f"page {href[3:]}" for href, text in anchors)
    assert all(n == size for n in lists[:-1]) and 0 < lists[-1] <= size


def test_iter_links_on_bad_input_yields_nothing():
    for body in (b"", b"  ", b"\x00\xff", b"<html><p>no links</p>"):
        assert list(iter_links(body)) == []


@given(
    st.lists(
        st.sampled_from(["/a", "/b", " /c ", "#top", "mailto:x@y", "/d?x=1", "", "/a"]),
        max_size=40,
    ),
    st.integers(min_value=0, max_value=10),
    st.integers(min_value=1, max_value=5),
)
def test_keep_and_iter_links_together_give_every_link_once(hrefs, keep, size):
    """Whatever the page and the numbers: the links kept, then the rest read again, are
    the page's links, each once, in document order."""
    body = "".join(f"<p><a href='{h}'>{i}</a></p>" for i, h in enumerate(hrefs)).encode()
    whole = [h for h, _ in scan_html(body).links]
    scan = scan_html(body, keep=keep)
    rest = [h for links in iter_links(body, None, size, skip=len(scan.links)) for h, _ in links]
    assert [h for h, _ in scan.links] + rest == whole
    assert scan.more == len(rest)


def test_a_scan_leaves_no_cyclic_garbage_and_bad_input_leaves_the_next_scan_intact():
    """scan_html reuses one parser per encoding: a parser made per document leaves a
    reference cycle (lxml's document and parser context), and every page's tree would wait
    for the cyclic collector, which the crawl runs rarely (GC_GEN0_THRESHOLD). A document
    that fails part-way leaves nothing behind for the next."""
    good = b"<html><title>T</title><a href=/x>x</a></html>"
    gc.collect()
    gc.disable()
    try:
        for _ in range(20):
            scan_html(many_links(50), "utf-8", keep=1000)
            scan_html(good, None, keep=0)
        assert gc.collect() == 0
    finally:
        gc.enable()
    for bad in (b"\x00\xff\xfe<", b"<a href='/\xe9'>", b"<" * 70_000, b"<div>" * 100_000):
        for encoding in (None, "utf-8", "no-such-encoding"):
            scan_html(bad, encoding)
            scan = scan_html(good, encoding)
            assert (scan.title, [h for h, _ in scan.links]) == ("T", ["/x"])


@pytest.mark.parametrize(
    ("head", "noindex", "nofollow"),
    [
        ('<meta name="robots" content="noindex">', True, False),
        ('<meta name="ROBOTS" content="NOFOLLOW">', False, True),
        ('<meta name="robots" content="none">', True, True),
        ('<meta name="discovery-crawler" content="noindex">', True, False),
        ('<meta name="googlebot" content="noindex, nofollow">', False, False),
        ('<meta name="robots" content="index, follow">', False, False),
    ],
)
def test_scan_reads_robots_meta_for_us(head, noindex, nofollow):
    body = f"<html><head>{head}</head><body><a href='/x'>x</a></body></html>".encode()
    scan = scan_html(body, "utf-8", agent="discovery-crawler")
    assert (scan.noindex, scan.nofollow) == (noindex, nofollow)
