"""Faults survived (issue 16, point 4), end to end: the real ``links`` spider against a
generated site (``tests/outage_site.py``) whose server goes down mid-crawl — its socket
closed, or answering 503 — and comes back. Nothing is lost, the down host is paused as a
whole and probed one request at a time, and the crawl log and the summary say what was
retried; what still fails is a refusal with its class. Back-off settings are small here
(the harness's are 0.05 s … 0.2 s); the 20 s outage with the project's defaults is the
``slow`` test at the end."""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from discovery_crawler import settings as project
from tests.conftest import CrawlResult, run_discover
from tests.outage_site import OutageSite, page_path

JITTER = 0.05  # seconds of scheduling noise allowed below a pause


def crawl(site: OutageSite, tmp_path: Path, timeout: float = 240, **settings: Any) -> CrawlResult:
    result = run_discover(
        site.url("/"), tmp_path, spider="links", settings=settings, timeout=timeout
    )
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    return result


def fetched(result: CrawlResult) -> set[str]:
    return {r["url"] for r in result.records if r["status"] == 200 and r["refusal"] is None}


def check_nothing_lost(result: CrawlResult, site: OutageSite) -> dict[str, Any]:
    assert result.returncode == 0, result.stderr[-3000:]
    assert fetched(result) == site.page_urls(), sorted(site.page_urls() - fetched(result))[:10]
    assert len(result.records) == len(site.page_urls())
    assert result.run["refusals"]["total"] == 0
    retries = result.run["retries"]
    assert retries["retries"] >= 1 and retries["failed_after_retries"]["count"] == 0
    assert retries["recovered"] == retries["requests_retried"]
    assert sum(retries["by_reason"].values()) == retries["retries"]
    assert retries["host_pauses"] >= 2  # it kept failing: paused more than once
    summary = re.search(r"Retried (\d+) requests? \(([\d,]+) retr", result.stderr)
    assert summary is not None, result.stderr[-3000:]
    assert int(summary.group(2).replace(",", "")) == retries["retries"]
    assert f"{retries['recovered']} recovered, 0 failed after retries" in result.stderr
    return retries


def test_a_host_down_mid_crawl_loses_no_page(tmp_path):
    """The only host's socket is closed for 3 s after 100 of its 400 pages (connections
    refused, open ones reset): every page is in the feed in the end, nothing is a refusal,
    and the pauses (0.5 s, 1 s, 2 s…) spanned the outage instead of each queued page
    burning its retries on the closed port."""
    with OutageSite(pages=400, fanout=2, down_after=100, down_for=3.0) as site:
        result = crawl(site, tmp_path, RETRY_BACKOFF_BASE=0.5, RETRY_BACKOFF_MAX=2)
    retries = check_nothing_lost(result, site)
    assert set(retries["by_reason"]) & {"connection refused", "connection reset"}
    assert retries["host_pause_seconds"] >= 3.0 - JITTER
    # the requests on their way when it went down, then one probe per pause: not hundreds
    assert retries["retries"] <= 30, retries
    assert retries["settings"] == {
        "times": project.RETRY_TIMES,
        "backoff_base": 0.5,
        "backoff_max": 2.0,
        "http_codes": [408, 429, 500, 502, 503, 504, 522, 524],
    }
    host = result.run["throttle"]["hosts"]["127.0.0.1"]
    assert host["paused"] == retries["host_pauses"] and host["given_up"] == 0
    assert "127.0.0.1 answers again after" in result.stderr


def test_a_host_answering_503_is_paused_and_probed_one_request_at_a_time(tmp_path):
    """While the server answers 503 (3 s), what reaches it is the burst already on its way,
    then one request per pause, each pause longer than the last; then the crawl goes on and
    loses nothing."""
    with OutageSite(pages=200, fanout=2, down_after=60, down_for=3.0, how="503") as site:
        result = crawl(site, tmp_path, RETRY_BACKOFF_BASE=0.5, RETRY_BACKOFF_MAX=2)
    retries = check_nothing_lost(result, site)
    assert set(retries["by_reason"]) == {"503 Service Unavailable"}
    down = sorted(t for t, _, status in site.requests if status == 503)
    burst = [t for t in down if t - down[0] < 0.3]
    probes = [t for t in down if t - down[0] >= 0.3]
    assert len(burst) <= project.CONCURRENT_REQUESTS, down  # sent before it went down
    # Probes come one per pause. Under load a retry scheduled as a pause ends may leave with
    # its probe (two within a few ms): they count as one probe of that pause.
    rounds: list[list[float]] = []
    for t in probes:
        if rounds and t - rounds[-1][0] < 0.1:
            rounds[-1].append(t)
        else:
            rounds.append([t])
    assert 1 <= len(rounds) <= 4, [t - down[0] for t in down]
    assert all(len(r) <= 2 for r in rounds), [t - down[0] for t in down]
    starts = [r[0] for r in rounds]
    gaps = [b - a for a, b in pairwise([down[0], *starts])]  # the first failure paused it
    pauses = [min(0.5 * 2**n, 2.0) for n in range(len(gaps))]  # 0.5 s, 1 s, 2 s, 2 s
    assert all(gap >= pause - JITTER for gap, pause in zip(gaps, pauses, strict=True)), gaps
    assert len(down) == retries["retries"]  # every 503 was retried, once its host waited


def test_what_fails_after_its_retries_is_a_refusal_with_its_class(tmp_path):
    """A page answering 500 every time is retried RETRY_TIMES times, then recorded as a
    ``server_error`` refusal that says so, and listed in the crawl log; a page answering 503
    twice is retried and fetched. The page not read makes the run incomplete (exit 7)."""
    with OutageSite(pages=30, broken=("/broken/",), flaky={"/flaky/": 2}) as site:
        result = crawl(site, tmp_path)
    assert result.returncode == 7, result.stderr[-3000:]
    assert result.run["status"] == "incomplete"
    assert result.run["not_read"]["by_class"] == {"server_error": 1}
    assert "INCOMPLETE: 1 page failed after retries (server_error 1)" in result.stderr
    records = {r["url"]: r for r in result.records}
    broken, flaky = records[site.url("/broken/")], records[site.url("/flaky/")]
    assert broken["status"] == 500 and broken["refusal"]["class"] == "server_error"
    times = project.RETRY_TIMES
    assert broken["refusal"]["reason"] == (
        f"500 Internal Server Error: the server failed (after {times} retries)"
    )
    assert site.count("/broken/") == times + 1
    assert flaky["status"] == 200 and flaky["refusal"] is None and site.count("/flaky/") == 3
    assert fetched(result) == site.page_urls() - {site.url("/broken/")}
    retries = result.run["retries"]
    assert retries["by_reason"] == {
        "500 Internal Server Error": times,
        "503 Service Unavailable": 2,
    }
    assert retries["failed_after_retries"]["requests"] == [
        {"url": site.url("/broken/"), "reason": "500 Internal Server Error", "retries": times}
    ]
    assert retries["recovered"] == 1 and retries["hosts_given_up"] == {}
    assert result.run["refusals"]["counts"]["server_error"] == 1
    assert "1 recovered, 1 failed after retries (1 × 500 Internal Server Error)" in result.stderr
    assert "Refusals (1): 1 server_error" in result.stderr


def test_a_host_down_for_good_is_given_up_and_its_pages_are_network_refusals(tmp_path):
    """The server never comes back: after RETRY_TIMES + 1 failures in a row (through
    RETRY_TIMES pauses) the host is given up, and every page it had been asked for is in
    the feed as a ``network`` refusal — none silently missing."""
    with OutageSite(pages=100, fanout=2, down_after=20, down_for=600) as site:
        result = crawl(site, tmp_path, timeout=120, RETRY_TIMES=3)
    records = {r["url"]: r for r in result.records}
    ok = fetched(result)
    assert 20 <= len(ok) < 100
    refused = {url for url, r in records.items() if r["refusal"] is not None}
    assert refused and {records[u]["refusal"]["class"] for u in refused} == {"network"}
    assert ok | refused == set(records)
    # every page a fetched page links to was asked for, so it has a record
    linked = {
        site.url(page_path(c))
        for i in range(site.pages)
        if site.url(page_path(i)) in ok
        for c in range(2 * i + 1, min(2 * i + 3, site.pages))
    }
    assert linked <= set(records), sorted(linked - set(records))[:5]
    retries = result.run["retries"]
    assert retries["hosts_given_up"] == {"127.0.0.1": 4}
    assert retries["failed_after_retries"]["count"] == len(refused)
    assert result.run["refusals"]["counts"]["network"] == len(refused)
    assert "127.0.0.1 failed 4 times in a row" in result.stderr and "given up" in result.stderr
    assert "gave up on 127.0.0.1 after 4 failures in a row" in result.stderr
    assert result.returncode == 7 and result.run["not_read"]["by_class"] == {
        "network": len(refused)
    }


@pytest.mark.slow
def test_a_20_second_outage_of_the_only_host_loses_no_page(tmp_path):
    """Issue 16: the only host down for 20 s mid-crawl, with the project's retry settings
    (RETRY_TIMES, RETRY_BACKOFF_BASE, RETRY_BACKOFF_MAX): no page is lost."""
    with OutageSite(pages=400, fanout=2, down_after=100, down_for=20.0) as site:
        result = crawl(
            site,
            tmp_path,
            RETRY_TIMES=project.RETRY_TIMES,
            RETRY_BACKOFF_BASE=project.RETRY_BACKOFF_BASE,
            RETRY_BACKOFF_MAX=project.RETRY_BACKOFF_MAX,
        )
    retries = check_nothing_lost(result, site)
    assert retries["host_pause_seconds"] >= 20.0
    assert retries["retries"] <= 40, retries
