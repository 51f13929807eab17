"""Unit tests for ``discovery_crawler.output.state``: state.json round trips, exact
new / removed / changed, stable slugs, refresh, the origin check, files that are corrupt,
hand-edited or half-written (kept aside, never used nor overwritten), and memory for 1M URLs.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from discovery_crawler.output import state as state_module
from discovery_crawler.output.state import (
    STATE_NAME,
    RunState,
    StateError,
    check_origin,
    iter_entries,
    read_header,
)
from discovery_crawler.urls.slugs import SlugAllocator, normalized_paths
from tests.conftest import ROOT
from tests.fuzzing_files import JSON_VALUES

SITE = "https://example.com"


def rec(path: str, lastmod: str | None = None, slug: str | None = None) -> dict:
    return {"url": SITE + path, "lastmod": lastmod, "slug": slug}


def run(out, records, complete=True, **kwargs):
    """One run: load, observe ``records`` in one batch, close; return (state, changes)."""
    state = RunState.load(out, input_origin=SITE, **kwargs)
    if records:
        state.observe(records)
    changes = state.close(
        SITE,
        "2026-11-28T10:00:00+00:00",
        "2026-11-28T10:05:00+00:00",
        None if complete else "the run ended early",
    )
    return state, changes


def entries(out) -> dict[str, list]:
    return {e[0]: e for e in list(iter_entries(out / STATE_NAME))[1:]}


def first_run_records(paths):
    """Records as the slug stage leaves them on a first run."""
    allocator = SlugAllocator()
    return [rec(p, lm, allocator.slug(SITE + p)) for p, lm in paths]


def asides(out):
    return sorted(p.name for p in out.iterdir() if ".corrupt-" in p.name)


def test_round_trip_and_exact_changes(tmp_path):
    """Run 2 against run 1: exactly the new, removed and changed URLs; known ones keep
    their slug and first_seen; the file is one valid JSON document."""
    out = tmp_path / "site"
    _, first = run(
        out,
        first_run_records(
            [("/", "2026-01-01"), ("/a/", "2026-01-01"), ("/b/", None), ("/c/", "2026-01-02")]
        ),
    )
    assert first.first_run and first.new.count == 4 and first.urls == 4
    records = [rec("/", "2026-01-01"), rec("/a/", "2026-02-01"), rec("/b/", None), rec("/d/")]
    _, changes = run(out, records)
    assert [r["change"] for r in records] == ["known", "changed", "known", "new"]
    assert [r["slug"] for r in records] == ["home", "a", "b", "d"]
    assert changes.previous_run == 1 and changes.run == 2
    assert changes.new.items == [f"{SITE}/d/"]
    assert changes.removed.items == [f"{SITE}/c/"]
    assert changes.changed.items == [{"url": f"{SITE}/a/", "lastmod": "2026-02-01"}]
    assert changes.known == 2
    assert changes.lines() == [
        "Since the previous run (2026-11-28): 1 new, 1 removed, 1 changed "
        "(removals judged: every source was read and the run finished)."
    ]
    got = entries(out)
    assert got[f"{SITE}/a/"] == [f"{SITE}/a/", "a", 1, 2, "2026-02-01", "changed"]
    assert got[f"{SITE}/c/"] == [f"{SITE}/c/", "c", 1, 1, "2026-01-02", "removed"]
    assert got[f"{SITE}/d/"] == [f"{SITE}/d/", "d", 2, 2, None, "new"]
    whole = json.loads((out / STATE_NAME).read_text(encoding="utf-8"))
    assert whole["origin"] == SITE and whole["run"] == 2 and whole["count"] == 5
    assert whole["counts"] == {"new": 1, "known": 2, "changed": 1, "removed": 1, "unconfirmed": 0}
    assert [r["run"] for r in whole["runs"]] == [1, 2]
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temp, no spool


def test_removed_stays_removed_and_comes_back_with_its_slug(tmp_path):
    out = tmp_path / "s"
    run(out, first_run_records([("/", None), ("/x/", None)]))
    _, second = run(out, [rec("/")])
    assert second.removed.items == [f"{SITE}/x/"]
    _, third = run(out, [rec("/")])
    assert third.removed.count == 0  # removed before: not removed again
    assert entries(out)[f"{SITE}/x/"][5] == "removed"
    back = [rec("/"), rec("/x/")]
    _, fourth = run(out, back)
    assert back[1]["slug"] == "x" and back[1]["change"] == "new"
    assert fourth.new.items == [f"{SITE}/x/"]
    assert entries(out)[f"{SITE}/x/"][2:4] == [1, 4]  # first_seen kept


def test_new_url_never_takes_a_previous_slug(tmp_path):
    """A removed URL keeps its slug reserved; a suffixed slug survives the base's removal."""
    out = tmp_path / "s"
    run(out, first_run_records([("/a", None), ("/a?x=1", None)]))
    assert {e[1] for e in entries(out).values()} == {"a", "a-2"}
    records = [rec("/a?x=1"), rec("/a?y=2"), rec("/A")]  # /a removed
    run(out, records)
    assert records[0]["slug"] == "a-2"  # kept, although "a" is free of a live URL
    assert records[1]["slug"] == "a-3"
    assert records[2]["slug"] == "a-4"  # "a" still belongs to the removed /a
    slugs = [e[1] for e in entries(out).values()]
    assert len(slugs) == len(set(slugs))


def test_slash_twin_is_the_same_url_across_runs(tmp_path):
    out = tmp_path / "s"
    run(out, first_run_records([("/about", None)]))
    records = [rec("/about/")]
    _, changes = run(out, records)
    assert records[0]["change"] == "known" and changes.removed.count == 0


def test_upgrades_rewrite_the_entry(tmp_path):
    """The dedup stage's upgrades (slash form listed later) reach the state as in the feed."""
    out = tmp_path / "s"
    state = RunState.load(out, input_origin=SITE)
    state.observe(first_run_records([("/about", None)]))
    upgrade = {hash(f"{SITE}/about/") or 1: rec("/about/", "2026-03-03")}
    state.close(SITE, "t0", "t1", upgrades=upgrade)
    assert entries(out) == {
        f"{SITE}/about/": [f"{SITE}/about/", "about", 1, 1, "2026-03-03", "new"]
    }


def test_incomplete_run_does_not_judge_removals(tmp_path):
    out = tmp_path / "s"
    run(out, first_run_records([("/", None), ("/x/", None)]))
    _, changes = run(out, [rec("/")], complete=False)
    assert changes.removed.count == 0 and not changes.removals_judged
    # the previous record kept, flagged: neither removed nor silently fresh
    assert entries(out)[f"{SITE}/x/"] == [f"{SITE}/x/", "x", 1, 1, None, "unconfirmed"]
    assert changes.unconfirmed.items == [f"{SITE}/x/"]
    assert "removals not judged (the run ended early)" in changes.lines()[0]
    assert changes.lines()[1].startswith("Not re-confirmed: 1 URL(s) listed before")
    # a run that sees everything again judges it: removed now, and /x/ back is known
    _, changes = run(out, [rec("/")])
    assert changes.removed.items == [f"{SITE}/x/"] and changes.unconfirmed.count == 0


def test_duplicates_within_a_run_make_one_entry(tmp_path):
    out = tmp_path / "s"
    run(out, first_run_records([("/", None), ("/", None)]))
    assert len(entries(out)) == 1
    _, changes = run(out, [rec("/"), rec("/n/"), rec("/"), rec("/n/")])
    assert len(entries(out)) == 2 and changes.new.count == 1 and changes.known == 1


def test_refresh_and_is_known(tmp_path):
    out = tmp_path / "s"
    run(out, first_run_records([("/", None), ("/a/", None), ("/gone/", None)]))
    run(out, [rec("/"), rec("/a/")])  # /gone/ removed
    state = RunState.load(out, input_origin=SITE, refresh=("a", "nope"))
    assert state.is_known(f"{SITE}/") and state.is_known(f"{SITE}/")  # idempotent
    assert not state.is_known(f"{SITE}/a/")  # asked for again
    assert not state.is_known(f"{SITE}/gone/")  # removed: fetch it again
    assert not state.is_known(f"{SITE}/never/")
    assert state.changes.refresh_unknown == ["nope"]
    state.observe([rec("/"), rec("/a/")])
    assert state.changes.refreshed == 1
    state.abandon()
    every = RunState.load(out, input_origin=SITE, refresh_all=True)
    assert not every.is_known(f"{SITE}/")
    first = RunState.load(tmp_path / "empty", input_origin=SITE, refresh=("a",))
    assert not first.is_known(f"{SITE}/")
    assert first.changes.refresh_unknown == ["a"]  # said, not silently ignored


def test_check_origin(tmp_path):
    out = tmp_path / "s"
    assert check_origin(out, SITE) is None  # no state yet
    state = RunState.load(out, input_origin="http://example.com")
    state.observe(first_run_records([("/", None)]))
    state.close(SITE, "t0", "t1")
    assert check_origin(out, SITE) is None
    assert check_origin(out, "http://example.com") is None  # the input that led to it
    problem = check_origin(out, "https://other.example")
    assert problem is not None and "https://other.example is not the site" in problem
    assert SITE in problem and "-a out=" in problem
    (out / STATE_NAME).write_text("garbage")
    assert check_origin(out, "https://other.example") is None  # the run moves it aside


def good_state(out):
    run(out, first_run_records([("/", "2026-01-01"), ("/a/", None), ("/b/", None)]))
    return (out / STATE_NAME).read_bytes()


def _pretty(data: bytes) -> bytes:
    return json.dumps(json.loads(data), indent=2).encode()


def _swap_line(data: bytes, index: int, new: bytes) -> bytes:
    lines = data.split(b"\n")
    lines[index] = new
    return b"\n".join(lines)


BAD = {
    "garbage": lambda d: b"not json at all",
    "empty": lambda d: b"",
    "binary": lambda d: b"\xff\xfe\x00\x01",
    "truncated-mid-line": lambda d: d[: len(d) // 2],
    "truncated-before-end": lambda d: d[: d.rindex(b"]")],
    "pretty-printed": _pretty,
    "count-edited": lambda d: d.replace(b'"count": 3', b'"count": 4'),
    "duplicate-url": lambda d: _swap_line(d, 2, d.split(b"\n")[1]),
    "duplicate-slug": lambda d: d.replace(b'"a", 1', b'"home", 1'),
    "other-origin": lambda d: d.replace(b'"https://example.com/a/"', b'"https://evil.test/a/"'),
    "bad-status": lambda d: d.replace(b'"new"]', b'"maybe"]', 1),
    "missing-comma": lambda d: d.replace(b"],\n", b"]\n", 1),
    "wrong-format": lambda d: d.replace(b"state/2", b"state/9"),
    "trailing-junk": lambda d: d + b"{}",
}


@pytest.mark.parametrize("damage", list(BAD), ids=list(BAD))
def test_unusable_state_is_kept_aside_and_the_run_starts_afresh(tmp_path, caplog, damage):
    """One clear log line; the file moved aside byte for byte; the run is a first run;
    the new state written is good."""
    out = tmp_path / "s"
    bad = BAD[damage](good_state(out))
    (out / STATE_NAME).write_bytes(bad)
    with caplog.at_level(logging.ERROR, logger="discovery_crawler.output.state"):
        state = RunState.load(out, input_origin=SITE)
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "\n" not in errors[0].getMessage()
    assert STATE_NAME in errors[0].getMessage() and "kept it aside" in errors[0].getMessage()
    assert state.table is None and state.changes.first_run
    assert state.changes.started_afresh and "kept as" in state.changes.started_afresh
    [aside] = asides(out)
    assert (out / aside).read_bytes() == bad
    records = [rec("/")]
    state.observe(records)
    state.close(SITE, "t0", "t1")
    assert records[0]["change"] == "new"
    assert list(entries(out)) == [f"{SITE}/"]


def test_a_second_corrupt_file_does_not_overwrite_the_first_aside(tmp_path):
    out = tmp_path / "s"
    out.mkdir()
    for text in ("one", "two"):
        (out / STATE_NAME).write_text(text)
        RunState.load(out, input_origin=SITE).abandon()
    assert sorted((out / a).read_text() for a in asides(out)) == ["one", "two"]


def test_crash_while_writing_keeps_the_old_state(tmp_path, monkeypatch):
    """A failure half way through writing leaves the previous state.json as it was and no
    temporary file (the write goes to a temporary file renamed at the end)."""
    out = tmp_path / "s"
    before = good_state(out)
    state = RunState.load(out, input_origin=SITE)
    state.observe([rec("/new/")])

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(state, "_copy_unseen", boom)
    with pytest.raises(OSError, match="disk full"):
        state.close(SITE, "t0", "t1")
    assert (out / STATE_NAME).read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == [STATE_NAME]


def test_left_over_temporary_files_are_ignored(tmp_path):
    """What a killed run leaves (a half-written .tmp, a spool) is never read as state."""
    out = tmp_path / "s"
    good_state(out)
    (out / f".{STATE_NAME}.abc.tmp").write_text('{"format": "discovery-crawler/state/1", "ent')
    (out / f".{STATE_NAME}.def.spool").write_text("[")
    state = RunState.load(out, input_origin=SITE)
    assert state.changes.previous_run == 1 and not asides(out)


def test_read_header_names_the_problem(tmp_path):
    path = tmp_path / STATE_NAME
    path.write_text('{"format": "x"}\n')
    with pytest.raises(StateError, match="expected layout"):
        read_header(path)


paths = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "A", "a-2"]),
        st.sampled_from([None, "2026-01-01", "2026-02-02"]),
    ),
    max_size=8,
    unique_by=lambda t: t[0],
)


@settings(max_examples=60, deadline=None)
@given(before=paths, after=paths)
def test_changes_match_set_arithmetic(tmp_path_factory, before, after):
    """Property: for any two runs, new = after − before, removed = before − after,
    changed = in both with a lastmod that differs (and is given); slugs stay put."""
    out = tmp_path_factory.mktemp("p")
    run(out, first_run_records([(f"/{p}/", lm) for p, lm in before]))
    slugs_before = {e[0]: e[1] for e in entries(out).values()}
    records = [rec(f"/{p}/", lm) for p, lm in after]
    _, changes = run(out, records)
    b = {SITE + f"/{p}/": lm for p, lm in before}
    a = {SITE + f"/{p}/": lm for p, lm in after}
    assert set(changes.new.items) == a.keys() - b.keys()
    assert set(changes.removed.items) == b.keys() - a.keys()
    assert {c["url"] for c in changes.changed.items} == {
        u for u in a.keys() & b.keys() if a[u] is not None and a[u] != b[u]
    }
    for r in records:
        if r["url"] in slugs_before:
            assert r["slug"] == slugs_before[r["url"]]
    slugs = [e[1] for e in entries(out).values()]
    assert len(slugs) == len(set(slugs))


def big_url(i: int) -> str:
    """1M realistic URLs: 1 in 10 a query variant of another (a suffixed slug ``-N``)."""
    if i % 10 == 9:
        return f"{SITE}/section-{(i - 1) % 97}/page-{i - 1}/?variant={i}"
    return f"{SITE}/section-{i % 97}/page-{i}/"


def test_one_million_urls_round_trip_memory(tmp_path, capsys):
    """1M URLs: written, loaded (compact: ~60 B a URL held), re-observed, rewritten.
    The numbers are printed (``-s``) and bounded well below a dict of dicts."""
    n = 1_000_000
    out = tmp_path / "big"
    batch = 1000
    t0 = time.perf_counter()
    allocator = SlugAllocator()
    state = RunState.load(out, input_origin=SITE)
    for start in range(0, n, batch):
        urls = [big_url(i) for i in range(start, start + batch)]
        slugs = allocator.slugs_many(urls, normalized_paths(urls))
        state.observe(
            [
                {"url": u, "lastmod": "2026-01-01", "slug": s}
                for u, s in zip(urls, slugs, strict=True)
            ]
        )
    state.close(SITE, "t0", "t1")
    t_write = time.perf_counter() - t0
    size = (out / STATE_NAME).stat().st_size
    # Memory of a load, measured in a fresh process (RSS before and after).
    probe = subprocess.run(
        [sys.executable, "-c", LOAD_PROBE, str(out), SITE],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    rss_before, rss_after, t_load = (float(x) for x in probe.stdout.split())
    again = RunState.load(out, input_origin=SITE)
    assert again.changes.previous_run == 1 and again.table is not None
    assert again.table.count == n and not again.slug_exceptions
    t0 = time.perf_counter()
    suffixed = None
    for start in range(0, n, batch):
        records = [
            {"url": big_url(i), "lastmod": "2026-01-01"}
            for i in range(start + 1, start + batch)  # every 1000th URL removed
        ]
        again.observe(records)
        if start == 0:
            suffixed = records[8]  # i = 9: a query variant, slug page-8-2
    changes = again.close(SITE, "t0", "t2")
    t_rerun = time.perf_counter() - t0
    assert suffixed is not None and suffixed["slug"] == "section-8__page-8-2"
    assert suffixed["change"] == "known"
    assert changes.removed.count == n // batch and changes.new.count == 0
    assert changes.known == n - n // batch
    with capsys.disabled():
        print(
            f"\n1M URLs: state.json {size / 1e6:.0f} MB; first write {t_write:.1f}s; "
            f"load {t_load:.1f}s, RSS {rss_before:.0f} → {rss_after:.0f} MB "
            f"({(rss_after - rss_before) * 1e6 / n:.0f} B/URL); "
            f"re-run observe+write {t_rerun:.1f}s"
        )
    assert (rss_after - rss_before) * 1e6 / n < 100  # a dict of dicts: ~500 B/URL


def test_load_is_streamed_and_compact_tracemalloc(tmp_path, capsys):
    """100k URLs under tracemalloc: what a load holds and its peak (never the whole file)."""
    n = 100_000
    out = tmp_path / "mid"
    allocator = SlugAllocator()
    state = RunState.load(out, input_origin=SITE)
    for start in range(0, n, 1000):
        urls = [big_url(i) for i in range(start, start + 1000)]
        slugs = allocator.slugs_many(urls, normalized_paths(urls))
        state.observe(
            [{"url": u, "lastmod": None, "slug": s} for u, s in zip(urls, slugs, strict=True)]
        )
    state.close(SITE, "t0", "t1")
    size = (out / STATE_NAME).stat().st_size
    tracemalloc.start()
    again = RunState.load(out, input_origin=SITE)
    held, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert again.table is not None and again.table.count == n
    with capsys.disabled():
        print(
            f"\n100k URLs: file {size / 1e6:.1f} MB; load holds {held / n:.0f} B/URL, "
            f"peak {peak / n:.0f} B/URL (tables sized from the count on the last line)"
        )
    assert held / n < 90  # power-of-two tables: 35–70% full
    assert peak - held < size / 3  # a chunk of 1,000 lines at a time, never the file


LOAD_PROBE = """
import sys, time
from pathlib import Path
def rss():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4096 / 1e6
from discovery_crawler.output.state import RunState
before = rss()
t = time.perf_counter()
state = RunState.load(Path(sys.argv[1]), input_origin=sys.argv[2])
elapsed = time.perf_counter() - t
assert state.table is not None
print(before, rss(), elapsed)
"""


def test_from_existing_memory_for_comparison(capsys):
    """Why state.py does not use ``SlugAllocator.from_existing(dict)``: it copies the whole
    ``url → slug`` mapping (measured here for 200k URLs; scale ×5 for 1M)."""
    n = 200_000
    mapping = {
        f"{SITE}/section-{i % 97}/page-{i}/": f"section-{i % 97}__page-{i}" for i in range(n)
    }
    tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    allocator = SlugAllocator.from_existing(mapping)
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    per_url = (held - base) / n
    with capsys.disabled():
        print(f"\nSlugAllocator.from_existing: {per_url:.0f} B/URL held beyond the mapping itself")
    assert len(allocator) == n
    assert per_url > 40  # the copied dict (string objects are shared with the mapping)


def test_state_module_has_no_scrapy_imports():
    with open(state_module.__file__, encoding="utf-8") as fh:
        source = fh.read()
    assert "scrapy" not in source.split('"""', 2)[2].split("class ")[0]
    assert os.path.basename(state_module.__file__) == "state.py"


def test_abandon_on_a_full_disk_drops_the_spool_without_raising(tmp_path):
    """A chunk stopped by a full disk (exit 4) abandons its state: closing the spool
    flushes what is buffered, which fails again (ENOSPC); the spool goes all the same."""
    out = tmp_path / "s"
    state = RunState.load(out, input_origin=SITE)
    state.observe([rec("/a/")])
    spools = [p for p in out.iterdir() if p.name.endswith(".spool")]
    assert spools
    state._spool.close()
    state._spool = open("/dev/full", "w", encoding="utf-8")  # noqa: SIM115 (Linux: ENOSPC)
    state._spool.write("x" * 100)  # buffered: the close's flush hits the full disk
    state.abandon()
    assert not [p for p in out.iterdir() if p.name.endswith(".spool")]


def test_scope_narrowed_keeps_unconfirmed_until_a_run_covers_it(tmp_path):
    """union → auto (sitemaps only): nothing is called removed, the unseen are kept
    unconfirmed — and stay so on a second auto run (the scope they were found under is
    kept in the state), until a union run judges them."""
    from discovery_crawler.output.state_scope import RunScope

    union = RunScope.of_run("union", ("sitemap", "link"))
    auto = RunScope.of_run("auto", ("sitemap",))
    out = tmp_path / "s"

    def scoped(records, scope):
        state = RunState.load(out, input_origin=SITE)
        state.observe(records)
        return state.close(SITE, "t0", "2026-11-28T10:05:00+00:00", scope=scope)

    scoped(first_run_records([("/", None), ("/linked/", None)]), union)
    for level, said in (("none", "removals not judged"), ("in_scope", "judged only within")):
        changes = scoped([rec("/")], auto)
        assert changes.removed.count == 0 and changes.unconfirmed.items == [f"{SITE}/linked/"]
        assert changes.removals_scope == level and not changes.as_dict()["removals_judged"]
        assert said in changes.lines()[0]
        assert "mode union→auto (the link crawl did not run" in changes.lines()[0]
        assert entries(out)[f"{SITE}/linked/"][3:] == [1, None, "unconfirmed"]
    changes = scoped([rec("/")], union)
    assert changes.removed.items == [f"{SITE}/linked/"] and changes.fully_judged


# -- a state file of any shape --------------------------------------------------------------
def _valid_state_bytes(tmp_path_factory) -> bytes:
    out = tmp_path_factory.mktemp("valid")
    run(out, first_run_records([("/a", "2026-01-01"), ("/b/", None), ("/c", None)]))
    return (out / STATE_NAME).read_bytes()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    raw=JSON_VALUES.map(lambda v: json.dumps(v).encode()) | st.binary(max_size=200),
)
def test_a_state_file_of_any_shape_is_used_or_kept_aside(tmp_path_factory, data, raw):
    """Any JSON value, any bytes, or a state this module wrote with a byte changed or cut
    anywhere: loading never raises; the file is used, or kept aside byte for byte and the
    run starts afresh; the origin check before a run never raises either."""
    valid = _valid_state_bytes(tmp_path_factory)
    how = data.draw(st.sampled_from(["raw", "cut", "flip"]))
    if how == "cut":
        raw = valid[: data.draw(st.integers(0, len(valid) - 1))]
    elif how == "flip":
        at = data.draw(st.integers(0, len(valid) - 1))
        raw = valid[:at] + bytes([data.draw(st.integers(0, 255))]) + valid[at + 1 :]
    out = tmp_path_factory.mktemp("out")
    (out / STATE_NAME).write_bytes(raw)
    check_origin(out, SITE)
    state = RunState.load(out, input_origin=SITE)
    aside = list(out.glob(f"{STATE_NAME}.corrupt-*"))
    if state.table is None:
        assert len(aside) == 1 and aside[0].read_bytes() == raw
        assert state.changes.started_afresh
    else:
        assert aside == [] and (out / STATE_NAME).read_bytes() == raw
    state.abandon()
