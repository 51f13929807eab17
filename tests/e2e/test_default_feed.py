"""A run given no feed (no ``-O``/``-o``, no ``FEEDS``) writes the inventory to
``<out>/inventory.jsonl`` beside the crawl log, and the summary says where (issue 18);
``-O`` still decides when given; Scrapyd's items feed (``FEEDS``) is the only one; a job in
bounded chunks ends with the whole inventory in the default feed; an unwritable default
feed is exit 4 in one line."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

from discovery_crawler.outcomes import EXIT_CODES
from tests.conftest import ROOT, run_discover, serve_pages_sitemap
from tests.e2e.test_resume import _link_site, _stopped
from tests.e2e.test_service import feed, service_command

MORE_TO_DO = EXIT_CODES["more_to_do"]


def test_no_feed_option_writes_inventory_in_the_out_folder(serve, tmp_path):
    url = serve_pages_sitemap(serve, tmp_path / "site", 12)
    result = run_discover(url, tmp_path, feed=None)
    assert result.returncode == 0, result.stderr[-3000:]
    inventory = result.out / "inventory.jsonl"
    assert result.feed == inventory and inventory.is_file()
    assert sorted(r["url"].rsplit("/", 2)[-2] for r in result.records) == sorted(
        f"p-{i}" for i in range(12)
    )
    # Scrapy's line counts items, which are batches here: it says the URLs too
    assert f"Stored jsonlines feed (12 URLs in 1 batch) in: {inventory}" in result.stderr
    assert f"Feed: {inventory}" in result.stderr
    assert (result.out / "_crawl-log.json").is_file()


def test_an_explicit_feed_replaces_the_default(serve, tmp_path):
    url = serve_pages_sitemap(serve, tmp_path / "site", 3)
    result = run_discover(url, tmp_path, feed="mine.jsonl")
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(result.records) == 3
    assert not (result.out / "inventory.jsonl").exists()
    assert "inventory.jsonl" not in result.stderr


def test_scrapyds_items_feed_is_the_only_one(serve, tmp_path):
    """Scrapyd with an ``items_dir`` passes its items feed as ``-s FEEDS=…`` (JSON): the
    inventory goes there alone. (Without one it passes none, and the job writes the
    default feed: ``tests/operations/test_scrapyd.py`` runs both under a real Scrapyd.)"""
    url = serve_pages_sitemap(serve, tmp_path / "site", 3)
    items = tmp_path / "items" / "job2.jl"
    feeds = json.dumps({str(items): {"format": "jsonlines"}})
    given = run_discover(url, tmp_path, feed=None, out=tmp_path / "out2", settings={"FEEDS": feeds})
    assert given.returncode == 0, given.stderr[-3000:]
    assert not (given.out / "inventory.jsonl").exists()
    assert len(items.read_text(encoding="utf-8").splitlines()) == 3


def test_unwritable_default_feed_is_exit_4_in_one_line(serve, tmp_path):
    url = serve_pages_sitemap(serve, tmp_path / "site", 3)
    out = tmp_path / "out"
    (out / "inventory.jsonl").mkdir(parents=True)  # a folder where the feed would go
    result = run_discover(url, tmp_path, feed=None, out=out)
    assert result.returncode == EXIT_CODES["output_failed"], result.stderr[-3000:]
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: cannot write the feed ") and "inventory.jsonl" in line
    assert result.crawl_log is None


def test_chunked_job_ends_with_the_whole_inventory_in_the_default_feed(serve, tmp_path):
    url = serve_pages_sitemap(serve, tmp_path / "site", 30).removesuffix("sitemap.xml")
    out = tmp_path / "out"
    cmd = [a for a in service_command(url, out) if a != "-O"]
    cmd.remove(str(out / "inventory.jsonl"))
    cmd += ["-s", "MAX_CHUNK_PAGES=2"]  # robots.txt and 6 sitemap addresses: 4 chunks
    codes = []
    for _ in range(30):
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
        codes.append(proc.returncode)
        if proc.returncode != MORE_TO_DO:
            break
    assert codes[-1] == 0 and set(codes[:-1]) == {MORE_TO_DO} and len(codes) > 2, codes
    records = feed(out)  # no line twice
    assert len(records) == 30
    assert f"Feed: {out / 'inventory.jsonl'}" in proc.stderr


def test_a_killed_job_resumes_to_the_whole_inventory_in_the_default_feed(serve, tmp_path):
    """SIGKILL mid-crawl, then the same command: the default feed (rewritten, as -O) holds
    every page once, as it would after one uninterrupted run."""
    pages = 400
    server = serve(_link_site(tmp_path / "site", pages))
    out, job = tmp_path / "out", tmp_path / "job"
    cmd = [sys.executable, "-m", "scrapy", "crawl", "discover", "-a", f"url={server.url('/')}"]
    cmd += ["-a", "mode=links", "-a", f"out={out}", "-s", f"JOBDIR={job}"]
    cmd += ["-s", "HOST_INTERVAL=0", "-s", "PROGRESS_INTERVAL=0", "-s", "SITEMAP_CONCURRENCY=16"]
    assert _stopped(cmd, server, 120, signal.SIGKILL, 0.0) == -9
    # the killed run's lines are under the temporary name only: no short inventory.jsonl
    assert not (out / "inventory.jsonl").exists()
    partial = len((out / "inventory.jsonl.partial").read_text(encoding="utf-8").splitlines())
    last = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert last.returncode == 0, last.stderr[-3000:]
    records = feed(out)  # no line twice
    fetched = [u for u, rec in records.items() if rec["status"] == 200]
    assert len(fetched) == pages and partial < pages
    runs = json.loads((out / "_crawl-log.json").read_text(encoding="utf-8"))["runs"]
    assert runs[-1]["job"]["resumed"] is True  # the job went on, not started again
