"""What changed since the previous run on a site (SPEC §10): new, removed and changed
URLs, for the summary, the crawl log (``runs[].changes``) and ``changes.json`` — and the
URLs not re-confirmed: listed before, not seen this time, and not judged removed (a
source not read, a narrower scope: ``state_scope.py``), kept with status ``unconfirmed``."""

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
    not_judged_because: str | None = None  # the run's own fault (failed, a limit, unread)
    # how far the scopes let removals be judged (state_scope: all, in_scope, none), and why
    removals_scope: str = "all"
    scope_reasons: list[str] = field(default_factory=list)
    unconfirmed: CappedList = field(init=False)
    urls: int = 0  # entries in the state written
    written: str | None = None  # path of the state written
    started_afresh: str | None = None  # why the previous state was not used

    def __post_init__(self) -> None:
        self.new = CappedList(self.list_cap)
        self.removed = CappedList(self.list_cap)
        self.changed = CappedList(self.list_cap)
        self.unconfirmed = CappedList(self.list_cap)

    @property
    def first_run(self) -> bool:
        return self.previous_run is None

    @property
    def fully_judged(self) -> bool:
        """Every URL not seen this run was judged (and, if not listed, called removed)."""
        return self.removals_judged and self.removals_scope == "all"

    @property
    def why_not_judged(self) -> str | None:
        """Why removals were not judged, or judged only in part (None: fully judged)."""
        if not self.removals_judged:
            return self.not_judged_because
        return "; ".join(self.scope_reasons) or None

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
            "removals_judged": self.fully_judged,
            "removals_not_judged_because": self.why_not_judged,
            "removals_scope": self.removals_scope,
            "removals_scope_reasons": self.scope_reasons,
            "unconfirmed": self.unconfirmed.as_dict(),
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
        head = f"Since the previous run ({day}): {self.new.count:,} new, "
        if self.fully_judged:
            text = (
                f"{head}{self.removed.count:,} removed, {self.changed.count:,} changed "
                "(removals judged: every source was read and the run finished)."
            )
        elif self.removals_judged and self.removals_scope == "in_scope":
            text = (
                f"{head}{self.removed.count:,} removed, {self.changed.count:,} changed; "
                f"removals judged only within the shared scope: {self.why_not_judged}."
            )
        else:
            text = (
                f"{head}{self.changed.count:,} changed; removals not judged "
                f"({self.why_not_judged})."
            )
        lines = [text]
        if self.unconfirmed.count:
            lines.append(
                f"Not re-confirmed: {self.unconfirmed.count:,} URL(s) listed before and not "
                "seen this time, kept as they were (status unconfirmed in state.json)"
            )
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
