"""The feed record's fields are declared once (``record_fields``): items' tuples, the JSON
lines (Python and C), the CSV columns and state.json's entries follow the declaration, and
a field added to it reaches the feed and the CSV with no other edit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from discovery_crawler import items, record_fields
from discovery_crawler.compiled import extension
from discovery_crawler.output import json_text
from discovery_crawler.output.feed_lines import _record_lines, json_heads
from discovery_crawler.output.state_format import FIELDS as STATE_FIELDS
from discovery_crawler.record_fields import CELLS, FIELDS, LISTING, PARTS, STAGE, names
from discovery_crawler.sitemaps.facts import FACTS, FROM_LISTING, HEAD_INDEX
from tests.conftest import IN_CI, ROOT

LISTED = {  # as the stages build it: "sources" is written from "sitemap"
    "url": "https://example.com/a",
    "source": "sitemap",
    "sitemap": "https://example.com/s.xml",
    "lastmod": "2026-01-01",
    "priority": 0.5,
    "changefreq": "daily",
    "alternates": None,
}
STAGED = {"kind": "page", "flags": None, "slug": "a", "score": 3, "change": "new"}


def test_the_declaration_is_well_formed():
    assert len(set(names())) == len(FIELDS)
    assert all(f.part in PARTS and f.cell in CELLS and f.doc for f in FIELDS)
    # a line's fields come part by part: the declaration lists them so
    parts = [PARTS.index(f.part) for f in FIELDS]
    assert parts == sorted(parts)


def test_items_tuples_are_the_declarations():
    assert names() == items.RECORD_FIELDS
    assert names(LISTING) == items.BASE_FIELDS
    assert names(STAGE) == items.STAGE_FIELDS
    assert (
        tuple(f.name for f in FIELDS if f.part in ("crawl", "extra"))
        == items.CRAWL_FIELDS + items.EXTRA_FIELDS
    )


def test_state_entries_keep_the_fields_declared_kept():
    # (state.json's own "status" is the URL's across runs, not the fetch's HTTP status)
    kept = {f for f in STATE_FIELDS if f in names() and f != "status"}
    assert kept == set(record_fields.state_names())


def test_python_lines_follow_the_declaration():
    assert tuple(json.loads(json_heads([LISTED])[0] + "}")) == names(LISTING)
    [line] = _record_lines([{**LISTED, **STAGED}])
    assert tuple(json.loads(line)) == names(LISTING) + names(STAGE)
    crawled = {**LISTED, "via": "link", "depth": 2, **STAGED, "live": True}
    [line] = _record_lines([crawled])
    expected = names(LISTING) + names("crawl") + names(STAGE) + ("live",)
    assert tuple(json.loads(line)) == expected


def test_compiled_lines_follow_the_declaration():
    """``_lines.c`` says the fields it writes (``FIELDS``) and writes them in that order,
    which is the declaration's: else the feed would use it for no line."""
    lines = extension("discovery_crawler.output._lines")
    if lines is None:
        if IN_CI:
            pytest.fail("discovery_crawler.output._lines is not built; in CI a failure")
        pytest.skip("discovery_crawler.output._lines is not built: outside CI this skips")
    assert names(LISTING) + names(STAGE) == lines.FIELDS
    assert json_text._lines is lines  # the feed uses it
    args = (FACTS, HEAD_INDEX, FROM_LISTING, json_text.listing_prefix, json_text.number)
    [line] = lines.record_lines([{**LISTED, **STAGED}], *args)
    assert line is not None  # written by the C, not handed back to Python
    assert tuple(json.loads(line)) == lines.FIELDS
    [line] = lines.record_lines([dict(LISTED)], *args)
    assert tuple(json.loads(line)) == names(LISTING)


# A field added to the declaration (a stage's and an extra one), in a fresh interpreter
# (the tuples are made when the modules are imported).
_ADDED = """
import json, sys
from pathlib import Path
import discovery_crawler.record_fields as rf
at = rf.names().index("change") + 1
rf.FIELDS = (
    *rf.FIELDS[:at],
    rf.RecordField("language", rf.STAGE, rf.TEXT, False, "the page's language"),
    *rf.FIELDS[at:],
    rf.RecordField("words", rf.EXTRA, rf.ANY, False, "words on the page"),
)
from discovery_crawler.items import UrlBatch
from discovery_crawler.output import json_text
from tests.output.test_exporters import export_to_path, load
assert json_text._lines is None  # the C does not write the new stage field: not used
rec = {"url": "https://example.com/a", "source": "sitemap",
       "sitemap": "https://example.com/s.xml", "lastmod": None, "priority": None,
       "changefreq": None, "alternates": None, "kind": "page", "flags": None, "slug": "a",
       "score": 1, "change": "new"}
batch = UrlBatch("sitemap", "https://example.com/s.xml",
                 records=[{**rec, "language": "de", "words": 120},
                          {**rec, "url": "https://example.com/b", "slug": "b"}])
out = {}
for ext in ("jsonl", "csv"):
    path = Path(sys.argv[1]) / f"feed.{ext}"
    export_to_path(ext, path, [batch])
    out[ext] = load(ext, path.read_bytes())
print(json.dumps(out))
"""


def test_a_field_added_to_the_declaration_reaches_feed_and_csv(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_ADDED), str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    first, second = out["jsonl"]
    assert list(first)[list(first).index("change") + 1] == "language"
    assert first["language"] == "de" and first["words"] == 120
    assert second["language"] is None and "words" not in second  # an extra: only if set
    csv_first, csv_second = out["csv"]
    columns = list(csv_first)
    assert columns[columns.index("change") + 1] == "language" and columns[-1] == "words"
    assert (csv_first["language"], csv_first["words"]) == ("de", "120")
    assert (csv_second["language"], csv_second["words"]) == ("", "")
