"""``discover()`` (the Python API, ``api.py``) end to end: a real crawl in a child process
against a loopback site, called from another working folder, from inside a running
asyncio loop, and its failures raised with the run's one-line message."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from discovery_crawler import BadArguments, Interrupted, RunFailed, discover
from tests.conftest import free_port, serve_pages_sitemap, ssrf_allow

FAST = {"HOST_INTERVAL": 0, "PROGRESS_INTERVAL": 0}
DEAD = {**FAST, "RETRY_BACKOFF_BASE": 0.05, "RETRY_BACKOFF_MAX": 0.2}


@pytest.fixture
def elsewhere(tmp_path, monkeypatch) -> Path:
    """A working folder that is not the project's: no scrapy.cfg above it."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


def test_discover_returns_the_records_from_another_folder(serve, tmp_path, elsewhere):
    url = serve_pages_sitemap(serve, tmp_path / "site", 7)
    result = discover(url, settings=FAST)
    assert result.outcome == "completed" and result.exit_code == 0 and result.complete
    assert sorted(r["url"].rsplit("/", 2)[-2] for r in result) == [f"p-{i}" for i in range(7)]
    assert result.records == list(result)
    assert result.run["status"] == "completed" and result.crawl_log is result.run
    assert result.run["input"]["url"] == url
    assert result.files == {}  # no out: a temporary folder, removed
    assert list(elsewhere.iterdir()) == []  # nothing written where it was called from
    assert "Discovered" in result.log


def test_discover_into_an_out_folder_keeps_its_files(serve, tmp_path, elsewhere):
    url = serve_pages_sitemap(serve, tmp_path / "site", 3)
    out = tmp_path / "out"
    first = discover(url, out=out, settings=FAST)
    assert set(first.files) >= {"inventory.jsonl", "_crawl-log.json", "state.json", "report.html"}
    assert first.files["inventory.jsonl"] == out / "inventory.jsonl"
    assert len(first) == 3
    again = discover(url, out=out, settings=FAST, cap=1)  # a re-run: state.json compares
    assert [r["change"] for r in again] == ["known"] * 3
    assert again.run["selection"]["cap"] == 1
    with pytest.raises(BadArguments) as caught:  # nothing ran: nothing of the last run's
        discover(url, out=out, mode="sideways")
    assert caught.value.result.run is None and list(caught.value.result) == []


def _link_site(root: Path, pages: int) -> None:
    root.mkdir(parents=True)
    links = "".join(f'<a href="/p{i}.html">{i}</a>' for i in range(pages))
    (root / "index.html").write_text(f"<html><body>{links}</body></html>")
    for i in range(pages):
        (root / f"p{i}.html").write_text(f"<html><title>{i}</title></html>")


def test_a_chunked_job_continues_in_its_out_folder(serve, tmp_path, elsewhere):
    """Profile service in chunks of 4 requests: the same call again while the outcome is
    more_to_do; without an out folder the job runs in one go."""
    _link_site(tmp_path / "site", 14)
    url = serve(tmp_path / "site").url("/")
    settings = {**FAST, **ssrf_allow(url)}
    outcomes = []
    for _ in range(10):
        result = discover(
            url, mode="links", profile="service", out=tmp_path / "out",
            settings={**settings, "MAX_CHUNK_PAGES": 4},
        )  # fmt: skip
        outcomes.append(result.outcome)
        if result.outcome != "more_to_do":
            break
    assert outcomes == ["more_to_do"] * (len(outcomes) - 1) + ["completed"]
    assert len(outcomes) == 4  # robots.txt and 15 pages, 4 requests a chunk
    assert len(result) == 15
    whole = discover(url, mode="links", profile="service", settings=settings)
    assert whole.outcome == "completed" and len(whole) == 15


def test_a_limit_is_no_error(serve, tmp_path, elsewhere):
    url = serve_pages_sitemap(serve, tmp_path / "site", 5)
    result = discover(url, settings={**FAST, "SITEMAP_MAX_URLS": 2})
    assert (result.outcome, result.exit_code, len(result)) == ("bounded", 5, 2)


def test_a_bad_argument_raises_with_its_one_line(elsewhere):
    with pytest.raises(BadArguments) as caught:
        discover("https://example.com/", mode="sideways")
    error = caught.value
    assert error.exit_code == 2 and error.outcome is None
    assert str(error).startswith("argument mode: ") and "\n" not in str(error)
    assert "sideways" in str(error)
    assert error.result is not None and list(error.result) == []


def test_a_dead_site_raises_run_failed(elsewhere):
    url = f"http://127.0.0.1:{free_port()}/"
    with pytest.raises(RunFailed) as caught:
        discover(url, mode="sitemap", settings=DEAD)
    error = caught.value
    assert error.exit_code == 1 and error.outcome == "failed"
    assert str(error).startswith("FAILED: ") and "\n" not in str(error)
    assert error.result.run["status"] == "failed"


def test_a_timeout_stops_the_run(serve, tmp_path, elsewhere):
    """A crawl that would take ~24 s (a page per 0.2 s) is asked to stop at the timeout
    and closes as interrupted, its crawl-log entry and partial records kept. (6 s: on a
    loaded machine the child's imports alone took 2.4 s, and a SIGTERM before Scrapy's
    handlers are installed kills it with nothing written. Scrapy's
    graceful stop finishes the requests already in the downloader, each paced by the
    host interval: at 1 s a page it can take longer than ``TERMINATE_GRACE``, and the
    second signal's unclean shutdown writes no crawl-log entry.)"""
    root = tmp_path / "site"
    _link_site(root, 120)
    url = serve(root).url("/")
    slow = {**FAST, "HOST_INTERVAL": 0.2}
    with pytest.raises(Interrupted, match=r"^timed out after 6 s") as caught:
        discover(url, mode="links", settings=slow, timeout=6)
    assert caught.value.exit_code == 3
    result = caught.value.result
    assert result.run["status"] == "interrupted"
    assert 0 < len(result) < 121  # the partial inventory


def test_discover_from_inside_a_running_event_loop(serve, tmp_path, elsewhere):
    url = serve_pages_sitemap(serve, tmp_path / "site", 4)

    async def main() -> tuple[int, int]:
        loop = asyncio.get_running_loop()
        assert loop.is_running()
        direct = discover(url, settings=FAST)  # blocks this loop, does not use it
        threaded = await asyncio.to_thread(discover, url, settings=FAST)
        return len(direct), len(threaded)

    assert asyncio.run(main()) == (4, 4)
