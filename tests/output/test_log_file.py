"""A run refused before it starts writes its line and outcome to ``LOG_FILE`` (a Scrapyd
job's log), in Scrapy's log format."""

from __future__ import annotations

import re

from scrapy.settings import Settings

from discovery_crawler.output.log_file import log_refusal


def test_the_refusal_and_its_outcome_are_appended(tmp_path):
    log = tmp_path / "logs" / "job.log"
    log.parent.mkdir()
    log.write_text("earlier line\n", encoding="utf-8")
    settings = Settings({"LOG_FILE": str(log)})
    log_refusal(settings, "error: argument max_pages: expected a whole number", "bad_arguments", 2)
    first, error, outcome = log.read_text(encoding="utf-8").splitlines()
    assert first == "earlier line"
    stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \[discovery_crawler\.commands\.crawl\]"
    assert re.fullmatch(f"{stamp} ERROR: error: argument max_pages: expected a whole number", error)
    assert re.fullmatch(
        f"{stamp} INFO: The run did not start \\(exit status 2\\): "
        r"\{'discovery/outcome': 'bad_arguments'\}",
        outcome,
    )


def test_no_log_file_no_write(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    log_refusal(Settings(), "error: x", "bad_arguments", 2)
    assert list(tmp_path.iterdir()) == []


def test_an_unwritable_log_file_is_left(tmp_path):
    folder = tmp_path / "log.d"
    folder.mkdir()  # a folder where the file would be
    log_refusal(Settings({"LOG_FILE": str(folder)}), "error: x", "output_failed", 4)
    assert folder.is_dir()
