"""``selection/_paths.c`` (the path tree's and the groups' per-parent loops in C) gives the
Python definitions' answers: the same tree (tallies, nodes, "…" entries, in the same order)
and the same groups, batch after batch, on hypothesis inputs — hostile ones included
(empty segments, non-ASCII, strings that are no URL)."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discovery_crawler.selection import groups as groups_module
from discovery_crawler.selection import parents as parents_module
from discovery_crawler.selection import tree as tree_module
from discovery_crawler.selection.groups import HOME, Groups
from discovery_crawler.selection.parents import is_origin
from discovery_crawler.selection.tree import PathTree
from tests import conftest

_paths = tree_module._paths
needs_paths = conftest.needs_compiled(_paths)

_SEGMENTS = st.sampled_from(["a", "b", "blog", "x-1", "", "é", "2024", "%C3%A9", "a.b"])
_PATHS = st.lists(_SEGMENTS, max_size=6).map("/".join)
_URLS = st.one_of(
    st.tuples(st.sampled_from(["https://h", "http://h:8080", "https://"]), _PATHS).map(
        lambda t: f"{t[0]}/{t[1]}"
    ),
    _PATHS.map(lambda p: p + "/"),  # strings that are no URL: still placed, never raised
    st.text(max_size=12),
)
_BATCHES = st.lists(st.lists(_URLS, min_size=1, max_size=30), min_size=1, max_size=8)
_KINDS = st.sampled_from(["page", "listing", None])


def _built(batches, kinds, sizes, compiled):
    saved = tree_module._paths, groups_module._paths
    tree_module._paths = groups_module._paths = compiled
    try:
        tree = PathTree(max_children=sizes[0], max_depth=sizes[1], max_nodes=sizes[2])
        groups = Groups(parent_groups_max=sizes[2], path_groups_max=sizes[2])
        for batch, kind in zip(batches, kinds, strict=False):
            column = [kind] * len(batch) if len(batch) % 2 else [kind, None] * len(batch)
            groups.add_many(batch)
            tree.add_many(batch, column[: len(batch)], ["sitemap"] * len(batch))
        # the order of every dict counts (the report lists ties in that order)
        return json.dumps(
            [tree.as_dict(), tree.nodes, tree.collapsed, groups.as_dict(), groups.urls]
        )
    finally:
        tree_module._paths, groups_module._paths = saved


@needs_paths
@settings(max_examples=300, deadline=None)
@given(
    _BATCHES,
    st.lists(_KINDS, min_size=8, max_size=8),
    st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 12)),
)
def test_the_compiled_tree_and_groups_are_the_python_ones(batches, kinds, sizes):
    """Small limits, so the tree fills within the first batches and the full-tree path (in
    C: ``full_places``, ``count_tallies``) takes most of them."""
    assert _built(batches, kinds, sizes, _paths) == _built(batches, kinds, sizes, None)


@needs_paths
@settings(max_examples=1000, deadline=None)
@given(st.lists(st.one_of(_URLS, st.text(max_size=20)), max_size=20))
def test_compiled_top_groups_is_the_comprehension(parents):
    per_parent = Counter(parents)
    groups = Groups._python_groups_of(per_parent)
    assert _paths.top_groups(per_parent, HOME) == groups
    # with the counts per group: the count over the URLs' parents, in the same order
    counts: Counter = Counter()
    assert _paths.top_groups(per_parent, HOME, counts) == groups
    expected = Counter(map(groups.__getitem__, parents))
    assert list(counts.items()) == list(expected.items())


@needs_paths
@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.one_of(_URLS, st.sampled_from(["", "https://", "http://", "https://h//", "x//"])),
        max_size=20,
    )
)
def test_compiled_origin_urls_is_the_python_count(urls):
    """The URLs under an origin parent, over a batch's distinct parents, as Python counts
    them (``is_origin``: empty, or ending in ``//``)."""
    per_parent = Counter(urls)
    expected = sum(count for parent, count in per_parent.items() if is_origin(parent))
    assert _paths.origin_urls(per_parent) == expected
    saved = groups_module._paths
    groups_module._paths = None
    try:
        assert Groups._origin_urls(per_parent) == expected
    finally:
        groups_module._paths = saved


@needs_paths
def test_anything_but_strings_takes_the_python_path():
    assert _paths.top_groups({1: 1}, HOME) is None
    assert _paths.origin_urls({1: 1}) is None
    assert _paths.origin_urls({"https://": "one"}) is None
    assert _paths.top_groups({"https://h/a/b": "not a count"}, HOME, {}) is None
    tree = PathTree(max_nodes=1)
    assert _paths.full_places(tree._at, ["https://h/a/", 2], {}, {}, tree._place_of) is None
    with pytest.raises(TypeError):
        _paths.full_places(tree._at, ("https://h/a/",), {}, {}, tree._place_of)
    with pytest.raises(TypeError):
        _paths.count_tallies({"p": "not a place"}, ["p"], None, None, None, 0)
    assert _paths.count_tallies({}, [], ("a tuple",), None, None, 0) is None


@needs_paths
def test_the_full_tree_walk_places_each_parent_at_its_nearest_node():
    tree = PathTree(max_children=10, max_nodes=3)
    tree.add_many(["https://h/a/b/c", "https://h/a/d"])  # nodes: root, a, a/b
    assert tree.nodes == 3
    places = _paths.full_places(
        tree._at,
        ["https://h/a/b/", "https://h/a/z/q/", "https://h/zz/", "https://", "https://h/a//x/"],
        tree._own_places,
        tree._up_places,
        tree._place_of,
    )
    a, ab = tree._at["a/"], tree._at["a/b/"]
    assert places["https://h/a/b/"] == (ab, ab.more)  # its own node, no room: and its "…"
    assert places["https://h/a/z/q/"] == (a.more, None)  # its nearest ancestor's "…"
    assert places["https://h/zz/"] == (tree.root.more, None)
    assert places["https://"] == (tree.root, None)  # the root URL
    assert places["https://h/a//x/"][0] is not None  # an empty segment: ``_resolve``'s
    assert tree._own_places[ab] == (ab, ab.more)


@needs_paths
def test_the_index_of_a_full_tree_finds_the_nodes_the_walk_by_substrings_finds():
    """``path_index``: each parent's ancestors looked up by a hash of its code points, not
    a substring each — the same places for wide strings, a path with more "/" than the
    index walks (by substrings then) and one whose nearest node is the root."""
    tree = PathTree(max_children=10, max_nodes=6)
    tree.add_many(["https://h/a/b/c", "https://h/a/d", "https://h/é/日/x", "https://h/é/y"])
    assert tree.nodes == 6
    deep = "https://h/a/" + "s/" * 70
    parents = [
        "https://h/a/b/",
        "https://h/a/z/q/",
        "https://h/zz/",
        "https://h/é/日/",
        "https://h/é/日本/",
        "https://h/é/",
        "https://",
        "https://h/a//x/",
        deep,
        "https://h/",
    ]
    index = _paths.path_index(tree._at)
    assert index is not None
    walked = _paths.full_places(tree._at, parents, {}, {}, tree._place_of)
    indexed = _paths.full_places(tree._at, parents, {}, {}, tree._place_of, index)
    assert indexed == walked
    assert indexed == tree._places_when_full(parents)
    assert indexed[deep] == (tree._at["a/"].more, None)
    assert _paths.path_index({1: tree.root}) is None


_SPLIT_SEGMENTS = st.sampled_from(["a", "", "é", "x?y", "#f", "?", "//", "%2F", "a.b/", "日本"])
_SPLIT_URLS = st.one_of(
    st.lists(_SPLIT_SEGMENTS, max_size=6).map(lambda s: "https://h/" + "/".join(s)),
    st.lists(_SPLIT_SEGMENTS, max_size=5).map("/".join),  # no URL
    st.text(alphabet="/?#ab:hé", max_size=14),
    st.text(max_size=10),
)


@needs_paths
@settings(max_examples=1000, deadline=None)
@given(st.lists(_SPLIT_URLS, max_size=12))
def test_compiled_splits_and_depths_are_the_python_ones(urls):
    split = _paths.split_many(urls)
    python = parents_module._split_many(urls)
    assert split == tuple(python)
    assert (split[0] is urls) == (python.bare is urls)  # no query anywhere: the list itself
    depths = _paths.path_depths(urls)  # None: the definition counts URL by URL
    if depths is not None:
        assert list(depths.items()) == list(parents_module._count_path_depths(urls).items())


_ASCII_SEGMENTS = st.sampled_from(["a", "", "x?y", "#f", "?", "//", "%2F", "a.b/", "bb"])
_ASCII_URLS = st.one_of(
    st.lists(_ASCII_SEGMENTS, max_size=8).map(lambda s: "https://h/" + "/".join(s)),
    st.integers(0, 70).map(lambda d: "http://h:1/" + "s/" * d + "p?q=/#/"),  # deep
    st.text(alphabet="/?#ab:", max_size=14),
)


@needs_paths
@settings(max_examples=1000, deadline=None)
@given(st.lists(_ASCII_URLS, max_size=12))
def test_compiled_depths_of_one_byte_urls_are_the_python_ones(urls):
    """The byte loop that reads 1-byte URLs (deep ones included) counts them as
    the definition: the same counts in the same order, None where it counts URL by URL."""
    depths = _paths.path_depths(urls)
    python = parents_module._count_path_depths(urls)
    if depths is None:  # only where some URL's cut part does not hold "//" once
        cut = [u.partition("?")[0].partition("#")[0] for u in urls]
        assert any(c.count("//") != 1 or c.startswith("/") for c in cut)
    else:
        assert list(depths.items()) == list(python.items())


@needs_paths
def test_normalized_urls_take_the_compiled_depths():
    assert _paths.path_depths(["https://h/", "https://h/a/b?x=/y", "http://h:1/a"]) == {
        0: 1,
        2: 1,
        1: 1,
    }
    assert _paths.path_depths(["https://h//a"]) is None
    assert _paths.split_many(["https://h/a/", 1]) is None


def _tallies(node):
    """Every tally of the tree, in its order, depth first."""
    out = [(node.name, list(node.tally.items()))]
    for child in (node.children or {}).values():
        out.extend(_tallies(child))
    if node.more is not None:
        out.extend(_tallies(node.more))
    return out


_KEYED = st.tuples(
    _URLS,
    st.sampled_from(["page", "listing", None]),
    st.sampled_from(["sitemap", "alternate", "link"]),
    st.sampled_from([None, 200, 404]),
)


@needs_paths
@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(_KEYED, min_size=1, max_size=30), min_size=1, max_size=6),
    st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 12)),
)
def test_compiled_counting_keeps_each_tallys_keys_in_the_python_order(batches, sizes):
    """Each URL its own (kind, source, status): a key new to a tally comes where its first
    URL counted there came, whichever place that URL was counted at."""
    built = []
    for compiled in (_paths, None):
        saved = tree_module._paths
        tree_module._paths = compiled
        try:
            tree = PathTree(max_children=sizes[0], max_depth=sizes[1], max_nodes=sizes[2])
            for batch in batches:
                urls, kinds, sources, statuses = (
                    list(column) for column in zip(*batch, strict=True)
                )
                tree.add_many(urls, kinds, sources, statuses)
            built.append(_tallies(tree.root))
        finally:
            tree_module._paths = saved
    assert built[0] == built[1]


@needs_paths
def test_compiled_counting_files_each_key_under_one_tuple():
    """Counted in C, every batch's (kind, source, status) keys are the run's one tuple of
    each (a node's tallies find them by identity); counting without that table gives the
    same tallies, and a table that is not a dict is refused."""
    batches = [
        [f"https://h/{s}/p-{i}/" for i in range(40) for s in ("a", "b/c", "d/e/f")],
        [f"https://h/{s}/q-{i}" for i in range(40) for s in ("a", "b/c", "g")],
    ]
    built = []
    for interned in (True, False):
        tree = PathTree(max_children=2, max_nodes=3)
        if not interned:
            tree._keys = None  # type: ignore[assignment]
        for n, batch in enumerate(batches):
            kinds = ["page" if i % 3 else "listing" for i in range(len(batch))]
            tree.add_many(
                batch, kinds, ["sitemap"] * len(batch), [None, 200][n : n + 1] * len(batch)
            )
        built.append(_tallies(tree.root))
        if interned:
            one = tree._keys
            assert len(one) == 4  # two kinds, two statuses
            stack = [tree.root]
            while stack:
                node = stack.pop()
                for key in node.own:  # what the C counted (leaves are counted in Python)
                    assert one[key] is key
                stack.extend([*(node.children or {}).values(), *filter(None, [node.more])])
    assert built[0] == built[1]
    with pytest.raises(TypeError):
        _paths.count_tallies({}, [], None, None, None, 0, ["not a dict"])
