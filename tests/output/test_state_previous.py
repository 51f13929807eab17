"""``output/state_previous.py``: the previous run, compact, on the project's seen-set."""

from __future__ import annotations

import pytest

from discovery_crawler.output.state import RunState
from discovery_crawler.output.state_format import STATE_NAME, StateError
from discovery_crawler.output.state_previous import SEEN, PreviousRun

SITE = "https://example.com"


def write_state(out, urls_slugs):
    state = RunState.load(out, input_origin=SITE)
    state.observe([{"url": u, "lastmod": None, "slug": s} for u, s in urls_slugs])
    state.close(SITE, "t0", "t1")
    return out / STATE_NAME


def test_a_load_keeps_slots_values_and_slugs(tmp_path):
    path = write_state(
        tmp_path,
        [(f"{SITE}/a/", "a"), (f"{SITE}/b/", "b"), (f"{SITE}/c/", "c-2"), (f"{SITE}/d", "odd")],
    )
    previous = PreviousRun.load(path, refresh={"b"})
    assert previous.count == 4 and previous.live == 4
    assert previous.refresh_found == {"b"}
    assert previous.is_known(f"{SITE}/a") and previous.is_known(f"{SITE}/a/")  # twins
    assert not previous.is_known(f"{SITE}/b/")  # asked for again
    assert not previous.is_known(f"{SITE}/z/")
    assert list(previous.exceptions.values()) == ["odd"]
    fresh, known = previous.sight([{"url": f"{SITE}/c/"}, {"url": f"{SITE}/new/"}])
    assert [r["url"] for r in fresh] == [f"{SITE}/new/"]
    [(_, slot, val)] = known
    assert previous.slug(slot, "c") == "c-2" and not val & SEEN
    assert previous.vals[slot] & SEEN
    assert [e[0] for e in previous.unseen(path)] == [f"{SITE}/a/", f"{SITE}/b/", f"{SITE}/d"]
    assert not all(previous.slugs.claim_many(["a"]))  # the previous slugs are taken


def test_more_entries_than_counted_is_refused(tmp_path):
    path = write_state(tmp_path, [(f"{SITE}/p-{i}/", f"p-{i}") for i in range(800)])
    data = path.read_bytes().replace(b'"count": 800', b'"count": 10')
    path.write_bytes(data)
    with pytest.raises(StateError):
        PreviousRun.load(path, refresh=set())


def test_a_run_state_can_be_saved_mid_run(tmp_path):
    """Pickled between two batches (a resumable crawl saves it), then finished: the state
    written holds both batches."""
    import pickle

    write_state(tmp_path, [(f"{SITE}/a/", "a"), (f"{SITE}/b/", "b")])
    state = RunState.load(tmp_path, input_origin=SITE)
    state.observe([{"url": f"{SITE}/a/", "lastmod": None}])
    saved = pickle.dumps(state)
    state._spool.close()  # the crawl that saved it is gone
    resumed = pickle.loads(saved)
    resumed.observe([{"url": f"{SITE}/c/", "lastmod": None}])
    changes = resumed.close(SITE, "t0", "t2")
    assert changes.known == 1 and changes.new.count == 1 and changes.removed.count == 1
    lines = (tmp_path / STATE_NAME).read_text().splitlines()[1:-1]
    assert [line.split('"')[1] for line in lines] == [f"{SITE}/a/", f"{SITE}/c/", f"{SITE}/b/"]


def test_unseen_parses_only_the_lines_not_seen_escapes_included(tmp_path):
    """The scan slices each line's URL out as written; a URL whose JSON has an escape (a
    backslash) or that is not ASCII is found all the same, in file order."""
    odd = f"{SITE}/back\\slash/"
    accent = f"{SITE}/caf\u00e9/"
    path = write_state(
        tmp_path,
        [(f"{SITE}/a/", "a"), (odd, "odd"), (accent, "cafe"), (f"{SITE}/z/", "z")],
    )
    previous = PreviousRun.load(path, refresh=set())
    previous.sight([{"url": f"{SITE}/a/"}, {"url": f"{SITE}/z/"}])
    unseen = list(previous.unseen(path))
    assert [e[0] for e in unseen] == [odd, accent]
    assert [e[1] for e in unseen] == ["odd", "cafe"]
    previous.sight([{"url": odd}, {"url": accent}, {"url": odd}])  # twice: counted once
    assert previous.sighted == previous.count == 4
    assert list(previous.unseen(path)) == []


def test_unseen_refuses_a_file_replaced_meanwhile(tmp_path):
    path = write_state(tmp_path, [(f"{SITE}/a/", "a"), (f"{SITE}/b/", "b")])
    previous = PreviousRun.load(path, refresh=set())
    write_state(tmp_path, [(f"{SITE}/a/", "a")])  # run 2 replaced it
    with pytest.raises(StateError):
        list(previous.unseen(path))
