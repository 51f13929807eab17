"""The C extensions (``discovery_crawler/*/_*.c``) were built by ``pip install`` and are the
ones in use. In CI a missing build is a failure (``scripts/setup.sh`` builds them with the
C compiler ``.ci/run`` installs); elsewhere a skip that says so, and the same work runs in
Python. Each extension's own tests check it gives the Python code's answers.
"""

from __future__ import annotations

import importlib

import pytest

from discovery_crawler.output import feed_lines, state
from discovery_crawler.selection import groups, scoring, tree
from discovery_crawler.sitemaps import facts
from discovery_crawler.sitemaps.formats import plain_urlset
from discovery_crawler.urls import kinds, seen, slugs
from tests.conftest import IN_CI

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
