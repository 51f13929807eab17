"""A sitemap body as a readable stream: gzip detected by magic bytes, size capped.

Whatever the file name or Content-Type says, a body starting with the gzip magic number is
decompressed, and any other body is read as is (a ``.gz`` that is not gzip is plain).
Decompression is incremental, so a 50,000-URL ``.xml.gz`` is never held inflated in
memory, and it stops at ``max_bytes``: a gzip bomb costs at most the cap, not an OOM.
A truncated or corrupt gzip stream ends the body early; ``problem`` says so and the
parser keeps what it read.
"""

from __future__ import annotations

import zlib

GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 16


class SitemapTooLarge(Exception):
    """The decompressed body passed the size cap."""

    def __init__(self, limit: int):
        super().__init__(f"decompressed size exceeds the cap of {limit:,} bytes")
        self.limit = limit


class SitemapBody:
    """File-like reader over a (possibly gzipped) sitemap body."""

    def __init__(self, raw: bytes, max_bytes: int = 0):
        self.raw = self._original = raw
        self.gzipped = raw[:2] == GZIP_MAGIC
        self.max_bytes = max_bytes
        self.restart()

    def restart(self) -> None:
        """Read again from the start (a parser switching strategy mid-document)."""
        self.raw = self._original
        self.size = 0  # decompressed bytes handed out so far
        self.problem: str | None = None
        self._pos = 0
        self._pending = b""
        self._inflater = zlib.decompressobj(wbits=31) if self.gzipped else None
        self._done = False

    def _inflate(self, n: int) -> bytes:
        assert self._inflater is not None
        out = []
        got = 0
        while got < n and not self._done:
            if self._inflater.unconsumed_tail:
                data = self._inflater.unconsumed_tail
            else:
                data = self.raw[self._pos : self._pos + _CHUNK]
                self._pos += len(data)
            if not data:
                if not self._inflater.eof:
                    self.problem = "truncated gzip stream (ended before its end marker)"
                self._done = True
                break
            try:
                piece = self._inflater.decompress(data, n - got)
            except zlib.error as exc:
                self.problem = f"corrupt gzip stream ({exc})"
                self._done = True
                break
            out.append(piece)
            got += len(piece)
            if self._inflater.eof:
                rest = self._inflater.unused_data
                if rest[:2] == GZIP_MAGIC:  # a multi-member gzip file: go on
                    self.raw = rest + self.raw[self._pos :]
                    self._pos = 0
                    self._inflater = zlib.decompressobj(wbits=31)
                else:
                    self._done = True
        return b"".join(out)

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            n = 1 << 62
        if self._pending:
            data, self._pending = self._pending[:n], self._pending[n:]
        elif self._inflater is None:
            data = self.raw[self._pos : self._pos + min(n, 1 << 62)]
            self._pos += len(data)
        else:
            data = self._inflate(min(n, 1 << 30))
        self.size += len(data)
        if self.max_bytes and self.size > self.max_bytes:
            raise SitemapTooLarge(self.max_bytes)
        return data

    def peek(self, n: int = 1024) -> bytes:
        """Return the first bytes without consuming them (only before reading)."""
        if not self._pending:
            self._pending = self.read(n)
            self.size -= len(self._pending)
        return self._pending[:n]

    def readline(self) -> bytes:
        """Read one line (for plain-text sitemaps)."""
        chunks = []
        while True:
            buf = self.read(_CHUNK)
            if not buf:
                break
            nl = buf.find(b"\n")
            if nl >= 0:
                chunks.append(buf[: nl + 1])
                self._pending = buf[nl + 1 :]
                self.size -= len(self._pending)
                break
            chunks.append(buf)
        return b"".join(chunks)
