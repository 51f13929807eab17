"""The refusal middleware: in-process on built responses, then end to end — a probe spider
run as ``scrapy runspider`` against a loopback site that refuses in every way, with and
without a real headless Chromium."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scrapy import Request
from scrapy.http import HtmlResponse, Response
from scrapy.utils.test import get_crawler

from discovery_crawler.extensions.run import run_of
from discovery_crawler.middlewares.refusals import RefusalMiddleware
from discovery_crawler.refusals import REFUSAL_CLASSES
from tests.conftest import ROOT, run_crawler
from tests.refusal_site import PDF, SHELL, SHORT, RefusalSite
from tests.test_rendering import require_browser

PROBE = ROOT / "tests" / "probes" / "refusal_probe.py"
MW = "discovery_crawler.middlewares.refusals.RefusalMiddleware"
U = "http://127.0.0.1:1"


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


def test_summary_goes_on_the_run_record():
    crawler = run_crawler()
    mw = RefusalMiddleware.from_crawler(crawler)
    record = run_of(crawler).record
    assert record.refusals is mw.summary


# -- end to end ------------------------------------------------------------------------------


@pytest.fixture
def site():
    with_closed_port = RefusalSite(extra_links=[_closed_port_url()], slow_seconds=4).start()
    yield with_closed_port
    with_closed_port.stop()


def _closed_port_url() -> str:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/closed"


def probe(site: RefusalSite, tmp_path: Path, render: str) -> tuple[dict, dict, str]:
    """Run the probe spider; return (items by URL, the summary, stderr)."""
    items_path, summary_path = tmp_path / "items.jsonl", tmp_path / "summary.json"
    cmd = [sys.executable, "-m", "scrapy", "runspider", str(PROBE)]
    cmd += ["-a", f"start={site.url()}", "-a", f"out={summary_path}", "-O", str(items_path)]
    cmd += ["-s", f"RENDER_MODE={render}"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    items: dict[str, dict] = {}
    for line in items_path.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        items[item["url"]] = item
    return items, json.loads(summary_path.read_text(encoding="utf-8")), proc.stderr


EXPECTED = {
    "/report": ("download", 200),
    "/export": ("download", 200),
    "/gone-404": ("missing", 404),
    "/gone-410": ("missing", 410),
    "/private": ("wall", 403),
    "/busy": ("wall", 429),
    "/legal": ("wall", 451),
    "/challenge": ("wall", 200),
    "/members/": ("login", 200),
    "/slow": ("timeout", None),
}
PAGES = ["/", "/short/", "/about-login/", "/next-ssr/", "/same-1", "/same-2", "/same-3"]


def refusals_by_path(items: dict, site: RefusalSite) -> dict[str, dict]:
    """Refusal records keyed by the path of the URL the crawl asked for."""
    out = {}
    for item in items.values():
        if item["refusal"]:
            out[item["refusal"]["url"].removeprefix(site.origin)] = item["refusal"]
    return out


def check_common(items: dict, summary: dict, site: RefusalSite) -> dict[str, dict]:
    refused = refusals_by_path(items, site)
    for path, (cls, status) in EXPECTED.items():
        assert (refused[path]["class"], refused[path]["status"]) == (cls, status), path
        assert refused[path]["found_on"] == site.url("/"), path
        assert refused[path]["anchor"] == f"link to {path}", path
    network = [r for p, r in refused.items() if p.endswith("/closed")]
    assert [r["class"] for r in network] == ["network"]
    for path in PAGES:
        assert items[site.url(path)]["refusal"] is None, path
    assert refused["/members/"]["final_url"] == site.url("/login?next=%2Fmembers%2F")
    assert refused["/private"]["reason"] == "403 Forbidden: access denied by the server"
    # the errback finds the record on failure.request.meta
    assert items[site.url("/slow")]["error"] == "DownloadTimeoutError"
    # 404 / 410 are fetched once: never rendered
    paths = site.paths()
    assert paths.count("/gone-404") == 1 and paths.count("/gone-410") == 1
    # identical content: one warning naming the three URLs
    [warning] = summary["identical_content"]
    assert sorted(warning["urls"]) == [site.url(f"/same-{i}") for i in (1, 2, 3)]
    assert set(summary["counts"]) == set(REFUSAL_CLASSES)
    assert summary["total"] == sum(summary["counts"].values()) == len(refused)
    return refused


def test_never_reports_the_shell_as_a_refusal(site, tmp_path):
    items, summary, stderr = probe(site, tmp_path, "never")
    refused = check_common(items, summary, site)
    assert refused["/app/"]["class"] == "shell"
    assert refused["/app/"]["reason"].startswith("JavaScript shell: 1 script(s), an app root")
    assert not any(p.startswith("/only-js-") for p in site.paths())
    assert summary["render"] == {"mode": "never", "requested": 0, "rendered": 0}
    assert "served byte-identical content (an interstitial?)" in stderr
    assert "Refusals (12): 2 download, 2 missing, 4 wall, 1 login, 1 shell" in stderr


def test_auto_renders_the_shell_and_finds_its_javascript_links(site, tmp_path):
    require_browser()
    items, summary, _ = probe(site, tmp_path, "auto")
    refused = check_common(items, summary, site)
    app = items[site.url("/app/")]
    assert app["refusal"] is None and app["rendered"] is True
    assert {site.url("/only-js-1"), site.url("/only-js-2")} <= set(app["links"])
    paths = site.paths()
    assert "/only-js-1" in paths and "/only-js-2" in paths  # the crawl followed them
    assert paths.count("/app/") == 2  # plain, then through the browser
    assert "/app/" not in refused and summary["counts"]["shell"] == 0
    assert summary["render"] == {"mode": "auto", "requested": 1, "rendered": 1}
    assert items[site.url("/short/")]["rendered"] is False  # only the shell went to the browser


def test_always_renders_every_page(site, tmp_path):
    require_browser()
    items, summary, _ = probe(site, tmp_path, "always")
    refused = refusals_by_path(items, site)
    assert items[site.url("/")]["rendered"] and items[site.url("/short/")]["rendered"]
    assert site.url("/only-js-1") in items[site.url("/app/")]["links"]
    assert site.paths().count("/app/") == 1
    assert refused["/gone-404"]["class"] == "missing"
    assert refused["/members/"]["class"] == "login"
    assert refused["/report"]["class"] == "download"
    assert summary["render"]["mode"] == "always"
