"""``crawling/links.py`` on its own: the link crawl fed a page of many links, without a
crawl — its records and requests leave in batches as the links are admitted, the budgets
hold as they are, and ``LINKS_PER_PAGE_MAX`` drops the rest, counted and flagged."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy import Request
from scrapy.http import HtmlResponse
from twisted.internet.error import ConnectionRefusedError
from twisted.python.failure import Failure

from discovery_crawler.crawling.links import LinkCrawl, same_document
from discovery_crawler.items import UrlBatch
from tests.pipelines.helpers import SITE, crawler_for, run_for


def on_page(response: Any) -> None: ...
def on_page_failure(failure: Any) -> None: ...


def crawl_for(settings: dict[str, Any] | None = None, **arguments: Any) -> LinkCrawl:
    crawler = crawler_for(settings, mode="links", **arguments)
    run = run_for(crawler)
    run.name_site(SITE)
    return LinkCrawl(crawler, run, on_page=on_page, on_page_failure=on_page_failure)


def page_of(links: int) -> bytes:
    anchors = "".join(f"<a href='/p/{i}'>page {i}</a>" for i in range(links))
    return f"<html><head><title>Hub</title></head><body>{anchors}</body></html>".encode()


def seed_response(crawl: LinkCrawl, body: bytes) -> HtmlResponse:
    request = crawl.seed_request(SITE + "/")
    return HtmlResponse(request.url, body=body, encoding="utf-8", request=request)


def test_a_page_of_many_links_leaves_in_batches_as_they_are_admitted():
    """DISCOVERY_BATCH_SIZE=100, max_pages=10, a page of 1,050 links: no batch holds more
    than 100 records, the first starts with the page's own record, and the first batch
    leaves before the page's last link is admitted (the crawl streams, it does not
    collect); all told, 9 requests (the seed counted one page) and 1,041 records."""
    crawl = crawl_for({"DISCOVERY_BATCH_SIZE": 100}, max_pages="10")
    outputs = crawl.parse_page(seed_response(crawl, page_of(1_050)))
    first = next(outputs)
    assert isinstance(first, UrlBatch)
    assert first.records[0]["url"] == SITE + "/" and first.records[0]["title"] == "Hub"
    assert crawl.account.not_fetched["over_max_pages"] < 1_000  # not all admitted yet
    rest = list(outputs)
    batches = [first, *(o for o in rest if isinstance(o, UrlBatch))]
    requests = [o for o in rest if isinstance(o, Request)]
    assert all(len(b.records) <= 100 for b in batches) and len(batches) >= 10
    records = [r for b in batches for r in b.records]
    assert len(records) == 1 + 1_050 - 9
    assert [r.url for r in requests] == [f"{SITE}/p/{i}" for i in range(9)]
    assert all(r["flags"] == ["over_max_pages"] for r in records[1:])
    assert [r["url"] for r in records[1:]] == [f"{SITE}/p/{i}" for i in range(9, 1_050)]
    assert crawl.account.links_dropped == 0 and not records[0].get("flags")


def test_links_past_links_per_page_max_are_dropped_counted_and_flagged():
    """LINKS_PER_PAGE_MAX=300 on a page of 1,050 links: the first 300 are read (in
    document order: 9 requested, 291 recorded over max_pages), the other 750 are neither
    requested nor recorded; the page is flagged ``links_capped``, the crawl's account
    lists it and the limit that bound."""
    crawl = crawl_for({"DISCOVERY_BATCH_SIZE": 100, "LINKS_PER_PAGE_MAX": 300}, max_pages="10")
    outputs = list(crawl.parse_page(seed_response(crawl, page_of(1_050))))
    records = [r for o in outputs if isinstance(o, UrlBatch) for r in o.records]
    requests = [o for o in outputs if isinstance(o, Request)]
    assert len(requests) == 9 and len(records) == 1 + 291
    assert records[-1]["url"] == f"{SITE}/p/299"
    assert records[0]["flags"] == ["links_capped"]
    account = crawl.account.as_dict()
    assert account["links_dropped"] == 750
    assert account["links_capped"]["items"] == [
        {"url": SITE + "/", "links": 1_050, "followed": 300, "dropped": 750}
    ]
    assert {"limit": "LINKS_PER_PAGE_MAX", "value": 300} in crawl.record.as_dict()["discovery"][
        "limits"
    ]


def test_a_cap_below_the_batch_size_reads_the_page_once():
    """LINKS_PER_PAGE_MAX=5 (below DISCOVERY_BATCH_SIZE): the scan keeps the 5 and only
    counts the rest; one batch, five requests."""
    crawl = crawl_for({"LINKS_PER_PAGE_MAX": 5})
    outputs = list(crawl.parse_page(seed_response(crawl, page_of(40))))
    assert [type(o).__name__ for o in outputs] == ["UrlBatch", *["Request"] * 5]
    assert outputs[0].records[0]["flags"] == ["links_capped"]
    assert crawl.account.links_dropped == 35


def test_the_service_profile_caps_the_links_of_a_page():
    from discovery_crawler.profiles import load_profile

    assert load_profile("service")["LINKS_PER_PAGE_MAX"] == 1_000
    assert "LINKS_PER_PAGE_MAX" not in load_profile("default")


def test_the_frontier_is_what_was_requested_and_is_not_over_yet():
    """The progress line's queued pages: the seed answered with 5 links admits 5 requests
    (6 requested, 1 over); one of them fails (no response): 4 queued."""
    crawl = crawl_for()
    requests = [
        o for o in crawl.parse_page(seed_response(crawl, page_of(5))) if isinstance(o, Request)
    ]
    account = crawl.account
    assert (account.requested, account.done, account.queued) == (6, 1, 5)
    failure = Failure(ConnectionRefusedError())
    failure.request = requests[0]
    list(crawl.page_failed(failure))
    assert (account.failed, account.done, account.queued) == (1, 2, 4)


_O = "https://docs.example"


@pytest.mark.parametrize(
    ("url", "canonical"),
    [
        # Docusaurus: /docs/x?config=static answers 301 to /docs/x/?config=static (the host
        # added the slash) and names /docs/x: the canonical's slash twin is the page's path
        ("/docs/auth-flow/?config=static", "/docs/auth-flow"),
        ("/docs/auth-flow?config=static", "/docs/auth-flow/"),
        ("/docs/auth-flow?config=static", "/docs/auth-flow"),
        ("/docs/auth-flow/?config=static", "/docs/auth-flow/"),
        ("/docs/index.html", "/docs"),
        ("/docs", "/docs/index.html"),
    ],
)
def test_the_same_document_under_either_slash_form_is_the_canonicals(url, canonical):
    assert same_document(_O + url, _O + canonical)


@pytest.mark.parametrize(
    ("url", "canonical"),
    [
        ("/docs/auth-flow/", "/docs/other"),
        ("/docs/auth-flow/?config=static", "/docs/other"),
        ("/docs/auth-flow/?config=static", "/docs/auth-flow?config=dynamic"),
        ("/docs/a/index.html", "/docs"),
        ("/blog/post/", "/"),
    ],
)
def test_another_page_is_not_the_same_document(url, canonical):
    assert not same_document(_O + url, _O + canonical)


def test_budgets_are_named_as_they_were_given():
    """A bound budget is named by the ``-a`` argument, else the setting, else the
    profile's cap that lowered it (the summary says ``max_pages=50``, not the setting)."""
    from types import SimpleNamespace

    from scrapy.settings import Settings

    from discovery_crawler.crawling.links import budget_names

    def names(max_pages=None, max_depth=None, **settings):
        options = SimpleNamespace(max_pages=max_pages, max_depth=max_depth)
        return budget_names(options, Settings(settings))

    assert names(50, 2) == ("max_pages", "max_depth")
    assert names(BFS_MAX_PAGES=50) == ("BFS_MAX_PAGES", "BFS_MAX_DEPTH")
    assert names(BFS_MAX_PAGES_LIMIT=100)[0] == "BFS_MAX_PAGES_LIMIT"  # no budget: the cap
    assert names(50, BFS_MAX_PAGES_LIMIT=100)[0] == "max_pages"  # under the cap
