"""``scrapy rediscover`` (issue 34 point 2): a sites file discovered again, each site into
``ROOT/<host>/`` in its own process, one line per site, and exit statuses a scheduler
reads — run twice against local sites that change in between; a dead site among good
ones; a bad file refused by line number before anything runs; a root or a site held by
another run; a SIGTERM passed on to the running site."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from discovery_crawler.outcomes import BUSY
from tests.conftest import ROOT, free_port
from tests.e2e.test_folder_lock import holding
from tests.e2e.test_service import tree_site

FAST = (
    "HOST_INTERVAL=0",
    "PROGRESS_INTERVAL=0",
    "RETRY_BACKOFF_BASE=0.05",
    "RETRY_BACKOFF_MAX=0.2",
)


def listed_site(root: Path, pages: list[int]) -> Path:
    """A site whose sitemap lists ``/p-N/`` for ``pages`` (each page exists)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "robots.txt").write_text("User-agent: *\nAllow: /\nSitemap: /sitemap.xml\n")
    (root / "index.html").write_text("<html><body>home</body></html>")
    for n in pages:
        (root / f"p-{n}").mkdir(exist_ok=True)
        (root / f"p-{n}" / "index.html").write_text(f"<html><body>page {n}</body></html>")
    locs = "".join(f"<url><loc>/p-{n}/</loc></url>" for n in pages)
    (root / "sitemap.xml").write_text(
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'
    )
    return root


def folder(url: str) -> str:
    return url.split("//")[1].strip("/").replace(":", "_")


def rediscover(sites: Path, root: Path, *extra: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "scrapy", "rediscover", str(sites), "--root", str(root)]
    for setting in FAST:
        cmd += ["-s", setting]
    return subprocess.run(
        [*cmd, *extra], cwd=ROOT, capture_output=True, text=True, timeout=300, **kw
    )


def lines_by_site(stdout: str) -> dict[str, str]:
    found = {}
    for line in stdout.splitlines():
        name, colon, rest = line.partition(": ")
        if colon and name != "rediscover":
            found[name] = rest
    return found


def test_twice_against_sites_that_change_in_between(serve, tmp_path):
    """Two sites, one line each, exit 0; then site A loses a page and gains two, B stays:
    the second run says A's 2 new and 1 removed, B's nothing new; --parallel 2 too."""
    a = serve(listed_site(tmp_path / "a", [1, 2, 3]))
    b = serve(listed_site(tmp_path / "b", [1, 2]))
    sites, root = tmp_path / "sites.txt", tmp_path / "root"
    sites.write_text(
        f"# two local sites\n{a.url('/')}\n\n{b.url('/')}  mode=sitemap   # B, sitemap only\n"
    )
    first = rediscover(sites, root)
    assert first.returncode == 0, first.stdout + first.stderr[-3000:]
    said = lines_by_site(first.stdout)
    assert said == {
        folder(a.url("/")): "completed (exit 0), 3 URLs, first run",
        folder(b.url("/")): "completed (exit 0), 2 URLs, first run",
    }, first.stdout
    assert first.stdout.splitlines()[-1] == "rediscover: 2 site(s), 2 done, 0 not; exit 0"
    assert (root / folder(a.url("/")) / "inventory.jsonl").is_file()
    assert (root / "_logs" / f"{folder(b.url('/'))}.log").stat().st_size > 0

    listed_site(tmp_path / "a", [2, 3, 4, 5])  # p-1 gone from the sitemap, 4 and 5 new
    second = rediscover(sites, root, "--parallel", "2")
    assert second.returncode == 0, second.stdout + second.stderr[-3000:]
    assert lines_by_site(second.stdout) == {
        folder(a.url("/")): "completed (exit 0), 4 URLs, 2 new, 1 removed, 0 changed",
        folder(b.url("/")): "completed (exit 0), 2 URLs, 0 new, 0 removed, 0 changed",
    }, second.stdout


def test_a_dead_site_fails_alone_and_the_others_run(serve, tmp_path):
    good = serve(listed_site(tmp_path / "good", [1]))
    dead = f"http://127.0.0.1:{free_port()}/"
    sites, root = tmp_path / "sites.txt", tmp_path / "root"
    sites.write_text(f"{dead}\n{good.url('/')}\n")
    result = rediscover(sites, root)
    assert result.returncode == 1, result.stdout + result.stderr[-3000:]
    said = lines_by_site(result.stdout)
    assert said[folder(good.url("/"))] == "completed (exit 0), 1 URL, first run"
    log = root / "_logs" / f"{folder(dead)}.log"
    assert re.fullmatch(
        r"failed \(exit 1\), 0 URLs, first run: site unreachable: .*refused.* "
        rf"\(log: {re.escape(str(log))}\)",
        said[folder(dead)],
    ), said
    assert result.stdout.splitlines()[-1] == "rediscover: 2 site(s), 1 done, 1 not; exit 1"


def test_a_bad_sites_file_is_refused_by_line_and_nothing_runs(tmp_path):
    sites, root = tmp_path / "sites.txt", tmp_path / "root"
    sites.write_text(
        "https://example.com/\nexample.org\nhttps://example.net/ mode=bogus\n"
        "https://example.com/sitemap.xml\n"
    )
    result = rediscover(sites, root)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"error: {sites}:2: 'example.org' is not a site URL (http:// or https:// and a host)",
        f"error: {sites}:3: argument mode: 'bogus' is not a mode; expected one of auto, "
        "sitemap, links, union",
        f"error: {sites}:4: runs into example.com/ as line 1 does; keep one",
    ]
    assert result.stdout == "" and not root.exists()
    missing = rediscover(tmp_path / "nope.txt", root)
    assert missing.returncode == 2 and not root.exists()
    assert missing.stderr.splitlines() == [
        f"error: cannot read the sites file {tmp_path / 'nope.txt'}: No such file or directory"
    ]


def test_a_held_root_or_site_is_busy(serve, tmp_path):
    """A rediscover holding the root refuses a second one (exit 8, naming it, no site
    run); a site whose folder another run holds says busy, the others run, exit 1."""
    slow = serve(tree_site(tmp_path / "slow", 12))
    quick = serve(listed_site(tmp_path / "quick", [1]))
    sites, root = tmp_path / "sites.txt", tmp_path / "root"
    sites.write_text(f"{slow.url('/')}\n{quick.url('/')}\n")
    cmd = [sys.executable, "-m", "scrapy", "rediscover", str(sites), "--root", str(root)]
    first = subprocess.Popen(
        [*cmd, "-s", "HOST_INTERVAL=1"], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    holding(slow, first)
    second = rediscover(sites, root)
    assert second.returncode == BUSY and second.stdout == ""
    assert re.fullmatch(
        rf"error: {re.escape(str(root))} is in use by another run \(pid {first.pid}, "
        rf"started [0-9T:Z-]+\); nothing was touched \(exit 8\)",
        second.stderr.strip(),
    ), second.stderr
    first.send_signal(signal.SIGTERM)  # passed on to the slow site; the quick one never starts
    out, _ = first.communicate(timeout=120)
    assert first.returncode == 3, out
    said = lines_by_site(out)
    assert said[folder(quick.url("/"))] == "not run (rediscover was stopped)"
    assert said[folder(slow.url("/"))].startswith("interrupted (exit 3)"), out

    # A plain run holds the slow site's folder: that site is busy, the other one runs.
    plain = subprocess.Popen(
        [
            *(sys.executable, "-m", "scrapy", "crawl", "discover", "-a", f"url={slow.url('/')}"),
            *("-a", f"out={root / folder(slow.url('/'))}", "-s", "HOST_INTERVAL=1"),
        ],
        cwd=ROOT,
        stderr=subprocess.DEVNULL,
    )
    slow.requests.clear()
    holding(slow, plain)
    result = rediscover(sites, root)
    plain.send_signal(signal.SIGINT)
    plain.wait(timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    said = lines_by_site(result.stdout)
    assert said[folder(quick.url("/"))] == "completed (exit 0), 1 URL, first run"
    assert said[folder(slow.url("/"))].startswith(
        f"busy (exit {BUSY}): {root / folder(slow.url('/'))} is in use by another run "
        f"(pid {plain.pid}, "
    ), said


def test_sigterm_stops_the_running_sites_once(serve, tmp_path):
    """Two sites at once, SIGTERM to rediscover: both stop as after one SIGTERM (their
    crawl-log entries written, interrupted), exit 3, within the time of a clean stop."""
    a = serve(tree_site(tmp_path / "a", 12))
    b = serve(tree_site(tmp_path / "b", 12))
    sites, root = tmp_path / "sites.txt", tmp_path / "root"
    sites.write_text(f"{a.url('/')}\n{b.url('/')}\n")
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "scrapy", "rediscover", str(sites), "--root", str(root)),
            *("--parallel", "2", "-s", "HOST_INTERVAL=1"),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    holding(a, proc)
    holding(b, proc)
    began = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 3, out
    said = lines_by_site(out)
    assert all(said[folder(s.url("/"))].startswith("interrupted (exit 3), ") for s in (a, b)), out
    assert time.monotonic() - began < 60


def test_a_killed_rediscover_stops_its_site_and_the_next_one_takes_over(serve, tmp_path):
    """kill -9 rediscover: its running site is told to stop (SIGTERM) and writes its
    crawl-log entry (interrupted) rather than run on unwatched; the next rediscover takes
    the root's lock over, saying so, and completes."""
    site = serve(tree_site(tmp_path / "site", 12))
    sites, root = tmp_path / "sites.txt", tmp_path / "root"
    sites.write_text(f"{site.url('/')}\n")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "scrapy",
            "rediscover",
            str(sites),
            "--root",
            str(root),
            "-s",
            "HOST_INTERVAL=1",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )
    holding(site, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    log = root / folder(site.url("/")) / "_crawl-log.json"
    deadline = time.monotonic() + 60
    while not log.exists():  # the site's run stops on its own and writes its entry
        assert time.monotonic() < deadline
        time.sleep(0.1)
    again = rediscover(sites, root)
    assert again.returncode == 0, again.stdout + again.stderr
    assert re.fullmatch(
        rf"warning: took over the lock of {re.escape(str(root))} from a run that is gone "
        rf"\(pid {proc.pid}, started [0-9T:Z-]+\)",
        again.stderr.strip(),
    ), again.stderr
    runs = json.loads(log.read_text())["runs"]
    assert [r["status"] for r in runs] == ["interrupted", "completed"]
