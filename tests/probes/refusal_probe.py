"""A small spider for the refusal tests: follows links from a start page two hops deep,
marks every request a page fetch, and writes what it saw.

    scrapy runspider tests/probes/refusal_probe.py -a start=URL -a out=FILE -O items.jsonl

Each item: url, status, rendered, refusal (the record the middleware put in the meta, or
the one the errback found on ``failure.request.meta``), links. At close it writes the
middleware's summary, as the run's record has it (``record.refusals.as_dict()``) to ``out`` as JSON.
"""

from __future__ import annotations

import json
from pathlib import Path

import scrapy
from scrapy.http import TextResponse

from discovery_crawler.extensions.run import run_of


class RefusalProbe(scrapy.Spider):
    name = "refusal_probe"
    custom_settings = {  # noqa: RUF012 - Scrapy's own idiom
        "ITEM_PIPELINES": {},
        # A discovery run (extensions/run.py): the component puts its summary on its record.
        "EXTENSIONS": {"discovery_crawler.extensions.run.DiscoveryRun": 0},
        "DISCOVERY_RUN": {"arguments": {"url": "http://127.0.0.1/"}},
        # The project's feed exporters write UrlBatch items; this probe yields plain dicts.
        "FEED_EXPORTERS": {"jsonl": "scrapy.exporters.JsonLinesItemExporter"},
        "ADDONS": {"discovery_crawler.rendering.RenderAddon": 100},
        "DOWNLOADER_MIDDLEWARES": {
            "discovery_crawler.middlewares.refusals.RefusalMiddleware": 540,
        },
        "HOST_INTERVAL": 0,
        "DOWNLOAD_TIMEOUT": 2,
        "RETRY_TIMES": 0,
        "LOG_LEVEL": "INFO",
    }

    def __init__(self, start: str = "", out: str = "", max_depth: str = "2", **kwargs):
        super().__init__(**kwargs)
        self.start_url = start
        self.out = out
        self.max_depth = int(max_depth)

    async def start(self):
        yield scrapy.Request(self.start_url, meta={"page_fetch": True}, errback=self.failed)

    def parse(self, response):
        links: list[str] = []
        if isinstance(response, TextResponse):
            links = [response.urljoin(h) for h in response.css("a::attr(href)").getall()]
        refusal = response.meta.get("refusal")
        yield {
            "url": response.url,
            "status": response.status,
            "rendered": bool(response.meta.get("rendered")),
            "refusal": refusal,
            "links": links,
        }
        depth = response.meta.get("depth", 0)
        if refusal is not None or depth >= self.max_depth:
            return
        for a in response.css("a"):
            href = a.attrib.get("href")
            if not href:
                continue
            yield response.follow(
                href,
                errback=self.failed,
                meta={
                    "page_fetch": True,
                    "found_on": response.url,
                    "anchor": " ".join(a.css("::text").getall()).strip(),
                    "via": "link",
                },
            )

    def failed(self, failure):
        request = failure.request
        yield {
            "url": request.url,
            "status": None,
            "rendered": bool(request.meta.get("rendered")),
            "refusal": request.meta.get("refusal"),
            "error": type(failure.value).__name__,
            "links": [],
        }

    def closed(self, reason):
        summary = run_of(self.crawler).record.refusals
        if self.out:
            data = summary.as_dict() if summary is not None else None
            Path(self.out).write_text(json.dumps(data, indent=1), encoding="utf-8")
