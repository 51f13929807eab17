"""Profile ``service``'s bounded chunks under faults (issue 17 points 2 and 3): a second
invocation of a job that is running is refused in one line (exit 8, busy) rather than fetching
the same pages again beside it; a job started again with other arguments abandons the
unfinished one, its lines in an appended (``-o``) feed with it, so the two never mix; a
chunk's first request waits the host's interval (a Crawl-delay) from the last request of
the chunk before, as chunks run back to back; a preview of a run a limit stopped says
which limit; a chunk while the site is down says so, and the job goes on when it is back."""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections import Counter

from discovery_crawler.outcomes import BUSY, EXIT_CODES
from discovery_crawler.site_server import SiteServer
from tests.conftest import ROOT, serve_pages_sitemap
from tests.e2e.test_service import (
    MORE_TO_DO,
    crawl_log_runs,
    feed,
    gaps,
    preview,
    run,
    service_command,
    small_site,
    tree_site,
)


def test_a_second_invocation_of_a_running_job_is_refused(serve, tmp_path):
    """Chunk 1 runs (2 s between requests); a second invocation of the same job started
    meanwhile is refused in one line naming the holder, exit 8 (busy), having sent nothing
    (its out folder is held, and the job folder in it); the first one goes on,
    and the job, run on, fetches no page twice."""
    server = serve(tree_site(tmp_path / "site", 20))
    out = tmp_path / "out"
    cmd = service_command(server.url("/"), out, "-a", "mode=links", "-s", "MAX_CHUNK_PAGES=3")
    slow = [*cmd, "-s", "HOST_INTERVAL=2"]
    first = subprocess.Popen(slow, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not server.requests and first.poll() is None:  # it holds the job by now
        assert time.monotonic() < deadline
        time.sleep(0.02)
    before = len(server.requests)
    second = run(cmd)
    assert second.returncode == BUSY, second.stderr[-3000:]
    (line,) = second.stderr.strip().splitlines()
    assert re.fullmatch(
        rf"error: {re.escape(str(out))} is in use by another run \(pid {first.pid}, started "
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\); nothing was touched \(exit 8\)",
        line,
    ), line
    # the second sent none: any run asks robots.txt first (and the first run never asks a
    # path twice); a count of requests would depend on how long the second took to start
    paths = Counter(path for _, path, _ in server.requests)
    assert paths["/robots.txt"] == 1 and max(paths.values()) == 1, server.requests[before:]
    first.communicate(timeout=120)
    assert first.returncode == MORE_TO_DO
    for _ in range(10):
        if run(cmd).returncode != MORE_TO_DO:
            break
    fetched = Counter(path for _, path, _ in server.requests)
    assert len(fetched) == 21 and max(fetched.values()) == 1  # robots.txt and 20 pages


def test_other_arguments_abandon_the_unfinished_job_and_its_feed_lines(serve, tmp_path):
    """Two chunks into ``-o`` feed lines, then the command with another ``max_pages``:
    a new job, and the feed holds its lines only (none of the abandoned job's, none twice),
    said in the crawl log."""
    server = serve(tree_site(tmp_path / "site", 40))
    out, lines = tmp_path / "out", tmp_path / "append.jsonl"
    lines.write_text('{"url": "kept: the file before the job"}\n')
    base = service_command(server.url("/"), out, "-a", "mode=links", "-s", "MAX_CHUNK_PAGES=4")
    base = [*base[: base.index("-O")], *base[base.index("-O") + 2 :], "-o", str(lines)]
    for _ in range(2):
        assert run(base).returncode == MORE_TO_DO
    other = run([*base, "-a", "max_pages=30"])
    assert other.returncode == MORE_TO_DO, other.stderr[-3000:]
    urls = [json.loads(line)["url"] for line in lines.read_text().splitlines()]
    assert urls[0] == "kept: the file before the job"
    assert len(urls) == len(set(urls)) == 1 + 3  # the new job's first chunk: 3 pages
    job = crawl_log_runs(out)[-1]["job"]
    assert job["resumed"] is False and job["invocation"] == 1
    assert job["abandoned_job"]["invocations"] == 2
    assert "max_pages" not in job["abandoned_job"]["arguments"]


def test_a_chunk_waits_the_crawl_delay_from_the_chunk_before(serve, tmp_path):
    """Crawl-delay 2, chunks of 2 requests: the next invocation, started at once, sends
    its first request 2 s after the last one of the chunk before, not at its start-up."""
    robots = "User-agent: *\nCrawl-delay: 2\nAllow: /\n"
    server = serve(small_site(tmp_path / "site", robots))
    out = tmp_path / "out"
    cmd = service_command(
        server.url("/"), out, "-a", "mode=links", "-s", "MAX_CHUNK_PAGES=2", interval=None
    )
    codes = [run(cmd).returncode for _ in range(2)]
    assert codes == [MORE_TO_DO, 0]
    assert len(server.requests) == 4  # robots.txt and 3 pages, none twice
    assert min(gaps(server)[1:]) >= 1.95, gaps(server)


def test_a_preview_stopped_by_a_limit_says_which(serve, tmp_path):
    """A sitemap of 1,500 URLs: 1,000 kept (exit 5) and the preview, status 1, says the
    inventory stopped at SITEMAP_MAX_URLS."""
    url = serve_pages_sitemap(serve, tmp_path / "site", 1_500)
    out = tmp_path / "out"
    result = run(service_command(url, out))
    assert result.returncode == EXIT_CODES["bounded"], result.stderr[-3000:]
    data = preview(out)
    assert data["status"] == 1 and len(data["pages"]) == 1_000
    assert data["warnings"] == [
        "stopped at a limit (SITEMAP_MAX_URLS: value=1000, kept=1000, seen=1500): complete "
        "up to it only"
    ]


def test_a_chunk_while_the_site_is_down_says_so_and_the_job_goes_on(tmp_path):
    """Chunk 1 answered; the server down for chunk 2 (exit 6, nothing journaled: its
    preview warns that no request got an answer); back for the rest: the job completes
    with all 40 pages, none fetched twice, and no warning left."""
    root = tree_site(tmp_path / "site", 40)
    out = tmp_path / "out"
    with SiteServer(root) as server:
        cmd = service_command(server.url("/"), out, "-a", "mode=links", "-s", "RETRY_TIMES=1")
        assert run(cmd).returncode == MORE_TO_DO
        assert preview(out)["warnings"] == []
    down = run(cmd)
    assert down.returncode == MORE_TO_DO, down.stderr[-3000:]
    [warning] = preview(out)["warnings"]
    assert warning.startswith("no request of this chunk got an answer (") and "down" in warning
    assert crawl_log_runs(out)[-1]["chunk"]["answered"] == 0
    with SiteServer(root, port=server.port) as again:
        for _ in range(10):
            result = run(cmd)
            if result.returncode != MORE_TO_DO:
                break
            assert preview(out)["warnings"] == []
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(feed(out)) == 40
    fetched = Counter(path for _, path, _ in server.requests + again.requests)
    assert len(fetched) == 41 and max(fetched.values()) == 1  # robots.txt and 40 pages
