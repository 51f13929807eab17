"""How a run ended (``outcomes.py``): the worst thing that happened decides."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from discovery_crawler.outcomes import EXIT_CODES, STOPPING_LIMITS, exit_code, outcome_of

reasons = st.sampled_from(
    [
        None,
        "finished",
        "shutdown",
        "cancelled",
        "closespider_timeout",
        "output_failed",
        "chunk_done",
    ]
)
limits = st.lists(st.sampled_from([*sorted(STOPPING_LIMITS), "PAGE_MAX_BYTES"]), max_size=3)
failures = st.sampled_from([None, "", "site unreachable"])
write_errors = st.sampled_from([None, "", "x"])


@given(failures, reasons, limits, write_errors, st.booleans())
def test_completed_only_when_nothing_stopped_the_run_and_everything_was_read(
    failure, reason, bound, write_error, incomplete
):
    outcome = outcome_of(failure, reason, bound, write_error, incomplete=incomplete)
    nothing_stopped = (
        not failure
        and not write_error
        and reason in (None, "finished")
        and STOPPING_LIMITS.isdisjoint(bound)
        and not incomplete
    )
    assert (outcome == "completed") == nothing_stopped
    assert (exit_code(outcome) == 0) == nothing_stopped


@given(failures, reasons, limits, write_errors)
def test_a_source_not_read_is_never_completed_nor_bounded(failure, reason, bound, write_error):
    """Something not read is said: incomplete (7) unless a worse outcome (a failed write,
    a failure, a chunk with work left, an interruption) says more; never completed, and
    never bounded — "complete up to the limit" would be false."""
    outcome = outcome_of(failure, reason, bound, write_error, incomplete=True)
    assert outcome not in ("completed", "bounded")
    worse = outcome_of(failure, reason, [], write_error)
    if worse in ("output_failed", "failed", "more_to_do", "interrupted"):
        assert outcome == worse
    else:
        assert outcome == "incomplete" and exit_code(outcome) == 7


def test_each_outcome_has_its_own_exit_status():
    assert outcome_of(None, "finished") == "completed"
    assert outcome_of("site unreachable", "finished") == "failed"
    assert outcome_of(None, "shutdown") == "interrupted"
    assert outcome_of(None, "finished", write_error="could not write") == "output_failed"
    assert outcome_of(None, "closespider_timeout") == "bounded"
    assert outcome_of(None, "finished", ["BFS_MAX_PAGES"]) == "bounded"
    assert outcome_of(None, "finished", ["PAGE_MAX_BYTES"]) == "completed"
    assert outcome_of(None, "chunk_done", ["BFS_MAX_PAGES"]) == "more_to_do"
    assert outcome_of("site unreachable", "chunk_done") == "failed"
    assert outcome_of(None, "finished", incomplete=True) == "incomplete"
    assert outcome_of(None, "finished", ["BFS_MAX_PAGES"], incomplete=True) == "incomplete"
    assert outcome_of(None, "closespider_pagecount", incomplete=True) == "incomplete"
    assert outcome_of(None, "shutdown", incomplete=True) == "interrupted"
    assert outcome_of("site unreachable", "finished", incomplete=True) == "failed"
    assert EXIT_CODES == {
        "completed": 0,
        "failed": 1,
        "interrupted": 3,
        "output_failed": 4,
        "bounded": 5,
        "more_to_do": 6,
        "incomplete": 7,
    }
    assert exit_code(None) == 1
