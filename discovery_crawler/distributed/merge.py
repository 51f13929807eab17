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

CITATION_FIELDS = ("via", "found_on", "anchor", "depth")


def citation_order(depth: int, found_on: str | None) -> str:
    """A citation's place, as text that sorts as (depth, citing URL) does."""
    return f"{depth:06d}\t{found_on or ''}"


def citation_fields(depth: int, found_on: str | None, via: str | None, anchor: Any) -> str:
    """A citation's fields, as CLAIM stores them after its order (JSON)."""
    return json.dumps([via, found_on, anchor if isinstance(anchor, str) else None, depth])


def _rank(rec: dict[str, Any]) -> tuple[int, int, str]:
    depth = rec.get("depth")
    return (
        0 if rec.get("status") is not None else 1,
        depth if isinstance(depth, int) else 1 << 30,
        rec.get("found_on") or "",
    )


def merge_records(
    lines: Iterable[bytes | str], citations: dict[bytes | str, bytes | str]
) -> list[dict[str, Any]]:
    """One record per URL from the workers' feed lines, each with the job's best
    citation; sorted by URL (workers answer in any order)."""
    best: dict[str, dict[str, Any]] = {}
    for line in lines:
        rec = json.loads(line)
        key = twin_key(rec["url"])
        old = best.get(key)
        if old is None or _rank(rec) < _rank(old):
            best[key] = rec
    cited = {
        (k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes) else v)
        for k, v in citations.items()
    }
    for key, rec in best.items():
        found = cited.get(key)
        if found is None or rec.get("depth") is None:
            continue
        order, _, fields = found.partition("\n")
        if order < citation_order(rec["depth"], rec.get("found_on")):
            via, found_on, anchor, depth = json.loads(fields)
            if rec.get("source") == rec.get("via"):  # not listed: its source is its via
                rec["source"] = via
            rec.update(via=via, found_on=found_on, anchor=anchor, depth=depth)
    return sorted(best.values(), key=lambda rec: rec["url"])
