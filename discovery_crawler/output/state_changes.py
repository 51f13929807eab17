"""What changed since the previous run on a site (SPEC §10): new, removed and changed
URLs, for the summary, the crawl log (``runs[].changes``) and ``changes.json``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from discovery_crawler.output.crawl_log import write_json_atomic
from discovery_crawler.run_record import CappedList

if TYPE_CHECKING:
    from pathlib import Path

CHANGES_NAME = "changes.json"


@dataclass
class Changes:
    """New / removed / changed since the previous run (``run_record.changes``)."""

    run: int
    list_cap: int
    previous_run: int | None = None
    since: str | None = None  # when the previous run finished
    new: CappedList = field(init=False)
    removed: CappedList = field(init=False)
    changed: CappedList = field(init=False)
    known: int = 0
    refreshed: int = 0
    refresh_all: bool = False
    refresh_unknown: list[str] = field(default_factory=list)
    removals_judged: bool = True
    not_judged_because: str | None = None
    urls: int = 0  # entries in the state written
    written: str | None = None  # path of the state written
    started_afresh: str | None = None  # why the previous state was not used

    def __post_init__(self) -> None:
        self.new = CappedList(self.list_cap)
        self.removed = CappedList(self.list_cap)
        self.changed = CappedList(self.list_cap)

    @property
    def first_run(self) -> bool:
        return self.previous_run is None

    def as_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "previous_run": self.previous_run,
            "since": self.since,
            "new": self.new.as_dict(),
            "removed": self.removed.as_dict(),
            "changed": self.changed.as_dict(),
            "known": self.known,
            "refreshed": self.refreshed,
            "refresh_all": self.refresh_all,
            "refresh_unknown": self.refresh_unknown,
            "removals_judged": self.removals_judged,
            "removals_not_judged_because": self.not_judged_because,
            "state": self.written,
            "state_urls": self.urls,
            "started_afresh": self.started_afresh,
        }

    def lines(self) -> list[str]:
        """The summary lines (``Since the previous run (2026-11-28): 12 new, …``)."""
        if self.first_run:
            why = f" ({self.started_afresh})" if self.started_afresh else ""
            return [f"State: first run on this folder{why}; {self.urls:,} URLs recorded"]
        day = (self.since or "")[:10] or f"run {self.previous_run}"
        if self.removals_judged:
            text = (
                f"Since the previous run ({day}): {self.new.count:,} new, "
                f"{self.removed.count:,} removed, {self.changed.count:,} changed "
                "(removals judged: every source was read and the run finished)."
            )
        else:
            text = (
                f"Since the previous run ({day}): {self.new.count:,} new, "
                f"{self.changed.count:,} changed; removals not judged "
                f"({self.not_judged_because})."
            )
        lines = [text]
        if self.refresh_all:
            lines.append("Refreshed: all URLs (refresh_all=1)")
        elif self.refreshed:
            lines.append(f"Refreshed: {self.refreshed:,} URL(s)")
        if self.refresh_unknown:
            lines.append(f"refresh: no URL with slug {', '.join(self.refresh_unknown)} in state")
        return lines


def write_changes(out_dir: Path, changes: Changes) -> Path:
    """``changes.json``: this run's new / removed / changed, for cron jobs and scripts."""
    path = out_dir / CHANGES_NAME
    write_json_atomic(path, changes.as_dict())
    return path
