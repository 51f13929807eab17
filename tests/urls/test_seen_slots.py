"""``SeenSet.place_many`` / ``slots_of`` / ``room``: the seen-set as a table that keeps
values beside its slots (``output/state_previous.py``). The C loops (``_seen_table.c``)
give the Python loops' answers."""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from hypothesis import given
from hypothesis import strategies as st

from discovery_crawler.urls import seen as seen_module
from discovery_crawler.urls.seen import SeenSet
from tests.conftest import needs_compiled


@contextmanager
def python_loops():
    saved = seen_module._seen_table
    seen_module._seen_table = None
    try:
        yield
    finally:
        seen_module._seen_table = saved


def placed_and_found(keys: list[str], probes: list[str]) -> tuple[list[int], list[int], int]:
    table = SeenSet(len(keys), min_slots=1 << 10)
    placed = table.place_many(keys)
    return placed, table.slots_of(probes), len(table)


def test_slots_stay_put_and_repeats_are_told():
    table = SeenSet(10, min_slots=1 << 10)
    room = table.room
    first = table.place_many(["a", "b", "a"])
    assert first[0] >= 0 and first[1] >= 0 and first[2] == -1 - first[0]
    assert table.slots_of(["b", "a", "c"]) == [first[1], first[0], -1]
    assert len(table) == 2 and table.room == room - 2
    assert "a" in table  # the same table as add/__contains__ see
    assert table.size == 1 << 10


def test_no_room_is_refused_before_anything_is_added():
    table = SeenSet(0, min_slots=1 << 10)
    keys = [str(i) for i in range(table.room + 1)]
    with pytest.raises(ValueError, match="no room"):
        table.place_many(keys)
    assert len(table) == 0


@needs_compiled(seen_module._seen_table)
@given(
    st.lists(st.text(max_size=6), max_size=200),
    st.lists(st.text(max_size=6), max_size=50),
)
def test_the_c_loops_give_the_python_answers(keys, probes):
    compiled = placed_and_found(keys, probes + keys[:10])
    with python_loops():
        python = placed_and_found(keys, probes + keys[:10])
    assert compiled == python
