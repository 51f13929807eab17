"""URL functions: resolution, normalization and the seen-set (pure, no Scrapy imports)."""

from discovery_crawler.urls.normalize import UrlError, normalize, resolve

__all__ = ["UrlError", "normalize", "resolve"]
