"""Sitemap documents: body decoding (gzip sniffing, size cap) and streaming parsing.

Free of Scrapy imports, so a user can iterate a sitemap body without a crawler: give the
body (bytes, gzipped or not) and the URL it came from; each entry's location is resolved
against that URL::

    >>> from discovery_crawler.sitemaps import iter_sitemap
    >>> body = (
    ...     b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    ...     b"<url><loc>https://example.com/</loc><lastmod>2024-05-01</lastmod></url>"
    ...     b"<url><loc>/about/</loc></url></urlset>"
    ... )
    >>> for entry in iter_sitemap(body, "https://example.com/sitemap.xml"):
    ...     print(entry.loc, entry.lastmod)
    https://example.com/ 2024-05-01
    https://example.com/about/ None

Pass ``result=ParseResult()`` to learn what the document was (format, counts, malformed
entries, a recovered problem); child sitemaps of an index come last, ``is_sitemap`` set.
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
