"""The spool's copy into state.json (``output/state_format.copy_entries``)."""

from __future__ import annotations

import errno
import io
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discovery_crawler.output.state_format import ENTRY_SEPARATOR, copy_entries, entry_line

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
