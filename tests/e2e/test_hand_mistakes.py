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


def scrapy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


URL = "url=http://127.0.0.1:9/"


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            (),
            "error: no spider given (spiders: discover, estimate, links); "
            "e.g. scrapy crawl discover -a url=https://example.com/",
        ),
        (
            ("discover",),
            "error: argument url: missing; expected an http(s) URL of a homepage, a sitemap "
            "(.xml, .xml.gz, .txt) or a robots.txt, e.g. -a url=https://example.com/",
        ),
        (
            ("discover", "https://example.com/"),
            "error: 'https://example.com/' after the spider's name: give the start URL as "
            "-a url=https://example.com/",
        ),
        (
            ("discover", "-a", URL, "--max-pages", "5"),
            "error: unknown option --max-pages; spider arguments go as -a NAME=VALUE: "
            "did you mean -a max_pages=5?",
        ),
        (
            ("discover", "-a", URL, "-a", "mode=unoin"),
            "error: argument mode: 'unoin' is not a mode; expected one of auto, sitemap, "
            "links, union; did you mean 'union'?",
        ),
        (
            ("discover", "-a", URL, "-a", "max_pages=-1"),
            "error: argument max_pages: expected a number at least 1, got -1",
        ),
        (
            ("discover", "-a", URL, "-a", "profile=masive"),
            "error: argument profile: 'masive' is not a profile; expected one of default, "
            "massive, polite, sample, service; did you mean 'massive'?",
        ),
        (
            ("discover", "-a", URL, "-s", "HOST_INTERVAL=abc"),
            "error: -s HOST_INTERVAL=abc: expected a number, e.g. -s HOST_INTERVAL=1.0 "
            "(its default)",
        ),
        (
            ("discover", "-a", URL, "-O"),
            "error: argument -O/--overwrite-output: expected one argument "
            "(e.g. -O inventory.jsonl)",
        ),
        (
            ("discover", "-a", "url=https://xn--invalid-.com/"),
            "error: argument url: invalid international host name (punycode): "
            "'https://xn--invalid-.com'; expected an http(s) URL of a homepage, a sitemap "
            "(.xml, .xml.gz, .txt) or a robots.txt",
        ),
        (
            ("estimate", "-a", "url=ftp://example.com/"),
            "error: argument url: 'ftp://example.com/' is not usable; expected an http(s) URL "
            "of a homepage, a sitemap (.xml, .xml.gz, .txt) or a robots.txt",
        ),
    ],
)
def test_more_slips_of_the_hand_are_one_line(args, line):
    """Each once gave Scrapy's help, a traceback, or a run that failed later (a host no
    request can name; a setting a component could not read)."""
    assert one_line(crawl(*args)) == line


def test_an_unknown_argument_suggests_the_close_one():
    line = one_line(crawl("discover", "-a", URL, "-a", "max_page=5"))
    assert line.startswith("error: argument max_page: unknown argument; known arguments are ")
    assert line.endswith("; did you mean 'max_pages'?")


def test_a_folder_as_the_feed_names_a_file_in_it(tmp_path):
    line = one_line(crawl("discover", "-a", URL, "-O", str(tmp_path)))
    assert line == (
        f"error: -O {tmp_path}: is a folder, not a feed file; use "
        f"-O {tmp_path / 'inventory.jsonl'} (or -a out={tmp_path} for the run's folder)"
    )
    assert list(tmp_path.iterdir()) == []


def test_report_of_a_folder_without_a_run(tmp_path):
    missing = one_line(scrapy("report", str(tmp_path / "nope")))
    assert missing == (
        f"error: {tmp_path / 'nope'}: no such file or folder; give a run's out folder "
        "(./discovery/HOST/ by default) or its _crawl-log.json"
    )
    for tree in ((), ("--tree",)):
        empty = one_line(scrapy("report", str(tmp_path), *tree))
        assert empty == (
            f"error: {tmp_path}: no _crawl-log.json in this folder (no run wrote here); "
            "give a run's out folder (./discovery/HOST/ by default) or its _crawl-log.json"
        )
    assert not (tmp_path / "report.html").exists()


def test_report_of_a_corrupt_crawl_log_is_one_line_status_1(tmp_path):
    """Not a crawl log is status 1 (the file is there; it is not what was promised)."""
    (tmp_path / "_crawl-log.json").write_text('{"runs": [', encoding="utf-8")
    for tree in ((), ("--tree",)):
        proc = scrapy("report", str(tmp_path), *tree)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr
        [line] = proc.stderr.strip().splitlines()
        assert line.startswith(f"error: {tmp_path / '_crawl-log.json'}: not a crawl log")


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ("rediscover",),
            "error: give one sites file (one URL a line): scrapy rediscover SITES_FILE",
        ),
        (
            ("report", "x", "--run", "abc"),
            "error: argument --run: invalid int value: 'abc' (e.g. --run 1)",
        ),
    ],
)
def test_other_commands_say_their_slips_in_one_line(args, line):
    """Scrapy's parser printed its usage block and the error: five lines."""
    assert one_line(scrapy(*args)) == line
