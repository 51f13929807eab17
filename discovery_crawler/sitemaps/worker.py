"""The sitemap worker process and its pipes: documents go in, worked batches come out.

Why: on a large walk, inflating, parsing and normalizing the locations is pure Python per
URL, on the same core as the item pipelines. A worker process does it on the second core,
document by document (``facts.parse_document``), and streams back batches in text columns
(``facts.WorkedBatch``) with what the stages would work out from the listing alone
(``facts.UrlFacts``). This module is only the process and its pipes.

Why not ``concurrent.futures.ProcessPoolExecutor``: its ``spawn``/``forkserver`` children
re-import the parent's ``__main__`` (the ``scrapy`` script, hence all of Scrapy: its
memory and its start-up time), and ``fork`` copies a running reactor. This worker runs this
module's ``main`` (``_LAUNCH``), which imports the parser, the normalizer and the per-URL
rules only (the spider side's imports wait in its methods). Messages are pickles over two pipes
(``sitemaps/frames.py``); a writer thread sends, so a busy worker never blocks the reactor,
and a reader thread hands replies to the event loop.

Only documents of at least ``SITEMAP_WORKER_MIN_BYTES`` go to the worker; small ones
parse in-process (most sites: no worker is ever started). ``SITEMAP_PARSE_WORKER = False``
turns it off. If the worker cannot start or dies, the spider logs one line and parses
in-process from the entry where the worker stopped: nothing is lost.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import pickle
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from discovery_crawler.sitemaps.facts import Tools, parse_document
from discovery_crawler.sitemaps.frames import recv_frame, send_frame

if TYPE_CHECKING:
    import asyncio
    import queue
    import subprocess
    from collections.abc import AsyncIterator

    from discovery_crawler.sitemaps.facts import RunContext

_PROTOCOL = pickle.HIGHEST_PROTOCOL
CHUNK_BATCHES = 2  # batches per reply message: small enough to overlap, big enough to be cheap
# Replies read but not yet taken by the spider: past this the reader stops reading, the pipe
# fills and the worker waits, so a worker faster than the pipelines cannot pile up results
# (what waits counts in the run's peak memory; bench/README.md has the trade-off).
MAX_BUFFERED = 2
# The pipes' size (Linux's default is 64 KB). A reply then crosses in one or two reads
# instead of ~20: between two reads the spider's reader thread waits for the GIL (up to the
# 5 ms switch interval while the pipelines run), and the worker waits on the full pipe.
_PIPE_BYTES = 1 << 20


class WorkerFailed(Exception):
    """The worker could not finish a document (it died, or failed to start)."""


def serve(reader: int, writer: int) -> None:
    """The worker's loop over two pipe ends: one task at a time, replies streamed in
    chunks."""
    tools = Tools()
    trim = _malloc_trim()
    for task in iter(_receiver(reader), None):
        task_id, body, base, max_bytes, batch_size, max_entries, context = task
        tools = tools.fit(context)
        try:
            # Malformed blocks undescribed: the spider describes them (no lxml here).
            for kind, payload in parse_document(
                body, base, max_bytes, batch_size, tools, CHUNK_BATCHES, max_entries, False
            ):
                send_frame(writer, pickle.dumps((kind, task_id, payload), _PROTOCOL))
                del payload
                trim(0)
        except Exception as exc:  # a parser bug: the spider re-parses in-process
            send_frame(writer, pickle.dumps(("failed", task_id, repr(exc)), _PROTOCOL))


def _malloc_trim() -> Any:
    """glibc's ``malloc_trim`` (a no-op elsewhere). Each chunk's strings are freed once it is
    sent, but glibc keeps the freed pages; handed back after each chunk, at a small cost,
    the worker's RSS stays lower (bench/README.md). The spider trims on a timer
    (``extensions/malloc_trim.py``, a layer above)."""
    try:
        import ctypes

        # The process's own symbols, which include its C library's.
        return ctypes.CDLL(None).malloc_trim
    except (ImportError, OSError, AttributeError):
        return lambda pad: 0


def _receiver(reader: int) -> Any:
    def receive() -> Any:
        try:
            task_id, _, *rest = pickle.loads(recv_frame(reader))
            return (task_id, bytes(recv_frame(reader)), *rest)  # the body, its own frame
        except EOFError:  # the spider closed the pipe: done
            return None

    return receive


def _widen(fd: int) -> None:
    """Give a pipe room for a whole reply where Linux allows it (``fs.pipe-max-size``)."""
    with contextlib.suppress(ImportError, AttributeError, OSError):
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)


# The worker runs ``main`` imported under this module's own name, not as ``__main__``: what
# it pickles (``facts.WorkedBatch``) must resolve to the same class in the spider's process.
_LAUNCH = f"import sys; from {__name__} import main; sys.exit(main(sys.argv[1:]))"


class ParseWorker:
    """The spider's side: starts the worker, sends documents, streams replies."""

    def __init__(self, mmap_threshold: int = 0) -> None:
        # queue, subprocess and asyncio are imported in the methods, on the spider's side
        # only: the worker process imports this module too, and needs none of them.
        import queue

        self._process: subprocess.Popen[bytes] | None = None
        self._writer = self._reader = -1  # pipe ends, once started
        self._outbox: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
        self._tasks: dict[int, asyncio.Queue[tuple[str, int, Any]]] = {}
        self._ids = itertools.count(1)
        self._loop: asyncio.AbstractEventLoop | None = None
        self.broken: str | None = None  # why the worker is unusable, once it is
        self._credits = threading.Semaphore(MAX_BUFFERED)
        self._closing = False
        # glibc reads its tunables from the environment at start-up: the worker's heap is
        # tuned as ``extensions/malloc_trim.py`` tunes the spider's (0: glibc's default).
        self._mmap_threshold = mmap_threshold

    def start(self) -> None:
        """Start the worker process and its two pipe threads; raise ``OSError`` if not."""
        # Imported here, on the spider's side only: the worker process never needs asyncio
        # (with the ssl module it brings, it would only swell the worker's RSS).
        import asyncio
        import subprocess

        self._loop = asyncio.get_running_loop()
        to_worker_r, to_worker_w = os.pipe()
        from_worker_r, from_worker_w = os.pipe()
        for fd in (to_worker_w, from_worker_w):
            _widen(fd)
        env = dict(os.environ)
        package_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
        if self._mmap_threshold > 0:
            env["MALLOC_MMAP_THRESHOLD_"] = str(self._mmap_threshold)
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-c", _LAUNCH, str(to_worker_r), str(from_worker_w)],
                pass_fds=(to_worker_r, from_worker_w),
                stdin=subprocess.DEVNULL,
                env=env,
            )
        except BaseException:
            os.close(to_worker_w)
            os.close(from_worker_r)
            raise
        finally:
            os.close(to_worker_r)
            os.close(from_worker_w)
        self._writer = to_worker_w
        self._reader = from_worker_r
        threading.Thread(target=self._send_loop, name="sitemap-worker-send", daemon=True).start()
        threading.Thread(target=self._read_loop, name="sitemap-worker-read", daemon=True).start()

    def _send_loop(self) -> None:
        try:
            # Pickled here, as each goes, and the body sent as it is, in a frame of its own:
            # a pickled copy of each whole document would be held until the worker, busy
            # with the document before, reads it.
            while (task := self._outbox.get()) is not None:
                task_id, body, *rest = task
                send_frame(self._writer, pickle.dumps((task_id, None, *rest), _PROTOCOL))
                send_frame(self._writer, body)
        except OSError:
            pass  # the worker is gone: the reader sees its end and reports it
        finally:
            os.close(self._writer)

    def _read_loop(self) -> None:
        loop = self._loop
        assert loop is not None
        why = "the worker process exited"
        try:
            while True:
                self._credits.acquire()  # given back when the spider takes the reply
                if self._closing:
                    break
                message = pickle.loads(recv_frame(self._reader))
                loop.call_soon_threadsafe(self._deliver, message)
        except (EOFError, OSError):
            pass
        except Exception as exc:  # never leave a document waiting for a reply forever
            why = f"reading its replies failed: {exc!r}"
        finally:
            os.close(self._reader)
            with contextlib.suppress(RuntimeError):  # the event loop is already closed
                loop.call_soon_threadsafe(self._fail_all, why)

    def _deliver(self, message: tuple[str, int, Any]) -> None:
        task = self._tasks.get(message[1])
        if task is not None:
            task.put_nowait(message)
        else:  # its document was abandoned (the spider closed): nobody will take it
            self._credits.release()

    def _fail_all(self, why: str) -> None:
        if self.broken is None:
            self.broken = why
        for task_id, task in self._tasks.items():
            task.put_nowait(("exited", task_id, why))

    async def parse(
        self,
        body: bytes,
        base: str,
        max_bytes: int,
        batch_size: int,
        context: RunContext,
        max_entries: int = 0,
    ) -> AsyncIterator[tuple[str, Any]]:
        """Parse a document in the worker: ``("batches", [...])`` then ``("done", ...)``;
        raises ``WorkerFailed`` if the worker cannot finish it."""
        if self.broken is not None:
            raise WorkerFailed(self.broken)
        task_id = next(self._ids)
        import asyncio

        replies: asyncio.Queue[tuple[str, int, Any]] = asyncio.Queue()
        self._tasks[task_id] = replies
        self._outbox.put((task_id, body, base, max_bytes, batch_size, max_entries, context))
        try:
            while True:
                kind, _, payload = await replies.get()
                if kind == "exited":  # put here by the reader's end, not read from the pipe
                    raise WorkerFailed(payload)
                self._credits.release()
                if kind == "failed":
                    raise WorkerFailed(payload)
                yield kind, payload
                if kind == "done":
                    return
        finally:
            del self._tasks[task_id]
            while not replies.empty():  # abandoned: give back what it will never take
                if replies.get_nowait()[0] != "exited":
                    self._credits.release()

    def close(self) -> None:
        """Close the pipe (the worker exits at EOF) and reap the process; a worker still
        busy with a document nobody will read (the spider closed early) is killed."""
        self._closing = True
        self._outbox.put(None)
        self._credits.release()  # a reader waiting for the spider to take a reply stops
        process = self._process
        if process is None:
            return
        import subprocess

        if self._tasks:  # documents still in flight: nobody will read the rest
            process.kill()
        try:
            process.wait(timeout=1)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def main(argv: list[str]) -> int:
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        serve(int(argv[0]), int(argv[1]))
    return 0


if __name__ == "__main__":  # ``python -m``: run the module under its own name, as _LAUNCH does
    from discovery_crawler.sitemaps import worker

    sys.exit(worker.main(sys.argv[1:]))
