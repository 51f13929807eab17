"""Where a request waits for its host's turn, and the in-process budget of turns.

The per-host interval is kept at the moment a request is sent: the download handler
(``handlers.py``) asks ``HostTurns.turn`` first, and the request goes only once its host's
turn is taken — the last send an interval ago or more (``HOST_INTERVAL``, the larger
robots Crawl-delay, a failing host's pause), no Retry-After or back-off hold still
running. Nothing of Scrapy's downloader slot is steered: its queue hands requests to the
handler as it always does, and they wait here, each host in the order they came.

The turns themselves are kept by a budget: ``LocalBudget`` (this process, the monotonic
clock) or ``distributed.interval.RedisBudget`` (every worker of a job, Redis ``TIME``),
chosen by ``HOST_INTERVAL_BUDGET``. A budget answers one question atomically — may a
request to this host be sent now (the turn is then taken), else how long to wait — so
the interval is one component wherever its budget lives.

One timer per host with requests waiting; a request that finds its host idle and its turn
due goes at once, with no timer and no Deferred (a crawl without an interval pays for
nothing but a dictionary look-up). A failing host (``HostIntervals.failing``) sends one
request at a time: the next one waits until the probe on its way is answered, as well as
for its pause.
"""

from __future__ import annotations

import math
from collections import deque
from time import monotonic
from typing import TYPE_CHECKING, Any, Protocol

from scrapy.utils.asyncio import call_later
from twisted.internet.defer import Deferred

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler

    from discovery_crawler.extensions.host_intervals import HostIntervals

# A hold ending sooner than this is over: the turn is claimed at once.
_NOW = 0.0005


class HostBudget(Protocol):
    """Where the hosts' turns are kept (``HOST_INTERVAL_BUDGET``)."""

    #: Each response anchors its host's interval (``anchor``): the next turn is an
    #: interval after the answer, not after the send (the sends of several processes).
    answers_anchor: bool

    def claim(self, host: str, interval: float, spacing: float) -> float:
        """Take ``host``'s turn if it is due — its last send ``max(interval, spacing)``
        seconds ago or more, and no hold running — and return 0; else the seconds still
        to wait. ``interval`` may be remembered for the host (the largest stays: a worker
        that read robots.txt spaces them all); ``spacing`` (a failing host's pause) is
        this caller's alone."""
        ...

    def hold(self, host: str, seconds: float) -> None:
        """No turn of ``host`` for ``seconds`` from now (a Retry-After, a back-off pause);
        a shorter hold never shortens a longer one."""
        ...

    def anchor(self, host: str, ago: float = 0.0) -> None:
        """Count ``host``'s last send as ``ago`` seconds before now, unless one was later."""
        ...


class LocalBudget:
    """The turns of this process's hosts, on the monotonic clock. Holds are kept by the
    throttle's own ``HostIntervals`` (``not_before``), which ``HostTurns`` reads first.
    One loop orders this process's sends: the interval counts from each send (and from a
    host's first answer, whose request set up the connection)."""

    answers_anchor = False

    def __init__(self, clock: Callable[[], float] = monotonic) -> None:
        self.clock = clock
        self.last: dict[str, float] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls()

    def claim(self, host: str, interval: float, spacing: float) -> float:
        now = self.clock()
        last = self.last.get(host)
        if last is not None:
            wait = last + max(interval, spacing) - now
            if wait > 0:
                return wait
        self.last[host] = now
        return 0.0

    def hold(self, host: str, seconds: float) -> None:
        return None

    def anchor(self, host: str, ago: float = 0.0) -> None:
        at = self.clock() - max(0.0, ago)
        if at > self.last.get(host, -math.inf):
            self.last[host] = at


class _Line:
    """One host's waiting requests, its timer, and its requests sent and not yet done."""

    __slots__ = ("sending", "timer", "waiting")

    def __init__(self) -> None:
        self.waiting: deque[Deferred[float]] = deque()
        self.sending: set[Request] = set()
        self.timer: Any = None


class HostTurns:
    """Requests wait here for their host's turn (``turn``), in the order they came."""

    def __init__(
        self,
        intervals: HostIntervals,
        budget: HostBudget,
        clock: Callable[[], float] = monotonic,
        later: Callable[..., Any] = call_later,
    ):
        self.intervals = intervals
        self.budget = budget
        self.clock = clock
        self.later = later  # (seconds, function, *args) -> something with .cancel()
        self.lines: dict[str, _Line] = {}

    def turn(self, host: str, request: Request) -> Deferred[float] | None:
        """None: ``request`` goes now (its host's turn is taken). Else a Deferred fired
        with the moment its turn was taken (``clock``), or failed with what the budget
        raised (Redis lost)."""
        line = self.lines.get(host)
        if line is None:
            line = self.lines[host] = _Line()
        if not line.waiting and line.timer is None and self._due(host, line) <= 0:
            line.sending.add(request)
            return None
        waiter: Deferred[float] = Deferred()
        line.waiting.append(waiter)
        waiter.addCallback(_sent, line, request)
        self._next(host)
        return waiter

    def done(self, host: str, request: Request) -> None:
        """``request``'s download ended (answered, failed or cancelled)."""
        line = self.lines.get(host)
        if line is None:
            return
        line.sending.discard(request)
        if line.waiting:
            if line.timer is None:
                self._next(host)  # a failing host's next probe, once this one is done
        elif not line.sending and line.timer is None:
            del self.lines[host]

    def changed(self, host: str) -> None:
        """The host's interval or holds moved (Crawl-delay, Retry-After, a pause, an
        answer): its waiting requests are timed again."""
        line = self.lines.get(host)
        if line is None or not line.waiting:
            return
        if line.timer is not None:
            line.timer.cancel()
            line.timer = None
        self._next(host)

    def sending(self, host: str) -> set[Request]:
        """The requests to ``host`` past their turn and not done yet (on their way)."""
        line = self.lines.get(host)
        return set(line.sending) if line is not None else set()

    def waiting(self) -> int:
        return sum(len(line.waiting) for line in self.lines.values())

    def drop(self, error: Callable[[], BaseException]) -> int:
        """Fail every waiting request with ``error()``; how many there were."""
        dropped = 0
        for line in list(self.lines.values()):
            if line.timer is not None:
                line.timer.cancel()
                line.timer = None
            while line.waiting:
                waiter = line.waiting.popleft()
                if not waiter.called:
                    dropped += 1
                    waiter.errback(error())
        return dropped

    # -- the host's timer --------------------------------------------------------------
    def _due(self, host: str, line: _Line) -> float:
        """0 when the host's turn was just taken; else the seconds to wait (``inf``: until
        the failing host's probe on its way is done)."""
        intervals = self.intervals
        if line.sending and intervals.failing(host):
            return math.inf
        hold = intervals.not_before(host) - self.clock()
        if hold > _NOW:
            return hold
        # 0 only when the budget took the turn: a wait however short is waited for
        return self.budget.claim(host, intervals.interval_for(host), intervals.pause_of(host))

    def _next(self, host: str) -> None:
        """Let go the host's waiting requests whose turn is due, then time the next."""
        line = self.lines.get(host)
        while line is not None and line.waiting and line.timer is None:
            if line.waiting[0].called:  # cancelled while it waited
                line.waiting.popleft()
                continue
            try:
                wait = self._due(host, line)
            except Exception as exc:  # the budget is gone (Redis lost): none can go
                while line.waiting:
                    waiter = line.waiting.popleft()
                    if not waiter.called:
                        waiter.errback(exc)
                return
            if wait == math.inf:
                return  # done() calls again
            if wait > 0:
                line.timer = self.later(wait, self._wake, host)
                return
            line.waiting.popleft().callback(self.clock())

    def _wake(self, host: str) -> None:
        line = self.lines.get(host)
        if line is not None:
            line.timer = None
            self._next(host)


def _sent(taken: float, line: _Line, request: Request) -> float:
    line.sending.add(request)
    return taken
