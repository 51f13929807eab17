"""report.html end to end: a real ``scrapy crawl discover`` (and ``links``) writes it, a setting
turns it off, and headless Chromium opens it from file:// with every network request recorded."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from discovery_crawler.output.report import (
    REPORT_NAME,
)
from discovery_crawler.rendering import LAUNCH_ARGS
from tests.conftest import FIXTURES
from tests.output.test_report import scripts_and_handlers
from tests.test_rendering import require_browser


def crawl_fixture_site(serve, discover):
    server = serve(FIXTURES / "report" / "site", rewrite=["https://example.com"])
    result = discover(server.url("/"), "-a", "mode=union")
    assert result.returncode == 0, result.stderr[-3000:]
    return server, result


def test_discover_writes_the_report_next_to_the_crawl_log(serve, discover):
    _server, result = crawl_fixture_site(serve, discover)
    report = result.out / REPORT_NAME
    assert report.exists()
    assert f"Report: {report}" in result.stderr  # the summary names it
    html = report.read_text(encoding="utf-8")
    assert scripts_and_handlers(html) == (1, [])
    # the hostile anchor text of the link to /missing/ reached the crawl log, escaped here
    refusal = result.run["refusals"]["records"][0]
    assert refusal["anchor"] == '<script>alert("anchor")</script>'
    assert "&lt;script&gt;alert(&quot;anchor&quot;)&lt;/script&gt;" in html
    assert "Disallow: /private/" in html


def test_links_spider_writes_the_report(serve, links):
    server = serve(FIXTURES / "links" / "site", rewrite=["https://example.com"])
    result = links(server.url("/"))
    assert result.returncode == 0, result.stderr[-3000:]
    html = (result.out / REPORT_NAME).read_text(encoding="utf-8")
    assert "Link crawl" in html and server.origin in html


def test_report_disabled_by_setting(serve, discover):
    server = serve(FIXTURES / "url_stages")
    result = discover(server.url("/sitemap.xml"), settings={"REPORT_ENABLED": False})
    assert result.returncode == 0, result.stderr[-3000:]
    assert not (result.out / REPORT_NAME).exists()
    assert "Report:" not in result.stderr


def tree_nodes(node: dict[str, Any]) -> list[dict[str, Any]]:
    out = [node]
    for child in node.get("children", []):
        out.extend(tree_nodes(child))
    return out


def test_report_in_headless_chromium(serve, discover, tmp_path):
    """Opened from file:// with all network routed: no request but the file, no console
    error (a CSP violation would be one), the tree's counts in the DOM, JS works."""
    browser_path = require_browser()  # Chromium and (scrapy-)playwright
    from playwright.sync_api import sync_playwright

    server, result = crawl_fixture_site(serve, discover)
    report = result.out / REPORT_NAME
    file_url = report.resolve().as_uri()
    requests: list[str] = []
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=browser_path, headless=True, args=list(LAUNCH_ARGS)
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("request", lambda req: requests.append(req.url))
            page.on(
                "console",
                lambda msg: errors.append(msg.text) if msg.type in ("error", "warning") else None,
            )
            page.on("pageerror", lambda exc: errors.append(str(exc)))

            def route(r):
                return r.continue_() if r.request.url == file_url else r.abort()

            page.route("**/*", route)
            page.goto(file_url, wait_until="load")
            page.wait_for_timeout(300)  # late requests/errors, if any
            dom = page.evaluate(
                """() => Array.from(document.querySelectorAll('#tree [data-path]'))
                    .map(e => [e.dataset.path, +e.dataset.count,
                               e.querySelector('.count').textContent])"""
            )
            title = page.title()
            scripts = page.evaluate(  # those that run; the JSON data block does not
                "() => Array.from(document.scripts).filter(s => !s.type).length"
            )
            anchor_cells = page.evaluate(
                """() => Array.from(document.querySelectorAll('#refusals td'))
                    .map(td => td.textContent)"""
            )
            page.click("text=expand all")
            open_after = page.evaluate(
                "() => Array.from(document.querySelectorAll('#tree details')).every(d => d.open)"
            )
            shot = tmp_path / "report.png"
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert requests == [file_url]
    assert errors == []
    assert title == f"Discovery report: {server.origin}"
    assert scripts == 1
    assert '<script>alert("anchor")</script>' in anchor_cells  # shown as text, not run
    assert open_after
    # the tree in the DOM is the crawl log's tree, node for node, count for count
    expected = {n["path"]: n["count"] for n in tree_nodes(result.run["tree"]["root"])}
    assert {path: count for path, count, _ in dom} == expected
    assert all(text.replace(",", "") == str(count) for _, count, text in dom)
    # and the fixture's known shape: 14 URLs (13 pages + the PDF), /blog 4, /docs 4
    assert expected["/"] == 14 and expected["/blog"] == 4 and expected["/docs"] == 4
    assert expected["/docs/guide"] == 2
    assert shot.stat().st_size > 10_000
    keep = os.environ.get("REPORT_SCREENSHOT_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / "report.png")
