"""``sitemaps/_records.c`` (a worked batch's feed records in C) gives the Python
definition's records: equal dicts with their keys in the same order, facts of the same type
holding the very objects the record holds — on hypothesis columns, odd values included
(non-ASCII, empty, very long strings, None, numbers)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from discovery_crawler.sitemaps import facts
from discovery_crawler.sitemaps.facts import FACTS, UrlFacts
from tests import conftest

_compiled = facts._compiled_records
needs_records = conftest.needs_compiled(_compiled)

_VALUES = st.one_of(
    st.none(), st.text(max_size=8), st.just("é" * 3000), st.integers(), st.floats(0, 1)
)
_FACT_COLUMNS = len(UrlFacts._fields) - 7


@st.composite
def _columns(draw):
    n = draw(st.integers(0, 6))
    column = st.lists(_VALUES, min_size=n, max_size=n)
    return [draw(column) for _ in range(5 + _FACT_COLUMNS)]


@needs_records
@settings(max_examples=500, deadline=None)
@given(_columns(), st.text(max_size=5), st.text(max_size=5))
def test_compiled_records_are_the_python_ones(columns, source, document):
    got = facts._records(columns, source, document)
    want = facts._python_records(columns, source, document)
    assert got == want
    for rec, other in zip(got, want, strict=True):
        assert list(rec) == list(other)
        f = rec[FACTS]
        assert type(f) is UrlFacts and f == other[FACTS]
        assert all(rec[key] is f[i] for i, key in enumerate(facts._RECORD_KEYS[:7]))


@needs_records
def test_other_shapes_take_the_python_path():
    columns = [["u"]] * (5 + _FACT_COLUMNS)
    assert (
        _compiled.records(facts._RECORD_KEYS, [["u"], ["a", "b"]], "s", "d", UrlFacts, 13) is None
    )
    assert _compiled.records(facts._RECORD_KEYS, columns[:4], "s", "d", UrlFacts, 13) is None
    assert _compiled.records(facts._RECORD_KEYS, [("u",)] * 15, "s", "d", UrlFacts, 13) is None
    assert _compiled.records(facts._RECORD_KEYS[:3], columns, "s", "d", UrlFacts, 13) is None
    assert _compiled.records(facts._RECORD_KEYS, columns, "s", "d", dict, 13) is None
    assert facts._records(columns, "s", "d") == facts._python_records(columns, "s", "d")
