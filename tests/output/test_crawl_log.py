"""Unit tests for ``discovery_crawler.output.crawl_log``: append-only runs, corrupt logs
moved aside (never overwritten), atomic writes that leave no temporary files.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings

from discovery_crawler.output import crawl_log
from discovery_crawler.output.crawl_log import (
    CRAWL_LOG_NAME,
    CrawlLogError,
    append_run,
    read_crawl_log,
    write_json_atomic,
)
from tests.fuzzing_files import contents


def corrupt_copies(folder):
    return sorted(p for p in folder.iterdir() if p.name.startswith(f"{CRAWL_LOG_NAME}.corrupt-"))


def test_append_creates_then_appends(tmp_path):
    """The first run creates the log; later runs are appended, earlier ones kept as written."""
    path = tmp_path / "site" / CRAWL_LOG_NAME  # the folder is created too
    assert append_run(path, {"run": 1, "note": "é中"}) == path
    append_run(path, {"run": 2})
    append_run(path, {"run": 3, "nested": {"a": [1, None]}})
    log = read_crawl_log(path)
    assert log["runs"] == [
        {"run": 1, "note": "é中"},
        {"run": 2},
        {"run": 3, "nested": {"a": [1, None]}},
    ]
    assert "é中" in path.read_text(encoding="utf-8")  # written as UTF-8, not \\u escapes


def test_other_top_level_keys_survive(tmp_path):
    """Appending keeps whatever else the log holds."""
    path = tmp_path / CRAWL_LOG_NAME
    path.write_text(json.dumps({"site": "https://example.com", "runs": [{"run": 1}]}))
    append_run(path, {"run": 2})
    assert json.loads(path.read_text()) == {
        "site": "https://example.com",
        "runs": [{"run": 1}, {"run": 2}],
    }


@pytest.mark.parametrize(
    "content",
    [b"not json", b"", b'{"runs": 5}', b"[1, 2]", b'{"other": []}', b"\xff\xfe{", b'{"runs": ['],
    ids=["text", "empty", "runs-not-list", "array", "no-runs", "bad-utf8", "half-written"],
)
def test_read_rejects_what_is_not_a_crawl_log(tmp_path, content):
    """``read_crawl_log`` raises ``CrawlLogError`` naming the file for anything but a log."""
    path = tmp_path / CRAWL_LOG_NAME
    path.write_bytes(content)
    with pytest.raises(CrawlLogError, match=CRAWL_LOG_NAME):
        read_crawl_log(path)


def test_corrupt_log_moved_aside_and_new_log_started(tmp_path):
    """A corrupt log is kept byte for byte under ``_crawl-log.json.corrupt-…`` and the new
    run says so in its warnings."""
    path = tmp_path / CRAWL_LOG_NAME
    path.write_bytes(b'{"runs": [ half')
    run = {"run": 1}
    append_run(path, run)
    [aside] = corrupt_copies(tmp_path)
    assert aside.read_bytes() == b'{"runs": [ half'
    log = read_crawl_log(path)
    assert log["runs"] == [run]
    assert run["warnings"] == [f"previous crawl log unreadable, kept as {aside.name}"]


def test_corrupt_copies_never_overwritten(tmp_path, monkeypatch):
    """Two corrupt logs met within the same second are both kept.

    Bug: the aside name has one-second resolution (``%Y%m%dT%H%M%S``) and ``os.replace``
    overwrites, so the second corrupt log replaces the first copy (data loss).
    """
    monkeypatch.setattr(crawl_log.time, "strftime", lambda *args: "20260101T000000")
    path = tmp_path / CRAWL_LOG_NAME
    path.write_text("first corrupt log")
    append_run(path, {"run": 1})
    path.write_text("second corrupt log")
    append_run(path, {"run": 2})
    contents = sorted(p.read_text() for p in corrupt_copies(tmp_path))
    assert contents == ["first corrupt log", "second corrupt log"]


def test_corrupt_copies_back_to_back_without_clock_control(tmp_path):
    """Same as above with the real clock: corrupt logs met in quick succession are all kept."""
    path = tmp_path / CRAWL_LOG_NAME
    for i in range(3):
        path.write_text(f"corrupt {i}")
        append_run(path, {"run": i})
    contents = sorted(p.read_text() for p in corrupt_copies(tmp_path))
    assert contents == ["corrupt 0", "corrupt 1", "corrupt 2"]


def test_atomic_write_leaves_no_temporary_files(tmp_path):
    """After writes (new file, replacement) only the target is in the folder."""
    path = tmp_path / "data.json"
    write_json_atomic(path, {"a": 1})
    write_json_atomic(path, {"a": 2, "text": "é"})
    assert [p.name for p in tmp_path.iterdir()] == ["data.json"]
    assert json.loads(path.read_text(encoding="utf-8")) == {"a": 2, "text": "é"}
    assert path.read_text(encoding="utf-8").endswith("\n")


def test_failed_atomic_write_keeps_old_file_and_cleans_up(tmp_path):
    """A write that fails half-way leaves the old file intact and no temporary file."""
    path = tmp_path / "data.json"
    write_json_atomic(path, {"ok": True})
    with pytest.raises(TypeError):
        write_json_atomic(path, {"bad": object()})  # not JSON-serializable, mid-dump
    assert [p.name for p in tmp_path.iterdir()] == ["data.json"]
    assert json.loads(path.read_text()) == {"ok": True}


def test_append_run_leaves_no_temporary_files(tmp_path):
    """Appending runs (including after a corrupt log) leaves only the log and the copy."""
    path = tmp_path / CRAWL_LOG_NAME
    append_run(path, {"run": 1})
    path.write_text("garbage")
    append_run(path, {"run": 2})
    append_run(path, {"run": 3})
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names[0] == CRAWL_LOG_NAME
    assert len(names) == 2 and names[1].startswith(f"{CRAWL_LOG_NAME}.corrupt-")
    assert [r["run"] for r in read_crawl_log(path)["runs"]] == [2, 3]


# -- a crawl log of any shape ---------------------------------------------------------------
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(contents({"runs": [{"status": "completed", "provenance": {"started_at": "x"}}]}))
def test_a_crawl_log_of_any_shape_is_appended_to_or_kept_aside(tmp_path_factory, raw):
    """Whatever the file holds (any JSON, one near a log, cut short, bytes), appending a
    run never raises anything: a log is appended to; anything else is kept aside byte for
    byte and a new log started, whose run says so."""
    path = tmp_path_factory.mktemp("log") / CRAWL_LOG_NAME
    path.write_bytes(raw)
    try:
        before = read_crawl_log(path)
    except CrawlLogError:
        before = None
    run: dict = {"run": "new"}
    append_run(path, run)
    after = read_crawl_log(path)
    aside = corrupt_copies(path.parent)
    if before is not None:
        assert after["runs"] == [*before["runs"], run] and aside == []
    else:
        assert after["runs"] == [run]
        assert len(aside) == 1 and aside[0].read_bytes() == raw
        assert run["warnings"] == [f"previous crawl log unreadable, kept as {aside[0].name}"]
