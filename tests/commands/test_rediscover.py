"""``scrapy rediscover``'s loop over the sites (``commands/rediscover.py``), in process:
what a stop signal does at the moments an end-to-end run cannot aim at."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from discovery_crawler.commands.rediscover import Command, Running
from discovery_crawler.sites_file import Site


def test_a_signal_while_a_site_starts_reaches_that_site(tmp_path: Path, capsys):
    """SIGTERM arriving while a site's process is being started (before rediscover lists
    it as running) is still passed on to it: it used to run on to its end, rediscover
    waiting for it, the stop ignored."""
    command = Command()
    started: list[subprocess.Popen[bytes]] = []

    def start(site: Site, root: Path, settings: list[str]) -> Running:
        process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        started.append(process)
        os.kill(os.getpid(), signal.SIGTERM)  # handled here, before _run_sites lists it
        return Running(site, root / site.folder, root / "site.log", 0, process)

    command._start = start  # type: ignore[method-assign]
    sites = [Site(1, "http://127.0.0.1:9/"), Site(2, "http://127.0.0.1:10/")]
    began = time.monotonic()
    try:
        status = command._run_sites(sites, tmp_path, [], 1)
    finally:
        for process in started:
            process.kill()
            process.wait()
    assert status == 3
    assert time.monotonic() - began < 15
    assert [p.returncode for p in started] == [-signal.SIGTERM]
    out = capsys.readouterr().out
    assert "127.0.0.1_9: killed by SIGTERM (exit -15)" in out
    assert "127.0.0.1_10: not run (rediscover was stopped)" in out


def test_a_busy_site_is_not_given_the_holders_crawl_log_entry(tmp_path: Path, capsys):
    """A site refused as busy (exit 8) wrote nothing: the entry the run holding its folder
    appended meanwhile is that run's — it was said as the site's ("busy (exit 8), 165
    URLs, first run: … in use by another run")."""
    site = Site(1, "http://127.0.0.1:9/")
    out = tmp_path / site.folder
    out.mkdir()
    holder = {"status": "completed", "discovery": {"counts": {"discovered": 165}}}
    holder["changes"] = {"previous_run": None}
    (out / "_crawl-log.json").write_text(json.dumps({"runs": [holder]}))
    log = tmp_path / "site.log"
    log.write_text(
        f"error: {out} is in use by another run (pid 1, started x); nothing was touched\n"
    )
    process = subprocess.Popen([sys.executable, "-c", "raise SystemExit(8)"])
    process.wait()
    assert Command()._finish(Running(site, out, log, 0, process)) == 8
    said = capsys.readouterr().out.strip()
    assert said == (
        f"127.0.0.1_9: busy (exit 8): {out} is in use by another run (pid 1, started x); "
        f"nothing was touched (log: {log})"
    )
