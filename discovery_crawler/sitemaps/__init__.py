"""Sitemap documents: body decoding (gzip sniffing, size cap) and streaming parsing.

Free of Scrapy imports, so a user can iterate a sitemap body without a crawler::

    from discovery_crawler.sitemaps import iter_sitemap
    for entry in iter_sitemap(body, "https://example.com/sitemap.xml"):
        print(entry.loc)
"""

from discovery_crawler.sitemaps.body import GZIP_MAGIC, SitemapBody, SitemapTooLarge
from discovery_crawler.sitemaps.parser import Entry, ParseResult, iter_sitemap

__all__ = [
    "GZIP_MAGIC",
    "Entry",
    "ParseResult",
    "SitemapBody",
    "SitemapTooLarge",
    "iter_sitemap",
]
