"""Unit tests for ``discovery_crawler.output.preview``: capped pages, chunked rewrites,
status codes, the pages grouped by exact parent path (the seed's group shape)."""

from __future__ import annotations

import json

from discovery_crawler.output.preview import COMPLETED, FAILED, PROCESSING, PreviewWriter


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
    writer.write(["w1"])
    assert not writer.due()
    data = json.loads(path.read_text())
    assert data["status"] == PROCESSING and data["discovered"] == 500
    assert data["truncated"] is True and len(data["pages"]) == 200
    assert data["warnings"] == ["w1"]
    assert [g["id"] for g in data["groups"]] == ["parent:/"]  # https://e.com/0, /1, …
    assert len(data["groups"][0]["members"]) == 200  # the pages listed, not all 500
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
    writer.finish(COMPLETED, [])
    assert json.loads(path.read_text())["status"] == 1
    writer.finish(FAILED, ["boom"])
    assert json.loads(path.read_text())["status"] == 2
    assert not [p for p in tmp_path.iterdir() if p.name != "p.json"]  # atomic: no temp left


def test_groups_are_the_pages_by_exact_parent_path(tmp_path):
    """Each group: id, label, representative URL, member URLs, confidence, reason; members
    sorted, so the order the pages came in does not change the groups; the root URL has no
    parent; ``/blog/a`` and ``/blog/b/`` share the parent ``/blog/``."""
    site = "https://e.com"
    urls = [f"{site}/", f"{site}/about"]
    urls += [f"{site}/blog/2024/post-{i}/" for i in range(5)]
    urls += [f"{site}/blog/b/", f"{site}/blog/a"]
    groups = []
    for order in (urls, urls[::-1]):
        writer = PreviewWriter(tmp_path / "p.json", max_pages=100)
        writer.add([{"url": u, "title": None, "depth": 1} for u in order])
        groups.append(writer.groups())
    assert groups[0] == groups[1]
    by_id = {g["id"]: g for g in groups[0]}
    assert list(by_id) == ["parent:/blog/2024/", "parent:/blog/", "parent:/"]
    posts = by_id["parent:/blog/2024/"]
    assert set(posts) == {
        "id",
        "label",
        "representative",
        "members",
        "count",
        "confidence",
        "reason",
    }
    assert posts["label"] == "/blog/2024/"
    assert posts["members"] == sorted(u for u in urls if "/2024/" in u)
    assert posts["representative"] == posts["members"][0]
    assert (posts["count"], posts["confidence"]) == (5, "high")
    assert "share the shape /blog/2024/{slug}/" in posts["reason"]
    assert by_id["parent:/blog/"]["members"] == [f"{site}/blog/a", f"{site}/blog/b/"]
    assert by_id["parent:/blog/"]["confidence"] == "low"  # 2 < 3 members
    assert by_id["parent:/"]["members"] == [f"{site}/about"]  # the root itself is in none


def test_groups_hold_the_listed_pages_only(tmp_path):
    writer = PreviewWriter(tmp_path / "p.json", max_pages=2)
    writer.add(recs(5))
    [group] = writer.groups()
    assert group["members"] == ["https://e.com/0", "https://e.com/1"] and writer.truncated
