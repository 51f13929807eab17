"""Hostile crawl logs given to ``python -m discovery_crawler.output.report LOG``: nesting
past Python's recursion limit, a lone surrogate, absurd bucket widths, an unwritable
output — one line and an exit status each, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys

from discovery_crawler.output.report import main, render_report, write_report
from tests.conftest import ROOT

BASE = {"discovery": {"site": "x"}, "tree": {"urls": 1, "root": {"name": "/", "count": 1}}}


def chain(depth: int) -> dict:
    root: dict = {"name": "/", "path": "/", "count": 1, "children": []}
    node = root
    for i in range(depth):
        child = {"name": f"s{i}", "path": f"/s{i}", "count": 1, "children": []}
        node["children"].append(child)
        node = child
    return root


def test_a_log_nested_past_the_recursion_limit_is_one_line_and_status_1(tmp_path):
    depth = 5_000
    text = '{"runs":[{"tree":{"root":' + '{"children":[' * depth + "]}" * depth + "}}]}"
    log = tmp_path / "_crawl-log.json"
    log.write_text(text, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "discovery_crawler.output.report", str(log)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "not a crawl log" in proc.stderr


def test_a_deep_tree_renders_without_recursion_error():
    html = render_report({**BASE, "tree": {"urls": 1, "root": chain(3_000)}})
    assert 'data-path="/s63"' in html and 'data-path="/s900"' not in html


def test_a_lone_surrogate_is_written_as_its_escape(tmp_path):
    log = tmp_path / "_crawl-log.json"
    log.write_text(json.dumps({"runs": [BASE]}).replace('"x"', '"\\ud800"'), encoding="utf-8")
    assert main([str(log)]) == 0
    text = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "\\ud800" in text


def test_absurd_bucket_widths_draw_a_finite_timeline(tmp_path):
    for width in (5e-324, 1e308):
        timeline = {"buckets": 3, "bucket_seconds": width}
        timeline["hosts"] = {"h": {"requests": [1, 2, 3], "refusals": [0, 1, 0]}}
        html = write_report(tmp_path / "r.html", {**BASE, "timeline": timeline}).read_text()
        figure = html.split('data-chart="timeline"')[1].split("</figure>")[0]
        assert 'data-count="6"' in figure
        assert "inf" not in figure and "nan" not in figure


def test_an_unwritable_report_is_status_4(tmp_path, capsys):
    log = tmp_path / "_crawl-log.json"
    log.write_text(json.dumps({"runs": [BASE]}), encoding="utf-8")
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main([str(log), str(blocker / "report.html")]) == 4
    assert "report not written" in capsys.readouterr().err


def test_a_run_that_is_not_an_object_is_refused(tmp_path):
    log = tmp_path / "_crawl-log.json"
    log.write_text('{"runs": ["abc"]}', encoding="utf-8")
    assert main([str(log)]) == 1
    assert not (tmp_path / "report.html").exists()
