"""Writing a big output file from a thread of its own, in order.

A run's feed and its state spool take a line per URL; copying that text into the kernel is
a large part of a big run's time and needs no GIL, so a thread does it while the spider
goes on with the next batch. At most ``ahead`` writes wait (a few batches: a few MB). A
write that fails in the thread is raised on the caller's thread, by the next call: the
file takes nothing more after it.
"""

from __future__ import annotations

import queue
import threading
from typing import BinaryIO


class BackgroundWriter:
    """``write`` hands bytes to a thread that writes them to ``file``; ``wait`` returns
    once all are written; ``close`` stops the thread, then closes the file."""

    def __init__(self, file: BinaryIO, name: str, ahead: int = 4):
        self.file = file
        self.error: OSError | None = None
        self._name = name
        self._ahead = ahead
        self._queue: queue.Queue[bytes | None] | None = None

    def write(self, data: bytes) -> None:
        """Queue ``data``; raises the thread's failure of an earlier write, if any."""
        if self.error is not None:
            raise self.error
        if self._queue is None:
            self._queue = queue.Queue(self._ahead)
            threading.Thread(
                target=self._write_loop, args=(self._queue,), name=self._name, daemon=True
            ).start()
        self._queue.put(data)

    def wait(self) -> None:
        """Until every queued write is made; raises the thread's failure, if any."""
        if self._queue is not None:
            self._queue.join()
        if self.error is not None:
            raise self.error

    def stop(self) -> None:
        """The thread ended once what it holds is written (a later write starts another)."""
        pending, self._queue = self._queue, None
        if pending is not None:
            pending.put(None)
            pending.join()

    def close(self) -> None:
        """Everything written, the thread ended and the file closed; raises a failure."""
        try:
            self.stop()
            if self.error is not None:
                raise self.error
        finally:
            self.file.close()

    def flush(self) -> None:
        self.wait()
        self.file.flush()

    def _write_loop(self, pending: queue.Queue[bytes | None]) -> None:
        while (data := pending.get()) is not None:
            if self.error is None:
                try:
                    self.file.write(data)
                except OSError as exc:
                    self.error = exc
            pending.task_done()
        pending.task_done()
