"""Stock-Scrapy baseline for the sitemap benchmark.

A plain ``SitemapSpider`` would request every ``<loc>`` it finds, which
measures page downloads rather than sitemap discovery.  The usual trick is
to override ``_parse_sitemap`` so that urlset entries become items
(``{"url": loc}``) while sitemapindex entries are still followed; everything
else (download, gunzip, lxml parsing, feed export) stays stock.

Run: ``scrapy runspider stock_sitemap_spider.py -a url=URL -O out.jsonl``
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.spiders import SitemapSpider
from scrapy.spiders.sitemap import iterloc
from scrapy.utils.sitemap import Sitemap, sitemap_urls_from_robots

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from scrapy.http import Response


class StockSitemapSpider(SitemapSpider):
    """Emit one item per urlset ``<loc>`` without fetching the page."""

    name = "stock_sitemap"
    custom_settings = {  # noqa: RUF012 - Scrapy reads this as a plain dict
        "REMOTE_CONTROL_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        "ROBOTSTXT_OBEY": False,
        "LOG_LEVEL": "INFO",
    }

    def __init__(self, url: str, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sitemap_urls = [url]

    async def start(self) -> AsyncIterator[Any]:
        """Scrapy 2.19 only calls ``start()``; kept explicit for clarity."""
        for url in self.sitemap_urls:
            yield Request(url, callback=self._parse_sitemap)

    def _parse_sitemap(self, response: Response) -> Iterator[Any]:
        """Follow robots.txt/sitemapindex links; turn urlset locs into items."""
        if response.url.endswith("/robots.txt"):
            for url in sitemap_urls_from_robots(response.body, base_url=response.url):
                yield Request(url, callback=self._parse_sitemap)
            return

        body = self._get_sitemap_body(response)
        if not body:
            self.logger.warning("Ignoring invalid sitemap: %s", response)
            return

        sitemap = Sitemap(body)
        entries = self.sitemap_filter(sitemap)
        if sitemap.type == "sitemapindex":
            for loc in self._get_urls_from_sitemapindex(entries):
                yield Request(loc, callback=self._parse_sitemap)
        elif sitemap.type == "urlset":
            for loc in iterloc(entries, self.sitemap_alternate_links):
                yield {"url": loc}
        else:
            self.logger.warning("Ignoring invalid sitemap: %s", response)
