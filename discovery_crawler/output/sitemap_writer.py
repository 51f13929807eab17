"""The sitemap set a site should have, written from a run's inventory (``scrapy sitemap
DIR``, ``-a write_sitemap=1``): every indexable page (``indexing.indexability_of``), and
on request the listed pages no fetch contradicts; beside it, what changed against the
site's own sitemaps.

The inventory is read a line at a time and each part written as it fills, so memory is
one record and one part's buffer, whatever the inventory's size. The protocol's limits
(sitemaps.org): 50,000 URLs and 50 MB (52,428,800 bytes) uncompressed per file; a
``<loc>`` of at most 2,048 characters, RFC 3986 (so an IDN host in punycode and other
characters percent-encoded), entity-escaped; ``lastmod`` in W3C datetime (written as the
schema's ``xsd:date`` or ``xsd:dateTime``); a sitemap lists URLs of its own host only.
Hreflang alternates of the same site are kept as ``xhtml:link``.

Files, in the output folder: ``sitemap-1.xml`` … (``.xml.gz`` with ``gzip``),
``sitemap_index.xml`` naming them under ``base``, ``changes.txt`` (one line per URL
added or dropped against the site's sitemaps, with the reason) and ``changes.json``
(the counts, and the URLs that could not be written).

Parsing stays out: no Scrapy imports.
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import lru_cache
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit, urlunsplit

from w3lib.url import safe_url_string

from discovery_crawler.indexing import INDEXABLE, UNFETCHED, verdict_of

try:  # decodes only the fields the writer reads, ~5x faster than json.loads on a feed line
    import msgspec
except ImportError:  # pragma: no cover - a dependency; without it json writes the same
    msgspec = None

if TYPE_CHECKING:
    from collections.abc import Iterator

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
XHTML_NS = "http://www.w3.org/1999/xhtml"
MAX_URLS = 50_000
MAX_BYTES = 50 * 1024 * 1024
MAX_LOC = 2048
MIN_LOC = 12  # the schema's tLoc minLength
INDEX_NAME = "sitemap_index.xml"
CRAWL_LOG = "_crawl-log.json"
INVENTORY = "inventory.jsonl"
# A run whose inventory is the site's, as far as it was asked to go: the walk ended
# (``completed``), or ended at a budget the user set (``bounded``).
FINISHED = ("completed", "bounded")
LIST_CAP = 1000  # URLs listed per reason in changes.json (counts are exact)

_HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    f'<urlset xmlns="{SITEMAP_NS}" xmlns:xhtml="{XHTML_NS}">\n'
).encode()
_FOOT = b"</urlset>\n"
_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"})
# RFC 3986's reserved and unreserved characters, and ``%``: what a URL keeps as it is
# (non-ASCII characters, spaces and controls are percent-encoded as UTF-8).
_SAFE = "!#$%&'()*+,/:;=?@[]~"
_SPECIAL = re.compile("[&<>\"']")
# W3C datetime as a listing may give it; written as the schema's date or dateTime.
_W3C = re.compile(
    r"(\d{4}-\d{2}-\d{2})"
    r"(?:[Tt ](\d{2}:\d{2})(:\d{2}(?:\.\d+)?)?\s*(Z|z|[+-]\d{2}:?\d{2})?)?$",
    re.ASCII,  # xsd:date's digits are ASCII: int() would read "٢٠٢٤" as 2024 too
)


class RunFolderError(Exception):
    """The folder holds no finished run to write a sitemap from (one line)."""


def escape(text: str) -> str:
    """``text`` with the five XML entities the protocol names escaped."""
    return text.translate(_ESCAPES) if _SPECIAL.search(text) else text


@lru_cache(maxsize=4096)  # a site's lastmods repeat: a build date, a deploy time
def xsd_lastmod(value: Any) -> str | None:
    """A listing's lastmod as the schema's ``xsd:date`` or ``xsd:dateTime`` (seconds
    added to ``hh:mm``, a ``+hhmm`` offset given its colon), or None when it is not a W3C
    datetime of day precision or finer, or names no real day and time."""
    if not isinstance(value, str):
        return None
    match = _W3C.match(value.strip())
    if match is None:
        return None
    day, hm, seconds, zone = match.groups()
    try:
        date(int(day[:4]), int(day[5:7]), int(day[8:10]))  # a real day (no 2024-02-30)
    except ValueError:
        return None
    if hm is None:
        return day
    if int(hm[:2]) > 23 or int(hm[3:5]) > 59 or (seconds and int(seconds[1:3]) > 59):
        return None
    if zone and zone not in ("Z", "z") and ":" not in zone:
        zone = f"{zone[:3]}:{zone[3:]}"
    return f"{day}T{hm}{seconds or ':00'}{'Z' if zone in ('Z', 'z') else zone or ''}"


def encoded(url: str) -> str:
    """``url`` as the protocol wants it: ASCII (IDN host in punycode, other characters
    percent-encoded as UTF-8), what was already percent-encoded kept."""
    if url.isascii() and url.isprintable() and " " not in url:
        return url
    parts = urlsplit(url)
    netloc = parts.netloc
    if not netloc.isascii() and parts.hostname:
        try:
            host = parts.hostname.encode("idna").decode("ascii")
        except UnicodeError:
            return safe_url_string(url)
        user, at, _ = netloc.rpartition("@")
        port = f":{parts.port}" if parts.port is not None else ""
        netloc = f"{user}{at}{host}{port}"
    return urlunsplit(
        (
            parts.scheme,
            netloc,
            quote(parts.path, _SAFE),
            quote(parts.query, _SAFE),
            quote(parts.fragment, _SAFE),
        )
    )


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


@dataclass
class Changes:
    """What the written set changes against the site's own sitemaps."""

    kept: int = 0  # listed and written
    added: int = 0  # written, listed by no sitemap
    dropped: Counter[str] = field(default_factory=Counter)  # listed, not written: why
    excluded: Counter[str] = field(default_factory=Counter)  # cannot be written: why
    excluded_items: list[dict[str, str]] = field(default_factory=list)
    verdicts: Counter[str] = field(default_factory=Counter)  # every record's verdict
    lastmod_dropped: int = 0  # a listing's lastmod that is no W3C datetime
    alternates_dropped: int = 0  # hreflang alternates on another host
    unreadable: int = 0  # inventory lines that are no record (a torn line, a wrong type)

    def as_dict(self) -> dict[str, Any]:
        return {
            "kept": self.kept,
            "added": self.added,
            "dropped": {"count": sum(self.dropped.values()), **dict(self.dropped.most_common())},
            "excluded": {
                "count": sum(self.excluded.values()),
                "reasons": dict(self.excluded.most_common()),
                "items": self.excluded_items,
            },
            "verdicts": dict(self.verdicts.most_common()),
            "lastmod_dropped": self.lastmod_dropped,
            "alternates_dropped": self.alternates_dropped,
            **({"unreadable": self.unreadable} if self.unreadable else {}),
        }


@dataclass
class Written:
    """What ``write_sitemaps`` wrote."""

    parts: list[Path]
    index: Path
    urls: int
    changes: Changes
    changes_path: Path


class _PartWriter:
    """Writes ``sitemap-N.xml(.gz)`` files, a new one at the protocol's limits. The caller
    (``_write_entries``) keeps the current part's URL and byte counts and its buffer of
    entries, so a URL costs no method call here; it hands the buffer over every ``BATCH``
    entries (``write``) and when the part is full (``next_part``), so memory stays at one
    batch whatever the part's size."""

    BATCH = 2048

    def __init__(self, out: Path, gzipped: bool, max_urls: int, max_bytes: int):
        self.out = out
        self.gzipped = gzipped
        self.max_urls = max_urls
        self.max_bytes = max_bytes
        self.parts: list[Path] = []
        self._file: IO[bytes] | None = None
        self.total = 0

    def _open(self) -> None:
        name = f"sitemap-{len(self.parts) + 1}.xml" + (".gz" if self.gzipped else "")
        path = self.out / name
        self.parts.append(path)
        raw = path.open("wb")
        self._file = (
            gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0)
            if (self.gzipped)
            else raw
        )
        self._raw = raw
        self._file.write(_HEAD)

    def write(self, entries: list[str]) -> None:
        """The buffered entries of the current part, out in one write."""
        if entries:
            assert self._file is not None
            self._file.write("".join(entries).encode())
            self.total += len(entries)

    def next_part(self, entries: list[str]) -> int:
        """The current part ends (its buffered ``entries`` written); the next one opens.
        Its starting byte count (head and foot)."""
        self.write(entries)
        self._close()
        self._open()
        return len(_HEAD) + len(_FOOT)

    def _close(self) -> None:
        if self._file is not None:
            self._file.write(_FOOT)
            self._file.close()
            if self._file is not self._raw:
                self._raw.close()
            self._file = None

    def close(self, entries: list[str]) -> list[Path]:
        self.write(entries)
        if self._file is None and not self.parts:
            self._open()  # no URL: one empty urlset, so the index names a valid file
        self._close()
        return self.parts


def url_entry(loc: str, lastmod: str | None, alternates: list[tuple[str, str]]) -> str:
    """One ``<url>`` element (escaped values in)."""
    text = f"<url><loc>{loc}</loc>"
    if lastmod:
        text += f"<lastmod>{lastmod}</lastmod>"
    for hreflang, href in alternates:
        text += f'<xhtml:link rel="alternate" hreflang="{hreflang}" href="{href}"/>'
    return text + "</url>\n"


def index_document(locs: list[str], lastmod: str) -> bytes:
    """``sitemap_index.xml``: one ``<sitemap>`` per part."""
    rows = "".join(
        f"<sitemap><loc>{escape(loc)}</loc><lastmod>{lastmod}</lastmod></sitemap>\n" for loc in locs
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<sitemapindex xmlns="{SITEMAP_NS}">\n{rows}</sitemapindex>\n'
    ).encode()


FIELDS = (
    "url",
    "flags",
    "status",
    "redirected_to",
    "refusal",
    "canonical",
    "sitemap",
    "sources",
    "lastmod",
    "last_modified",
    "alternates",
)
"""What the writer reads of a record (``verdict_of``'s fields, the listing, the dates and
the alternates); the rest of a feed line is skipped undecoded."""


class _Fields:
    """A record's ``FIELDS`` from a line json decoded (None where absent)."""

    __slots__ = FIELDS

    def __init__(self, rec: dict[str, Any]):
        for name in FIELDS:
            setattr(self, name, rec.get(name))


if msgspec is not None:

    class _Decoded(msgspec.Struct, gc=False):
        """A record's ``FIELDS`` as msgspec decodes them: the same values json.loads
        gives, or an error (a line msgspec refuses goes to json: NaN, a lone surrogate,
        a number out of a float's range, a byte-order mark)."""

        url: Any = None
        flags: Any = None
        status: Any = None
        redirected_to: Any = None
        refusal: Any = None
        canonical: Any = None
        sitemap: Any = None
        sources: Any = None
        lastmod: Any = None
        last_modified: Any = None
        alternates: Any = None

    _DECODER = msgspec.json.Decoder(_Decoded)


def read_fields(path: Path, fast: bool = True) -> Iterator[Any]:
    """Each inventory line's ``FIELDS`` (attributes), a line at a time: msgspec decodes
    the common line (``fast``), ``json.loads`` any line msgspec refuses; a line that is no
    JSON object (a torn last line) gives None (counted: ``Changes.unreadable``)."""
    decode = _DECODER.decode if (fast and msgspec is not None) else None
    refused = (msgspec.DecodeError,) if msgspec is not None else ()
    loads = json.loads
    with path.open("rb") as lines:
        for line in lines:
            if len(line) <= 1:
                continue
            if decode is not None:
                try:
                    yield decode(line)
                    continue
                except refused:
                    pass
            try:
                rec = loads(line)
            except (ValueError, RecursionError):
                rec = None
            yield _Fields(rec) if isinstance(rec, dict) else None


def finished_run(folder: Path) -> dict[str, Any]:
    """The last run of the folder's crawl log, when it finished (``FINISHED``); else
    ``RunFolderError`` saying what is missing."""
    log = folder / CRAWL_LOG
    if not folder.is_dir():
        raise RunFolderError(f"{folder}: no such folder")
    if not log.is_file():
        raise RunFolderError(f"{folder}: no {CRAWL_LOG} (no run wrote to this folder)")
    try:
        runs = json.loads(log.read_text(encoding="utf-8")).get("runs") or []
    except (ValueError, OSError, AttributeError) as exc:
        raise RunFolderError(f"{log}: not a crawl log ({exc})") from None
    if not isinstance(runs, list) or not all(isinstance(r, dict) for r in runs):
        raise RunFolderError(f"{log}: not a crawl log (its runs are no list of records)")
    if not runs:
        raise RunFolderError(f"{log}: no run recorded")
    run = runs[-1]
    status = run.get("status")
    if status not in FINISHED:
        raise RunFolderError(
            f"{folder}: the last run did not finish (status {status}); a sitemap is written "
            f"from a {' or '.join(FINISHED)} run"
        )
    return run


def run_site(run: dict[str, Any], folder: Path) -> str:
    """The site (an http(s) origin or URL) a finished run walked; ``RunFolderError`` when
    the run names none."""
    site = (run.get("discovery") or {}).get("site") or (run.get("input") or {}).get("url")
    if not isinstance(site, str) or urlsplit(site).scheme not in ("http", "https"):
        raise RunFolderError(f"{folder}: the run names no site (an http(s) URL): {site!r}")
    return site


def check_base(base: str, site: str, cross_origin: bool) -> str:
    """The index's base URL, ending in ``/``; ``ValueError`` when it is no http(s) URL, or
    on another origin than the site without ``cross_origin``."""
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"--base {base!r}: expected an http(s) URL")
    base = encoded(base if base.endswith("/") else base + "/")
    if not cross_origin and origin(base) != origin(site):
        raise ValueError(
            f"--base {base}: another origin than the site ({origin(site)}); a sitemap may "
            "list only URLs of its own host, unless that host's robots.txt names it "
            "(Sitemap:) — give --cross-origin if it does"
        )
    return base


def write_sitemaps(
    inventory: Path,
    out: Path,
    site: str,
    base: str,
    *,
    gzipped: bool = False,
    include_unfetched: bool = False,
    max_urls: int = MAX_URLS,
    max_bytes: int = MAX_BYTES,
    now: datetime | None = None,
    fast: bool = True,
) -> Written:
    """Write the sitemap set of ``inventory`` (a feed in JSON lines) into ``out``;
    ``site`` the site's origin, ``base`` the URL the parts are served under (checked:
    ``check_base``). ``fast=False`` decodes every line with json (what msgspec decodes
    must write the same bytes: ``tests/output/test_sitemap_writer.py``)."""
    out.mkdir(parents=True, exist_ok=True)
    # The index goes first and comes back last (renamed into place): a writer killed
    # half-way leaves parts no index names, never an index naming parts half written.
    (out / INDEX_NAME).unlink(missing_ok=True)
    for old in (*out.glob("sitemap-*.xml"), *out.glob("sitemap-*.xml.gz")):
        old.unlink()  # a part a larger earlier set left would be named by nothing
    site_origin = origin(encoded(site))
    parts = _PartWriter(out, gzipped, max_urls, max_bytes)
    changes = Changes()
    body = out / "changes.txt.part"
    with body.open("w", encoding="utf-8", errors="backslashreplace") as lines:
        _write_entries(
            read_fields(inventory, fast), site_origin, include_unfetched, parts, changes, lines
        )
    written = parts.parts
    changes_path = out / "changes.txt"
    _write_changes(changes_path, body, changes, parts.total, len(written))
    (out / "changes.json").write_text(
        json.dumps({"urls": parts.total, "parts": len(written), **changes.as_dict()}, indent=1)
        + "\n",
        encoding="utf-8",
    )
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    index = out / INDEX_NAME
    partial = out / (INDEX_NAME + ".part")
    partial.write_bytes(index_document([base + p.name for p in written], stamp))
    partial.replace(index)  # last: the set is whole when the index names it
    return Written(written, index, parts.total, changes, changes_path)


def _write_entries(
    records: Iterator[Any],
    site_origin: str,
    include_unfetched: bool,
    parts: _PartWriter,
    changes: Changes,
    lines: IO[str],
) -> None:
    """The loop of ``write_sitemaps``, one pass over the records: each record's verdict
    counted, its ``<url>`` entry buffered for the current part, its ``changes.txt`` line
    buffered. Written for speed (a 1M-URL inventory in a few seconds): locals for what
    each URL reads, the common URL (ASCII, printable, nothing to escape) takes no call."""
    prefix = site_origin + "/"  # the inventory's URLs are normalized: a prefix says it
    verdicts: dict[str, int] = {}
    dropped = changes.dropped
    excluded = changes.excluded
    pending: list[str] = []  # changes.txt lines
    buf: list[str] = []  # the current part's entries not yet written
    count = max_urls = parts.max_urls  # a full part: the first entry opens one
    used = max_bytes = parts.max_bytes
    batch = parts.BATCH
    longest, shortest = MAX_LOC, MIN_LOC
    kept = added = indexable = 0
    dates: dict[str, str | None] = {}  # lastmod as listed: as written

    def drop(url: str, why: str) -> None:
        """A listed URL the written set leaves out: a ``-`` line of changes.txt."""
        dropped[why] += 1
        pending.append(f"- {url}\t{why}\n")
        if len(pending) >= batch:
            lines.write("".join(pending))
            pending.clear()

    for rec in records:
        if rec is None:
            changes.unreadable += 1
            continue
        url = rec.url
        if url.__class__ is not str:
            continue
        flags = rec.flags
        if (
            not flags
            and rec.status == 200
            and rec.redirected_to is None
            and rec.refusal is None
            and rec.canonical is None
        ):
            # the common page: what verdict_of says, without the call
            if indexable:
                indexable += 1
            else:
                indexable = verdicts[INDEXABLE] = 1  # its place in the counts' order
            was_listed = rec.sitemap or rec.sources
        else:
            try:
                verdict = verdict_of(
                    flags, rec.status, rec.redirected_to, rec.refusal, rec.canonical
                )
            except TypeError:  # a field of another type than the walk writes
                changes.unreadable += 1
                continue
            if verdict == INDEXABLE:
                if indexable:
                    indexable += 1
                else:
                    indexable = verdicts[INDEXABLE] = 1
            else:
                verdicts[verdict] = verdicts.get(verdict, 0) + 1
            was_listed = rec.sitemap or rec.sources
            if verdict != INDEXABLE and not (
                include_unfetched and verdict == UNFETCHED and was_listed
            ):
                if was_listed:
                    drop(url, verdict)
                continue
        why = None
        if url.isascii() and url.isprintable() and " " not in url:
            loc = url
        else:
            try:
                loc = encoded(url)
            except ValueError:  # a lone surrogate (no UTF-8), a port that is no number
                loc, why = "", "unencodable"
        if why is None:
            if not loc.startswith(prefix) and origin(loc) != site_origin:
                why = "other_host"
            else:
                length = len(loc)
                if length > longest:
                    why = "too_long"
                elif length < shortest:
                    why = "too_short"
        if why is not None:
            excluded[why] += 1
            if len(changes.excluded_items) < LIST_CAP:
                changes.excluded_items.append({"url": _printable(url), "reason": why})
            if was_listed:
                drop(url, why)
            continue
        raw = rec.lastmod
        lastmod = dates.get(raw) if raw.__class__ is str else None
        if lastmod is None:
            if raw.__class__ is str and raw not in dates:
                lastmod = dates[raw] = xsd_lastmod(raw)
                if len(dates) > 4096:  # a site's lastmods repeat; a bound all the same
                    dates.clear()
            if lastmod is None:
                if raw:
                    changes.lastmod_dropped += 1
                raw = rec.last_modified  # no listing's: the fetched page's Last-Modified
                lastmod = xsd_lastmod(raw) if raw.__class__ is str else None
        if "&" in loc or "'" in loc or "<" in loc or ">" in loc or '"' in loc:  # ~ escape()
            loc = loc.translate(_ESCAPES)
        if rec.alternates:
            entry = url_entry(
                loc, lastmod, _alternates(rec.alternates, prefix, site_origin, changes)
            )
        elif lastmod:
            entry = f"<url><loc>{loc}</loc><lastmod>{lastmod}</lastmod></url>\n"
        else:
            entry = f"<url><loc>{loc}</loc></url>\n"
        size = len(entry) if entry.isascii() else len(entry.encode())
        if count >= max_urls or used + size > max_bytes:
            used = parts.next_part(buf)
            buf = []
            count = 0
        elif len(buf) >= batch:
            parts.write(buf)
            buf = []
        buf.append(entry)
        count += 1
        used += size
        if was_listed:
            kept += 1
        else:
            added += 1
            pending.append(f"+ {url}\n")  # inline: a line for every page no sitemap listed
            if len(pending) >= batch:
                lines.write("".join(pending))
                pending.clear()
    lines.write("".join(pending))
    changes.kept, changes.added = kept, added
    if indexable:
        verdicts[INDEXABLE] = indexable
    parts.close(buf)
    changes.verdicts.update(verdicts)


def _alternates(
    alts: Any, prefix: str, site_origin: str, changes: Changes
) -> list[tuple[str, str]]:
    """A record's hreflang alternates of the same site, escaped; the others counted."""
    kept = []
    for alt in alts if isinstance(alts, list) else ():
        if not isinstance(alt, dict):
            continue
        href, hreflang = alt.get("href"), alt.get("hreflang")
        if not (isinstance(href, str) and isinstance(hreflang, str)):
            continue
        try:
            href = encoded(href)
        except ValueError:  # UnicodeError too
            href = ""
        same = href.startswith(prefix) or origin(href) == site_origin
        if not href or not same or len(href) > MAX_LOC:
            changes.alternates_dropped += 1
            continue
        kept.append((escape(hreflang), escape(href)))
    return kept


def _printable(url: str) -> str:
    """``url`` as a line can print it (a lone surrogate backslash-escaped)."""
    try:
        url.encode()
    except UnicodeError:
        return url.encode("utf-8", "backslashreplace").decode()
    return url


def summary_lines(changes: Changes, urls: int, parts: int) -> list[str]:
    """What the command prints, and ``changes.txt`` opens with."""
    dropped = sum(changes.dropped.values())
    why = ", ".join(f"{n:,} {r.replace('_', ' ')}" for r, n in changes.dropped.most_common())
    lines = [
        f"Sitemap: {urls:,} URLs in {parts} file(s); against the site's sitemaps: "
        f"{changes.added:,} added, {dropped:,} dropped, {changes.kept:,} kept",
    ]
    if dropped:
        lines.append(f"Dropped (listed, not indexable or not writable): {why}")
    excluded = sum(changes.excluded.values())
    if excluded:
        what = ", ".join(f"{n:,} {r.replace('_', ' ')}" for r, n in changes.excluded.most_common())
        examples = ", ".join(i["url"][:120] for i in changes.excluded_items[:3])
        lines.append(f"Left out, cannot be written in a sitemap: {what} (e.g. {examples})")
    if changes.unreadable:
        lines.append(
            f"Skipped {changes.unreadable:,} inventory line(s) that are no record "
            "(no JSON object, or a field of another type than the walk writes)"
        )
    return lines


def _write_changes(path: Path, body: Path, changes: Changes, urls: int, parts: int) -> None:
    """``changes.txt``: the summary lines, then the URL lines (``+ url`` added,
    ``- url<TAB>reason`` dropped), copied from the part file written while reading."""
    with path.open("w", encoding="utf-8") as out:
        for line in summary_lines(changes, urls, parts):
            out.write(f"# {line}\n")
        with body.open(encoding="utf-8") as lines:
            for line in lines:
                out.write(line)
    body.unlink()
