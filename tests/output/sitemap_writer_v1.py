"""The sitemap writer as it was before its fast path (``discovery_crawler/output/
sitemap_writer.py`` at d06fb8d, json.loads and one write per URL), frozen: the oracle
``test_sitemap_writer_fast.py`` compares today's output with, byte for byte."""

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

from discovery_crawler.indexing import INDEXABLE, UNFETCHED, indexability_of, listed

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
    r"(?:[Tt ](\d{2}:\d{2})(:\d{2}(?:\.\d+)?)?\s*(Z|z|[+-]\d{2}:?\d{2})?)?$"
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
    """Writes ``sitemap-N.xml(.gz)`` files, a new one at the protocol's limits."""

    def __init__(self, out: Path, gzipped: bool, max_urls: int, max_bytes: int):
        self.out = out
        self.gzipped = gzipped
        self.max_urls = max_urls
        self.max_bytes = max_bytes
        self.parts: list[Path] = []
        self._file: IO[bytes] | None = None
        self._urls = 0
        self._bytes = 0
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
        self._urls = 0
        self._bytes = len(_HEAD) + len(_FOOT)

    def _close(self) -> None:
        if self._file is not None:
            self._file.write(_FOOT)
            self._file.close()
            if self._file is not self._raw:
                self._raw.close()
            self._file = None

    def add(self, entry: bytes) -> None:
        if (
            self._file is None
            or self._urls >= self.max_urls
            or self._bytes + len(entry) > self.max_bytes
        ):
            self._close()
            self._open()
        assert self._file is not None
        self._file.write(entry)
        self._urls += 1
        self._bytes += len(entry)
        self.total += 1

    def close(self) -> list[Path]:
        if self._file is None and not self.parts:
            self._open()  # no URL: one empty urlset, so the index names a valid file
        self._close()
        return self.parts


def url_entry(loc: str, lastmod: str | None, alternates: list[tuple[str, str]]) -> bytes:
    """One ``<url>`` element (escaped values in, bytes out)."""
    text = f"<url><loc>{loc}</loc>"
    if lastmod:
        text += f"<lastmod>{lastmod}</lastmod>"
    for hreflang, href in alternates:
        text += f'<xhtml:link rel="alternate" hreflang="{hreflang}" href="{href}"/>'
    return (text + "</url>\n").encode()


def index_document(locs: list[str], lastmod: str) -> bytes:
    """``sitemap_index.xml``: one ``<sitemap>`` per part."""
    rows = "".join(
        f"<sitemap><loc>{escape(loc)}</loc><lastmod>{lastmod}</lastmod></sitemap>\n" for loc in locs
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<sitemapindex xmlns="{SITEMAP_NS}">\n{rows}</sitemapindex>\n'
    ).encode()


def read_records(path: Path) -> Iterator[dict[str, Any]]:
    """The inventory's records, a line at a time (a torn last line is skipped)."""
    loads = json.loads
    with path.open("rb") as lines:
        for line in lines:
            if len(line) > 1:
                try:
                    yield loads(line)
                except ValueError:
                    continue


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
) -> Written:
    """Write the sitemap set of ``inventory`` (a feed in JSON lines) into ``out``;
    ``site`` the site's origin, ``base`` the URL the parts are served under (checked:
    ``check_base``)."""
    out.mkdir(parents=True, exist_ok=True)
    for old in (*out.glob("sitemap-*.xml"), *out.glob("sitemap-*.xml.gz")):
        old.unlink()  # a part a larger earlier set left would be named by nothing
    site_origin = origin(encoded(site))
    prefix = site_origin + "/"  # the inventory's URLs are normalized: a prefix says it
    parts = _PartWriter(out, gzipped, max_urls, max_bytes)
    changes = Changes()
    body = out / "changes.txt.part"
    with body.open("w", encoding="utf-8") as lines:
        for rec in read_records(inventory):
            url = rec.get("url")
            if not isinstance(url, str):
                continue
            verdict = indexability_of(rec)
            changes.verdicts[verdict] += 1
            was_listed = listed(rec)
            wanted = verdict == INDEXABLE or (
                include_unfetched and verdict == UNFETCHED and was_listed
            )
            if not wanted:
                if was_listed:
                    changes.dropped[verdict] += 1
                    lines.write(f"- {url}\t{verdict}\n")
                continue
            loc = encoded(url)
            why = None
            if not loc.startswith(prefix) and origin(loc) != site_origin:
                why = "other_host"
            elif len(loc) > MAX_LOC:
                why = "too_long"
            elif len(loc) < MIN_LOC:
                why = "too_short"
            if why is not None:
                changes.excluded[why] += 1
                if len(changes.excluded_items) < LIST_CAP:
                    changes.excluded_items.append({"url": url, "reason": why})
                if was_listed:
                    changes.dropped[why] += 1
                    lines.write(f"- {url}\t{why}\n")
                continue
            lastmod = xsd_lastmod(rec.get("lastmod"))
            if lastmod is None and rec.get("lastmod"):
                changes.lastmod_dropped += 1
            if lastmod is None:  # no listing's: the fetched page's Last-Modified
                lastmod = xsd_lastmod(rec.get("last_modified"))
            alternates = []
            for alt in rec.get("alternates") or ():
                href, hreflang = alt.get("href"), alt.get("hreflang")
                if not (isinstance(href, str) and isinstance(hreflang, str)):
                    continue
                href = encoded(href)
                same = href.startswith(prefix) or origin(href) == site_origin
                if not same or len(href) > MAX_LOC:
                    changes.alternates_dropped += 1
                    continue
                alternates.append((escape(hreflang), escape(href)))
            parts.add(url_entry(escape(loc), lastmod, alternates))
            if was_listed:
                changes.kept += 1
            else:
                changes.added += 1
                lines.write(f"+ {url}\n")
    written = parts.close()
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    index = out / INDEX_NAME
    index.write_bytes(index_document([base + p.name for p in written], stamp))
    changes_path = out / "changes.txt"
    _write_changes(changes_path, body, changes, parts.total, len(written))
    (out / "changes.json").write_text(
        json.dumps({"urls": parts.total, "parts": len(written), **changes.as_dict()}, indent=1)
        + "\n",
        encoding="utf-8",
    )
    return Written(written, index, parts.total, changes, changes_path)


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
