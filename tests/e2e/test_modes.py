"""``discover`` modes (SPEC §3, §4 step 4): ``auto`` falls back to the link crawl when no
sitemap yields a URL, ``links`` crawls only, ``union`` seeds the crawl with sitemap URLs
and marks orphans (``sitemap_only``) and pages missing from every sitemap
(``links_only``). The real spider against sites on 127.0.0.1."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from discovery_crawler.settings import SITEMAP_CONVENTIONAL_PATHS
from tests.conftest import realdata
from tests.e2e.test_links import PLACEHOLDER, SITE, _unpack, by_path

SITEMAP = """<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>https://example.com/</loc></url>
  <url><loc>https://example.com/a/</loc><lastmod>2024-05-01</lastmod></url>
  <url><loc>https://example.com/orphan/</loc><lastmod>2024-06-01</lastmod></url>
  <url><loc>https://example.com/files/listed.pdf</loc></url>
</urlset>
"""


@pytest.fixture
def site_with_sitemap(serve, tmp_path):
    """The links fixture site plus a sitemap that lists an unlinked /orphan/ and not /b/."""
    root = tmp_path / "site"
    shutil.copytree(SITE, root)
    (root / "sitemap.xml").write_text(SITEMAP, encoding="utf-8")
    orphan = root / "orphan"
    orphan.mkdir()
    (orphan / "index.html").write_text(
        "<html><head><title>Orphan</title></head><body><a href='/orphan-child/'>c</a>"
        "</body></html>",
        encoding="utf-8",
    )
    (root / "orphan-child").mkdir()
    (root / "orphan-child" / "index.html").write_text("<title>Orphan child</title>")
    return serve(root, rewrite=[PLACEHOLDER])


def fetched(server) -> list[str]:
    """Every path requested, in order, robots.txt included."""
    return [path for _, path, _ in server.requests]


def test_auto_falls_back_to_links_when_no_sitemap(serve, discover):
    """No robots.txt, no sitemap: the walk finds nothing, then crawls links from home."""
    server = serve(SITE, rewrite=[PLACEHOLDER])
    result = discover(server.url("/"))
    assert result.returncode == 0, result.stderr[-3000:]
    paths = fetched(server)
    conventional = ["/robots.txt", *SITEMAP_CONVENTIONAL_PATHS]
    walk = len(conventional)
    assert sorted(paths[:walk]) == sorted(conventional)  # the walk first, then the pages
    assert "/deeper/" in paths and "/secret/" not in paths
    recs = by_path(result, server.origin)
    assert recs["/"]["via"] == "seed" and recs["/a/"]["anchor"] == "Alpha page"
    assert any("fell back to a BFS link crawl" in n for n in result.discovery["notes"])


def test_auto_with_a_sitemap_fetches_no_page(site_with_sitemap, discover):
    """A sitemap that yields URLs: sitemap records only, not a single page fetched."""
    result = discover(site_with_sitemap.url("/"))
    paths = fetched(site_with_sitemap)
    assert not [p for p in paths if p.endswith("/") and p != "/robots.txt"]
    assert all("via" not in r for r in result.records)
    assert "crawl" not in result.discovery
    assert len(result.records) == 4


def test_links_mode_reads_no_sitemap(site_with_sitemap, discover):
    """mode=links: no sitemap request; robots.txt only once, for the robots policy; pages by
    links only."""
    result = discover(site_with_sitemap.url("/"), "-a", "mode=links")
    assert result.returncode == 0, result.stderr[-3000:]
    paths = fetched(site_with_sitemap)
    assert not [p for p in paths if "sitemap" in p]
    assert paths.count("/robots.txt") == 1
    assert "/orphan/" not in paths
    assert by_path(result, site_with_sitemap.origin)["/b1/"]["depth"] == 2


def test_union_marks_orphans_and_links_only_pages(site_with_sitemap, discover):
    """mode=union: /orphan/ (listed, never linked) is fetched at depth 1 via the sitemap and
    flagged sitemap_only, keeping its lastmod; /b/ (linked, not listed) is links_only;
    /a/ (both) carries no union flag; the crawl log counts and lists them."""
    server = site_with_sitemap
    o = server.origin
    result = discover(server.url("/"), "-a", "mode=union")
    assert result.returncode == 0, result.stderr[-3000:]
    recs = by_path(result, o)
    orphan = recs["/orphan/"]
    assert (orphan["via"], orphan["found_on"], orphan["depth"]) == (
        "sitemap",
        o + "/sitemap.xml",
        1,
    )
    assert (orphan["title"], orphan["status"], orphan["lastmod"]) == ("Orphan", 200, "2024-06-01")
    assert orphan["flags"] == ["sitemap_only"]
    child = recs["/orphan-child/"]
    assert (child["found_on"], child["depth"], child["flags"]) == (
        o + "/orphan/",
        2,
        ["links_only"],
    )
    assert recs["/b/"]["flags"] == ["links_only"]
    assert not recs["/a/"].get("flags")
    assert recs["/files/listed.pdf"]["flags"] == ["sitemap_only"]  # listed file: not fetched
    assert "/files/listed.pdf" not in fetched(server)
    assert len(result.records) == len(recs)  # one record per URL
    union = result.discovery["crawl"]["union"]
    assert union["sitemap_only"]["count"] == 2
    assert set(union["sitemap_only"]["items"]) == {o + "/orphan/", o + "/files/listed.pdf"}
    assert o + "/b/" in union["links_only"]["items"]
    assert union["both"] == 2  # / and /a/
    fetched_pages = fetched(server)
    assert len(fetched_pages) == len(set(fetched_pages))  # nothing fetched twice


@pytest.mark.parametrize("feed", ["inventory.csv", "inventory.json"])
def test_union_flags_in_csv_and_json(site_with_sitemap, discover, feed):
    """The end-of-run flags reach every feed format."""
    import csv
    import io
    import json

    result = discover(site_with_sitemap.url("/"), "-a", "mode=union", feed=feed)
    text = result.feed.read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text))) if feed.endswith(".csv") else json.loads(text)
    orphan = next(r for r in rows if r["url"].endswith("/orphan/"))
    flags = orphan["flags"] if isinstance(orphan["flags"], list) else json.loads(orphan["flags"])
    assert flags == ["sitemap_only"]


def test_polite_profile_runs_union(site_with_sitemap, discover):
    """Profile polite asks for union mode: citations on every page."""
    result = discover(site_with_sitemap.url("/"), "-a", "profile=polite")
    assert "union" in result.discovery["crawl"]
    assert "/orphan/" in fetched(site_with_sitemap)


# -- real sites ------------------------------------------------------------------------------


def test_real_23people_union(serve, discover, tmp_path):
    """23people: the sitemap lists 165 pages, a BFS from home reaches 53: in union mode
    every listed page is fetched; orphans and links-only pages (broken .md links) are
    reported."""
    root = _unpack(tmp_path, "23people-handbook-mkdocs")
    server = serve(root, rewrite=["https://23people.io"])
    result = discover(server.url("/"), "-a", "mode=union")
    assert result.returncode == 0, result.stderr[-3000:]
    ok = [r for r in result.records if r.get("status") == 200]
    assert 160 <= len(ok) <= 170
    union = result.discovery["crawl"]["union"]
    assert union["listed"] == 165
    assert union["sitemap_only"]["count"] > 0 and union["links_only"]["count"] > 0
    orphans = [r for r in result.records if "sitemap_only" in (r.get("flags") or [])]
    assert len(orphans) == union["sitemap_only"]["count"]


def test_real_arhackintosh_links_and_union(serve, discover, tmp_path):
    """arhackintosh: links mode reaches ~848 pages; union adds what only the sitemap has
    and reports the many pages no sitemap lists."""
    root = _unpack(tmp_path, "arhackintosh-wordpress")
    server = serve(
        root,
        rewrite=[
            "https://xn--mgbg4a8cpdl.com",
            "https://%D9%87%D8%A7%D9%83%D9%86%D8%AA%D9%88%D8%B4.com",
        ],
    )
    fast = {"CONCURRENT_REQUESTS_PER_DOMAIN": 16}
    result = discover(server.url("/"), "-a", "mode=links", settings=fast)
    assert result.returncode == 0, result.stderr[-3000:]
    ok = sum(1 for r in result.records if r.get("status") == 200)
    paginated = result.discovery["filtered"]["pagination"]["count"]  # fetched, filtered
    assert 820 <= ok + paginated <= 880
    union = discover(server.url("/"), "-a", "mode=union", settings=fast, out=tmp_path / "u")
    assert union.returncode == 0, union.stderr[-3000:]
    tally = union.discovery["crawl"]["union"]
    assert tally["listed"] >= 102
    assert tally["links_only"]["count"] > 700  # the crawl finds far more than the sitemap
    ok = sum(1 for r in union.records if r.get("status") == 200)
    assert 820 <= ok + union.discovery["filtered"]["pagination"]["count"] <= 900


def test_realdata_paths_resolve():
    assert isinstance(realdata("sites"), Path)


@pytest.mark.parametrize(
    ("name", "rewrite", "low", "high"),
    [
        # MANIFEST: BFS reaches 190 of 230 HTML files (34 broken targets).
        ("360muslimexperts", ["https://360muslimexperts.com"], 170, 215),
        # MANIFEST: BFS reaches 106 of 220 (≈106 broken targets, JS-template residue).
        ("ayatoashihara-myblog_multi", [], 90, 125),
    ],
)
def test_real_sites_links_and_union(serve, discover, tmp_path, name, rewrite, low, high):
    """The other two real sites: links mode reaches the MANIFEST's page count (pages fetched
    with 2xx, plus listing pages fetched and filtered as pagination); union mode reports the
    orphans (listed, never linked) and the links-only pages."""
    server = serve(_unpack(tmp_path, name), rewrite=rewrite)
    fast = {"CONCURRENT_REQUESTS_PER_DOMAIN": 16}
    result = discover(server.url("/"), "-a", "mode=links", settings=fast)
    assert result.returncode == 0, result.stderr[-3000:]
    ok = sum(1 for r in result.records if r.get("status") == 200)
    paginated = result.discovery["filtered"].get("pagination", {}).get("count", 0)
    assert low <= ok + paginated <= high, (ok, paginated)
    union = discover(server.url("/"), "-a", "mode=union", settings=fast, out=tmp_path / "u")
    assert union.returncode == 0, union.stderr[-3000:]
    tally = union.discovery["crawl"]["union"]
    assert tally["sitemap_only"]["count"] > 0  # listed but never linked
    assert tally["links_only"]["count"] > 0  # linked but in no sitemap
    flagged = {f for r in union.records for f in (r.get("flags") or ())}
    assert {"sitemap_only", "links_only"} <= flagged


def test_union_keeps_a_listed_auth_walled_page_flagged_and_unfetched(serve, tmp_path, discover):
    """A sitemap URL behind an auth wall is listed with ``requires_auth`` (and
    ``sitemap_only``: nothing links it), never fetched, and counted once — it used to be
    admitted to the crawl, refused there, then dropped by dedup as its own duplicate."""
    root = tmp_path / "site"
    shutil.copytree(SITE, root)
    (root / "sitemap.xml").write_text(
        SITEMAP.replace(
            "</urlset>", "  <url><loc>https://example.com/account/settings/</loc></url>\n</urlset>"
        ),
        encoding="utf-8",
    )
    server = serve(root, rewrite=[PLACEHOLDER])
    result = discover(server.url("/"), "-a", "mode=union")
    assert result.returncode == 0, result.stderr[-3000:]
    recs = by_path(result, server.origin)
    walled = recs["/account/settings/"]
    assert walled["flags"] == ["requires_auth", "sitemap_only"]
    assert walled.get("status") is None
    assert "/account/settings/" not in fetched(server)
    assert result.discovery["counts"]["discovered"] == len(result.records)
