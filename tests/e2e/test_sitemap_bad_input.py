"""``scrapy sitemap DIR`` on what a hostile or hurried user gives it (issue 38, "Bad
input"): a folder without a finished run, a crawl log of another shape, a base URL on
another origin, URLs a sitemap cannot hold. One line on stderr and exit 2 for the bad
arguments; the URLs that cannot be written are left out, counted and listed. The folders
are made by hand: no crawl is needed to refuse them."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT

SITE = "https://example.com"


def scrapy_sitemap(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "sitemap", str(folder), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def run_folder(tmp_path: Path, log: object, records: list[dict] | None = None) -> Path:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "_crawl-log.json").write_text(json.dumps(log), encoding="utf-8")
    lines = "".join(json.dumps(r) + "\n" for r in records or [{"url": SITE + "/", "status": 200}])
    (folder / "inventory.jsonl").write_text(lines, encoding="utf-8")
    return folder


def finished(site: object = SITE) -> dict:
    return {"runs": [{"status": "completed", "discovery": {"site": site}}]}


@pytest.mark.parametrize(
    ("log", "says"),
    [
        (None, "no _crawl-log.json"),
        ({"runs": []}, "no run recorded"),
        ({"runs": [{"status": "interrupted", "discovery": {"site": SITE}}]}, "did not finish"),
        ({"runs": [{"status": "failed", "discovery": {"site": SITE}}]}, "did not finish"),
        ({"runs": {"a": 1}}, "not a crawl log"),
        ({"runs": [5]}, "not a crawl log"),
        ([1, 2], "not a crawl log"),
        ({"runs": [{"status": "completed"}]}, "names no site"),
        (finished(5), "names no site"),
        (finished("not a url"), "names no site"),
    ],
)
def test_a_folder_without_a_finished_run_is_one_line_and_exit_2(tmp_path, log, says):
    folder = run_folder(tmp_path, log)
    if log is None:
        (folder / "_crawl-log.json").unlink()
    done = scrapy_sitemap(folder)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and says in done.stderr, done.stderr
    assert not (folder / "sitemaps").exists()


def test_no_folder_and_no_inventory_are_one_line_and_exit_2(tmp_path):
    missing = scrapy_sitemap(tmp_path / "nothing")
    assert missing.returncode == 2 and missing.stderr == (
        f"sitemap: {tmp_path / 'nothing'}: no such folder\n"
    )
    folder = run_folder(tmp_path, finished())
    (folder / "inventory.jsonl").unlink()
    done = scrapy_sitemap(folder)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "no inventory" in done.stderr


@pytest.mark.parametrize(
    "base",
    [
        "https://cdn.example.net/maps/",
        "http://example.com/maps/",  # another scheme: another origin
        "https://example.com:8443/maps/",  # another port: another origin
        "https://sub.example.com/maps/",
    ],
)
def test_a_base_on_another_origin_is_refused_unless_cross_origin(tmp_path, base):
    folder = run_folder(tmp_path, finished())
    refused = scrapy_sitemap(folder, "--base", base)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "another origin" in refused.stderr and "robots.txt" in refused.stderr
    assert "--cross-origin" in refused.stderr
    allowed = scrapy_sitemap(folder, "--base", base, "--cross-origin")
    assert allowed.returncode == 0, allowed.stderr
    index = (folder / "sitemaps" / "sitemap_index.xml").read_text()
    assert f"<loc>{base}sitemap-1.xml</loc>" in index


def test_the_same_origin_in_other_case_is_accepted(tmp_path):
    folder = run_folder(tmp_path, finished())
    done = scrapy_sitemap(folder, "--base", "HTTPS://EXAMPLE.COM/maps")
    assert done.returncode == 0, done.stderr


def test_urls_that_cannot_be_written_are_left_out_counted_and_listed(tmp_path):
    long = SITE + "/long/" + "x" * 2100
    records = [
        {"url": SITE + "/ok/", "status": 200, "sitemap": SITE + "/s.xml"},
        {"url": long, "status": 200, "sitemap": SITE + "/s.xml"},
        {"url": "https://other.example/page/", "status": 200},
        {"url": "https://other.example/listed/", "status": 200, "sitemap": SITE + "/s.xml"},
    ]
    folder = run_folder(tmp_path, finished(), records)
    done = scrapy_sitemap(folder)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:3] == [
        "Sitemap: 1 URLs in 1 file(s); against the site's sitemaps: 0 added, 2 dropped, 1 kept",
        "Dropped (listed, not indexable or not writable): 1 too long, 1 other host",
        "Left out, cannot be written in a sitemap: 2 other host, 1 too long (e.g. "
        f"{long[:120]}, https://other.example/page/, https://other.example/listed/)",
    ]
    part = (folder / "sitemaps" / "sitemap-1.xml").read_text()
    assert "other.example" not in part and "/long/" not in part
    changes = json.loads((folder / "sitemaps" / "changes.json").read_text())
    assert changes["excluded"]["reasons"] == {"other_host": 2, "too_long": 1}
    assert [i["url"] for i in changes["excluded"]["items"]] == [
        long,
        "https://other.example/page/",
        "https://other.example/listed/",
    ]
    text = (folder / "sitemaps" / "changes.txt").read_text()
    assert f"- {long}\ttoo_long\n" in text
    assert "- https://other.example/listed/\tother_host\n" in text


def test_a_writer_killed_half_way_leaves_no_index_and_a_rerun_writes_the_whole_set(tmp_path):
    """kill -9 while the parts are being written: the earlier index is gone (it would name
    parts half written), no index names the parts there are; run again, the set is whole."""
    records = [{"url": f"{SITE}/p/{i}/", "status": 200} for i in range(400_000)]
    folder = run_folder(tmp_path, finished(), records)
    out = folder / "sitemaps"
    out.mkdir()
    (out / "sitemap_index.xml").write_text("<sitemapindex>an earlier set</sitemapindex>")
    writer = subprocess.Popen(
        [sys.executable, "-m", "scrapy", "sitemap", str(folder)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while not (out / "sitemap-2.xml").exists():
            assert writer.poll() is None, "the writer ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.002)
        writer.send_signal(signal.SIGKILL)
    finally:
        writer.wait()
    assert writer.returncode == -signal.SIGKILL
    assert not (out / "sitemap_index.xml").exists()
    done = scrapy_sitemap(folder)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Sitemap: 400,000 URLs in 8 file(s)")
    index = (out / "sitemap_index.xml").read_text()
    assert index.count("<sitemap>") == 8
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["changes.json", "changes.txt", "sitemap_index.xml"]
        + [f"sitemap-{n}.xml" for n in range(1, 9)]
    )
