"""``estimate``: the pre-flight scope estimate (SPEC §9) — robots.txt and the top sitemap
only, no recursion, a couple of seconds.

    scrapy crawl estimate -a url=https://example.com/ [-a out=DIR] [-a profile=massive] [-O e.jsonl]

The top sitemap is the first that parses as one of: the input URL (when it is a
sitemap), the sitemaps robots.txt advertises (in order), then the conventional addresses
(``SITEMAP_CONVENTIONAL_PATHS``). It is read to the end, counting (``ParseResult``) without
building records; its sub-sitemaps are counted, never fetched. The judgement (URL range,
languages, expected duration, transport) lives in ``discovery_crawler/estimate.py``.

Output: a short summary printed on stdout, ``estimate.json`` in the out folder (default
``./discovery/<host>/``), and, with ``-O``, one feed item with the same fields. Requests
go through the project's downloader middlewares (the robots policy answers robots.txt
from its one fetch; a fail-closed policy refuses the sitemap, which the record says).
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from scrapy import Request, Spider
from scrapy.utils.sitemap import sitemap_urls_from_robots

from discovery_crawler.arguments import (
    ArgumentError,
    check_url_length,
    default_out_dir,
    input_kind,
    validate_url,
)
from discovery_crawler.estimate import (
    Languages,
    expected_seconds,
    summary_lines,
    transport_for,
    url_range,
    verify_seconds,
)
from discovery_crawler.outcomes import FAILED, OUTPUT_FAILED
from discovery_crawler.profiles import available_profiles, load_profile
from discovery_crawler.refusals import describe_exception
from discovery_crawler.robots import request_origin
from discovery_crawler.run_record import now_iso
from discovery_crawler.sitemaps.body import SitemapBody, SitemapTooLarge
from discovery_crawler.sitemaps.parser import ParseResult, iter_sitemap_batches

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from twisted.python.failure import Failure

logger = logging.getLogger(__name__)

ESTIMATE_FILE = "estimate.json"
ARGUMENTS = ("url", "out", "profile")
_STOCK_EXPORTERS = {
    "jsonl": "scrapy.exporters.JsonLinesItemExporter",
    "jsonlines": "scrapy.exporters.JsonLinesItemExporter",
    "json": "scrapy.exporters.JsonItemExporter",
    "csv": "scrapy.exporters.CsvItemExporter",
}


def parse_arguments(args: dict[str, Any]) -> dict[str, str]:
    """Validate ``-a`` arguments (url, out, profile); raise ``ArgumentError`` on a bad one."""
    args = dict(args)
    options = {"url": validate_url(args.pop("url", None))}
    if "out" in args:
        out = str(args.pop("out")).strip()
        if not out:
            raise ArgumentError("out", "expected a folder path, got an empty value")
        options["out"] = out
    profile = str(args.pop("profile", "default")).strip().lower()
    profiles = available_profiles()
    if profile not in profiles:
        raise ArgumentError(
            "profile", f"{profile!r} is not a profile; expected one of {', '.join(profiles)}"
        )
    options["profile"] = profile
    unknown = sorted(k for k in args if not k.startswith("_"))  # _job etc.: Scrapyd's
    if unknown:
        raise ArgumentError(
            unknown[0], f"unknown argument; the estimate takes {', '.join(ARGUMENTS)}"
        )
    return options


class EstimateSpider(Spider):
    """Robots.txt + the top sitemap → URL range, sub-sitemaps, languages, duration, transport."""

    crawl_interval: float = 1.0  # the HOST_INTERVAL a crawl of this site would use

    name = "estimate"
    custom_settings: ClassVar[dict[str, Any]] = {
        "ITEM_PIPELINES": {},  # the item is the estimate, not a batch of URLs
        "FEED_EXPORTERS": _STOCK_EXPORTERS,
        "RETRY_TIMES": 0,  # a timeout is an answer here (transport browser)
        "DOWNLOAD_TIMEOUT": 10,
    }

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__()
        self.options = parse_arguments(kwargs)
        self.url = self.options["url"]
        self.out_dir = Path(self.options.get("out") or default_out_dir(self.url))
        self.estimate_path = self.out_dir / ESTIMATE_FILE
        self.origin = request_origin(self.url)
        self.robots: dict[str, Any] = {}
        self.answers: list[tuple[str, int | None, str | None]] = []
        self.attempts: list[dict[str, Any]] = []
        self.candidates: list[tuple[str, str]] = []  # (url, source), in order
        self.asked: set[str] = set()  # the candidates requested
        self.sitemap: dict[str, Any] | None = None
        self.advertised_unread = 0
        self.languages = Languages()
        self.started = time.monotonic()
        self.result: dict[str, Any] | None = None

    @staticmethod
    def validate_arguments(spargs: dict[str, Any], settings: Any) -> None:
        url = parse_arguments(spargs)["url"]
        check_url_length(url, settings.getint("URLLENGTH_LIMIT"))

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> Self:
        spider = super().from_crawler(crawler, *args, **kwargs)
        settings = crawler.settings
        check_url_length(spider.url, settings.getint("URLLENGTH_LIMIT"))
        if not settings.frozen:
            settings.setdict(load_profile(spider.options["profile"]), priority="spider")
            # The SSRF guard's same-origin rule holds the estimate's requests to the input's
            # origin too (no discovery run names it to the guard).
            settings.set("SSRF_SITE", spider.url, priority="spider")
            # The expected duration uses the crawl's interval; the estimate's own two or
            # three requests are paced by ESTIMATE_HOST_INTERVAL when that is shorter, so it
            # answers within SPEC §9's "≤ 2 s typical".
            spider.crawl_interval = settings.getfloat("HOST_INTERVAL")
            own = min(spider.crawl_interval, settings.getfloat("ESTIMATE_HOST_INTERVAL", 0.25))
            settings.set("HOST_INTERVAL", own, priority="spider")
        else:
            spider.crawl_interval = settings.getfloat("HOST_INTERVAL")
        return spider

    # -- requests -----------------------------------------------------------------------
    async def start(self) -> AsyncIterator[Any]:
        kind = input_kind(self.url)
        robots_url = self.url if kind == "robots" else self.origin + "/robots.txt"
        if kind == "sitemap":
            self.candidates.append((self.url, "input"))
        self.robots = {"url": robots_url, "status": None, "error": None, "sitemaps": []}
        yield Request(
            robots_url,
            callback=self.parse_robots,
            errback=self.robots_failed,
            dont_filter=True,
            meta={"handle_httpstatus_all": True},
        )

    def parse_robots(self, response: Response) -> Iterator[Any]:
        self.robots["status"] = response.status
        self.answers.append(("robots.txt", response.status, None))
        policy = response.meta.get("robots_policy")
        if policy is not None:
            self.robots["policy"] = policy.outcome
        if response.status == 200:  # bytes: Scrapy deprecates a str robots_text
            self.robots["sitemaps"] = list(
                sitemap_urls_from_robots(response.body, base_url=response.url)
            )
        for url in self.robots["sitemaps"]:
            self._add_candidate(url, "robots")
        yield from self._next()

    def robots_failed(self, failure: Failure) -> Iterator[Any]:
        kind, message = describe_exception(failure.value)
        self.robots["error"] = f"{kind}: {message}"
        self.answers.append(("robots.txt", None, kind))
        yield from self._next()

    def _add_candidate(self, url: str, source: str) -> None:
        if all(url != known for known, _ in self.candidates):
            self.candidates.append((url, source))

    def _next(self) -> Iterator[Any]:
        """The next sitemap address to try, or the estimate when done."""
        if not any(source == "conventional" for _, source in self.candidates):
            for path in self.settings.getlist("SITEMAP_CONVENTIONAL_PATHS"):
                self._add_candidate(self.origin + path, "conventional")
        for url, source in self.candidates:
            # each candidate asked once: an attempt records the request's URL, which Scrapy
            # may have normalized (``%25`` in a zone id), so it is not what was listed —
            # matching on it re-asked a hostile robots.txt's line forever
            if url not in self.asked:
                self.asked.add(url)
                yield Request(
                    url,
                    callback=self.parse_sitemap,
                    errback=self.sitemap_failed,
                    dont_filter=True,
                    meta={"handle_httpstatus_all": True, "estimate_source": source},
                )
                return
        yield self._finish()

    def parse_sitemap(self, response: Response) -> Iterator[Any]:
        source = response.meta["estimate_source"]
        url = response.request.url if response.request else response.url
        attempt: dict[str, Any] = {"url": url, "source": source, "status": response.status}
        self.attempts.append(attempt)
        self.answers.append((f"sitemap {url}", response.status, None))
        if response.status != 200:
            attempt["error"] = f"HTTP {response.status}"
            yield from self._next()
            return
        result = ParseResult()
        languages = Languages()
        max_bytes = self.settings.getint("SITEMAP_MAX_BYTES")
        try:
            for batch in iter_sitemap_batches(
                SitemapBody(response.body, max_bytes),
                result,
                1000,
                max_bytes,
                # what discover would read of the file
                max_entries=self.settings.getint("SITEMAP_MAX_URLS_PER_FILE"),
            ):
                for entry in batch:
                    languages.add_url(entry[0])
                    if len(entry) > 4 and entry[4]:
                        languages.add_alternates(entry[4])
        except SitemapTooLarge as exc:
            result.problem = str(exc)
        except Exception as exc:  # a broken document is an answer, not a crash
            result.problem = f"{type(exc).__name__}: {exc}"
        for child in result.children:
            languages.add_url(child)
        attempt.update(format=result.format, urls=result.urls, sub_sitemaps=len(result.children))
        if result.capped:
            attempt["capped"] = (
                f"read its first {result.capped:,} entries (SITEMAP_MAX_URLS_PER_FILE)"
            )
        if result.problem:
            attempt["problem"] = result.problem
        if not result.urls and not result.children:
            attempt["error"] = f"not a sitemap ({result.format})"
            yield from self._next()
            return
        latency = response.meta.get("download_latency") or 0.0
        self.sitemap = {
            "url": url,
            "source": source,
            "format": result.format,
            "urls": result.urls,
            "sub_sitemaps": len(result.children),
            "gzipped": result.gzipped,
            "decompressed_bytes": result.decompressed_bytes,
            "fetch_seconds": round(latency, 3),
            "problem": result.problem,
        }
        self.languages = languages
        advertised = self.robots.get("sitemaps") or []
        self.advertised_unread = len([s for s in advertised if s != url])
        yield self._finish()

    def sitemap_failed(self, failure: Failure) -> Iterator[Any]:
        request = failure.request  # type: ignore[attr-defined]
        kind, message = describe_exception(failure.value)
        url = request.url
        self.attempts.append(
            {
                "url": url,
                "source": request.meta.get("estimate_source"),
                "status": None,
                "error": f"{kind}: {message}",
            }
        )
        self.answers.append((f"sitemap {url}", None, kind))
        yield from self._next()

    # -- the estimate -------------------------------------------------------------------
    def build(self) -> dict[str, Any]:
        """The estimate record (``estimate.json``), see ``discovery_crawler/estimate.py``."""
        settings = self.settings
        host_interval = self.crawl_interval
        concurrency = settings.getint("SITEMAP_CONCURRENCY")
        rate = settings.getfloat("ESTIMATE_URLS_PER_SECOND", 50_000)
        transport, reason = transport_for(self.answers)
        sitemap = self.sitemap
        urls: list[int] | None = None
        exact = False
        basis = "no sitemap found"
        duration = None
        verify = None
        if sitemap is not None:
            subs = sitemap["sub_sitemaps"]
            low, high, exact = url_range(sitemap["urls"], subs, self.advertised_unread)
            urls = [low, high]
            if exact:
                basis = f"{sitemap['format']} of {sitemap['urls']:,} URLs"
            else:
                parts = []
                if subs:
                    parts.append(f"index of {subs:,} sub-sitemaps")
                if self.advertised_unread:
                    parts.append(f"{self.advertised_unread:,} more advertised sitemaps not read")
                if sitemap["urls"]:
                    parts.append(f"{sitemap['urls']:,} URLs listed")
                basis = "; ".join(parts) + " × 1,000–50,000 URLs each"
            documents = 2 + subs + self.advertised_unread
            duration = [
                round(
                    expected_seconds(
                        n, documents, host_interval, concurrency, sitemap["fetch_seconds"], rate
                    ),
                    1,
                )
                for n in urls
            ]
            verify = [round(verify_seconds(n, host_interval), 1) for n in urls]
        return {
            "url": self.url,
            "site": self.origin,
            "measured_at": now_iso(),
            "elapsed_seconds": round(time.monotonic() - self.started, 3),
            "profile": self.options["profile"],
            "robots": self.robots,
            "attempts": self.attempts,
            "sitemap": sitemap,
            "urls": urls,
            "exact": exact,
            "basis": basis,
            "sub_sitemaps": sitemap["sub_sitemaps"] if sitemap else 0,
            "advertised_unread": self.advertised_unread,
            "languages": self.languages.codes(),
            "language_evidence": self.languages.as_dict(),
            "duration_seconds": duration,
            "verify_seconds": verify,
            "duration_basis": {
                "HOST_INTERVAL": host_interval,
                "SITEMAP_CONCURRENCY": concurrency,
                "ESTIMATE_URLS_PER_SECOND": rate,
                "formula": "documents × max(HOST_INTERVAL, fetch_seconds / SITEMAP_CONCURRENCY)"
                " + urls / ESTIMATE_URLS_PER_SECOND",
            },
            "transport": transport,
            "transport_reason": reason,
        }

    def _finish(self) -> dict[str, Any]:
        """Build, write and print the estimate once; the returned dict is the feed item."""
        if self.result is None:
            self.result = self.build()
            if self.answers and all(status is None for _, status, _ in self.answers):
                # nothing of the site answered: no estimate, a failed run (exit 1)
                self.crawler.stats.set_value("discovery/outcome", FAILED)
            self._write(self.result)
        return self.result

    def _write(self, result: dict[str, Any]) -> None:
        lines = summary_lines(result)
        try:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            temporary = self.estimate_path.with_suffix(".json.tmp")
            temporary.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
            os.replace(temporary, self.estimate_path)
            lines.append(f"  written: {self.estimate_path}")
        except OSError as exc:
            logger.error("OUTPUT FAILED: could not write %s: %s", self.estimate_path, exc)
            self.crawler.stats.set_value("discovery/outcome", OUTPUT_FAILED)  # exit 4
        print("\n".join(lines), flush=True)
        logger.info("Estimate\n%s", "\n".join(lines))

    def closed(self, reason: str) -> None:
        if self.result is None:  # stopped before an answer (shutdown): say what is known
            self._finish()
