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

from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy.spiders import CrawlSpider, Rule

from discovery_crawler.arguments import ArgumentError, RunOptions
from discovery_crawler.crawling.links import (
    LinkCrawler,
    check_budget_limits,
    crawl_settings,
    unify_site_origin,
)
from discovery_crawler.output.crawl_log import CRAWL_LOG_NAME
from discovery_crawler.profiles import available_profiles, load_profile
from discovery_crawler.run_record import RunRecord
from discovery_crawler.spiders.discover import check_feed_formats, default_out_dir
from discovery_crawler.urls.normalize import OriginCache, UrlError, origin_of

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

_SETTINGS_IN_LOG = ("HOST_INTERVAL", "BFS_MAX_PAGES", "BFS_MAX_DEPTH", "CONCURRENT_REQUESTS")


class LinksSpider(LinkCrawler, CrawlSpider):
    """Crawl a site's links breadth-first and write one record per URL found."""

    name = "links"
    # One rule: every page is parsed and followed (the link extractor is LinkCrawler's).
    rules = (Rule(follow=True),)

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__()
        self.options = self.parse_options(kwargs)
        self.origins = OriginCache()
        self.out_dir = (
            Path(self.options.out) if self.options.out else default_out_dir(self.options.url)
        )
        self.crawl_log_path = self.out_dir / CRAWL_LOG_NAME

    @staticmethod
    def parse_options(kwargs: dict[str, Any]) -> RunOptions:
        options = RunOptions.from_arguments(kwargs, available_profiles())
        if options.mode not in ("auto", "links"):
            raise ArgumentError(
                "mode", f"the links spider crawls links only; use discover for mode={options.mode}"
            )
        check_budget_limits(options, load_profile(options.profile))
        return options

    @classmethod
    def validate_arguments(cls, spargs: dict[str, Any], settings: Any) -> None:
        """Check ``-a`` arguments and feed formats before a crawler is built."""
        cls.parse_options(dict(spargs))
        check_feed_formats(settings.getdict("FEEDS"))

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> Self:
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider._configure(crawler)
        return spider

    def _configure(self, crawler: Crawler) -> None:
        settings = crawler.settings
        if not settings.frozen:
            settings.setdict(load_profile(self.options.profile), priority="spider")
            crawl_settings(settings)
        check_feed_formats(settings.getdict("FEEDS"))
        recorded = {name: settings.get(name) for name in _SETTINGS_IN_LOG}
        self.record = RunRecord(self.options, recorded, settings.getint("CRAWL_LOG_LIST_CAP"))
        self.setup_link_crawl(settings)

    def page_callback(self) -> Any:
        return self._parse  # CrawlSpider: parse_with_rules → parse_start_url + follow

    async def start(self) -> AsyncIterator[Any]:
        try:
            seed = self.origins.normalize(self.options.url)
        except UrlError as exc:
            self.record.failure = f"start URL unusable: {exc}"
            return
        self.record.site_origin = origin_of(seed)
        unify_site_origin(self.origins, self.record.site_origin)
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

    # -- end of run ---------------------------------------------------------------------
    def site_found(self, origin: str) -> None:  # the normalize stage's hook (sitemaps only)
        unify_site_origin(self.origins, origin)

    def finalize_record(self, reason: str | None = None) -> None:
        """Judge the run once everything is in (idempotent)."""
        record = self.record
        if not record.start_judging(reason):
            return
        if not record.failure and not self.link_crawl.fetched:
            refusals = self.link_crawl.refusals.items
            why = refusals[0].get("reason") if refusals else "no response"
            record.failure = f"site unreachable: {why}"
        if record.failure:
            self.crawler.stats.set_value("discovery/failed", record.failure)
        for raw, to in self.origins.rewritten.items():
            record.note(f"URLs on {raw} were rewritten to {to} (the form fetched or passed wins)")
