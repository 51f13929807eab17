"""``links``: a BFS link crawl from a homepage.

    scrapy crawl links -a url=https://example.com/ -a max_pages=500 -O pages.jsonl

Scrapy's scheduler is the frontier (FIFO queues, priority falling with depth); what
enters it, and the page records, come from the link crawl (``crawling/links.py``), which
``discover`` drives too for its ``links`` and ``union`` modes and its ``auto`` fallback.

A ``CrawlSpider`` because SPEC §2 names it the base of this spider; it uses none of its
machinery: the link crawl scans each page once for its record and its links
(``crawling/extract.py``), instead of a ``LinkExtractor`` per rule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from scrapy import signals
from scrapy.spiders import CrawlSpider

from discovery_crawler.arguments import ArgumentError
from discovery_crawler.crawling.links import LinkCrawl, crawl_settings
from discovery_crawler.spiders.base import (
    RunEntry,
    check_distributed,
    check_outputs,
    check_run_settings,
    distributed_settings,
    hold_run_folders,
    job_folder_of,
)
from discovery_crawler.urls.normalize import UrlError, origin_of

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from twisted.python.failure import Failure

    from discovery_crawler.arguments import RunOptions

_SETTINGS_IN_LOG = ("HOST_INTERVAL", "BFS_MAX_PAGES", "BFS_MAX_DEPTH", "CONCURRENT_REQUESTS")


class LinksSpider(RunEntry, CrawlSpider):
    """Crawl a site's links breadth-first and write one record per URL found."""

    name = "links"
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
        options = cls.parse_options(dict(spargs))
        check_run_settings(options, settings)
        check_distributed(cls.name, spargs, options, settings)
        check_outputs(options, settings, job_folder_of(options, settings))

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> Self:
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider._configure(crawler)
        crawler.signals.connect(spider._wire, signal=signals.spider_opened)
        return spider

    def _configure(self, crawler: Crawler) -> None:
        settings = crawler.settings
        self.apply_profile(self.options, settings)
        hold_run_folders(self.options, settings)  # JOBDIR moved by apply_profile
        crawl_settings(settings)
        distributed_settings(self.name, self.arguments, self.options, settings)
        check_run_settings(self.options, settings)
        self.describe_run(self.arguments, "links")

    def _wire(self) -> None:
        self.note_takeovers()
        self.links = self.run.links = LinkCrawl(
            self.crawler, self.run, on_page=self.parse_page, on_page_failure=self.page_failed
        )

    async def start(self) -> AsyncIterator[Any]:
        run = self.run
        try:
            seed = run.origins.normalize(self.options.url)
        except UrlError as exc:
            run.record.failure = f"start URL unusable: {exc}"
            return
        run.name_site(origin_of(seed))
        if self.options.input_kind != "homepage":
            seed = f"{run.record.site_origin}/"
            run.record.note(f"{self.options.url} is not a page; crawled from {seed}")
        yield self.links.seed_request(seed)

    # -- callbacks: each hands its response to the link crawl ---------------------------
    def parse_page(self, response: Response) -> Iterator[Any]:
        return self.links.parse_page(response)

    def page_failed(self, failure: Failure) -> Iterator[Any]:
        return self.links.page_failed(failure)
