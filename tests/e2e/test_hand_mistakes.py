"""Slips of the hand on ``scrapy crawl`` (``commands/mistakes.py``), run as the real
command: one line on stderr naming what was typed and what would work, status 2, no
traceback, nothing crawled or written."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT


def crawl(*args: str, cwd=ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def one_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr[-2000:]
    assert lines[0].startswith("error: ")
    return lines[0]


def test_misspelled_spider_lists_the_spiders_and_the_closest():
    line = one_line(crawl("discovr", "-a", "url=http://127.0.0.1:9/"))
    assert line == (
        "error: no spider named 'discovr' (spiders: discover, estimate, links); "
        "did you mean 'discover'?"
    )


def test_scrapy_profile_option_given_a_settings_profile(tmp_path):
    """``--profile massive`` would run the default profile and write cProfile stats to
    ./massive; it is said instead, and no file is written."""
    line = one_line(crawl("discover", "--profile", "massive", "-a", "url=http://127.0.0.1:9/"))
    assert "--profile is Scrapy's profiler option" in line
    assert "did you mean -a profile=massive?" in line
    assert not (ROOT / "massive").exists()


@pytest.mark.parametrize(
    ("flag", "value", "fmt", "use"),
    [
        ("-O", "inventory.txt", "'txt'", "use -O inventory.jsonl or -O inventory.csv"),
        ("-o", "inventory.xml", "'xml'", "use -o inventory.jsonl or -o inventory.csv"),
        ("-O", "inventory:pickle", "'pickle'", "use -O inventory.jsonl or -O inventory.csv"),
    ],
)
def test_feed_format_the_project_does_not_write(tmp_path, flag, value, fmt, use):
    """Scrapy's own message offers xml, marshal and pickle; the project's names the
    formats its spiders write."""
    line = one_line(crawl("discover", "-a", "url=http://127.0.0.1:9/", flag, value))
    assert f"error: {flag} {value}: unknown feed format {fmt}" in line
    assert "writes jsonl (jsonlines), json and csv" in line
    assert use in line
    assert "marshal" not in line


def test_estimate_spider_feed_format_named_too():
    line = one_line(crawl("estimate", "-a", "url=http://127.0.0.1:9/", "-O", "e.txt"))
    assert "unknown feed format 'txt'" in line and "use -O e.jsonl or -O e.csv" in line
