"""``selection/_rater.c`` (the rater's bulk prefix look-ups in C) changes no answer: the
rater gives the same totals, types and slots batch after batch with and without it, on
hypothesis batches of one origin (the bulk path's), deep and odd paths included."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discovery_crawler.selection import scoring
from discovery_crawler.selection.scoring import Rater
from tests import conftest

_rater = scoring._rater

_SEGMENTS = st.sampled_from(
    ["blog", "docs", "2024", "06", "v2", "tag", "login", "a-b-c", "x", "é", "index.html", "new"]
)
_PATHS = st.lists(_SEGMENTS, min_size=1, max_size=40).map("/".join)
_BATCH = st.lists(
    st.tuples(_PATHS, st.booleans(), st.sampled_from([None, 0.5, 1.0, "0.3"])),
    min_size=16,
    max_size=40,
)


def _rated(batches, compiled, monkeypatch):
    monkeypatch.setattr(scoring, "_rater", compiled)
    rater = Rater()
    out = []
    for batch in batches:
        urls = [f"https://h/{path}{'/' if slash else ''}" for path, slash, _ in batch]
        priorities = [p for _, _, p in batch]
        out.append(rater.rate_columns(urls, priorities, ["daily"] * len(urls)))
    return out


@conftest.needs_compiled(_rater)
@settings(max_examples=200, deadline=None)
@given(st.lists(_BATCH, min_size=1, max_size=4))
def test_the_compiled_lookups_rate_as_python_does(batches):
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert _rated(batches, _rater, monkeypatch) == _rated(batches, None, monkeypatch)


@conftest.needs_compiled(_rater)
def test_the_lookups_fill_the_raters_own_tables():
    rater = Rater()
    states = _rater.prefix_states(
        ["blog/2024", "blog"], rater._prefixes, rater._steps, rater._infos, rater._prefix, 10
    )
    assert states == {"blog/2024": rater._prefix("blog/2024")[5], "blog": rater._prefix("blog")[5]}
    assert _rater.prefix_states([1], {}, {}, [], rater._prefix, 10) is None  # Python's path
    with pytest.raises(TypeError):  # a table that is not the rater's
        _rater.prefix_states(["a/b"], {"a": "junk"}, {}, [], rater._prefix, 10)
