"""The job's one inventory from its workers' records (pure: no Redis, no Scrapy).

Each page is requested by one worker (the claim), and that worker writes its record; a
URL recorded without a fetch (a file, an excluded path, over a budget) may be recorded by
every worker that met it. One record per URL is kept — a fetched one first, then the best
citation — and its citation is the best any worker saw (``citations``: the claims'
record, the smallest depth, then the smallest citing URL), as one run chooses
(docs/outputs.md, "Two runs agree")."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from discovery_crawler.urls.normalize import twin_key
from discovery_crawler.urls.slugs import SlugAllocator, bases_many, normalized_paths

CITATION_FIELDS = ("via", "found_on", "anchor", "depth")


def citation_order(depth: int, found_on: str | None, via: str | None = None) -> str:
    """A citation's place, as text that sorts as (depth, a listing before a link, citing
    URL) does: at depth 1 a sitemap's listing beats the seed's link, as one run cites a
    URL both list and link (``LinkCrawl.admit_listed``)."""
    return f"{depth:06d}\t{0 if via == 'sitemap' else 1}{found_on or ''}"


def citation_fields(depth: int, found_on: str | None, via: str | None, anchor: Any) -> str:
    """A citation's fields, as CLAIM stores them after its order (JSON)."""
    return json.dumps([via, found_on, anchor if isinstance(anchor, str) else None, depth])


LAST = "~"  # sorts after every reading place (digits)


def listed_fields(listing: dict[str, Any], source: str | None) -> dict[str, Any]:
    """What a sitemap listing says of a URL, for a fetched record that lacked it (the
    seed stays the seed), as one run joins a late listing (``links._listed_fields``)."""
    fields = {k: listing.get(k) for k in ("sitemap", "lastmod", "priority", "changefreq")}
    fields["alternates"] = listing.get("alternates")
    if source != "seed":
        fields["source"] = listing.get("source") or "sitemap"
    return fields


def _rank(rec: dict[str, Any], places: dict[str, str]) -> tuple[int, int, str, int, str]:
    depth = rec.get("depth")
    return (
        0 if rec.get("status") is not None else 1,
        # a <loc> listing beats an hreflang alternate's entry, whichever came first (one
        # run replaces the alternate's record with the listing's: exporters.patched_record)
        1 if rec.get("source") == "alternate" else 0,
        places.get(rec.get("sitemap") or "", LAST),
        depth if isinstance(depth, int) else 1 << 30,
        rec.get("found_on") or "",
    )


def merge_records(
    lines: Iterable[bytes | str],
    citations: dict[bytes | str, bytes | str],
    places: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """One record per URL from the workers' feed lines, each with the job's best
    citation and every sitemap any worker saw list it (``sources``).

    ``places``: each sitemap's place in one run's reading order (``walk.reading_place``).
    A listed URL's record is the one of its first ``<loc>`` listing in that order, as one
    run keeps, and the records come in the order their URLs first entered (a sitemap's
    URLs in its order: one worker reads a document, its feed lines in the order
    listed); the rest after, by URL.
    Without ``places``, sorted by URL (workers answer in any order)."""
    places = places or {}
    best: dict[str, dict[str, Any]] = {}
    # where the URL first entered: (its sitemap's reading place, the line), or the URL
    entered: dict[str, tuple[str, int, str]] = {}
    sources: dict[str, list[str]] = {}
    listings: dict[str, dict[str, Any]] = {}  # the best listing beside a fetched record
    for n, line in enumerate(lines):
        rec = json.loads(line)
        key = twin_key(rec["url"])
        place = places.get(rec.get("sitemap") or "")
        here = (place, n, "") if place is not None else (LAST, 0, rec["url"])
        old = best.get(key)
        if old is None:
            best[key] = rec
            entered[key] = here
            continue
        entered[key] = min(entered[key], here)
        joined = sources.get(key)  # met again (several workers): every listing counts
        if joined is None:
            joined = sources[key] = list(old.get("sources") or ())
        joined.extend(s for s in rec.get("sources") or () if s not in joined)
        if _rank(rec, places) < _rank(old, places):
            best[key] = rec
            old, rec = rec, old
        if rec.get("status") is None and rec.get("sitemap"):  # the other is a listing
            known = listings.get(key)
            if known is None or _rank(rec, places) < _rank(known, places):
                listings[key] = rec
    for key, listing in listings.items():  # a page fetched here, listed there
        rec = best[key]
        if rec.get("status") is not None and (
            rec.get("sitemap") is None
            or (rec.get("source") == "alternate" and listing.get("source") != "alternate")
        ):
            rec.update(listed_fields(listing, rec.get("source")))
    for key, listed in sources.items():
        rec = best[key]
        if len(listed) > len(rec.get("sources") or ()):  # listed in several workers' shares
            # in reading order, as one run lists them (exporters.patched_record: an
            # alternate's sitemap read before the listing that won stays first)
            first = rec.get("sources") or []
            every = [*first, *(s for s in listed if s not in first)]
            rec["sources"] = sorted(every, key=lambda s: places.get(s, LAST))
    cited = {
        (k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes) else v)
        for k, v in citations.items()
    }
    for key, rec in best.items():
        found = cited.get(key)
        if found is None or rec.get("depth") is None:
            continue
        order, _, fields = found.partition("\n")
        if order < citation_order(rec["depth"], rec.get("found_on"), rec.get("via")):
            via, found_on, anchor, depth = json.loads(fields)
            if rec.get("source") == rec.get("via"):  # not listed: its source is its via
                rec["source"] = via
            rec.update(via=via, found_on=found_on, anchor=anchor, depth=depth)
    if not places:
        return sorted(best.values(), key=lambda rec: rec["url"])
    return [best[key] for key in sorted(best, key=entered.__getitem__)]


def allocate_slugs(records: list[dict[str, Any]]) -> None:
    """The job's slugs, given in the records' order as one run gives them in its
    discovery order (each worker's own, allocated over its share, may differ where two
    URLs share a base slug)."""
    if not records:
        return
    urls = [rec["url"] for rec in records]
    slugs = SlugAllocator(len(urls)).slugs_many(urls, bases=bases_many(normalized_paths(urls)))
    for rec, slug in zip(records, slugs, strict=True):
        if "slug" in rec:
            rec["slug"] = slug


UNION_FLAGS = ("sitemap_only", "links_only")


def union_flags(
    records: list[dict[str, Any]],
    sighted: list[tuple[bool, bool]],
    pages_not_read: int,
    sitemaps_not_read: int,
) -> None:
    """Union mode: each record's ``sitemap_only`` / ``links_only`` flag from the job's
    sightings (``sighted``: listed, linked, one pair per record), as one run decides them
    (``UnionTally.flags_for``): each worker saw part of both sides, so its own are
    replaced. A side with a source not read anywhere in the job flags nothing."""
    for rec, (listed, linked) in zip(records, sighted, strict=True):
        flags = [f for f in rec.get("flags") or () if f not in UNION_FLAGS]
        if listed and not linked and not pages_not_read:
            flags.append("sitemap_only")
        elif linked and not listed and not sitemaps_not_read:
            flags.append("links_only")
        rec["flags"] = flags or None
