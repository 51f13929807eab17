"""The memory extensions in a real crawl: the collector tuned while the spider runs
(``extensions/gc_tuning.py``), freed heap memory handed back (``extensions/malloc_trim.py``)."""

from __future__ import annotations

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
