"""A sitemap body as a readable stream: gzip detected by magic bytes, size capped.

Whatever the file name or Content-Type says, a body starting with the gzip magic number is
decompressed, and any other body is read as is (a ``.gz`` that is not gzip is plain).
Decompression is incremental, so a 50,000-URL ``.xml.gz`` is never held inflated in
memory, and it stops at ``max_bytes``: a gzip bomb costs at most the cap, not an OOM.

The gzip container is read here (header, raw deflate, CRC check) rather than by zlib's
gzip mode, so that damage loses nothing that can be read: a truncated stream yields all
it inflated and a wrong CRC is reported while the data is kept (zlib's gzip mode drops
the last output when the CRC check fails). ``problem`` says what was wrong.
"""

from __future__ import annotations

import struct
import zlib

GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 16
_FHCRC, _FEXTRA, _FNAME, _FCOMMENT = 2, 4, 8, 16


class SitemapTooLarge(Exception):
    """The decompressed body passed the size cap."""

    def __init__(self, limit: int):
        super().__init__(f"decompressed size exceeds the cap of {limit:,} bytes")
        self.limit = limit


def _gzip_header_length(data: bytes) -> int | None:
    """Length of the gzip member header at the start of ``data``; None if the data ends
    inside it, -1 if it is not a deflate gzip header."""
    if len(data) >= 3 and (data[:2] != GZIP_MAGIC or data[2] != 8):
        return -1
    if len(data) < 10:
        return None
    flags = data[3]
    pos = 10
    if flags & _FEXTRA:
        if len(data) < pos + 2:
            return None
        pos += 2 + struct.unpack_from("<H", data, pos)[0]
    for flag in (_FNAME, _FCOMMENT):
        if flags & flag:
            end = data.find(b"\x00", pos)
            if end < 0:
                return None
            pos = end + 1
    if flags & _FHCRC:
        pos += 2
    return pos if pos <= len(data) else None


class SitemapBody:
    """File-like reader over a (possibly gzipped) sitemap body.

    ``size`` counts the decompressed bytes produced so far; the cap applies to it.
    """

    def __init__(self, raw: bytes, max_bytes: int = 0):
        self._original = raw
        self.gzipped = raw[:2] == GZIP_MAGIC
        self.max_bytes = max_bytes
        self.restart()

    def restart(self) -> None:
        """Read again from the start (a parser switching strategy mid-document)."""
        self.size = 0  # decompressed bytes handed out so far
        self.problem: str | None = None
        self._pos = 0
        self._pending = b""
        self._done = False
        self._inflater: zlib._Decompress | None = None
        self._crc = 0
        self._member_size = 0
        if self.gzipped:
            self._start_member(self._original)

    def _start_member(self, data: bytes) -> None:
        header = _gzip_header_length(data)
        if header is None or header < 0:
            self.problem = (
                "truncated gzip stream (ended in its header)"
                if header is None
                else ("corrupt gzip header")
            )
            self._done = True
            return
        self._data = data
        self._pos = header
        self._inflater = zlib.decompressobj(wbits=-15)
        self._crc = 0
        self._member_size = 0

    def _inflate(self, n: int) -> bytes:
        out = []
        got = 0
        while got < n and not self._done:
            inflater = self._inflater
            assert inflater is not None
            data = inflater.unconsumed_tail
            if not data:
                data = self._data[self._pos : self._pos + _CHUNK]
                self._pos += len(data)
            if not data:  # input exhausted before the end of the stream
                piece = inflater.flush()
                out.append(piece)
                got += len(piece)
                self.problem = "truncated gzip stream (ended before its end marker)"
                self._done = True
                break
            try:
                piece = inflater.decompress(data, n - got)
            except zlib.error as exc:
                self.problem = f"corrupt gzip stream ({exc})"
                self._done = True
                break
            out.append(piece)
            got += len(piece)
            self._crc = zlib.crc32(piece, self._crc)
            self._member_size += len(piece)
            if inflater.eof:
                self._end_member(inflater.unused_data + self._data[self._pos :])
        return b"".join(out)

    def _end_member(self, rest: bytes) -> None:
        """Check the member's trailer; go on with a following member (multi-member gzip)."""
        if len(rest) < 8:
            self.problem = "truncated gzip trailer"
            self._done = True
            return
        crc, size = struct.unpack_from("<II", rest)
        if crc != self._crc or size != self._member_size & 0xFFFFFFFF:
            self.problem = "corrupt gzip checksum (the data was kept)"
        rest = rest[8:]
        if rest[:2] == GZIP_MAGIC:
            self._start_member(rest)
        else:
            self._done = True

    def _produce(self, n: int) -> bytes:
        """Up to ``n`` new bytes of the (decompressed) body; b"" at its end."""
        if not self.gzipped:
            data = self._original[self._pos : self._pos + n]
            self._pos += len(data)
        elif self._done:
            return b""
        else:
            # Never inflate much past the cap, whatever the caller asked for.
            room = self.max_bytes - self.size + 1 if self.max_bytes else n
            data = self._inflate(min(n, max(room, 1), 1 << 24))
        self.size += len(data)
        if self.max_bytes and self.size > self.max_bytes:
            raise SitemapTooLarge(self.max_bytes)
        return data

    def read(self, n: int = -1) -> bytes:
        """Read up to ``n`` bytes (all that is left when ``n`` < 0)."""
        if n is None or n < 0:
            parts = [self._pending]
            self._pending = b""
            while more := self._produce(_CHUNK * 16):
                parts.append(more)
            return b"".join(parts)
        if self._pending:
            data, self._pending = self._pending[:n], self._pending[n:]
            if len(data) < n:
                data += self._produce(n - len(data))
            return data
        return self._produce(n)

    def peek(self, n: int = 1024) -> bytes:
        """Return the next ``n`` bytes (fewer at the end) without consuming them."""
        while len(self._pending) < n:
            more = self._produce(n - len(self._pending))
            if not more:
                break
            self._pending += more
        return self._pending[:n]

    def readline(self) -> bytes:
        """Read one line (for plain-text sitemaps)."""
        while True:
            nl = self._pending.find(b"\n")
            if nl >= 0:
                line, self._pending = self._pending[: nl + 1], self._pending[nl + 1 :]
                return line
            more = self._produce(_CHUNK)
            if not more:
                line, self._pending = self._pending, b""
                return line
            self._pending += more
