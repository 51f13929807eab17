"""How a run ended, told by its exit status, its summary and its crawl log (docs/operations.md "Exit
status"): 0 completed, 1 failed, 2 bad arguments, 3 interrupted, 4 an output could not be
written, 5 a limit stopped it early. A write that fails stops the run at once, in one line,
with no traceback; an interrupted run leaves the previous ``state.json`` as it was."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from discovery_crawler.outcomes import EXIT_CODES
from tests.conftest import ROOT, free_port


def _site(root: Path, pages: int) -> Path:
    """A site of ``pages`` pages, each linking the next two (a BFS of some depth)."""
    root.mkdir(parents=True, exist_ok=True)
    for i in range(pages):
        links = "".join(f'<a href="/p/{j}/">p{j}</a>' for j in (2 * i + 1, 2 * i + 2) if j < pages)
        folder = root if i == 0 else root / "p" / str(i)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "index.html").write_text(
            f"<html><head><title>Page {i}</title></head><body>{links}</body></html>"
        )
    return root


def test_a_complete_run_exits_0_and_says_completed(serve, discover, tmp_path):
    server = serve(_site(tmp_path / "site", 30))
    result = discover(server.url("/"), "-a", "mode=links")
    assert result.returncode == EXIT_CODES["completed"] == 0, result.stderr[-2000:]
    assert result.run["status"] == "completed"
    assert len(result.records) == 30


def test_a_limit_that_stops_the_run_exits_5_and_never_says_completed(serve, discover, tmp_path):
    server = serve(_site(tmp_path / "site", 60))
    result = discover(server.url("/"), "-a", "mode=links", "-a", "max_pages=10")
    assert result.returncode == 5, result.stderr[-2000:]
    assert result.run["status"] == "bounded"
    # named as it was given: the -a argument, not the setting behind it
    assert "STOPPED AT A LIMIT (max_pages=10)" in result.stderr
    assert "Limit bound: max_pages (value=10)" in result.stderr
    assert {"limit": "BFS_MAX_PAGES", "value": 10, "given": "max_pages"} in (
        result.discovery["limits"]
    )


def test_a_limit_given_as_a_setting_is_named_by_it(serve, discover, tmp_path):
    server = serve(_site(tmp_path / "site", 60))
    result = discover(server.url("/"), "-a", "mode=links", "-s", "BFS_MAX_PAGES=10")
    assert result.returncode == 5, result.stderr[-2000:]
    assert "STOPPED AT A LIMIT (BFS_MAX_PAGES=10)" in result.stderr


def test_an_unreachable_site_exits_1(discover):
    result = discover(f"http://127.0.0.1:{free_port()}/")
    assert result.returncode == 1
    assert result.run["status"] == "failed"


def test_an_unwritable_out_folder_is_one_line_and_exit_4_before_any_fetch(
    serve, discover, tmp_path
):
    server = serve(_site(tmp_path / "site", 5))
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    result = discover(server.url("/"), out=blocker / "out")
    assert result.returncode == 4
    assert result.stderr.strip().splitlines() == [
        f"error: cannot write to the out folder {blocker / 'out'}: Not a directory (ENOTDIR)"
    ]
    assert server.requests == []  # nothing was crawled


def test_an_unwritable_feed_is_one_line_and_exit_4(serve, tmp_path):
    server = serve(_site(tmp_path / "site", 5))
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    cmd = [sys.executable, "-m", "scrapy", "crawl", "discover", "-a", f"url={server.url('/')}"]
    proc = subprocess.run(
        [*cmd, "-a", f"out={tmp_path / 'out'}", "-O", str(blocker / "feed.jsonl")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 4
    assert "error: cannot write the feed" in proc.stderr
    assert "Not a directory (ENOTDIR)" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert server.requests == []


def test_a_full_disk_stops_the_run_at_once_in_one_line(serve, discover, tmp_path):
    """The feed's disk fills up after 64 KiB: one line naming the file and the error, no
    traceback, the crawl stops (most pages never fetched), exit 4, the crawl log says so."""
    server = serve(_site(tmp_path / "site", 1500))
    probe = [sys.executable, str(ROOT / "tests" / "probes" / "full_disk.py")]
    result = discover(
        server.url("/"), "-a", "mode=links", command=probe, settings={"SITEMAP_CONCURRENCY": 16}
    )
    assert result.returncode == 4, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    failed = [line for line in result.stderr.splitlines() if "OUTPUT FAILED" in line]
    assert len(failed) == 2, failed  # the moment it failed, and the summary's first line
    partial = f"{result.feed}.partial"
    assert f"could not write {partial}: No space left on device (ENOSPC)" in failed[0]
    assert not result.feed.exists()  # never a short feed under the name of a whole one
    assert result.run["status"] == "output_failed"
    assert "ENOSPC" in result.run["write_error"]
    pages = [path for _, path, _ in server.requests if path.startswith("/p/")]
    assert len(pages) < 1000  # it stopped, rather than crawl the whole site on


def test_sigint_exits_3_says_interrupted_and_keeps_the_previous_state(serve, tmp_path):
    server = serve(_site(tmp_path / "site", 2500))
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "scrapy", "crawl", "discover", "-a", f"url={server.url('/')}"]
    cmd += ["-a", "mode=links", "-a", f"out={out}", "-O", str(tmp_path / "feed.jsonl")]
    cmd += ["-s", "HOST_INTERVAL=0", "-s", "PROGRESS_INTERVAL=0"]
    first = subprocess.run([*cmd, "-a", "max_depth=2"], cwd=ROOT, capture_output=True, timeout=120)
    assert first.returncode == 5  # bounded by max_depth: a baseline all the same
    baseline = (out / "state.json").read_bytes()
    proc = subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while len(server.requests) < 200 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 3, stderr[-3000:]
    assert "INTERRUPTED (shutdown): the inventory is partial" in stderr
    run = json.loads((out / "_crawl-log.json").read_text())["runs"][-1]
    assert run["status"] == "interrupted"
    assert (out / "state.json").read_bytes() == baseline  # nothing removed, nothing new


def test_an_unwritable_job_folder_is_one_line_and_exit_4(serve, discover, tmp_path):
    server = serve(_site(tmp_path / "site", 5))
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    result = discover(server.url("/"), settings={"JOBDIR": blocker / "job"})
    assert result.returncode == 4
    assert result.stderr.strip().splitlines() == [
        f"error: cannot write to the job folder (JOBDIR) {blocker / 'job'}: "
        "Not a directory (ENOTDIR)"
    ]
    assert server.requests == []
