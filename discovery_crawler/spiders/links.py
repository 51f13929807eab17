"""``links``: a BFS link crawl from a homepage (SPEC §2: the ``CrawlSpider`` subclass).

    scrapy crawl links -a url=https://example.com/ -a max_pages=500 -O pages.jsonl

Scrapy's scheduler is the frontier (FIFO queues, priority falling with depth); what
enters it, and the page records, come from ``crawling.links.LinkCrawler``, which
``discover`` shares for its ``links`` and ``union`` modes and its ``auto`` fallback.
CrawlSpider's structure is kept — every page goes through ``parse_with_rules``, which
calls ``parse_start_url`` (the page's record) then ``_requests_to_follow`` (its new
links) — but both come from one scan of the page, not from a ``LinkExtractor``
(``crawling/extract.py`` says why, with numbers).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from scrapy import signals
from scrapy.spiders import CrawlSpider, Rule

from discovery_crawler.arguments import ArgumentError
from discovery_crawler.crawling.links import LinkCrawler, crawl_settings
from discovery_crawler.spiders.base import RunEntry, check_feed_formats
from discovery_crawler.urls.normalize import UrlError, origin_of

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from discovery_crawler.arguments import RunOptions
    from discovery_crawler.run_record import RunRecord
    from discovery_crawler.urls.normalize import OriginCache

_SETTINGS_IN_LOG = ("HOST_INTERVAL", "BFS_MAX_PAGES", "BFS_MAX_DEPTH", "CONCURRENT_REQUESTS")


class LinksSpider(RunEntry, LinkCrawler, CrawlSpider):
    """Crawl a site's links breadth-first and write one record per URL found."""

    name = "links"
    # One rule: every page is parsed and followed (the link extractor is LinkCrawler's).
    rules = (Rule(follow=True),)
    settings_in_log: ClassVar[dict[str, str]] = dict.fromkeys(_SETTINGS_IN_LOG, "get")

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__()
        self.arguments = kwargs
        self.options = self.parse_options(kwargs)

    @classmethod
    def check_options(cls, options: RunOptions) -> None:
        if options.mode not in ("auto", "links"):
            raise ArgumentError(
                "mode", f"the links spider crawls links only; use discover for mode={options.mode}"
            )

    @classmethod
    def validate_arguments(cls, spargs: dict[str, Any], settings: Any) -> None:
        """Check ``-a`` arguments and feed formats before a crawler is built."""
        cls.parse_options(dict(spargs))
        check_feed_formats(settings.getdict("FEEDS"))

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> Self:
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider._configure(crawler)
        crawler.signals.connect(spider._wire, signal=signals.spider_opened)
        return spider

    @property
    def record(self) -> RunRecord:
        return self.run.record

    @property
    def origins(self) -> OriginCache:
        return self.run.origins

    def _configure(self, crawler: Crawler) -> None:
        settings = crawler.settings
        self.apply_profile(self.options, settings)
        crawl_settings(settings)
        check_feed_formats(settings.getdict("FEEDS"))
        self.describe_run(self.arguments, "links")

    def _wire(self, spider: Any = None) -> None:
        self.setup_link_crawl(self.crawler.settings)
        self.run.links = self

    def page_callback(self) -> Any:
        return self._parse  # CrawlSpider: parse_with_rules → parse_start_url + follow

    async def start(self) -> AsyncIterator[Any]:
        try:
            seed = self.origins.normalize(self.options.url)
        except UrlError as exc:
            self.record.failure = f"start URL unusable: {exc}"
            return
        self.run.name_site(origin_of(seed))
        if self.options.input_kind != "homepage":
            seed = self.record.site_origin + "/"
            self.record.note(f"{self.options.url} is not a page; crawled from {seed}")
        yield self.seed_request(seed)

    # -- CrawlSpider hooks: one scan of the page serves both ------------------------------
    def parse_start_url(self, response: Response, **kwargs: Any) -> Any:
        batch, requests = self.page_outputs(response)
        response.meta["_follow"] = requests
        return [batch] if batch is not None else []

    def _requests_to_follow(self, response: Response) -> Iterable[Request | None]:
        return response.meta.pop("_follow", ())
