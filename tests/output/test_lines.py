"""The feed's and state.json's lines from C (``output/_lines.c``) are the very text the
Python functions write (``feed_lines._record_lines``, ``state._entry_lines``), on generated
records of every shape: the C writes the common ones and leaves the others to Python; and
its check that a record holds what its facts were worked out from is ``facts._holding``.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discovery_crawler.items import EXTRA_FIELDS
from discovery_crawler.output import feed_lines, json_text, state
from discovery_crawler.output.feed_lines import json_heads, json_lines, json_utf8
from discovery_crawler.sitemaps import facts as facts_module
from discovery_crawler.sitemaps.facts import FACTS, HEAD_INDEX, UrlFacts
from tests import conftest

compiled = feed_lines._lines

needs_compiled = conftest.needs_compiled(compiled)

# Text that exercises the escaping: ASCII, quotes, backslashes, control characters,
# Latin-1, wider characters and lone surrogates.
TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from('"\\\n\t\x00\x1f/é中'),
        st.characters(codec="ascii"),
        st.characters(min_codepoint=0x80, max_codepoint=0x10FFFF),
    ),
    max_size=24,
)
OPTIONAL_TEXT = st.one_of(st.none(), TEXT)
SCORES = st.one_of(
    st.none(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True),
    st.booleans(),
)
FLAGS = st.one_of(st.none(), st.lists(TEXT, max_size=2), st.dictionaries(TEXT, TEXT, max_size=2))


@st.composite
def records(draw):
    rec = {
        "url": draw(TEXT),
        "source": draw(st.sampled_from(["sitemap", "link", "alternate"])),
        "sitemap": draw(OPTIONAL_TEXT),
        "lastmod": draw(OPTIONAL_TEXT),
        "priority": draw(
            st.one_of(st.none(), st.floats(0, 1), st.sampled_from([0.5, 1, True, float("inf")]))
        ),
        "changefreq": draw(OPTIONAL_TEXT),
        "alternates": None,
    }
    for key, values in (
        ("kind", OPTIONAL_TEXT),
        ("flags", FLAGS),
        ("slug", OPTIONAL_TEXT),
        ("score", SCORES),
        ("change", OPTIONAL_TEXT),
    ):
        if draw(st.booleans()):
            rec[key] = draw(values)
    if draw(st.booleans()):  # the sitemap worker's facts, with its head (or none)
        head = draw(st.sampled_from(["", json_heads([rec])[0]]))
        rec[FACTS] = facts_of(rec, head)
        if draw(st.integers(0, 4)) == 0:  # a stage changed a value the head was made from
            key, changed = draw(
                st.sampled_from(
                    [
                        ("url", "https://e.com/changed"),
                        ("url", "".join(rec["url"])),  # equal text, another object
                        ("lastmod", "2026-01-01"),
                        ("priority", 0.5),
                        ("source", "link"),
                        ("alternates", [{"hreflang": "de", "href": "https://e.com/de"}]),
                    ]
                )
            )
            rec[key] = changed
    if draw(st.integers(0, 9)) == 0:
        rec["via"] = draw(TEXT)
        rec["found_on"] = None
    if draw(st.integers(0, 4)) == 0:  # an extra field: never the C's common shape
        name = draw(st.sampled_from(EXTRA_FIELDS))
        rec[name] = draw(st.one_of(TEXT, st.booleans(), st.lists(TEXT, max_size=2)))
    return rec


def facts_of(rec, head, score=1, slug="s"):
    """``UrlFacts`` worked out from ``rec``'s own values."""
    return UrlFacts(
        rec["url"],
        rec["source"],
        rec["sitemap"],
        rec["lastmod"],
        rec["priority"],
        rec["changefreq"],
        rec["alternates"],
        score,
        "t",
        None,
        slug,
        head,
        "page",
        None,
        None,
        "",
        "",
    )


def python_lines(batch):
    return "".join(line + "\n" for line in feed_lines._record_lines(batch))


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(st.lists(records(), max_size=12))
def test_feed_lines_are_the_python_text(batch):
    """``json_lines`` with the C writes exactly what the Python loop writes, whatever mix
    of common and other records a batch holds."""
    assert json_lines(batch) == python_lines(batch)


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(st.lists(records(), max_size=12))
def test_feed_bytes_are_the_python_text_encoded(batch):
    """``json_utf8`` (the whole batch as UTF-8 from C, or the general path) gives exactly
    the Python lines encoded; text that UTF-8 cannot hold (a lone surrogate) fails the
    same way on both paths."""
    try:
        expected = python_lines(batch).encode("utf-8")
    except UnicodeEncodeError:
        with pytest.raises(UnicodeEncodeError):
            json_utf8(batch)
        return
    assert json_utf8(batch) == expected


@needs_compiled
def test_a_batch_of_common_records_is_written_as_bytes_by_c():
    """Every record of the common shape: one bytes object from C; one record the C does
    not write (flags) and it gives None, for the general path."""
    listed = {
        "url": "https://e.com/é",
        "source": "sitemap",
        "sitemap": "https://e.com/s.xml",
        "lastmod": None,
        "priority": 0.5,
        "changefreq": None,
        "alternates": None,
    }
    tail = {"kind": "page", "flags": None, "slug": "a", "score": 3, "change": "new"}
    batch = [{**listed, **tail, "url": f"https://e.com/{i}"} for i in range(3)]
    batch.append({**listed, **tail})
    args = (FACTS, HEAD_INDEX, facts_module.FROM_LISTING)
    renderers = (json_text.listing_prefix, json_text.number)
    text = compiled.record_text(batch, *args, *renderers)
    assert isinstance(text, bytes)
    assert text == python_lines(batch).encode("utf-8")
    assert compiled.record_text([*batch, dict(batch[0], flags=["x"])], *args, *renderers) is None
    assert compiled.record_text([], *args, *renderers) == b""


@needs_compiled
def test_feed_lines_of_a_common_batch_come_from_c():
    """A worker's record with a plain tail is written by the C; one with flags or an extra
    field is left to Python (None), and the batch's text is still the Python text."""
    listed = {
        "url": "https://e.com/a",
        "source": "sitemap",
        "sitemap": "https://e.com/s.xml",
        "lastmod": None,
        "priority": None,
        "changefreq": None,
        "alternates": None,
    }
    head = json_heads([listed])[0]
    common = {
        **listed,
        "kind": "page",
        "flags": None,
        "slug": "a",
        "score": 3,
        "change": "new",
    }
    common[FACTS] = facts_of(listed, head, score=3, slug="a")
    flagged = dict(common, flags=["requires_auth"])
    extra = dict(common, aliases=["https://e.com/a/"])
    batch = [common, flagged, extra]
    lines = compiled.record_lines(batch, FACTS, HEAD_INDEX, facts_module.FROM_LISTING)
    assert (
        lines[0]
        == head + ', "kind": "page", "flags": null, "slug": "a", "score": 3, "change": "new"}'
    )
    assert lines[1:] == [None, None]
    assert json_lines(batch) == python_lines(batch)
    assert json_lines([extra]).endswith(', "aliases": ["https://e.com/a/"]}\n')


@needs_compiled
def test_heads_the_worker_did_not_send_are_rendered_by_c():
    """A record with no head from the worker (none sent, or no facts at all) and no
    alternates gets its whole line from the C, given the prefix and number renderers; one
    with alternates and no head is left to Python."""
    listed = {
        "url": 'https://e.com/é?a="b"',
        "source": "sitemap",
        "sitemap": "https://e.com/s.xml",
        "lastmod": "2026-01-01",
        "priority": 0.3,
        "changefreq": "daily",
        "alternates": None,
    }
    tail = {"kind": "page", "flags": None, "slug": "a", "score": 3, "change": "new"}
    bare = {**listed, **tail}
    headless = {**bare, FACTS: facts_of(listed, "")}
    other_source = {**bare, "source": "alternate", "priority": None, "lastmod": None}
    alternates = [{"hreflang": "de", "href": "https://e.com/de"}]
    with_alternates = {**bare, "alternates": alternates}
    batch = [bare, headless, other_source, with_alternates, bare]
    args = (FACTS, HEAD_INDEX, facts_module.FROM_LISTING)
    lines = compiled.record_lines(batch, *args, json_text.listing_prefix, json_text.number)
    assert lines[3] is None
    assert [line + "\n" for line in lines[:3] + lines[4:]] == [
        python_lines([rec]) for rec in batch[:3] + batch[4:]
    ]
    assert compiled.record_lines(batch, *args) == [None] * 5  # no renderers: heads only
    with pytest.raises(TypeError):
        compiled.record_lines(batch, *args, json_text.listing_prefix)


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(TEXT, TEXT, st.one_of(st.none(), TEXT, st.integers())), max_size=10),
    st.integers(min_value=0, max_value=10**12),
    st.integers(min_value=0, max_value=10**12),
    st.sampled_from(["new", "known", "changed"]),
)
def test_state_entries_are_the_python_text(rows, first, last, status):
    """``state.entry_lines`` from C gives the Python comprehension's entries."""
    urls = [r[0] for r in rows]
    slugs = [r[1] for r in rows]
    lastmods = [r[2] for r in rows]
    assert compiled.entry_lines(urls, slugs, first, last, lastmods, status) == state._entry_lines(
        urls, slugs, first, last, lastmods, status
    )


@needs_compiled
def test_state_entries_refuse_what_python_refuses():
    """Columns of different lengths, or a URL that is not text: an error, not a line."""
    with pytest.raises(ValueError, match="length"):
        compiled.entry_lines(["a"], [], 1, 1, [None], "new")
    with pytest.raises(TypeError):
        compiled.entry_lines([1], ["s"], 1, 1, [None], "new")
    with pytest.raises(TypeError):
        state._entry_lines([1], ["s"], 1, 1, [None], "new")


def python_listed_heads(*args):
    """``listed_heads`` through its Python comprehension."""
    saved = json_text._lines
    json_text._lines = None
    try:
        return json_text.listed_heads(*args)
    finally:
        json_text._lines = saved


_PLAIN_URL = st.from_regex(r"https?://[a-z0-9.:]{1,10}/[a-zA-Z0-9/._~%-]{0,20}", fullmatch=True)
_LASTMOD = st.sampled_from(["2026-01-01", "2026-01-01T10:00:00+02:00"])


@needs_compiled
@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(TEXT, _PLAIN_URL),
            st.one_of(st.just(""), TEXT, _LASTMOD),
            st.sampled_from(["", "0.5", "1", "x"]),
            st.one_of(st.just(""), TEXT, st.just("daily")),
        ),
        max_size=10,
    ),
    st.sampled_from(["sitemap", "alternate"]),
    st.one_of(TEXT, _PLAIN_URL),
)
def test_worker_heads_are_the_python_text(rows, source, sitemap):
    """The sitemap worker's heads (``listed_heads``) from C are the Python comprehension's:
    written straight when every piece is plain ASCII, else piece by piece."""
    columns = [[row[i] for row in rows] for i in range(4)]
    assert json_text.listed_heads(*columns, source, sitemap) == python_listed_heads(
        *columns, source, sitemap
    )


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(st.lists(records(), max_size=12), st.sampled_from(["rating", "listing", "url", "entry"]))
def test_facts_holding_is_the_python_check(batch, checks):
    """``facts.holding`` from C gives each record's facts exactly where the Python check
    does: while every value they were worked out from is the very object in the record."""
    chosen = getattr(facts_module, f"FROM_{checks.upper()}")
    got = compiled.holding(batch, FACTS, chosen)
    want = facts_module._holding(batch, chosen)
    assert [id(f) for f in got] == [id(f) for f in want]


def test_head_index_names_the_head():
    """The C finds the head at ``HEAD_INDEX``."""
    assert UrlFacts._fields[HEAD_INDEX] == "head"
