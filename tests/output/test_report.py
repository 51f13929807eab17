"""report.html (output/report.py): escaping of hostile input, empty and failed runs, bounds,
atomic writes; end to end, a real ``scrapy crawl discover`` writes it and headless Chromium
opens it from file:// with every network request recorded."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import lxml.html
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discovery_crawler.output.report import (
    CSS,
    JS,
    REPORT_NAME,
    main,
    render_report,
    write_report,
)
from discovery_crawler.rendering import LAUNCH_ARGS
from tests.conftest import FIXTURES
from tests.test_rendering import require_browser

HOSTILE = '<script>alert("x")</script>'
HOSTILE_URL = 'https://example.com/"><script>alert(1)</script><img src=x onerror=alert(2)>'


def hostile_run(text: str = HOSTILE, url: str = HOSTILE_URL) -> dict[str, Any]:
    """A run entry with hostile text in every place the report shows run data."""
    node = {"name": text, "path": "/" + text, "count": 1, "kinds": {text: 1}}
    scored = {"url": url, "type": text, "score": 1, "breakdown": [[text, 1]], "lastmod": text}
    capped = {"count": 1, "listed": 1, "items": [url]}
    return {
        "provenance": {"started_at": text, "finished_at": text, "written_by": text},
        "input": {"url": url, "kind": text, "mode": text, "profile": text},
        "status": "failed",
        "failure": text,
        "finish_reason": text,
        "warnings": [text],
        "discovery": {
            "site": text,
            "notes": [text],
            "kinds": {text: 3},
            "counts": {"discovered": 1},
            "filtered": {text: {"count": 1, "listed": 1, "items": [url]}},
            "flagged_as_junk": {"count": 1, "items": [{"url": url, "pattern": text}]},
            "requires_auth": capped,
            "malformed": {"count": 1, "items": [{"raw": text, "reason": text}]},
            "robots": {"url": url, "status": 500, "error": text},
            "robots_policy": {
                "policies": {
                    text: {
                        "url": url,
                        "outcome": text,
                        "reason": text,
                        "group": text,
                        "rules": [f"Disallow: /{text}"],
                        "sitemaps": [url],
                    }
                },
                "disallowed": {"count": 1, "items": [{"url": url, "rule": text, "found_on": url}]},
            },
            "sitemap_attempts": [{"url": url, "source": text, "error": text, "ok": False}],
            "sitemaps_skipped": {"count": 1, "items": [{"url": url, "reason": text}]},
            "other_hosts_by_sitemap": {url: {text: 1}},
            "limits": [{"limit": text}],
            "crawl": {"status": {text: 1}, "redirects": {"count": 1, "items": [{"url": url}]}},
        },
        "refusals": {
            "counts": {text: 1},
            "total": 1,
            "records": [
                {"class": text, "url": url, "reason": text, "anchor": text, "found_on": url}
            ],
            "identical_content": [[url, text]],
            "render": {text: text},
        },
        "throttle": {text: text},
        "settings": {text: text},
        "selection": {
            "cap": text,
            "templates": [text],
            "type_counts": {text: 1},
            "warnings": [text],
            "errors": [text],
            "kept": {"count": 1, "items": [scored]},
            "cut": {"count": 1, "items": [scored]},
            "scores": {
                "rules": [{"rule": text, "points": text, "means": text}],
                "totals": {text: 1},
            },
        },
        "groups": {
            "urls": 1,
            "path_groups": [{"label": text, "count": 1, "representative": url, "samples": [url]}],
            "parent_groups": [
                {"label": text, "shape": text, "confidence": text, "representative": url}
            ],
        },
        "tree": {"urls": 1, "root": {**node, "name": "/", "children": [node]}},
    }


def scripts_and_handlers(html: str) -> tuple[int, list[str]]:
    """The number of <script> elements and every on* attribute or javascript: link."""
    doc = lxml.html.document_fromstring(html)
    bad = []
    for el in doc.iter():
        if not isinstance(el.tag, str):
            continue
        for name, value in el.attrib.items():
            if name.lower().startswith("on") or value.strip().lower().startswith("javascript:"):
                bad.append(f"{el.tag} {name}={value!r}")
    return len(doc.findall(".//script")), bad


# -- unit ------------------------------------------------------------------------------------


def test_hostile_urls_and_titles_are_escaped():
    html = render_report(hostile_run())
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    scripts, bad = scripts_and_handlers(html)
    assert scripts == 1  # ours
    assert bad == []
    # the hostile URL is still shown (escaped) and linked with its quote escaped
    assert 'href="https://example.com/&quot;&gt;&lt;script&gt;' in html


def test_only_http_urls_become_links():
    html = render_report(hostile_run(url="javascript:alert(document.cookie)"))
    assert 'href="javascript:' not in html
    assert "javascript:alert(document.cookie)" in html  # shown as text
    assert scripts_and_handlers(html) == (1, [])


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=40), st.text(max_size=40))
def test_no_text_becomes_markup(text, tail):
    """Whatever the run's strings hold, the report has our one script and no handlers."""
    html = render_report(hostile_run(text, "https://example.com/" + tail))
    assert scripts_and_handlers(html) == (1, [])


def test_empty_run_renders_every_section():
    for run in ({}, {"runs": None}, {"discovery": None, "selection": [], "tree": "x"}):
        html = render_report(run)  # type: ignore[arg-type]
        doc = lxml.html.document_fromstring(html)
        ids = {s.get("id") for s in doc.iter("section")}
        assert ids == {
            "tree-section",
            "groups",
            "selection",
            "refusals",
            "verify",
            "kinds",
            "robots",
            "sitemaps",
            "crawl",
        }
        assert "No path tree" in html and "no sitemap was tried" in html


def test_failed_run_shows_the_failure():
    run = {
        "status": "failed",
        "failure": "site unreachable: Connection refused",
        "finish_reason": "finished",
        "input": {"url": "http://127.0.0.1:9/", "mode": "auto"},
        "discovery": {"site": None, "sitemap_attempts": []},
    }
    doc = lxml.html.document_fromstring(render_report(run))
    failure = doc.get_element_by_id("failure").text_content()
    assert "site unreachable: Connection refused" in failure
    assert doc.get_element_by_id("site").text_content() == "http://127.0.0.1:9/"


def test_csp_allows_exactly_the_inline_style_and_script():
    html = render_report({})
    doc = lxml.html.document_fromstring(html)
    csp = doc.xpath("//meta[@http-equiv='Content-Security-Policy']/@content")[0]
    assert "default-src 'none'" in csp
    for source in (CSS, JS):
        digest = base64.b64encode(hashlib.sha256(source.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in csp
    assert doc.findall(".//style")[0].text == CSS
    assert doc.findall(".//script")[0].text == JS
    # nothing is loaded from anywhere: no src/href to a resource
    assert not re.search(r"<(?:link|img|iframe|object|embed)\b", html)
    assert not re.search(r"\bsrc=", html)


def test_tables_and_tree_are_bounded():
    url = "https://example.com/p"
    items = [{"url": f"{url}{i}", "score": i, "breakdown": []} for i in range(5000)]
    root = {
        "name": "/",
        "path": "/",
        "count": 5000,
        "children": [{"name": f"n{i}", "path": f"/n{i}", "count": 1} for i in range(5000)],
    }
    run = {
        "selection": {"cut": {"count": 100_000, "items": items}},
        "tree": {"root": root},
    }
    html = render_report(run, max_rows=50, max_tree_nodes=100)
    doc = lxml.html.document_fromstring(html)
    cut_rows = doc.xpath("//h3[@id='cut']/following-sibling::*[1]//tbody/tr")
    assert len(cut_rows) == 50
    assert "99,950 more rows not listed." in html
    assert len(doc.xpath("//*[@data-path]")) == 100
    assert "Tree drawing stopped at 100 nodes." in html


def test_write_is_atomic_and_readable(tmp_path, monkeypatch):
    path = tmp_path / REPORT_NAME
    write_report(path, {"discovery": {"site": "https://a.example"}})
    assert "https://a.example" in path.read_text(encoding="utf-8")
    assert oct(path.stat().st_mode & 0o777) == "0o644"

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        write_report(path, {"discovery": {"site": "https://b.example"}})
    assert "https://a.example" in path.read_text(encoding="utf-8")  # the old one stays
    assert sorted(p.name for p in tmp_path.iterdir()) == [REPORT_NAME]  # no temp left


def test_command_line_rewrites_from_a_crawl_log(tmp_path, capsys):
    log = tmp_path / "_crawl-log.json"
    log.write_text(json.dumps({"runs": [{}, {"discovery": {"site": "https://c.example"}}]}))
    assert main([str(log)]) == 0
    assert "https://c.example" in (tmp_path / REPORT_NAME).read_text(encoding="utf-8")
    log.write_text("{")
    assert main([str(log)]) == 1
    assert "not a crawl log" in capsys.readouterr().err


# -- end to end ------------------------------------------------------------------------------


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
            scripts = page.evaluate("() => document.scripts.length")
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
