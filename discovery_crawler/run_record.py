"""What a run found and did, shared by the spider, pipelines and extensions.

Holds counts, not URLs: the only per-URL structure is the fingerprint seen-set. Lists
(malformed entries, skipped sitemaps) are capped at ``CRAWL_LOG_LIST_CAP`` entries with
their full counts kept beside them.
"""

from __future__ import annotations

import time
from collections import Counter
from datetime import UTC, datetime
from itertools import repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from discovery_crawler import __version__
from discovery_crawler.outcomes import outcome_of
from discovery_crawler.selection.parents import count_path_depths
from discovery_crawler.urls.kinds import empty_tally
from discovery_crawler.urls.seen import SeenSet

if TYPE_CHECKING:
    from collections.abc import Mapping

    from discovery_crawler.arguments import RunOptions
    from discovery_crawler.sitemaps.attempts import SitemapAttempt


COUNT_KEYS = (
    "discovered",  # URLs in the inventory (after filters): one feed line each
    "unique",  # distinct URLs of the site found (before filters; SITEMAP_MAX_URLS counts these)
    "duplicates",  # sightings of a URL already in it (sources merged)
    "malformed",  # entries whose location could not be resolved or normalized
    "over_limit",  # unique URLs past SITEMAP_MAX_URLS or LINKS_MAX_URLS
    "alternate_only",  # URLs in the inventory only as same-site hreflang alternates
    "sitemaps_repeated",  # index children already tried (cycles, repeats)
    "slash_twins",  # /foo then /foo/: collapsed to the slash form (SPEC §5 rule 7)
    "twin_aliases",  # the other form seen after the record's: noted in its aliases
    "canonical_twins",  # a fetched page's canonical is its twin: recorded under the canonical
    "canonical_elsewhere",  # a fetched page names another page canonical: both recorded
    "slash_redirects",  # a redirect that only adds or drops the slash: one record, followed
    "robots_disallowed",  # URLs of the inventory robots.txt disallows (flagged, not fetched)
)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class CappedList:
    """A list that keeps its first ``cap`` entries and counts all of them."""

    def __init__(self, cap: int):
        self.cap = cap
        self.items: list[Any] = []
        self.count = 0

    def append(self, item: Any) -> None:
        self.count += 1
        if len(self.items) < self.cap:
            self.items.append(item)

    def extend(self, items: list[Any]) -> None:
        self.count += len(items)
        room = self.cap - len(self.items)
        if room > 0:
            self.items.extend(items[:room])

    def as_dict(self) -> dict[str, Any]:
        return {"count": self.count, "listed": len(self.items), "items": self.items}


class ReasonedList(CappedList):
    """A ``CappedList`` of ``{"raw", "reason", …}`` items that also counts them by reason
    (all of them, not only those listed): the crawl log's ``malformed`` and ``repaired``."""

    def __init__(self, cap: int):
        super().__init__(cap)
        self.reasons: Counter[str] = Counter()

    def append(self, item: Any) -> None:
        super().append(item)
        self.reasons[item.get("reason") or "unknown"] += 1

    def extend(self, items: list[Any]) -> None:
        super().extend(items)
        self.reasons.update(item.get("reason") or "unknown" for item in items)

    def add_counted(self, counts: Mapping[str, int], examples: list[Any]) -> None:
        """Entries counted by reason elsewhere (the parser, the sitemap worker, the
        normalizer), of which ``examples`` are listed."""
        for reason, count in counts.items():
            self.count += count
            self.reasons[reason] += count
        room = self.cap - len(self.items)
        if room > 0:
            self.items.extend(examples[:room])

    def as_dict(self) -> dict[str, Any]:
        return {**super().as_dict(), "reasons": dict(self.reasons.most_common())}


_URL = itemgetter("url")


class InventoryDepths:
    """How deep the inventory's URLs are: link hops from the seed (the records' ``depth``;
    a URL without one, as every URL of a sitemap-only run, is counted apart) and path
    segments. Counted a batch at a time where the inventory leaves the pipeline, so both
    tallies add up to ``counts.discovered``; a resumed run replays its batches through the
    same stage and counts them again from nothing."""

    def __init__(self) -> None:
        self.click: Counter[int | None] = Counter()
        self.path: Counter[int] = Counter()

    def add_many(self, records: list[dict[str, Any]]) -> None:
        # dict.get mapped over the records: the per-URL work stays in C. A sitemap batch
        # has no depth at all: its Nones counted at once, not one Counter step each.
        depths = list(map(dict.get, records, repeat("depth")))
        unknown = depths.count(None)
        if unknown and unknown == len(depths):
            self.click[None] += unknown
        else:
            self.click.update(depths)
        self.path.update(count_path_depths(list(map(_URL, records))))

    def as_dict(self) -> dict[str, Any]:
        click = {depth: n for depth, n in self.click.items() if isinstance(depth, int)}
        return {
            "click": {str(depth): click[depth] for depth in sorted(click)},
            "click_none": sum(self.click.values()) - sum(click.values()),
            "path": {str(depth): self.path[depth] for depth in sorted(self.path)},
        }


class RunRecord:
    """The run's own account of itself; becomes one entry of ``_crawl-log.json#runs``."""

    def __init__(self, options: RunOptions, settings: dict[str, Any], list_cap: int = 1000):
        self.options = options
        self.settings = settings
        self.started_at = now_iso()
        self.started = time.monotonic()
        self.finished_at: str | None = None
        self.site_origin: str | None = None  # scheme://host[:port] of the site's pages
        self.robots: dict[str, Any] | None = None
        # The robots middleware's summary (policies by origin, disallowed URLs with rule).
        self.robots_summary: Any = None  # middlewares/robots.RobotsSummary, when it ran
        self.refusals: Any = None  # refusals.RefusalSummary, set by the refusal middleware
        self.ssrf: Any = None  # middlewares/ssrf.SSRFSummary, when the SSRF guard is on
        self.selection: Any = None  # selection.selector.Selection, set by the score stage
        self.groups: Any = None  # selection.groups.Groups, set by pipelines/groups.py
        self.tree: Any = None  # selection.tree.PathTree, set by pipelines/groups.py
        self.attempts: dict[str, SitemapAttempt] = {}
        self.sitemaps_pending = 0
        self.sitemaps_done = 0
        self.seen = SeenSet()
        # Every counter is reported, zeros included.
        self.counts: Counter[str] = Counter(dict.fromkeys(COUNT_KEYS, 0))
        self.other_hosts: Counter[str] = Counter()
        self.other_hosts_by_sitemap: dict[str, Counter[str]] = {}
        # Entries dropped because no URL could be read from them, and entries read other
        # than as written (a split record, a scheme-less host): each with its reason.
        self.malformed = ReasonedList(list_cap)
        self.repaired = ReasonedList(list_cap)
        # Filtering (SPEC §5, §7): the kinds tally (all seven, zeros included), drops per
        # reason with capped lists, auth-walled pages kept and flagged, junk with pattern.
        self.kinds: Counter[str] = Counter(empty_tally())
        self.filtered: Counter[str] = Counter()
        self._filtered_lists: dict[str, CappedList] = {}
        self.requires_auth = CappedList(list_cap)
        self.junk = CappedList(list_cap)  # flagged junk: {url, path, pattern}
        self.depths = InventoryDepths()  # click and path depths of the inventory
        self.junk_in_feed = True  # JUNK_IN_FEED: flagged records stay in the feed
        self.list_cap = list_cap
        self.skipped_sitemaps = CappedList(list_cap)
        self.limits: dict[str, dict[str, Any]] = {}
        self.notes: list[str] = []
        self.warnings: list[str] = []
        self.failure: str | None = None  # set when the run could not do its job
        # unread.NotRead: the sources tried and not read after their retries, judged at
        # the end (extensions/run.py); any makes the run incomplete
        self.not_read: Any = None
        # a distributed job's worker: the job, its workers' accounts (distributed/result.py)
        self.distributed: dict[str, Any] | None = None
        self.write_error: str | None = None  # the first output that could not be written
        self.job: Any = None  # extensions/job.py: the resumable job's account, with JOBDIR
        # middlewares/chunk.py, MAX_CHUNK_PAGES: {"max_pages", "fetched", "more_to_do"}
        self.chunk: dict[str, Any] | None = None
        # What made the input's own fetch fail, said as what it is (a TLS handshake, a
        # sitemap over the download cap): the run's failure when nothing answered, in
        # place of "site unreachable: <the first error>".
        self.input_failure: str | None = None
        self.finish_reason: str | None = None
        self.judged = False  # finalize_record() ran
        self.throttle: Any = None  # the host throttle's summary (as_dict-able), when it runs
        self.crawl: Any = None  # the link crawl's account (crawling.account.CrawlAccount)
        self.changes: Any = None  # output.state.Changes: new/removed/changed since last run
        self.report_path: Any = None  # where report.html goes (pipelines/crawl_log.py), if on
        self.verify: Any = None  # verdicts.VerifyTally, when -a verify=1
        self.indexing: Any = None  # indexing.IndexTally (pipelines/indexability.py)
        self.retries: Any = None  # retries.RetrySummary, set by the retry middleware
        # extensions/timeline_buckets.Timeline: requests, refusals, intervals and holds
        # per host over time, set by the timeline extension when it runs
        self.timeline: Any = None

    def start_judging(self, reason: str | None = None) -> bool:
        """Note the finish reason; True the first time only (the run is judged once)."""
        if reason is not None:
            self.finish_reason = reason
        if self.judged:
            return False
        self.judged = True
        return True

    # -- counters ---------------------------------------------------------------------
    @property
    def discovered(self) -> int:
        return self.counts["discovered"]

    def filtered_list(self, reason: str) -> CappedList:
        """The capped list of URLs dropped for ``reason``."""
        found = self._filtered_lists.get(reason)
        if found is None:
            found = self._filtered_lists[reason] = CappedList(self.list_cap)
        return found

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)

    def limit_bound(self, name: str, **details: Any) -> None:
        """Record that a limit bound (first time) and update its details."""
        self.limits.setdefault(name, {"limit": name}).update(details)

    def add_other_hosts(self, sitemap: str, hosts: Counter[str]) -> None:
        self.other_hosts.update(hosts)
        self.other_hosts_by_sitemap.setdefault(sitemap, Counter()).update(hosts)

    # -- summary ----------------------------------------------------------------------
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def outcome(self) -> str:
        """How the run ended (``outcomes.py``): completed, failed, interrupted, …"""
        return outcome_of(
            self.failure,
            self.finish_reason,
            self.limits,
            self.write_error,
            incomplete=bool(self.not_read),
        )

    def attempts_ok(self) -> list[SitemapAttempt]:
        return [a for a in self.attempts.values() if a.ok]

    def as_dict(self) -> dict[str, Any]:
        opts = self.options
        return {
            "provenance": {
                "written_by": "discovery_crawler discover",
                "version": __version__,
                "started_at": self.started_at,
                "finished_at": self.finished_at,
                "elapsed_seconds": round(self.elapsed(), 3),
            },
            "input": {
                "url": opts.url,
                "kind": opts.input_kind,
                "mode": opts.mode,
                "profile": opts.profile,
            },
            "settings": self.settings,
            "status": self.outcome,
            "failure": self.failure,
            # what was tried and not read after its retries (unread.py), when anything
            "not_read": self.not_read.as_dict() if self.not_read else None,
            "write_error": self.write_error,
            "finish_reason": self.finish_reason,
            "discovery": {
                "site": self.site_origin,
                "robots": self.robots,
                "robots_policy": self.robots_summary.as_dict() if self.robots_summary else None,
                "sitemap_attempts": [a.as_dict() for a in self.attempts.values()],
                "sitemaps_skipped": self.skipped_sitemaps.as_dict(),
                "counts": dict(sorted(self.counts.items())),
                "other_hosts": dict(self.other_hosts.most_common()),
                "other_hosts_by_sitemap": {
                    sitemap: dict(hosts.most_common())
                    for sitemap, hosts in self.other_hosts_by_sitemap.items()
                },
                "malformed": self.malformed.as_dict(),
                "repaired": self.repaired.as_dict(),
                "kinds": dict(self.kinds),
                "filtered": {
                    reason: {"count": count, **self.filtered_list(reason).as_dict()}
                    for reason, count in sorted(self.filtered.items())
                    if reason != "junk"  # listed with their patterns in flagged_as_junk
                }
                | (
                    {"junk": {"count": self.filtered["junk"], "listed_in": "flagged_as_junk"}}
                    if self.filtered["junk"]
                    else {}
                ),
                # Flagged, not dropped (SPEC §7): in the feed unless JUNK_IN_FEED is off,
                # then also counted in filtered.junk.
                "flagged_as_junk": {**self.junk.as_dict(), "in_feed": self.junk_in_feed},
                "requires_auth": self.requires_auth.as_dict(),
                "limits": list(self.limits.values()),
                "depths": self.depths.as_dict(),
                "notes": self.notes,
                **({"crawl": self.crawl.as_dict()} if self.crawl is not None else {}),
            },
            "refusals": self.refusals.as_dict() if self.refusals is not None else None,
            **({"ssrf": self.ssrf.as_dict()} if self.ssrf is not None else {}),
            "verify": self.verify.as_dict() if self.verify is not None else None,
            "indexability": self.indexing.as_dict() if self.indexing is not None else None,
            "throttle": self.throttle.as_dict() if self.throttle is not None else None,
            "retries": self.retries.as_dict() if self.retries is not None else None,
            "timeline": self.timeline.as_dict() if self.timeline is not None else None,
            "selection": self.selection.as_dict() if self.selection is not None else None,
            "groups": self.groups.as_dict(self.list_cap) if self.groups is not None else None,
            "tree": self.tree.as_dict() if self.tree is not None else None,
            "changes": self.changes.as_dict() if self.changes is not None else None,
            **({"job": self.job.as_dict()} if self.job is not None else {}),
            **({"chunk": dict(self.chunk)} if self.chunk is not None else {}),
            **({"distributed": self.distributed} if self.distributed is not None else {}),
            "warnings": self.warnings,
        }
