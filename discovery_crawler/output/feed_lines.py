"""The feed's JSON lines, built by hand around ``json.encoder.encode_basestring`` (C)
rather than ``json.dumps`` per record (``json_text`` has the pieces). No Scrapy imports.

A record from the sitemap worker with hreflang alternates brings the head of its line
(``UrlFacts.head``, written there with ``json_text.listed_heads``, the same text
``json_heads`` gives); any other head is rendered here, from the record's own values (in C
where it was built: cheaper than sending it). On a first run a record also brings its tail.
Each is used only while the record holds what it was written from (``facts.holding``): a
stage that changed the URL, the lastmod… gets a line rendered here.
"""

from __future__ import annotations

import operator
from json.encoder import encode_basestring
from typing import Any

from discovery_crawler.items import CRAWL_FIELDS, EXTRA_FIELDS, STAGE_FIELDS
from discovery_crawler.output.json_text import _lines, dumps, listing_prefix, number, value
from discovery_crawler.sitemaps.facts import FACTS, FROM_ENTRY, FROM_LISTING, HEAD_INDEX, holding

_dumps = dumps  # the feed's encoder, as the exporters import it


def json_line(rec: dict[str, Any]) -> str:
    """One record as a JSON object with the feed's fields in order (no newline)."""
    return json_lines([rec])[:-1]


_NO_TAIL = "}"


def json_heads(records: list[dict[str, Any]]) -> list[str]:
    """Each record's line up to its ``alternates`` (the fields of ``BASE_FIELDS``): what a
    sitemap listing alone decides (the sitemap worker's are ``json_text.listed_heads``)."""
    enc = encode_basestring
    heads = []
    shared: dict[tuple[str, str | None], str] = {}
    for rec in records:
        key = (rec["source"], rec["sitemap"])
        prefix = shared.get(key)
        if prefix is None:
            prefix = shared[key] = listing_prefix(*key)
        lastmod = rec["lastmod"]
        changefreq = rec["changefreq"]
        alternates = rec["alternates"]
        heads.append(
            f'{{"url": {enc(rec["url"])[:-1]}{prefix}'
            f"{enc(lastmod) if lastmod is not None else 'null'}, "
            f'"priority": {number(rec["priority"])}, '
            f'"changefreq": {enc(changefreq) if changefreq is not None else "null"}, '
            f'"alternates": {dumps(alternates) if alternates is not None else "null"}'
        )
    return heads


def _extras(rec: dict[str, Any]) -> str:
    """The extra fields the record has (``items.EXTRA_FIELDS``), as ``, "name": value``
    pieces in the feed's order; '' for the usual record, which has none."""
    return "".join(
        f", {encode_basestring(name)}: {value(rec[name])}" for name in EXTRA_FIELDS if name in rec
    )


def _tail_holds(rec: dict[str, Any], facts: Any) -> bool:
    """The sitemap worker's tail in ``facts`` (whose head holds) is this record's: the
    stages kept what it assumed (no flags or extra field, its base slug, new, its score and
    kind as worked out, not a link-crawl record)."""
    return (
        bool(facts.tail)
        and rec.get("flags") is None
        and not _extras(rec)
        and rec.get("slug") is facts.base_slug
        and rec.get("change") == "new"
        and rec.get("score") == facts.score
        and rec.get("kind") == facts.kind
        and "via" not in rec
    )


def worked_text(item: Any) -> str | None:
    """A ``UrlBatch``'s lines as the sitemap worker wrote them (``UrlBatch.worked``), when
    every record kept what it assumed — the batch lost none (stages only drop, in order),
    each record still holds what its line was written from and its tail's assumptions —
    else None: the lines of ``json_lines``."""
    worked = item.worked
    records = item.records
    if worked is None or item.finals is not None or len(records) != len(worked[0]):
        return None
    facts = holding(records, FROM_LISTING)
    for rec, f in zip(records, facts, strict=True):
        if f is None or not _tail_holds(rec, f):
            return None
    heads, tails, _ = worked
    return "\n".join(map(operator.add, heads, tails)) + "\n"


def worked_entries(item: Any) -> list[str] | None:
    """A ``UrlBatch``'s state.json entries as the sitemap worker wrote them, while every
    record holds what its entry was written from (its URL, lastmod and base slug)."""
    worked = item.worked
    records = item.records
    if worked is None or len(records) != len(worked[0]):
        return None
    for rec, f in zip(records, holding(records, FROM_ENTRY), strict=True):
        if f is None or rec.get("slug") is not f.base_slug:
            return None
    return worked[2]


def json_lines(records: list[dict[str, Any]]) -> str:
    """Many records, one JSON object a line (the per-URL hot path of the feed).

    A record from the sitemap worker may bring its head (``json_heads``) in its facts: the
    worker renders the heads with hreflang alternates; the others' heads are rendered here.
    Where ``_lines`` was built, it writes the lines of the common records (a worker's head
    that holds, or no alternates; a plain tail) and ``_record_lines`` the others.
    """
    if _lines is None or records.__class__ is not list:
        lines = _record_lines(records)
    else:
        lines = _lines.record_lines(
            records, FACTS, HEAD_INDEX, FROM_LISTING, listing_prefix, number
        )
        if None in lines:
            todo = [i for i, line in enumerate(lines) if line is None]
            for i, line in zip(todo, _record_lines([records[i] for i in todo]), strict=True):
                lines[i] = line
    lines.append("")
    return "\n".join(lines)


def json_utf8(records: list[dict[str, Any]]) -> bytes:
    """``json_lines(records)`` encoded as UTF-8: written straight as bytes by the C where
    every record is of its common shape (no line strings, no join, no encode), else
    through ``json_lines``."""
    if _lines is not None and records.__class__ is list:
        text = _lines.record_text(records, FACTS, HEAD_INDEX, FROM_LISTING, listing_prefix, number)
        if text is not None:
            return text
    return json_lines(records).encode("utf-8")


# `, "name": ` of each field a line's tail may carry, in the declared order (record_fields)
_CRAWL_KEYS = tuple((name, f", {encode_basestring(name)}: ") for name in CRAWL_FIELDS)
_STAGE_KEYS = tuple((name, f", {encode_basestring(name)}: ") for name in STAGE_FIELDS)
# A stage tail is written once a URL stage set one of these (``change`` is state.json's,
# which runs without them).
_STAGES_RAN = tuple(name for name in STAGE_FIELDS if name != "change")


def _stage_tail(rec: dict[str, Any]) -> str:
    """The stage fields of a record and its closing brace: every one (null where unset)
    once a stage ran, none while the URL stages are off."""
    for name in _STAGES_RAN:
        if rec.get(name) is not None:
            break
    else:
        return _NO_TAIL  # the URL stages are off: their fields do not exist yet
    return "".join([key + value(rec.get(name)) for name, key in _STAGE_KEYS]) + "}"


def _record_lines(records: list[dict[str, Any]]) -> list[str]:
    """``json_lines``' lines, in Python: the definition ``_lines.record_lines`` follows."""
    facts = holding(records, FROM_LISTING) if records else []
    missing = [rec for rec, f in zip(records, facts, strict=True) if f is None or not f.head]
    rendered = iter(json_heads(missing)) if missing else None
    lines = []
    for rec, f in zip(records, facts, strict=True):
        head = f.head if f is not None and f.head else next(rendered)  # type: ignore[arg-type]
        holds = f is not None and f.head and _tail_holds(rec, f)  # the worker's tail
        tail = f.tail if holds else _stage_tail(rec)  # type: ignore[union-attr]
        if "via" in rec:  # a link-crawl record: citation and fetch fields
            tail = "".join([key + value(rec.get(name)) for name, key in _CRAWL_KEYS]) + tail
        extras = _extras(rec)
        if extras:  # after every other field, before the closing brace
            tail = tail[:-1] + extras + "}"
        lines.append(head + tail)
    return lines
