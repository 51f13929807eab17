"""The feed's JSON lines, built by hand around ``json.encoder.encode_basestring`` (C)
rather than ``json.dumps`` per record: measured here, 1.5 µs against 3.3 µs per URL — a
quarter of the per-URL budget of a sitemap walk. No Scrapy imports: the sitemap worker
(``sitemaps/worker.py``) renders each record's head with ``listed_heads``, the same text
``json_heads`` gives (a test checks they agree).
"""

from __future__ import annotations

import json
import math
import operator
from json.encoder import encode_basestring
from typing import Any

from discovery_crawler.items import EXTRA_FIELDS, URL_FACTS
from discovery_crawler.sitemaps.parser import priority_value

try:  # the common records' lines in C (``_lines.c``); where it was not built, all in Python
    from discovery_crawler.output import _lines
except ImportError:
    _lines = None  # type: ignore[assignment]

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": ")).encode


def _value(value: Any) -> str:
    if value is None:
        return "null"
    if value.__class__ is str:
        return encode_basestring(value)
    return _dumps(value)


def _number(value: Any) -> str:
    if value.__class__ is float and math.isfinite(value):
        return repr(value)
    return _value(value)


def json_line(rec: dict[str, Any]) -> str:
    """One record as a JSON object with the feed's fields in order (no newline)."""
    return json_lines([rec])[:-1]


_NO_TAIL = "}"
_LINK_SOURCES = ("link", "seed")


def _shared_prefix(source: str, sitemap: str | None) -> str:
    """What follows the URL up to ``"lastmod": ``, shared by a batch's records."""
    value = _value(sitemap)
    # A page reached by links has no sitemap: its sources are empty, not [null].
    sources = "" if sitemap is None and source in _LINK_SOURCES else value
    return (
        f'", "source": {encode_basestring(source)}, "sitemap": {value}, '
        f'"sources": [{sources}], "lastmod": '
    )


def json_heads(records: list[dict[str, Any]]) -> list[str]:
    """Each record's line up to its ``alternates`` (the fields of ``BASE_FIELDS``): what a
    sitemap listing alone decides (the sitemap worker's are ``listed_heads``)."""
    enc = encode_basestring
    heads = []
    shared: dict[tuple[str, str | None], str] = {}
    for rec in records:
        key = (rec["source"], rec["sitemap"])
        prefix = shared.get(key)
        if prefix is None:
            prefix = shared[key] = _shared_prefix(*key)
        lastmod = rec["lastmod"]
        changefreq = rec["changefreq"]
        alternates = rec["alternates"]
        heads.append(
            f'{{"url": {enc(rec["url"])[:-1]}{prefix}'
            f"{enc(lastmod) if lastmod is not None else 'null'}, "
            f'"priority": {_number(rec["priority"])}, '
            f'"changefreq": {enc(changefreq) if changefreq is not None else "null"}, '
            f'"alternates": {_dumps(alternates) if alternates is not None else "null"}'
        )
    return heads


def listed_heads(
    urls: list[str],
    lastmods: list[str],
    priorities: list[str],
    changefreqs: list[str],
    source: str,
    sitemap: str,
) -> list[str]:
    """``json_heads`` of listed URLs without alternates, from the listing's text columns
    ('' = absent; a priority as written): the sitemap worker's form, with no record dicts
    and each distinct priority and changefreq rendered once."""
    enc = encode_basestring
    prefix = _shared_prefix(source, sitemap)
    numbers = {p: _number(priority_value(p)) if p else "null" for p in set(priorities)}
    words = {c: enc(c) if c else "null" for c in set(changefreqs)}
    if _lines is not None:  # the same text from C (~0.15 µs against ~0.5 µs a URL, measured)
        return _lines.listed_heads(urls, lastmods, priorities, changefreqs, prefix, numbers, words)
    return [
        f'{{"url": {enc(url)[:-1]}{prefix}{enc(lastmod) if lastmod else "null"}, '
        f'"priority": {numbers[priority]}, "changefreq": {words[changefreq]}, '
        '"alternates": null'
        for url, lastmod, priority, changefreq in zip(
            urls, lastmods, priorities, changefreqs, strict=True
        )
    ]


def _extras(rec: dict[str, Any]) -> str:
    """The extra fields the record has (``items.EXTRA_FIELDS``), as ``, "name": value``
    pieces in the feed's order; '' for the usual record, which has none."""
    return "".join(
        f", {encode_basestring(name)}: {_value(rec[name])}" for name in EXTRA_FIELDS if name in rec
    )


def _as_worked(rec: dict[str, Any]) -> bool:
    """The record kept what the sitemap worker assumed when it wrote the line's tail."""
    f = rec.get(URL_FACTS)
    return (
        f is not None
        and bool(f[8])
        and rec.get("flags") is None
        and not _extras(rec)
        and rec.get("slug") is f[3]
        and rec.get("change") == "new"
        and rec.get("score") == f[0]
        and rec.get("kind") == f[5]
        and "via" not in rec
    )


def worked_text(item: Any) -> str | None:
    """A ``UrlBatch``'s lines as the sitemap worker wrote them (``UrlBatch.worked``), when
    every record kept what it assumed — the batch lost none (stages only drop, in order),
    no stage changed one (the slug stage clears ``worked`` when a base slug was taken;
    flags, drops and junk names leave no tail) and none is missing (its first and last
    records are checked) — else None: the lines of ``json_lines``, at C speed."""
    worked = item.worked
    records = item.records
    if worked is None or item.finals is not None or len(records) != len(worked[0]):
        return None
    if not (_as_worked(records[0]) and _as_worked(records[-1])):
        return None
    heads, tails, _ = worked
    return "\n".join(map(operator.add, heads, tails)) + "\n"


def worked_entries(item: Any) -> list[str] | None:
    """A ``UrlBatch``'s state.json entries as the sitemap worker wrote them, on the same
    terms as ``worked_text``."""
    worked = item.worked
    records = item.records
    if worked is None or len(records) != len(worked[0]):
        return None
    first, last = records[0], records[-1]
    if first.get("slug") is not first[URL_FACTS][3] or last.get("slug") is not last[URL_FACTS][3]:
        return None
    return worked[2]


def json_lines(records: list[dict[str, Any]]) -> str:
    """Many records, one JSON object a line (the per-URL hot path of the feed).

    A record from the sitemap worker brings its head (``json_heads``) in its
    ``URL_FACTS``; the others' heads are rendered here. Where ``_lines`` was built, it
    writes the lines of the common records (a worker's head, a plain tail: ~0.2 µs against
    ~0.7 µs a URL, measured) and ``_record_lines`` the others.
    """
    if _lines is None or records.__class__ is not list:
        lines = _record_lines(records)
    else:
        lines = _lines.record_lines(records, URL_FACTS)
        if None in lines:
            todo = [i for i, line in enumerate(lines) if line is None]
            for i, line in zip(todo, _record_lines([records[i] for i in todo]), strict=True):
                lines[i] = line
    lines.append("")
    return "\n".join(lines)


def _record_lines(records: list[dict[str, Any]]) -> list[str]:
    """``json_lines``' lines, in Python: the definition ``_lines.record_lines`` follows."""
    enc = encode_basestring
    facts = [rec.get(URL_FACTS) for rec in records]
    missing = [rec for rec, f in zip(records, facts, strict=True) if f is None or not f[4]]
    rendered = iter(json_heads(missing)) if missing else None
    # tails from the sitemap worker: none when SITEMAP_WORKER_LINES is off, else most of a
    # batch's; its ends tell (rendering a tail it wrote is never wrong, only slower)
    tailed = any(f is not None and f[8] for f in (facts[0], facts[-1])) if facts else False
    lines = []
    for rec, f in zip(records, facts, strict=True):
        head = f[4] if f is not None and f[4] else next(rendered)  # type: ignore[arg-type]
        kind = rec.get("kind")
        flags = rec.get("flags")
        slug = rec.get("slug")
        score = rec.get("score")
        change = rec.get("change")
        if tailed and _as_worked(rec):  # the sitemap worker's tail holds
            tail = f[8]  # type: ignore[index]
        elif kind is None and flags is None and slug is None and score is None:
            tail = _NO_TAIL  # the URL stages are off: their fields do not exist yet
        else:
            tail = (
                f', "kind": {enc(kind) if kind is not None else "null"}, '
                f'"flags": {_dumps(flags) if flags is not None else "null"}, '
                f'"slug": {enc(slug) if slug is not None else "null"}, '
                f'"score": {score if score.__class__ is int else _number(score)}, '
                f'"change": {enc(change) if change is not None else "null"}}}'
            )
        if "via" in rec:  # a link-crawl record: citation and fetch fields
            tail = (
                f', "via": {_value(rec["via"])}, "found_on": {_value(rec.get("found_on"))}, '
                f'"anchor": {_value(rec.get("anchor"))}, "depth": {_value(rec.get("depth"))}, '
                f'"title": {_value(rec.get("title"))}, "status": {_value(rec.get("status"))}, '
                f'"refusal": {_value(rec.get("refusal"))}' + tail
            )
        extras = _extras(rec)
        if extras:  # after every other field, before the closing brace
            tail = tail[:-1] + extras + "}"
        lines.append(head + tail)
    return lines
