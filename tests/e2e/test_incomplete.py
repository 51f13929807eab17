"""A run that could not read a source is never "completed" (issue 34, point 5): a sitemap
answering 5xx, a server down during the sitemap phase or the link crawl make the run
``incomplete`` (exit 7) — ``failed`` (exit 1) when nothing of the site was read — with the
summary and the crawl log's ``not_read`` saying what; a listed child answering 404 is the
site's own broken reference (a warning, exit 0). Union flags are only given where their
side was read in full. The real ``discover`` spider against ``tests/outage_site.py`` with
one retry, so a failure is final fast."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from discovery_crawler.outcomes import EXIT_CODES
from tests.conftest import CrawlResult, run_discover
from tests.outage_site import OutageSite, page_path

FAST = {"RETRY_TIMES": 1}


def crawl(site: OutageSite, tmp_path: Path, *args: str, **settings: Any) -> CrawlResult:
    result = run_discover(
        site.url("/"), tmp_path, *args, settings={**FAST, **settings}, timeout=240
    )
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    return result


def summary(result: CrawlResult) -> str:
    return result.stderr[result.stderr.find("Summary") :]


def indexed_site(children: dict[str, str | int], **kwargs: Any) -> OutageSite:
    """An outage site whose robots.txt names an index of ``children`` (a child's URL
    list, as paths, or the status it always answers)."""
    site = OutageSite(**kwargs)
    site.files["/robots.txt"] = f"Sitemap: {site.url('/sitemap_index.xml')}\n"
    site.files["/sitemap_index.xml"] = site.sitemap_index(list(children))
    site.files.update(children)
    return site


def test_a_child_sitemap_answering_500_makes_the_run_incomplete_and_is_named(tmp_path):
    site = indexed_site({"/sitemap-1.xml": "", "/sitemap-2.xml": 500}, pages=30, down_after=None)
    site.files["/sitemap-1.xml"] = site.urlset([page_path(i) for i in range(10)])
    with site:
        result = crawl(site, tmp_path, "-a", "mode=sitemap")
    assert result.returncode == EXIT_CODES["incomplete"] == 7, summary(result)
    assert result.run["status"] == "incomplete"
    child = site.url("/sitemap-2.xml")
    assert f"INCOMPLETE: 1 sitemap not read after 1 retry ({child}: HTTP 500)" in summary(result)
    assert result.run["not_read"]["sitemaps"] == [
        {
            "url": child,
            "source": "index",
            "parent": site.url("/sitemap_index.xml"),
            "class": "server_error",
            "reason": "HTTP 500",
        }
    ]
    assert result.attempt("/sitemap-2.xml")["failure_class"] == "server_error"
    assert "'discovery/not_read/sitemaps': 1," in result.stderr  # Scrapy's stats say it too
    assert site.count("/sitemap-2.xml") == 2  # asked again once (RETRY_TIMES=1) first
    assert len(result.records) == 10  # what was read is kept


def test_a_child_sitemap_answering_404_is_a_warning_and_the_run_completes(tmp_path):
    site = indexed_site({"/sitemap-1.xml": "", "/gone.xml": 404}, pages=30)
    site.files["/sitemap-1.xml"] = site.urlset([page_path(i) for i in range(10)])
    with site:
        result = crawl(site, tmp_path, "-a", "mode=sitemap")
    assert result.returncode == 0, summary(result)
    assert result.run["status"] == "completed" and result.run["not_read"] is None
    warning = (
        f"Warning: 1 listed sitemap the site does not serve: {site.url('/gone.xml')} "
        f"(HTTP 404, listed by {site.url('/sitemap_index.xml')}); the site's own broken "
        "reference"
    )
    assert warning in summary(result)
    assert len(result.records) == 10


def test_an_outage_in_the_sitemap_phase_is_incomplete_when_some_sitemap_was_read(tmp_path):
    """The server goes down for good after the index and two of its five children
    answered: those children's URLs are kept, the other three are named as not read."""
    children = {f"/sitemap-{n}.xml": "" for n in range(5)}
    site = indexed_site(children, pages=100, down_after=3, down_for=600)
    for n in range(5):
        site.files[f"/sitemap-{n}.xml"] = site.urlset(
            [page_path(i) for i in range(20 * n, 20 * n + 20)]
        )
    with site:
        result = crawl(site, tmp_path, "-a", "mode=sitemap", CONCURRENT_REQUESTS=1)
    assert result.returncode == 7, summary(result)
    not_read = result.run["not_read"]
    read = [a for a in result.discovery["sitemap_attempts"] if a["ok"] and a["urls"]]
    assert read and not_read["sitemaps_count"] >= 1
    assert len(read) + not_read["sitemaps_count"] == 5
    assert {s["class"] for s in not_read["sitemaps"]} == {"network"}
    assert len(result.records) == 20 * len(read)
    assert "INCOMPLETE: " in summary(result) and " not read after 1 retry (" in summary(result)


def test_an_outage_before_any_sitemap_was_read_fails_the_run(tmp_path):
    """Down for good once the index answered: no child was read, nothing of the site is
    known — failed (1), not an empty "completed" inventory."""
    children = {f"/sitemap-{n}.xml": "" for n in range(3)}
    site = indexed_site(children, pages=30, down_after=1, down_for=600)
    for n in range(3):
        site.files[f"/sitemap-{n}.xml"] = site.urlset([page_path(n)])
    with site:
        result = crawl(site, tmp_path, "-a", "mode=sitemap")
    assert result.returncode == EXIT_CODES["failed"] == 1, summary(result)
    failure = result.run["failure"]
    assert failure.startswith("nothing of the site could be read: "), failure
    assert "sitemaps not read after 1 retry" in failure and "connection refused" in failure
    not_read = {s["url"] for s in result.run["not_read"]["sitemaps"]}
    assert {site.url(path) for path in children} <= not_read  # (conventional ones too)
    assert f"FAILED: {failure}" in summary(result)
    assert result.records == []


def test_an_outage_mid_union_crawl_is_incomplete_and_flags_no_false_orphan(tmp_path):
    """Union mode, every page listed by the sitemap and linked in a tree: the server goes
    down for good after 60 page answers. The pages that failed were never confirmed either
    way, and their links were not read: no page is flagged ``sitemap_only``."""
    site = OutageSite(pages=200, fanout=3, down_after=61, down_for=600)
    site.files["/robots.txt"] = f"Sitemap: {site.url('/sitemap.xml')}\n"
    site.files["/sitemap.xml"] = site.urlset([page_path(i) for i in range(200)])
    with site:
        result = crawl(site, tmp_path, "-a", "mode=union")
    assert result.returncode == 7, summary(result)
    failed = [r for r in result.records if (r.get("refusal") or {}).get("class") == "network"]
    assert failed, summary(result)
    flagged = [r["url"] for r in result.records if "sitemap_only" in (r.get("flags") or [])]
    assert flagged == []
    union = result.discovery["crawl"]["union"]
    assert union["sitemap_only"]["judged"] is False and union["sitemap_only"]["count"] > 0
    not_read = result.run["not_read"]
    assert not_read["by_class"]["network"] == len(failed) == not_read["pages"]
    text = summary(result)
    assert f"pages failed after retries (network {len(failed):,})" in text
    assert "Note: no page is flagged sitemap_only: " in text


def test_a_sitemap_not_read_in_union_mode_flags_no_page_links_only(tmp_path):
    """One of two child sitemaps answers 500: a linked page missing from the one read may
    be in the one not read, so none is called ``links_only``."""
    site = indexed_site({"/sitemap-1.xml": "", "/sitemap-2.xml": 503}, pages=40)
    site.files["/sitemap-1.xml"] = site.urlset([page_path(i) for i in range(10)])
    with site:
        result = crawl(site, tmp_path, "-a", "mode=union")
    assert result.returncode == 7, summary(result)
    assert len(result.records) == 40  # the crawl found every page
    assert not any("links_only" in (r.get("flags") or []) for r in result.records)
    union = result.discovery["crawl"]["union"]
    assert union["links_only"]["judged"] is False and union["links_only"]["count"] == 30
    assert "Note: no page is flagged links_only: 1 sitemap not read after retries" in (
        summary(result)
    )


def test_a_sitemap_input_refused_whole_by_the_ssrf_guard_fails(tmp_path):
    """The guard on, the loopback server not allow-listed: nothing may be fetched, so the
    run failed (exit 1) — never an empty "completed" inventory."""
    site = OutageSite(pages=5)
    site.files["/sitemap.xml"] = site.urlset(["/"])
    with site:
        result = run_discover(
            site.url("/sitemap.xml"),
            tmp_path,
            settings={"SSRF_GUARD_ENABLED": True, "SSRF_ALLOWED_PORTS": str(site.port)},
        )
    assert result.returncode == 1, summary(result)
    assert result.run["status"] == "failed"
    assert result.run["failure"] == (
        f"refused by the SSRF guard: {site.url('/sitemap.xml')}: 127.0.0.1 is loopback"
    )
    assert site.requests == []  # not a packet reached it
