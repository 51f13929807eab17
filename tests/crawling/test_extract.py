"""The page scan of the link crawl (``crawling/extract.py``): one pass over the HTML, bad input
that never raises, anchor text, meta refresh."""

from __future__ import annotations

import pytest

from discovery_crawler.crawling.extract import anchor_text, refresh_target, scan_html


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
