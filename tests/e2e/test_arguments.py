"""A wrong spider argument on the command line: one line on stderr, exit status 2."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT, run_discover


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([], "argument url: missing"),
        (["-a", "url=https://x.com", "-a", "mode=bogus"], "expected one of auto, sitemap"),
        (["-a", "url=https://x.com", "-a", "profile=nope"], "default, massive, polite"),
        (["-a", "url=https://x.com", "-a", "verify=1", "-a", "mode=links"], "mode=links reads"),
        (["-a", "url=https://x.com", "-a", "verify=1", "-s", "VERIFY_METHOD=PUT"], "HEAD or"),
    ],
)
def test_cli_bad_argument_one_line_exit_2(args, expected, tmp_path):
    """A wrong argument: one line on stderr, status 2, no traceback, no crawl started."""
    proc = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "discover", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: argument ")
    assert expected in lines[0]


LONG_PATH = "/" + "a" * 2_100


@pytest.mark.parametrize(
    ("spider", "args", "expected"),
    [
        (
            "discover",
            ["-a", "url=http://127.0.0.1:0/"],
            "argument url: port 0 in 'http://127.0.0.1:0/' is no port a site is served on;",
        ),
        (
            "links",
            ["-a", f"url=https://example.com{LONG_PATH}"],
            "characters long, over URLLENGTH_LIMIT: 2,083 (Scrapy's default",
        ),
        (
            "discover",
            ["-a", f"url=https://example.com{LONG_PATH}", "-s", "URLLENGTH_LIMIT=1000"],
            "is 2,120 characters long, over URLLENGTH_LIMIT: 1,000; Scrapy sends no request",
        ),
        (
            "estimate",
            ["-a", f"url=https://example.com{LONG_PATH}"],
            "characters long, over URLLENGTH_LIMIT: 2,083",
        ),
    ],
    ids=["port-0", "long-links", "long-own-limit", "long-estimate"],
)
def test_a_url_no_request_could_fetch_is_a_bad_argument(spider, args, expected, tmp_path):
    """Port 0, or a URL longer than URLLENGTH_LIMIT (Scrapy would drop its request and the
    run end as "site unreachable"): one line, status 2, before Scrapy starts."""
    proc = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", spider, "-a", f"out={tmp_path}/out", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: argument url: "), proc.stderr
    assert expected in lines[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("spider", ["discover", "links", "estimate"])
def test_credentials_in_the_url_are_refused_and_written_nowhere(spider, tmp_path):
    """``user:password@`` in the start URL: one line, status 2, the password in neither
    stdout nor stderr, no crawl log or feed written (the crawl never started), and in
    the log file only the refusal — with LOG_FILE set, as a deployment would."""
    secret = "s3cret-Pa55"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "scrapy",
            "crawl",
            spider,
            "-a",
            f"url=https://alice:{secret}@127.0.0.1:9/docs/",
            "-a",
            f"out={tmp_path}/out",
            "-O",
            str(tmp_path / "inventory.jsonl"),
            "-s",
            f"LOG_FILE={tmp_path}/crawl.log",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.strip() == (
        "error: argument url: credentials in the URL (https://***@127.0.0.1:9/docs/) are not "
        "supported: the crawler sends no user name or password (and writes none to its log "
        "or files); give the URL without them"
    )
    assert secret not in proc.stdout + proc.stderr and "alice" not in proc.stderr
    # no feed, no out folder; the log file holds the refusal alone (a Scrapyd job's log
    # says why the job ended), with the credentials masked as on stderr
    assert [p.name for p in tmp_path.iterdir()] == ["crawl.log"]
    log = (tmp_path / "crawl.log").read_text(encoding="utf-8")
    assert f" ERROR: {proc.stderr.strip()}\n" in log
    assert secret not in log and "alice" not in log


def test_a_long_url_under_a_raised_urllength_limit_is_crawled(serve, tmp_path):
    """``-s URLLENGTH_LIMIT=5000`` lets a 2,100-character seed through: it is requested
    and recorded (the check follows the setting, as Scrapy's middleware does)."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "long.html").write_text("<html><title>Long</title></html>")
    server = serve(site)
    seed = server.url("/long.html?q=" + "a" * 2_100)
    result = run_discover(seed, tmp_path, spider="links", settings={"URLLENGTH_LIMIT": 5000})
    assert result.returncode == 0, result.stderr[-2000:]
    assert [(r["url"], r["status"], r["title"]) for r in result.records] == [(seed, 200, "Long")]


@pytest.mark.parametrize(
    ("args", "outcome", "status"),
    [
        (["-a", "max_pages=-1"], "bad_arguments", 2),
        (["-a", "out=/proc/not-writable"], "output_failed", 4),
    ],
)
def test_a_refused_run_writes_its_line_and_outcome_to_log_file(args, outcome, status, tmp_path):
    """With ``LOG_FILE`` (a Scrapyd job's log) the one line goes there too, with the outcome
    as a run's stats give it; stderr keeps its one line."""
    log = tmp_path / "logs" / "job.log"
    result = run_discover(
        "https://example.com/", tmp_path, "-s", f"LOG_FILE={log}", *args, feed=None
    )
    assert result.returncode == status, result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: ")
    text = log.read_text(encoding="utf-8")
    assert f" ERROR: {line}\n" in text
    assert f"(exit status {status}): {{'discovery/outcome': '{outcome}'}}\n" in text


@pytest.mark.parametrize(
    ("spider", "setting", "expected"),
    [
        ("discover", "HOST_INTERVAL=abc", "-s HOST_INTERVAL=abc: expected a number"),
        ("links", "CONCURRENT_REQUESTS=many", "=many: expected a number, e.g. -s"),
        (
            "discover",
            "ROBOTSTXT_OBEY=maybe",
            "-s ROBOTSTXT_OBEY=maybe: expected True or False (or 1 or 0)",
        ),
        ("discover", "HOST_INTERVAL_OVERRIDES=[1", "expected a JSON object"),
    ],
)
def test_cli_bad_setting_value_one_line_exit_2(spider, setting, expected, tmp_path):
    """A ``-s`` value its setting cannot take (Scrapyd's ``setting=`` too) is said in one
    line naming it, exit 2, nothing written — it was two tracebacks (the crawl's start,
    then ``Crawler.stats is not set yet``) and exit 1."""
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "scrapy", "crawl", spider, "-a", "url=http://127.0.0.1:9/"]
    proc = subprocess.run(
        [*cmd, "-a", f"out={out}", "-s", setting],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines == [lines[0]] and lines[0].startswith(f"error: -s {setting}: expected "), (
        proc.stderr[-2000:]
    )
    assert expected in lines[0]
    assert not out.exists()
