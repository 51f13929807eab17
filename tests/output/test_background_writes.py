"""The writer thread of the big outputs (``output/background_writes.py``)."""

from __future__ import annotations

import errno
import io
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from discovery_crawler.output.background_writes import BackgroundWriter


class _Recording(io.BytesIO):
    """A file that remembers the thread of each write and keeps its bytes once closed."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: set[str] = set()
        self.kept = b""

    def write(self, data):  # type: ignore[override]
        self.threads.add(threading.current_thread().name)
        return super().write(data)

    def close(self) -> None:
        self.kept = self.getvalue()
        super().close()


@given(st.lists(st.binary(max_size=300), max_size=40), st.integers(1, 5))
def test_writes_arrive_in_order_from_the_thread(chunks, ahead):
    file = _Recording()
    writer = BackgroundWriter(file, "test-writer", ahead=ahead)
    for chunk in chunks:
        writer.write(chunk)
    writer.close()
    assert file.kept == b"".join(chunks)
    assert file.closed
    assert file.threads <= {"test-writer"}
    assert not [t for t in threading.enumerate() if t.name == "test-writer"]


def test_wait_returns_once_everything_is_written_and_a_later_write_goes_on():
    file = _Recording()
    writer = BackgroundWriter(file, "test-writer")
    writer.write(b"one ")
    writer.wait()
    assert file.getvalue() == b"one "
    writer.stop()
    writer.write(b"two")  # after a stop, a write starts another thread
    writer.flush()
    assert file.getvalue() == b"one two"
    writer.close()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_a_failed_write_is_raised_on_the_callers_thread_and_nothing_more_is_written():
    file = open("/dev/full", "wb", buffering=0)  # noqa: SIM115
    writer = BackgroundWriter(file, "test-writer")
    writer.write(b"x" * 1000)
    with pytest.raises(OSError) as raised:
        writer.wait()
    assert raised.value.errno == errno.ENOSPC
    with pytest.raises(OSError):
        writer.write(b"more")
    with pytest.raises(OSError):
        writer.close()
    assert file.closed
