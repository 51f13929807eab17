"""Where requests wait for their host's turn (``extensions/host_turns.py``), on a clock the
test moves: the interval between two sends, holds, a failing host's one request at a
time, the order of waiting requests, dropping them, a budget that fails. At the server:
``tests/e2e/test_throttle.py``; over Redis: ``tests/distributed/test_interval.py``."""

from __future__ import annotations

import math
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scrapy import Request
from scrapy.exceptions import IgnoreRequest

from discovery_crawler.extensions.host_intervals import HostIntervals
from discovery_crawler.extensions.host_turns import HostTurns, LocalBudget
from tests.extensions.fake_time import FakeTime

HOST = "example.com"


def turns(interval: float = 1.0, **options) -> tuple[HostTurns, FakeTime]:
    fake = FakeTime()
    intervals = HostIntervals(interval, **options)
    return HostTurns(intervals, LocalBudget(fake.clock), fake.clock, fake.later), fake


def request(i: int, host: str = HOST) -> Request:
    return Request(f"https://{host}/{i}")


def sent_at(turns_: HostTurns, fake: FakeTime, requests: list[Request]) -> dict[int, float]:
    """Ask a turn for each request now; return when each one went (seconds from now)."""
    start, went = fake.now, {}
    for i, r in enumerate(requests):
        waiter = turns_.turn(HOST, r)
        if waiter is None:
            went[i] = 0.0
        else:
            waiter.addCallback(lambda _, i=i: went.__setitem__(i, round(fake.now - start, 6)))
    return went


def test_requests_go_one_interval_apart_in_the_order_they_came():
    t, fake = turns(0.5)
    went = sent_at(t, fake, [request(i) for i in range(4)])
    assert went == {0: 0.0}  # the first goes at once, without a timer
    assert fake.pending() == [0.5]  # one timer for the host, not one per request
    fake.advance(2.0)
    assert went == {0: 0.0, 1: 0.5, 2: 1.0, 3: 1.5}


def test_no_interval_means_no_wait_and_no_timer():
    t, fake = turns(0.0)
    went = sent_at(t, fake, [request(i) for i in range(5)])
    assert went == dict.fromkeys(range(5), 0.0) and fake.pending() == []


def test_hosts_take_turns_independently():
    t, _ = turns(1.0)
    assert t.turn(HOST, request(0)) is None
    assert t.turn("other.example", request(0, "other.example")) is None


def test_a_hold_keeps_the_waiting_requests_and_is_never_shortened():
    t, fake = turns(0.2)
    went = sent_at(t, fake, [request(i) for i in range(3)])
    t.intervals.back_off(HOST, 1.0, fake.now)  # a Retry-After: 1 s
    t.changed(HOST)
    fake.advance(0.5)
    assert went == {0: 0.0}
    fake.advance(1.0)
    assert went == {0: 0.0, 1: 1.0, 2: 1.2}


def test_a_failing_host_sends_one_request_at_a_time():
    t, fake = turns(0.1, backoff_base=1.0)
    first, probe, third = request(0), request(1), request(2)
    assert t.turn(HOST, first) is None
    t.done(HOST, first)
    t.intervals.fail(HOST, fake.now)  # paused 1 s, then one at a time
    t.changed(HOST)
    waiting = [t.turn(HOST, probe), t.turn(HOST, third)]
    fake.advance(1.0)
    assert waiting[0].called and not waiting[1].called
    assert t.sending(HOST) == {probe}
    fake.advance(5.0)
    assert not waiting[1].called  # the probe is still on its way
    t.intervals.answered(HOST)
    t.changed(HOST)
    assert waiting[1].called  # it answered: the next one goes at the host's interval


def test_a_failing_hosts_next_probe_goes_when_the_last_one_is_done():
    t, fake = turns(0.1, backoff_base=1.0)
    t.intervals.fail(HOST, fake.now)
    probe, next_ = request(1), request(2)
    waiting = [t.turn(HOST, probe), t.turn(HOST, next_)]
    fake.advance(1.0)
    assert waiting[0].called and not waiting[1].called
    t.done(HOST, probe)  # it failed without a new pause (no news of the host)
    assert not waiting[1].called
    fake.advance(1.0)
    assert waiting[1].called  # a pause (1 s) after the probe left


def test_drop_fails_every_waiting_request_and_clears_the_timers():
    t, fake = turns(1.0)
    sent_at(t, fake, [request(i) for i in range(3)])
    failures = []
    for line in t.lines.values():
        for waiter in line.waiting:
            waiter.addErrback(failures.append)
    assert t.drop(lambda: IgnoreRequest("stop")) == 2
    assert len(failures) == 2 and fake.pending() == []
    assert t.waiting() == 0


def test_a_budget_that_fails_fails_the_waiting_requests():
    t, fake = turns(1.0)
    sent_at(t, fake, [request(0), request(1)])

    class Lost:
        def claim(self, host, interval, spacing):
            raise IgnoreRequest("Redis lost")

    t.budget = Lost()
    failures = []
    t.lines[HOST].waiting[0].addErrback(failures.append)
    fake.advance(1.0)
    assert len(failures) == 1 and failures[0].check(IgnoreRequest)


def test_a_line_is_forgotten_once_nothing_waits_or_is_sent():
    t, _ = turns(0.0)
    r = request(0)
    assert t.turn(HOST, r) is None
    t.done(HOST, r)
    assert t.lines == {}


def test_local_budget_anchor_moves_the_last_send_later_only():
    fake = FakeTime()
    budget = LocalBudget(fake.clock)
    assert budget.claim(HOST, 1.0, 0.0) == 0.0
    budget.anchor(HOST, ago=5.0)  # earlier than the last send: nothing changes
    assert budget.claim(HOST, 1.0, 0.0) == pytest.approx(1.0)
    fake.advance(0.5)
    budget.anchor(HOST)  # the first response came now: the interval counts from it
    assert budget.claim(HOST, 1.0, 0.0) == pytest.approx(1.0)
    assert budget.claim(HOST, 1.0, 3.0) == pytest.approx(3.0)  # a failing host's pause


@given(
    interval=st.floats(0.0, 5.0),
    steps=st.lists(st.floats(0.0, 3.0), min_size=1, max_size=30),
)
def test_local_budget_never_grants_two_turns_closer_than_the_interval(interval, steps):
    fake = FakeTime()
    budget = LocalBudget(fake.clock)
    granted: list[float] = []
    for step in steps:
        fake.now += step
        wait = budget.claim(HOST, interval, 0.0)
        if wait == 0.0:
            granted.append(fake.now)
        else:
            assert 0 < wait <= interval + 1e-9
    gaps = [b - a for a, b in pairwise(granted)]
    assert all(g >= interval - 1e-9 for g in gaps)
    assert not math.isnan(sum(gaps))
