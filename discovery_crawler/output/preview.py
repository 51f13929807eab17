"""``preview.json`` (profile ``service``, SPEC §10): what a backend shows while a run goes on.

A small file a poller can read at any moment: ``status`` (0 processing, 1 completed,
2 failed), the first ``max_pages`` pages found (url, title, depth; ``truncated`` when there
were more), ``groups`` (when a grouping stage ran), ``warnings``, ``discovered`` and
``updated_at``. Rewritten atomically (``write_json_atomic``: a reader sees the old file or
the new one) after every bounded chunk — ``chunk`` URLs or ``interval`` seconds, whichever
comes first — so its size and its cost stay bounded whatever the site's size.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from discovery_crawler.output.crawl_log import write_json_atomic
from discovery_crawler.run_record import now_iso

if TYPE_CHECKING:
    from pathlib import Path

PREVIEW_NAME = "preview.json"
PROCESSING, COMPLETED, FAILED = 0, 1, 2


class PreviewWriter:
    """Collects the first pages of a run and rewrites ``preview.json`` chunk by chunk."""

    def __init__(
        self, path: Path, max_pages: int = 200, chunk: int = 500, interval: float = 5.0
    ) -> None:
        self.path = path
        self.max_pages = max(0, max_pages)
        self.chunk = max(1, chunk)
        self.interval = interval
        self.pages: list[dict[str, Any]] = []
        self.discovered = 0
        self.truncated = False
        self.status = PROCESSING
        self.writes = 0
        self._since_write = 0
        self._last_write = time.monotonic()

    def add(self, records: list[dict[str, Any]]) -> None:
        """Count a batch of records and keep the first pages."""
        self.discovered += len(records)
        self._since_write += len(records)
        room = self.max_pages - len(self.pages)
        if room > 0:
            self.pages.extend(
                {"url": rec["url"], "title": rec.get("title"), "depth": rec.get("depth")}
                for rec in records[:room]
            )
        if len(records) > max(room, 0):
            self.truncated = True

    def due(self) -> bool:
        """A chunk is complete: ``chunk`` URLs or ``interval`` seconds since the last write."""
        if not self._since_write:
            return False
        return (
            self._since_write >= self.chunk or time.monotonic() - self._last_write >= self.interval
        )

    def as_dict(self, warnings: list[str], groups: list[Any]) -> dict[str, Any]:
        return {
            "status": self.status,
            "pages": self.pages,
            "groups": groups,
            "warnings": warnings,
            "truncated": self.truncated,
            "discovered": self.discovered,
            "updated_at": now_iso(),
        }

    def write(self, warnings: list[str], groups: list[Any]) -> None:
        write_json_atomic(self.path, self.as_dict(warnings, groups))
        self.writes += 1
        self._since_write = 0
        self._last_write = time.monotonic()

    def finish(self, status: int, warnings: list[str], groups: list[Any]) -> None:
        self.status = status
        self.write(warnings, groups)


def groups_of(record: Any) -> list[Any]:
    """The groups a grouping stage left on the run record (``record.groups``), as JSON."""
    groups = getattr(record, "groups", None)
    if groups is None:
        return []
    if hasattr(groups, "as_dict"):
        groups = groups.as_dict()
    if isinstance(groups, dict):
        groups = groups.get("groups", groups.get("path_groups", [groups]))
    return list(groups) if isinstance(groups, list | tuple) else []
