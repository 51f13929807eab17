"""``-a verify=1`` (SPEC §3; seed "webgraph": "a sitemap count is a claim, not a fact"): the
real spider (the verdict rules as functions: ``tests/test_verdicts.py``) against a loopback
site whose sitemaps list pages that are live, 404 and 410, moved (301, 302, a chain, a
redirect to a 404, a loop, a redirect into a disallowed folder), walled (401, 403, a login
redirect), disallowed by robots.txt, broken (500, a timeout), a PDF, and pages whose server
mishandles HEAD (``tests/verify_site.py``)."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from discovery_crawler.settings import SITEMAP_CONVENTIONAL_PATHS
from discovery_crawler.site_server import unpack_site
from discovery_crawler.verdicts import (
    VERDICTS,
)
from tests.conftest import realdata
from tests.verify_site import EXPECTED, VerifySite

# -- the real spider -------------------------------------------------------------------


@pytest.fixture
def site():
    server = VerifySite(slow_seconds=4).start()
    yield server
    server.stop()


FAST = {"DOWNLOAD_TIMEOUT": 1.5, "RETRY_TIMES": 0}


def records_by_path(result, site):
    return {r["url"][len(site.origin) :]: r for r in result.records}


def verdicts_in_log(verify):
    """path → (verdict, detail) from the crawl log's lists, and every other path live."""
    found = {}
    for verdict in VERDICTS[1:]:
        for item in verify[verdict]["items"]:
            found[item["url"]] = (verdict, item["detail"])
    return found


def check_verdicts(result, site, expected):
    # A listed page whose fetch failed after its retries (a 500, a timeout) was not read:
    # the run is incomplete (exit 7), and the crawl log's not_read counts it by class.
    failed = Counter(
        detail
        for verdict, detail in expected.values()
        if verdict == "failed" and detail in ("server_error", "timeout", "network")
    )
    assert result.returncode == (7 if failed else 0), result.stderr[-3000:]
    assert (result.run["not_read"] or {}).get("by_class", {}) == dict(failed)
    verify = result.run["verify"]
    counts = Counter(v for v, _ in expected.values())
    assert verify["counts"] == {v: counts[v] for v in VERDICTS}
    assert verify["advertised"] == len(expected) == sum(verify["counts"].values())
    found = verdicts_in_log(verify)
    for path, (verdict, detail) in expected.items():
        if verdict == "live":
            assert site.url(path) not in found, path
        else:
            assert found[site.url(path)] == (verdict, detail), path
    summary = result.stderr[result.stderr.find("Summary") :]
    line = ", ".join(f"{counts[v]} {v}" for v in VERDICTS)
    assert f"Verify ({len(expected)} advertised; " in summary and line in summary
    return verify


@pytest.mark.parametrize(
    ("mode", "worker"), [("auto", False), ("sitemap", False), ("sitemap", True)]
)
def test_verify_tells_live_redirected_dead_refused_failed_apart(site, discover, mode, worker):
    """Each listed URL gets one verdict, on its record and in the counts; the counts of the
    crawl log and the summary add up to what the sitemaps advertised. Also with every
    sitemap parsed in the sitemap worker (records with its precomputed facts)."""
    settings = {**FAST, "SITEMAP_WORKER_MIN_BYTES": 1} if worker else FAST
    result = discover(site.url("/"), "-a", "verify=1", "-a", f"mode={mode}", settings=settings)
    if worker:  # the documents went through the worker (Scrapy's stats, logged at the end)
        assert "'discovery/sitemaps/worker_documents': " in result.stderr
    verify = check_verdicts(result, site, EXPECTED)
    recs = records_by_path(result, site)
    assert set(recs) == set(EXPECTED)  # every listed URL once, sitemap metadata kept
    live = recs["/live/"]
    assert live["status"] == 200 and live["live"] is True and "redirected_to" not in live
    assert sorted(live["sources"]) == [site.url("/sitemap-a.xml"), site.url("/sitemap-b.xml")]
    assert live["alternates"] == [{"hreflang": "en", "href": site.url("/en/live/")}]
    assert live["via"] == "sitemap" and live["found_on"] == live["sitemap"] == live["sources"][0]
    # an hreflang alternate of /live/ that the second sitemap lists as a <loc>: one record,
    # the listing's, with its fetch (whichever sitemap was read first)
    en = recs["/en/live/"]
    assert (en["source"], en["status"], en["live"], en["via"]) == ("sitemap", 200, True, "sitemap")
    moved = recs["/moved/"]
    assert (moved["status"], moved["live"], moved["redirected_to"]) == (
        200,
        False,
        site.url("/live-target/"),
    )
    assert recs["/chain/"]["redirected_to"] == site.url("/live-target/")  # the chain's end
    assert recs["/slash"]["redirected_to"] == site.url("/slash/")
    to_404 = recs["/to-404/"]
    assert to_404["status"] == 404 and to_404["refusal"]["class"] == "missing"
    assert to_404["refusal"]["final_url"] == site.url("/nowhere/")
    assert recs["/loop-a/"]["flags"] == ["redirect_loop"]
    assert recs["/gone/"]["refusal"]["class"] == "missing" and recs["/gone/"]["live"] is False
    assert recs["/removed/"]["status"] == 410
    assert recs["/members/"]["refusal"]["class"] == "wall"
    login = recs["/members-only/"]
    assert login["refusal"]["class"] == "login" and login["status"] == 302
    private = recs["/private/page/"]
    assert private["flags"] == ["robots_disallowed"]
    assert private["robots_rule"] == "Disallow: /private/" and private["live"] is False
    assert recs["/error/"]["status"] == 500 and recs["/slow/"]["refusal"]["class"] == "timeout"
    pdf = recs["/files/report.pdf"]
    assert pdf["kind"] == "document" and "status" not in pdf and "live" not in pdf
    # What went over the wire: HEAD first, GET only where HEAD was refused or mishandled.
    # listed by both sitemaps but asked once for itself, and once as /found/'s target
    assert site.asked("/live/") == ["HEAD", "HEAD"]
    for path in ("/head-405/", "/head-501/", "/head-403/", "/error/", "/slow/"):
        assert site.asked(path) == ["HEAD", "GET"], path
    # a connection dropped on HEAD (Twisted tries a reused connection's request once more)
    assert site.asked("/head-drop/")[-1] == "GET" and "GET" not in site.asked("/head-drop/")[:-1]
    assert site.asked("/gone/") == ["HEAD"]  # a 404 to HEAD is trusted
    for never in ("/private/page/", "/private/target/", "/files/report.pdf", "/login"):
        assert site.asked(never) == [], never  # robots, files, login pages: not fetched
    assert site.asked("/loop-b/") == ["HEAD"] and site.asked("/loop-a/") == ["HEAD"]
    assert verify["head_fallbacks"] == {
        "405": 1,
        "501": 1,
        "403": 2,
        "401": 1,
        "500": 1,
        "network": 1,
        "timeout": 1,
    }
    assert verify["mode"] == "fetch" and verify["queued"] == len(EXPECTED) - 1
    chain = next(i for i in verify["redirected"]["items"] if i["url"].endswith("/chain/"))
    assert chain["chain"] == [[site.url("/chain/"), 301], [site.url("/chain-2/"), 307]]
    # the refusal summary has verify's refusals too (with the sitemap as citation)
    refusals = result.run["refusals"]
    assert refusals["counts"]["missing"] == 3 and refusals["counts"]["login"] == 1
    # the report shows the verdicts
    report = (result.out / "report.html").read_text(encoding="utf-8")
    assert 'id="verify-advertised"><b>25</b> advertised' in report
    assert 'data-verdict="redirected">redirected (7)' in report


def test_verify_with_get_sees_meta_refresh_and_titles(site, discover):
    """VERIFY_METHOD=GET: one GET per hop, a meta refresh is a redirect, titles are read."""
    result = discover(site.url("/"), "-a", "verify=1", settings={**FAST, "VERIFY_METHOD": "GET"})
    expected = {**EXPECTED, "/refresh/": ("redirected", "live")}
    verify = check_verdicts(result, site, expected)
    recs = records_by_path(result, site)
    assert recs["/refresh/"]["redirected_to"] == site.url("/live/")
    assert recs["/live/"]["title"] == "Page /live/"
    assert not [m for m, _, _ in site.requests if m == "HEAD"]
    assert verify["method"] == "GET" and not verify["head_fallbacks"]


def test_verify_of_a_sitemap_given_as_input_still_obeys_robots(site, discover):
    """A sitemap given as input is read without robots.txt, but its pages are fetched
    only as robots.txt allows."""
    result = discover(site.url("/sitemap_index.xml"), "-a", "verify=1", settings=FAST)
    check_verdicts(result, site, EXPECTED)
    assert site.asked("/private/page/") == []


def test_max_pages_bounds_verify_fetches(site, discover):
    """max_pages counts listed URLs verified; the rest are unchecked, flagged, and the
    crawl log says which budget bound."""
    result = discover(site.url("/"), "-a", "verify=1", "-a", "max_pages=5", settings=FAST)
    assert result.returncode == 5, result.stderr[-3000:]  # bounded by max_pages
    verify = result.run["verify"]
    assert verify["queued"] == 5 and verify["max_pages"] == 5
    # One URL over the budget is known refused without a fetch: robots.txt disallows it.
    assert verify["details"]["unchecked"] == {"over_max_pages": 18, "document": 1}
    assert verify["advertised"] == 25 == sum(verify["counts"].values())
    over = [r for r in result.records if "over_max_pages" in (r.get("flags") or ())]
    assert len(over) == 19 and all("status" not in r for r in over)
    assert [r["flags"] for r in over if "robots_rule" in r] == [
        ["over_max_pages", "robots_disallowed"]
    ]
    asked = {p for _, p, _ in site.requests} & set(EXPECTED)
    assert len(asked) <= 6  # five listed URLs (and a redirect target that is listed too)
    assert any(limit["limit"] == "BFS_MAX_PAGES" for limit in result.discovery["limits"])


def test_union_mode_counts_the_crawls_own_answers(site, discover):
    """mode=union fetches listed pages anyway: its answers are the verdicts (no HEAD), and
    the counts appear in the crawl log and the summary."""
    result = discover(site.url("/"), "-a", "verify=1", "-a", "mode=union", settings=FAST)
    assert result.returncode == 7, result.stderr[-3000:]  # /error/ and /slow/ not read
    assert result.run["not_read"]["by_class"] == {"server_error": 1, "timeout": 1}
    verify = result.run["verify"]
    assert verify["mode"] == "crawl" and not [m for m, _, _ in site.requests if m == "HEAD"]
    listed = [r for r in result.records if r["source"] in ("sitemap", "alternate")]
    seed = [r for r in result.records if r["source"] == "seed"]  # "/": linked and listed
    assert verify["advertised"] == len(listed) + len(seed) == sum(verify["counts"].values())
    recs = records_by_path(result, site)
    assert recs["/gone/"]["live"] is False and recs["/live/"]["live"] is True
    assert recs["/"]["live"] is True
    found = verdicts_in_log(verify)
    assert found[site.url("/moved/")] == ("redirected", "followed")
    assert found[site.url("/members-only/")] == ("refused", "login")
    assert found[site.url("/private/page/")] == ("refused", "robots")
    assert found[site.url("/files/report.pdf")] == ("unchecked", "document")
    assert site.url("/live-target/") not in found  # a redirect target no sitemap listed
    assert "Verify (" in result.stderr and "answered by the crawl's own fetches" in result.stderr


def test_without_verify_no_listed_page_is_fetched(site, discover):
    result = discover(site.url("/"), settings=FAST)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.run["verify"] is None
    sitemaps = {"/robots.txt", "/sitemap_index.xml", "/sitemap-a.xml", "/sitemap-b.xml"}
    assert {p for _, p, _ in site.requests} <= sitemaps | set(SITEMAP_CONVENTIONAL_PATHS)


def test_verify_fetches_keep_the_host_interval(discover):
    """The throttle is shared: verify's HEADs and GET fallbacks to one host are spaced by
    HOST_INTERVAL, measured at the server."""
    pages = [f"/p-{i}/" for i in range(5)] + ["/head-405/"]
    server = VerifySite(listed=pages).start()
    try:
        result = discover(server.url("/"), "-a", "verify=1", settings={"HOST_INTERVAL": 0.3})
    finally:
        server.stop()
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.run["verify"]["counts"]["live"] == 6
    times = sorted(t for t, _, _ in server.times)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(times) >= 4 + 7 and min(gaps) >= 0.3 * 0.95, gaps
    assert "verify: " in result.stderr and "that is at least" in result.stderr


def test_real_hugo_site_lists_two_absent_pages_that_verify_finds_dead(serve, discover, tmp_path):
    """ayatoashihara (Hugo, MANIFEST): the sitemaps list 134 pages, /slides/ and
    /en/slides/ are absent. The site server answers HEAD 501, so every page is asked again
    with GET."""
    root = unpack_site(realdata("sites", "ayatoashihara-myblog_multi", "site.tar.xz"), tmp_path)
    server = serve(root)
    result = discover(server.url("/"), "-a", "verify=1", settings={"HOST_INTERVAL": 0})
    assert result.returncode == 0, result.stderr[-3000:]
    verify = result.run["verify"]
    assert verify["advertised"] == 134 and verify["counts"]["live"] == 132
    assert verify["counts"]["dead"] == 2 and verify["head_fallbacks"] == {"501": 134}
    dead = {item["url"] for item in verify["dead"]["items"]}
    assert dead == {server.url("/slides/"), server.url("/en/slides/")}
    assert all(r["live"] is (r["url"] not in dead) for r in result.records)


def test_a_run_stopped_early_says_which_listed_urls_never_got_an_answer(site, discover):
    """Held records live in the scheduler: a run stopped before their answers (here by
    CLOSESPIDER_TIMEOUT) warns that they are missing from the feed, and counts them."""
    result = discover(
        site.url("/"),
        "-a",
        "verify=1",
        settings={**FAST, "HOST_INTERVAL": 0.3, "CLOSESPIDER_TIMEOUT": 3},
    )
    verify = result.run["verify"]
    assert result.run["finish_reason"] == "closespider_timeout"
    assert verify["waiting"] > 0
    assert verify["waiting"] + verify["advertised"] == len(EXPECTED)
    assert len(result.records) == verify["advertised"]
    assert any("still waiting for an answer" in w for w in result.run["warnings"])
