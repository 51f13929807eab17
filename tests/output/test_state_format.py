"""The spool's copy into state.json (``output/state_format.copy_entries``)."""

from __future__ import annotations

import errno
import io
import os
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discovery_crawler.output.state_format import (
    ENTRY_SEPARATOR,
    copy_entries,
    entry_line,
    hold,
    sweep_orphans,
)

_ENTRIES = st.lists(
    st.builds(
        entry_line,
        st.text(max_size=30),
        st.text(max_size=10),
        st.integers(1, 9),
        st.integers(1, 9),
        st.none() | st.text(max_size=10),
        st.sampled_from(["new", "known", "changed", "removed"]),
    ),
    max_size=20,
)


def _state_text(tmp_path, entries: list[str], name: str) -> str:
    spool = tmp_path / f"{name}.spool"
    spool.write_bytes(ENTRY_SEPARATOR.join(entries).encode("utf-8"))
    with open(tmp_path / f"{name}.json", "w", encoding="utf-8") as body:
        body.write("HEAD[\n")
        pending = copy_entries(spool, body)
        for line in ["after-1", "after-2"]:
            if pending is not None:
                body.write(pending + ",\n")
            pending = line
        body.write(pending + "\n]")
    return (tmp_path / f"{name}.json").read_text(encoding="utf-8")


@settings(max_examples=40)
@given(_ENTRIES, st.booleans())
def test_the_copy_is_the_entries_joined_in_the_kernel_or_not(tmp_path_factory, entries, kernel):
    """In the kernel (``copy_file_range``) or by blocks, the state file holds the spool's
    entries then the ones that follow, ``,\\n`` between any two."""
    tmp_path = tmp_path_factory.mktemp("copy")
    with pytest.MonkeyPatch.context() as patch:
        if not kernel:

            def refuse(*args):
                raise OSError(errno.EXDEV, "not across these files")

            patch.setattr(os, "copy_file_range", refuse)
        text = _state_text(tmp_path, entries, "state")
    assert text == "HEAD[\n" + ",\n".join([*entries, "after-1", "after-2"]) + "\n]"


def test_an_empty_spool_is_nothing_to_follow(tmp_path):
    spool = tmp_path / "empty.spool"
    spool.write_bytes(b"")
    body = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    assert copy_entries(spool, body) is None


def test_a_full_disk_during_the_copy_is_raised(tmp_path, monkeypatch):
    spool = tmp_path / "s.spool"
    spool.write_bytes(b'["a"]')

    def full(*args):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "copy_file_range", full)
    with open(tmp_path / "state.json", "w", encoding="utf-8") as body, pytest.raises(OSError):
        copy_entries(spool, body)


def _aged(path, seconds: float = 60.0):
    then = time.time() - seconds
    os.utime(path, (then, then))
    return path


def test_the_work_files_a_killed_run_left_are_swept_and_a_live_runs_are_not(tmp_path):
    """A spool or state tmp nobody holds (its run was killed) is removed; one a run holds
    (``hold``: its open file is flock-ed), one just made, and state.json itself stay."""
    orphan_spool = tmp_path / ".state.json.abc123.spool"
    orphan_tmp = tmp_path / ".state.json.def456.tmp"
    live = tmp_path / ".state.json.live00.spool"
    young = tmp_path / ".state.json.young0.spool"
    state = tmp_path / "state.json"
    for path in (orphan_spool, orphan_tmp, live, state):
        path.write_bytes(b'["x"]')
        _aged(path)
    young.write_bytes(b"")
    _aged(young, -30.0)  # "just made", however slow this machine is
    with open(live, "ab") as held:
        hold(held.fileno())
        removed = sweep_orphans(tmp_path)
        assert sorted(removed) == sorted([orphan_spool, orphan_tmp])
        assert live.exists() and young.exists() and state.exists()
    assert sweep_orphans(tmp_path) == [live]  # its run ended without removing it
