"""The path tree (``selection/tree.py``): counts by kind, source and status aggregated up
the tree, exact under the caps (``…`` entries), bounded memory."""

from __future__ import annotations

import tracemalloc
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from discovery_crawler.selection.tree import MORE, PathTree

SITE = "https://example.com"


def built(rows: list[tuple[str, str, str, Any]], batch: int = 1000, **kwargs: int) -> PathTree:
    """rows: (path, kind, source, status)."""
    tree = PathTree(**kwargs)
    for i in range(0, len(rows), batch):
        part = rows[i : i + batch]
        tree.add_many(
            [SITE + r[0] for r in part],
            [r[1] for r in part],
            [r[2] for r in part],
            [r[3] for r in part],
        )
    return tree


def node(data: dict[str, Any], *names: str) -> dict[str, Any]:
    current = data["root"]
    for name in names:
        current = next(c for c in current.get("children", []) if c["name"] == name)
    return current


def check_sums(n: dict[str, Any]) -> int:
    """Every node: count = own + children + …; tallies sum to the count. Returns count."""
    for tally in ("kinds", "sources", "statuses"):
        assert sum(n[tally].values()) == n["count"], n
    below = sum(check_sums(c) for c in n.get("children", []))
    assert below <= n["count"], n
    return n["count"]


def test_nested_counts_by_kind_source_and_status():
    rows = [
        ("/", "page", "link", 200),
        ("/blog/", "page", "sitemap", None),
        ("/blog/a/", "page", "sitemap", None),
        ("/blog/b/", "page", "link", 404),
        ("/blog/2024/c/", "page", "sitemap", None),
        ("/files/report.pdf", "document", "link", None),
    ]
    data = built(rows).as_dict()
    root = data["root"]
    assert root["count"] == 6 and data["urls"] == 6
    assert root["statuses"] == {"listed": 4, "200": 1, "404": 1}
    assert root["kinds"] == {"page": 5, "document": 1}
    blog = node(data, "blog")
    assert blog["path"] == "/blog" and blog["count"] == 4
    assert blog["sources"] == {"sitemap": 3, "link": 1}
    assert [c["name"] for c in blog["children"]] == ["2024", "a", "b"]  # biggest, then name
    assert node(data, "blog", "b")["statuses"] == {"404": 1}
    assert node(data, "blog", "2024", "c")["path"] == "/blog/2024/c"
    assert node(data, "files", "report.pdf")["kinds"] == {"document": 1}
    check_sums(root)


def test_missing_columns_are_unknown_and_listed():
    tree = PathTree()
    tree.add_many([f"{SITE}/a/", f"{SITE}/a/b/"])
    root = tree.as_dict()["root"]
    assert root["kinds"] == {"unknown": 2} and root["statuses"] == {"listed": 2}


def test_children_cap_collapses_the_rest_into_a_counted_entry():
    rows = [(f"/blog/p{i}/", "page", "sitemap", None) for i in range(50)]
    data = built(rows, batch=7, max_children=10).as_dict()
    blog = node(data, "blog")
    assert blog["count"] == 50
    more = blog["children"][-1]
    assert more["name"] == MORE and more["collapsed"] is True
    assert len(blog["children"]) == 11
    assert more["count"] == 40
    check_sums(data["root"])


def test_depth_cap_counts_deeper_urls_in_the_last_nodes_entry():
    rows = [("/a/b/c/d/e/", "page", "sitemap", None), ("/a/b/x/", "page", "sitemap", None)]
    data = built(rows, max_depth=2).as_dict()
    b = node(data, "a", "b")
    assert b["count"] == 2
    assert [c["name"] for c in b["children"]] == [MORE]
    assert b["children"][0]["count"] == 2
    check_sums(data["root"])


def test_node_cap_bounds_the_tree():
    rows = [(f"/s{i}/p{j}/", "page", "sitemap", None) for i in range(30) for j in range(5)]
    tree = built(rows, max_nodes=20)
    assert tree.nodes == 20
    data = tree.as_dict()
    assert data["root"]["count"] == 150
    check_sums(data["root"])


segment = st.sampled_from(["a", "b", "c", "blog", "2024", "x-y"])
row = st.tuples(
    st.lists(segment, max_size=5).map(lambda s: "/" + "".join(p + "/" for p in s)),
    st.sampled_from(["page", "document"]),
    st.sampled_from(["sitemap", "link"]),
    st.sampled_from([None, 200, 404]),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(row, max_size=60), st.integers(1, 9), st.integers(1, 4), st.integers(1, 4))
def test_counts_are_exact_under_any_caps(rows, batch, width, depth):
    data = built(rows, batch=batch, max_children=width, max_depth=depth).as_dict()
    assert data["root"]["count"] == len(rows)
    check_sums(data["root"])


@settings(max_examples=100, deadline=None)
@given(st.lists(row, max_size=60), st.integers(1, 9))
def test_without_binding_caps_every_path_has_its_exact_count(rows, batch):
    data = built(rows, batch=batch).as_dict()
    for path, *_ in rows:
        segments = [s for s in path.split("/") if s]
        expected = sum(1 for p, *_ in rows if p.startswith(path))
        assert node(data, *segments)["count"] == expected


def test_a_parent_opened_in_a_batch_counts_each_url_once():
    """Found by hypothesis: /c/ had room for /c/a/ when first met, then a deeper URL's walk
    filled it; its second combination (another status) was counted in ``…`` as well."""
    rows = [("/c/a/", "page", "sitemap", None), ("/c/a/a/", "page", "sitemap", None)]
    rows.append(("/c/a/", "page", "sitemap", 200))
    data = built(rows, batch=3, max_children=1, max_depth=2).as_dict()
    assert data["root"]["count"] == 3
    assert node(data, "c")["count"] == 3 and node(data, "c", "a")["count"] == 3
    check_sums(data["root"])


def peak_of(tree: PathTree, make, n: int, batch: int = 1000) -> int:
    kinds, sources = ["page"] * batch, ["sitemap"] * batch
    tracemalloc.start()
    try:
        for start in range(0, n, batch):
            tree.add_many(make(start, batch), kinds, sources, None)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_bounded_with_a_million_urls_in_few_groups():
    def make(start: int, n: int) -> list[str]:
        return [f"{SITE}/s{i % 5}/{i % 7}/post-{i}/" for i in range(start, start + n)]

    tree = PathTree()
    peak = peak_of(tree, make, 1_000_000)
    assert peak < 20_000_000, peak
    data = tree.as_dict()
    assert data["root"]["count"] == 1_000_000
    assert node(data, "s0")["count"] == 200_000
    assert tree.nodes <= 5_000


def test_memory_bounded_by_the_caps_with_a_million_distinct_parents():
    def make(start: int, n: int) -> list[str]:
        return [f"{SITE}/c{i}/item/" for i in range(start, start + n)]

    tree = PathTree()
    peak = peak_of(tree, make, 1_000_000)
    assert peak < 20_000_000, peak
    data = tree.as_dict()
    assert data["root"]["count"] == 1_000_000
    assert data["root"]["children"][-1]["name"] == MORE
    assert data["root"]["children"][-1]["count"] == 1_000_000 - 200
    assert tree.nodes <= 5_000


odd_path = st.lists(st.sampled_from(["a", "b", "c", "blog", "", "x-y"]), max_size=6).map(
    lambda s: "/" + "".join(p + "/" for p in s)
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(row, min_size=1, max_size=40),
    st.lists(odd_path, min_size=1, max_size=20),
    st.integers(1, 12),
    st.integers(1, 4),
    st.integers(1, 4),
)
def test_a_full_tree_places_each_parent_where_a_walk_from_the_root_would(
    rows, parents, max_nodes, width, depth
):
    """Once the tree is full, ``add_many`` places a batch's parents a level at a time over
    the batch (``_places_when_full``) instead of walking from the root for each: the same
    node and "…" entry for every parent, empty segments included."""
    tree = built(rows, max_nodes=max_nodes, max_children=width, max_depth=depth)
    if tree.nodes < tree.max_nodes:
        return
    urls = [SITE + p for p in parents]
    by_level = tree._places_when_full(urls)
    for url in urls:
        chain, target = tree._resolve(url)
        expected = chain[-1], (tree._more(target) if target is not None else None)
        assert by_level[url] == expected, url
