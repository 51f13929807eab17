"""Unit tests for ``discovery_crawler.urls.seen.SeenSet``: it behaves like a Python ``set``
of URLs (including across growth of its open-addressing table) and keeps extra sources.
"""

from __future__ import annotations

import contextlib
import time
from array import array
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discovery_crawler.urls import seen as seen_module
from discovery_crawler.urls.seen import ALIASED, RENAMED, SeenSet, fingerprint, settled_form
from tests import conftest

MIN_SLOTS = seen_module._MIN_SLOTS


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=30), max_size=300), st.lists(st.text(max_size=30), max_size=50))
def test_equivalent_to_a_python_set(added, probed):
    """``add`` returns True exactly when the URL is new; membership and length match ``set``."""
    seen = SeenSet()
    model: set[str] = set()
    for url in added:
        assert seen.add(url) == (url not in model)
        model.add(url)
        assert len(seen) == len(model)
    for url in added + probed:
        assert (url in seen) == (url in model)


def test_grows_past_the_initial_table_and_stays_exact():
    """~800k URLs force one growth (past 70% of 1<<20 slots); nothing is lost or duplicated."""
    seen = SeenSet()
    assert seen.nbytes == 8 * MIN_SLOTS
    n = 800_000
    started = time.monotonic()
    urls = [f"https://example.com/p/{i}" for i in range(n)]
    assert all(seen.add(u) for u in urls)
    assert len(seen) == n
    assert seen.nbytes == 12 * MIN_SLOTS  # grew once, by half: 1.5 << 20 slots of 8 bytes
    assert seen.resizes == 1
    assert not any(seen.add(u) for u in urls[::97])
    assert all(u in seen for u in urls[::13])
    assert not any(f"https://example.com/q/{i}" in seen for i in range(0, n, 13))
    assert len(seen) == n
    assert time.monotonic() - started < 5


@settings(max_examples=5, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=20), min_size=50, max_size=200, unique=True))
def test_growth_keeps_every_fingerprint(extra):
    """A table forced to grow (tiny limit) keeps membership identical to a set."""
    seen = SeenSet()
    seen._limit = 10  # grow after 10 entries, then again at 70% of the doubled table
    model = set()
    for url in extra:
        assert seen.add(url) is (url not in model)
        model.add(url)
    assert len(seen._slots) > MIN_SLOTS
    assert len(seen) == len(model)
    assert all(url in seen for url in model)


def test_capacity_presizes_the_table():
    """``SeenSet(capacity)`` sizes the table so ``capacity`` URLs fit under 70% load."""
    assert SeenSet(0).nbytes == 8 * MIN_SLOTS
    assert SeenSet(734_003).nbytes == 8 * MIN_SLOTS
    big = SeenSet(2_000_000)
    assert big.nbytes == 8 * (4 * MIN_SLOTS)
    assert big._limit >= 2_000_000


def test_zero_hash_is_a_valid_fingerprint():
    """A URL whose ``hash`` is 0 still gets a non-zero fingerprint (0 marks empty slots)."""
    assert fingerprint("") == 1  # hash('') == 0
    seen = SeenSet()
    assert seen.add("") is True
    assert "" in seen
    assert seen.add("") is False


def test_extra_sources():
    """``add_source`` records further sources once each, capped at 50 per URL."""
    seen = SeenSet()
    url = "https://example.com/a"
    seen.add(url)
    assert seen.sources_of(url) == []
    seen.add_source(url, "https://example.com/s2.xml")
    seen.add_source(url, "https://example.com/s2.xml")
    seen.add_source(url, "https://example.com/s3.xml")
    assert seen.sources_of(url) == ["https://example.com/s2.xml", "https://example.com/s3.xml"]
    assert seen.extra_sources == {fingerprint(url + "/"): seen.sources_of(url)}  # twin key
    for i in range(100):
        seen.add_source(url, f"https://example.com/more-{i}.xml")
    assert len(seen.sources_of(url)) == 50
    assert seen.sources_of("https://example.com/other") == []


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.text(max_size=30), max_size=60), max_size=8))
def test_add_many_matches_add(batches):
    """``add_many`` (the dedup hot path) answers exactly as one ``add`` per URL would."""
    one, many = SeenSet(min_slots=8), SeenSet(min_slots=8)  # tiny tables: growth mid-batch
    for batch in batches:
        assert many.add_many(batch) == [one.add(url) for url in batch]
    assert len(one) == len(many)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.text(max_size=20), max_size=200),
    st.integers(min_value=0, max_value=3_000_000),
    st.lists(st.text(max_size=20), max_size=100),
)
def test_reserve_sizes_once_and_keeps_every_fingerprint(before, count, after):
    """``reserve(n)`` resizes at most once, leaves room for ``n`` under 70% load, and the set
    still answers like a Python ``set``; a smaller reservation changes nothing."""
    seen = SeenSet(min_slots=1 << 10)
    model: set[str] = set()
    for url in before:
        seen.add(url)
        model.add(url)
    slots = len(seen._slots)
    seen.reserve(count)
    assert seen.resizes == (1 if count > int(slots * 0.7) else 0)
    assert seen._limit >= count
    resized = len(seen._slots)
    seen.reserve(count // 2)
    assert len(seen._slots) == resized
    for url in after:
        assert seen.add(url) is (url not in model)
        model.add(url)
    assert len(seen) == len(model)
    assert all(url in seen for url in model)


@contextmanager
def python_loops():
    """Run ``SeenSet`` on its Python loops, as where ``_seen_table`` was not built."""
    compiled = seen_module._seen_table
    seen_module._seen_table = None
    try:
        yield
    finally:
        seen_module._seen_table = compiled


needs_compiled = conftest.needs_compiled(seen_module._seen_table)


@needs_compiled
@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(st.text(max_size=12), max_size=80), max_size=8))
def test_compiled_and_python_loops_write_the_same_table(batches):
    """The C loops answer as the Python ones and leave the very same slots (so growth, the
    ``resizes`` stat and every later probe agree), through resizes mid-batch."""
    compiled = SeenSet(min_slots=8)
    with python_loops():
        python = SeenSet(min_slots=8)
    for batch in batches:
        answers = compiled.add_many(batch)
        with python_loops():
            assert python.add_many(batch) == answers
        assert compiled._slots == python._slots
        assert (len(compiled), compiled.resizes) == (len(python), python.resizes)
    compiled.reserve(500)
    with python_loops():
        python.reserve(500)
    assert compiled._slots == python._slots


@needs_compiled
def test_compiled_loops_refuse_a_table_that_would_never_end():
    """A wrong table is a ``ValueError``, not a crash or an endless probe."""
    table = seen_module._seen_table
    full = array("q", [5, 6, 7, 8])
    with pytest.raises(ValueError, match="too small"):
        table.rehash(full, array("q", bytes(8 * 4)), 4)
    with pytest.raises(ValueError, match="array"):
        table.add_many(array("i", [0] * 4), 4, 2, 0, ["a"], 0, [])
    with pytest.raises(ValueError, match="array"):
        table.add_many(array("q", [0] * 4), 8, 2, 0, ["a"], 0, [])
    with pytest.raises(TypeError):
        table.add_many(array("q", [0] * 4), 4, 2, 0, [["unhashable"]], 0, [])


def test_add_many_takes_any_iterable():
    """A tuple or generator goes through the Python loop and answers the same."""
    seen = SeenSet(min_slots=8)
    assert seen.add_many(("a", "b", "a")) == [True, True, False]
    assert seen.add_many(u for u in ["b", "c"]) == [False, True]
    assert seen.add_many(["c", "d"]) == [False, True]


def test_twins_rule_7_in_both_orders_and_while_pending():
    seen = SeenSet()
    twins = seen.twins
    # written slashless, slash form met: renamed (a patch), counted once
    twins.wrote("https://x/a/", "https://x/a")
    assert twins.sighted("https://x/a/", "https://x/a/") == RENAMED
    assert twins.sighted("https://x/a/", "https://x/a/") is None
    patch = seen.upgrades[hash("https://x/a/")]
    assert dict(patch) == {"url": "https://x/a/", "aliases": ["https://x/a"]}
    # written in the slash form, slashless met: noted
    assert twins.sighted("https://x/b/", "https://x/b") == ALIASED
    # fixed by a canonical without the slash: keeps it, notes the slash form
    twins.wrote("https://x/c/", "https://x/c", fixed=True)
    assert twins.sighted("https://x/c/", "https://x/c/") == ALIASED
    assert seen.upgrades[hash("https://x/c/")]["url"] == "https://x/c"
    # a file's slash twin is not looked for; its slashless form met again is no twin
    twins.wrote("https://x/f.pdf/", "https://x/f.pdf", file=True)
    assert twins.sighted("https://x/f.pdf/", "https://x/f.pdf") is None
    # requested, not recorded yet: the forms wait for the record
    twins.expect("https://x/d/", "https://x/d")
    assert twins.sighted("https://x/d/", "https://x/d/") is None
    forms = twins.settle("https://x/d/")
    assert forms == ["https://x/d/"]
    assert settled_form("https://x/d", "https://x/d/", [], forms, fixed=False) == (
        "https://x/d/",
        ["https://x/d"],
    )
    assert settled_form("https://x/d", "https://x/d/", [], forms, fixed=True) == (
        "https://x/d",
        ["https://x/d/"],
    )


@given(st.lists(st.sampled_from(["a", "b", "c", "d?x=1", "e.pdf"]), max_size=8))
def test_wrote_many_is_wrote_of_each(paths):
    keys = [f"https://x/{p}/" for p in paths]
    one, many = SeenSet().twins, SeenSet().twins
    for key in keys:
        one.wrote(key, key[:-1])
    many.wrote_many(keys)
    for key in ["https://x/a/", "https://x/b/", "https://x/d?x=1/", "https://x/z/"]:
        assert one.sighted(key, key) == many.sighted(key, key)


@pytest.mark.parametrize("loops", ["compiled", "python"])
def test_a_reserved_table_holds_an_estimate_18_percent_short_without_growing(loops):
    """A table sized by ``reserve`` runs denser (72% at the estimate, grown past 85%): the
    whole site's tables are these, so their bytes are what a large walk holds. An estimate
    ~18% short still fits in the one resize; past that it grows by half, staying dense,
    and answers like a set all along."""
    if loops == "compiled" and not seen_module.COMPILED and not conftest.IN_CI:
        # in CI the test runs anyway, and tests/test_compiled.py fails on the missing build
        pytest.skip("_seen_table not built (pip install -e . builds it); not skipped in CI")
    context = python_loops() if loops == "python" else contextlib.nullcontext()
    with context:
        seen = SeenSet(min_slots=1 << 10)
        estimate = 50_000
        seen.reserve(estimate)
        assert seen.resizes == 1
        assert seen.nbytes == 8 * (int(estimate / 0.72) + 1)
        urls = [f"https://example.com/p/{i}" for i in range(int(estimate * 1.18))]
        assert all(seen.add_many(urls))
        assert seen.resizes == 1  # no second table while the walk holds the first
        more = [f"https://example.com/q/{i}" for i in range(estimate // 2)]
        assert all(seen.add_many(more))
        assert seen.resizes == 2
        assert len(seen) / (seen.nbytes / 8) > 0.6  # grown by half, not doubled
        assert not any(seen.add_many(urls[::7] + more[::5]))
        assert all(u in seen for u in urls[::11] + more[::3])
        assert "https://example.com/r/1" not in seen
