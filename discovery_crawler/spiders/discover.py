"""``discover``: from a homepage, a sitemap or a robots.txt URL to an inventory of URLs.

The entry point of a discovery run: it checks the ``-a`` arguments, applies the profile,
describes the run for its owner (``extensions/run.py``), and drives the components that
do the work — the sitemap walk (``crawling/walk.py``), the link crawl
(``crawling/links.py``) and the verifier of listed pages (``crawling/verify.py``). Its
callbacks only hand responses to them: a request names a spider method, which a disk or
Redis queue needs.

Modes (SPEC §3): ``sitemap`` walks sitemaps only; ``auto`` too, and falls back to a BFS
link crawl from the homepage when no sitemap yielded a page of the site (decided when the
walk is idle, so every batch has been through the pipelines); ``links`` crawls links only;
``union`` does both: sitemap URLs enter the crawl at depth 1 (``pipelines/union.py``)
while links are followed from the homepage. ``-a verify=1`` also fetches the listed pages.

A ``SitemapSpider`` because SPEC §2 names it the base of this spider; it uses none of its
machinery (its own parser, batches instead of one item per ``<loc>``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from scrapy import signals
from scrapy.exceptions import DontCloseSpider
from scrapy.spiders import SitemapSpider

from discovery_crawler.crawling.links import LinkCrawl, crawl_settings
from discovery_crawler.crawling.verify import ListedPageVerifier, verify_method
from discovery_crawler.crawling.walk import SitemapWalk
from discovery_crawler.extensions.run import run_mode, unify_site_origin
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

# The settings the crawl log records (HOST_INTERVAL as a float, the others as ints).
_SETTINGS_IN_LOG = (
    "SITEMAP_CONCURRENCY",
    "SITEMAP_MAX_DOCUMENTS",
    "SITEMAP_MAX_URLS",
    "SITEMAP_MAX_URLS_PER_FILE",
    "SITEMAP_MAX_DEPTH",
    "SITEMAP_MAX_BYTES",
    "DISCOVERY_BATCH_SIZE",
)


class DiscoverSpider(RunEntry, SitemapSpider):
    """Discover a site's URLs from robots.txt, sitemaps and links; write an explained
    inventory."""

    name = "discover"
    settings_in_log: ClassVar[dict[str, str]] = {
        "HOST_INTERVAL": "getfloat",
        **dict.fromkeys(_SETTINGS_IN_LOG, "getint"),
    }

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__()
        self.arguments = kwargs
        self.options = self.parse_options(kwargs)
        self._fell_back = False

    @classmethod
    def validate_arguments(cls, spargs: dict[str, Any], settings: Any) -> None:
        """Check ``-a`` arguments and feed formats before a crawler is built."""
        options = cls.parse_options(dict(spargs))
        check_run_settings(options, settings)
        if options.verify:
            verify_method(settings)
        check_distributed(cls.name, spargs, options, settings)
        check_outputs(options, settings, job_folder_of(options, settings))

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> Self:
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider._configure(crawler)
        crawler.signals.connect(spider._wire, signal=signals.spider_opened)
        crawler.signals.connect(spider.spider_idle, signal=signals.spider_idle)
        return spider

    # -- set-up -----------------------------------------------------------------------
    def _configure(self, crawler: Crawler) -> None:
        """Settings, before they are frozen: the profile, the mode's scheduling."""
        settings = crawler.settings
        self.apply_profile(self.options, settings)
        hold_run_folders(self.options, settings)  # JOBDIR moved by apply_profile
        self.mode = run_mode(self.options, settings)  # a profile may pick it (polite: union)
        settings.set(
            "CONCURRENT_REQUESTS_PER_DOMAIN",
            settings.getint("SITEMAP_CONCURRENCY"),
            priority="spider",
        )
        if self.mode != "sitemap":
            crawl_settings(settings)
        distributed_settings(self.name, self.arguments, self.options, settings)
        check_run_settings(self.options, settings)
        self.describe_run(self.arguments, self.mode)

    def _wire(self) -> None:
        """Once the run exists (extensions are built before the spider opens): the
        components this spider drives, and which of them the stages may call."""
        run, crawler = self.run, self.crawler
        self.note_takeovers()
        union = self.mode == "union"
        if self.mode != self.options.mode:
            run.record.note(f"profile {self.options.profile} runs mode={self.mode}")
        self.walk = SitemapWalk(
            crawler,
            run,
            on_robots=self.parse_robots,
            on_robots_failure=self.robots_failed,
            on_sitemap=self.parse_sitemap,
            on_sitemap_failure=self.sitemap_failed,
        )
        self.links = run.links = LinkCrawl(
            crawler, run, on_page=self.parse_page, on_page_failure=self.page_failed, union=union
        )
        if union:  # a listed URL is cited by its sitemap: links wait for the walk
            self.links.walk_over = self.walk.over
        if self.options.verify:
            run.verifier = ListedPageVerifier(
                crawler,
                run,
                self.links,
                on_answer=self.verify_answer,
                on_failure=self.verify_failed,
                union=union,
            )

    # -- start --------------------------------------------------------------------------
    async def start(self) -> AsyncIterator[Any]:
        run, walk, links = self.run, self.walk, self.links
        try:
            start = run.origins.normalize(self.options.url)
        except UrlError as exc:
            run.record.failure = f"start URL unusable: {exc}"
            return
        if self.mode == "links":
            run.name_site(origin_of(start))
            yield links.seed_request(links.seed_for(start))
            return
        walk.start_worker_early()
        if self.options.input_kind == "sitemap":
            # The site is the host of the sitemap's first URL (the normalize stage names it).
            unify_site_origin(run.origins, origin_of(start))
            request = walk.input_request(start)
            if request is not None:
                yield request
            return
        run.name_site(origin_of(start))
        if self.mode == "union":
            yield links.seed_request(links.seed_for(start))
        site = run.record.site_origin
        request = walk.robots_request(
            start if self.options.input_kind == "robots" else f"{site}/robots.txt"
        )
        if request is not None:  # (None: handed to a distributed job)
            yield request

    def spider_idle(self) -> None:
        """``auto``: when the sitemap walk is over and listed no page of the site, crawl
        links from the homepage instead (SPEC §4 step 4)."""
        record = self.run.record
        if (
            self.mode != "auto"
            or self._fell_back
            or self.options.input_kind == "sitemap"
            or record.failure
            or not record.site_origin
        ):
            return
        why = self.walk.found_no_page()
        if why is None:
            return
        self._fell_back = True
        seed = self.links.seed_for(self.run.origins.normalize(self.options.url))
        record.note(f"{why}; fell back to a BFS link crawl from {seed}")
        self.crawler.stats.set_value("discovery/fallback", "links")
        self.crawler.engine.crawl(self.links.seed_request(seed))
        raise DontCloseSpider

    # -- callbacks: each hands its response to the component that asked -----------------
    # The walk's callbacks end with what the link crawl may admit once the walk is over.
    def parse_robots(self, response: Response) -> Iterator[Any]:
        yield from self.walk.parse_robots(response)
        yield from self.links.release()

    def robots_failed(self, failure: Failure) -> Iterator[Any]:
        yield from self.walk.robots_failed(failure)
        yield from self.links.release()

    async def parse_sitemap(self, response: Response) -> AsyncIterator[Any]:
        async for output in self.walk.parse(response):
            yield output
        for output in self.links.release():
            yield output

    def sitemap_failed(self, failure: Failure) -> Iterator[Any]:
        self.walk.failed(failure)
        yield from self.links.release()

    def parse_page(self, response: Response) -> Iterator[Any]:
        return self.links.parse_page(response)

    def page_failed(self, failure: Failure) -> Iterator[Any]:
        return self.links.page_failed(failure)

    def verify_answer(self, response: Response) -> Iterator[Any]:
        return self.run.verifier.verify_answer(response)

    def verify_failed(self, failure: Failure) -> Iterator[Any]:
        return self.run.verifier.verify_failed(failure)

    def closed(self, reason: str) -> None:
        self.walk.close()
