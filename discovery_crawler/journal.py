"""The job journal's file: every response a resumable run received, appended as it came,
so a run stopped in any way (SIGKILL included) and started again replays what it already
fetched instead of fetching it again (``middlewares/journal.py``, ``extensions/job.py``).

Append-only; each entry is ``MAGIC``, the payload's length and CRC-32, then the payload
(a pickled tuple: the request's fingerprint and the response's parts, its body
zlib-compressed). A kill can cut the last entry short: opening the file keeps every whole
entry and truncates the rest. An entry damaged in the middle (a bad CRC, a broken header)
is skipped, the whole entries after it kept, and the damage told (``damaged``). Why not
Scrapy's ``HTTPCACHE_STORAGE``: its filesystem storage writes several files per response
(a kill between them leaves an entry that reads as a response without its body) and its
DBM storage is not safe to kill mid-write.
"""

from __future__ import annotations

import os
import pickle
import struct
import zlib
from pathlib import Path
from typing import Any

MAGIC = b"DCJ1"
_HEAD = struct.Struct("<4sII")  # magic, payload length, CRC-32 of the payload
_MAX_ENTRY = 1 << 31  # a length beyond any response the downloader keeps: a broken entry
_CUT = 0  # _entry_at: the entry runs past the end of the file (a kill cut it short)
_DAMAGED = -1  # _entry_at: not a whole entry


class JournalError(Exception):
    """The journal could not be read or written (the message names the file)."""


class ResponseJournal:
    """Responses by request fingerprint, in the order they came (a fingerprint fetched
    twice, a retry say, keeps both, replayed in turn)."""

    def __init__(self, path: Path):
        self.path = path
        # fingerprint → offset of its entry, or the offsets of several (a retried request):
        # an int each, as most fingerprints have one entry (a deque each would be ~600 bytes)
        self._offsets: dict[bytes, int | list[int]] = {}
        self.entries = 0  # whole entries in the file
        self.replayed = 0  # entries handed out by ``take``
        self.recovered_bytes = 0  # a cut-short tail dropped on opening
        # (offset, bytes) of each damaged stretch skipped on opening (a bad CRC, a broken
        # header): their responses are fetched again; the run says so (extensions/job.py)
        self.damaged: list[tuple[int, int]] = []
        path.parent.mkdir(parents=True, exist_ok=True)
        self._scan()
        self._file = path.open("ab")
        self._reader = path.open("rb")

    def _scan(self) -> None:
        if not self.path.exists():
            return
        good = 0  # the end of the last whole entry
        with self.path.open("rb") as fh:
            end = fh.seek(0, os.SEEK_END)
            pos = 0
            while pos < end:
                size = self._entry_at(fh, pos, end)
                if size > 0:
                    pos = good = pos + size
                    continue
                # A damaged entry (bad magic, length or CRC; or a length running past the
                # end with whole entries after it): the whole entries after it are kept,
                # and the damage is told (``damaged``), never skipped in silence.
                found = self._next_entry(fh, pos + 1, end)
                if size == _CUT and found is None:
                    break  # a kill cut the last entry short
                self.damaged.append((pos, (found if found is not None else end) - pos))
                if found is None:
                    break
                pos = found
        if end > good:  # a cut-short or damaged tail: keep the whole entries before it
            if not self.damaged or self.damaged[-1][0] < good:
                self.recovered_bytes = end - good
            os.truncate(self.path, good)

    def _entry_at(self, fh: Any, pos: int, end: int, index: bool = True) -> int:
        """The size of the whole entry at ``pos`` (indexed when ``index``); ``_CUT``: it
        runs past the end of the file; ``_DAMAGED``: it is not a whole entry."""
        fh.seek(pos)
        head = fh.read(_HEAD.size)
        if len(head) < _HEAD.size:
            return _CUT if head[: len(MAGIC)] == MAGIC[: len(head)] else _DAMAGED
        magic, size, crc = _HEAD.unpack(head)
        if magic != MAGIC or size >= _MAX_ENTRY or size < 2:
            return _DAMAGED
        if pos + _HEAD.size + size > end:
            return _CUT
        payload = fh.read(size)
        if zlib.crc32(payload) != crc or 2 + payload[0] * 256 + payload[1] > size:
            return _DAMAGED
        if index:
            self._index(payload[2 : 2 + payload[0] * 256 + payload[1]], pos)
            self.entries += 1
        return _HEAD.size + size

    def _next_entry(self, fh: Any, start: int, end: int) -> int | None:
        """The offset of the next whole entry at or after ``start`` (None: none)."""
        chunk = 1 << 20
        pos = start
        while pos < end:
            fh.seek(pos)
            window = fh.read(chunk + len(MAGIC) - 1)
            at = window.find(MAGIC)
            while at >= 0:
                if self._entry_at(fh, pos + at, end, index=False) > 0:
                    return pos + at
                at = window.find(MAGIC, at + 1)
            pos += chunk
        return None

    def _index(self, fingerprint: bytes, offset: int) -> None:
        found = self._offsets.get(fingerprint)
        if found is None:
            self._offsets[fingerprint] = offset
        elif isinstance(found, int):
            self._offsets[fingerprint] = [found, offset]
        else:
            found.append(offset)

    def __len__(self) -> int:
        return self.entries

    def append(self, fingerprint: bytes, parts: dict[str, Any]) -> None:
        """Add a response (``parts``: plain data; ``body`` bytes are compressed here)."""
        parts = dict(parts, body=zlib.compress(parts.get("body", b""), 1))
        payload = (
            len(fingerprint).to_bytes(2, "big") + fingerprint + pickle.dumps(parts, protocol=5)
        )
        # One write per entry, flushed at once: a kill loses at most the entry being written.
        self._file.write(_HEAD.pack(MAGIC, len(payload), zlib.crc32(payload)) + payload)
        self._file.flush()
        self.entries += 1

    def take(self, fingerprint: bytes) -> dict[str, Any] | None:
        """The next stored response of ``fingerprint`` (None: none left to replay)."""
        found = self._offsets.get(fingerprint)
        if found is None:
            return None
        if isinstance(found, int):
            offset = found
            del self._offsets[fingerprint]
        else:
            offset = found.pop(0)
            if not found:
                del self._offsets[fingerprint]
        reader = self._reader
        reader.seek(offset)
        _magic, size, _crc = _HEAD.unpack(reader.read(_HEAD.size))
        payload = reader.read(size)
        skip = 2 + payload[0] * 256 + payload[1]
        parts: dict[str, Any] = pickle.loads(payload[skip:])
        parts["body"] = zlib.decompress(parts["body"])
        self.replayed += 1
        return parts

    @property
    def waiting(self) -> int:
        """Stored responses not replayed yet."""
        return sum(1 if isinstance(v, int) else len(v) for v in self._offsets.values())

    def close(self) -> None:
        self._file.close()
        self._reader.close()
