"""Length-prefixed frames over a pipe: how the spider and its sitemap worker exchange
pickles (``sitemaps/worker.py``).

Why not ``multiprocessing.connection.Connection``: it frames the same way, but importing it
brings ``multiprocessing``, ``hashlib``, ``tempfile`` and ``socket`` (with ``subprocess``,
a noticeable part of the worker process's RSS), and its ``recv_bytes`` copies each reply
once more. Here a frame is an 8-byte big-endian length, then the payload; a reply is
read into one ``bytearray`` that ``pickle.loads`` takes as it is.
"""

from __future__ import annotations

import os

_HEADER = 8


def send_frame(fd: int, data: bytes) -> None:
    """Write one frame; raises ``BrokenPipeError`` if the reader has gone."""
    view = memoryview(data)
    header = len(view).to_bytes(_HEADER, "big")
    written = os.writev(fd, [header, view])
    if written < _HEADER:  # a pipe takes small writes whole; this is for completeness
        header_left = header[written:]
        while header_left:
            header_left = header_left[os.write(fd, header_left) :]
        written = _HEADER
    view = view[written - _HEADER :]
    while view:
        view = view[os.write(fd, view) :]


def recv_frame(fd: int) -> bytearray:
    """Read one frame; raises ``EOFError`` at the end of the pipe."""
    size = int.from_bytes(_read_exactly(fd, _HEADER), "big")
    return _read_exactly(fd, size)


def _read_exactly(fd: int, size: int) -> bytearray:
    buffer = bytearray(size)
    view = memoryview(buffer)
    done = 0
    while done < size:
        got = os.readv(fd, [view[done:]])
        if not got:
            raise EOFError("the pipe was closed")
        done += got
    return buffer
