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
and a ``Counter``. A count goes to one node, where its parent's URLs are counted (its own
counts, ``Node.own``); the tallies up the tree are summed only when they are read
(``as_dict``), each key in the order its first URL came (``Node.seqs``), so a batch
touches as many nodes as it has distinct places, not every node above them. No Scrapy
imports.
"""

from __future__ import annotations

from collections import Counter
from itertools import repeat
from typing import TYPE_CHECKING, Any

from discovery_crawler.compiled import extension
from discovery_crawler.selection.parents import Split, split_many

# the full tree's walk per parent in C (``_paths.c``); where it was not built, in Python
_paths = extension("discovery_crawler.selection._paths")

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

MORE = "…"  # the entry that counts what got no node of its own
LISTED = "listed"  # the status of a URL that was not fetched
BOTH = "both"  # union mode: the source of a URL a sitemap listed and a page linked
UNKNOWN = "unknown"

Key = tuple[Any, Any, Any]  # (kind, source, status)


class Node:
    """One path segment: the URLs counted here, children and ``…`` entry. Its tally (URLs
    at or below it) is summed from its own counts and its children's when it is read."""

    __slots__ = ("chain", "children", "leaf", "more", "name", "own", "seqs")

    def __init__(self, name: str, parent: Node | None = None):
        self.name = name
        # URLs whose parent's place this node is (``add_many``), by (kind, source, status)
        self.own: dict[Key, int] = {}
        # URLs that are this node (``_add_leaves``; counted in their parent's ``own`` too)
        self.leaf: dict[Key, int] = {}
        # key -> when its first URL was counted here (``PathTree.seq`` order): a tally
        # lists its keys in the order their first URLs came, as one URL at a time would
        self.seqs: dict[Key, int] = {}
        self.children: dict[str, Node] | None = None
        self.more: Node | None = None
        # The nodes from the root to this one.
        self.chain: tuple[Node, ...] = (*parent.chain, self) if parent is not None else (self,)

    @property
    def tally(self) -> dict[Key, int]:
        """The URLs at or below this node, by (kind, source, status), in first-seen order."""
        return _aggregates(self)[self]

    @property
    def count(self) -> int:
        return sum(self.tally.values())


def _aggregates(root: Node) -> dict[Node, dict[Key, int]]:
    """The tally of ``root`` and of every node below it (``Node.tally``), summed in one
    walk: a node's own and leaf counts, and each child's (its ``…`` entry's too) less the
    child's leaf counts, which the node counted as its own already."""
    tallies: dict[Node, dict[Key, int]] = {}

    def walk(node: Node) -> tuple[dict[Key, int], dict[Key, int]]:
        counts = dict(node.own)
        seqs = dict(node.seqs)
        for key, n in node.leaf.items():
            counts[key] = counts.get(key, 0) + n
        for child in _children(node):
            below, firsts = walk(child)
            _add_below(counts, seqs, below, firsts, child.leaf)
        counts = {key: n for key, n in counts.items() if n}
        tallies[node] = {key: counts[key] for key in sorted(counts, key=seqs.__getitem__)}
        return counts, seqs

    walk(root)
    return tallies


def _children(node: Node) -> list[Node]:
    children = list(node.children.values()) if node.children else []
    if node.more is not None:
        children.append(node.more)
    return children


def _add_below(
    counts: dict[Key, int],
    seqs: dict[Key, int],
    below: dict[Key, int],
    firsts: dict[Key, int],
    leaf: dict[Key, int],
) -> None:
    """A child's counts into its parent's, less the child's leaf counts (its parent
    counted those URLs as its own), each key at its earliest first URL."""
    for key, n in below.items():
        n -= leaf.get(key, 0)
        if n:
            counts[key] = counts.get(key, 0) + n
        seq = firsts[key]
        if seqs.get(key, seq) >= seq:
            seqs[key] = seq


def _column(values: Sequence[Any] | None, n: int) -> Iterable[Any]:
    return repeat(None, n) if values is None else values


def _same(values: Sequence[Any] | None) -> bool:
    """All values equal (C-speed ``list.count``; identity first, so shared strings are cheap)."""
    return values is None or not values or values.count(values[0]) == len(values)


def _first(values: Sequence[Any] | None) -> Any:
    return values[0] if values else None


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
        self.seq = 0  # where the next batch's URLs start in the run's order (two per URL)
        self.nodes = 1
        self.collapsed = 0  # "…" entries (not counted in ``nodes``)
        # path (``a/b/``) → (nodes from the root to where the URLs under it are counted, the
        # node whose children they are, or None): the paths with a node of their own and the
        # parent paths ``_step`` went through. Never stale: nodes are never removed, and a
        # node that was full stays full.
        self._chains: dict[str, tuple[tuple[Node, ...], Node | None]] = {}
        # path (``a/b/``, as ``_step`` reads it) → its node, for every node but "…" entries:
        # once the tree is full, where a parent's URLs go follows from these alone.
        self._at: dict[str, Node] = {"": self.root}
        # Once the tree is full, where a node's URLs go never changes: the place of each node
        # met as a parent's own (``_own_places``) and as an ancestor's (``_up_places``).
        self._own_places: dict[Node, tuple[Node, Node | None]] = {}
        self._up_places: dict[Node, tuple[Node, Node | None]] = {}
        # (len(_at), ``_paths.path_index(_at)``): a full tree's paths found without making
        # a substring of each ancestor (built again if ``_at`` grew since).
        self._index: tuple[int, Any] | None = None
        # (kind, source, status) → the one tuple of it the compiled counting files tallies
        # under, so a node's tallies find their keys by identity, not by comparing tuples.
        self._keys: dict[Key, Key] = {}

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
        self._at[self._path_of(child)] = child
        self.nodes += 1
        return child

    @staticmethod
    def _path_of(node: Node) -> str:
        return "".join(n.name + "/" for n in node.chain[1:])

    def _resolve(self, parent: str) -> tuple[tuple[Node, ...], Node | None]:
        """Where the URLs under ``parent`` are counted: the chain of nodes from the root,
        and the node whose children they are (None when they get no nodes of their own)."""
        root = self.root
        if not parent or parent.endswith("//"):  # the root URL itself
            return root.chain, None
        rest = parent[parent.find("/", parent.find("//") + 2) + 1 :]
        more = root.more
        if more is not None and rest[:1] not in ("", "/"):  # ("//x/": the walk skips it)
            children = root.children
            if children is None or rest[: rest.find("/")] not in children:
                # The common case on a site with very many top-level sections: the root
                # is full and this section has no node (its URLs are in the root's "…").
                return more.chain, None
        found = self._chains.get(rest)
        if found is None:
            found = self._step(rest)
            if found[1] is not None:  # a node of its own: as many as there are nodes
                self._remember(rest, found)
        return found

    def _remember(self, rest: str, found: tuple[tuple[Node, ...], Node | None]) -> None:
        if len(self._chains) >= self.cache_size:
            self._chains.clear()
        self._chains[rest] = found

    def _step(self, rest: str) -> tuple[tuple[Node, ...], Node | None]:
        """``_resolve`` of a path (``a/b/c/``, segments each ended by ``/``) from its
        parent path's: one segment, one look-up. The parent paths of a site with very many
        distinct parents are shared by many, so they are remembered, the paths not."""
        if not rest:
            return self.root.chain, self.root
        cut = rest.rfind("/", 0, -1) + 1
        up = rest[:cut]
        found = self._chains.get(up)
        if found is None:
            found = self._step(up)
            self._remember(up, found)
        node = found[1]
        segment = rest[cut:-1]
        if node is None or not segment:  # counted in a "…" above, or "a//b": same place
            return found
        children = node.children
        child = children.get(segment) if children is not None else None
        if child is None:
            more = node.more
            if more is not None and (
                self.nodes >= self.max_nodes
                or (children is not None and len(children) >= self.max_children)
            ):
                # ``_child``'s answer, inline: a folder a URL (``/questions/<id>/``) meets
                # its full parent once a URL, and three calls were most of its cost.
                return more.chain, None
            child = self._child(node, segment)
            if child is node.more:
                return child.chain, None
        if len(child.chain) > self.max_depth:  # the leaves would be too deep
            return self._more(child).chain, None
        return child.chain, child

    def _place_of(self, parent: str, node: Node | None, own: bool) -> tuple[Node, Node | None]:
        """``_places_when_full``'s place of ``parent`` whose path (``own``) or nearest
        ancestor path with a node is ``node``'s; None: a parent the walk does not take."""
        if node is None:
            if not parent or parent.endswith("//"):  # the root URL itself
                return self.root, None
            chain, target = self._resolve(parent)
            return chain[-1], (self._more(target) if target is not None else None)
        if not own:
            return node.more or self._more(node), None
        if len(node.chain) > self.max_depth:
            return node.more or self._more(node), None
        return node, node.more or self._more(node)

    def _full_places(self, parents: list[str]) -> dict[str, tuple[Node, Node | None]]:
        """``_places_when_full``, in C where it was built (``_paths.full_places``, with an
        index of the full tree's paths): on a site with very many distinct parents it runs
        about once a URL."""
        if _paths is not None:
            index = self._index
            if index is None or index[0] != len(self._at):
                index = self._index = (len(self._at), _paths.path_index(self._at))
            places = _paths.full_places(
                self._at, parents, self._own_places, self._up_places, self._place_of, index[1]
            )
            if places is not None:
                return places
        return self._places_when_full(parents)

    def _places_when_full(self, parents: list[str]) -> dict[str, tuple[Node, Node | None]]:
        """``add_many``'s places of a batch's distinct parents once the tree is full, a
        level at a time over the whole batch: a parent's URLs are counted at its own node
        and that node's "…" (no room for leaves), else in the "…" of its nearest ancestor
        with a node; no walk per parent. Paths with an empty segment take ``_resolve``."""
        at = self._at
        more_of = self._more
        max_depth = self.max_depth
        places: dict[str, tuple[Node, Node | None]] = {}
        paths: list[str] = []
        owners: list[str] = []
        for parent in parents:
            if not parent or parent.endswith("//"):  # the root URL itself
                places[parent] = self.root, None
                continue
            path = parent[parent.find("/", parent.find("//") + 2) + 1 :]
            if "//" in path or path[:1] == "/":
                chain, target = self._resolve(parent)
                places[parent] = chain[-1], (more_of(target) if target is not None else None)
                continue
            paths.append(path)
            owners.append(parent)
        nodes = list(map(at.get, paths))
        for parent, node in zip(owners, nodes, strict=True):
            if node is not None:  # its own node, which has no room for more children
                if len(node.chain) > max_depth:
                    places[parent] = node.more or more_of(node), None
                else:
                    places[parent] = node, node.more or more_of(node)
        missing = [i for i, node in enumerate(nodes) if node is None]
        while missing:
            ups = [paths[i] for i in missing]
            ups = [up[: up.rfind("/", 0, -1) + 1] for up in ups]
            for i, up in zip(missing, ups, strict=True):
                paths[i] = up
            found = list(map(at.get, ups))
            still = []
            for i, node in zip(missing, found, strict=True):
                if node is None:
                    still.append(i)
                else:  # the nearest ancestor with a node: its "…"
                    places[owners[i]] = node.more or more_of(node), None
            missing = still
        return places

    def add_many(
        self,
        urls: list[str],
        kinds: Sequence[Any] | None = None,
        sources: Sequence[Any] | None = None,
        statuses: Sequence[Any] | None = None,
        split: Split | None = None,
        distinct: dict[str, Any] | None = None,
    ) -> None:
        """Count a batch of URLs (lists parallel to ``urls``; None = all unknown / listed).
        ``split`` is ``paths.split_many(urls)`` when the caller already has it, ``distinct``
        a dict of its parents in the order each first occurs (their ``Counter``)."""
        if not urls:
            return
        bare, parents = split if split is not None else split_many(urls)
        resolve = self._resolve
        more_of = self._more
        max_nodes, max_children = self.max_nodes, self.max_children
        open_targets: dict[str, Node] = {}
        # Each distinct parent, in the order it first occurs: the node its URLs are under
        # (the last of a chain) and, when that node is full, its "…" entry, where they are
        # counted then. Decided in that order because resolving a parent may fill a node
        # the next one needs room in.
        if distinct is None:
            distinct = dict.fromkeys(parents)
        if self.nodes >= max_nodes:  # full: no node is made, so no order to keep
            places = self._full_places(list(distinct))
        else:
            places = {}
            for parent in distinct:
                chain, target = resolve(parent)
                alone = None
                if target is not None:
                    children = target.children
                    if self.nodes < max_nodes and (
                        children is None or len(children) < max_children
                    ):
                        open_targets[parent] = target  # its URLs get nodes: ``_add_leaves``
                    else:
                        alone = more_of(target)
                places[parent] = chain[-1], alone
        # Then every URL counted at its place under its (kind, source, status), so each
        # tally gets its keys in the order it would one URL at a time (the report lists ties
        # in that order).
        offset = self.seq
        self.seq += 2 * len(urls)  # the batch's places, then its leaves
        if (
            _paths is None
            or parents.__class__ is not list
            or not _paths.count_tallies(
                places, parents, kinds, sources, statuses, offset, self._keys
            )
        ):
            _count(places, parents, kinds, sources, statuses, offset)
        if open_targets:
            self._add_leaves(
                open_targets, bare, parents, kinds, sources, statuses, offset + len(urls)
            )

    def _add_leaves(
        self,
        open_targets: dict[str, Node],
        bare: list[str],
        parents: list[str],
        kinds: Sequence[Any] | None,
        sources: Sequence[Any] | None,
        statuses: Sequence[Any] | None,
        offset: int,
    ) -> None:
        """The one per-URL loop: URLs whose parent node had room get their own node
        (``offset``: where the batch's leaves start in the run's order)."""
        n = len(bare)
        get = open_targets.get
        child_of = self._child
        for i, (url, parent, kind, source, status) in enumerate(
            zip(
                bare,
                parents,
                _column(kinds, n),
                _column(sources, n),
                _column(statuses, n),
                strict=True,
            )
        ):
            target = get(parent)
            if target is None:
                continue
            name = url[len(parent) :].rstrip("/")
            if not name:  # "/a//": counted in its parent already
                continue
            child = child_of(target, name)
            key = (kind, source, status)
            leaf = child.leaf
            leaf[key] = leaf.get(key, 0) + 1
            child.seqs.setdefault(key, offset + i)

    # -- reporting ------------------------------------------------------------------------
    @property
    def urls(self) -> int:
        """Every URL counted: each is in one node's own counts."""
        stack, total = [self.root], 0
        while stack:
            node = stack.pop()
            total += sum(node.own.values())
            stack.extend(_children(node))
        return total

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
            "root": _node_dict(self.root, "/", _aggregates(self.root)),
        }


def _count(
    places: dict[str, tuple[Node, Node | None]],
    parents: list[str],
    kinds: Sequence[Any] | None,
    sources: Sequence[Any] | None,
    statuses: Sequence[Any] | None,
    offset: int,
) -> None:
    """``add_many``'s counting in Python, the definition ``_paths.count_tallies`` follows:
    the URLs counted by (place, kind, source, status) at C speed, in the order each first
    occurs, each count then added where its place counts (``_add_counts``)."""
    place = map(places.__getitem__, parents)
    key: Key | None = None
    if _same(kinds) and _same(sources) and _same(statuses):
        key = _first(kinds), _first(sources), _first(statuses)
        counts: Counter[Any] = Counter(place)
    else:
        n = len(parents)
        counts = Counter(
            zip(place, _column(kinds, n), _column(sources, n), _column(statuses, n), strict=True)
        )
    _add_counts(counts, key, offset)


def _add_counts(counts: Counter[Any], key: Key | None, offset: int) -> None:
    """Each count of a batch under its key in the own counts of its place's node (its "…"
    entry when it has one); a key new there takes ``offset`` + the rank of its
    (place, key) among the batch's, which come in the order of their first URLs.
    ``counts`` is by place when ``key`` is given, else by (place, kind, source, status)."""
    combos: Iterable[tuple[tuple[Node, Node | None], Key, int]]
    if key is not None:
        combos = ((p, key, count) for p, count in counts.items())
    else:
        combos = (
            (p, (kind, source, status), count)
            for (p, kind, source, status), count in counts.items()
        )
    for rank, ((last, alone), key_, count) in enumerate(combos):
        node = alone if alone is not None else last
        own = node.own
        own[key_] = own.get(key_, 0) + count
        node.seqs.setdefault(key_, offset + rank)


def _node_dict(node: Node, path: str, tallies: dict[Node, dict[Key, int]]) -> dict[str, Any]:
    kinds: Counter[str] = Counter()
    sources: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    for (kind, source, status), count in tallies[node].items():
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
    children = [
        _node_dict(child, prefix + name, tallies) for name, child in (node.children or {}).items()
    ]
    children.sort(key=lambda c: (-c["count"], c["name"]))
    if node.more is not None:
        children.append(_node_dict(node.more, prefix + MORE, tallies))
    if children:
        out["children"] = children
    return out
