"""The scope estimate (SPEC §9): what a discover run will face, from robots.txt and the top
sitemap only — no recursion. Pure functions and a record; the ``estimate`` spider
(``spiders/estimate.py``) fetches, this module judges.

- **URLs**: a flat urlset (or text/RSS/Atom sitemap) gives the exact count; an index of
  *n* sub-sitemaps gives ``[n·1,000, n·50,000]`` (50,000 is the protocol's ceiling per
  sitemap; 1,000 a floor seen on real sites). Sitemaps robots.txt advertises beyond the
  one read count like sub-sitemaps (each ``[1,000, 50,000]``), and the record says so.
- **Languages**: hreflang alternates (``xhtml:link``) of the top sitemap, and path
  prefixes — a first path segment that is an ISO 639-1 code with an optional region
  (``/en/``, ``/de-de/``, ``/pt_BR/``, ``/es-419/``) — of its URLs and sub-sitemaps;
  each with its evidence counts.
- **Expected duration** of a discover walk, for the low and the high URL count::

      documents    = 2 (robots.txt, top sitemap) + sub-sitemaps + unread advertised
      per_document = max(HOST_INTERVAL, fetch_seconds / SITEMAP_CONCURRENCY)
      seconds      = documents × per_document + urls / ESTIMATE_URLS_PER_SECOND

  ``fetch_seconds`` is the top sitemap's measured download time: documents are fetched
  ``SITEMAP_CONCURRENCY`` at a time, but never faster than one per ``HOST_INTERVAL``
  from one host; ``ESTIMATE_URLS_PER_SECOND`` is the walk's processing rate.
- **Verify** (``-a verify=1``): one request per listed URL at ``HOST_INTERVAL``, the
  least it adds (redirects, GET fallbacks, Crawl-delay add more)::

      verify_seconds = urls × HOST_INTERVAL

- **Transport**: ``fetch``, or ``browser`` when robots.txt or a sitemap address tried
  answered 403 or timed out (a wall a plain client will meet again).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

PER_SITEMAP_LOW = 1_000
PER_SITEMAP_HIGH = 50_000  # the sitemap protocol's ceiling
BROWSER_STATUSES = frozenset({403})

# ISO 639-1: the closed list of two-letter language codes.
ISO_639_1 = frozenset(
    """aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu
    cv cy da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho
    hr ht hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv
    kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr
    nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq
    sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh
    yi yo za zh zu""".split()  # noqa: SIM905 - the list as the standard prints it
)
_LANGUAGE_SEGMENT = re.compile(r"([a-z]{2})(?:[-_]([a-z]{2}|\d{3}))?", re.IGNORECASE)
_HREFLANG = re.compile(
    r"([a-z]{2})(?:[-_][a-z]{4})?(?:[-_]([a-z]{2}|\d{3}))?(?:[-_].*)?", re.IGNORECASE
)


def _code(language: str, region: str | None) -> str | None:
    language = language.lower()
    if language not in ISO_639_1:
        return None
    return f"{language}-{region.lower()}" if region else language


def path_language(url: str) -> str | None:
    """The language a URL's first path segment names (``/de-de/…`` → ``de-de``), or None."""
    start = url.find("/", url.find("//") + 2) if "//" in url else 0
    if start < 0:
        return None
    segment = url[start + 1 :].partition("/")[0]
    if not 2 <= len(segment) <= 6 or not url.startswith("/", start + 1 + len(segment)):
        return None  # a language prefix is a folder: /en/..., not /en or /enterprise/
    found = _LANGUAGE_SEGMENT.fullmatch(segment)
    return _code(found.group(1), found.group(2)) if found else None


def hreflang_language(value: str | None) -> str | None:
    """``en-US`` → ``en-us``, ``zh-Hant-TW`` → ``zh-tw``; ``x-default`` and others → None."""
    if not value:
        return None
    found = _HREFLANG.fullmatch(value.strip())
    return _code(found.group(1), found.group(2)) if found else None


@dataclass
class Languages:
    """Language evidence: counts per code, from hreflang and from path prefixes."""

    hreflang: Counter[str] = field(default_factory=Counter)
    path: Counter[str] = field(default_factory=Counter)

    def add_url(self, url: str) -> None:
        code = path_language(url)
        if code is not None:
            self.path[code] += 1

    def add_alternates(self, alternates: Any) -> None:
        for hreflang, href in alternates or ():
            code = hreflang_language(hreflang)
            if code is not None:
                self.hreflang[code] += 1
            self.add_url(href)

    def codes(self) -> list[str]:
        """Codes seen, most evidence first."""
        return [code for code, _ in (self.hreflang + self.path).most_common()]

    def as_dict(self) -> dict[str, dict[str, int]]:
        return {
            code: {"hreflang": self.hreflang[code], "path": self.path[code]}
            for code in self.codes()
        }


def url_range(urls: int, sub_sitemaps: int, unread: int = 0) -> tuple[int, int, bool]:
    """(low, high, exact): page URLs listed in the sitemap read, plus 1,000–50,000 per
    sub-sitemap and per advertised sitemap not read."""
    unknown = sub_sitemaps + unread
    return urls + unknown * PER_SITEMAP_LOW, urls + unknown * PER_SITEMAP_HIGH, unknown == 0


def expected_seconds(
    urls: int,
    documents: int,
    host_interval: float,
    concurrency: int,
    fetch_seconds: float,
    urls_per_second: float,
) -> float:
    """Seconds a discover walk of ``urls`` URLs in ``documents`` documents takes (module doc)."""
    per_document = max(host_interval, fetch_seconds / max(1, concurrency))
    return documents * per_document + urls / max(1.0, urls_per_second)


def verify_seconds(urls: int, host_interval: float) -> float:
    """Seconds ``-a verify=1`` adds for ``urls`` listed URLs, at the least (module doc)."""
    return urls * max(0.0, host_interval)


def transport_for(answers: list[tuple[str, int | None, str | None]]) -> tuple[str, str]:
    """(``fetch`` | ``browser``, reason) from (what, HTTP status, error kind) of each fetch."""
    for what, status, error in answers:
        if status in BROWSER_STATUSES:
            return "browser", f"{what} answered HTTP {status}"
        if error == "timeout":
            return "browser", f"{what} timed out"
    if answers and all(status is None for _, status, _ in answers):
        what, _, error = answers[0]
        return "fetch", f"nothing answered ({what}: {error}); is the site reachable?"
    return "fetch", "robots.txt and the sitemap answered a plain HTTP client"


def human_duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def summary_lines(estimate: dict[str, Any]) -> list[str]:
    """A short human summary of an estimate record (``estimate.json``)."""
    lines = [f"Estimate for {estimate['url']}"]
    robots = estimate["robots"]
    state = f"HTTP {robots['status']}" if robots.get("status") is not None else robots.get("error")
    lines.append(
        f"  robots.txt: {state}; {len(robots.get('sitemaps') or [])} sitemap(s) advertised"
    )
    sitemap = estimate.get("sitemap")
    if sitemap:
        lines.append(
            f"  top sitemap: {sitemap['url']} ({sitemap['format']}, {sitemap['urls']:,} URLs,"
            f" {sitemap['sub_sitemaps']:,} sub-sitemaps)"
        )
    else:
        tried = ", ".join(a["url"] for a in estimate["attempts"]) or "none"
        lines.append(f"  no sitemap found (tried: {tried})")
    low_high = estimate["urls"]
    if low_high is None:
        lines.append("  URLs: unknown (no sitemap; a link crawl would find them)")
    elif estimate["exact"]:
        lines.append(f"  URLs: {low_high[0]:,} (exact: {estimate['basis']})")
    else:
        lines.append(f"  URLs: {low_high[0]:,} – {low_high[1]:,} ({estimate['basis']})")
    languages = estimate["languages"]
    lines.append(f"  languages: {', '.join(languages) if languages else 'none detected'}")
    duration = estimate["duration_seconds"]
    if duration is not None:
        low, high = (human_duration(s) for s in duration)
        span = low if low == high else f"{low} – {high}"
        lines.append(f"  expected duration: {span}")
    verify = estimate.get("verify_seconds")
    if verify is not None:
        low, high = (human_duration(s) for s in verify)
        span = low if low == high else f"{low} – {high}"
        lines.append(f"  with -a verify=1: {span} more (one request per listed URL)")
    lines.append(f"  transport: {estimate['transport']} ({estimate['transport_reason']})")
    return lines
