"""The groups stage end to end (built on its own: ``tests/pipelines/test_groups.py``): ``scrapy
crawl discover`` on a loopback site; the crawl log carries ``groups`` and ``tree``, the
summary the groups line."""

from __future__ import annotations

from tests.conftest import FIXTURES

SITE = FIXTURES / "groups" / "site"


def test_crawl_log_and_summary_carry_groups_and_tree(serve, discover):
    server = serve(SITE, rewrite=["https://example.com"])
    result = discover(server.url("/sitemap.xml"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(result.records) == 12
    run = result.run
    groups = run["groups"]
    path_groups = {g["name"]: g["count"] for g in groups["path_groups"]}
    assert path_groups == {"blog": 5, "docs": 4, "other": 3}
    assert groups["path_groups"][-1]["id"] == "other"
    parents = {g["label"]: g for g in groups["parent_groups"]}
    assert parents["/blog/2024/"]["confidence"] == "high"
    assert parents["/blog/2024/"]["representative"] == server.url("/blog/2024/post-0-title/")
    tree = run["tree"]
    assert tree["root"]["count"] == 12
    assert tree["root"]["sources"] == {"sitemap": 12}
    assert tree["root"]["statuses"] == {"listed": 12}
    blog = next(c for c in tree["root"]["children"] if c["name"] == "blog")
    assert blog["count"] == 5 and blog["kinds"] == {"page": 5}
    assert "Groups (3): blog 5, docs 4, other 3" in result.stderr
