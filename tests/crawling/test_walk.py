"""``crawling/walk.py`` on its own: the sitemap walk fed responses, without a crawl."""

from __future__ import annotations

import asyncio
import pickle
from typing import Any

from scrapy import Request, signals
from scrapy.exceptions import DownloadCancelledError, DownloadFailedError
from scrapy.http import TextResponse, XmlResponse
from twisted.internet.error import DNSLookupError
from twisted.python.failure import Failure

from discovery_crawler.crawling.walk import SitemapWalk
from discovery_crawler.items import UrlBatch
from tests.conftest import run_crawler
from tests.pipelines.helpers import SITE, crawler_for, run_for

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def on_robots(response: Any) -> None: ...
def on_robots_failure(failure: Any) -> None: ...
def on_sitemap(response: Any) -> None: ...
def on_sitemap_failure(failure: Any) -> None: ...


def walk_for(
    settings: dict[str, Any] | None = None, url: str | None = None, **arguments: Any
) -> SitemapWalk:
    # in-process: the worker process needs the crawl's reactor
    settings = {"SITEMAP_PARSE_WORKER": False, **(settings or {})}
    if url is None:
        crawler = crawler_for(settings, **arguments)
    else:
        crawler = run_crawler(url, settings, **arguments)
    run = run_for(crawler)
    run.name_site(SITE)
    return SitemapWalk(
        crawler,
        run,
        on_robots=on_robots,
        on_robots_failure=on_robots_failure,
        on_sitemap=on_sitemap,
        on_sitemap_failure=on_sitemap_failure,
    )


def answer(request: Request, body: str, status: int = 200, cls: type = XmlResponse) -> Any:
    return cls(request.url, status=status, body=body.encode(), request=request)


def scraped(walk: SitemapWalk, response: Any, output: Any) -> Any:
    """What Scrapy does once an item has passed the pipelines (a request goes elsewhere)."""
    if not isinstance(output, Request):
        walk.crawler.signals.send_catch_log(
            signals.item_scraped, item=output, response=response, spider=None
        )
    return output


def parse(walk: SitemapWalk, response: Any) -> list[Any]:
    async def collect() -> list[Any]:
        return [scraped(walk, response, output) async for output in walk.parse(response)]

    return asyncio.run(collect())


def urlset(*paths: str) -> str:
    locs = "".join(f"<url><loc>{SITE}{p}</loc></url>" for p in paths)
    return f"<urlset {NS}>{locs}</urlset>"


def index(*paths: str) -> str:
    locs = "".join(f"<sitemap><loc>{SITE}{p}</loc></sitemap>" for p in paths)
    return f"<sitemapindex {NS}>{locs}</sitemapindex>"


def test_robots_then_its_sitemaps_then_the_conventional_addresses():
    walk = walk_for({"SITEMAP_CONVENTIONAL_PATHS": ["/sitemap.xml", "/sitemap.txt"]})
    robots = walk.robots_request(SITE + "/robots.txt")
    assert robots.callback is on_robots and robots.errback is on_robots_failure
    body = "User-agent: *\nSitemap: /news.xml\nSitemap: /sitemap.xml\n"
    requests = list(walk.parse_robots(answer(robots, body, cls=TextResponse)))
    assert [r.url for r in requests] == [
        SITE + "/news.xml",
        SITE + "/sitemap.xml",
        SITE + "/sitemap.txt",
    ]
    assert all(r.callback is on_sitemap and r.errback is on_sitemap_failure for r in requests)
    record = walk.record
    assert record.robots["sitemaps"] == [SITE + "/news.xml", SITE + "/sitemap.xml"]
    assert [a.source for a in record.attempts.values()] == ["robots", "robots", "conventional"]
    assert record.sitemaps_pending == 3


def test_an_unreachable_robots_txt_still_tries_the_conventional_addresses():
    walk = walk_for({"SITEMAP_CONVENTIONAL_PATHS": ["/sitemap.xml"]})
    robots = walk.robots_request(SITE + "/robots.txt")
    failure = Failure(DNSLookupError("example.com"))
    requests = list(walk.robots_failed(failure))
    assert [r.url for r in requests] == [SITE + "/sitemap.xml"]
    assert walk.record.robots["error"].startswith("DNS lookup failed")
    assert robots.url == SITE + "/robots.txt"


def test_a_urlset_is_read_in_batches_and_its_attempt_filled():
    walk = walk_for({"DISCOVERY_BATCH_SIZE": 2})
    request = walk.input_request(SITE + "/sitemap.xml")
    outputs = parse(walk, answer(request, urlset("/a/", "/b/", "/c/")))
    batches = [o for o in outputs if isinstance(o, UrlBatch)]
    assert [len(b.entries) for b in batches] == [2, 1]
    attempt = walk.record.attempts[SITE + "/sitemap.xml"]
    assert attempt.ok and attempt.urls == 3 and attempt.format == "urlset"
    assert walk.record.sitemaps_pending == 0 and walk.record.sitemaps_done == 1


def test_a_document_enters_once_the_one_asked_before_has_its_listings_through_the_stages():
    """Scrapy queues a callback's items for the pipelines: a document whose parse ended
    while its last batch still waits there keeps the next document out until that batch
    has passed, so the stages see every listing in the order the documents were asked
    (a resumed run's journal answers them all at once)."""
    walk = walk_for({"SITEMAP_CONVENTIONAL_PATHS": []})
    robots = walk.robots_request(SITE + "/robots.txt")
    body = "Sitemap: /pages.xml\nSitemap: /products.xml\n"
    first, second = walk.parse_robots(answer(robots, body, cls=TextResponse))
    pages, products = answer(first, urlset("/shop/")), answer(second, urlset("/shop/", "/x/"))

    async def run() -> list[str]:
        order: list[str] = []
        held: list[Any] = []  # the first document's batches, not through the stages yet

        async def read(response: Any, hold: bool) -> None:
            async for output in walk.parse(response):
                if isinstance(output, UrlBatch):
                    order.append(output.document)
                    if hold:
                        held.append(output)
                        continue
                scraped(walk, response, output)

        reading = asyncio.gather(read(pages, True), read(products, False))
        for _ in range(20):
            await asyncio.sleep(0)
        assert order == [SITE + "/pages.xml"]  # its parse is over, its batch is not
        assert walk.record.sitemaps_done == 0 and not walk.over()
        for batch in held:
            scraped(walk, pages, batch)
        await asyncio.wait_for(reading, 5)
        return order

    assert asyncio.run(run()) == [SITE + "/pages.xml", SITE + "/products.xml"]
    assert walk.record.sitemaps_done == 2 and walk.over()


def test_an_index_schedules_its_children_once_within_the_limits():
    walk = walk_for({"SITEMAP_MAX_DEPTH": 1})
    top = walk.input_request(SITE + "/index.xml")
    children = parse(walk, answer(top, index("/a.xml", "/b.xml", "/index.xml")))
    assert [r.url for r in children] == [SITE + "/a.xml", SITE + "/b.xml"]  # no cycle
    assert walk.record.counts["sitemaps_repeated"] == 1
    deeper = parse(walk, answer(children[0], index("/deep.xml")))
    assert deeper == []  # index nesting past SITEMAP_MAX_DEPTH
    assert "SITEMAP_MAX_DEPTH" in walk.record.limits
    assert walk.record.skipped_sitemaps.items[0]["reason"] == "depth"


def test_the_document_limit_binds():
    walk = walk_for({"SITEMAP_MAX_DOCUMENTS": 2})
    top = walk.input_request(SITE + "/index.xml")
    children = parse(walk, answer(top, index("/a.xml", "/b.xml")))
    assert [r.url for r in children] == [SITE + "/a.xml"]
    assert walk.record.limits["SITEMAP_MAX_DOCUMENTS"]["skipped"] == 1


def test_an_error_answer_and_a_failed_fetch_are_said():
    walk = walk_for()
    request = walk.input_request(SITE + "/sitemap.xml")
    assert parse(walk, answer(request, "gone", status=404)) == []
    assert walk.record.attempts[SITE + "/sitemap.xml"].error == "HTTP 404"
    other = walk._sitemap_request(SITE + "/other.xml", "conventional", None, 0)
    failure = Failure(DNSLookupError("example.com"))
    failure.request = other  # type: ignore[attr-defined]
    walk.failed(failure)
    assert walk.record.attempts[SITE + "/other.xml"].error.startswith("DNS lookup failed")


def test_the_input_over_download_maxsize_or_a_tls_failure_is_the_runs_failure_named():
    """The sitemap given is cancelled over DOWNLOAD_MAXSIZE (Scrapy's words say the size):
    its attempt and the run's ``input_failure`` say the cap, not "unreachable"; a TLS
    handshake failing on robots.txt of a URL typed without a scheme suggests http://."""
    walk = walk_for({"DOWNLOAD_MAXSIZE": 1_000_000})
    request = walk.input_request(SITE + "/sitemap.xml")
    failure = Failure(
        DownloadCancelledError(
            "Expected to receive 2108959 bytes which is larger than download max size "
            f"(1000000) in request <GET {SITE}/sitemap.xml>."
        )
    )
    failure.request = request  # type: ignore[attr-defined]
    walk.failed(failure)
    cap = (
        "larger than DOWNLOAD_MAXSIZE (1,000,000 bytes): 2,108,959 bytes announced, not downloaded"
    )
    assert walk.record.attempts[SITE + "/sitemap.xml"].error == cap
    assert walk.record.input_failure == (
        f"{SITE}/sitemap.xml is {cap} — raise -s DOWNLOAD_MAXSIZE to read it"
    )

    walk = walk_for(url="example.com")  # no scheme
    robots = walk.robots_request(SITE + "/robots.txt")
    ssl = "[('SSL routines', '', 'wrong version number')]"
    failure = Failure(DownloadFailedError(f"[<Failure OpenSSL.SSL.Error: {ssl}>]"))
    failure.request = robots  # type: ignore[attr-defined]
    list(walk.robots_failed(failure))
    assert walk.record.robots["error"] == "TLS handshake failed: wrong version number"
    assert walk.record.input_failure == (
        f"TLS handshake failed with {SITE}/ (wrong version number) — if the site serves "
        "plain HTTP, try -a url=http://example.com"
    )


def test_found_no_page_says_why():
    walk = walk_for()
    assert walk.found_no_page() is None  # nothing answered: unreachable, not sitemap-less
    walk.record.robots = {"status": 404}
    assert walk.found_no_page() == "no sitemap yielded a URL of the site"
    walk.record.kinds["page"] = 1
    assert walk.found_no_page() is None


def test_its_progress_is_the_runs_and_can_be_saved():
    walk = walk_for()
    walk.input_request(SITE + "/sitemap.xml")
    assert walk.run.walk is walk.progress
    saved = pickle.loads(pickle.dumps(walk.progress))
    assert saved.visited == {SITE + "/sitemap.xml"} and saved.scheduled == 1
