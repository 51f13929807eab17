"""The C extensions (``discovery_crawler/*/_*.c``) were built by ``pip install`` and are the
ones in use. In CI a missing build is a failure (``scripts/setup.sh`` builds them with the
C compiler ``.ci/run`` installs); elsewhere a skip that says so, and the same work runs in
Python. Each extension's own tests check it gives the Python code's answers.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from discovery_crawler import compiled
from discovery_crawler.output import feed_lines, state
from discovery_crawler.selection import groups, scoring, tree
from discovery_crawler.sitemaps import facts
from discovery_crawler.sitemaps.formats import plain_urlset
from discovery_crawler.urls import kinds, seen, slugs
from tests.conftest import IN_CI, ROOT

BUILDS = [
    ("discovery_crawler.urls._seen_table", lambda: seen._seen_table),
    ("discovery_crawler.urls._plain_bases", lambda: slugs._plain_bases),
    (
        "discovery_crawler.urls._known_origins",
        lambda: importlib.import_module("discovery_crawler.urls.normalize")._known_origins,
    ),
    ("discovery_crawler.urls._screens", lambda: kinds._screens),
    ("discovery_crawler.output._lines", lambda: feed_lines._lines),
    ("discovery_crawler.selection._paths", lambda: tree._paths),
    ("discovery_crawler.selection._rater", lambda: scoring._rater),
    ("discovery_crawler.sitemaps._records", lambda: facts._compiled_records),
    ("discovery_crawler.sitemaps._tails", lambda: plain_urlset._tails),
    ("discovery_crawler.sitemaps._windows", lambda: plain_urlset._windows),
]


@pytest.mark.parametrize(("name", "used"), BUILDS, ids=[name for name, _ in BUILDS])
def test_the_extension_is_built_and_used(name, used):
    module = used()
    if module is None:
        if IN_CI:
            pytest.fail(f"{name} is not built: its work runs in Python")
        pytest.skip(f"{name} is not built here (in CI this is a failure)")
    assert module.__name__ == name
    assert module.__file__.endswith(".so")


def test_each_user_takes_the_compiled_functions():
    """The modules that use an extension bind its functions, not their Python twins."""
    if feed_lines._lines is None or not seen.COMPILED:
        pytest.skip("not built here (test_the_extension_is_built_and_used says so in CI)")
    assert state.entry_lines is feed_lines._lines.entry_lines
    assert state._lines is feed_lines._lines
    assert groups._paths is tree._paths


def test_the_loader_knows_setup_pys_extensions():
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    [table] = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "EXTENSIONS" for t in node.targets)
    ]
    assert isinstance(table, ast.Dict)
    assert [key.value for key in table.keys] == list(compiled.EXTENSIONS)  # type: ignore[union-attr]


def test_a_missing_extension_is_said_in_one_line(monkeypatch):
    monkeypatch.setattr(compiled, "_missing", {})
    monkeypatch.setattr(compiled, "EXTENSIONS", (*compiled.EXTENSIONS, "discovery_crawler._no"))
    assert compiled.extension("discovery_crawler._no") is None
    line = compiled.fallback_line()
    assert line is not None and "\n" not in line
    assert line.startswith("C speed-ups not available (_no: No module named")
    assert line.endswith(compiled.PYTHON_PATH_COST)


def test_all_built_no_line(monkeypatch):
    if seen._seen_table is None:
        pytest.skip("not built here (test_the_extension_is_built_and_used says so in CI)")
    monkeypatch.setattr(compiled, "_missing", {})
    assert compiled.fallback_line() is None
    assert compiled.extracted_line() is None  # an installed package, not a zipped egg


def test_an_extension_in_a_zipped_egg_is_loaded(tmp_path):
    """An egg as ``bdist_egg`` writes it (``scrapyd-deploy``), on ``sys.path`` as a zip as
    Scrapyd puts it: beside the shared library, the stub setuptools writes (on Python 3.11
    its ``importlib.resources.files(__name__)`` raises ``TypeError``); the loader takes
    the library from the zip and the extension works."""
    if seen._seen_table is None:
        pytest.skip("not built here (test_the_extension_is_built_and_used says so in CI)")
    from setuptools.command.bdist_egg import write_stub

    library = Path(seen._seen_table.__file__)
    stub = tmp_path / "stub.py"
    write_stub(library.name, str(stub))
    egg = tmp_path / "eggpkg.egg"
    with zipfile.ZipFile(egg, "w") as archive:
        archive.writestr("eggpkg/__init__.py", "")
        archive.write(stub, "eggpkg/_seen_table.py")
        archive.write(library, f"eggpkg/{library.name}")
    probe = (
        "import sys\n"
        f"sys.path.insert(0, {str(egg)!r})\n"
        "from discovery_crawler import compiled\n"
        "module = compiled.extension('eggpkg._seen_table')\n"
        "print(module.__name__, hasattr(module, 'add_many'), compiled.extracted_line())\n"
        "import eggpkg._seen_table as again\n"
        "print(again is module)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "eggpkg._seen_table True C speed-ups: 1 extensions loaded from the zipped egg",
        "True",
    ]
