"""Feed exporters that turn ``UrlBatch`` items into one record per URL.

Registered for ``jsonl``/``jsonlines``, ``json`` and ``csv`` (``FEED_EXPORTERS``), so
``-O inventory.jsonl`` and ``-O inventory.csv`` look like one record per URL.

Records are written as they arrive. A URL listed again after its line was written (by a
second sitemap, or as an hreflang alternate, or in its trailing-slash twin's form) gets all
its sources (and its final URL and aliases) when the run ends: the
seen-set remembers the extra sources of duplicates only, so memory grows with duplicates,
not with the site, and if there are any the feed is rewritten once, streaming, so it still
has one line per URL.

The lines themselves are built in ``output/feed_lines.py``.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import logging
import shutil
import tempfile
from typing import TYPE_CHECKING, Any, BinaryIO

from scrapy.exporters import BaseItemExporter

from discovery_crawler.items import (
    CRAWL_FIELDS,
    EXTRA_FIELDS,
    RECORD_FIELDS,
    STAGE_FIELDS,
    UrlBatch,
)
from discovery_crawler.output.feed_lines import (
    _dumps,
    json_line,
    json_lines,
    json_utf8,
    worked_text,
)
from discovery_crawler.output.feed_log import feed_count_words
from discovery_crawler.output.feed_storage import PARTIAL_SUFFIX
from discovery_crawler.record_fields import (
    ANY,
    CRAWL,
    EXTRA,
    INT,
    JSON,
    NUMBER,
    SOURCES,
    TEXT,
)
from discovery_crawler.record_fields import FIELDS as RECORD_FIELD_DECLARATION
from discovery_crawler.signals import output_failed
from discovery_crawler.urls.normalize import twin_key
from discovery_crawler.urls.seen import RecordPatch

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Self

    from scrapy.crawler import Crawler

    from discovery_crawler.urls.seen import SeenSet

logger = logging.getLogger(__name__)


def _merge_sources(obj: dict[str, Any], extra: list[str]) -> None:
    sources = obj.get("sources") or []
    for source in extra:
        if source not in sources:
            sources.append(source)
    obj["sources"] = sources


def _add_flags(obj: dict[str, Any], flags: list[str]) -> None:
    have = obj.get("flags") or []
    obj["flags"] = have + [f for f in flags if f not in have]


def _in_feed_order(obj: dict[str, Any]) -> dict[str, Any]:
    order = {name: i for i, name in enumerate(RECORD_FIELDS)}
    return dict(sorted(obj.items(), key=lambda kv: order.get(kv[0], len(order))))


def patched_record(obj: dict[str, Any], seen: SeenSet, finals: Any = None) -> dict[str, Any] | None:
    """The final form of a written record, or None when nothing changed since.

    Four things can change after a line is written: further sitemaps list the URL (their
    sources are added), a URL that entered as an hreflang alternate or without its trailing
    slash is listed as a ``<loc>`` in the form that wins (that listing's record replaces
    it, keeping what the crawl and the later stages wrote; the first sitemap stays a
    source), the record's trailing-slash twin turns up (a ``RecordPatch``: the record's
    final URL and the forms added to its ``aliases``), or (union mode) the crawl ends and
    says whether it was listed only or linked only.
    """
    fp = hash(twin_key(obj["url"])) or 1
    upgrade = seen.upgrades.get(fp)
    extra = seen.extra_sources.get(fp)
    flags = finals.flags_for(obj["url"]) if finals is not None else None
    if upgrade is None and not extra:
        if not flags:
            return None
        obj = dict(obj)
        _add_flags(obj, flags)
        return obj
    if upgrade is not None:
        earlier = obj.get("sources") or []
        written = obj
        if isinstance(upgrade, RecordPatch):
            obj = dict(written)
            obj.update((k, v) for k, v in upgrade.items() if k != "aliases")
        else:
            obj = json.loads(json_line(upgrade))
            # set after dedup (the stages), or by the fetch (crawl, verify, union)
            for later in (*CRAWL_FIELDS, *STAGE_FIELDS):
                if obj.get(later) is None and later in written:
                    obj[later] = written[later]
            for name in EXTRA_FIELDS:  # so are the extra fields, when the line has them
                if name not in obj and name in written:
                    obj[name] = written[name]
        aliases = [
            alias
            for alias in dict.fromkeys(
                (*(written.get("aliases") or ()), *upgrade.get("aliases", ()))
            )
            if alias != obj["url"]
        ]
        if aliases:
            obj["aliases"] = aliases
        # the written record's sources were read first: reading order whichever record
        # won (a start page recorded by the link crawl before the listings arrive, or met
        # first as an alternate, ends with the same sources)
        later = obj.get("sources") or []
        obj["sources"] = list(earlier)
        _merge_sources(obj, later)
        obj = _in_feed_order(obj)
    if extra:
        _merge_sources(obj, extra)
    if flags:
        _add_flags(obj, flags)
    return obj


class FeedReadBack(Exception):
    """Lines of the feed could not be read back by the final pass (the message counts
    them): another writer's lines, or a file changed under the run."""


class _GuardedFile:
    """The feed's file, whose first failed write (a full disk, a file gone read-only) is
    handed to ``failed`` (the ``output_failed`` signal) and after which nothing more is
    written: one line, not a traceback per batch."""

    def __init__(self, file: BinaryIO, failed: Callable[[Any, OSError], None]):
        self._file = file
        self._failed = failed
        self.broken = False

    def _guard(self, method: str, *args: Any) -> Any:
        if self.broken:
            return None
        try:
            return getattr(self._file, method)(*args)
        except OSError as exc:
            self.broken = True
            self._failed(getattr(self._file, "name", "the feed"), exc)
            return None

    def write(self, data: bytes) -> Any:
        return self._guard("write", data)

    def flush(self) -> None:
        self._guard("flush")

    def truncate(self, *args: Any) -> Any:
        return self._guard("truncate", *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)


class _RecordExporter(BaseItemExporter):
    """Shared machinery: write records as they come; patch changed records at the end."""

    @classmethod
    def from_crawler(cls, crawler: Crawler, file: BinaryIO, **kwargs: Any) -> Self:
        def failed(path: Any, exc: Exception) -> None:
            crawler.signals.send_catch_log(output_failed, path=path, error=exc)

        exporter = cls(_GuardedFile(file, failed), **kwargs)  # type: ignore[arg-type]
        exporter.failed = failed
        return exporter

    def __init__(self, file: BinaryIO, **kwargs: Any):
        super().__init__(dont_fail=True, **kwargs)
        self.file = file
        self.encoding = self.encoding or "utf-8"
        # any spelling of UTF-8 (utf8, UTF_8…): the feed's batches can come as C's bytes
        self.utf8 = codecs.lookup(self.encoding).name == "utf-8"
        self.seen: SeenSet | None = None
        self.finals: Any = None  # union mode: flags decided at the end (UnionTally)
        self.count = 0  # URLs written
        self.batches = 0  # the items that wrote lines (Scrapy's "N items" counts them all)
        # Told when the final pass fails (the output_failed signal, from a crawler).
        self.failed: Callable[[Any, Exception], None] | None = None
        self.unpatched = 0  # lines the final pass could not read back: kept as written
        self.unpatched_error: Exception | None = None

    def export_item(self, item: Any) -> None:
        if not isinstance(item, UrlBatch):
            raise TypeError(f"this feed exports UrlBatch items, got {type(item).__name__}")
        if item.seen is not None:
            self.seen = item.seen
        if item.finals is not None:
            self.finals = item.finals
        if item.records:
            self.file.write(self.encode_batch(item.records, worked_text(item)))
            self.count += len(item.records)
            self.batches += 1

    def encode_batch(self, records: list[dict[str, Any]], lines: str | None = None) -> bytes:
        """The batch as feed text; ``lines``: its JSON lines, already written."""
        raise NotImplementedError

    def finish_exporting(self) -> None:
        """The final pass. It never raises: Scrapy runs it in a task of its own, where an
        exception is a traceback after the run has been judged. A failure is told once
        (``output_failed``: the run exits 4) and the feed keeps every line it has."""
        name = getattr(self.file, "name", None)
        if isinstance(name, str):  # Scrapy's "Stored … feed" line says URLs, not batches
            # (a local feed is written as <name>.partial: Scrapy's line names the target)
            feed_count_words().finished(name.removesuffix(PARTIAL_SUFFIX), self.count, self.batches)
        if getattr(self.file, "broken", False):
            return  # the run is stopping: what was written stays as it is (partial)
        try:
            self._patch_changed()
            if self.unpatched:
                raise FeedReadBack(
                    f"{self.unpatched:,} lines of the feed could not be read back and are "
                    f"kept as written (first: {type(self.unpatched_error).__name__}: "
                    f"{self.unpatched_error})"
                )
        except Exception as exc:
            self._fail(exc)
        try:
            self.file.flush()  # a full disk is told here, not by Scrapy's close
        except Exception as exc:
            self._fail(exc)

    def _fail(self, exc: Exception) -> None:
        path = getattr(self.file, "name", "the feed")
        if self.failed is not None:
            self.failed(path, exc)
        else:
            logger.error("the feed's final pass failed on %s: %s", path, exc)

    def _kept(self, line: Any, exc: Exception) -> Any:
        """A line the final pass cannot read back (a line not of this run's writing): kept
        as written, counted, and the run told at the end."""
        self.unpatched += 1
        if self.unpatched_error is None:
            self.unpatched_error = exc
        return line

    def _patch_changed(self) -> None:
        seen = self.seen
        if seen is None or not self.count:
            return
        if not (seen.extra_sources or seen.upgrades or self.finals is not None):
            return
        # Some URLs changed after their line was written: rewrite the feed once,
        # streaming (memory: the changed records only).
        self.file.flush()
        try:
            self.file.seek(0)
        except (OSError, ValueError):
            logger.warning(
                "feed is not seekable: %d URLs listed by several sitemaps show their "
                "first listing only",
                len(seen.extra_sources) + len(seen.upgrades),
            )
            return
        with tempfile.TemporaryFile(prefix="discovery-feed-") as copy:
            reader = self._reader()
            try:
                shutil.copyfileobj(reader, copy, 1 << 20)
            finally:
                if reader is not self.file:
                    reader.close()
            copy.seek(0)
            self.file.seek(0)
            self.file.truncate()
            self.rewrite(copy, seen)

    def _changed(self, url: str, seen: SeenSet) -> bool:
        fp = hash(twin_key(url)) or 1
        if fp in seen.extra_sources or fp in seen.upgrades:
            return True
        return self.finals is not None and self.finals.flags_for(url) is not None

    def _reader(self) -> BinaryIO:
        if getattr(self.file, "readable", lambda: False)():
            self.file.seek(0)
            return self.file
        # FileFeedStorage opens the feed write-only ("wb"): read it by name.
        return open(self.file.name, "rb")

    def rewrite(self, copy: BinaryIO, seen: SeenSet) -> None:
        raise NotImplementedError


class JsonLinesExporter(_RecordExporter):
    """``-O file.jsonl``: one JSON object per line, one line per URL."""

    def encode_batch(self, records: list[dict[str, Any]], lines: str | None = None) -> bytes:
        if lines is None and self.utf8:
            return json_utf8(records)
        return (lines or json_lines(records)).encode(self.encoding)

    def rewrite(self, copy: BinaryIO, seen: SeenSet) -> None:
        for line in copy:
            try:
                line = self._patch_line(line, seen)
            except Exception as exc:
                line = self._kept(line, exc)
            self.file.write(line)

    def _patch_line(self, line: bytes, seen: SeenSet) -> bytes:
        # Every line starts with {"url": "<url>", so the URL is found without parsing JSON.
        end = line.find(b'", "source"', 9)
        if end < 0:
            return line
        if not self._changed(json.loads(line[8 : end + 1]), seen):
            return line
        obj = patched_record(json.loads(line), seen, self.finals)
        return line if obj is None else (_dumps(obj) + "\n").encode(self.encoding)


class JsonExporter(JsonLinesExporter):
    """``-O file.json``: a JSON array with one object per URL."""

    def start_exporting(self) -> None:
        self.file.write(b"[")

    def encode_batch(self, records: list[dict[str, Any]], lines: str | None = None) -> bytes:
        lines = (lines or json_lines(records))[:-1].replace("\n", ",\n")
        return (("\n" if not self.count else ",\n") + lines).encode(self.encoding)

    def finish_exporting(self) -> None:
        self.file.write(b"\n]\n")
        super().finish_exporting()

    def rewrite(self, copy: BinaryIO, seen: SeenSet) -> None:
        for line in copy:
            if line.startswith(b'{"url": '):
                ending = b",\n" if line.endswith(b",\n") else b"\n"
                body = line[: -len(ending)]
                try:
                    line = self._patch_line(body + b"\n", seen).rstrip(b"\n") + ending
                except Exception as exc:
                    line = self._kept(line, exc)
            self.file.write(line)


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return _dumps(value)
    return value


def _sources_cell(r: dict[str, Any], name: str) -> str:
    return _dumps(r.get(name) or ([r["sitemap"]] if r["sitemap"] else []))


# A CSV cell of each kind (``record_fields.CELLS``) from a record, and back from the cell.
_WRITE: dict[str, Callable[[dict[str, Any], str], Any]] = {
    TEXT: lambda r, name: r.get(name) or "",
    NUMBER: lambda r, name: _cell(r.get(name)),
    INT: lambda r, name: _cell(r.get(name)),
    JSON: lambda r, name: _cell(r.get(name)),
    SOURCES: _sources_cell,
    ANY: lambda r, name: _cell(r.get(name)),
}
_READ: dict[str, Callable[[str], Any]] = {
    TEXT: lambda cell: cell or None,
    # (a number stays text, but for an integer: the row it is written back to is the same)
    NUMBER: lambda cell: int(cell) if cell.lstrip("-").isdigit() else (cell or None),
    INT: lambda cell: int(cell) if cell else None,
    JSON: lambda cell: json.loads(cell) if cell else None,
    SOURCES: lambda cell: json.loads(cell or "[]"),
    ANY: lambda cell: (
        json.loads(cell) if cell[:1] in ("[", "{") or cell in ("true", "false") else cell
    ),
}
_CSV_COLUMNS = tuple((f.name, _WRITE[f.cell]) for f in RECORD_FIELD_DECLARATION)


def _csv_row(r: dict[str, Any]) -> list[Any]:
    """A record's CSV row: every declared field (``record_fields``), in order."""
    return [write(r, name) for name, write in _CSV_COLUMNS]


def _csv_record(row: list[str]) -> dict[str, Any]:
    """A CSV row back to a record (for the end-of-run patch; numbers stay text): the
    listing and stage fields always, the crawl fields on a link-crawl row (``via``), the
    extra fields the row has."""
    cells = dict(zip(RECORD_FIELDS, row, strict=False))  # (a short row: an older header)
    record: dict[str, Any] = {}
    for f in RECORD_FIELD_DECLARATION:
        cell = cells.get(f.name, "")
        if (f.part == CRAWL and not cells.get("via")) or (f.part == EXTRA and not cell):
            continue
        record[f.name] = _READ[f.cell](cell)
    return record


class CsvExporter(_RecordExporter):
    """``-O file.csv``: a header row, then one row per URL (lists as JSON text).

    RFC 4180 line endings (CRLF), so a value holding a bare CR is quoted like one holding LF.
    """

    def encode_batch(self, records: list[dict[str, Any]], lines: str | None = None) -> bytes:
        buf = io.StringIO()
        csv.writer(buf).writerows([_csv_row(r) for r in records])
        return buf.getvalue().encode(self.encoding)

    def start_exporting(self) -> None:
        self.file.write((",".join(RECORD_FIELDS) + "\r\n").encode(self.encoding))

    def rewrite(self, copy: BinaryIO, seen: SeenSet) -> None:
        text = io.TextIOWrapper(self.file, encoding=self.encoding, newline="", write_through=True)
        try:
            writer = csv.writer(text)
            rows = csv.reader(io.TextIOWrapper(copy, encoding=self.encoding, newline=""))
            writer.writerow(next(rows))
            for row in rows:
                try:
                    if self._changed(row[0], seen):
                        obj = patched_record(_csv_record(row), seen, self.finals)
                        if obj is not None:
                            writer.writerow(_csv_row(obj))
                            continue
                except Exception as exc:
                    row = self._kept(row, exc)
                writer.writerow(row)
        finally:
            text.detach()
