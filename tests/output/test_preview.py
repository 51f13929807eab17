"""Unit tests for ``discovery_crawler.output.preview``: capped pages, chunked rewrites,
status codes, groups taken from whatever the grouping stage left on the record."""

from __future__ import annotations

import json
from types import SimpleNamespace

from discovery_crawler.output.preview import (
    COMPLETED,
    FAILED,
    PROCESSING,
    PreviewWriter,
    groups_of,
)


def recs(n, start=0):
    return [
        {"url": f"https://e.com/{i}", "title": f"T{i}", "depth": 1} for i in range(start, start + n)
    ]


def test_pages_capped_and_truncated(tmp_path):
    writer = PreviewWriter(tmp_path / "preview.json", max_pages=3, chunk=10, interval=60)
    writer.add(recs(2))
    assert not writer.truncated
    writer.add(recs(2, start=2))
    assert writer.truncated and writer.discovered == 4
    assert [p["url"] for p in writer.pages] == [f"https://e.com/{i}" for i in range(3)]
    assert writer.pages[0] == {"url": "https://e.com/0", "title": "T0", "depth": 1}


def test_exactly_max_pages_is_not_truncated(tmp_path):
    writer = PreviewWriter(tmp_path / "p.json", max_pages=3)
    writer.add(recs(3))
    assert not writer.truncated


def test_rewritten_after_each_chunk(tmp_path):
    path = tmp_path / "preview.json"
    writer = PreviewWriter(path, max_pages=200, chunk=500, interval=3600)
    assert not writer.due()
    writer.add(recs(499))
    assert not writer.due()
    writer.add(recs(1))
    assert writer.due()
    writer.write(["w1"], [])
    assert not writer.due()
    data = json.loads(path.read_text())
    assert data["status"] == PROCESSING and data["discovered"] == 500
    assert data["truncated"] is True and len(data["pages"]) == 200
    assert data["warnings"] == ["w1"] and data["groups"] == []
    assert set(data) == {
        "status",
        "pages",
        "groups",
        "warnings",
        "truncated",
        "discovered",
        "updated_at",
    }


def test_interval_makes_a_chunk_too(tmp_path):
    writer = PreviewWriter(tmp_path / "p.json", chunk=10_000, interval=0)
    writer.add(recs(1))
    assert writer.due()


def test_finish_sets_status(tmp_path):
    path = tmp_path / "p.json"
    writer = PreviewWriter(path)
    writer.finish(COMPLETED, [], [])
    assert json.loads(path.read_text())["status"] == 1
    writer.finish(FAILED, ["boom"], [])
    assert json.loads(path.read_text())["status"] == 2
    assert not [p for p in tmp_path.iterdir() if p.name != "p.json"]  # atomic: no temp left


def test_groups_of_whatever_the_stage_left():
    assert groups_of(SimpleNamespace()) == []
    assert groups_of(SimpleNamespace(groups=None)) == []
    assert groups_of(SimpleNamespace(groups=[{"name": "blog"}])) == [{"name": "blog"}]
    summary = SimpleNamespace(as_dict=lambda: {"groups": [{"name": "docs"}]})
    assert groups_of(SimpleNamespace(groups=summary)) == [{"name": "docs"}]
