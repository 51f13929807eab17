"""What ``verify`` found for each URL a sitemap names (SPEC §3 ``verify``; seed "webgraph":
"a sitemap count is a claim, not a fact").

Every URL of the inventory that a sitemap names — a ``<loc>``, or a same-site hreflang
alternate — is *advertised*, and gets exactly one verdict, so the counts add up to
advertised:

- ``live``: the listed URL itself answered 2xx, without a redirect (a file or a JavaScript
  shell served with 2xx is live too: the URL exists; its ``refusal`` says what it serves);
- ``redirected``: a 3xx chain (or a meta refresh, seen when a page is fetched with GET)
  took it elsewhere; ``redirected_to`` is where the chain ended, and the detail says what
  that answered (``live``, ``dead``, ``refused``, ``failed``) or why the chain stopped:
  ``loop`` (a URL met again in its own chain), ``too_long`` (``REDIRECT_MAX_TIMES``),
  ``robots`` (robots.txt disallows the target), ``followed`` (union mode: the crawl
  fetches the target as a record of its own);
- ``dead``: 404 or 410 — or another 4xx that is not a wall (400, a 405 to GET too…): the
  URL serves no page;
- ``refused``: robots.txt disallows it for our token (``robots``), the server walls it off
  (``wall``: 401, 403, 429, 451, a block page — a 503 that reads as one too) or sends it
  to a login page that points back (``login``);
- ``failed``: no answer (``timeout``, ``network``) or a server error (``server_error``:
  500, 502, 503, 504…, after their retries): the page may exist, ask again later;
- ``unchecked``: not fetched — a file kind (``document``, ``media``, ``archive``: kept,
  never fetched), ``requires_auth``, over the ``max_pages`` budget (``over_max_pages``),
  or ignored by another component (``ignored``).

The verdict of a record is a function of its fields (``verdict_of``): union mode's page
records and unfetched records are judged that way. The verifier (``crawling/verify.py``)
judges the answer itself (``answer_verdict``) and hands the verdict over on the record
under ``VERDICT_KEY`` (never exported), because some stops (a disallowed redirect target)
leave no field of their own. ``VerifyTally`` counts them as records reach the end of the
pipeline, so only what the inventory keeps is counted, each URL once.

No Scrapy imports.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from discovery_crawler.refusals import WALL_STATUSES
from discovery_crawler.run_record import CappedList
from discovery_crawler.urls.kinds import FILE_KINDS
from discovery_crawler.urls.normalize import twin_key

VERDICTS: tuple[str, ...] = ("live", "redirected", "dead", "refused", "failed", "unchecked")
"""The closed set of verdicts, in the order counts are reported."""

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
# Not a feed field: the verifier's verdict of a record, popped by the tally stage.
VERDICT_KEY = "_verify"
_LISTED_SOURCES = ("sitemap", "alternate")
_LINKED_SOURCES = ("link", "seed")
_UNCHECKED_FLAGS = ("over_max_pages", "over_max_depth", "requires_auth", "junk")


def _answer(status: int | None, refusal_class: str | None) -> tuple[str, str]:
    """(verdict, detail) of one answer that is not a redirect."""
    if refusal_class == "wall":
        return "refused", "wall"
    if refusal_class == "missing":
        return "dead", str(status)
    if refusal_class in ("timeout", "network", "server_error"):
        return "failed", refusal_class
    if status is None:
        return "unchecked", "not_fetched"
    if 200 <= status < 300:
        return "live", refusal_class or "page"  # download, shell: the URL exists
    if status in WALL_STATUSES:
        return "refused", "wall"
    if 400 <= status < 500:
        return "dead", str(status)
    if status >= 500:
        return "failed", "server_error"
    return "failed", f"status {status}"  # a 1xx, or a 3xx with nowhere to go


def answer_verdict(
    status: int | None,
    refusal_class: str | None = None,
    redirected: bool = False,
    stop: str | None = None,
    robots: bool = False,
) -> tuple[str, str]:
    """(verdict, detail) of the answer to a listed URL (module docstring).

    ``status``: the last answer received (the end of a redirect chain; None: none);
    ``refusal_class``: its refusal class (``refusals.classify_response``), if any;
    ``redirected``: the listed URL was sent elsewhere; ``stop``: why the chain stopped
    before an answer (``loop``, ``too_long``, ``robots``, ``followed``); ``robots``:
    robots.txt disallows the listed URL itself.
    """
    if robots and not redirected:
        return "refused", "robots"
    if refusal_class == "login":  # the redirect *is* the wall
        return "refused", "login"
    if redirected:
        if stop is not None:
            return "redirected", stop
        return "redirected", _answer(status, refusal_class)[0]
    return _answer(status, refusal_class)


def unchecked_reason(rec: dict[str, Any]) -> str:
    """Why an advertised record was not fetched (its flags, its kind)."""
    flags = rec.get("flags") or ()
    for flag in _UNCHECKED_FLAGS:
        if flag in flags:
            return flag
    kind = rec.get("kind")
    if kind in FILE_KINDS:
        return kind
    return "not_fetched"


def verdict_of(rec: dict[str, Any]) -> tuple[str, str]:
    """(verdict, detail) of a feed record, from its fields: ``status``, ``refusal``,
    ``redirected_to``, ``flags`` (``robots_disallowed``, ``redirect_loop``,
    ``over_max_redirects``) and, when it was not fetched, ``kind``."""
    flags = rec.get("flags") or ()
    status = rec.get("status")
    refusal = rec.get("refusal")
    refusal_class = refusal.get("class") if isinstance(refusal, dict) else None
    robots = "robots_disallowed" in flags
    redirected = rec.get("redirected_to") is not None or status in REDIRECT_STATUSES
    if status is None and refusal_class is None and not robots and not redirected:
        return "unchecked", unchecked_reason(rec)
    stop = None
    if "redirect_loop" in flags:
        stop = "loop"
    elif "over_max_redirects" in flags:
        stop = "too_long"
    elif redirected and status in REDIRECT_STATUSES:
        stop = "followed"  # the chain's next hop is a record of its own
    return answer_verdict(status, refusal_class, redirected, stop, robots)


def _entry(rec: dict[str, Any], detail: str, extra: dict[str, Any] | None) -> dict[str, Any]:
    """A crawl-log list entry for a record that is not plainly live."""
    entry: dict[str, Any] = {"url": rec["url"], "status": rec.get("status"), "detail": detail}
    if rec.get("redirected_to") is not None:
        entry["to"] = rec["redirected_to"]
    refusal = rec.get("refusal")
    if isinstance(refusal, dict) and refusal.get("reason"):
        entry["reason"] = refusal["reason"]
    elif rec.get("robots_rule"):
        entry["reason"] = f"robots.txt: {rec['robots_rule']}"
    if extra:
        entry.update(extra)
    entry["sitemap"] = rec.get("sitemap")
    return entry


class VerifyTally:
    """The verdicts of a run (``_crawl-log.json`` → ``verify``), counted as records leave
    the pipeline, and what the verifier sent.

    Counts are exact; each verdict other than ``live`` lists its first ``cap`` URLs. In
    union mode (``mode="crawl"``) the crawl's own fetches answer: a page reached by a link
    before any sitemap listed it is kept as (URL, verdict) until the crawl ends, when the
    union tally (``listed``) says whether a sitemap named it — bounded by the pages
    fetched, not by the URLs discovered.
    """

    def __init__(
        self,
        cap: int = 1000,
        mode: str = "fetch",
        method: str = "HEAD",
        host_interval: float = 0.0,
        max_pages: int | None = None,
    ):
        self.mode = mode  # fetch: verify's own requests; crawl: union mode's page fetches
        self.method = method
        self.host_interval = host_interval
        self.max_pages = max_pages
        self.counts: Counter[str] = Counter(dict.fromkeys(VERDICTS, 0))
        self.details: dict[str, Counter[str]] = {v: Counter() for v in VERDICTS}
        self.lists = {v: CappedList(cap) for v in VERDICTS if v != "live"}
        self.queued = 0  # listed URLs handed to the scheduler
        self.returned = 0  # ... whose record the verifier wrote back (answered or refused)
        self.requests: Counter[str] = Counter()  # requests sent, by method
        self.fallbacks: Counter[str] = Counter()  # why a HEAD was asked again with GET
        self.hops = 0  # redirect (and meta refresh) hops followed
        self.listed: Callable[[str], bool] | None = None  # union: a sitemap named this URL
        self._pending: dict[str, tuple[str, str, str, dict[str, Any] | None]] = {}
        self._resolved = False

    @property
    def advertised(self) -> int:
        return sum(self.counts.values())

    @property
    def waiting(self) -> int:
        """Listed URLs handed to the scheduler and not written back: none when the run
        finished; after a run stopped early, URLs missing from the feed."""
        return max(0, self.queued - self.returned)

    def add(self, rec: dict[str, Any], verdict: str, detail: str, extra: Any = None) -> None:
        self.counts[verdict] += 1
        self.details[verdict][detail] += 1
        if verdict != "live":
            self.lists[verdict].append(_entry(rec, detail, extra))

    def observe(self, records: list[dict[str, Any]]) -> bool:
        """Count the advertised records of a batch leaving the pipeline; True when a record
        was changed (union mode: ``live`` set on fetched pages)."""
        changed = False
        for rec in records:
            given = rec.pop(VERDICT_KEY, None)
            source = rec.get("source")
            if given is not None:
                self.add(rec, given[0], given[1], given[2] if len(given) > 2 else None)
                continue
            fetched = rec.get("status") is not None or rec.get("refusal") is not None
            if source in _LISTED_SOURCES:
                verdict, detail = verdict_of(rec)
                if fetched and self.mode == "crawl":
                    rec["live"] = verdict == "live"
                    changed = True
                self.add(rec, verdict, detail)
            elif self.mode == "crawl" and source in _LINKED_SOURCES and fetched:
                verdict, detail = verdict_of(rec)
                rec["live"] = verdict == "live"
                changed = True
                # reached by a link first: listed too? Known once the crawl is over.
                key = twin_key(rec["url"])
                if key not in self._pending:
                    self._pending[key] = (verdict, detail, rec["url"], _entry(rec, detail, None))
        return changed

    def resolve(self) -> None:
        """Union mode, when the crawl is over: count the linked pages a sitemap listed."""
        if self._resolved or self.listed is None:
            return
        self._resolved = True
        pending, self._pending = self._pending, {}
        for verdict, detail, url, entry in pending.values():
            if not self.listed(url):
                continue
            self.counts[verdict] += 1
            self.details[verdict][detail] += 1
            if verdict != "live":
                self.lists[verdict].append(entry)

    def expected_seconds(self, urls: int) -> float:
        """Seconds ``urls`` listed URLs take at one request per ``host_interval`` (the
        least: redirects, GET fallbacks, Crawl-delay and Retry-After add to it)."""
        if self.max_pages:
            urls = min(urls, self.max_pages)
        return urls * self.host_interval

    def line(self) -> str:
        """``Verify (12 advertised): 5 live, 4 redirected, 2 dead, 1 refused, …``"""
        self.resolve()
        parts = ", ".join(f"{self.counts[v]:,} {v}" for v in VERDICTS)
        how = "HEAD, GET where refused" if self.method == "HEAD" else self.method
        if self.mode == "crawl":
            how = "answered by the crawl's own fetches"
        return f"Verify ({self.advertised:,} advertised; {how}): {parts}"

    def detail_lines(self) -> list[str]:
        """One line per verdict that has details worth naming (not ``live``)."""
        self.resolve()
        lines = []
        for verdict in VERDICTS[1:]:
            details = self.details[verdict]
            if not details:
                continue
            text = ", ".join(f"{n:,} {d}" for d, n in details.most_common())
            examples = ", ".join(e["url"] for e in self.lists[verdict].items[:3])
            lines.append(f"  {verdict}: {text} (e.g. {examples})")
        if self.mode == "fetch" and self.requests:
            sent = ", ".join(f"{n:,} {m}" for m, n in sorted(self.requests.items()))
            why = ", ".join(f"{n:,} after {w}" for w, n in self.fallbacks.most_common())
            lines.append(
                f"  requests: {sent}"
                + (f"; GET fallbacks: {why}" if why else "")
                + (f"; {self.hops:,} redirect hops" if self.hops else "")
            )
        return lines

    def as_dict(self) -> dict[str, Any]:
        self.resolve()
        out: dict[str, Any] = {
            "mode": self.mode,
            "method": self.method,
            "advertised": self.advertised,
            "counts": {v: self.counts[v] for v in VERDICTS},
            "details": {v: dict(self.details[v].most_common()) for v in VERDICTS},
            "queued": self.queued,
            "waiting": self.waiting,
            "requests": dict(sorted(self.requests.items())),
            "head_fallbacks": dict(self.fallbacks.most_common()),
            "redirect_hops": self.hops,
            "max_pages": self.max_pages,
            "host_interval": self.host_interval,
            "expected_seconds": round(self.expected_seconds(self.queued), 1),
        }
        for verdict, listed in self.lists.items():
            out[verdict] = listed.as_dict()
        return out
