"""report.html (output/report.py): escaping of hostile input, empty and failed runs, bounds,
atomic writes, the verify section; end to end: ``tests/e2e/test_report.py``."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
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
from discovery_crawler.verdicts import (
    VerifyTally,
)

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
    """The number of <script> elements that run and every on* attribute or javascript:
    link; a script that does not run must be the pictures' one JSON data block."""
    doc = lxml.html.document_fromstring(html)
    bad = []
    data = doc.xpath("//script[@type='application/json']")
    assert [el.get("id") for el in data] == ["report-data"]
    json.loads(data[0].text)  # whole: nothing cut it short
    for el in doc.iter():
        if not isinstance(el.tag, str):
            continue
        for name, value in el.attrib.items():
            if name.lower().startswith("on") or value.strip().lower().startswith("javascript:"):
                bad.append(f"{el.tag} {name}={value!r}")
    return len(doc.findall(".//script")) - len(data), bad


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
            "pictures",
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


def test_report_renders_the_verify_section_from_a_crawl_log_entry():
    tally = VerifyTally()
    tally.observe(
        [
            {
                "url": "https://e.com/<x>/",
                "source": "sitemap",
                "status": 404,
                "refusal": {"class": "missing", "reason": "404 <b>"},
            },
        ]
    )
    html = render_report({"verify": tally.as_dict()})
    assert 'data-verdict="dead">dead (1)' in html
    assert "&lt;x&gt;" in html and "404 &lt;b&gt;" in html and "<b>404" not in html


def _tiles(run: dict[str, Any]) -> dict[str, str]:
    doc = lxml.html.fromstring(render_report(run))
    return {
        div.get("data-total"): div.findtext("b").replace(",", "")
        for div in doc.xpath("//div[@data-total]")
    }


@given(st.integers(0, 10_000), st.integers(0, 10_000), st.integers(0, 50))
def test_header_tiles_add_up(written, filtered, left_out):
    """unique − filtered out (− otherwise left out) = in the inventory, read off the
    tiles; the remainder tile shows only when the counts leave one."""
    unique = written + filtered + left_out
    run = {
        "discovery": {
            "counts": {"unique": unique, "discovered": written, "duplicates": 7},
            "filtered": {"asset": {"count": filtered}, "other_host": {"count": 99}},
        }
    }
    tiles = _tiles(run)
    shown_left = int(tiles.get("− otherwise left out", "0"))
    assert shown_left == left_out
    assert int(tiles["unique URLs found"]) - int(tiles["− filtered out"]) - shown_left == int(
        tiles["= in the inventory"]
    )
    assert tiles["duplicates merged (counted once above)"] == "7"
