"""The job journal's file: every response a resumable run received, appended as it came,
so a run stopped in any way (SIGKILL included) and started again replays what it already
fetched instead of fetching it again (``middlewares/journal.py``, ``extensions/job.py``).

Append-only; each entry is ``MAGIC``, the payload's length and CRC-32, then the payload
(a pickled tuple: the request's fingerprint and the response's parts, its body
zlib-compressed). A kill can cut the last entry short: opening the file keeps every whole
entry and truncates the rest. Why not Scrapy's ``HTTPCACHE_STORAGE``: its filesystem
storage writes several files per response (a kill between them leaves an entry that reads
as a response without its body) and its DBM storage is not safe to kill mid-write.
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
        path.parent.mkdir(parents=True, exist_ok=True)
        self._scan()
        self._file = path.open("ab")
        self._reader = path.open("rb")

    def _scan(self) -> None:
        if not self.path.exists():
            return
        good = 0
        with self.path.open("rb") as fh:
            while True:
                head = fh.read(_HEAD.size)
                if len(head) < _HEAD.size:
                    break
                magic, size, crc = _HEAD.unpack(head)
                payload = fh.read(size) if magic == MAGIC and size < _MAX_ENTRY else b""
                if magic != MAGIC or len(payload) < size or zlib.crc32(payload) != crc:
                    break
                self._index(payload[2 : 2 + payload[0] * 256 + payload[1]], good)
                self.entries += 1
                good = fh.tell()
            end = fh.seek(0, os.SEEK_END)
        if end > good:  # a kill cut the last entry short: keep the whole ones
            self.recovered_bytes = end - good
            os.truncate(self.path, good)

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
