"""The path tree (SPEC §9): the site's URLs as nested path segments, each node with its
counts by kind, by source and by status (HTTP status of a fetched page, ``listed`` for a
URL nobody fetched), aggregated up the tree — the basis of the HTML report.

Memory grows with the number of nodes, never with the number of URLs:

- a node has at most ``max_children`` children (``TREE_MAX_CHILDREN``); the tree at most
  ``max_nodes`` nodes (``TREE_MAX_NODES``); segments below ``max_depth``
  (``TREE_MAX_DEPTH``) get no nodes of their own;
- what does not get a node of its own is counted in its parent's ``…`` entry (one per
  node, with the same tallies), so every node's count is exact: a node counts every URL at
  or below it, and ``count = own + sum(children) + …``;
- which URLs get their own node is decided per batch: when a batch arrives and the parent
  node has room, each URL under it is counted in its own node (an existing one, or one
  created while room lasts, else ``…``); when the parent is already full, that batch's
  URLs under it go to ``…``.

Per batch, the URLs are counted by (parent, kind, source, status) with one ``Counter``
(C speed); the tree is walked once per distinct parent, not once per URL. Only URLs
whose parent node still has room are looked at one by one (to create their leaf), so
after the first few thousand URLs of a large site the per-URL cost is two comprehensions
and a ``Counter``. No Scrapy imports.
"""

from __future__ import annotations

from collections import Counter
from itertools import repeat
from typing import TYPE_CHECKING, Any

from discovery_crawler.selection.parents import Split, split_many

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

MORE = "…"  # the entry that counts what got no node of its own
LISTED = "listed"  # the status of a URL that was not fetched
UNKNOWN = "unknown"

Key = tuple[Any, Any, Any]  # (kind, source, status)


class Node:
    """One path segment: its tallies (URLs at or below it), children and ``…`` entry."""

    __slots__ = ("chain", "children", "more", "name", "tally")

    def __init__(self, name: str, parent: Node | None = None):
        self.name = name
        self.tally: dict[Key, int] = {}
        self.children: dict[str, Node] | None = None
        self.more: Node | None = None
        # The nodes from the root to this one: where a URL counted here is counted.
        self.chain: tuple[Node, ...] = (*parent.chain, self) if parent is not None else (self,)

    @property
    def count(self) -> int:
        return sum(self.tally.values())


def _column(values: Sequence[Any] | None, n: int) -> Iterable[Any]:
    return repeat(None, n) if values is None else values


def _same(values: Sequence[Any] | None) -> bool:
    """All values equal (C-speed ``list.count``; identity first, so shared strings are cheap)."""
    return values is None or not values or values.count(values[0]) == len(values)


def _first(values: Sequence[Any] | None) -> Any:
    return values[0] if values else None


def _combos(
    parents: list[str],
    kinds: Sequence[Any] | None,
    sources: Sequence[Any] | None,
    statuses: Sequence[Any] | None,
) -> dict[tuple[str, Any, Any, Any], int]:
    """URLs per (parent, kind, source, status). A sitemap batch has one source and no
    status, often one kind: count the parents (and kinds) only, which is 2-3× cheaper."""
    if _same(sources) and _same(statuses):
        source, status = _first(sources), _first(statuses)
        if _same(kinds):
            kind = _first(kinds)
            return {(p, kind, source, status): c for p, c in Counter(parents).items()}
        assert kinds is not None
        return {
            (p, k, source, status): c
            for (p, k), c in Counter(zip(parents, kinds, strict=True)).items()
        }
    n = len(parents)
    return Counter(
        zip(parents, _column(kinds, n), _column(sources, n), _column(statuses, n), strict=True)
    )


class PathTree:
    """A site's path tree, filled a batch at a time (``add_many``)."""

    def __init__(
        self,
        max_children: int = 200,
        max_depth: int = 8,
        max_nodes: int = 5_000,
        cache_size: int = 4_096,
    ):
        self.max_children = max(1, max_children)
        self.max_depth = max(1, max_depth)
        self.max_nodes = max(1, max_nodes)
        self.cache_size = cache_size
        self.root = Node("")
        self.nodes = 1
        self.collapsed = 0  # "…" entries (not counted in ``nodes``)
        # parent URL → (nodes from the root to where its URLs are counted, the node whose
        # children its URLs are, or None). Never stale: nodes are never removed, and a node
        # that was full stays full.
        self._chains: dict[str, tuple[tuple[Node, ...], Node | None]] = {}

    # -- building -------------------------------------------------------------------------
    def _room(self, node: Node) -> bool:
        children = node.children
        return self.nodes < self.max_nodes and (
            children is None or len(children) < self.max_children
        )

    def _more(self, node: Node) -> Node:
        more = node.more
        if more is None:
            more = node.more = Node(MORE, node)
            self.collapsed += 1
        return more

    def _child(self, node: Node, name: str) -> Node:
        """The child ``name`` of ``node``: existing, created while there is room, else ``…``."""
        children = node.children
        if children is not None:
            child = children.get(name)
            if child is not None:
                return child
        if not self._room(node):
            return self._more(node)
        child = Node(name, node)
        if children is None:
            node.children = children = {}
        children[name] = child
        self.nodes += 1
        return child

    def _resolve(self, parent: str) -> tuple[tuple[Node, ...], Node | None]:
        """Where the URLs under ``parent`` are counted: the chain of nodes from the root,
        and the node whose children they are (None when they get no nodes of their own)."""
        found = self._chains.get(parent)
        if found is not None:
            return found
        root = self.root
        if not parent or parent.endswith("//"):  # the root URL itself
            found = ((root,), None)
        else:
            rest = parent[parent.find("/", parent.find("//") + 2) + 1 :]
            first = rest[: rest.find("/")]
            children = root.children
            if rest and root.more is not None and (children is None or first not in children):
                # The common case on a site with very many top-level sections: the root
                # is full and this section has no node (its URLs are in the root's "…").
                found = root.more.chain, None
            else:
                found = self._walk(rest.split("/"))
        if len(self._chains) >= self.cache_size:
            self._chains.clear()
        self._chains[parent] = found
        return found

    def _walk(self, segments: list[str]) -> tuple[tuple[Node, ...], Node | None]:
        """``_resolve`` down the tree, a dictionary look-up a segment (each node knows its
        chain: nothing is built on the way, so a site with very many distinct parents
        costs no more than a few look-ups each)."""
        node = self.root
        depth = 0
        max_depth = self.max_depth
        for segment in segments:
            if not segment:
                continue
            depth += 1
            if depth > max_depth:
                return self._more(node).chain, None
            children = node.children
            child = children.get(segment) if children is not None else None
            if child is None:
                child = self._child(node, segment)
                if child is node.more:
                    return child.chain, None
            node = child
        if depth + 1 > max_depth:  # the leaves would be too deep
            return self._more(node).chain, None
        return node.chain, node

    def add_many(
        self,
        urls: list[str],
        kinds: Sequence[Any] | None = None,
        sources: Sequence[Any] | None = None,
        statuses: Sequence[Any] | None = None,
        split: Split | None = None,
    ) -> None:
        """Count a batch of URLs (lists parallel to ``urls``; None = all unknown / listed).
        ``split`` is ``paths.split_many(urls)`` when the caller already has it."""
        if not urls:
            return
        bare, parents = split if split is not None else split_many(urls)
        combos = _combos(parents, kinds, sources, statuses)
        resolve = self._resolve
        open_targets: dict[str, Node] = {}
        # Added up by the last node of each chain (then counted up its chain) or by the "…"
        # entry counted alone: the parents of a large site share a few thousand nodes. In
        # the order each first occurs, so each tally gets its keys in the order it would one
        # combination at a time (the report lists ties in that order).
        counts: dict[tuple[Node, Key, bool], int] = {}
        for (parent, kind, source, status), count in combos.items():
            chain, target = resolve(parent)
            key = (kind, source, status)
            up = chain[-1], key, True
            counts[up] = counts.get(up, 0) + count
            if target is None or parent in open_targets:
                # Open: ``_add_leaves`` counts every URL of this parent, whatever its
                # combination (a walk in this batch may have filled the node since).
                continue
            if self._room(target):
                open_targets[parent] = target
            else:
                alone = self._more(target), key, False
                counts[alone] = counts.get(alone, 0) + count
        for (last, key, up_the_chain), count in counts.items():
            for node in last.chain if up_the_chain else (last,):
                tally = node.tally
                tally[key] = tally.get(key, 0) + count
        if open_targets:
            self._add_leaves(open_targets, bare, parents, kinds, sources, statuses)

    def _add_leaves(
        self,
        open_targets: dict[str, Node],
        bare: list[str],
        parents: list[str],
        kinds: Sequence[Any] | None,
        sources: Sequence[Any] | None,
        statuses: Sequence[Any] | None,
    ) -> None:
        """The one per-URL loop: URLs whose parent node had room get their own node."""
        n = len(bare)
        get = open_targets.get
        child_of = self._child
        for url, parent, kind, source, status in zip(
            bare, parents, _column(kinds, n), _column(sources, n), _column(statuses, n), strict=True
        ):
            target = get(parent)
            if target is None:
                continue
            name = url[len(parent) :].rstrip("/")
            if not name:  # "/a//": counted in its parent already
                continue
            tally = child_of(target, name).tally
            key = (kind, source, status)
            tally[key] = tally.get(key, 0) + 1

    # -- reporting ------------------------------------------------------------------------
    @property
    def urls(self) -> int:
        return self.root.count

    def as_dict(self) -> dict[str, Any]:
        """The tree for the crawl log and the report: nested nodes, biggest first, ``…``
        last; each with ``path`` (segments joined, no trailing slash), ``count`` and the
        tallies ``kinds``, ``sources``, ``statuses``."""
        return {
            "urls": self.urls,
            "nodes": self.nodes,
            "collapsed": self.collapsed,
            "limits": {
                "max_children": self.max_children,
                "max_depth": self.max_depth,
                "max_nodes": self.max_nodes,
            },
            "root": _node_dict(self.root, "/"),
        }


def _node_dict(node: Node, path: str) -> dict[str, Any]:
    kinds: Counter[str] = Counter()
    sources: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    for (kind, source, status), count in node.tally.items():
        kinds[kind or UNKNOWN] += count
        sources[source or UNKNOWN] += count
        statuses[LISTED if status is None else str(status)] += count
    out: dict[str, Any] = {
        "name": node.name or "/",
        "path": path,
        "count": kinds.total(),
        "kinds": dict(kinds.most_common()),
        "sources": dict(sources.most_common()),
        "statuses": dict(statuses.most_common()),
    }
    if node.name == MORE:
        out["collapsed"] = True
    prefix = path.rstrip("/") + "/"
    children = [_node_dict(child, prefix + name) for name, child in (node.children or {}).items()]
    children.sort(key=lambda c: (-c["count"], c["name"]))
    if node.more is not None:
        children.append(_node_dict(node.more, prefix + MORE))
    if children:
        out["children"] = children
    return out
