"""The BFS link crawl (SPEC §3, §4 step 4, §10 citations): the real ``links`` spider on a
hand-made site (tests/fixtures/links, see its README) served on 127.0.0.1.
The page scan and the union tally it is built from are tested in ``tests/crawling/``."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from tests.conftest import realdata

SITE = Path(__file__).resolve().parent.parent / "fixtures" / "links" / "site"
PLACEHOLDER = "https://example.com"
PAGES = [
    "/",
    "/a/",
    "/b/",
    "/c/",
    "/a1/",
    "/a2/",
    "/shared/",
    "/b1/",
    "/alias/",
    "/c1/",
    "/canon/",
    "/deep/",
    "/alias-child/",
    "/deeper/",
]
DEPTH = {
    "/": 0,
    "/a/": 1,
    "/b/": 1,
    "/c/": 1,
    "/files/report.pdf": 1,
    "/a1/": 2,
    "/a2/": 2,
    "/shared/": 2,
    "/b1/": 2,
    "/alias/": 2,
    "/c1/": 2,
    "/canon/": 2,
    "/img/photo.jpg": 2,
    "/deep/": 3,
    "/alias-child/": 3,
    "/deeper/": 4,
}


@pytest.fixture
def site(serve):
    return serve(SITE, rewrite=[PLACEHOLDER])


def fetched(server) -> list[str]:
    """Pages requested, in order (robots.txt, read once by the robots policy, left out)."""
    return [path for _, path, _ in server.requests if path != "/robots.txt"]


def by_path(result, origin: str) -> dict[str, dict]:
    return {r["url"][len(origin) :]: r for r in result.records}


def test_breadth_first_order_and_what_is_fetched(site, links):
    """One request at a time: the server sees depth 0, then 1, then 2… never a step back;
    every page is fetched once; nofollow links, pages behind a meta nofollow, files and
    images are never requested."""
    result = links(site.url("/"), settings={"CONCURRENT_REQUESTS": 1})
    assert result.returncode == 0, result.stderr[-3000:]
    paths = fetched(site)
    assert sorted(paths) == sorted(PAGES)
    every = [path for _, path, _ in site.requests]
    assert every[0] == "/robots.txt" and every.count("/robots.txt") == 1  # once, first
    depths = [DEPTH[p] for p in paths]
    assert depths == sorted(depths), paths
    for never in ("/secret/", "/never/", "/files/report.pdf", "/img/photo.jpg"):
        assert never not in paths


def test_citations_titles_and_file_records(site, links):
    """Each record cites whoever found it first (found_on, anchor, depth, via); fetched
    pages carry title and status; files are recorded once with the page that named them.
    (One request at a time, so "first" does not depend on which response lands first.)"""
    result = links(site.url("/"), settings={"CONCURRENT_REQUESTS": 1})
    assert result.returncode == 0, result.stderr[-3000:]
    o = site.origin
    recs = by_path(result, o)
    assert set(recs) == set(DEPTH)  # /alias/ names /canon/ canonical: both are recorded
    assert len(result.records) == len(recs)  # one record per URL
    home = recs["/"]
    assert (home["via"], home["found_on"], home["depth"], home["source"]) == (
        "seed",
        None,
        0,
        "seed",
    )
    assert home["title"] == "Home Page" and home["status"] == 200
    alpha = recs["/a/"]
    assert (alpha["via"], alpha["found_on"], alpha["anchor"], alpha["depth"]) == (
        "link",
        o + "/",
        "Alpha page",
        1,
    )
    assert recs["/a2/"]["found_on"] == o + "/a/"  # ../a2/ resolved against /a/
    assert recs["/shared/"]["found_on"] == o + "/a/"  # found first on /a/, not /b/
    assert recs["/c/"]["anchor"] == "Gamma"
    for path, depth in DEPTH.items():
        if path in recs:
            assert recs[path]["depth"] == depth, path
    pdf = recs["/files/report.pdf"]
    assert (pdf["found_on"], pdf["anchor"], pdf["status"], pdf["title"]) == (
        o + "/",
        "Annual report",
        None,
        None,
    )
    photo = recs["/img/photo.jpg"]
    assert (photo["found_on"], photo["anchor"], photo["status"]) == (o + "/b/", "A photo", None)
    assert all(r["status"] == 200 and r["title"] for p, r in recs.items() if p in PAGES)
    crawl = result.discovery["crawl"]
    assert crawl["fetched"] == len(PAGES) and crawl["requested"] == len(PAGES)
    assert crawl["not_fetched"] == {"file": 2}  # the PDF and the image
    assert crawl["nofollow_links"] == 1 and crawl["nofollow_pages"] == 1


def test_canonical_naming_another_page(site, links):
    """/alias/ names /canon/ canonical: /alias/ answered, so it keeps its record, with the
    canonical it names and the flag canonical_elsewhere; /canon/ is enqueued, found on
    /alias/; the alias's links are still followed."""
    result = links(site.url("/"))
    o = site.origin
    recs = by_path(result, o)
    alias = recs["/alias/"]
    assert (alias["status"], alias["title"], alias["canonical"]) == (200, "Alias", o + "/canon/")
    assert "canonical_elsewhere" in alias["flags"]
    canon = recs["/canon/"]
    assert (canon["via"], canon["found_on"], canon["depth"], canon["title"]) == (
        "canonical",
        o + "/alias/",
        2,
        "Canonical",
    )
    assert "canonical" not in canon
    assert "/canon/" in fetched(site) and "/alias-child/" in recs
    elsewhere = result.discovery["crawl"]["canonical_elsewhere"]
    assert elsewhere["items"] == [{"url": o + "/alias/", "canonical": o + "/canon/"}]
    assert result.discovery["counts"]["canonical_elsewhere"] == 1


def test_max_pages_holds_exactly(site, links):
    """max_pages=4: exactly four pages requested; what was found beyond is recorded,
    flagged over_max_pages, and the crawl log says the budget bound."""
    result = links(site.url("/"), "-a", "max_pages=4")
    assert result.returncode == 5, result.stderr[-3000:]  # bounded by max_pages
    assert sorted(fetched(site)) == ["/", "/a/", "/b/", "/c/"]
    recs = by_path(result, site.origin)
    assert sum(1 for r in recs.values() if r["status"] is not None) == 4
    over = {p for p, r in recs.items() if r.get("flags") == ["over_max_pages"]}
    assert over == {"/a1/", "/a2/", "/shared/", "/b1/", "/alias/", "/c1/"}
    assert {"limit": "BFS_MAX_PAGES", "value": 4, "given": "max_pages"} in (
        result.discovery["limits"]
    )


def test_max_depth_holds_exactly(site, links):
    """max_depth=1: the seed and its links are fetched, nothing deeper."""
    result = links(site.url("/"), "-a", "max_depth=1")
    assert sorted(fetched(site)) == ["/", "/a/", "/b/", "/c/"]
    recs = by_path(result, site.origin)
    deeper = {p for p, r in recs.items() if r.get("flags") == ["over_max_depth"]}
    assert deeper == {"/a1/", "/a2/", "/shared/", "/b1/", "/alias/", "/c1/"}
    assert recs["/img/photo.jpg"]["status"] is None  # a file: recorded, never a budget matter
    assert max(r["depth"] for r in recs.values()) == 2


def test_profile_budget_and_service_cap(site, links):
    """Profile sample: BFS depth 3; profile service refuses max_pages over its cap."""
    result = links(site.url("/"), "-a", "profile=sample")
    assert "/deeper/" not in fetched(site) and "/deep/" in fetched(site)
    assert result.discovery["crawl"]["max_depth"] == 3
    refused = links(site.url("/"), "-a", "profile=service", "-a", "max_pages=5000")
    assert refused.returncode == 2
    assert "argument max_pages: profile service allows at most 1000" in refused.stderr


def test_csv_feed_has_the_citation_columns(site, links):
    """The CSV feed carries via, found_on, anchor, depth, title, status, refusal."""
    result = links(site.url("/"), feed="inventory.csv")
    rows = list(csv.DictReader(io.StringIO(result.feed.read_text(encoding="utf-8"))))
    alpha = next(r for r in rows if r["url"] == site.url("/a/"))
    assert (alpha["via"], alpha["anchor"], alpha["depth"], alpha["status"]) == (
        "link",
        "Alpha page",
        "1",
        "200",
    )
    assert alpha["title"] == "Alpha" and alpha["found_on"] == site.url("/")


def test_unreachable_seed_fails_cleanly(tmp_path, links):
    """Nothing listens: one failure line, exit status 1, the seed recorded as a refusal."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = links(f"http://127.0.0.1:{port}/")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.records[0]["refusal"]["class"] == "network"


# -- real sites ------------------------------------------------------------------------------


def _unpack(tmp_path: Path, name: str) -> Path:
    from discovery_crawler.site_server import unpack_site

    return unpack_site(realdata("sites", name, "site.tar.xz"), tmp_path / "site")


def ok_pages(result) -> int:
    return sum(1 for r in result.records if r.get("status") == 200)


def test_real_arhackintosh_bfs_reaches_about_848_pages(serve, links, tmp_path):
    """MANIFEST: a BFS from home reaches 848 of 2196 pages (2 broken targets); the
    percent-encoded IDN host is the same site."""
    root = _unpack(tmp_path, "arhackintosh-wordpress")
    server = serve(
        root,
        rewrite=[
            "https://xn--mgbg4a8cpdl.com",
            "https://%D9%87%D8%A7%D9%83%D9%86%D8%AA%D9%88%D8%B4.com",
        ],
    )
    result = links(server.url("/"), settings={"CONCURRENT_REQUESTS_PER_DOMAIN": 16})
    assert result.returncode == 0, result.stderr[-3000:]
    # Listing pages past page 1 are fetched (their links count) but filtered from the
    # inventory with the reason "pagination" (SPEC §5).
    paginated = result.discovery["filtered"]["pagination"]["count"]
    assert paginated > 50
    assert not [r for r in result.records if "/page/" in r["url"]]
    assert 820 <= ok_pages(result) + paginated <= 880
    assert len(fetched(server)) == len(set(fetched(server)))  # nothing fetched twice


def test_real_23people_bfs_reaches_53_pages(serve, links, tmp_path):
    """MANIFEST: the pruned navigation lets a BFS reach 53 of 166 pages."""
    root = _unpack(tmp_path, "23people-handbook-mkdocs")
    server = serve(root, rewrite=["https://23people.io"])
    result = links(server.url("/"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert 50 <= ok_pages(result) <= 56
    assert all(r["status"] == 404 for r in result.records if r["url"].endswith(".md"))
