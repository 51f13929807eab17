"""The package's imports form layers, and no circle: read from the source with ``ast``
(every import: module-level, in a function, under ``TYPE_CHECKING``).

Layers, bottom to top — a module imports only from its own layer or below:

1. ``urls``: URL rules (normalize, kinds, filters, junk, slugs, the seen-set), the
   private names of other libraries they and the robots rules use (``private_names``:
   it imports no module of the package), the loader of the C extensions
   (``compiled``), and the feed record's fields, declared once (``record_fields``);
2. rules: sitemap parsing (``sitemaps``), ``selection``, robots.txt and refusal rules, the
   estimate, the progress line's figures, arguments, profiles, items, the project's
   signals, the run's outcomes and exit statuses, the job journal's file format;
3. records and files: the run record, verify's verdicts, indexability, the output files (feed lines,
   state.json, the crawl log, preview, report), the sitemap worker process and the facts
   it works out per URL (feed-line heads, state entries: the output's text, so above it);
4. Scrapy components: ``extensions``, ``middlewares``, ``pipelines``, ``crawling``, the
   feed exporters, the render add-on, distributed mode's Redis parts (``distributed``),
   the download handler (``handlers``);
5. entry points: ``spiders``, ``commands``, ``settings``, the Python API (``api``).

One import points up, on purpose: the package's ``__init__`` exports the API's names
lazily (a module-level ``__getattr__`` imports ``api`` when a name is first asked for,
never when the package is imported), so nothing below the API depends on it;
``LAZY_EXPORTS`` names that edge, and a test holds it inside ``__getattr__``.

Layers 1-3 import neither Scrapy nor Twisted: they are plain functions and classes that a
test or a benchmark calls without a crawler.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "discovery_crawler"
LAYERS = (
    ("urls", ("urls", "private_names", "compiled", "record_fields")),
    (
        "rules",
        (
            "",  # the package's __init__
            "sitemaps",
            "selection",
            "robots",
            "refusals",
            "outcomes",
            "unread",
            "retries",
            "estimate",
            "progress_figures",
            "arguments",
            "profiles",
            "items",
            "signals",
            "site_server",
            "sites_file",
            "journal",
        ),
    ),
    (
        "records and files",
        ("run_record", "verdicts", "indexing", "output", "sitemaps.facts", "sitemaps.worker"),
    ),
    (
        "components",
        (
            "extensions",
            "middlewares",
            "pipelines",
            "crawling",
            "distributed",
            "handlers",
            "output.exporters",
            "output.feed_storage",
            "rendering",
        ),
    ),
    ("entry points", ("spiders", "commands", "settings", "api")),
)
# (importer, imported): the package's lazy exports of the Python API (see the docstring)
LAZY_EXPORTS = {("discovery_crawler", "discovery_crawler.api")}
PURE = 3  # layers below this index import no Scrapy, no Twisted


def modules() -> dict[str, Path]:
    """Dotted name (``discovery_crawler.urls.seen``) → file, for every module; a C extension
    (``_seen_table.c``) is one too, importing nothing of the package (importing it is not
    importing its package's ``__init__``)."""
    found = {}
    for path in [*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.c")]:
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules that ``name`` imports (a name imported from a package counts
    as its module when it is one: ``from discovery_crawler.urls import seen``)."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    if path.suffix == ".c":
        return found
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = name.split(".") if is_package else name.split(".")[:-1]
                here = here[: len(here) - node.level + 1]
                base = ".".join([*here, base] if base else here)
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def graph() -> dict[str, set[str]]:
    """Every module's imports of the package's modules, the lazy exports left out."""
    known = modules()
    edges = {name: imports(name, path, known) for name, path in known.items()}
    for importer, imported in LAZY_EXPORTS:
        edges[importer].discard(imported)
    return edges


def external(path: Path) -> set[str]:
    """Top-level names of what the module imports from outside the package."""
    found: set[str] = set()
    if path.suffix == ".c":  # the C API only
        return found
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found


def layer_of(name: str) -> int:
    """The index in ``LAYERS`` of a module: its longest matching prefix decides."""
    rel = name.removeprefix("discovery_crawler").removeprefix(".")
    matches = [
        (len(prefix), index)
        for index, (_, prefixes) in enumerate(LAYERS)
        for prefix in prefixes
        if rel == prefix or (prefix and rel.startswith(prefix + "."))
    ]
    assert matches, f"{name} is in no layer: add it to tests/test_layers.py"
    return max(matches)[1]


def cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import circle (its modules in order, the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_graph_is_read_whole():
    edges = graph()
    assert "discovery_crawler.urls.seen" in edges["discovery_crawler.pipelines.dedup"]
    # a function-level import counts as much as one at the top
    assert "discovery_crawler.output.state_format" in edges["discovery_crawler.sitemaps.facts"]


def test_no_import_circle():
    found = cycle(graph())
    assert found is None, "import circle: " + " -> ".join(found or [])


def test_cycle_finder_finds_one():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None


def test_no_module_imports_from_a_layer_above_its_own():
    upward = [
        f"{name} ({LAYERS[layer_of(name)][0]}) imports {target} ({LAYERS[layer_of(target)][0]})"
        for name, targets in sorted(graph().items())
        for target in sorted(targets)
        if layer_of(target) > layer_of(name)
    ]
    assert upward == []


def test_rules_records_and_files_import_no_scrapy():
    known = modules()
    found = [
        f"{name} imports {sorted(external(path) & {'scrapy', 'twisted'})}"
        for name, path in sorted(known.items())
        if layer_of(name) < PURE and external(path) & {"scrapy", "twisted"}
    ]
    assert found == []


def test_the_lazy_exports_import_the_api_only_when_asked():
    """The package imports ``api`` in its ``__getattr__`` and nowhere else, and importing
    the package imports neither the API nor Scrapy (the sitemap worker imports it)."""
    import subprocess
    import sys

    init = PACKAGE / "__init__.py"
    tree = ast.parse(init.read_text(encoding="utf-8"))
    known = modules()
    [getattr_fn] = [
        n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "__getattr__"
    ]
    assert "discovery_crawler.api" in imports("discovery_crawler", init, known)
    top_level = ast.Module(body=[n for n in tree.body if n is not getattr_fn], type_ignores=[])
    assert not any(
        isinstance(n, ast.ImportFrom) and n.module == "discovery_crawler"
        for n in ast.walk(top_level)
    )
    code = (
        "import sys, discovery_crawler; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('scrapy', 'twisted', 'lxml') or m == 'discovery_crawler.api'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
