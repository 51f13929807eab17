"""The feed record's fields, declared once (SPEC §10): each field's name, its place in the
feed and the CSV (the order here), when a JSON line carries it, how a CSV cell shows it, and
whether state.json keeps it. ``items`` (the field tuples the stages use), the feed's lines
(``output.feed_lines``, ``output.json_text``), the CSV exporter (``output.exporters``) and
the compiled lines (``output/_lines.c``, which says the fields it writes in ``FIELDS``) are
rendered from it; a test holds each of them to it. Imports nothing: every layer may read it.

A field added here appears in the JSON feed (an ``EXTRA`` field when the record has it, a
``STAGE`` field on every line the URL stages wrote) and as a CSV column, with no other edit.
"""

from __future__ import annotations

from dataclasses import dataclass

# When a JSON line carries the field:
LISTING = "listing"  # always (what a sitemap listing alone decides: the line's head)
CRAWL = "crawl"  # on a link-crawl record (one with ``via``): citation and fetch
STAGE = "stage"  # once the URL stages ran (null where a stage left it unset)
EXTRA = "extra"  # only when the record has it (CSV: always a column, empty when absent)
PARTS = (LISTING, CRAWL, STAGE, EXTRA)  # a line's fields come in this order

# How a CSV cell shows the value, and how it is read back (the end-of-run patch):
TEXT = "text"  # the string; None is empty
NUMBER = "number"  # as written (a number or text); read back an int when it is digits
INT = "int"  # an integer; None is empty
JSON = "json"  # a list or object as JSON text; None is empty
SOURCES = "sources"  # a JSON list, never empty where there is a sitemap
ANY = "any"  # an extra field's value: JSON for a list, object or boolean, else as is
CELLS = (TEXT, NUMBER, INT, JSON, SOURCES, ANY)


@dataclass(frozen=True)
class RecordField:
    name: str
    part: str  # one of PARTS
    cell: str  # one of CELLS
    state: bool  # state.json's entries keep it (``output.state_format.FIELDS``)
    doc: str


_F = RecordField
FIELDS: tuple[RecordField, ...] = (
    _F("url", LISTING, TEXT, True, "the URL, normalized"),
    _F("source", LISTING, TEXT, False, "sitemap | alternate | link | seed | robots"),
    _F("sitemap", LISTING, TEXT, False, "the sitemap that listed it first"),
    _F("sources", LISTING, SOURCES, False, "every sitemap that listed it"),
    _F("lastmod", LISTING, TEXT, True, "its <lastmod>"),
    _F("priority", LISTING, NUMBER, False, "its <priority>"),
    _F("changefreq", LISTING, TEXT, False, "its <changefreq>"),
    _F("alternates", LISTING, JSON, False, '[{"hreflang": ..., "href": ...}] (xhtml:link)'),
    _F("via", CRAWL, TEXT, False, "seed | sitemap | link: how the crawl reached it first"),
    _F("found_on", CRAWL, TEXT, False, "the page (or sitemap) that named it first"),
    _F("anchor", CRAWL, TEXT, False, "that link's text, whitespace collapsed, <= 160 chars"),
    _F("depth", CRAWL, INT, False, "link hops from the seed (a sitemap URL enters at 1)"),
    _F("title", CRAWL, TEXT, False, "<title> of the fetched page"),
    _F("status", CRAWL, INT, False, "HTTP status of the fetch (null: not fetched)"),
    _F("refusal", CRAWL, JSON, False, '{"class": ...} when the fetch gave no page (SPEC §11)'),
    _F("kind", STAGE, TEXT, False, "page | paginated | api | asset | document | media | ..."),
    _F("flags", STAGE, JSON, False, '["requires_auth", ...]'),
    _F("slug", STAGE, TEXT, True, "unique within the site, stable across re-runs"),
    _F("score", STAGE, NUMBER, False, "the selection score (SPEC §8)"),
    _F("change", STAGE, TEXT, False, "since the previous run: new | known | changed"),
    _F("robots_rule", EXTRA, ANY, False, "the robots.txt rule that disallows the URL"),
    _F("robots_group", EXTRA, ANY, False, '... and its group ("*", or our agent token)'),
    _F("junk_pattern", EXTRA, ANY, False, "the junk pattern the URL matched (SPEC §7)"),
    _F("aliases", EXTRA, ANY, False, "other URLs that are this page (slash twin, redirect)"),
    _F("redirected_to", EXTRA, ANY, False, "where a fetch of the URL was sent (3xx, refresh)"),
    _F("live", EXTRA, ANY, False, "verify: the listed URL answered 2xx, not redirected"),
    _F("canonical", EXTRA, ANY, False, "the other page a fetched page names canonical"),
    _F("indexability", EXTRA, ANY, False, "indexable, or why not (indexing.REASONS)"),
    _F("last_modified", EXTRA, ANY, False, "a fetched page's Last-Modified (W3C datetime)"),
)


def names(part: str | None = None) -> tuple[str, ...]:
    """The fields' names in feed order: all of them, or those of one ``part``."""
    return tuple(f.name for f in FIELDS if part is None or f.part == part)


def state_names() -> tuple[str, ...]:
    """The record's fields state.json keeps, in feed order."""
    return tuple(f.name for f in FIELDS if f.state)
