"""The feed's JSON text, piece by piece: what ``feed_lines`` writes a record with, and the
heads the sitemap worker writes for listed URLs (``listed_heads``), so both write the same
text from one definition. The worker's facts (``sitemaps/facts.py``) and the feed
(``feed_lines``) both use it, so it imports neither.

Lines are built by hand around ``json.encoder.encode_basestring`` (C) rather than
``json.dumps`` per record: the feed's text is a per-URL cost of every walk.
"""

from __future__ import annotations

import json
import math
from json.encoder import encode_basestring
from typing import Any

from discovery_crawler.compiled import extension
from discovery_crawler.record_fields import LISTING, STAGE, names
from discovery_crawler.sitemaps.parser import priority_value

# the common records' lines in C (``_lines.c``); where it was not built, all in Python
_lines = extension("discovery_crawler.output._lines")
# The C writes a line's listing and stage fields as it knows them (``_lines.FIELDS``): with
# a declaration it does not follow (a field added to ``record_fields``, _lines.c not yet),
# every line is rendered in Python, from the declaration, rather than one field dropped.
COMPILED_FIELDS = (*names(LISTING), *names(STAGE))
if _lines is not None and getattr(_lines, "FIELDS", None) != COMPILED_FIELDS:
    _lines = None

dumps = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": ")).encode
LINK_SOURCES = ("link", "seed")


def value(item: Any) -> str:
    """Any value as the feed writes it (a str by ``encode_basestring``)."""
    if item is None:
        return "null"
    if item.__class__ is str:
        return encode_basestring(item)
    return dumps(item)


def number(item: Any) -> str:
    """A number as the feed writes it (a finite float by ``repr``)."""
    if item.__class__ is float and math.isfinite(item):
        return repr(item)
    return value(item)


def listing_prefix(source: str, sitemap: str | None) -> str:
    """What follows a record's URL up to ``"lastmod": ``, shared by a batch's records."""
    where = value(sitemap)
    # A page reached by links has no sitemap: its sources are empty, not [null].
    sources = "" if sitemap is None and source in LINK_SOURCES else where
    return (
        f'", "source": {encode_basestring(source)}, "sitemap": {where}, '
        f'"sources": [{sources}], "lastmod": '
    )


def listed_heads(
    urls: list[str],
    lastmods: list[str],
    priorities: list[str],
    changefreqs: list[str],
    source: str,
    sitemap: str,
) -> list[str]:
    """``feed_lines.json_heads`` of listed URLs without alternates, from the listing's text
    columns ('' = absent; a priority as written): the sitemap worker's form, with no record
    dicts and each distinct priority and changefreq rendered once."""
    enc = encode_basestring
    prefix = listing_prefix(source, sitemap)
    numbers = {p: number(priority_value(p)) if p else "null" for p in set(priorities)}
    words = {c: enc(c) if c else "null" for c in set(changefreqs)}
    if _lines is not None:  # the same text from C
        return _lines.listed_heads(urls, lastmods, priorities, changefreqs, prefix, numbers, words)
    return [
        f'{{"url": {enc(url)[:-1]}{prefix}{enc(lastmod) if lastmod else "null"}, '
        f'"priority": {numbers[priority]}, "changefreq": {words[changefreq]}, '
        '"alternates": null'
        for url, lastmod, priority, changefreq in zip(
            urls, lastmods, priorities, changefreqs, strict=True
        )
    ]
