"""``preview.json`` (profile ``service``, SPEC §10): what a backend shows while a run goes on.

A small file a poller can read at any moment: ``status`` (0 processing, 1 completed,
2 failed), the first ``max_pages`` pages found (url, title, depth; ``truncated`` when there
were more), ``groups``, ``warnings``, ``discovered`` and ``updated_at``. A job run in
bounded chunks (``MAX_CHUNK_PAGES``) keeps ``status`` 0 until its last chunk.

The groups are the listed pages by their exact parent path (the seed's Output: id, label,
representative URL, member URLs, confidence, grouping reason), from the URL alone:
``/blog/2024/a/`` and ``/blog/2024/b`` are members of ``parent:/blog/2024/``; the site's
root has no parent and is in no group. Confidence and reason are the parent groups' of the
crawl log (``selection/groups.py``), judged on these pages; members are sorted, so two
runs that found the same pages in another order write the same groups.

Rewritten atomically (``write_json_atomic``: a reader sees the old file or the new one)
after every ``chunk`` URLs or ``interval`` seconds, whichever comes first, so its size and
its cost stay bounded whatever the site's size.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from discovery_crawler.output.crawl_log import write_json_atomic
from discovery_crawler.run_record import now_iso
from discovery_crawler.selection.groups import Groups
from discovery_crawler.selection.parents import is_origin, parent_path, split_many

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
        self.members: dict[str, list[str]] = {}  # parent URL → the pages kept under it
        self.parents = Groups()  # the kept pages' parent groups: confidence and reason
        self._since_write = 0
        self._last_write = time.monotonic()

    def add(self, records: list[dict[str, Any]]) -> None:
        """Count a batch of records and keep the first pages."""
        self.discovered += len(records)
        self._since_write += len(records)
        room = self.max_pages - len(self.pages)
        if room > 0:
            kept = records[:room]
            self.pages.extend(
                {"url": rec["url"], "title": rec.get("title"), "depth": rec.get("depth")}
                for rec in kept
            )
            urls = [rec["url"] for rec in kept]
            split = split_many(urls)
            self.parents.add_many(urls, split=split)
            members = self.members
            for url, parent in zip(urls, split.parents, strict=True):
                if not is_origin(parent):
                    members.setdefault(parent, []).append(url)
        if len(records) > max(room, 0):
            self.truncated = True

    def due(self) -> bool:
        """A chunk is complete: ``chunk`` URLs or ``interval`` seconds since the last write."""
        if not self._since_write:
            return False
        return (
            self._since_write >= self.chunk or time.monotonic() - self._last_write >= self.interval
        )

    def groups(self) -> list[dict[str, Any]]:
        """The kept pages by exact parent path, biggest first (then by path)."""
        grouped = self.parents
        out = []
        for parent, group in sorted(grouped.parents.items(), key=lambda pg: (-pg[1].count, pg[0])):
            path = parent_path(parent)
            confidence, reason, _shape = group.judge(path, grouped.min_size)
            members = sorted(self.members.get(parent, ()))
            out.append(
                {
                    "id": f"parent:{path}",
                    "label": path,
                    "representative": members[0] if members else group.representative,
                    "members": members,
                    "count": group.count,
                    "confidence": confidence,
                    "reason": reason,
                }
            )
        return out

    def as_dict(self, warnings: list[str]) -> dict[str, Any]:
        return {
            "status": self.status,
            "pages": self.pages,
            "groups": self.groups(),
            "warnings": warnings,
            "truncated": self.truncated,
            "discovered": self.discovered,
            "updated_at": now_iso(),
        }

    def write(self, warnings: list[str]) -> None:
        write_json_atomic(self.path, self.as_dict(warnings))
        self.writes += 1
        self._since_write = 0
        self._last_write = time.monotonic()

    def finish(self, status: int, warnings: list[str]) -> None:
        self.status = status
        self.write(warnings)
