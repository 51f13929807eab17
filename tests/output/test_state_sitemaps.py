"""The sitemap sections of state format 2 (``output/state_sitemaps.py``): what a run writes
reads back exactly — validators, index ``<lastmod>``, children, entries in order — also
when sections interleave and when one is carried over into the next file; a damaged file
is refused (``SectionsError``), never half read."""

from __future__ import annotations

import json
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discovery_crawler.output.state_sitemaps import (
    SectionsError,
    SectionsReader,
    SectionsWriter,
    json_column,
    part_entries,
    part_line,
    sections_name,
)

text = st.text(alphabet=string.printable + "éü☃\u2028", max_size=20)
entry = st.tuples(
    text,
    text,
    st.sampled_from(["", "daily", "weekly"]),
    st.sampled_from(["", "0.5", "1.0"]),
    st.one_of(
        st.none(),
        st.lists(st.tuples(st.one_of(st.none(), text), text), min_size=1, max_size=3).map(tuple),
    ),
)
section = st.tuples(
    st.one_of(st.none(), text),  # etag
    st.one_of(st.none(), text),  # last modified
    st.one_of(st.none(), text),  # index lastmod
    st.lists(st.lists(entry, max_size=5), max_size=3),  # batches of entries
    st.lists(st.tuples(text, st.one_of(st.none(), text)).map(list), max_size=3),  # children
)


def write(out, sections, run=2):
    writer = SectionsWriter(out)
    for i, (_etag, _lm, index_lastmod, _batches, _children) in enumerate(sections):
        writer.begin(f"https://e.com/s{i}.xml", index_lastmod)
    # parts of sections read at once interleave
    most = max((len(s[3]) for s in sections), default=0)
    for b in range(most):
        for i, (_, _, _, batches, _) in enumerate(sections):
            if b < len(batches):
                columns = [list(col) for col in zip(*[e[:4] for e in batches[b]], strict=True)]
                alternates = {j: e[4] for j, e in enumerate(batches[b]) if e[4]}
                writer.add(f"https://e.com/s{i}.xml", *(columns or [[], [], [], []]), alternates)
    for i, (etag, lm, _, _, children) in enumerate(sections):
        writer.end(f"https://e.com/s{i}.xml", True, etag, lm, children, "urlset")
    return writer.finish(run)


@settings(max_examples=40, deadline=None)
@given(st.lists(section, min_size=1, max_size=4))
def test_sections_read_back_as_written(tmp_path_factory, sections):
    out = tmp_path_factory.mktemp("s")
    name = write(out, sections)
    assert name == sections_name(2)
    reader = SectionsReader.load(out / name, 2)
    assert len(reader.sections) == len(sections)
    for i, (etag, lm, index_lastmod, batches, children) in enumerate(sections):
        got = reader.get(f"https://e.com/s{i}.xml")
        assert (got.etag, got.last_modified, got.index_lastmod) == (etag, lm, index_lastmod)
        assert got.children == children and got.format == "urlset"
        read = [e for line in reader.iter_parts(got) for e in part_entries(line)]
        assert read == [e for batch in batches for e in batch]
        assert got.urls == len(read)


def test_a_carried_section_is_copied_whole(tmp_path):
    first = tmp_path / "one"
    batch = [("https://e.com/a", "2026-01-01", "", "0.5", None)]
    write(first, [('"x"', None, "2026-01-01", [batch, batch], [])], run=1)
    previous = SectionsReader.load(first / sections_name(1), 1)
    old = previous.get("https://e.com/s0.xml")
    writer = SectionsWriter(tmp_path / "two")
    kept = writer.carry_begin(old, "2026-01-01")
    for line in previous.iter_parts(old):
        writer.carry_part(kept, line)
    writer.finish(2)
    again = SectionsReader.load(tmp_path / "two" / sections_name(2), 2)
    section = again.get("https://e.com/s0.xml")
    assert section.etag == '"x"' and section.carried == 1 and section.urls == 2
    assert [e for line in again.iter_parts(section) for e in part_entries(line)] == batch * 2


def test_a_carried_section_abandoned_is_not_named_in_the_next_file(tmp_path):
    """Its parts could not be read back (damaged in place): the next file does not name
    it, so the run after reads that sitemap in full; the other sections stand."""
    first = tmp_path / "one"
    batch = [("https://e.com/a", "2026-01-01", "", "0.5", None)]
    write(first, [('"x"', None, "2026-01-01", [batch], []), ('"y"', None, None, [batch], [])])
    previous = SectionsReader.load(first / sections_name(2), 2)
    writer = SectionsWriter(tmp_path / "two")
    for url in ("https://e.com/s0.xml", "https://e.com/s1.xml"):
        old = previous.get(url)
        kept = writer.carry_begin(old, None)
        for line in previous.iter_parts(old):
            writer.carry_part(kept, line)
        if url.endswith("s0.xml"):
            writer.carry_abandon(kept)
    writer.finish(3)
    again = SectionsReader.load(tmp_path / "two" / sections_name(3), 3)
    assert again.get("https://e.com/s0.xml") is None
    assert again.get("https://e.com/s1.xml").etag == '"y"'


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[:-5],  # truncated
        lambda b: b.replace(b'"run": 2', b'"run": 7'),  # another run's file
        lambda b: b.replace(b'"sections": 1', b'"sections": 3'),  # a section lost
        lambda b: b"",
    ],
)
def test_a_damaged_sections_file_is_refused(tmp_path, damage):
    batch = [("https://e.com/a", "", "", "", None)]
    name = write(tmp_path, [(None, "Mon, 01 Jan 2026 00:00:00 GMT", None, [batch], [])])
    path = tmp_path / name
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(SectionsError):
        SectionsReader.load(path, 2)


def test_a_section_not_read_whole_is_not_kept(tmp_path):
    writer = SectionsWriter(tmp_path)
    writer.begin("https://e.com/s.xml", None)
    writer.add("https://e.com/s.xml", ["https://e.com/a"], [""], [""], [""], {})
    writer.end("https://e.com/s.xml", kept=False)
    assert writer.finish(1) is None
    assert list(tmp_path.iterdir()) == []  # its spool removed


values = st.lists(
    st.text(
        alphabet=st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)),
        max_size=12,
    ),
    max_size=8,
)


@settings(max_examples=300, deadline=None)
@given(values, values)
def test_a_nul_joined_column_is_written_as_its_list(locs, lastmods):
    """A worked batch's columns (values joined by NUL) make the very bytes their lists do:
    backslashes, quotes, control characters and \\u2028 included (the one-pass escape)."""
    n = len(locs)
    lastmods = (lastmods + [""] * n)[:n]
    alternates = {0: [["fr", "https://e.com/fr/"]]} if n else {}
    for column in (locs, lastmods, ["\\"] * n, ["a\\", "\\u0000"][:n]):
        assert json_column("\x00".join(column), n) == json.dumps(
            column, ensure_ascii=False, separators=(",", ":")
        )
    joined = part_line(
        3,
        "\x00".join(locs),
        "\x00".join(lastmods),
        ["daily"] * n,
        "\x00".join(lastmods),
        alternates,
        n,
    )
    listed = (
        json.dumps(
            [3, locs, lastmods, ["daily"] * n, lastmods, alternates],
            ensure_ascii=False,
            separators=(",", ":"),
        ).encode("utf-8")
        + b"\n"
    )
    assert joined == listed
    assert part_entries(joined) == part_entries(listed)
