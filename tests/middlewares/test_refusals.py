"""The refusal middleware (``middlewares/refusals.py``) in-process on built responses; end
to end: ``tests/e2e/test_refusals.py``."""

from __future__ import annotations

import asyncio
from typing import Any

from scrapy import Request
from scrapy.http import HtmlResponse, Response
from scrapy.utils.test import get_crawler

from discovery_crawler.extensions.run import run_of
from discovery_crawler.middlewares.refusals import RefusalMiddleware
from tests.conftest import free_port, run_crawler
from tests.refusal_site import PDF, SHELL, SHORT

MW = "discovery_crawler.middlewares.refusals.RefusalMiddleware"
U = f"http://127.0.0.1:{free_port()}"  # nothing listens: never reached


# -- in process ------------------------------------------------------------------------------


def middleware(**settings: Any) -> RefusalMiddleware:
    return RefusalMiddleware.from_crawler(get_crawler(settings_dict=settings))


def respond(mw: RefusalMiddleware, request: Request, status=200, body=b"", ctype="text/html"):
    response = HtmlResponse if ctype == "text/html" else Response
    resp = response(request.url, status=status, body=body, headers={"Content-Type": ctype})
    return asyncio.run(mw.process_response(request=request, response=resp))


def test_only_page_fetches_are_classified():
    mw = middleware()
    robots = Request(f"{U}/robots.txt")
    assert respond(mw, robots, 404, b"nope", "text/plain").status == 404
    sitemap = Request(f"{U}/sitemap.pdf")
    respond(mw, sitemap, 200, PDF, "application/pdf")
    assert "refusal" not in robots.meta and "refusal" not in sitemap.meta
    assert mw.summary.total == 0


def test_refused_response_carries_the_record_and_reaches_the_spider():
    mw = middleware()
    meta = {"page_fetch": True, "found_on": f"{U}/", "anchor": "Gone", "depth": 1, "via": "link"}
    request = Request(f"{U}/gone", meta=meta)
    response = respond(mw, request, 404, b"<html>Not here</html>")
    assert response.status == 404
    assert request.meta["refusal"] == {
        "class": "missing",
        "url": f"{U}/gone",
        "status": 404,
        "reason": "404 Not Found",
        "final_url": None,
        "found_on": f"{U}/",
        "anchor": "Gone",
        "depth": 1,
        "via": "link",
    }
    # HttpErrorMiddleware lets it through without handle_httpstatus_all (which kills redirects)
    assert request.meta["handle_httpstatus_list"] == [404]
    assert mw.stats.get_value("refusals/missing") == 1


def test_a_page_passes_untouched():
    mw = middleware()
    request = Request(f"{U}/contact", meta={"page_fetch": True})
    respond(mw, request, 200, SHORT)
    assert "refusal" not in request.meta and mw.summary.total == 0


def test_auto_without_the_handler_reports_shells(caplog):
    mw = middleware(RENDER_MODE="auto")
    assert mw.render_mode == "never"
    assert "RENDER_MODE=auto but scrapy-playwright's download handler is not installed" in (
        caplog.text
    )
    request = Request(f"{U}/app/", meta={"page_fetch": True})
    assert isinstance(respond(mw, request, 200, SHELL), Response)
    assert request.meta["refusal"]["class"] == "shell"


def test_auto_requests_a_shell_again_through_the_browser_once():
    handler = "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"
    mw = middleware(RENDER_MODE="auto", DOWNLOAD_HANDLERS={"http": handler, "https": handler})
    request = Request(f"{U}/app/", meta={"page_fetch": True, "found_on": f"{U}/"})
    again = respond(mw, request, 200, SHELL)
    assert isinstance(again, Request) and again.dont_filter
    assert again.meta["playwright"] is True and again.meta["rendered"] is True
    assert again.meta["found_on"] == f"{U}/"
    # The rendered answer is what the spider sees, even if it is still empty.
    final = respond(mw, again, 200, SHELL)
    assert isinstance(final, Response) and "refusal" not in again.meta
    assert mw.summary.render == {"mode": "auto", "requested": 1, "rendered": 1}
    # A 404 is never rendered.
    gone = Request(f"{U}/gone", meta={"page_fetch": True})
    assert isinstance(respond(mw, gone, 404, SHELL), Response)
    assert gone.meta["refusal"]["class"] == "missing"


def test_failures_go_on_with_the_record_on_the_request():
    mw = middleware()
    request = Request(f"{U}/slow", meta={"page_fetch": True, "found_on": f"{U}/"})
    assert asyncio.run(mw.process_exception(request=request, exception=TimeoutError())) is None
    assert request.meta["refusal"]["class"] == "timeout"
    assert request.meta["refusal"]["found_on"] == f"{U}/"


def test_a_refusal_after_retries_says_how_many():
    """The retry middleware above (550) hands on what failed after its retries: a 5xx is
    a server_error, a refused connection a network refusal, each saying it was retried."""
    mw = middleware()
    down = Request(f"{U}/down", meta={"page_fetch": True, "retry_times": 5})
    respond(mw, down, 502, b"<html>Bad gateway</html>")
    assert down.meta["refusal"]["class"] == "server_error"
    assert down.meta["refusal"]["reason"] == "502 Bad Gateway: the server failed (after 5 retries)"
    gone = Request(f"{U}/gone", meta={"page_fetch": True, "retry_times": 1})
    asyncio.run(mw.process_exception(request=gone, exception=ConnectionRefusedError()))
    assert gone.meta["refusal"]["class"] == "network"
    assert gone.meta["refusal"]["reason"] == "connection refused (after 1 retry)"
    assert mw.summary.counts["server_error"] == mw.summary.counts["network"] == 1


def test_summary_goes_on_the_run_record():
    crawler = run_crawler()
    mw = RefusalMiddleware.from_crawler(crawler)
    record = run_of(crawler).record
    assert record.refusals is mw.summary
