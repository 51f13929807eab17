"""``selection/_rater.c`` (the rater's bulk path in C) changes no answer: the rater gives the
same totals, types and slots batch after batch with and without it, on hypothesis batches
of any URLs (other origins, non-ASCII, escapes, queries, fragments, deep paths, index files,
keywords, odd priorities and changefreqs), and each URL what the per-URL rules give."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discovery_crawler.selection import scoring
from discovery_crawler.selection.scoring import Rater
from tests import conftest

_rater = scoring._rater

_SEGMENTS = st.one_of(
    st.sampled_from(
        [
            "blog",
            "docs",
            "about",
            "team",
            "chi-siamo",
            "2024",
            "06",
            "2024-06-23",
            "v2",
            "v1.2",
            "tag",
            "tags",
            "category",
            "login",
            "sign-up",
            "sign_up",
            "data",
            "map",
            "a-b-c",
            "how-to-cook-rice",
            "post_a.b",
            "x",
            "é",
            "caf%C3%A9",
            "%e6%97%a5-x",
            "index.html",
            "Index.HTML",
            "default.php",
            "new",
            "feed",
            "beta",
            "page.pdf",
            "Blog",
            "DOCS",
            "BIG-Words-Here",
            "a--b",
            "-a",
            "a-",
            "a.",
            "_x",
            "%",
            "%zz",
            "1-a",
            "100022",
            "news",
            "shop",
            "search-results",
            "",
            "#frag",
            "a#b",
            "K\u212a",
        ]
    ),
    st.text(alphabet="abzAZ09-_.%~#?=&é/", max_size=8),
)
_PATHS = st.lists(_SEGMENTS, max_size=40).map("/".join)
_ORIGINS = st.sampled_from(
    ["https://h", "https://h", "https://h", "http://other.example:8080", "https://h/", "https:/"]
)
_PRIORITIES = st.one_of(
    st.sampled_from([None, 0.0, 0.1, 0.125, 0.375, 0.5, 0.625, 0.875, 1.0, 1, 0, True]),
    st.sampled_from(["0.3", "1", "x", "", "nan", float("nan"), float("inf"), -0.5, 1.5, 2]),
    st.floats(allow_nan=True),
)
_CHANGEFREQS = st.sampled_from(
    [None, "daily", "DAILY", "Hourly", "always", "weekly", "monthly", "", "dai\u0130ly", "ä"]
)
_ROW = st.tuples(
    _ORIGINS,
    _PATHS,
    st.booleans(),
    st.sampled_from(["", "", "", "?p=1", "?utm_source=x&a=b", "#top", "?q=a/b#c"]),
    _PRIORITIES,
    _CHANGEFREQS,
)
_BATCH = st.lists(_ROW, min_size=0, max_size=40)


def _columns(batch):
    urls = [f"{o}/{p}{'/' if slash else ''}{tail}" for o, p, slash, tail, _, _ in batch]
    return urls, [row[4] for row in batch], [row[5] for row in batch]


def _rated(batches, compiled, keywords, monkeypatch):
    monkeypatch.setattr(scoring, "_rater", compiled)
    rater = Rater(keywords)
    return [rater.rate_columns(*_columns(batch)) for batch in batches]


@conftest.needs_compiled(_rater)
@settings(max_examples=400, deadline=None)
@given(st.lists(_BATCH, min_size=1, max_size=4), st.booleans())
def test_the_compiled_bulk_path_rates_as_python_does(batches, extended):
    keywords = ("about", "team", "docs", "chi-siamo") if extended else None
    with pytest.MonkeyPatch.context() as monkeypatch:
        compiled = _rated(batches, _rater, keywords, monkeypatch)
        assert compiled == _rated(batches, None, keywords, monkeypatch)


@conftest.needs_compiled(_rater)
@settings(max_examples=300, deadline=None)
@given(_BATCH, st.booleans())
def test_the_compiled_bulk_path_gives_each_url_the_per_url_rules(batch, extended):
    """Any batch, small ones too (``rate_columns`` rates those one URL at a time)."""
    rater = Rater(("about", "docs", "chi-siamo") if extended else None)
    urls, priorities, changefreqs = _columns(batch)
    compiled = rater._rate_compiled(urls, priorities, changefreqs, None, False)
    assert compiled == rater._rate_each(urls, priorities, changefreqs, None, None, False)


@conftest.needs_compiled(_rater)
def test_the_compiled_bulk_path_leaves_other_columns_to_python():
    rater = Rater()
    args = (rater._steps, rater._infos, rater._prefix, scoring.priority_points)
    tables = (scoring._COMPILED_WORDS, scoring._COMPILED_KINDS, scoring.CHECKLIST_HIT)
    assert _rater.rate_bulk(("https://h/a/b",), [None], [None], *args, *tables) is None
    assert _rater.rate_bulk(["https://h/a/b"], [], [None], *args, *tables) is None
    got = _rater.rate_bulk(
        ["https://h/a/b", "https://h/a", 7], [None] * 3, [None] * 3, *args, *tables
    )
    assert got[3] == [1, 2]  # one segment, not a str: the per-URL rules
    with pytest.raises(TypeError):  # a word table that is not a set of str
        _rater.rate_bulk(["https://h/a/b"], [None], [None], *args, ({1}, set(), set()), *tables[1:])
    with pytest.raises(TypeError):  # a state table that is not the rater's
        _rater.rate_bulk(
            ["https://h/a/b"], [None], [None], {(0, "a"): 0}, ["junk"], *args[2:], *tables
        )
