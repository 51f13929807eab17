"""The chunk middleware (``middlewares/chunk.py``) in-process: ``MAX_CHUNK_PAGES`` requests
reach the network, the next one stops the run and goes back unsent, robots.txt fetches
always pass, and it is off without a limit or a job. End to end (a 300-page site in
chunks): ``tests/e2e/test_service.py``."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse

from discovery_crawler.extensions.job import ResumableJob
from discovery_crawler.extensions.run import DiscoveryRun, run_of
from discovery_crawler.middlewares.chunk import ChunkMiddleware
from discovery_crawler.middlewares.journal import REPLAYED
from discovery_crawler.outcomes import CHUNK_DONE_REASON, MORE_TO_DO
from tests.conftest import free_port, run_crawler

U = f"http://127.0.0.1:{free_port()}"  # nothing listens: never reached


def build(tmp_path: Any, job: bool = True, **settings: Any) -> tuple[Any, list[str]]:
    """(middleware, the reasons the run was asked to stop with)."""
    extensions: dict[Any, int] = {DiscoveryRun: 0}
    if job:
        extensions[ResumableJob] = 1
        settings.setdefault("DISCOVERY_JOBDIR", str(tmp_path / "job"))
    crawler = run_crawler(url=f"{U}/", settings={"EXTENSIONS": extensions, **settings})
    stops: list[str] = []
    run_of(crawler).stop = stops.append
    return ChunkMiddleware.from_crawler(crawler), stops


def test_the_first_max_chunk_pages_pass_then_the_run_stops(tmp_path):
    mw, stops = build(tmp_path, MAX_CHUNK_PAGES=3)
    sent = [mw.process_request(Request(f"{U}/p/{i}")) for i in range(3)]
    assert sent == [None, None, None] and not stops
    held = mw.process_request(Request(f"{U}/p/3"))
    assert isinstance(held, Request) and held.url == f"{U}/p/3"
    assert held.dont_filter  # back to the scheduler, not filtered as seen
    assert stops == [CHUNK_DONE_REASON]
    assert isinstance(mw.process_request(Request(f"{U}/p/4")), Request)
    assert stops == [CHUNK_DONE_REASON]  # asked once
    record = mw.run.record
    expected = {"max_pages": 3, "fetched": 3, "held": 2, "answered": 0, "more_to_do": True}
    assert record.chunk == expected
    assert mw.crawler.stats.get_value("chunk/fetched") == 3
    assert mw.crawler.stats.get_value("chunk/held") == 2
    assert record.as_dict()["chunk"]["more_to_do"] is True
    record.start_judging(CHUNK_DONE_REASON)
    assert record.outcome == MORE_TO_DO


def test_a_chunk_that_needs_no_more_requests_is_no_stop(tmp_path):
    mw, stops = build(tmp_path, MAX_CHUNK_PAGES=2)
    assert [mw.process_request(Request(f"{U}/p/{i}")) for i in range(2)] == [None, None]
    assert not stops and mw.run.record.chunk["more_to_do"] is False


def test_robots_fetches_always_pass(tmp_path):
    """The robots middleware fetches with ``engine.download``: no scheduler to go back to."""
    mw, stops = build(tmp_path, MAX_CHUNK_PAGES=1)
    assert mw.process_request(Request(f"{U}/")) is None
    robots = Request(f"{U}/robots.txt", meta={"robots_fetch": True})
    assert mw.process_request(robots) is None
    assert not stops and mw.run.record.chunk["fetched"] == 2


@pytest.mark.parametrize(("chunk", "job"), [(0, True), (5, False)], ids=["no-limit", "no-job"])
def test_off_without_a_limit_or_a_job(tmp_path, chunk, job):
    with pytest.raises(NotConfigured):
        build(tmp_path, job=job, MAX_CHUNK_PAGES=chunk)


def test_responses_from_the_network_are_counted_replayed_ones_not(tmp_path):
    """``answered``: 0 at the end of a chunk means the site gave no answer at all."""
    mw, _ = build(tmp_path, MAX_CHUNK_PAGES=3)
    request = Request(f"{U}/p/0")
    mw.process_response(request, HtmlResponse(f"{U}/p/0", flags=[REPLAYED]))
    assert mw.run.record.chunk["answered"] == 0
    mw.process_response(request, HtmlResponse(f"{U}/p/0"))
    assert mw.run.record.chunk["answered"] == 1
