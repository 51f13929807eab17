"""A clock the test moves by hand, with the ``call_later`` that goes with it: the host
turns' timers (``extensions/host_turns.py``) fire when the test says time has passed."""

from __future__ import annotations

from time import monotonic
from typing import Any


class Timer:
    def __init__(self, at: float, function: Any, args: tuple[Any, ...]):
        self.at, self.function, self.args = at, function, args
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeTime:
    """``clock()`` and ``later(seconds, f, *args)``; ``advance(seconds)`` runs what is due."""

    def __init__(self) -> None:
        self.now = monotonic()  # near the real clock: code that reads monotonic() agrees
        self.timers: list[Timer] = []

    def clock(self) -> float:
        return self.now

    def later(self, seconds: float, function: Any, *args: Any) -> Timer:
        timer = Timer(self.now + seconds, function, args)
        self.timers.append(timer)
        return timer

    def pending(self) -> list[float]:
        """Seconds from now of the timers still to fire."""
        return [t.at - self.now for t in self.timers if not t.cancelled]

    def advance(self, seconds: float) -> None:
        """Move the clock on, each timer firing at its own moment on the way."""
        end = self.now + seconds
        while due := [t for t in self.timers if not t.cancelled and t.at <= end]:
            timer = min(due, key=lambda t: t.at)
            self.timers.remove(timer)
            self.now = max(self.now, timer.at)
            timer.function(*timer.args)
        self.now = end
        self.timers = [t for t in self.timers if not t.cancelled]


def use_fake_time(throttle: Any) -> FakeTime:
    """Put ``throttle``'s turns (and its local budget) on a fake clock."""
    fake = FakeTime()
    throttle.clock = throttle.turns.clock = fake.clock
    throttle.turns.later = fake.later
    throttle.budget.clock = fake.clock
    return fake
