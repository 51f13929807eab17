"""A test's kill at a named moment of writing the run's files (crash-safety tests only).

``DISCOVERY_TEST_KILL_AFTER=<point>`` in the environment makes the process SIGKILL itself
right after that point, as ``kill -9`` would at the worst moment; unset (always, outside
tests) it costs one dictionary look-up. The points: ``changes_write`` (``changes.json``
written, ``state.json`` not yet replaced) and ``state_rename`` (the new ``state.json`` in
place, the job not yet marked finished).
"""

from __future__ import annotations

import os
import signal

KILL_ENV = "DISCOVERY_TEST_KILL_AFTER"


def kill_point(name: str) -> None:
    """SIGKILL this process if the environment names ``name`` (see the module)."""
    if os.environ.get(KILL_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)
