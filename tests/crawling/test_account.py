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
