"""What a crawl's retries add up to: what was retried, how often and why, what recovered,
what failed after its retries, and how long failing hosts were paused.

The retry middleware (``middlewares/retry.py``) fills one ``RetrySummary`` per crawl; it is
the run's ``record.retries`` (the crawl log's ``retries`` section) and one line of the
end-of-run summary::

    Retried 812 requests (1,204 retries: 1,100 × connection refused, 104 × 503 Service
    Unavailable); 812 recovered, 0 failed after retries; host paused 3 times, 21.4 s

Reasons are words: ``connection refused``, ``timed out``, ``503 Service Unavailable``…
(``refusals.failure_reason`` for failed fetches, the status and its phrase for answers).
Memory is bounded: counts by reason, and the first ``list_cap`` requests that failed after
their retries, with their URL.

No Scrapy imports.
"""

from __future__ import annotations

from collections import Counter
from typing import Any


class RetrySummary:
    """Counts of one crawl's retries (module docstring)."""

    def __init__(
        self,
        times: int = 0,
        backoff_base: float = 0.0,
        backoff_max: float = 0.0,
        http_codes: list[int] | None = None,
        list_cap: int = 1000,
    ):
        self.settings: dict[str, Any] = {
            "times": times,
            "backoff_base": backoff_base,
            "backoff_max": backoff_max,
            "http_codes": sorted(http_codes or ()),
        }
        self.list_cap = list_cap
        self.requests = 0  # requests retried at least once
        self.reasons: Counter[str] = Counter()  # retries by reason
        self.recovered = 0  # retried requests that got an answer in the end
        self.failed: Counter[str] = Counter()  # requests that failed after retries, by reason
        self.failed_requests: list[dict[str, Any]] = []
        self.pauses = 0
        self.pause_seconds = 0.0
        self.hosts_given_up: dict[str, int] = {}  # host -> failures in a row when given up

    @property
    def retries(self) -> int:
        return sum(self.reasons.values())

    # -- what the middleware reports --------------------------------------------------
    def retried(self, reason: str, first: bool) -> None:
        """One retry for ``reason``; ``first``: the request's first."""
        self.reasons[reason] += 1
        self.requests += first

    def answered_after_retries(self) -> None:
        self.recovered += 1

    def gave_up(self, url: str, reason: str, retries: int, host_given_up: bool = False) -> None:
        """A request that failed for ``reason`` after ``retries`` retries (none more: they
        were spent, or its host was given up)."""
        self.failed[reason] += 1
        if len(self.failed_requests) < self.list_cap:
            entry: dict[str, Any] = {"url": url, "reason": reason, "retries": retries}
            if host_given_up:
                entry["host_given_up"] = True
            self.failed_requests.append(entry)

    def paused(self, seconds: float) -> None:
        """A failing host was paused ``seconds`` more."""
        self.pauses += 1
        self.pause_seconds += seconds

    def host_given_up(self, host: str, failures: int) -> None:
        self.hosts_given_up[host] = failures

    # -- reports ----------------------------------------------------------------------
    def line(self) -> str:
        """The summary's line, or an empty string when nothing was retried or failed."""
        failed = sum(self.failed.values())
        retries = self.retries
        if not retries and not failed:
            return ""
        if retries:
            reasons = ", ".join(f"{n:,} × {r}" for r, n in self.reasons.most_common())
            noun = "request" if self.requests == 1 else "requests"
            times = "retry" if retries == 1 else "retries"
            line = f"Retried {self.requests:,} {noun} ({retries:,} {times}: {reasons})"
        else:
            line = "Retried no request"
        line += f"; {self.recovered:,} recovered, {failed:,} failed after retries"
        if failed:
            line += " (" + ", ".join(f"{n:,} × {r}" for r, n in self.failed.most_common()) + ")"
        if self.pauses:
            times = "once" if self.pauses == 1 else f"{self.pauses:,} times"
            line += f"; host paused {times}, {self.pause_seconds:.1f} s"
        if self.hosts_given_up:
            hosts = ", ".join(
                f"{host} after {n} failures in a row"
                for host, n in list(self.hosts_given_up.items())[:3]
            )
            more = len(self.hosts_given_up) - 3
            line += f"; gave up on {hosts}" + (f" and {more} more" if more > 0 else "")
        return line

    def as_dict(self) -> dict[str, Any]:
        return {
            "settings": dict(self.settings),
            "requests_retried": self.requests,
            "retries": self.retries,
            "by_reason": dict(self.reasons.most_common()),
            "recovered": self.recovered,
            "failed_after_retries": {
                "count": sum(self.failed.values()),
                "by_reason": dict(self.failed.most_common()),
                "listed": len(self.failed_requests),
                "requests": list(self.failed_requests),
            },
            "host_pauses": self.pauses,
            "host_pause_seconds": round(self.pause_seconds, 3),
            "hosts_given_up": dict(self.hosts_given_up),
        }
