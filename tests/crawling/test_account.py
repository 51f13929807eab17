"""The union tally of the link crawl (``crawling/account.py``)."""

from __future__ import annotations

import json

from discovery_crawler.crawling.account import UnionTally


def test_union_tally_counts_move_exactly():
    tally = UnionTally(cap=10)
    tally.listed("https://x/a/", "https://x/a/")
    tally.listed("https://x/b/", "https://x/b/")
    tally.linked("https://x/b/", "https://x/b/")
    tally.linked("https://x/c/", "https://x/c/")
    tally.linked("https://x/c/", "https://x/c/")
    out = tally.as_dict()
    assert (out["sitemap_only"]["count"], out["links_only"]["count"], out["both"]) == (1, 1, 1)
    assert out["sitemap_only"]["items"] == ["https://x/a/"]
    assert tally.flags_for("https://x/a") == ["sitemap_only"]  # trailing-slash twin
    assert tally.flags_for("https://x/c/") == ["links_only"]
    assert tally.flags_for("https://x/b/") is None
    assert json.dumps(out)


def test_no_sitemap_only_flag_once_a_page_fetch_failed_after_retries():
    """A failed page's links were not read: it, or any listed page, may be linked from it,
    so no page is called an orphan; links_only still holds (every sitemap was read)."""
    tally = UnionTally(cap=10)
    tally.listed("https://x/a/", "https://x/a/")  # listed, its fetch failed
    tally.linked("https://x/c/", "https://x/c/")
    assert tally.flags_for("https://x/a/") == ["sitemap_only"]
    tally.page_not_read()
    assert tally.flags_for("https://x/a/") is None
    assert tally.flags_for("https://x/c/") == ["links_only"]
    out = tally.as_dict()
    assert out["sitemap_only"]["judged"] is False
    assert "1 page fetch failed after retries" in out["sitemap_only"]["why"]
    assert out["links_only"]["judged"] is True and "why" not in out["links_only"]


def test_no_links_only_flag_once_a_sitemap_was_not_read():
    tally = UnionTally(cap=10)
    tally.listed("https://x/a/", "https://x/a/")
    tally.linked("https://x/c/", "https://x/c/")
    tally.sitemap_not_read()
    assert tally.flags_for("https://x/c/") is None  # the sitemap not read may list it
    assert tally.flags_for("https://x/a/") == ["sitemap_only"]
    assert tally.as_dict()["links_only"]["judged"] is False
    assert tally.unjudged("links_only") == (
        "1 sitemap not read after retries: no linked page is known to be missing from every sitemap"
    )
