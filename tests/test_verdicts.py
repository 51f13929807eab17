"""The verdict rules of ``-a verify=1`` (``verdicts.py``) as functions: one verdict for every
answer, the tally of advertised records."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from discovery_crawler.output.exporters import patched_record
from discovery_crawler.output.feed_lines import json_line
from discovery_crawler.urls.seen import SeenSet
from discovery_crawler.verdicts import (
    VERDICT_KEY,
    VERDICTS,
    VerifyTally,
    answer_verdict,
    verdict_of,
)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((200,), ("live", "page")),
        ((200, "download"), ("live", "download")),  # a file served at a page URL exists
        ((200, "shell"), ("live", "shell")),
        ((200, "wall"), ("refused", "wall")),  # a block page served with 200
        ((404, "missing"), ("dead", "404")),
        ((410,), ("dead", "410")),
        ((400,), ("dead", "400")),
        ((405,), ("dead", "405")),  # a 405 to GET: the URL serves no page
        ((401,), ("refused", "wall")),
        ((503, "wall"), ("refused", "wall")),  # a 503 block page is a wall
        ((503, "server_error"), ("failed", "server_error")),  # a 503 otherwise: down
        ((503,), ("failed", "server_error")),
        ((502, "server_error"), ("failed", "server_error")),
        ((500,), ("failed", "server_error")),
        ((502,), ("failed", "server_error")),
        ((None, "timeout"), ("failed", "timeout")),
        ((None, "network"), ("failed", "network")),
        ((None,), ("unchecked", "not_fetched")),
        ((304,), ("failed", "status 304")),  # a 3xx with nowhere to go
        ((None, None, False, None, True), ("refused", "robots")),
        ((200, "login", True), ("refused", "login")),  # the login redirect is the wall
        ((200, None, True), ("redirected", "live")),
        ((404, "missing", True), ("redirected", "dead")),
        ((403, "wall", True), ("redirected", "refused")),
        ((None, "timeout", True), ("redirected", "failed")),
        ((301, None, True, "loop"), ("redirected", "loop")),
        ((301, None, True, "robots"), ("redirected", "robots")),
    ],
)
def test_answer_verdict(args, expected):
    assert answer_verdict(*args) == expected


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"status": 200}, ("live", "page")),
        ({"status": 200, "redirected_to": "https://e.com/b/"}, ("redirected", "live")),
        ({"status": 301, "redirected_to": "https://e.com/b/"}, ("redirected", "followed")),
        ({"status": 301}, ("redirected", "followed")),  # union: the target is its own record
        ({"status": 301, "flags": ["redirect_loop"]}, ("redirected", "loop")),
        ({"status": 302, "flags": ["over_max_redirects"]}, ("redirected", "too_long")),
        ({"status": 404, "refusal": {"class": "missing"}}, ("dead", "404")),
        ({"status": 302, "refusal": {"class": "login"}}, ("refused", "login")),
        ({"status": None, "flags": ["robots_disallowed"]}, ("refused", "robots")),
        ({"status": None, "refusal": {"class": "network"}}, ("failed", "network")),
        ({"kind": "document"}, ("unchecked", "document")),
        ({"kind": "page", "flags": ["requires_auth"]}, ("unchecked", "requires_auth")),
        ({"kind": "page", "flags": ["over_max_pages"]}, ("unchecked", "over_max_pages")),
        ({"kind": "page"}, ("unchecked", "not_fetched")),
    ],
)
def test_verdict_of_a_record(fields, expected):
    assert verdict_of({"url": "https://e.com/a/", **fields}) == expected


@given(
    status=st.one_of(st.none(), st.integers(100, 599)),
    refusal=st.sampled_from(
        [None, "download", "missing", "wall", "login", "shell", "server_error", "timeout"]
    ),
    redirected=st.booleans(),
    robots=st.booleans(),
)
def test_every_answer_has_exactly_one_verdict(status, refusal, redirected, robots):
    fields = {"url": "https://e.com/a/", "status": status, "kind": "page"}
    if refusal:
        fields["refusal"] = {"class": refusal}
    if redirected:
        fields["redirected_to"] = "https://e.com/b/"
    if robots:
        fields["flags"] = ["robots_disallowed"]
    verdict, detail = verdict_of(fields)
    assert verdict in VERDICTS and detail
    if verdict == "live":  # live is a 2xx at the listed URL itself, nothing else
        assert status is not None and 200 <= status < 300 and not redirected and not robots


def test_tally_counts_each_advertised_record_once_and_sums_to_advertised():
    tally = VerifyTally(cap=2)
    records = [
        {"url": "https://e.com/", "source": "sitemap", "status": 200},
        {
            "url": "https://e.com/a/",
            "source": "alternate",
            "status": 404,
            "refusal": {"class": "missing", "reason": "404 Not Found"},
        },
        {"url": "https://e.com/f.pdf", "source": "sitemap", "kind": "document"},
        {"url": "https://e.com/l/", "source": "link", "status": 200},  # not listed: not counted
        {
            "url": "https://e.com/b/",
            "source": "sitemap",
            "status": 301,
            VERDICT_KEY: ("redirected", "robots", {"chain": [["https://e.com/b/", 301]]}),
        },
    ]
    assert tally.observe(records) is False  # fetch mode: the verifier set the fields
    assert tally.advertised == 4 == sum(tally.counts.values())
    assert tally.counts == {
        "live": 1,
        "redirected": 1,
        "dead": 1,
        "refused": 0,
        "failed": 0,
        "unchecked": 1,
    }
    assert VERDICT_KEY not in records[4]  # never exported
    log = tally.as_dict()
    assert log["redirected"]["items"][0]["chain"] == [["https://e.com/b/", 301]]
    assert log["dead"]["items"][0]["reason"] == "404 Not Found"
    assert log["unchecked"]["items"][0]["detail"] == "document"
    json.dumps(log)


def test_tally_in_union_mode_counts_linked_pages_a_sitemap_listed_later():
    listed = {"https://e.com/", "https://e.com/gone/"}
    tally = VerifyTally(mode="crawl")
    tally.listed = listed.__contains__
    records = [
        {"url": "https://e.com/", "source": "seed", "status": 200},
        {
            "url": "https://e.com/gone/",
            "source": "link",
            "status": 404,
            "refusal": {"class": "missing"},
        },
        {"url": "https://e.com/other/", "source": "link", "status": 200},
        {"url": "https://e.com/x/", "source": "sitemap", "status": 200},
    ]
    assert tally.observe(records) is True
    assert [r.get("live") for r in records] == [True, False, True, True]
    assert tally.advertised == 1  # the linked pages wait for the end of the crawl
    assert "Verify (3 advertised; answered by the crawl's own fetches): 2 live" in tally.line()
    assert tally.as_dict()["counts"] == {
        "live": 2,
        "redirected": 0,
        "dead": 1,
        "refused": 0,
        "failed": 0,
        "unchecked": 0,
    }


def test_an_alternate_upgraded_to_a_listing_keeps_its_fetch():
    """An hreflang alternate verified before a sitemap lists it as a <loc>: the feed's
    final record is the listing's, with the fetch fields and verify's extra fields kept."""
    seen = SeenSet()
    url = "https://e.com/en/a/"
    listing = {
        "url": url,
        "source": "sitemap",
        "sitemap": "https://e.com/s2.xml",
        "lastmod": "2024-01-01",
        "priority": None,
        "changefreq": None,
        "alternates": None,
    }
    seen.add(url)
    seen.upgrade(url, listing)
    written = json.loads(
        json_line(
            {
                "url": url,
                "source": "alternate",
                "sitemap": "https://e.com/s1.xml",
                "lastmod": None,
                "priority": None,
                "changefreq": None,
                "alternates": None,
                "via": "sitemap",
                "found_on": "https://e.com/s1.xml",
                "anchor": None,
                "depth": None,
                "title": None,
                "status": 301,
                "refusal": None,
                "kind": "page",
                "flags": None,
                "slug": "en__a",
                "score": 1,
                "change": "new",
                "redirected_to": "https://e.com/en/b/",
                "live": False,
            }
        )
    )
    final = patched_record(written, seen)
    assert final["source"] == "sitemap" and final["lastmod"] == "2024-01-01"
    assert (final["status"], final["via"], final["live"]) == (301, "sitemap", False)
    assert final["redirected_to"] == "https://e.com/en/b/"
