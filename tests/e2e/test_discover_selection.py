"""Scoring and selection end to end (SPEC §8): ``scrapy crawl discover`` on a hand-made
sitemap served on loopback (``fixtures/selection``: 38 URLs shaped like the design note's
example), on the real MkDocs handbook sitemap from ../shared/realdata, and the default
selection (cap 5) of each built site in ../shared/realdata/sites: at least three distinct
templates — home, a listing, an article, and a form page where the site has one."""

from __future__ import annotations

import pytest

from discovery_crawler.selection.paths import url_path
from tests.conftest import FIXTURES, realdata
from tests.selection.test_realdata import SITES

SITE = "https://example.com"


def summary(result) -> list[str]:
    text = result.stderr[result.stderr.index("Summary") :]
    return [line.strip() for line in text.splitlines()[1:] if line.startswith("  ")]


def test_default_selection_summary_feed_and_crawl_log(serve, discover):
    server = serve(FIXTURES / "selection")
    result = discover(server.url("/sitemap.xml"))
    assert result.returncode == 0, result.stderr[-3000:]
    lines = summary(result)
    start = lines.index(f"Discovered 37 pages on {SITE} (sitemap.xml).")
    assert lines[start + 1 : start + 8] == [
        "Selecting 5 highest-priority pages:",
        "- / (home)",
        "- /about (pillar)",
        "- /blog/post-24/ (article)",
        "- /blog/ (listing)",
        "- /contact (form)",
        "Not selected (29 pages, in the inventory all the same; all=1 selects all): "
        "/blog/post-23/, /blog/post-22/, /blog/post-21/, "
        "/blog/post-20/, …",
    ]
    assert lines.index("Flagged as likely junk (3): /test/, /sample-page/, /holiday1/") < start
    # every feed record carries its score, after slug — junk too: scored, never selected
    by_url = {r["url"]: r for r in result.records}
    assert all(isinstance(r["score"], int) for r in result.records)
    junk = [r for r in result.records if r["flags"] == ["junk"]]
    assert [r["junk_pattern"] for r in junk] == ["test", "sample-page", "holiday-number"]
    assert list(by_url[f"{SITE}/about"])[-3:] == ["slug", "score", "change"]
    assert by_url[f"{SITE}/about"]["score"] == 7
    assert by_url[f"{SITE}/"]["score"] == 14  # home 10 + priority 1.0 → 4
    assert by_url[f"{SITE}/my-account/"]["score"] == 2 - 10  # shallow, auth-walled
    # the crawl log: cap, cap_source, kept and cut with score and breakdown
    sel = result.run["selection"]
    assert (sel["cap"], sel["cap_source"], sel["mode"]) == (5, "default", "cap")
    assert sel["kept"]["count"] == 5 and sel["cut"]["count"] == 29
    assert sel["candidates"] == 34 and sel["not_pages"] == 1  # the PDF is no page
    assert sel["junk"] == 3
    listed = {c["url"] for c in (*sel["kept"]["items"], *sel["cut"]["items"])}
    assert not listed & {r["url"] for r in junk}
    about = next(k for k in sel["kept"]["items"] if k["url"] == f"{SITE}/about")
    assert about == {
        "url": f"{SITE}/about",
        "slug": "about",
        "score": 7,
        "breakdown": [["pillar_keyword", 5], ["shallow_path", 2]],
        "type": "pillar",
        "lastmod": None,
        "priority": None,
    }
    assert [k["slug"] for k in sel["kept"]["items"]] == [
        "home",
        "about",
        "blog__post-24",
        "blog",
        "contact",
    ]
    assert len(sel["cut"]["items"]) == 29
    assert all(c["breakdown"] and "score" in c for c in sel["cut"]["items"])
    cut_scores = [c["score"] for c in sel["cut"]["items"]]
    assert cut_scores == sorted(cut_scores, reverse=True)
    assert sel["templates"] == ["home", "pillar", "article", "listing", "form"]
    assert sel["warnings"] == [] and sel["errors"] == []
    scores = sel["scores"]
    assert scores["count"] == 38 == len(scores["items"])
    assert len(scores["rules"]) == 9 and scores["rules"][0]["rule"] == "home"
    assert sum(scores["totals"].values()) == 38
    assert all(
        s["score"] == sum(p for _, p in s["breakdown"]) == by_url[s["url"]]["score"]
        for s in scores["items"]
    )


def test_cap_all_single_pages_and_profile(serve, discover):
    server = serve(FIXTURES / "selection")
    url = server.url("/sitemap.xml")
    two = discover(url, "-a", "cap=2")
    sel = two.run["selection"]
    assert (sel["cap"], sel["cap_source"], sel["kept"]["count"]) == (2, "argument", 2)
    assert "Selecting 2 highest-priority pages:" in two.stderr
    assert "Not selected (32 pages, in the inventory all the same; all=1 selects all)" in two.stderr

    everything = discover(url, "-a", "all=1", "-a", "cap=3")
    sel = everything.run["selection"]
    assert (sel["cap_source"], sel["kept"]["count"], sel["cut"]["count"]) == ("all", 34, 0)
    assert "Selecting all 34 pages (all=1):" in everything.stderr
    assert "Not selected (" not in everything.stderr
    assert sel["warnings"] == ["cap=3 ignored: all decides"]

    one = discover(url, "-a", "single=1")
    sel = one.run["selection"]
    assert (sel["cap"], sel["cap_source"]) == (1, "single")
    assert [k["url"] for k in sel["kept"]["items"]] == [f"{SITE}/"]
    assert "Selecting 1 highest-priority page:" in one.stderr

    named = discover(url, "-a", f"pages=pricing,/feed/,{SITE}/blog/post-3/,nope")
    sel = named.run["selection"]
    assert sel["cap_source"] == "pages"
    assert [k["url"] for k in sel["kept"]["items"]] == [
        f"{SITE}/pricing",
        f"{SITE}/feed/",
        f"{SITE}/blog/post-3/",
    ]
    assert sel["errors"] == ["pages=nope matched no discovered page"]
    assert "Error: pages=nope matched no discovered page" in named.stderr
    assert "Selecting 3 pages named in pages=:" in named.stderr

    sample = discover(url, "-a", "profile=sample")
    assert sample.run["selection"]["cap_source"] == "profile"
    assert sample.run["selection"]["cap"] == 5


def test_real_mkdocs_handbook_covers_three_templates(serve, discover):
    """The 23people MkDocs handbook (Spanish slugs, no English keywords at the top): the
    default selection still covers at least 3 distinct templates."""
    server = serve(realdata("sitemaps", "mkdocs-23people"))
    result = discover(server.url("/sitemap.xml.gz"))
    assert result.returncode == 0, result.stderr[-3000:]
    sel = result.run["selection"]
    kept_types = [k["type"] for k in sel["kept"]["items"]]
    assert sel["kept"]["count"] == 5 and sel["cut"]["count"] == 160
    assert len(set(kept_types)) >= 3, kept_types
    assert len(sel["templates"]) >= 3
    assert not any("fewer than 3" in w for w in sel["warnings"])
    assert "Selecting 5 highest-priority pages:" in result.stderr


@pytest.mark.parametrize("name", sorted(SITES))
def test_default_selection_covers_three_templates(serve, discover, tmp_path, name):
    from discovery_crawler.site_server import unpack_site

    rewrite, must = SITES[name]
    root = unpack_site(realdata("sites", name, "site.tar.xz"), tmp_path / "site")
    server = serve(root, rewrite=rewrite)
    result = discover(server.url("/"))
    assert result.returncode == 0, result.stderr[-3000:]
    selection = result.run["selection"]
    assert (selection["cap"], selection["cap_source"]) == (5, "default")
    kept = selection["kept"]["items"]
    assert len(kept) == 5
    types = [k["type"] for k in kept]
    assert len(set(types)) >= 3, types
    assert must <= set(types), (must - set(types), [(k["type"], k["url"]) for k in kept])
    assert set(types) <= set(selection["templates"])
    assert not any("template" in w for w in selection["warnings"])
    home = next(k for k in kept if k["type"] == "home")
    assert url_path(home["url"]) in ("/", "/index.html")
