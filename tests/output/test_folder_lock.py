"""The output folder's lock (``output/folder_lock.py``): one holder at a time, across
processes started together; the refused one learns who holds it; a holder killed without
its exit is taken over, and one that exits normally leaves no record."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from discovery_crawler.output.folder_lock import (
    LOCK_NAME,
    FolderBusy,
    Holder,
    hold_folder,
    parse_record,
)

# A process that holds the folder given as argv[1], says so, and waits for its stdin to close.
_HOLDER = """
import sys
from pathlib import Path
from discovery_crawler.output.folder_lock import hold_folder
hold_folder(Path(sys.argv[1]))
print("held", flush=True)
sys.stdin.read()
"""
# Processes that wait for the same instant, then try the folder: "held" or "busy <pid>".
_RACER = """
import sys, time
from pathlib import Path
from discovery_crawler.output.folder_lock import FolderBusy, hold_folder
time.sleep(max(0.0, float(sys.argv[2]) - time.time()))
try:
    hold_folder(Path(sys.argv[1]))
except FolderBusy as exc:
    print("busy", exc.holder.pid, flush=True)
    raise SystemExit(8)
print("held", flush=True)
time.sleep(1.5)  # still holding while the others try
"""


def _holder(folder: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(folder)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "held"
    return proc


@given(
    pid=st.integers(min_value=1, max_value=2**22),
    started=st.text(min_size=1, max_size=30).filter(str.strip),
    command=st.text(max_size=60),
)
def test_a_record_is_read_back_as_written(pid, started, command):
    record = json.dumps({"pid": pid, "started_at": started, "command": command})
    assert parse_record(record + "\n") == Holder(pid, started, command or None)


@given(st.text())
def test_any_text_is_read_without_error(text):
    holder = parse_record(text)
    assert holder is None if not text.strip() else isinstance(holder, Holder)


def test_a_bare_pid_is_the_holder_of_an_older_lock_file():
    assert parse_record("1234\n") == Holder(1234, None)
    assert parse_record("") is None


def test_a_live_holder_refuses_another_process_and_is_named(tmp_path):
    proc = _holder(tmp_path)
    try:
        with pytest.raises(FolderBusy) as refused:
            hold_folder(tmp_path)
        assert refused.value.holder.pid == proc.pid
        assert refused.value.holder.started_at.endswith("Z")
        assert str(refused.value).startswith(
            f"{tmp_path} is in use by another run (pid {proc.pid}, "
        )
        assert str(refused.value).endswith("); nothing was touched")
    finally:
        proc.communicate("")
    assert proc.returncode == 0
    assert (tmp_path / LOCK_NAME).read_text() == ""  # a normal exit clears its record
    assert hold_folder(tmp_path) is None  # free, and nothing to take over
    assert json.loads((tmp_path / LOCK_NAME).read_text())["pid"] == os.getpid()
    assert hold_folder(tmp_path) is None  # held by this process already: a no-op


def test_the_lock_of_a_killed_holder_is_taken_over_naming_it(tmp_path):
    proc = _holder(tmp_path)
    record = parse_record((tmp_path / LOCK_NAME).read_text())
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    gone = hold_folder(tmp_path)  # the kernel released the lock with the process
    assert gone == record and gone is not None and gone.pid == proc.pid


@pytest.mark.parametrize("racers", [2, 6])
def test_processes_started_in_the_same_instant_get_it_once(tmp_path, racers):
    at = time.time() + 1.0  # all of them imported and waiting by then
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _RACER, str(tmp_path), str(at)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(racers)
    ]
    said = {proc.pid: proc.communicate(timeout=60)[0].split() for proc in procs}
    winners = [pid for pid, words in said.items() if words == ["held"]]
    assert len(winners) == 1, said
    losers = [words for pid, words in said.items() if pid not in winners]
    assert losers == [["busy", str(winners[0])]] * (racers - 1)
