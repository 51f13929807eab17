"""Nothing half-written looks whole: the local feed (``output/feed_storage.py``) is written
under ``<name>.partial`` and renamed into place only when whole; the feed's final pass
(``output/exporters.py``) never raises, and a failure there is told once
(``output_failed``: exit 4) with every line kept."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.test import get_crawler

from discovery_crawler.items import UrlBatch
from discovery_crawler.output import exporters
from discovery_crawler.output.exporters import FeedReadBack, JsonLinesExporter
from discovery_crawler.output.feed_storage import FeedFile, partial_path
from discovery_crawler.signals import output_failed
from discovery_crawler.urls.normalize import twin_key
from discovery_crawler.urls.seen import SeenSet

SITEMAP = "https://example.com/sitemap.xml"


def _told(crawler: Any) -> list[tuple[Any, BaseException]]:
    told: list[tuple[Any, BaseException]] = []

    def failed(path: Any, error: BaseException) -> None:
        told.append((path, error))

    crawler.signals.connect(failed, signal=output_failed, weak=False)
    return told


def _storage(path: Path, overwrite: bool, crawler: Any = None) -> FeedFile:
    crawler = crawler or get_crawler()
    return FeedFile.from_crawler(crawler, str(path), feed_options={"overwrite": overwrite})


def test_an_overwritten_feed_appears_only_when_whole(tmp_path):
    """``-O``: the lines go to ``.partial``; the previous feed stays until the store, then
    the new one takes its place in one rename and no ``.partial`` is left."""
    feed = tmp_path / "inventory.jsonl"
    feed.write_bytes(b'{"url": "old"}\n')
    storage = _storage(feed, overwrite=True)
    file = storage.open(None)  # type: ignore[arg-type]
    file.write(b'{"url": "new"}\n')
    file.flush()
    assert feed.read_bytes() == b'{"url": "old"}\n'  # a reader meanwhile: the old feed
    assert partial_path(feed).read_bytes() == b'{"url": "new"}\n'
    storage.store(file)
    assert feed.read_bytes() == b'{"url": "new"}\n'
    assert not partial_path(feed).exists()


def test_an_appended_feed_grows_by_the_whole_run_in_one_step(tmp_path):
    """``-o``: the feed is copied to ``.partial`` and appended to there; ``<name>`` keeps
    its lines until the store, then has both runs'."""
    feed = tmp_path / "all.jsonl"
    feed.write_bytes(b'{"url": "first"}\n')
    storage = _storage(feed, overwrite=False)
    file = storage.open(None)  # type: ignore[arg-type]
    file.write(b'{"url": "second"}\n')
    file.flush()
    assert feed.read_bytes() == b'{"url": "first"}\n'
    storage.store(file)
    assert feed.read_bytes() == b'{"url": "first"}\n{"url": "second"}\n'
    assert not partial_path(feed).exists()


@pytest.mark.parametrize("overwrite", [True, False])
def test_a_run_whose_output_failed_leaves_the_feed_as_it_was(tmp_path, caplog, overwrite):
    """Any file of the run failing before the feed is stored (the run stops: its files
    are short) leaves ``<name>`` untouched and the lines in ``.partial``, said once."""
    feed = tmp_path / "inventory.jsonl"
    feed.write_bytes(b'{"url": "complete"}\n')
    crawler = get_crawler()
    storage = _storage(feed, overwrite, crawler)
    file = storage.open(None)  # type: ignore[arg-type]
    file.write(b'{"url": "short"}\n')
    crawler.signals.send_catch_log(
        output_failed, path=tmp_path / "state.json", error=OSError(28, "No space")
    )
    with caplog.at_level(logging.WARNING):
        storage.store(file)
    assert feed.read_bytes() == b'{"url": "complete"}\n'
    assert partial_path(feed).read_bytes().endswith(b'{"url": "short"}\n')
    said = [r.getMessage() for r in caplog.records if "the feed is partial" in r.getMessage()]
    assert len(said) == 1 and str(partial_path(feed)) in said[0]


def test_a_feed_that_cannot_be_opened_is_told_not_raised(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    crawler = get_crawler()
    told = _told(crawler)
    storage = _storage(blocker / "inventory.jsonl", True, crawler)
    file = storage.open(None)  # type: ignore[arg-type]
    file.write(b"x")
    storage.store(file)
    assert len(told) == 1
    assert told[0][0] == partial_path(blocker / "inventory.jsonl")
    assert isinstance(told[0][1], NotADirectoryError)


def _rec(url: str, sitemap: str = SITEMAP) -> dict[str, Any]:
    return {
        "url": url,
        "source": "sitemap",
        "sitemap": sitemap,
        "lastmod": None,
        "priority": None,
        "changefreq": None,
        "alternates": None,
    }


def _batches(seen: SeenSet) -> list[UrlBatch]:
    """Two sitemaps listing the same URL: the final pass rewrites the feed."""
    first = [_rec("https://example.com/a"), _rec("https://example.com/b")]
    seen.add_many([r["url"] for r in first])
    again = "https://example.com/other.xml"
    seen.extra_sources[hash(twin_key("https://example.com/a")) or 1] = [again]
    return [UrlBatch("sitemap", SITEMAP, records=first, seen=seen)]


def test_a_line_the_final_pass_cannot_read_back_is_kept_and_told_once(tmp_path):
    """Another writer's cut-short line in the feed (two runs into one folder): the final
    pass keeps it as written, patches the rest, raises nothing, and tells it once."""
    path = tmp_path / "inventory.jsonl"
    crawler = get_crawler()
    told = _told(crawler)
    seen = SeenSet()
    with open(path, "w+b") as file:
        exporter = JsonLinesExporter.from_crawler(crawler, file)
        exporter.start_exporting()
        for batch in _batches(seen):
            exporter.export_item(batch)
        file.write(b'{"url": "https://example.com/a", "source": "sitem\n')  # another's
        exporter.finish_exporting()  # must not raise
    lines = path.read_bytes().splitlines()
    assert len(lines) == 3
    assert lines[2] == b'{"url": "https://example.com/a", "source": "sitem'
    assert len(told) == 1
    assert isinstance(told[0][1], FeedReadBack)
    assert "1 lines of the feed could not be read back" in str(told[0][1])


def test_any_exception_in_the_final_pass_is_told_not_raised(tmp_path, monkeypatch):
    """A bug in the final pass (any exception) fails the run (output_failed), once; it
    never escapes into Scrapy's closing task as a traceback."""

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("a bug")

    monkeypatch.setattr(exporters, "patched_record", broken)
    crawler = get_crawler()
    told = _told(crawler)
    path = tmp_path / "inventory.jsonl"
    with open(path, "w+b") as file:
        exporter = JsonLinesExporter.from_crawler(crawler, file)
        exporter.start_exporting()
        for batch in _batches(SeenSet()):
            exporter.export_item(batch)
        exporter.finish_exporting()
    assert len(told) == 1
    assert "KeyError" in type(told[0][1]).__name__ + str(told[0][1])
    assert len(path.read_bytes().splitlines()) == 2  # every line kept


def test_two_runs_writing_one_feed_never_mix_their_lines(tmp_path):
    """Two runs into one folder (no lock): each writes a file of its own; the one whose
    ``.partial`` was taken over fails in one line (no rename of another's file), the
    other's feed goes into place whole, with no line of the first."""
    feed = tmp_path / "inventory.jsonl"
    first_crawler, second_crawler = get_crawler(), get_crawler()
    told = _told(first_crawler)
    first = _storage(feed, True, first_crawler)
    second = _storage(feed, True, second_crawler)
    a = first.open(None)  # type: ignore[arg-type]
    a.write(b'{"url": "first"}\n')
    b = second.open(None)  # type: ignore[arg-type]
    b.write(b'{"url": "second"}\n')
    a.write(b'{"url": "first, again"}\n')
    first.store(a)
    assert not feed.exists()
    assert len(told) == 1 and "another run writing the same feed" in str(told[0][1])
    second.store(b)
    assert feed.read_bytes() == b'{"url": "second"}\n'
