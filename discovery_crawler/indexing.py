"""Whether a page should be in a search index: its own indexing directives, and one
indexability verdict per record (the sitemap a site should have lists exactly the
indexable pages; ``output/sitemap_writer.py``).

Directives (Google's and Bing's reading of the robots meta tag and ``X-Robots-Tag``):

- comma-separated, case-insensitive; ``none`` is ``noindex, nofollow``; value directives
  (``max-snippet: 20``, ``unavailable_after: 25 Jun 2030``) keep their name only;
- ``<meta name="robots">`` applies to every crawler, ``<meta name="<token>">`` to the one
  named (here ``ROBOTS_AGENT_TOKEN``); several tags add up;
- an ``X-Robots-Tag`` value may start with an agent (``googlebot: noindex``): it then
  applies only to that agent, up to the next agent prefix; unprefixed, to all.

The verdict of a record (``indexability_of``) is a function of its fields: ``indexable``,
or the first reason it is not, in the order of ``REASONS`` — a record fails the first
test it meets, so counts add up to the records judged. A record that was not fetched and
that nothing contradicts is ``unfetched``: neither indexable nor not (``--include-unfetched``
puts it in the written sitemap).

No Scrapy imports.
"""

from __future__ import annotations

import email.utils
from collections import Counter
from collections.abc import Iterable
from datetime import UTC
from itertools import repeat
from typing import Any

from discovery_crawler.run_record import CappedList

INDEXABLE = "indexable"
UNFETCHED = "unfetched"
# Why a record is not indexable, in the order they are tested.
REASONS: tuple[str, ...] = (
    "junk",  # flagged junk (SPEC §7): never a page to index
    "robots_disallowed",  # robots.txt disallows it: a crawler may not read it
    "redirect",  # a 3xx or a meta refresh sent the URL elsewhere
    "status",  # answered, but not 200 (a 404, a 5xx, a wall, a login page…)
    "refused",  # answered 200 with what is not a page: a block page, a login wall
    "noindex",  # its robots meta tag or X-Robots-Tag says noindex
    "canonical_elsewhere",  # it names another URL canonical
)
VERDICTS: tuple[str, ...] = (INDEXABLE, *REASONS, UNFETCHED)
"""The closed set of verdicts, in the order counts are reported."""
# Value directives: ``name: value``, never an agent prefix.
_VALUED = frozenset({"max-snippet", "max-image-preview", "max-video-preview", "unavailable_after"})
# Answered 200 and still a page a search engine indexes: a JavaScript shell renders one, a
# download is a file served as it is (a PDF is indexed).
_PAGE_REFUSALS = frozenset({"shell", "download"})
# A record with neither of these was not fetched and carries no flag: no verdict field on
# its feed line (the common sitemap record keeps its fast line).
JUDGED_FIELDS = ("status", "flags")


def _name(directive: str) -> str:
    return directive.partition(":")[0].strip()


def directives(content: str) -> frozenset[str]:
    """The directive names of a robots meta tag's ``content`` (lower case)."""
    found = set()
    for part in content.split(","):
        name = _name(part.lower())
        if name:
            found.add(name)
    return frozenset(found)


def header_directives(value: str, agent: str) -> frozenset[str]:
    """The directives of one ``X-Robots-Tag`` value that apply to ``agent``: those before
    any agent prefix, and those after ``agent:`` up to the next prefix."""
    agent = agent.strip().lower()
    found = set()
    current: str | None = None  # None: every agent
    for part in value.split(","):
        text = part.strip().lower()
        head, colon, rest = text.partition(":")
        head = head.strip()
        if colon and head and head not in _VALUED and " " not in head:
            current = head
            text = rest.strip()
        name = _name(text)
        if name and (current is None or current == agent):
            found.add(name)
    return frozenset(found)


def verdict_flags(found: Iterable[str]) -> tuple[bool, bool]:
    """(noindex, nofollow) of a set of directive names (``none`` is both)."""
    names = set(found)
    none = "none" in names
    return none or "noindex" in names, none or "nofollow" in names


def meta_applies(name: str, agent: str) -> bool:
    """A ``<meta name=…>`` that speaks to this crawler: ``robots``, or its agent token."""
    name = name.strip().lower()
    return name == "robots" or (bool(agent) and name == agent.strip().lower())


def page_directives(metas: Iterable[str], headers: Iterable[str], agent: str) -> tuple[bool, bool]:
    """(noindex, nofollow) of a page: ``metas`` the contents of its robots meta tags that
    apply (``meta_applies``), ``headers`` its ``X-Robots-Tag`` values."""
    names: set[str] = set()
    for content in metas:
        names |= directives(content)
    for value in headers:
        names |= header_directives(value, agent)
    return verdict_flags(names)


def last_modified(header: str | None) -> str | None:
    """A page's ``Last-Modified`` header (an HTTP date) as a W3C datetime in UTC, for a
    sitemap's ``<lastmod>`` when no listing gave one; None when absent or unreadable."""
    if not header:
        return None
    try:
        when = email.utils.parsedate_to_datetime(header)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None or when.utcoffset() is None:
        return None  # an HTTP date is GMT; one without a zone is not one
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def indexability_of(rec: dict[str, Any]) -> str:
    """``indexable``, the first reason of ``REASONS`` that the record's fields give, or
    ``unfetched`` (module docstring)."""
    return verdict_of(
        rec.get("flags"),
        rec.get("status"),
        rec.get("redirected_to"),
        rec.get("refusal"),
        rec.get("canonical"),
    )


def verdict_of(flags: Any, status: Any, redirected_to: Any, refusal: Any, canonical: Any) -> str:
    """``indexability_of`` on the fields it reads (the sitemap writer decodes only those)."""
    flags = flags or ()
    if "junk" in flags:
        return "junk"
    if "robots_disallowed" in flags:
        return "robots_disallowed"
    if (
        redirected_to is not None
        or "meta_refresh" in flags
        or "redirect_loop" in flags
        or "over_max_redirects" in flags
    ):
        return "redirect"
    if status is not None and 300 <= status < 400:
        return "redirect"
    if status is None:
        if isinstance(refusal, dict):  # no answer: a timeout, a network error
            return "status"
        return UNFETCHED
    if status != 200:
        return "status"
    if isinstance(refusal, dict) and refusal.get("class") not in _PAGE_REFUSALS:
        return "refused"
    if "noindex" in flags:
        return "noindex"
    if "canonical_elsewhere" in flags or canonical is not None:
        return "canonical_elsewhere"
    return INDEXABLE


def judged(rec: dict[str, Any]) -> bool:
    """The record has something to judge (a fetch or a flag); one without is
    ``unfetched``. A fetched record's feed line carries its ``indexability``."""
    return rec.get("status") is not None or bool(rec.get("flags")) or "refusal" in rec


def listed(rec: dict[str, Any]) -> bool:
    """A sitemap names the record's URL (a ``<loc>`` or an hreflang alternate)."""
    return bool(rec.get("sitemap") or rec.get("sources"))


def problem_line(counts: Counter[str], total: int) -> str:
    """``14 sitemap URLs are not indexable: 9 noindex, 3 redirect, 2 canonical elsewhere``"""
    parts = ", ".join(f"{n:,} {r.replace('_', ' ')}" for r, n in counts.most_common() if n)
    word = "URL is" if total == 1 else "URLs are"
    return f"{total:,} sitemap {word} not indexable: {parts}"


class IndexTally:
    """A run's indexing directives and verdicts (``_crawl-log.json`` → ``indexability``):
    the pages that said noindex or nofollow (as fetched), and each record's verdict as it
    leaves the pipeline — all records, and those a sitemap lists apart."""

    def __init__(self, cap: int = 1000):
        self.counts: Counter[str] = Counter(dict.fromkeys(VERDICTS, 0))
        self.listed: Counter[str] = Counter()  # listed records that are not indexable
        self.listed_items = CappedList(cap)  # ... {"url", "reason", "sitemap"}
        self.noindex = CappedList(cap)  # pages: {"url", "by": "meta" | "header" | both}
        self.nofollow = CappedList(cap)

    def page(self, url: str, noindex: bool, nofollow: bool, by: str) -> None:
        """A fetched page's directives (``by``: meta, header or meta+header)."""
        if noindex:
            self.noindex.append({"url": url, "by": by})
        if nofollow:
            self.nofollow.append({"url": url, "by": by})

    def observe(self, records: list[dict[str, Any]]) -> bool:
        """Judge each record of a batch leaving the pipeline; ``indexability`` set on those
        with something to judge. True when a record was changed."""
        changed = False
        counts = self.counts
        # ``judged`` over the batch: a sitemap walk's batches are wholly or all but wholly
        # unjudged records, told by three C loops (a call a record was most of this
        # stage's time).
        if (
            not any(map(dict.get, records, repeat("flags")))
            and not any(map(dict.__contains__, records, repeat("refusal")))
            and set(map(dict.get, records, repeat("status"))) == {None}
        ):
            todo = []
        else:
            todo = [
                rec
                for rec in records
                if rec.get("status") is not None or rec.get("flags") or "refusal" in rec
            ]
        counts[UNFETCHED] += len(records) - len(todo)
        for rec in todo:
            verdict = indexability_of(rec)
            # On the feed line of a fetched record only: a sitemap URL never fetched keeps
            # the walk's pre-written line (its flags say why; a field here would send its
            # whole batch down the slow path, ~15 % of a 1M-URL walk), counted all the same.
            if rec.get("status") is not None or "refusal" in rec:
                rec["indexability"] = verdict
                changed = True
            counts[verdict] += 1
            if verdict not in (INDEXABLE, UNFETCHED) and listed(rec):
                self.listed[verdict] += 1
                self.listed_items.append(
                    {"url": rec["url"], "reason": verdict, "sitemap": rec.get("sitemap")}
                )
        return changed

    def lines(self) -> list[str]:
        """The summary's lines: the verdicts, and listed URLs that are not indexable."""
        judged_total = sum(counts for v, counts in self.counts.items() if v != UNFETCHED)
        if not judged_total and not self.noindex.count and not self.nofollow.count:
            return []
        parts = ", ".join(f"{self.counts[v]:,} {v}" for v in VERDICTS if self.counts[v])
        out = [
            f"Indexability: {parts}; pages saying noindex {self.noindex.count:,}, "
            f"nofollow {self.nofollow.count:,}"
        ]
        total = sum(self.listed.values())
        if total:
            examples = ", ".join(i["url"] for i in self.listed_items.items[:3])
            out.append(f"{problem_line(self.listed, total)} (e.g. {examples})")
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "counts": {v: self.counts[v] for v in VERDICTS},
            "listed_not_indexable": {
                "count": sum(self.listed.values()),
                "reasons": dict(self.listed.most_common()),
                "listed": len(self.listed_items.items),
                "items": self.listed_items.items,
            },
            "noindex_pages": self.noindex.as_dict(),
            "nofollow_pages": self.nofollow.as_dict(),
        }


def index_tally(record: Any) -> IndexTally:
    """The run's tally (``record.indexing``), made on first use: the link crawl and the
    verifier list the pages that said noindex or nofollow, the indexability stage counts
    the verdicts."""
    if record.indexing is None:
        record.indexing = IndexTally(record.list_cap)
    return record.indexing


def page_flags(
    rec: dict[str, Any], meta: tuple[bool, bool], header: tuple[bool, bool]
) -> tuple[bool, bool, str]:
    """Flag a fetched page's record ``noindex`` / ``nofollow_page`` from its meta tags'
    and its ``X-Robots-Tag``'s (noindex, nofollow); (noindex, nofollow, by) where ``by``
    says which said so (``meta``, ``header``, ``meta+header``; '' for neither)."""
    noindex = meta[0] or header[0]
    nofollow = meta[1] or header[1]
    if not (noindex or nofollow):
        return False, False, ""
    flags = list(rec.get("flags") or ())
    if noindex and "noindex" not in flags:
        flags.append("noindex")
    if nofollow and "nofollow_page" not in flags:
        flags.append("nofollow_page")
    rec["flags"] = flags
    by = "+".join(w for w, said in (("meta", any(meta)), ("header", any(header))) if said)
    return noindex, nofollow, by
