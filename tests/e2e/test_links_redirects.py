"""Trailing-slash twins, redirects and meta refresh in the link crawl (issue 14, points
2-4; SPEC §5 rule 7): the real spiders (``discover`` in links and union modes, ``links``)
against sites shaped like what Docusaurus, Hugo and Gatsby build (tests/fixtures/generators,
see its README) served as real static hosts serve them (a folder without its slash answers
301 to the slash form), and a scriptable server for redirect loops.
The pure parts are tested beside their modules: the refresh parser
(``crawling/test_extract.py``), the seen-set's twin bookkeeping (``urls/test_seen.py``), the
feed patch (``output/test_exporters.py``)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import FIXTURES, CrawlResult, run_discover
from tests.e2e.test_links import _unpack
from tests.e2e.test_links_bad_input import HTML, Routes, crawl, page, pages, redirect
from tests.e2e.test_robots_middleware import Server

GENERATORS = FIXTURES / "generators"
PLACEHOLDER = "https://example.com"


def serve_site(serve: Any, name: str, dir_redirect: bool = True) -> Any:
    return serve(GENERATORS / name, rewrite=[PLACEHOLDER], dir_redirect=dir_redirect)


def by_path(result: CrawlResult, origin: str) -> dict[str, dict[str, Any]]:
    assert result.returncode == 0, result.stderr[-3000:]
    recs = {r["url"][len(origin) :]: r for r in result.records}
    assert len(recs) == len(result.records), "one record per URL"
    return recs


def flags(rec: dict[str, Any]) -> list[str]:
    return rec.get("flags") or []


def requested(server: Any) -> list[str]:
    return [path for _, path, _ in server.requests]


# -- Docusaurus: every location and link without the slash, pages served at x/ ---------------

DOCS = [
    "/",
    "/blog",
    "/blog/first-post",
    "/docs/intro",
    "/docs/install",
    "/docs/guide/basics",
    "/docs/guide/advanced",
]


@pytest.mark.parametrize("mode", ["union", "links"])
def test_docusaurus_slash_redirects_are_followed_and_the_canonical_names_the_page(
    serve, discover, mode
):
    """/docs/intro → 301 /docs/intro/ used to be flagged redirect_loop (the twin comparison
    saw one URL) and never fetched, so nothing past the home page was crawled. Now: one
    record per page, under its canonical (no slash), fetched (200, title), the slash form
    in ``aliases``; the page reachable only by links (/docs/guide/advanced) found; the
    sitemap's lastmod kept; each form requested once; the crawl log and summary count it."""
    server = serve_site(serve, "docusaurus")
    o = server.origin
    result = discover(server.url("/"), "-a", f"mode={mode}")
    recs = by_path(result, o)
    assert sorted(recs) == sorted(DOCS)
    for path in DOCS:
        rec = recs[path]
        assert rec["status"] == 200 and rec["title"].endswith("| My Docs"), rec
        assert "redirect_loop" not in flags(rec) and "redirected_to" not in rec
        assert rec.get("aliases") == (None if path == "/" else [o + path + "/"])
    advanced = recs["/docs/guide/advanced"]
    assert advanced["found_on"] == o + "/docs/guide/basics"  # the record's URL, not /x/
    assert advanced["title"] == "Advanced | My Docs"
    every = requested(server)
    assert len(every) == len(set(every))  # each form once: /x (301) and /x/ (200)
    for path in DOCS[1:]:
        assert (path in every) and (path + "/" in every)
    crawl_log = result.discovery["crawl"]
    assert crawl_log["redirect_loops"] == 0
    assert crawl_log["slash_redirects"]["count"] == 6
    assert crawl_log["canonical_twins"]["count"] == 6
    assert crawl_log["requested"] == 7 and crawl_log["fetched"] == 13  # 7 pages, 6 redirects
    counts = result.discovery["counts"]
    assert (counts["slash_redirects"], counts["canonical_twins"]) == (6, 6)
    assert "Redirects and twins: slash-only redirects followed (one record) 6" in result.stderr
    if mode == "union":
        assert advanced["flags"] == ["links_only"]
        # the listing's metadata, whether the sitemap or the home page's link came first
        intro = recs["/docs/intro"]
        assert (intro["lastmod"], intro["priority"], intro["source"]) == (
            "2024-05-01",
            0.5,
            "sitemap",
        )
        assert recs["/"]["source"] == "seed" and recs["/"]["priority"] == 0.5


def test_docusaurus_on_either_host_gives_the_same_pages(serve, discover, tmp_path):
    """Served by a redirecting host or by one that answers /x with the page: the same
    URLs and titles (on the silent host no other form was met, so no aliases)."""
    hosts = {}
    for dir_redirect in (True, False):
        server = serve_site(serve, "docusaurus", dir_redirect=dir_redirect)
        result = discover(server.url("/"), "-a", "mode=links", out=tmp_path / str(dir_redirect))
        hosts[dir_redirect] = {
            path: (r["title"], r["status"], r.get("aliases") is not None)
            for path, r in by_path(result, server.origin).items()
        }
    assert {p: t[:2] for p, t in hosts[True].items()} == {p: t[:2] for p, t in hosts[False].items()}
    assert sorted(hosts[False]) == sorted(DOCS) and not any(t[2] for t in hosts[False].values())


# -- Hugo: a menu link without the slash; a page linked only from its target ----------------


@pytest.mark.parametrize("mode", ["links", "union"])
def test_hugo_a_page_linked_only_from_a_slash_redirect_target_is_found(serve, discover, mode):
    """The menu links /post (301 → /post/): /post/ is fetched and its links followed, so
    /post/hidden-gem/ (linked only from there, in no sitemap) is found; Hugo's alias page
    /old-name/ (a meta refresh) is a redirect to /post/first/."""
    server = serve_site(serve, "hugo")
    o = server.origin
    recs = by_path(discover(server.url("/"), "-a", f"mode={mode}"), o)
    post = recs["/post/"]
    assert (post["status"], post["title"], post["aliases"]) == (
        200,
        "Posts | Example Blog",
        [o + "/post"],
    )
    assert "/post" not in recs
    gem = recs["/post/hidden-gem/"]
    assert (gem["status"], gem["found_on"], gem["depth"]) == (200, o + "/post/", post["depth"] + 1)
    alias = recs["/old-name/"]
    assert alias["redirected_to"] == o + "/post/first/" and "meta_refresh" in flags(alias)
    assert not any("redirect_loop" in flags(r) for r in recs.values())
    if mode == "union":
        assert gem["flags"] == ["links_only"]


# -- Gatsby: meta-refresh pages, relative links in the target --------------------------------

GATSBY = {
    "/",
    "/docs/",
    "/guides/",
    "/how-to-guides/",
    "/how-to-guides/v2/",
    "/how-to-guides/v3/",
    "/how-to-guides/v3/basics/",
    "/how-to-guides/v3/ecosystem/",
    "/status/",
}


def test_gatsby_meta_refresh_is_a_redirect_and_the_target_resolves_its_own_links(serve, discover):
    """/how-to-guides/ refreshes to /how-to-guides/v3/. Scrapy's MetaRefreshMiddleware used
    to fetch the target in its place (it ignores handle_httpstatus_all): the target was
    recorded as /how-to-guides/ and its relative links resolved against that (inventing
    /how-to-guides/basics/). Now the refreshing page keeps its record (redirected_to, flag
    meta_refresh) and the target has its own, cited by the refreshing page at its depth;
    ``basics/``, ``ecosystem/`` and ``../v2/`` resolve against the target. A chain of two
    refreshes (/guides/ → /how-to-guides/ → …) is followed; a refresh with no URL (a status
    page reloading itself) is no redirect."""
    server = serve_site(serve, "gatsby")
    o = server.origin
    result = discover(server.url("/"), "-a", "mode=links")
    recs = by_path(result, o)
    assert set(recs) == GATSBY
    moved = recs["/how-to-guides/"]
    assert (moved["status"], moved["redirected_to"], moved["flags"]) == (
        200,
        o + "/how-to-guides/v3/",
        ["meta_refresh"],
    )
    target = recs["/how-to-guides/v3/"]
    assert (target["title"], target["found_on"], target["depth"], target["status"]) == (
        "How-to guides (v3)",
        o + "/how-to-guides/",
        moved["depth"],  # a redirect is no link hop
        200,
    )
    for path in ("/how-to-guides/v3/basics/", "/how-to-guides/v3/ecosystem/"):
        assert recs[path]["found_on"] == o + "/how-to-guides/v3/"
    assert recs["/how-to-guides/v2/"]["title"] == "How-to guides (v2)"
    assert recs["/guides/"]["redirected_to"] == o + "/how-to-guides/"
    assert "redirected_to" not in recs["/status/"] and recs["/status/"]["flags"] is None
    every = requested(server)
    assert not [p for p in every if p.startswith(("/how-to-guides/basics", "/v2"))]
    assert len(every) == len(set(every))
    refreshes = result.discovery["crawl"]["meta_refreshes"]
    assert refreshes["count"] == 2
    assert {"url": o + "/guides/", "to": "/how-to-guides/", "delay": 0.0} in refreshes["items"]


def test_gatsby_the_same_output_every_run(serve, tmp_path):
    """Three runs of each mode at the default concurrency write the same records. The
    refresh target used to be fetched by Scrapy in the page's place or dropped by its
    duplicate filter, whichever response came first. Links mode: line for line (each page
    of this site has one first linker). Union mode: the same but for the citation (via,
    found_on, anchor, depth), which says whether the sitemap or a link reached a page
    first, and the score (its checklist bonus goes to the first page of a type to arrive);
    a page linked first still has its listing's metadata, and the target of a refresh
    from a linked page is no orphan."""
    server = serve_site(serve, "gatsby")
    o = server.origin
    citation = ("via", "found_on", "anchor", "depth", "score")
    for mode in ("links", "union"):
        feeds = []
        for run in range(3):
            folder = tmp_path / f"{mode}-{run}"
            folder.mkdir()
            result = run_discover(server.url("/"), folder, "-a", f"mode={mode}")
            assert result.returncode == 0, result.stderr[-3000:]
            if mode == "links":
                feeds.append(sorted(result.raw_feed.splitlines()))
            else:
                feeds.append(
                    sorted(
                        json.dumps({k: v for k, v in r.items() if k not in citation})
                        for r in result.records
                    )
                )
        assert feeds[0] == feeds[1] == feeds[2], mode
        recs = {r["url"][len(o) :]: r for r in map(json.loads, feeds[0])}
        assert set(recs) == GATSBY
    target = recs["/how-to-guides/v3/"]
    assert (target["source"], target["sitemap"], target["flags"]) == (
        "sitemap",
        o + "/sitemap/sitemap-0.xml",
        None,  # listed, and reached from the linked /how-to-guides/
    )
    assert recs["/how-to-guides/v3/basics/"]["priority"] == 0.7


# -- a canonical with the slash, links without it --------------------------------------------


@pytest.mark.parametrize("dir_redirect", [True, False], ids=["redirecting-host", "silent-host"])
@pytest.mark.parametrize("feed", ["inventory.jsonl", "inventory.csv"])
def test_slash_canonical_decides_whether_or_not_the_host_redirects(
    serve, links, tmp_path, dir_redirect, feed
):
    """Links write /team, the canonical /team/. A redirecting host sends /team to /team/; a
    silent one answers /team, and the canonical renames the record. Either way: /team/,
    /team/alice/, /projects/, with the linked form in aliases. Pages without a canonical
    take the slash form once both forms are met (rule 7): /about/ (its slash form met while
    it was being fetched), /contact/ (met after its line was written: the feed is patched
    at the end, CSV too). /legal, only ever linked as /legal, stays so on a silent host."""
    server = serve_site(serve, "slash-canonical", dir_redirect=dir_redirect)
    o = server.origin
    result = links(server.url("/"), feed=feed, settings={"CONCURRENT_REQUESTS": 1})
    assert result.returncode == 0, result.stderr[-3000:]
    if feed.endswith(".csv"):
        rows = list(csv.DictReader(io.StringIO(result.raw_feed)))
        got = {r["url"][len(o) :]: json.loads(r["aliases"]) if r["aliases"] else None for r in rows}
        titles = {r["url"][len(o) :]: r["title"] for r in rows}
    else:
        recs = by_path(result, o)
        got = {p: r.get("aliases") for p, r in recs.items()}
        titles = {p: r["title"] for p, r in recs.items()}
    legal = "/legal/" if dir_redirect else "/legal"
    expected = {
        "/": None,
        "/team/": [o + "/team"],
        "/team/alice/": [o + "/team/alice"],
        "/projects/": [o + "/projects"],
        "/about/": [o + "/about"],
        "/contact/": [o + "/contact"],
        legal: [o + "/legal"] if dir_redirect else None,
    }
    assert got == expected
    assert titles["/contact/"] == "Contact" and titles["/about/"] == "About"
    counts = result.discovery["counts"]
    if dir_redirect:
        assert counts["slash_redirects"] == 6 and counts["canonical_twins"] == 0
    else:
        assert counts["canonical_twins"] == 3 and counts["slash_twins"] == 2
        assert "slash twins collapsed 2" in result.stderr


def test_verify_names_the_record_by_the_canonical(serve, discover, tmp_path):
    """``-a verify=1`` with GET fetches the listed pages: /team (listed without the slash)
    → 301 /team/, whose canonical is /team/: the record is /team/, /team in its aliases,
    still reported redirected; /docs-like /intro → 301 /intro/ with a canonical without the
    slash stays /intro, /intro/ in its aliases; /legal/ (listed with the slash, no
    canonical) is live and has none."""
    import shutil

    root = tmp_path / "site"
    shutil.copytree(GENERATORS / "slash-canonical", root)
    intro = root / "intro"
    intro.mkdir()
    (intro / "index.html").write_text(
        f'<title>Intro</title><link rel="canonical" href="{PLACEHOLDER}/intro">'
    )
    locs = "".join(
        f"<url><loc>{PLACEHOLDER}{p}</loc></url>" for p in ("/team", "/intro", "/legal/")
    )
    (root / "sitemap.xml").write_text(
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'
    )
    server = serve(root, rewrite=[PLACEHOLDER])
    o = server.origin
    result = discover(
        server.url("/sitemap.xml"), "-a", "verify=1", settings={"VERIFY_METHOD": "GET"}
    )
    recs = by_path(result, o)
    assert sorted(recs) == ["/intro", "/legal/", "/team/"]
    team = recs["/team/"]
    assert (team["aliases"], team["redirected_to"], team["live"]) == (
        [o + "/team"],
        o + "/team/",
        False,
    )
    assert (recs["/intro"]["aliases"], recs["/intro"]["title"]) == ([o + "/intro/"], "Intro")
    assert recs["/legal/"]["live"] is True and "aliases" not in recs["/legal/"]
    assert result.discovery["counts"]["canonical_twins"] == 1


# -- loops and the other redirects, on a scriptable server -----------------------------------


def refresh(to: str, links: tuple[str, ...] = (), title: str = "Moved") -> tuple:
    anchors = "".join(f'<a href="{h}">{h}</a>' for h in links)
    body = (
        f'<html><head><title>{title}</title><meta http-equiv="refresh" content="0; url={to}">'
        f"</head><body>{anchors}</body></html>"
    ).encode()
    return 200, body, HTML, 0.0


LOOP_SITE = {
    "/": page(["/a", "/c", "/d", "/e", "/f", "/s", "/m1", "/m3", "/h"]),
    "/a": redirect("/b"),
    "/b": redirect("/a"),
    "/c": redirect("/c"),
    "/d": redirect("/d/"),
    "/d/": redirect("/d"),
    "/e": redirect("/e/"),
    "/e/": page(["/e-child"], "E"),
    "/f": redirect("/g/"),
    "/g/": page([], "G"),
    "/s": redirect("/t"),
    "/t": redirect("/t/"),
    "/t/": page([], "T"),
    "/m1": refresh("/m2"),
    "/m2": refresh("/m1"),
    "/m3": refresh("/m3", ("/m3-child",), "Reloads itself"),
    "/h": refresh("/h/"),
    "/h/": page([], "H"),
}


@pytest.fixture
def loop_site() -> Iterator[Server]:
    server = Server(Routes(LOOP_SITE))
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


@pytest.mark.parametrize("spider", ["links", "discover"])
def test_a_loop_is_a_url_met_again_in_its_own_chain_compared_exactly(loop_site, tmp_path, spider):
    """/a → /b → /a, /c → /c, /d → /d/ → /d loop (flagged on the record that closes them);
    /e → /e/ does not (the slash differs): /e/ is fetched, one record, /e in its aliases,
    its links followed. /f → /g/ keeps today's records (/f: 302, redirected_to; /g/ found on
    /f at the same depth). /s → /t → /t/: /s, then one record /t/ cited by /s. Meta
    refreshes loop the same way (/m1 ⇄ /m2, /m3 → /m3, whose own links are still
    followed), and one that only adds the slash gives one record. Nothing fetched twice."""
    server = loop_site
    args = ("-a", "mode=links") if spider == "discover" else ()
    result, _ = crawl(tmp_path, server.origin + "/", *args, spider=spider)
    o = server.origin
    recs = by_path(result, o)
    fetched = pages(server)
    assert len(fetched) == len(set(fetched))
    assert flags(recs["/b"]) == ["redirect_loop"] and flags(recs["/a"]) == []
    assert flags(recs["/c"]) == ["redirect_loop"] and recs["/c"]["redirected_to"] == o + "/c"
    d = recs["/d/"]
    assert (d["status"], d["flags"], d["redirected_to"], d["aliases"]) == (
        302,
        ["redirect_loop"],
        o + "/d",
        [o + "/d"],
    )
    assert "/d" not in recs and fetched.count("/d") == 1
    e = recs["/e/"]
    assert (e["status"], e["title"], e["aliases"], e["depth"], e["found_on"]) == (
        200,
        "E",
        [o + "/e"],
        1,
        o + "/",
    )
    assert recs["/e-child"]["found_on"] == o + "/e/" and "/e" not in recs
    f, g = recs["/f"], recs["/g/"]
    assert (f["status"], f["redirected_to"], f.get("aliases")) == (302, o + "/g/", None)
    assert (g["status"], g["found_on"], g["depth"]) == (200, o + "/f", f["depth"])
    t = recs["/t/"]
    assert (t["status"], t["found_on"], t["aliases"]) == (200, o + "/s", [o + "/t"])
    assert recs["/s"]["redirected_to"] == o + "/t" and "/t" not in recs
    assert flags(recs["/m1"]) == ["meta_refresh"] and recs["/m1"]["redirected_to"] == o + "/m2"
    assert flags(recs["/m2"]) == ["meta_refresh", "redirect_loop"]
    m3 = recs["/m3"]
    assert (m3["status"], m3["title"], m3["flags"]) == (
        200,
        "Reloads itself",
        ["meta_refresh", "redirect_loop"],
    )
    assert recs["/m3-child"]["found_on"] == o + "/m3"
    h = recs["/h/"]
    assert (h["status"], h["title"], h["aliases"], h["flags"]) == (200, "H", [o + "/h"], None)
    crawl_log = result.discovery["crawl"]
    assert crawl_log["redirect_loops"] == 5  # /b, /c, /d/, /m2, /m3
    assert crawl_log["slash_redirects"]["count"] == 4  # /d, /e, /t, /h
    assert crawl_log["meta_refreshes"]["count"] == 4  # /m1, /m2, /m3, /h
    assert crawl_log["redirected"] == 4  # /a, /f, /s, /m1: targets admitted as pages


# -- sitemap mode: the dedup stage's twins -------------------------------------------------


@pytest.mark.parametrize("worker", [False, True], ids=["in-process", "sitemap-worker"])
def test_sitemap_twins_collapse_to_the_slash_form_with_the_other_in_aliases(
    serve, discover, tmp_path, worker
):
    """A sitemap listing /x then /x/ gives /x/ (the slash listing's lastmod), /y/ then /y
    gives /y/; each has the other form in aliases; /z, listed once, stays /z. Counted."""
    root = tmp_path / "site"
    root.mkdir()
    server = serve(root)
    o = server.origin
    entries = [("/x", "2024-01-01"), ("/y/", "2024-02-01"), ("/z", None), ("/x/", "2024-03-01")]
    entries.append(("/y", "2024-04-01"))
    body = "".join(
        f"<url><loc>{o}{p}</loc>" + (f"<lastmod>{m}</lastmod>" if m else "") + "</url>"
        for p, m in entries
    )
    (root / "sitemap.xml").write_text(
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</urlset>'
    )
    settings = {"SITEMAP_WORKER_MIN_BYTES": 1} if worker else {}
    result = discover(server.url("/sitemap.xml"), settings=settings)
    recs = by_path(result, o)
    assert sorted(recs) == ["/x/", "/y/", "/z"]
    assert (recs["/x/"]["aliases"], recs["/x/"]["lastmod"]) == ([o + "/x"], "2024-03-01")
    assert (recs["/y/"]["aliases"], recs["/y/"]["lastmod"]) == ([o + "/y"], "2024-02-01")
    assert "aliases" not in recs["/z"]
    counts = result.discovery["counts"]
    assert (counts["slash_twins"], counts["twin_aliases"]) == (1, 1)
    assert "Trailing-slash twins: 1 collapsed to the slash form, 1 noted in aliases" in (
        result.stderr
    )
    state = json.loads((result.out / "state.json").read_text())
    assert sorted(e[0][len(o) :] for e in state["entries"]) == ["/x/", "/y/", "/z"]


# -- real sites --------------------------------------------------------------------------------


def test_real_hugo_menu_links_without_the_slash_are_followed(serve, discover, tmp_path):
    """ayatoashihara (Hugo): the menu links /post, /publication (and /en/…) without the
    slash; served as a real host serves them (301 → slash form) they used to be flagged
    redirect_loop and their lists never crawled. Now none loops and each is one record."""
    server = serve(_unpack(tmp_path, "ayatoashihara-myblog_multi"))
    o = server.origin
    result = discover(server.url("/"), "-a", "mode=links")
    recs = by_path(result, o)
    assert not [u for u, r in recs.items() if "redirect_loop" in flags(r)]
    for path in ("/post/", "/publication/", "/en/post/", "/en/publication/"):
        assert recs[path]["status"] == 200 and recs[path]["aliases"] == [o + path[:-1]], path
    assert result.discovery["counts"]["slash_redirects"] >= 4


# -- canonicals naming another page ----------------------------------------------------------
def test_every_page_naming_the_home_page_canonical_is_kept(serve, links):
    """A Next.js export whose every page names the home page canonical: each page answered,
    so each is in the inventory under its own URL, with the canonical it names; a query
    variant and an index.html spelling are the same document, recorded under the
    canonical; a canonical with an empty path segment names nothing."""
    server = serve_site(serve, "canonical-home")
    o = server.origin
    recs = by_path(links(o + "/"), o)
    for path, title in (("/features/", "Features"), ("/pricing/", "Pricing")):
        rec = recs[path]
        assert (rec["status"], rec["title"], rec["canonical"]) == (200, title, o + "/")
        assert "canonical_elsewhere" in flags(rec)
    assert "canonical" not in recs["/"]
    # /docs/index.html names //docs/: ignored, the page keeps its record and no URL is made up
    assert recs["/docs/index.html"]["status"] == 200 and "canonical" not in recs["/docs/index.html"]
    assert not [p for p in recs if "//" in p]
    # /blog/?sort=new names /blog/ and /blog/post/ names its index.html: one record each
    assert "/blog/?sort=new" not in recs and recs["/blog/"]["title"] == "Blog"
    assert "/blog/post/" not in recs and recs["/blog/post/index.html"]["title"] == "A post"


def _canonical_page(canonical: str, title: str) -> tuple[int, bytes, dict[str, str], float]:
    body = (
        f'<html><head><title>{title}</title><link rel="canonical" href="{canonical}">'
        "</head><body><p>docs</p></body></html>"
    )
    return 200, body.encode(), HTML, 0.0


def _moved(to: str) -> tuple[int, bytes, dict[str, str], float]:
    return 301, b"", {"Location": to}, 0.0


@pytest.mark.parametrize("mode", ["links", "union"])
def test_a_query_variant_answered_under_the_slash_form_is_its_canonicals_record(tmp_path, mode):
    """Docusaurus (issue 37.5): ``/docs/auth-flow?config=static`` answers 301 to
    ``/docs/auth-flow/?config=static`` (the host added the slash), whose canonical is
    ``/docs/auth-flow``. The canonical's slash twin is the page's path: the same document,
    one record, under the canonical's URL (its canonical decides the slash form, rule 7),
    none flagged ``canonical_elsewhere``."""
    routes = {
        "/": page(["/docs/auth-flow?config=static"], "Home"),
        "/docs/auth-flow?config=static": _moved("/docs/auth-flow/?config=static"),
        "/docs/auth-flow/?config=static": _canonical_page("/docs/auth-flow", "Auth flow"),
        "/docs/auth-flow": _moved("/docs/auth-flow/"),
        "/docs/auth-flow/": _canonical_page("/docs/auth-flow", "Auth flow"),
    }
    server = Server(Routes(routes))
    try:
        result, _ = crawl(tmp_path, server.origin + "/", "-a", f"mode={mode}", spider="discover")
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
    recs = {r["url"][len(server.origin) :]: r for r in result.records}
    assert sorted(recs) == ["/", "/docs/auth-flow"], sorted(recs)
    assert recs["/docs/auth-flow"]["title"] == "Auth flow"
    assert not [u for u, r in recs.items() if "canonical_elsewhere" in flags(r)]
    assert result.discovery["counts"].get("canonical_elsewhere", 0) == 0
