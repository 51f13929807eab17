"""Bare-Scrapy baseline for the link-crawl benchmark (SPEC §14).

The textbook ``CrawlSpider``: one ``Rule(LinkExtractor(), follow=True)`` restricted to
the start URL's host, yielding ``{"url", "title"}`` per page so that it writes a feed as
ours does. Everything else is stock Scrapy 2.19 (``LinkExtractor``, the dupefilter,
``DepthMiddleware``, ``OffsiteMiddleware``, the JSON lines exporter).

Run: ``scrapy runspider bare_crawl_spider.py -a url=URL -O out.jsonl``
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule

if TYPE_CHECKING:
    from collections.abc import Iterator

    from scrapy.http import Response


class BareCrawlSpider(CrawlSpider):
    """Follow every same-host link; one item per page."""

    name = "bare_crawl"
    custom_settings = {  # noqa: RUF012 - Scrapy reads this as a plain dict
        "REMOTE_CONTROL_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        "ROBOTSTXT_OBEY": False,
        "LOG_LEVEL": "INFO",
    }
    rules = (Rule(LinkExtractor(), callback="parse_page", follow=True),)

    def __init__(self, url: str, *args: Any, **kwargs: Any) -> None:
        self.start_urls = [url]
        self.allowed_domains = [urlsplit(url).hostname or ""]
        super().__init__(*args, **kwargs)

    def parse_start_url(self, response: Response, **kwargs: Any) -> Iterator[Any]:
        return self.parse_page(response)

    def parse_page(self, response: Response) -> Iterator[Any]:
        yield {"url": response.url, "title": response.css("title::text").get()}
