"""Every output folder is locked (issue 34 point 3): two runs into one out folder, with or
without ``JOBDIR``, never both write it. A second ``discover`` or ``links`` into a folder
a live run holds exits 8 at once with one line naming the holder (pid, start time),
touching nothing — no feed truncated, no crawl-log entry; two started in the same instant
give one run and one refusal; the lock of a run killed with -9 is taken over, saying so."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from discovery_crawler.outcomes import BUSY, EXIT_CODES
from tests.conftest import ROOT
from tests.e2e.test_service import tree_site

_STARTED = r"started \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"


def crawl(spider: str, url: str, out: Path, *extra: str, interval: float = 0) -> list[str]:
    cmd = [sys.executable, "-m", "scrapy", "crawl", spider, "-a", f"url={url}"]
    cmd += ["-a", f"out={out}", "-s", f"HOST_INTERVAL={interval}", "-s", "PROGRESS_INTERVAL=0"]
    return cmd + list(extra)


def start(cmd: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def runs(out: Path) -> list[dict[str, Any]]:
    path = out / "_crawl-log.json"
    return json.loads(path.read_text(encoding="utf-8"))["runs"] if path.exists() else []


def refused_line(out: Path, pid: int) -> str:
    return (
        rf"error: {re.escape(str(out))} is in use by another run \(pid {pid}, {_STARTED}\); "
        rf"nothing was touched \(exit {BUSY}\)"
    )


def holding(server: Any, proc: subprocess.Popen[str]) -> None:
    """Wait until ``proc`` is crawling (it holds its folders by then)."""
    deadline = time.monotonic() + 60
    while not server.requests:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.02)


def test_two_runs_started_together_into_one_folder_give_one_run(serve, tmp_path):
    """Started in the same instant (no JOBDIR): one crawls, the other exits 8 naming it;
    the inventory has every page once, the crawl log one run."""
    server = serve(tree_site(tmp_path / "site", 30))
    out = tmp_path / "out"
    cmd = crawl("discover", server.url("/"), out)
    procs = [start(cmd), start(cmd)]
    done = {proc.pid: (proc.wait(timeout=300), *proc.communicate()) for proc in procs}
    codes = sorted(code for code, _, _ in done.values())
    assert codes == [0, BUSY], {pid: (c, err[-2000:]) for pid, (c, _, err) in done.items()}
    [winner] = [pid for pid, (code, _, _) in done.items() if code == 0]
    [(_, _, err)] = [v for pid, v in done.items() if pid != winner]
    assert re.fullmatch(refused_line(out, winner), err.strip()), err
    urls = [json.loads(line)["url"] for line in (out / "inventory.jsonl").read_text().splitlines()]
    assert len(urls) == len(set(urls)) == 30
    assert len(runs(out)) == 1 and runs(out)[0]["status"] == "completed"


def test_a_run_into_a_held_folder_touches_nothing(serve, tmp_path):
    """A slow run holds the folder; discover (-O into a feed that exists) and links into
    it are refused in one line, exit 8: the feed keeps its bytes, the crawl log gains no
    entry, the server sees no request of theirs. With JOBDIR too."""
    server = serve(tree_site(tmp_path / "site", 12))
    out, feed = tmp_path / "out", tmp_path / "kept.jsonl"
    feed.write_text('{"url": "from an earlier run"}\n')
    first = start(crawl("discover", server.url("/"), out, interval=1))
    holding(server, first)
    for cmd in (
        crawl("discover", server.url("/"), out, "-O", str(feed)),
        crawl("links", server.url("/"), out, "-O", str(feed)),
        crawl("discover", server.url("/"), out, "-s", f"JOBDIR={tmp_path / 'job'}"),
    ):
        before = len(server.requests)
        second = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert second.returncode == BUSY, second.stderr[-3000:]
        assert re.fullmatch(refused_line(out, first.pid), second.stderr.strip()), second.stderr
        assert feed.read_text() == '{"url": "from an earlier run"}\n'
        assert runs(out) == []  # the first run's entry comes at its end
        assert all(path != "/robots.txt" for _, path, _ in server.requests[before:])
    assert not (tmp_path / "job").exists()  # the out folder refused it before its JOBDIR
    first.send_signal(signal.SIGINT)  # ends it sooner; its outcome is not this test's
    first.communicate(timeout=120)


def test_a_held_job_folder_is_refused_too(serve, tmp_path):
    """Two runs into different out folders sharing one JOBDIR: the second exits 8 naming
    the job folder."""
    server = serve(tree_site(tmp_path / "site", 12))
    job = tmp_path / "job"
    first = start(
        crawl("discover", server.url("/"), tmp_path / "a", "-s", f"JOBDIR={job}", interval=1)
    )
    holding(server, first)
    second = subprocess.run(
        crawl("discover", server.url("/"), tmp_path / "b", "-s", f"JOBDIR={job}"),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert second.returncode == BUSY, second.stderr[-3000:]
    assert re.fullmatch(refused_line(job, first.pid), second.stderr.strip()), second.stderr
    first.send_signal(signal.SIGINT)
    first.communicate(timeout=120)


def test_the_lock_of_a_killed_run_is_taken_over_saying_so(serve, tmp_path):
    """kill -9 during a run: the next run into the folder takes its lock over, says so on
    stderr and in its crawl-log entry, and completes."""
    server = serve(tree_site(tmp_path / "site", 12))
    out = tmp_path / "out"
    first = start(crawl("links", server.url("/"), out, interval=1))
    holding(server, first)
    first.send_signal(signal.SIGKILL)
    first.communicate(timeout=60)
    again = subprocess.run(
        crawl("links", server.url("/"), out), cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert again.returncode == EXIT_CODES["completed"], again.stderr[-3000:]
    said = (
        rf"took over the lock of {re.escape(str(out))} from a run that is gone "
        rf"\(pid {first.pid}, {_STARTED}\)"
    )
    assert re.search(rf"^warning: {said}$", again.stderr, re.MULTILINE), again.stderr[-3000:]
    [entry] = runs(out)
    assert any(re.fullmatch(said, note) for note in entry["discovery"]["notes"]), entry
    # ... and a run after a normal exit takes nothing over.
    third = subprocess.run(
        crawl("links", server.url("/"), out), cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert third.returncode == 0 and "took over" not in third.stderr
