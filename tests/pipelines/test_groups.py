"""``pipelines/groups.py`` on its own: the run's record gets the groups and the tree."""

from __future__ import annotations

from discovery_crawler.pipelines.groups import GroupsPipeline, columns
from tests.pipelines.helpers import build, crawler_for, records_batch, run_for


def test_groups_and_tree_on_the_record():
    crawler = crawler_for()
    stage = build(GroupsPipeline, crawler)
    stage.process_item(records_batch("/blog/a/", "/blog/b/", "/blog/c/", "/docs/x/", kind="page"))
    record = run_for(crawler).record
    assert record.groups is stage.groups and record.tree is stage.tree
    assert record.tree.as_dict()["root"]["count"] == 4


def test_columns_of_records():
    records = [
        {"url": "https://e.com/a/", "kind": "page", "source": "sitemap"},
        {"url": "https://e.com/b/", "kind": "page", "source": "link", "status": 200},
    ]
    assert columns(records) == (
        ["https://e.com/a/", "https://e.com/b/"],
        ["page", "page"],
        ["sitemap", "link"],
        [None, 200],
    )
    assert columns([{"url": "https://e.com/"}]) == (["https://e.com/"], [None], [None], None)


def test_a_union_urls_final_source_is_listed_linked_or_both():
    """Issue 37.1: the tree counts a union-mode URL under its final source (the feed's
    sitemap_only / links_only flags), not the one that found it first."""
    from discovery_crawler.crawling.account import UnionTally
    from discovery_crawler.pipelines.groups import final_source
    from discovery_crawler.urls.normalize import twin_key

    union = UnionTally(10)
    o = "https://example.com"
    for url in (o + "/listed", o + "/both"):
        union.listed(twin_key(url), url)
    for url in (o + "/linked/", o + "/both/"):  # the slash twin: the same page
        union.linked(twin_key(url), url)
    assert final_source(union, o + "/listed", "sitemap") == "sitemap"
    assert final_source(union, o + "/linked", "sitemap") == "link"
    assert final_source(union, o + "/both", "sitemap") == "both"
    assert final_source(union, o + "/both/", "link") == "both"
    assert final_source(union, o + "/canonical", "link") == "link"  # neither: as written
