"""``scrapy report LOG --tree`` run as a command (a subprocess in the project), from
another folder too; bad input is one line and a status, never a traceback."""

from __future__ import annotations

import shutil
import subprocess
import sys

from tests.conftest import FIXTURES, ROOT

TREE = FIXTURES / "tree"


def scrapy(*args: str, cwd=ROOT) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "scrapy", "report", *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)


def test_scrapy_report_tree_prints_the_golden_trees():
    result = scrapy(str(TREE / "index-crawl-log.json"), "--tree")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (TREE / "index-tree.txt").read_text(encoding="utf-8")


def test_scrapy_report_options_and_folder(tmp_path):
    shutil.copy(TREE / "demo-crawl-log.json", tmp_path / "_crawl-log.json")
    result = scrapy(str(tmp_path), "--tree", "--depth", "2", "--no-sitemaps")
    assert result.returncode == 0, result.stderr
    expected = (TREE / "demo-tree-depth2.txt").read_text(encoding="utf-8")
    assert result.stdout == expected[expected.index("Paths") :]
    only = scrapy(str(tmp_path), "--sitemaps-only")
    assert only.returncode == 0 and "Paths" not in only.stdout
    assert only.stdout.startswith("Sitemaps of https://23people.io/")


def test_scrapy_report_without_tree_writes_the_html_report(tmp_path):
    shutil.copy(TREE / "index-crawl-log.json", tmp_path / "_crawl-log.json")
    result = scrapy(str(tmp_path / "_crawl-log.json"))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_scrapy_report_bad_input(tmp_path):
    missing = scrapy(str(tmp_path / "nope.json"), "--tree")
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'nope.json'}: no such file or folder; give a run's out folder "
        "(./discovery/HOST/ by default) or its _crawl-log.json"
    ]
    (tmp_path / "bad.json").write_text('{"runs": [', encoding="utf-8")
    corrupt = scrapy(str(tmp_path / "bad.json"), "--tree")
    assert corrupt.returncode == 1
    [line] = corrupt.stderr.strip().splitlines()
    assert line.startswith("error: ") and "not a crawl log (invalid JSON" in line
    usage = scrapy("--tree")
    assert usage.returncode == 2 and "give one crawl log" in usage.stderr
    for result in (missing, corrupt, usage):
        assert "Traceback" not in result.stderr
