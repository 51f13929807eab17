"""How a run ended (``outcomes.py``): the worst thing that happened decides."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from discovery_crawler.outcomes import EXIT_CODES, STOPPING_LIMITS, exit_code, outcome_of

reasons = st.sampled_from(
    [None, "finished", "shutdown", "cancelled", "closespider_timeout", "output_failed"]
)
limits = st.lists(st.sampled_from([*sorted(STOPPING_LIMITS), "PAGE_MAX_BYTES"]), max_size=3)


@given(st.sampled_from([None, "site unreachable"]), reasons, limits, st.sampled_from([None, "x"]))
def test_completed_only_when_nothing_stopped_the_run(failure, reason, bound, write_error):
    outcome = outcome_of(failure, reason, bound, write_error)
    nothing_stopped = (
        not failure
        and not write_error
        and reason in (None, "finished")
        and STOPPING_LIMITS.isdisjoint(bound)
    )
    assert (outcome == "completed") == nothing_stopped
    assert (exit_code(outcome) == 0) == nothing_stopped


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
    assert EXIT_CODES == {
        "completed": 0,
        "failed": 1,
        "interrupted": 3,
        "output_failed": 4,
        "bounded": 5,
        "more_to_do": 6,
    }
    assert exit_code(None) == 1
