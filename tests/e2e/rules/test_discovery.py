"""End-to-end rules of finding sitemaps (SPEC §4), one small site per rule (``conftest.py`` here):
the discovery order for a homepage, the fallback when robots.txt is missing, indexes at any
depth and their cycles, what is not a sitemap, and lenient discovery (a urlset of sitemaps,
generator paths, the page fallback)."""

from __future__ import annotations

import pytest

from tests.e2e.rules.conftest import (
    WORKER,
    assert_completed,
    gzip_file,
    paths,
)

# -- 1. discovery order for a homepage -------------------------------------------------------
CONVENTIONAL = [
    "/sitemap.xml",
    "/sitemap_index.xml",
    "/sitemap-index.xml",
    "/wp-sitemap.xml",
    "/sitemap/sitemap-index.xml",
    "/sitemap.txt",
]


def test_homepage_discovery_order(site, discover):
    """robots.txt is read first; its Sitemap: lines (a relative one resolved against the
    robots URL) are tried before the conventional addresses not yet tried, which are all
    tried (generators name their sitemaps differently), each an attempt."""
    server = site("discovery-order")
    o = server.origin
    # A small per-host interval sends one request at a time, so the server sees the
    # crawler's order of requests.
    result = discover(o + "/", settings={"HOST_INTERVAL": 0.05})
    assert_completed(result)
    attempts = result.discovery["sitemap_attempts"]
    assert [(a["url"], a["source"]) for a in attempts] == [
        (o + "/maps/main.xml", "robots"),
        (o + "/maps/a.xml", "robots"),
    ] + [(o + path, "conventional") for path in CONVENTIONAL]
    for a in attempts:
        parent = o + "/robots.txt" if a["source"] == "robots" else None
        assert (a["parent"], a["depth"]) == (parent, 0), a
    assert all(a["status"] is not None for a in attempts)
    robots = result.discovery["robots"]
    assert robots["status"] == 200
    assert robots["sitemaps"] == [o + "/maps/main.xml", o + "/maps/a.xml"]
    assert sorted(result.urls) == [
        o + "/from-conventional",
        o + "/from-main",
        o + "/from-relative",
    ]
    seen = paths(server)
    assert seen[0] == "/robots.txt"
    assert sorted(seen[1:3]) == ["/maps/a.xml", "/maps/main.xml"], seen
    assert sorted(seen[3:]) == sorted(CONVENTIONAL)


# -- 2. robots.txt 404 ---------------------------------------------------------------------
@pytest.mark.parametrize("start", ["/", "/robots.txt"], ids=["homepage", "robots-url"])
def test_robots_404_falls_back_to_conventional(site, discover, start):
    """No robots.txt (404): the conventional addresses are tried and the robots record
    says 404 — from a homepage and from the robots.txt URL given as input."""
    server = site("robots-404")
    o = server.origin
    result = discover(o + start)
    assert_completed(result)
    assert result.run["input"]["kind"] == ("robots" if start == "/robots.txt" else "homepage")
    robots = result.discovery["robots"]
    assert robots["url"] == o + "/robots.txt"
    assert robots["status"] == 404
    assert robots["sitemaps"] == []
    attempts = result.discovery["sitemap_attempts"]
    assert [(a["url"], a["source"], a["status"]) for a in attempts] == [
        (o + "/sitemap.xml", "conventional", 200)
    ] + [(o + path, "conventional", 404) for path in CONVENTIONAL[1:]]
    assert sorted(result.urls) == [o + "/", o + "/about"]
    assert paths(server)[0] == "/robots.txt"


# -- 3. urlset and sitemapindex at any depth -----------------------------------------------
def test_indexes_nest_at_any_depth(site, discover):
    """index → index → urlset, beside a urlset listed by the top index: every URL is found
    and each attempt records its depth, source and parent."""
    server = site("nested-indexes")
    o = server.origin
    result = discover(o + "/root-index.xml")
    assert_completed(result)
    assert sorted(result.urls) == sorted(
        o + p for p in ("/direct-1", "/direct-2", "/deep-1", "/deep-2", "/deep-3")
    )
    expected = {
        "/root-index.xml": ("input", None, 0, True, 0, 2),
        "/mid-index.xml": ("index", o + "/root-index.xml", 1, True, 0, 1),
        "/pages-direct.xml": ("index", o + "/root-index.xml", 1, False, 2, 0),
        "/leaf.xml": ("index", o + "/mid-index.xml", 2, False, 3, 0),
    }
    attempts = {a["url"]: a for a in result.discovery["sitemap_attempts"]}
    assert sorted(attempts) == sorted(o + p for p in expected)
    for path, (source, parent, depth, index, urls, sitemaps) in expected.items():
        a = attempts[o + path]
        got = (a["source"], a["parent"], a["depth"], a["index"], a["urls"], a["sitemaps"])
        assert got == (source, parent, depth, index, urls, sitemaps), a
        assert a["ok"] is True, a


# -- 4. cycle prevention -------------------------------------------------------------------
def test_index_cycle_fetches_each_sitemap_once(site, discover):
    """A lists B; B lists A and itself (also spelled ``./b.xml`` and ``/a.xml#again``):
    each is fetched once, the 4 repeats are counted and the run finishes."""
    server = site("index-cycle")
    o = server.origin
    result = discover(o + "/a.xml", timeout=60)
    assert_completed(result)
    assert sorted(paths(server)) == ["/a.xml", "/b.xml", "/pages.xml"]
    assert result.discovery["counts"]["sitemaps_repeated"] == 4
    assert [a["url"] for a in result.discovery["sitemap_attempts"]] == [
        o + "/a.xml",
        o + "/b.xml",
        o + "/pages.xml",
    ]
    assert sorted(result.urls) == [o + "/p1", o + "/p2"]


# -- 16. not a sitemap, and missing ones ---------------------------------------------------
def test_html_at_sitemap_address_and_404(site, discover):
    """A 200 HTML page at /sitemap.xml is an attempt with ok false and an error saying
    HTML (so the next conventional address is tried); the missing conventional addresses
    are attempts with status 404, every one of them tried."""
    server = site("not-a-sitemap")
    o = server.origin
    result = discover(o + "/")
    assert_completed(result)
    assert all(r["via"] in ("seed", "link") for r in result.records)  # the BFS fallback only
    html = result.attempt(o + "/sitemap.xml")
    assert (html["status"], html["ok"], html["urls"]) == (200, False, 0)
    assert "HTML" in (html["error"] or ""), html
    for name in CONVENTIONAL[1:]:
        missing = result.attempt(o + name)
        assert (missing["status"], missing["ok"]) == (404, False), missing
        assert "404" in (missing["error"] or ""), missing
    assert any("no sitemap yielded any URL" in w for w in result.run["warnings"])


# -- 22. lenient discovery: a urlset of sitemaps, generator paths, the page fallback -------
@pytest.mark.parametrize("settings", [{}, WORKER], ids=["in-process", "worker"])
def test_urlset_listing_sitemaps_is_followed_like_an_index(site, discover, settings):
    """A <urlset> whose every location is a .xml/.xml.gz is an index in disguise: each is
    tried as a child sitemap (source index, parent the urlset, a note saying why), those
    that parse as sitemaps give their pages, the one that does not is an attempt with the
    reason; the .xml URLs stay counted in the crawl log (kind asset). A normal urlset
    listing one .xml beside a page is not followed (its feed.xml is never requested)."""
    server = site("urlset-of-sitemaps")
    o = server.origin
    gzip_file(
        server.root / "sitemaps" / "posts.xml.gz",
        (server.root / "sitemaps" / "posts.xml").read_bytes(),
    )
    result = discover(o + "/", "-a", "mode=sitemap", settings=settings)
    assert_completed(result)
    assert sorted(result.urls) == [o + "/a/", o + "/b/", o + "/c/", o + "/post-1/"]
    parent = result.attempt(o + "/sitemap.xml")
    assert (parent["format"], parent["index"], parent["sitemaps"]) == ("urlset", True, 3)
    assert "read as an index" in parent["note"], parent
    children = [
        a for a in result.discovery["sitemap_attempts"] if a["parent"] == o + "/sitemap.xml"
    ]
    assert sorted(a["url"] for a in children) == [
        o + "/sitemaps/data.xml",
        o + "/sitemaps/pages.xml",
        o + "/sitemaps/posts.xml.gz",
    ]
    for child in children:
        assert child["source"] == "index" and child["depth"] == 1, child
        assert "listed by a <urlset> of sitemap documents" in child["note"], child
    ok = {a["url"]: a["ok"] for a in children}
    assert ok == {
        o + "/sitemaps/pages.xml": True,
        o + "/sitemaps/posts.xml.gz": True,
        o + "/sitemaps/data.xml": False,
    }
    assert "no <loc>" in result.attempt(o + "/sitemaps/data.xml")["error"]
    assert result.discovery["kinds"]["asset"] == 4  # the three children and /feed.xml
    assert result.discovery["filtered"]["asset"]["count"] == 4
    assert "/feed.xml" not in paths(server)
    assert result.attempt(o + "/normal.xml")["index"] is False


def test_auto_falls_back_when_no_sitemap_lists_a_page(site, discover):
    """``auto``: sitemaps that list only files (two .xml exports, tried as sitemaps and
    failing, and a PDF) yield no page, so the BFS link crawl runs, with a note saying why."""
    server = site("only-files")
    o = server.origin
    result = discover(o + "/")
    assert_completed(result)
    kinds = result.discovery["kinds"]
    assert (kinds["asset"], kinds["document"]) == (2, 1)  # what the sitemaps listed
    assert kinds["page"] == 2  # what the link crawl found
    assert {o + "/", o + "/about/"} <= set(result.urls)
    note = next(n for n in result.discovery["notes"] if "fell back" in n)
    assert "listed 3 URL(s) of the site but no page (2 asset, 1 document)" in note, note
    assert result.attempt(o + "/exports/a.xml")["ok"] is False  # tried as a sitemap


@pytest.mark.parametrize(
    "where",
    ["/sitemap/sitemap-index.xml", "/wp-sitemap.xml", "/sitemap.txt", "/sitemap-index.xml"],
    ids=["gatsby", "wordpress-core", "text", "astro"],
)
def test_conventional_generator_paths(serve, tmp_path, discover, where):
    """A sitemap only at a generator's own address is found: every conventional address
    is tried and recorded as an attempt (404 where there is none)."""
    root = tmp_path / "site"
    (root / where.rsplit("/", 1)[0].lstrip("/")).mkdir(parents=True, exist_ok=True)
    server = serve(root)
    o = server.origin
    (root / "index.html").write_text("<html><body>home</body></html>")
    if where.endswith(".txt"):
        (root / "sitemap.txt").write_text(f"{o}/found/\n")
    else:
        (root / where.lstrip("/")).write_text(
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<url><loc>{o}/found/</loc></url></urlset>"
        )
    result = discover(o + "/", "-a", "mode=sitemap")
    assert_completed(result)
    assert result.urls == [o + "/found/"]
    attempts = {a["url"]: a["status"] for a in result.discovery["sitemap_attempts"]}
    assert attempts == {o + path: 200 if path == where else 404 for path in CONVENTIONAL}
    assert sorted(paths(server)) == sorted(["/robots.txt", *CONVENTIONAL])


def test_every_conventional_address_is_read(serve, tmp_path, discover):
    """A site with two unadvertised sitemaps under two generators' names (an old
    /sitemap.xml beside gatsby-plugin-sitemap's index): the URLs of both are found."""
    root = tmp_path / "site"
    (root / "sitemap").mkdir(parents=True)
    server = serve(root)
    o = server.origin
    (root / "index.html").write_text("<html><body>home</body></html>")
    urlset = '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{}</urlset>'
    (root / "sitemap.xml").write_text(urlset.format(f"<url><loc>{o}/old/</loc></url>"))
    (root / "sitemap" / "sitemap-0.xml").write_text(
        urlset.format(f"<url><loc>{o}/old/</loc></url><url><loc>{o}/new/</loc></url>")
    )
    (root / "sitemap" / "sitemap-index.xml").write_text(
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<sitemap><loc>{o}/sitemap/sitemap-0.xml</loc></sitemap></sitemapindex>"
    )
    result = discover(o + "/", "-a", "mode=sitemap")
    assert_completed(result)
    assert sorted(result.urls) == [o + "/new/", o + "/old/"]


def test_a_project_site_has_its_own_folder_tried_first(serve, tmp_path, discover):
    """A homepage under a path (a GitHub project site, https://user.github.io/project/):
    the conventional addresses of its folder are tried before the root's."""
    root = tmp_path / "site"
    (root / "project").mkdir(parents=True)
    server = serve(root)
    o = server.origin
    (root / "project" / "index.html").write_text("<html><body>home</body></html>")
    (root / "project" / "sitemap.xml").write_text(
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{o}/project/guide/</loc></url></urlset>"
    )
    result = discover(o + "/project/", "-a", "mode=sitemap")
    assert_completed(result)
    assert result.urls == [o + "/project/guide/"]
    urls = [a["url"] for a in result.discovery["sitemap_attempts"]]
    assert urls == [o + "/project" + p for p in CONVENTIONAL] + [o + p for p in CONVENTIONAL]
