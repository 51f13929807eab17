"""Unit tests for ``discovery_crawler.output.exporters``: the hand-built JSON lines and the
three feed exporters driven directly with ``UrlBatch`` items, the way Scrapy's feed
storage drives them (``start_exporting``, ``export_item``…, ``finish_exporting`` on a file
opened "wb").
"""

from __future__ import annotations

import csv
import errno
import io
import json
import logging
import math
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scrapy.utils.test import get_crawler

from discovery_crawler.items import (
    BASE_FIELDS,
    CRAWL_FIELDS,
    EXTRA_FIELDS,
    RECORD_FIELDS,
    UrlBatch,
)
from discovery_crawler.output.exporters import (
    CsvExporter,
    JsonExporter,
    JsonLinesExporter,
    json_line,
    json_lines,
    patched_record,
)
from discovery_crawler.signals import output_failed
from discovery_crawler.urls.seen import RENAMED, SeenSet

SITEMAP = "https://example.com/sitemap.xml"


def rec(url: str, sitemap: str | None = SITEMAP, **fields: Any) -> dict[str, Any]:
    record = {
        "url": url,
        "source": "sitemap",
        "sitemap": sitemap,
        "lastmod": None,
        "priority": None,
        "changefreq": None,
        "alternates": None,
    }
    record.update(fields)
    return record


# -- json_line / json_lines ------------------------------------------------------------------

TEXT = st.text(max_size=40)  # any Unicode but lone surrogates: quotes, \\, controls, emoji
PRIORITIES = st.none() | st.floats(allow_nan=False, allow_infinity=False) | TEXT | st.integers()
ALTERNATES = st.none() | st.lists(
    st.fixed_dictionaries({"hreflang": st.none() | TEXT, "href": TEXT}), max_size=3
)
# A JSON line has the extra fields only when its record has them.
JSON_FIELDS = tuple(f for f in RECORD_FIELDS if f not in EXTRA_FIELDS)
RECORDS = st.fixed_dictionaries(
    {
        "url": TEXT,
        "source": st.sampled_from(["sitemap", "alternate", "robots"]) | TEXT,
        "sitemap": st.none() | st.sampled_from([SITEMAP, "https://example.com/s2.xml"]) | TEXT,
        "lastmod": st.none() | TEXT,
        "priority": PRIORITIES,
        "changefreq": st.none() | TEXT,
        "alternates": ALTERNATES,
    }
)


@settings(max_examples=300, deadline=None)
@given(st.lists(RECORDS, min_size=1, max_size=8))
def test_json_lines_equals_json_line_per_record(records):
    """``json_lines`` is ``json_line`` per record joined by newlines, and every line is a
    JSON object with the feed's fields in order and the record's values."""
    text = json_lines(records)
    assert text == "\n".join(json_line(r) for r in records) + "\n"
    lines = text.split("\n")
    assert lines[-1] == ""
    assert len(lines) == len(records) + 1
    for line, record in zip(lines, records, strict=False):
        obj = json.loads(line)
        assert tuple(obj) == (JSON_FIELDS if "kind" in record else BASE_FIELDS)
        assert obj["sources"] == [record["sitemap"]]
        for key in ("url", "source", "sitemap", "lastmod", "changefreq", "alternates"):
            assert obj[key] == record[key]
        priority = record["priority"]
        assert obj["priority"] == priority
        if isinstance(priority, float):
            assert math.copysign(1, obj["priority"]) == math.copysign(1, priority)


def test_json_lines_of_nothing_is_empty():
    """No records, no text (not a blank line)."""
    assert json_lines([]) == ""


def test_json_line_escapes():
    """Quotes, backslashes, control characters and non-ASCII are valid JSON, unescaped
    non-ASCII kept readable."""
    record = rec('https://example.com/"q"\\x\x00\x1f\n\u2028é中😀', priority=0.5)
    line = json_line(record)
    assert "\n" not in line
    assert "é中😀" in line
    assert json.loads(line)["url"] == record["url"]


# -- exporters ------------------------------------------------------------------------------

EXPORTERS = {"jsonl": JsonLinesExporter, "json": JsonExporter, "csv": CsvExporter}


def export(ext: str, file: Any, batches: list[UrlBatch]) -> None:
    exporter = EXPORTERS[ext](file)
    exporter.start_exporting()
    for batch in batches:
        exporter.export_item(batch)
    exporter.finish_exporting()


def export_to_path(ext: str, path: Path, batches: list[UrlBatch]) -> None:
    with open(path, "wb") as file:  # as Scrapy's FileFeedStorage opens it
        export(ext, file, batches)


def load(ext: str, data: bytes) -> list[dict[str, Any]]:
    """Read a feed back as records (CSV lists decoded from their JSON text)."""
    text = data.decode("utf-8")
    if ext == "jsonl":
        assert text == "" or text.endswith("\n")
        return [json.loads(line) for line in text.split("\n") if line]
    if ext == "json":
        return json.loads(text)
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    for row in rows:
        row["sources"] = json.loads(row["sources"])
        row["alternates"] = json.loads(row["alternates"]) if row["alternates"] else None
    return rows


def sample_batches(seen: SeenSet) -> list[UrlBatch]:
    """Two batches from two sitemaps; two URLs were listed again by other sitemaps."""
    urls = [
        "https://example.com/",
        'https://example.com/"quoted", "source": x',
        "https://example.com/é,comma",
        "https://example.com/back\\slash",
        "https://example.com/plain",
    ]
    for url in urls:
        assert seen.add(url)
    seen.add_source(urls[1], "https://example.com/second.xml")
    seen.add_source(urls[1], "https://example.com/third.xml")
    seen.add_source(urls[2], "https://example.com/second.xml")
    first = UrlBatch(
        "sitemap",
        SITEMAP,
        records=[
            rec(urls[0], lastmod="2024-01-01", priority=1.0, changefreq="daily"),
            rec(
                urls[1],
                priority="high",
                alternates=[{"hreflang": "de", "href": "https://example.com/de/"}],
            ),
        ],
        seen=seen,
    )
    empty = UrlBatch("sitemap", SITEMAP, records=[], seen=seen)  # all duplicates
    second = UrlBatch(
        "sitemap",
        "https://example.com/other.xml",
        records=[rec(u, "https://example.com/other.xml", priority=0.25) for u in urls[2:]],
        seen=seen,
    )
    return [first, empty, second]


EXPECTED_SOURCES = {
    "https://example.com/": [SITEMAP],
    'https://example.com/"quoted", "source": x': [
        SITEMAP,
        "https://example.com/second.xml",
        "https://example.com/third.xml",
    ],
    "https://example.com/é,comma": [
        "https://example.com/other.xml",
        "https://example.com/second.xml",
    ],
    "https://example.com/back\\slash": ["https://example.com/other.xml"],
    "https://example.com/plain": ["https://example.com/other.xml"],
}


@pytest.mark.parametrize("ext", list(EXPORTERS))
def test_one_record_per_url_with_merged_sources(ext, tmp_path):
    """Each format writes one record per URL, in order, and a URL listed again by other
    sitemaps gets every source in ``sources`` (the feed is rewritten at the end)."""
    path = tmp_path / f"inventory.{ext}"
    export_to_path(ext, path, sample_batches(SeenSet()))
    records = load(ext, path.read_bytes())
    assert [r["url"] for r in records] == list(EXPECTED_SOURCES)
    assert {r["url"]: r["sources"] for r in records} == EXPECTED_SOURCES
    first = records[0]
    assert first["sitemap"] == SITEMAP
    assert first["lastmod"] == "2024-01-01"
    assert first["changefreq"] == "daily"
    assert records[1]["alternates"] == [{"hreflang": "de", "href": "https://example.com/de/"}]
    if ext == "csv":
        assert list(records[0]) == list(RECORD_FIELDS)
        assert [r["priority"] for r in records] == ["1.0", "high", "0.25", "0.25", "0.25"]
    else:
        assert tuple(records[0]) == BASE_FIELDS  # no URL stages ran: their fields are absent
        assert [r["priority"] for r in records] == [1.0, "high", 0.25, 0.25, 0.25]
    assert not list(tmp_path.glob("discovery-feed-*"))


@pytest.mark.parametrize("ext", list(EXPORTERS))
def test_without_duplicates_the_feed_is_not_rewritten(ext, tmp_path):
    """No extra sources: the records are exactly what was exported, ``sources`` = [sitemap]."""
    seen = SeenSet()
    batch = UrlBatch("sitemap", SITEMAP, records=[rec("https://example.com/a")], seen=seen)
    path = tmp_path / f"out.{ext}"
    export_to_path(ext, path, [batch])
    assert [r["sources"] for r in load(ext, path.read_bytes())] == [[SITEMAP]]


@pytest.mark.parametrize("ext", list(EXPORTERS))
def test_empty_feed_is_valid(ext, tmp_path):
    """A run that found nothing still writes a valid, empty feed."""
    path = tmp_path / f"out.{ext}"
    export_to_path(ext, path, [])
    assert load(ext, path.read_bytes()) == []
    if ext == "csv":
        assert path.read_text(encoding="utf-8") == ",".join(RECORD_FIELDS) + "\n"


@pytest.mark.parametrize("ext", list(EXPORTERS))
def test_readable_file_is_rewritten_in_place(ext, tmp_path):
    """A feed opened "w+b" (readable) is re-read from the file object itself."""
    path = tmp_path / f"out.{ext}"
    with open(path, "w+b") as file:
        export(ext, file, sample_batches(SeenSet()))
    records = load(ext, path.read_bytes())
    assert {r["url"]: r["sources"] for r in records} == EXPECTED_SOURCES


class NonSeekable(io.RawIOBase):
    """A write-only stream that cannot seek (a pipe, stdout)."""

    def __init__(self) -> None:
        self.buffer = io.BytesIO()

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:  # type: ignore[override]
        return self.buffer.write(data)

    def seekable(self) -> bool:
        return False

    def seek(self, *args: Any) -> int:
        raise io.UnsupportedOperation("not seekable")


@pytest.mark.parametrize("ext", list(EXPORTERS))
def test_non_seekable_stream_keeps_first_source(ext, caplog):
    """On a stream that cannot seek the feed is still one record per URL; duplicates keep
    their first sitemap only, and a warning says so."""
    stream = NonSeekable()
    with caplog.at_level(logging.WARNING):
        export(ext, stream, sample_batches(SeenSet()))
    records = load(ext, stream.buffer.getvalue())
    assert [r["url"] for r in records] == list(EXPECTED_SOURCES)
    assert all(r["sources"] == [r["sitemap"]] for r in records)
    assert "not seekable" in caplog.text


def test_export_item_refuses_other_items(tmp_path):
    """The feed exports ``UrlBatch`` items only."""
    with open(tmp_path / "x.jsonl", "wb") as file:
        exporter = JsonLinesExporter(file)
        exporter.start_exporting()
        with pytest.raises(TypeError):
            exporter.export_item({"url": "https://example.com/"})


# Any text but CR (see test_csv_quotes_carriage_returns for that bug).
URL_TEXT = st.text(
    alphabet=st.characters(exclude_characters="\r", exclude_categories=["Cs"]),
    min_size=1,
    max_size=30,
).map(lambda s: "https://example.com/" + s)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(URL_TEXT, min_size=1, max_size=15, unique=True),
    st.data(),
)
def test_generated_feeds_roundtrip_in_all_formats(urls, data):
    """Arbitrary URL text (quotes, commas, newlines, controls) with random extra sources:
    every format gives one record per URL with exactly its sources."""
    split = data.draw(st.integers(0, len(urls)))
    with_extra = data.draw(st.sets(st.sampled_from(urls))) if urls else set()
    for ext in EXPORTERS:
        seen = SeenSet()
        for url in urls:
            seen.add(url)
        expected = {}
        for url in urls:
            expected[url] = [SITEMAP]
            if url in with_extra:
                seen.add_source(url, "https://example.com/b.xml")
                expected[url].append("https://example.com/b.xml")
        batches = [
            UrlBatch("sitemap", SITEMAP, records=[rec(u) for u in part], seen=seen)
            for part in (urls[:split], urls[split:])
        ]
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / f"feed.{ext}"
            export_to_path(ext, path, batches)
            records = load(ext, path.read_bytes())
        assert [r["url"] for r in records] == urls
        assert {r["url"]: r["sources"] for r in records} == expected


@pytest.mark.parametrize("field", ["lastmod", "changefreq", "priority"])
def test_csv_quotes_carriage_returns(field, tmp_path):
    """A value with a CR (``<lastmod>2024-01-01&#13;T00:00</lastmod>`` reaches the feed as
    '2024-01-01\rT00:00' through lxml) stays inside its cell, also after the rewrite.

    Bug: ``csv.writer(..., lineterminator="\n")`` quotes only fields containing "\n", so
    "\r" is written bare and readers split the row in two; the end-of-run rewrite then
    turns it into a real line break.
    """
    value = "2024-01-01\rT00:00"
    seen = SeenSet()
    records = [rec("https://example.com/a", **{field: value}), rec("https://example.com/b")]
    for record in records:
        seen.add(record["url"])
    seen.add_source("https://example.com/b", "https://example.com/b.xml")  # forces a rewrite
    path = tmp_path / "out.csv"
    export_to_path("csv", path, [UrlBatch("sitemap", SITEMAP, records=records, seen=seen)])
    text = path.read_bytes().decode("utf-8")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert [row[0] for row in rows] == ["url", "https://example.com/a", "https://example.com/b"]
    assert rows[1][RECORD_FIELDS.index(field)] == value


EXTRAS = {
    "robots_rule": "Disallow: /internal/",
    "robots_group": "*",
    "junk_pattern": "old-suffix",
    "aliases": ["https://example.com/a/"],
    "redirected_to": "https://example.com/b",
    "live": False,
    "canonical": "https://example.com/",
    "indexability": "robots_disallowed",
    "last_modified": "2025-01-02T03:04:05Z",
}


@pytest.mark.parametrize("ext", list(EXPORTERS))
def test_extra_fields_follow_the_stage_fields_and_survive_the_rewrite(ext, tmp_path):
    """A record's extra fields (``items.EXTRA_FIELDS``) are written after the stage fields,
    in the feed's order, only on the records that have them (CSV: as columns), and a URL
    patched at the end of the run keeps them."""
    stages = {"kind": "page", "flags": ["robots_disallowed"], "slug": "a", "score": 1}
    stages["change"] = "new"
    extra = rec("https://example.com/a", **stages, **EXTRAS)
    plain = rec("https://example.com/c", kind="page", flags=None, slug="c", score=0, change="new")
    seen = SeenSet()
    for record in (extra, plain):
        seen.add(record["url"])
    seen.add_source("https://example.com/a", "https://example.com/s2.xml")  # forces a rewrite
    path = tmp_path / f"out.{ext}"
    export_to_path(ext, path, [UrlBatch("sitemap", SITEMAP, records=[extra, plain], seen=seen)])
    first, second = load(ext, path.read_bytes())
    assert first["sources"] == [SITEMAP, "https://example.com/s2.xml"]
    if ext == "csv":
        assert list(first) == list(RECORD_FIELDS)
        assert [first[name] for name in EXTRA_FIELDS] == [
            "Disallow: /internal/", "*", "old-suffix", '["https://example.com/a/"]',
            "https://example.com/b", "false", "https://example.com/", "robots_disallowed",
            "2025-01-02T03:04:05Z",
        ]  # fmt: skip
        assert [second[name] for name in EXTRA_FIELDS] == [""] * len(EXTRA_FIELDS)
    else:
        listed = [f for f in JSON_FIELDS if f not in CRAWL_FIELDS]  # not a link-crawl record
        assert list(first) == [*listed, *EXTRA_FIELDS]
        assert {name: first[name] for name in EXTRA_FIELDS} == EXTRAS
        assert list(second) == listed


def test_an_upgraded_record_keeps_its_extra_fields_and_its_sources():
    """A line written for an hreflang alternate (with extra fields), then listed as a <loc>
    by two sitemaps: the upgrade keeps the extra fields and merges every source — each a
    URL, never the letters of a field's name."""
    url = "https://example.com/a"
    seen = SeenSet()
    seen.add(url)
    written = rec(url, source="alternate", kind="page", live=True, redirected_to=url + "/")
    listed = rec(url, sitemap="https://example.com/s2.xml", lastmod="2024-01-01")
    seen.upgrade(url, listed)
    seen.add_source(url, "https://example.com/s3.xml")
    obj = patched_record(json.loads(json_line(written)), seen)
    assert obj is not None
    assert obj["source"] == "sitemap" and obj["lastmod"] == "2024-01-01"
    assert (obj["live"], obj["redirected_to"]) == (True, url + "/")
    assert set(obj["sources"]) == {
        SITEMAP,
        "https://example.com/s2.xml",
        "https://example.com/s3.xml",
    }


def test_patched_record_applies_a_twin_patch_and_keeps_the_crawl_fields():
    seen = SeenSet()
    written = {
        "url": "https://x/a",
        "source": "link",
        "sitemap": None,
        "sources": [],
        "lastmod": None,
        "priority": None,
        "changefreq": None,
        "alternates": None,
        "via": "link",
        "found_on": "https://x/",
        "anchor": "A",
        "depth": 1,
        "title": "A",
        "status": 200,
        "refusal": None,
        "kind": "page",
        "flags": None,
        "slug": "a",
        "score": 10,
        "change": "new",
        "redirected_to": "https://x/b/",
    }
    seen.twins.wrote("https://x/a/", "https://x/a")
    seen.twins.sighted("https://x/a/", "https://x/a/")
    obj = patched_record(dict(written), seen)
    assert obj is not None
    assert (obj["url"], obj["aliases"], obj["title"]) == ("https://x/a/", ["https://x/a"], "A")
    assert list(obj)[-2:] == ["aliases", "redirected_to"]  # the feed's field order
    # a full upgrade (the dedup stage's slash listing) keeps what the crawl wrote
    listing = {k: written[k] for k in list(written)[:8]} | {"url": "https://x/a/"}
    listing.update(source="sitemap", sitemap="https://x/s.xml", lastmod="2024-01-01")
    other = SeenSet()
    other.twins.wrote("https://x/a/", "https://x/a")
    assert other.twins.sighted("https://x/a/", "https://x/a/", listing) == RENAMED
    obj = patched_record(dict(written), other)
    assert obj is not None
    assert (obj["url"], obj["lastmod"], obj["title"], obj["status"]) == (
        "https://x/a/",
        "2024-01-01",
        "A",
        200,
    )
    assert obj["aliases"] == ["https://x/a"] and obj["redirected_to"] == "https://x/b/"


def _big_batch(name: str, seen: SeenSet) -> UrlBatch:
    records = [rec(f"https://example.com/{name}/{i:05d}") for i in range(1500)]
    return UrlBatch("sitemap", SITEMAP, records=records, seen=seen)


def test_a_full_disk_is_told_once():
    """A batch's write fails (ENOSPC): ``output_failed`` is sent once, and nothing more is
    written or raised by the batches after it or by the end of the export."""
    crawler = get_crawler()
    told: list[tuple[Any, OSError]] = []

    def failed(path: Any, error: OSError) -> None:
        told.append((path, error))

    crawler.signals.connect(failed, signal=output_failed)
    seen = SeenSet()
    with open("/dev/full", "wb") as file:
        exporter = JsonLinesExporter.from_crawler(crawler, file)
        exporter.start_exporting()
        for name in "abcd":
            exporter.export_item(_big_batch(name, seen))
        exporter.finish_exporting()
    assert len(told) == 1
    path, error = told[0]
    assert path == "/dev/full"
    assert error.errno == errno.ENOSPC


def test_an_upgraded_record_lists_its_sources_in_reading_order():
    """Met first as an hreflang alternate of sitemap A, then listed by sitemap B: the
    sources read A then B, as when the link crawl recorded the page before either listing
    arrived (A, then B, added as sources). A re-run carries the sitemaps over faster than
    the crawl fetches the start page; the order must not depend on which came first."""
    url = "https://example.com/"
    a, b = "https://example.com/en/sitemap.xml", "https://example.com/ja/sitemap.xml"
    seen = SeenSet()
    seen.add(url)
    written = rec(url, source="alternate", sitemap=a)
    seen.upgrade(url, rec(url, sitemap=b))
    upgraded = patched_record(json.loads(json_line(written)), seen)
    assert upgraded is not None
    assert upgraded["sources"] == [a, b]
