"""Classify page fetches that yield no page, and render JavaScript shells (SPEC §11, §3).

A thin downloader middleware over ``discovery_crawler.refusals``. It only looks at **page
fetches**: requests whose meta has ``page_fetch = True`` (the link crawler sets it; robots.txt
and sitemap requests do not, so a robots.txt served as text/plain is never a "download").

What the spider gets (meta keys):

- ``meta["refusal"]``: the refusal record (a dict: ``class``, ``url``, ``status``,
  ``reason``, ``final_url``, ``found_on``, ``anchor``, ``depth``, ``via``) on a refused
  response, which is passed on to the callback. The refused status is added to the
  request's ``handle_httpstatus_list`` so ``HttpErrorMiddleware`` lets a 404 or 403 through
  even when the spider did not ask for every status. (Do not put ``handle_httpstatus_all``
  in page requests' meta: it also turns ``RedirectMiddleware`` off, and a login redirect can
  then no longer be seen; ``HTTPERROR_ALLOW_ALL`` or this middleware's pass-through do not.)
- On a timeout or network failure the record is put on ``request.meta["refusal"]`` and the
  exception goes on (retries happen first: this middleware sits below the retry
  middleware, ``middlewares/retry.py``). The spider's errback finds it as
  ``failure.request.meta["refusal"]``. A refusal of a request that was retried says so:
  its reason ends ``(after N retries)``.
- ``meta["rendered"] = True`` on a response that came through the browser.
- A page fetch with ``meta["api_probe"]`` (an ``/api/…`` path the link crawl fetches to learn
  whether it is a page) that answers JSON, XML or another non-HTML body is no ``download``
  refusal: it is an API endpoint, and the spider records it as kind ``api``.

Rendering (``RENDER_MODE``, see ``discovery_crawler.rendering``): ``auto`` fetches a response
classified ``shell`` once more through the browser (``meta["playwright"] = True``) and the
spider sees the rendered page; ``always`` sends every page fetch through the browser up front;
``never`` (or no browser) reports a shell as a ``shell`` refusal. A 404 / 410 is never
rendered again.

Stats: ``refusals/<class>``, ``refusals/identical_content``, ``render/requested``,
``render/rendered``. Summary: ``RefusalSummary`` on ``self.summary``, also the run's
``record.refusals`` (``extensions/run.py``) when there is a run. Each refusal is also sent
as the ``page_refused`` signal (``signals.py``: the run's timeline counts them per host).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured

from discovery_crawler.extensions.run import run_of
from discovery_crawler.refusals import (
    IdenticalContentTracker,
    Refusal,
    RefusalSummary,
    classify_failure,
    classify_response,
)
from discovery_crawler.rendering import rendering_installed
from discovery_crawler.signals import page_refused

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

PAGE_FETCH = "page_fetch"
# An ``/api/…`` path fetched to learn its kind (``kinds.fetch_decides``): a non-HTML answer
# makes it kind ``api``, not a ``download`` refusal.
API_PROBE = "api_probe"
_HEADERS = ("Content-Type", "Content-Disposition", "Retry-After", "cf-mitigated", "Server")


class RefusalMiddleware:
    """Give every refused page fetch one refusal class; render shells when asked."""

    def __init__(self, crawler: Crawler):
        settings = crawler.settings
        if not settings.getbool("REFUSALS_ENABLED", True):
            raise NotConfigured
        self.crawler = crawler
        self.stats = crawler.stats
        self.summary = RefusalSummary(settings.getint("CRAWL_LOG_LIST_CAP", 1000))
        self.identical = IdenticalContentTracker(
            threshold=settings.getint("REFUSALS_IDENTICAL_URLS", 3)
        )
        self.summary.identical_content = self.identical.warnings
        requested = str(settings.get("RENDER_MODE") or "never").strip().lower()
        self.render_mode = "never"
        if requested in ("auto", "always"):
            if rendering_installed(settings):
                self.render_mode = requested
            elif not (settings.getdict("RENDER_PLAN") or {}).get("note"):
                # RenderAddon already said why when it downgraded; otherwise say it here.
                logger.warning(
                    "RENDER_MODE=%s but scrapy-playwright's download handler is not installed "
                    "(add discovery_crawler.rendering.RenderAddon to ADDONS); JavaScript "
                    "shells are reported as refusals",
                    requested,
                )
        self.summary.render["mode"] = self.render_mode
        run = run_of(crawler)
        if run is not None:  # the crawl log's refusals
            run.record.refusals = self.summary
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def spider_closed(self) -> None:
        if line := self.summary.line():
            logger.info(line)

    async def process_request(self, request: Request) -> None:
        meta = request.meta
        if self.render_mode == "always" and meta.get(PAGE_FETCH) and not meta.get("playwright"):
            meta["playwright"] = True
            meta["rendered"] = True
            self.stats.inc_value("render/requested")
            self.summary.render["requested"] += 1
        return None

    async def process_response(self, request: Request, response: Response) -> Request | Response:
        meta = request.meta
        if not meta.get(PAGE_FETCH):
            return response
        rendered = bool(meta.get("rendered"))
        headers = {name: _text(response.headers.get(name)) for name in _HEADERS}
        refusal = classify_response(
            response.url,
            response.status,
            headers,
            response.body,
            meta.get("redirect_urls"),
            rendered=rendered,
        )
        if (
            refusal is not None
            and refusal.refusal_class == "shell"
            and self.render_mode == "auto"
            and not rendered
        ):
            # Once, through the browser; the spider sees the rendered page instead.
            self.stats.inc_value("render/requested")
            self.summary.render["requested"] += 1
            logger.debug("Rendering %s: %s", response.url, refusal.reason)
            return request.replace(
                meta={**meta, "playwright": True, "rendered": True}, dont_filter=True
            )
        if rendered:
            self.stats.inc_value("render/rendered")
            self.summary.render["rendered"] += 1
        if 200 <= response.status < 300 and (
            refusal is None or refusal.refusal_class != "download"
        ):
            warning = self.identical.add(response.url, response.body)
            if warning is not None:
                self.stats.inc_value("refusals/identical_content")
                logger.warning(warning["message"])
        if refusal is None:
            return response
        if refusal.refusal_class == "download" and meta.get(API_PROBE):
            return response  # an /api/ path that answered JSON or XML: an endpoint, not a page
        refusal.cite(meta)
        _after_retries(refusal, meta)
        record = refusal.as_dict()
        meta["refusal"] = record
        allowed = meta.get("handle_httpstatus_list") or ()
        if not 200 <= response.status < 300 and response.status not in allowed:
            meta["handle_httpstatus_list"] = [*allowed, response.status]
        self._count(request, record)
        return response

    async def process_exception(self, request: Request, exception: Exception) -> None:
        if not request.meta.get(PAGE_FETCH):
            return None
        refusal = classify_failure(request.url, exception)
        if refusal is None:
            return None
        if request.meta.get("rendered"):
            refusal.reason += " (in the browser)" if "browser" not in refusal.reason else ""
        refusal.cite(request.meta)
        _after_retries(refusal, request.meta)
        record = refusal.as_dict()
        request.meta["refusal"] = record
        self._count(request, record)
        return None  # the exception goes on to the spider's errback

    def _count(self, request: Request, record: dict[str, Any]) -> None:
        self.stats.inc_value(f"refusals/{record['class']}")
        self.summary.add(record)
        self.crawler.signals.send_catch_log(signal=page_refused, request=request, refusal=record)
        logger.debug("Refused (%s) %s: %s", record["class"], record["url"], record["reason"])


def _after_retries(refusal: Refusal, meta: dict[str, Any]) -> None:
    retries = meta.get("retry_times")
    if retries:
        refusal.reason += f" (after {retries} {'retry' if retries == 1 else 'retries'})"


def _text(value: bytes | str | None) -> str:
    if value is None:
        return ""
    return value.decode("latin-1") if isinstance(value, bytes) else str(value)
