"""The memory extensions in a real crawl: the collector tuned while the spider runs
(``extensions/gc_tuning.py``), freed heap memory handed back (``extensions/malloc_trim.py``)."""

from __future__ import annotations

import json

from tests.conftest import run_discover, serve_pages_sitemap
from tests.extensions.test_malloc_trim import need_glibc


def test_a_crawl_reports_its_collections(serve, tmp_path):
    result = run_discover(serve_pages_sitemap(serve, tmp_path / "site", 5), tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(result.records) == 5
    assert "'gc/collections':" in result.stderr
    assert "TelnetConsole" not in result.stderr and "RemoteControl" not in result.stderr


def test_a_crawl_trims_while_it_runs_and_reports_it(serve, tmp_path):
    need_glibc()
    # 20,000 URLs: a crawl long enough (~0.5 s) for trims at 0.01 s whatever the machine
    url = serve_pages_sitemap(serve, tmp_path / "site", 20_000)
    on = run_discover(url, tmp_path / "on", settings={"MALLOC_TRIM_INTERVAL": 0.01})
    off = run_discover(url, tmp_path / "off", settings={"MALLOC_TRIM_INTERVAL": 0})
    assert on.returncode == 0 and off.returncode == 0, on.stderr[-3000:]
    trims = int(on.stderr.split("'memory/trims': ")[1].split("}")[0].split(",")[0])
    assert trims >= 1
    assert "'memory/trim_seconds':" in on.stderr
    assert "memory/trims" not in off.stderr
    assert on.urls == off.urls and len(on.urls) == 20_000


def test_a_users_extensions_setting_keeps_the_run(serve, tmp_path):
    """``-s EXTENSIONS={…}`` replaces the project's dict, as Scrapy does: the user's
    extension runs and the run's owner (``DiscoveryRun``) is put back, so the crawl is the
    same as without it (it used to fail with an error per signal and an empty feed)."""
    url = serve_pages_sitemap(serve, tmp_path / "site", 5)
    mine = json.dumps({"scrapy.extensions.corestats.CoreStats": 0})
    result = run_discover(url, tmp_path / "mine", settings={"EXTENSIONS": mine})
    plain = run_discover(url, tmp_path / "plain")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "no run (is DiscoveryRun in EXTENSIONS?)" not in result.stderr
    assert sorted(result.urls) == sorted(plain.urls) and len(result.urls) == 5
    assert result.crawl_log["runs"][-1]["status"] == plain.crawl_log["runs"][-1]["status"]
