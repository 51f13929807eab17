"""What a run did not read: the sources in its scope that failed after their retries.

A sitemap, robots.txt or page fetch that ended — its retries spent — in a 5xx answer, a
timeout or a connection failure (refusal classes ``server_error``, ``timeout``,
``network``) was not read: the inventory is short of the site by what it would have said,
and the run is ``incomplete`` (exit 7, ``outcomes.py``), never ``completed``. What the site
answered for itself is not "not read": a listed child sitemap answering 404 is the site's
own broken reference (a warning, ``broken_references``), a 403 or a 429 is a wall, a page
refused by robots.txt or the SSRF guard was not asked on purpose.

The end-of-run summary says it in one line (``NotRead.line``), the crawl log's run entry
in ``not_read`` (``NotRead.as_dict``).

No Scrapy imports: the sitemap walk and the link crawl classify what failed
(``SitemapAttempt.failure_class``, the crawl's refusal classes); this module adds it up.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

# The refusal classes of a fetch that failed for the server's or the network's reasons.
NOT_READ_CLASSES = ("server_error", "timeout", "network")
_NOT_READ = frozenset(NOT_READ_CLASSES)
# The statuses of a listed child sitemap the site itself says it does not serve.
BROKEN_REFERENCE_STATUSES = frozenset({404, 410})
SITEMAPS_NAMED = 3  # sitemaps the summary's line names; the crawl log lists them all
_LISTED = 100  # sitemaps the crawl log's not_read lists (their count is exact)


def is_not_read(refusal_class: str | None) -> bool:
    """A fetch that failed with this refusal class was not read (after its retries)."""
    return refusal_class in _NOT_READ


@dataclass
class NotRead:
    """The sources a run tried and could not read, after their retries."""

    sitemaps: list[dict[str, Any]] = field(default_factory=list)  # url, source, class, reason
    sitemaps_count: int = 0
    robots: dict[str, Any] | None = None  # url, class, reason
    pages: Counter[str] = field(default_factory=Counter)  # page fetches by refusal class
    retries: int | None = None  # RETRY_TIMES, when the retry middleware ran

    def __bool__(self) -> bool:
        return bool(self.sitemaps_count or self.robots or self.page_count)

    @property
    def page_count(self) -> int:
        return sum(self.pages.values())

    def line(self) -> str:
        """``1 sitemap not read after 3 retries (https://…/sitemap-2.xml: HTTP 500), 158
        pages failed after retries (timeout 120, network 38)`` — or an empty string."""
        retries = self.retries
        after = (
            f"after {retries} {'retry' if retries == 1 else 'retries'}"
            if retries
            else "after its retries"
        )
        parts = []
        if self.robots is not None:
            robots = self.robots
            parts.append(f"robots.txt not read {after} ({robots['url']}: {_short(robots)})")
        if self.sitemaps_count:
            n = self.sitemaps_count
            named = ", ".join(f"{s['url']}: {_short(s)}" for s in self.sitemaps[:SITEMAPS_NAMED])
            more = f" and {n - SITEMAPS_NAMED:,} more" if n > SITEMAPS_NAMED else ""
            noun = "sitemap" if n == 1 else "sitemaps"
            parts.append(f"{n:,} {noun} not read {after} ({named}{more})")
        if self.page_count:
            n = self.page_count
            classes = ", ".join(
                f"{name} {self.pages[name]:,}" for name in NOT_READ_CLASSES if self.pages[name]
            )
            noun = "page" if n == 1 else "pages"
            parts.append(f"{n:,} {noun} failed after retries ({classes})")
        return ", ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return {
            "robots": self.robots,
            "sitemaps": self.sitemaps[:_LISTED],
            "sitemaps_count": self.sitemaps_count,
            "pages": self.page_count,
            "by_class": {name: self.pages[name] for name in NOT_READ_CLASSES if self.pages[name]},
        }


def _short(entry: Mapping[str, Any]) -> str:
    """A reason's first clause (``connection refused``, ``HTTP 500``): the line names a
    few sources; the crawl log has each whole reason."""
    return str(entry["reason"]).partition(":")[0].strip() or str(entry["class"])


def not_read_of(
    attempts: Iterable[Any],
    robots: Mapping[str, Any] | None,
    page_classes: Iterable[Mapping[str, int]] = (),
    retries: int | None = None,
) -> NotRead:
    """What a run did not read: its sitemap attempts (``SitemapAttempt``, whose
    ``failure_class`` the walk set), its robots.txt record (``failure_class`` there too),
    and its page fetches' refusal counts by class — one tally per component that fetched
    pages (the link crawl, verify); a page is counted once, by the tally that counted most
    of its class, as both may count the same fetch."""
    found = NotRead(retries=retries)
    attempts = list(attempts)
    # A conventional address (/sitemap.xml, …) is a guess, not a source the site named: when
    # some sitemap of the site was read, a guess that failed is no gap in the inventory (a
    # WAF answering 5xx for unknown paths would make every run incomplete); when none was,
    # the guesses were the only way to the sitemaps, and one that failed may hide them.
    any_read = any(getattr(a, "ok", False) for a in attempts)
    for attempt in attempts:
        if not is_not_read(getattr(attempt, "failure_class", None)):
            continue
        if any_read and getattr(attempt, "source", None) == "conventional":
            continue
        found.sitemaps_count += 1
        if len(found.sitemaps) < _LISTED:
            found.sitemaps.append(
                {
                    "url": attempt.url,
                    "source": attempt.source,
                    "parent": attempt.parent,
                    "class": attempt.failure_class,
                    "reason": attempt.error or attempt.failure_class,
                }
            )
    if robots is not None and is_not_read(robots.get("failure_class")):
        found.robots = {
            "url": robots.get("url"),
            "class": robots["failure_class"],
            "reason": robots.get("error") or robots["failure_class"],
        }
    for tally in page_classes:
        for name in NOT_READ_CLASSES:
            found.pages[name] = max(found.pages[name], int(tally.get(name, 0) or 0))
    found.pages = +found.pages  # zeros dropped
    return found


def broken_references(attempts: Iterable[Any]) -> list[dict[str, Any]]:
    """Child sitemaps a sitemap index (or robots.txt) lists and the site answers 404 or 410
    for: the site's own broken reference, a warning — not a source the run failed to read."""
    return [
        {"url": a.url, "parent": a.parent, "status": a.status}
        for a in attempts
        if a.source in ("index", "robots") and a.status in BROKEN_REFERENCE_STATUSES
    ]


def broken_reference_warning(broken: list[dict[str, Any]], shown: int = 3) -> str | None:
    """One warning for the listed sitemaps the site does not serve, or None."""
    if not broken:
        return None
    named = ", ".join(
        f"{b['url']} (HTTP {b['status']}, listed by {b['parent'] or 'robots.txt'})"
        for b in broken[:shown]
    )
    more = f" and {len(broken) - shown:,} more" if len(broken) > shown else ""
    noun = "sitemap" if len(broken) == 1 else "sitemaps"
    return (
        f"{len(broken):,} listed {noun} the site does not serve: {named}{more}; the site's "
        "own broken reference (whatever they listed is not in the inventory)"
    )
