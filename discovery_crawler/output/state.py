"""``state.json`` over a run (SPEC §10): what the previous runs on a site found, so a re-run
can say what changed — the run's lifecycle, ``RunState.load`` → ``observe(records)`` per
batch → ``close(...)``.

Per URL: its slug (kept across runs), when it was first and last seen (run numbers), its
``lastmod`` and its status — ``new`` (first seen by the run that wrote the file),
``known``, ``changed`` (``lastmod`` differs from the previous run's), ``removed`` (listed
before, not any more) or ``unconfirmed`` (listed before, not seen by this run, and not
judged removed: a source it could not read, or a scope that does not cover the one the URL
was found under — ``state_scope.py``; the entry is kept as it was). A re-run reads the
file, marks every record it discovers new / known / changed, keeps known URLs' slugs,
reports what was removed and what was not re-confirmed, and writes it back. The header
records the run's scope and the job that wrote it.

The concerns live apart: the file's layout and its checks (``state_format.py``), the
previous run held compactly on the project's seen-set (``state_previous.py``), what
changed (``state_changes.py``). This run's entries are spooled to a temporary file as
records pass and streamed into the new state at the end, together with the previous
entries not seen this run. A URL is identified by its trailing-slash twin key
(``urls.normalize.twin_key``), as the dedup stage does, so ``/about`` and ``/about/`` are
one page across runs too.

**Safety.** Written to a temporary file and renamed (``os.replace``): a crash leaves the
old state or the new one, never half of one (a left-over temporary is ignored).
``changes.json`` is written before the rename, and a resumable job keeps the state it
replaced until it is marked finished, so a kill at any moment loses no report (``_write``). A file
that does not read back exactly as written — a duplicate URL or slug, a URL of another
origin, anything ``state_format`` refuses — is never used nor overwritten: it is moved
aside as ``state.json.corrupt-<time>`` with one log line, and the run continues as a first
run.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
from collections import Counter, deque
from itertools import repeat
from operator import itemgetter
from pathlib import Path
from typing import IO, Any

from discovery_crawler.output.crawl_log import give_usual_mode
from discovery_crawler.output.kill_points import kill_point
from discovery_crawler.output.state_changes import CHANGES_NAME, Changes, write_changes
from discovery_crawler.output.state_format import (
    ENTRY_SEPARATOR,
    FIELDS,
    FORMAT,
    FORMAT_V1,
    HISTORY_CAP,
    PREVIOUS_NAME,
    STATE_NAME,
    STATUSES,
    StateError,
    _entry_lines,
    _lines,
    check_origin,
    copy_entries,
    entry_line,
    entry_lines,
    footer_line,
    header_line,
    hold,
    iter_entries,
    iter_entry_chunks,
    move_aside,
    read_count,
    read_header,
    sweep_orphans,
)
from discovery_crawler.output.state_previous import (
    FIRST_MASK,
    FLAGS,
    REFRESH,
    REMOVED,
    SEEN,
    PreviousRun,
)
from discovery_crawler.output.state_scope import ALL, IN_SCOPE, Judgement, RunScope, judge
from discovery_crawler.output.state_sitemaps import (
    SectionsError,
    SectionsReader,
    SectionsWriter,
    remove_other_sections,
)
from discovery_crawler.sitemaps.facts import FROM_ENTRY, holding
from discovery_crawler.urls.normalize import twin_key, twin_keys
from discovery_crawler.urls.seen import SeenSet
from discovery_crawler.urls.slugs import SlugAllocator, bases_many, normalized_paths

# The names other modules and tests take from here, whichever module defines them.
__all__ = [
    "CHANGES_NAME",
    "FIELDS",
    "FORMAT",
    "STATE_NAME",
    "STATUSES",
    "Changes",
    "RunState",
    "StateError",
    "_entry_lines",
    "_lines",
    "check_origin",
    "entry_lines",
    "iter_entries",
    "iter_entry_chunks",
    "read_count",
    "read_header",
    "write_changes",
]

logger = logging.getLogger(__name__)

_URL = itemgetter("url")
_SLUG = itemgetter("slug")
_LASTMOD = itemgetter("lastmod")
_SEPARATOR = ENTRY_SEPARATOR.encode("utf-8")


def _has_worker_entry(records: list[dict[str, Any]]) -> bool:
    """Whether the sitemap worker wrote state entries for these records: for none when
    SITEMAP_WORKER_LINES is off, else for most; the ends of the batch tell (rendering an
    entry it wrote is never wrong, only slower)."""
    return any(f is not None and f.state for f in holding(records[:1] + records[-1:], FROM_ENTRY))


# What reading a state file of any shape can raise (its checks raise StateError; these
# are what a shape they did not foresee gives): the file is kept aside, the run goes on.
_UNREADABLE = (StateError, OSError, ValueError, TypeError, KeyError, IndexError, RecursionError)


class RunState:
    """The state of one run: the previous run (compact) plus this run's entries (spooled).

    ``load`` → ``observe(records)`` per batch → ``close(...)``. ``is_known(url)`` is the
    hook for page fetchers (the BFS link spider): True for a URL the previous runs listed
    and still listed, unless ``refresh``/``refresh_all`` asks for it again.
    """

    def __init__(
        self,
        out_dir: Path,
        input_origin: str | None = None,
        refresh: tuple[str, ...] = (),
        refresh_all: bool = False,
        list_cap: int = 1000,
        scope: RunScope | None = None,
        job_id: str | None = None,
        resumed: bool = False,
    ) -> None:
        self.path = out_dir / STATE_NAME
        # The state judged against: state.json, or the one a job's run replaced before it
        # was killed (PREVIOUS_NAME, on a resume), or None: this job wrote the first state.
        self.previous_path: Path | None = self.path
        self.scope = scope  # what this run looks at (state_scope.py)
        self.job_id = job_id  # the resumable job running it (extensions/job.py), if any
        self.resumed = resumed
        self.out_dir = out_dir
        self.input_origin = input_origin
        self.refresh = tuple(refresh)
        self.refresh_all = refresh_all
        self.list_cap = list_cap
        self.header: dict[str, Any] | None = None  # the previous state's header
        self.table: PreviousRun | None = None  # the previous run's URLs (state_previous.py)
        self.slugs = SlugAllocator()  # new URLs' slugs: none a previous URL holds
        self.new_seen = SeenSet(min_slots=1 << 12)  # this run's new URLs (no double entry)
        self.changes = Changes(run=1, list_cap=list_cap, refresh_all=refresh_all)
        self.previous_live = 0  # previous entries not removed
        self.seen_known = 0
        self._spool: IO[bytes] | None = None
        self._spool_path: Path | None = None
        self.spooled = 0
        self.spooled_counts: Counter[str] = Counter()  # spooled entries by status
        # The sitemap sections (state format 2, ``state_sitemaps.py``): the previous run's,
        # which the walk asks conditionally and carries over, and this run's.
        self.sections: SectionsReader | None = None
        self.sections_out = SectionsWriter(out_dir)
        self.sections_unused: str | None = None  # why the previous sections are not used
        self.migrated: str | None = None  # the format read, when it was an older one
        self.closed = False

    # -- loading --------------------------------------------------------------------------
    @classmethod
    def load(cls, out_dir: Path, **kwargs: Any) -> RunState:
        """The run's state, with the previous one read from ``out_dir/state.json`` when
        it exists and reads back as written; otherwise moved aside (one log line)."""
        state = cls(out_dir, **kwargs)
        state._choose_previous()
        path = state.previous_path
        if path is not None and path.exists():
            try:
                state._read_previous()
            except _UNREADABLE as exc:
                state._forget_previous()
                try:
                    aside = move_aside(path)
                except OSError as move_exc:
                    logger.error("%s; could not move it aside (%s)", exc, move_exc)
                    raise
                logger.error(
                    "%s; kept it aside as %s; this run starts afresh (every URL new)",
                    exc,
                    aside.name,
                )
                state.changes.started_afresh = f"previous state unreadable, kept as {aside.name}"
        if state.table is None:  # nothing to refresh on a first run
            state.changes.refresh_unknown = list(state.refresh)
        return state

    def _choose_previous(self) -> None:
        """Which state to judge against. A job killed after its state was written but before
        it was marked finished resumes against the state that one replaced (kept as
        PREVIOUS_NAME), so its resume reports the real changes, not none; left by any other
        run, that file is dropped."""
        link = self.out_dir / PREVIOUS_NAME
        own = False
        if self.resumed and self.job_id and self.path.exists():
            with contextlib.suppress(StateError, OSError):
                own = read_header(self.path).get("job") == self.job_id
        if own:
            self.previous_path = link if link.exists() else None
            logger.info(
                "%s was written by this job before it was stopped: judged against %s",
                self.path.name,
                "the state it replaced" if link.exists() else "no state (its first run)",
            )
        else:
            link.unlink(missing_ok=True)

    @staticmethod
    def drop_previous(out_dir: Path) -> None:
        """The job is marked finished: the state its run replaced is not needed any more."""
        (out_dir / PREVIOUS_NAME).unlink(missing_ok=True)

    def _forget_previous(self) -> None:
        self.header = None
        self.table = None
        self.slugs = SlugAllocator()
        self.changes = Changes(run=1, list_cap=self.list_cap, refresh_all=self.refresh_all)
        self.previous_live = 0
        self.sections = None

    def _read_previous(self) -> None:
        refresh = set(self.refresh)
        assert self.previous_path is not None
        previous = PreviousRun.load(self.previous_path, refresh)
        header = previous.header
        self.header = header
        self.table = previous
        self.slugs = previous.slugs
        self.previous_live = previous.live
        found_refresh = previous.refresh_found
        history = header["runs"] or [{}]
        self.changes = Changes(
            run=header["run"] + 1,
            list_cap=self.list_cap,
            previous_run=header["run"],
            since=history[-1].get("finished_at") or header.get("updated_at"),
            refresh_all=self.refresh_all,
        )
        self.changes.refresh_unknown = [s for s in self.refresh if s not in found_refresh]
        self._read_sections(header)

    def _read_sections(self, header: dict[str, Any]) -> None:
        """The previous run's sitemap sections; without them every sitemap is read (one
        line says why: a format 1 state, which this run migrates, or a file gone)."""
        if header.get("format") == FORMAT_V1:
            self.migrated = FORMAT_V1
            self.sections_unused = (
                f"format 1 (no sitemap sections), migrated to {FORMAT.rsplit('/', 1)[1]} "
                "when this run writes it: every sitemap is read in full this time"
            )
            return  # said by the state stage, in the run's notes
        name = header.get("sitemaps")
        if not name:
            return
        try:
            self.sections = SectionsReader.load(self.out_dir / name, header["run"])
        except (SectionsError, OSError) as exc:
            self.sections_unused = (
                f"its sitemap sections are not usable ({exc}): every sitemap is read in full"
            )
            logger.warning("state.json: %s", self.sections_unused)

    @property
    def spool_path(self) -> Path:
        """The file this run's entries are spooled to (``state.json`` before there is one)."""
        return self._spool_path or self.path

    @property
    def origin(self) -> str | None:
        """The site origin recorded by the previous run (None on a first run)."""
        return self.header["origin"] if self.header else None

    @property
    def nbytes(self) -> int:
        """Bytes held for the previous run (table + reserved slugs), not the exceptions."""
        return self.table.nbytes if self.table else self.slugs.nbytes

    @property
    def slug_exceptions(self) -> dict[int, str]:
        """The previous run's slugs of neither form (slot → slug)."""
        return self.table.exceptions if self.table else {}

    # -- the hook for page fetchers -------------------------------------------------------
    def is_known(self, url: str) -> bool:
        """True when ``url`` (normalized) was listed by the previous run and is not to be
        re-done (``refresh``, ``refresh_all``): a page fetcher may skip fetching it."""
        table = self.table
        if table is None or self.refresh_all:
            return False
        return table.is_known(url)

    # -- during the run -------------------------------------------------------------------
    def observe(
        self,
        records: list[dict[str, Any]],
        run_started_at: str = "",
        unique: bool = False,
        worked: list[str] | None = None,
    ) -> None:
        """Mark each record ``change`` = new / known / changed, give known URLs their
        previous slug (new URLs one no previous URL holds), and spool this run's entries.

        ``unique``: the caller promises no URL comes twice in the run (the dedup stage's
        batches), so a first run keeps no set of its own. ``worked``: the records' entries
        as the sitemap worker wrote them for a first run (``feed_lines.worked_entries``)."""
        changes = self.changes
        run = changes.run
        table = self.table
        lines = []
        if table is None:  # first run: the slug stage's slugs stand
            if unique:
                need = records
            else:
                fresh = self.new_seen.add_many(twin_keys([rec["url"] for rec in records]))
                need = [rec for rec, is_new in zip(records, fresh, strict=True) if is_new]
            slugs = list(map(dict.get, need, repeat("slug")))
            missing = [rec for rec, slug in zip(need, slugs, strict=True) if not slug]
            if missing:
                urls = [rec["url"] for rec in missing]
                for rec, slug in zip(
                    missing, self.slugs.slugs_many(urls, normalized_paths(urls)), strict=True
                ):
                    rec["slug"] = slug
                slugs = list(map(_SLUG, need))
            # every record "new", the per-record step in C (``map``), not a Python loop
            deque(map(dict.__setitem__, records, repeat("change"), repeat("new")), maxlen=0)
            urls = list(map(_URL, need))
            changes.new.extend(urls)
            if worked is not None and need is records and not missing:
                self.spooled_counts["new"] += len(worked)
                self._spool_lines(worked)
                return
            if _has_worker_entry(need):
                # The sitemap worker's entry stands where its base slug did; render the others.
                lines = [
                    f.state if f is not None and rec["slug"] is f.base_slug else ""
                    for rec, f in zip(need, holding(need, FROM_ENTRY), strict=True)
                ]
                todo = [i for i, line in enumerate(lines) if not line]
                rendered = entry_lines(
                    [urls[i] for i in todo],
                    [need[i]["slug"] for i in todo],
                    run,
                    run,
                    [need[i]["lastmod"] for i in todo],
                    "new",
                )
                for i, line in zip(todo, rendered, strict=True):
                    lines[i] = line
            else:  # it wrote none (SITEMAP_WORKER_LINES off): all at once, no look per record
                lastmods = list(map(_LASTMOD, need))
                lines = entry_lines(urls, slugs, run, run, lastmods, "new")
            self.spooled_counts["new"] += len(lines)
            self._spool_lines(lines)
            return
        spooled_counts = self.spooled_counts
        fresh_recs, known_recs = table.sight(records)
        if known_recs:
            lines = self._known_lines(known_recs, run)
        if fresh_recs and not unique:
            fresh = self.new_seen.add_many(twin_keys([rec["url"] for rec in fresh_recs]))
            fresh_recs = [rec for rec, is_new in zip(fresh_recs, fresh, strict=True) if is_new]
        if fresh_recs:
            urls = [rec["url"] for rec in fresh_recs]
            for rec, slug in zip(
                fresh_recs, self.slugs.slugs_many(urls, normalized_paths(urls)), strict=True
            ):
                rec["slug"] = slug
                rec["change"] = "new"
                changes.new.append(rec["url"])
                spooled_counts["new"] += 1
                lines.append(entry_line(rec["url"], slug, run, run, rec.get("lastmod"), "new"))
        if self.refresh_all:
            changes.refreshed += sum(1 for known in known_recs if not known[2] & SEEN)
        self._spool_lines(lines)

    def _known_lines(
        self, known_recs: list[tuple[dict[str, Any], int, int]], run: int
    ) -> list[str]:
        """The records the previous run listed: their slug again, their status (new after
        a removal, changed, known), their entries. The hot path of a re-run (every URL of
        an unchanged site comes here), so one plain loop gathers the columns and the
        entries are rendered by ``entry_lines`` (in C where built) per (first run, status)."""
        changes = self.changes
        table = self.table
        assert table is not None
        urls = [rec["url"] for rec, _, _ in known_recs]
        bases = bases_many(normalized_paths(urls))
        sfx = table.sfx
        slug_of = table.slug
        e_urls: list[str] = []
        e_slugs: list[str] = []
        e_firsts: list[int] = []
        e_lastmods: list[Any] = []
        e_statuses: list[str] = []
        new_urls = changes.new
        changed = changes.changed
        known = refreshed = 0
        for (rec, slot, val), base, url in zip(known_recs, bases, urls, strict=True):
            slug = slug_of(slot, base) if sfx[slot] else base
            rec["slug"] = slug
            if val & SEEN:  # listed twice in this run: one entry
                rec["change"] = "known"
                continue
            lastmod = rec.get("lastmod")
            if val & REFRESH:
                refreshed += 1
            if val & REMOVED:  # listed again after a removal: new to this run
                status = "new"
                new_urls.append(url)
            elif lastmod is not None and ((hash(lastmod) & 0xFFFFFFFF) or 1) != val >> 32:
                status = "changed"  # (lastmod_hash, inlined: once per URL of a re-run)
                changed.append({"url": url, "lastmod": lastmod})
            else:
                status = "known"
                known += 1
            rec["change"] = status
            e_urls.append(url)
            e_slugs.append(slug)
            e_firsts.append((val >> FLAGS) & FIRST_MASK)
            e_lastmods.append(lastmod)
            e_statuses.append(status)
        changes.known += known
        changes.refreshed += refreshed
        self.seen_known += known + sum(1 for status in e_statuses if status == "changed")
        self.spooled_counts.update(e_statuses)
        groups: dict[tuple[int, str], list[int]] = {}
        for i, key in enumerate(zip(e_firsts, e_statuses, strict=True)):
            group = groups.get(key)
            if group is None:
                groups[key] = [i]
            else:
                group.append(i)
        if len(groups) == 1:  # the usual batch: one first run, one status
            [(first, status)] = groups
            return entry_lines(e_urls, e_slugs, first, run, e_lastmods, status)
        lines: list[str] = [""] * len(e_urls)
        for (first, status), where in groups.items():
            rendered = entry_lines(
                [e_urls[i] for i in where],
                [e_slugs[i] for i in where],
                first,
                run,
                [e_lastmods[i] for i in where],
                status,
            )
            for i, line in zip(where, rendered, strict=True):
                lines[i] = line
        return lines

    # -- resuming -------------------------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        """Plain data, for a resumable crawl: the spool is flushed and kept by its path."""
        state = self.__dict__.copy()
        if self._spool is not None:
            self._spool.flush()
        state["_spool"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self._spool_path is not None and not self.closed:
            self._spool = open(self._spool_path, "ab")  # noqa: SIM115
            hold(self._spool.fileno())

    def _sweep(self, min_age: float | None = None) -> None:
        ages = () if min_age is None else (min_age,)
        for path in sweep_orphans(self.out_dir, *ages):
            logger.info("removed %s, left by a run that was killed", path)

    def _spool_lines(self, lines: list[str]) -> None:
        if not lines:
            return
        if self._spool is None:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            self._sweep()
            fd, name = tempfile.mkstemp(prefix=f".{STATE_NAME}.", suffix=".spool", dir=self.out_dir)
            hold(fd)
            self._spool = os.fdopen(fd, "wb")
            self._spool_path = Path(name)
        # Written as the entries of state.json are, so the spool is copied there whole.
        if self.spooled:
            self._spool.write(_SEPARATOR)
        self._spool.write(ENTRY_SEPARATOR.join(lines).encode("utf-8"))
        self.spooled += len(lines)

    # -- the end --------------------------------------------------------------------------
    def close(
        self,
        origin: str | None,
        started_at: str,
        finished_at: str,
        not_judged_because: str | None = None,
        upgrades: dict[int, dict[str, Any]] | None = None,
        scope: RunScope | None = None,
    ) -> Changes:
        """Write the new state (atomically) and return the run's changes.

        ``not_judged_because``: the run may not have seen every URL (it failed, ended
        early, a limit bound, a sitemap failed): URLs it did not see keep their previous
        status instead of becoming ``removed``. ``upgrades``: ``SeenSet.upgrades`` of the
        dedup stage (a URL listed after its record passed, as its slash twin or after an
        hreflang alternate): the entry takes the listed URL and ``lastmod``, as the feed does.
        ``scope``: what this run looked at (known at its end: ``auto`` may fall back to the
        link crawl); recorded, and compared with the previous run's (``state_scope.py``).
        """
        if scope is not None:
            self.scope = scope
        changes = self.changes
        if self.closed:
            return changes
        self.closed = True
        if not_judged_because:
            changes.removals_judged = False
            changes.not_judged_because = not_judged_because
        try:
            if origin is None:
                origin = self.origin
            if origin is None:  # nothing was discovered and there is no previous state
                changes.urls = 0
                return changes
            # again at the end, whatever their age: this run holds the out folder's lock
            # and its own work files (a run that began within a second of a kill left
            # that kill's files at its first sweep)
            self._sweep(min_age=0)
            judgements = self._judgements(origin)
            self._write(origin, started_at, finished_at, upgrades or {}, judgements)
        finally:
            self._drop_spool()
            self.sections_out.drop()
        return changes

    def _drop_spool(self) -> None:
        if self._spool is not None:
            spool, self._spool = self._spool, None
            # Closing flushes what is buffered: on a full disk that fails, and the spool
            # is dropped all the same (a write error was said where it happened).
            with contextlib.suppress(OSError):
                spool.close()
        if self._spool_path is not None:
            self._spool_path.unlink(missing_ok=True)
            self._spool_path = None

    def _judgements(self, origin: str) -> tuple[Judgement, Judgement]:
        """How far this run may judge the previous run's URLs, and the URLs an earlier run
        left unconfirmed (``state_scope.judge``); said in ``changes``."""
        header = self.header or {}
        everything = Judgement(ALL)
        if self.scope is None or self.table is None:
            return everything, everything
        live = judge(RunScope.from_dict(header.get("scope")), self.scope, origin)
        carried = judge(RunScope.from_dict(header.get("unconfirmed_scope")), self.scope, origin)
        changes = self.changes
        reasons = list(live.reasons)
        level = live.level
        counts = header.get("counts")
        if isinstance(counts, dict) and counts.get("unconfirmed"):
            reasons += [r for r in carried.reasons if r not in reasons]
            if carried.level != ALL and level == ALL:
                level = IN_SCOPE  # the previous run's URLs judged, not all those left before
        if level == IN_SCOPE and not reasons:
            level = ALL  # the same paths as before: every URL the run could see it looked for
        changes.removals_scope = level
        changes.scope_reasons = reasons
        return live, carried

    def _write(
        self,
        origin: str,
        started_at: str,
        finished_at: str,
        upgrades: dict[int, Any],
        judgements: tuple[Judgement, Judgement],
    ) -> None:
        """One pass: header, this run's entries (spool), the previous entries not seen
        this run, the closing line; to a temporary file.

        Then, in this order, so that a kill at any moment loses no report: ``changes.json``
        (killed before the rename, the next run judges against the old state again), the
        old state hard-linked aside for a resumable job (killed after the rename, its
        resume judges against that), the rename; the job is marked finished after."""
        changes = self.changes
        previous = self.header or {}
        input_origins = [*previous.get("input_origins", []), self.input_origin]
        input_origins = [o for o in dict.fromkeys(input_origins) if o][-20:]
        head = {
            "format": FORMAT,
            "origin": origin,
            "input_origins": input_origins,
            "run": changes.run,
            "updated_at": finished_at,
            "fields": list(FIELDS),
        }
        # The sections file is in place before state.json names it (state_sitemaps.py).
        sections = self.sections_out.finish(changes.run)
        if sections is not None:
            head["sitemaps"] = sections
        if self.scope is not None:
            head["scope"] = self.scope.as_dict()
        if self.job_id:
            head["job"] = self.job_id
        counts: Counter[str] = Counter(dict.fromkeys(STATUSES, 0))
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self._sweep()  # once more: a run killed a moment before this one began is old now
        fd, tmp_name = tempfile.mkstemp(prefix=f".{STATE_NAME}.", suffix=".tmp", dir=self.out_dir)
        give_usual_mode(fd)
        hold(fd)
        tmp = Path(tmp_name)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(header_line(head))
                pending = self._copy_spool(out, counts, upgrades)
                pending, unconfirmed_scope = self._copy_unseen(out, counts, pending, judgements)
                if pending is not None:
                    out.write(pending + "\n")
                total = sum(counts.values())
                run_entry = {
                    "run": changes.run,
                    "started_at": started_at,
                    "finished_at": finished_at,
                    "removals_judged": changes.fully_judged,
                    "new": changes.new.count,
                    "removed": changes.removed.count,
                    "changed": changes.changed.count,
                    "unconfirmed": changes.unconfirmed.count,
                    "urls": total,
                }
                footer = {
                    "count": total,
                    "counts": dict(counts),
                    "runs": [*previous.get("runs", []), run_entry][-HISTORY_CAP:],
                }
                if unconfirmed_scope is not None:  # the scope the unconfirmed were found in
                    footer["unconfirmed_scope"] = unconfirmed_scope.as_dict()
                out.write(footer_line(footer))
                out.flush()
                os.fsync(out.fileno())
            changes.urls = total
            changes.written = str(self.path)
            if not changes.first_run:
                write_changes(self.out_dir, changes)
                kill_point("changes_write")
            self._keep_replaced()
            os.replace(tmp, self.path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        kill_point("state_rename")
        self._remove_old_sections(sections)

    def _remove_old_sections(self, sections: str | None) -> None:
        """Sections files no state names any more: all but this run's, and the replaced
        state's while it is kept aside (a killed job's resume asks with those)."""
        keep = {sections}
        if (self.out_dir / PREVIOUS_NAME).exists() and self.header:
            keep.add(self.header.get("sitemaps"))
        remove_other_sections(self.out_dir, keep)

    def _keep_replaced(self) -> None:
        """A resumable job's run keeps the state it replaces (a hard link, no copy) until
        the job is marked finished: killed in between, its resume judges against it."""
        if not self.job_id or self.previous_path != self.path or not self.path.exists():
            return
        link = self.out_dir / PREVIOUS_NAME
        link.unlink(missing_ok=True)
        try:
            os.link(self.path, link)
        except OSError as exc:  # no hard links here: a kill in the window re-judges
            logger.debug("could not keep %s aside (%s)", self.path.name, exc)

    def _copy_spool(
        self, body: IO[str], counts: Counter[str], upgrades: dict[int, Any]
    ) -> str | None:
        pending: str | None = None
        if self._spool is None or self._spool_path is None:
            return None
        self._spool.close()
        self._spool = None
        if not upgrades:
            counts.update(self.spooled_counts)
            return copy_entries(self._spool_path, body)
        statuses = STATUSES
        with open(self._spool_path, encoding="utf-8") as spool:
            for line in spool:
                line = line.rstrip("\n").removesuffix(",")  # an entry ends with "]"
                if upgrades:
                    entry = json.loads(line)
                    upgrade = upgrades.get(hash(twin_key(entry[0])) or 1)
                    if upgrade is not None:
                        # a RecordPatch (trailing-slash twin) keeps the lastmod
                        entry[0], entry[4] = upgrade["url"], upgrade.get("lastmod", entry[4])
                        line = entry_line(*entry)
                if pending is not None:
                    body.write(pending + ",\n")
                pending = line
                # the status is the last field: '..., "known"]'
                status = line[line.rfind('"', 0, -2) + 1 : -2]
                if status in statuses:
                    counts[status] += 1
        return pending

    def _copy_unseen(
        self,
        body: IO[str],
        counts: Counter[str],
        pending: str | None,
        judgements: tuple[Judgement, Judgement],
    ) -> tuple[str | None, RunScope | None]:
        """Previous entries not seen this run: ``removed`` where removals are judged for
        them, else kept as they were with status ``unconfirmed``. Returns the last line
        held back and the scope the entries left unconfirmed were found under."""
        table = self.table
        if table is None or self.previous_path is None:
            return pending, None
        changes = self.changes
        judged = changes.removals_judged
        removed, unconfirmed = changes.removed, changes.unconfirmed
        live, carried = judgements
        left_live = left_carried = False
        for url, slug, first, last, lastmod, status in table.unseen(self.previous_path):
            if status != "removed":
                was_unconfirmed = status == "unconfirmed"
                judgement = carried if was_unconfirmed else live
                if judged and judgement.judges(url):
                    removed.append(url)
                    status = "removed"
                else:
                    unconfirmed.append(url)
                    status = "unconfirmed"
                    if was_unconfirmed:
                        left_carried = True
                    else:
                        left_live = True
            line = entry_line(url, slug, first, last, lastmod, status)
            if pending is not None:
                body.write(pending + ",\n")
            pending = line
            counts[status] += 1
        header = self.header or {}
        scopes = [
            RunScope.from_dict(header.get(key))
            for key, left in (("scope", left_live), ("unconfirmed_scope", left_carried))
            if left
        ]
        if not scopes or None in scopes:
            return pending, None  # none left, or found under a scope not recorded
        merged = scopes[0]
        for other in scopes[1:]:
            merged = merged.merge(other)  # type: ignore[arg-type]
        return pending, merged

    def abandon(self) -> None:
        """Drop this run's spool without writing (the previous state stays as it was)."""
        self.closed = True
        self._drop_spool()
        self.sections_out.drop()
