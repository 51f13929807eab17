"""Progress while running and a short summary at the end, as a Scrapy extension
(modelled on ``scrapy.extensions.logstats``).

Every ``PROGRESS_INTERVAL`` seconds, the progress line (``progress_line.py``: the walk's
URLs against their estimated total, the crawl's pages against its budget or frontier, ETAs;
rewritten in place on a terminal)::

    Progress: sitemaps 12 done / 8 pending · 61,200 of ~102,000 URLs (60%) · 980 URLs/s · ETA ~42 s

At the end: sources tried, URLs found, limits that bound, where the files are.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy import signals

from discovery_crawler.extensions.progress_line import ProgressLine, kinds_line
from discovery_crawler.extensions.run import run_of
from discovery_crawler.outcomes import (
    BOUNDED,
    COMPLETED,
    FAILED,
    INTERRUPTED,
    MORE_TO_DO,
    OUTPUT_FAILED,
    STOPPING_LIMITS,
    limit_name,
    limit_words,
)
from discovery_crawler.selection.groups import groups_lines
from discovery_crawler.selection.summary import selection_lines

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

    from discovery_crawler.run_record import RunRecord

logger = logging.getLogger(__name__)


def robots_policy_lines(record: RunRecord) -> list[str]:
    """The robots policy of each origin that was not plain "parsed", and what it refused."""
    summary = record.robots_summary
    if summary is None:
        return []
    lines = []
    for policy in summary.policies.values():
        if policy.outcome == "fail_closed":
            lines.append(
                f"robots policy {policy.origin}: FAIL CLOSED, nothing fetched ({policy.reason})"
            )
        elif policy.outcome == "allow_all":
            lines.append(f"robots policy {policy.origin}: allow all ({policy.reason})")
        elif policy.crawl_delay:
            lines.append(f"robots policy {policy.origin}: Crawl-delay {policy.crawl_delay:g}s")
    disallowed = summary.disallowed
    if disallowed.count:
        examples = ", ".join(f"{d['url']} ({d['rule']})" for d in disallowed.items[:3])
        lines.append(f"Disallowed by robots.txt, not fetched ({disallowed.count:,}): {examples}")
    return lines


def outcome_lines(record: RunRecord) -> list[str]:
    """The summary's first line when the run did not complete: what stopped it and what
    that means for the files (none when it completed)."""
    outcome = record.outcome
    if outcome == OUTPUT_FAILED:
        return [f"OUTPUT FAILED: {record.write_error}; the files of this run are partial"]
    if outcome == FAILED:
        return [f"FAILED: {record.failure}"]
    if outcome == INTERRUPTED:
        job = record.job
        how = (
            "run it again with the same arguments and JOBDIR to resume"
            if job is not None
            else "set JOBDIR (-s JOBDIR=folder) to make a run resumable"
        )
        return [f"INTERRUPTED ({record.finish_reason}): the inventory is partial; {how}"]
    if outcome == MORE_TO_DO:
        chunk = record.chunk or {}
        return [
            f"MORE TO DO: this chunk fetched {chunk.get('fetched', 0):,} of "
            f"MAX_CHUNK_PAGES={chunk.get('max_pages', 0):,}; run the same command again "
            "(same job folder) to continue"
        ]
    if outcome == BOUNDED:
        stopped = [limit_words(d) for name, d in record.limits.items() if name in STOPPING_LIMITS]
        why = ", ".join(stopped) or record.finish_reason or "a limit"
        return [f"STOPPED AT A LIMIT ({why}): the inventory is complete up to the limit only"]
    return []


FAILED_SITEMAPS_LISTED = 20  # lines; the crawl log's sitemap_attempts has every one
# What makes a conventional address's failure news: it answered, and a cap or a timeout
# stopped it. Its 404, or a page served there instead, says only that the guess missed.
_CONVENTIONAL_NEWS = ("refused", "capped", "larger than", "timeout")


def failed_sitemap_lines(record: RunRecord) -> list[str]:
    """One line for each sitemap named (by robots.txt, an index, the input) that was
    refused or failed while others were read: a bomb, a cap, a timeout, a 404."""
    failed = [
        a
        for a in record.attempts.values()
        if a.error and (a.source != "conventional" or a.error.startswith(_CONVENTIONAL_NEWS))
    ]
    lines = [f"  {a.url}: {a.error}" for a in failed[:FAILED_SITEMAPS_LISTED]]
    if len(failed) > FAILED_SITEMAPS_LISTED:
        more = len(failed) - FAILED_SITEMAPS_LISTED
        lines.append(f"  … and {more:,} more sitemap(s) refused or failed (crawl log)")
    return lines


def summary_lines(record: RunRecord, crawl_log: object, feeds: list[str]) -> list[str]:
    """The end-of-run summary, one line each."""
    site = record.site_origin or record.options.url
    ok = record.attempts_ok()
    tried = len(record.attempts)
    lines = outcome_lines(record)
    robots = record.robots
    if robots is not None:
        status = robots.get("status")
        state = f"HTTP {status}" if status is not None else robots.get("error", "no response")
        lines.append(
            f"robots.txt: {state}; {len(robots.get('sitemaps') or [])} sitemap(s) advertised"
        )
    lines.extend(robots_policy_lines(record))
    ssrf = getattr(record, "ssrf", None)
    if ssrf is not None:  # the SSRF guard: one line per refusal (the first few)
        lines.extend(ssrf.lines())
    skipped = [s for s in record.skipped_sitemaps.items if s.get("reason") == "other_origin"]
    if skipped:
        urls = ", ".join(s["url"] for s in skipped[:3])
        lines.append(f"sitemaps on another origin, not fetched (same origin only): {urls}")
    refusals = record.refusals.line() if record.refusals is not None else ""
    if refusals:
        lines.append(refusals)
    retries = getattr(record, "retries", None)
    if retries is not None and (retried := retries.line()):
        lines.append(retried)
    verify = getattr(record, "verify", None)
    if verify is not None:  # -a verify=1: advertised against what answered
        lines.append(verify.line())
        lines.extend(verify.detail_lines())
    by_source: dict[str, int] = {}
    for attempt in record.attempts.values():
        by_source[attempt.source] = by_source.get(attempt.source, 0) + 1
    sources = ", ".join(f"{n} {s}" for s, n in by_source.items()) or "none"
    lines.append(f"Sitemaps tried: {tried} ({sources}); {len(ok)} ok")
    if tried and not ok:
        for attempt in list(record.attempts.values())[:5]:
            lines.append(f"  {attempt.url}: {attempt.error or 'no URLs'}")
    else:
        lines.extend(failed_sitemap_lines(record))
    for attempt in record.attempts.values():
        if attempt.ok and getattr(attempt, "note", None) and attempt.index:
            lines.append(f"  {attempt.url}: {attempt.note}")
    filtered_total = sum(n for r, n in record.filtered.items() if r != "other_host")
    lines.append(
        f"Discovered {record.discovered:,} URLs on {site} in {record.elapsed():.1f}s"
        f" ({record.counts['unique']:,} found, {filtered_total:,} filtered,"
        f" {record.counts['duplicates']:,} duplicates merged,"
        f" {record.counts['malformed']:,} malformed)"
    )
    crawl = getattr(record, "crawl", None)
    if crawl is not None:  # the link crawl ran (links, union, or the auto fallback)
        statuses = ", ".join(f"{n:,} × {s}" for s, n in sorted(crawl.status.items()))
        budgets = f"max_pages {crawl.max_pages or '-'}, max_depth {crawl.max_depth or '-'}"
        lines.append(
            f"Crawled {crawl.fetched:,} pages ({statuses or 'none'}); {budgets}; "
            f"not fetched: {sum(crawl.not_fetched.values()):,}"
        )
        capped = crawl.links_capped
        if capped.count:
            pages = ", ".join(i["url"] for i in capped.items[:3])
            more = f" and {capped.count - 3:,} more" if capped.count > 3 else ""
            lines.append(
                f"Links not read (LINKS_PER_PAGE_MAX): {crawl.links_dropped:,} on "
                f"{capped.count:,} page(s) flagged links_capped: {pages}{more}"
            )
        rewrites = crawl.rewrites_line(record.counts)
        if rewrites:
            lines.append(rewrites)
    elif record.counts["slash_twins"] or record.counts["twin_aliases"]:
        lines.append(
            f"Trailing-slash twins: {record.counts['slash_twins']:,} collapsed to the slash "
            f"form, {record.counts['twin_aliases']:,} noted in aliases"
        )
    for origin, count in record.other_hosts.most_common(3):
        lines.append(f"  {count:,} URLs on {origin}, not this site (not in the inventory)")
    lines.extend(reason_lines(record))
    if any(record.kinds.values()):  # the URL stages ran
        lines.append(f"Kinds: {kinds_line(record)}")
    filtered = {r: n for r, n in record.filtered.items() if n and r != "junk"}
    if filtered:
        lines.append(
            "Filtered: " + ", ".join(f"{reason} {n:,}" for reason, n in sorted(filtered.items()))
        )
    if record.junk.count:
        lines.append(junk_line(record))
    lines.extend(groups_lines(record))
    if record.requires_auth.count:
        lines.append(
            f"Kept but flagged requires_auth (not crawled): {record.requires_auth.count:,}"
        )
    lines.extend(selection_lines(record))
    lines.extend(record.changes.lines() if getattr(record, "changes", None) else [])
    for limit in record.limits.values():
        details = ", ".join(f"{k}={v}" for k, v in limit.items() if k not in ("limit", "given"))
        lines.append(f"Limit bound: {limit_name(limit)} ({details})")
    for warning in record.warnings:
        lines.append(f"Warning: {warning}")
    for note in record.notes:
        lines.append(f"Note: {note}")
    for feed in feeds:
        lines.append(f"Feed: {feed}")
    lines.append(f"Crawl log: {crawl_log}")
    if getattr(record, "report_path", None) is not None:
        lines.append(f"Report: {record.report_path}")
    return lines


def reason_lines(record: RunRecord, shown: int = 3) -> list[str]:
    """The biggest reasons entries were dropped as malformed or read other than as written
    (both counted in full, by reason, in the crawl log)."""
    lines = []
    for title, found in (
        ("Malformed", getattr(record, "malformed", None)),
        ("Repaired", getattr(record, "repaired", None)),
    ):
        reasons = getattr(found, "reasons", None)
        if not reasons:
            continue
        top = ", ".join(f"{reason} ({n:,})" for reason, n in reasons.most_common(shown))
        more = len(reasons) - shown
        tail = f"; {more} more reason(s) in the crawl log" if more > 0 else ""
        lines.append(f"{title} ({sum(reasons.values()):,}): {top}{tail}")
    return lines


def junk_line(record: RunRecord, shown: int = 4) -> str:
    """``Flagged as likely junk (16): /test/, /test1/, … (12 more)`` (SPEC §7): in the
    inventory, never selected; the line says so when JUNK_IN_FEED leaves them out."""
    paths = [entry["path"] for entry in record.junk.items[:shown]]
    more = record.junk.count - len(paths)
    tail = f" … ({more:,} more)" if more > 0 else ""
    where = "" if getattr(record, "junk_in_feed", True) else "; left out of the feed (JUNK_IN_FEED)"
    return f"Flagged as likely junk ({record.junk.count:,}): {', '.join(paths)}{tail}{where}"


class ProgressReport:
    """Runs the progress line while the spider runs and logs a summary at the end."""

    def __init__(self, crawler: Crawler, line: ProgressLine):
        self.crawler = crawler
        self.line = line

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        o = cls(crawler, ProgressLine.from_crawler(crawler))
        crawler.signals.connect(o.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(o._spider_closed, signal=signals.spider_closed)
        return o

    async def _spider_closed(self, reason: str) -> None:
        run = run_of(self.crawler)
        if run is not None:
            await run.feeds_stored()  # the summary tells the feed's fate
        self.spider_closed(reason)

    def spider_opened(self) -> None:
        self.line.start()

    def spider_closed(self, reason: str) -> None:
        self.line.finish()  # its last line, then the summary
        run = run_of(self.crawler)
        if run is None:
            return
        record = run.record
        run.finish(reason)
        feeds = list(self.crawler.settings.getdict("FEEDS"))
        lines = summary_lines(record, run.crawl_log_path, feeds)
        outcome = record.outcome
        log = logger.info if outcome == COMPLETED else logger.warning
        if outcome in (FAILED, OUTPUT_FAILED):
            log = logger.error
        self.crawler.stats.set_value("discovery/outcome", outcome)
        log("Summary\n  %s", "\n  ".join(lines))
