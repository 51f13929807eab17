"""Unit tests for ``discovery_crawler.sitemaps.body.SitemapBody``: gzip sniffing,
incremental decompression, the size cap, truncated/corrupt streams, peek/readline/restart.
"""

from __future__ import annotations

import gzip
import tracemalloc
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discovery_crawler.sitemaps.body import GZIP_MAGIC, SitemapBody, SitemapTooLarge
from tests.conftest import realdata

TEXT = b"https://example.com/a\nhttps://example.com/b\r\nhttps://example.com/c"


def read_all(body: SitemapBody, n: int = 1 << 16) -> bytes:
    """Read a body to its end in pieces of ``n`` bytes."""
    out = []
    while piece := body.read(n):
        out.append(piece)
    return b"".join(out)


def partial_inflate(raw: bytes) -> bytes:
    """What a tolerant decoder recovers from a damaged gzip stream (reference output)."""
    inflater = zlib.decompressobj(wbits=31)
    out = []
    for i in range(len(raw)):  # byte by byte: keeps everything before the damage
        try:
            out.append(inflater.decompress(raw[i : i + 1]))
        except zlib.error:
            break
    return b"".join(out)


# -- sniffing and plain reading -------------------------------------------------------------


def test_plain_body_read_as_is():
    """A body without the gzip magic is returned unchanged."""
    body = SitemapBody(TEXT)
    assert body.gzipped is False
    assert read_all(body, 7) == TEXT
    assert body.size == len(TEXT)
    assert body.problem is None


def test_gzip_detected_by_magic_bytes():
    """A body starting with 1f 8b is inflated, whatever its name said."""
    body = SitemapBody(gzip.compress(TEXT))
    assert body.gzipped is True
    assert body.read() == TEXT
    assert body.size == len(TEXT)
    assert body.problem is None


def test_real_gz_name_without_gzip_content_is_plain():
    """advertools/regular_sitemap.xml.gz is not gzip: it is read as plain XML."""
    raw = realdata("sitemaps", "advertools", "regular_sitemap.xml.gz").read_bytes()
    assert not raw.startswith(GZIP_MAGIC)
    body = SitemapBody(raw)
    assert not body.gzipped
    assert read_all(body) == raw


def test_real_gzip_inflates_like_gzip_module():
    """A real 50,000-URL .xml.gz inflates to exactly what ``gzip`` gives."""
    raw = realdata("sitemaps", "stormcrawler", "tripadvisor.sitemap.xml.gz").read_bytes()
    body = SitemapBody(raw)
    assert read_all(body, 1 << 18) == gzip.decompress(raw)
    assert body.problem is None


@settings(max_examples=60, deadline=None)
@given(
    data=st.binary(max_size=5000) | st.text(max_size=3000).map(str.encode),
    level=st.integers(0, 9),
    sizes=st.lists(st.integers(1, 5000), min_size=1, max_size=8),
    repeat=st.integers(1, 40),
)
def test_any_read_sizes_give_the_whole_stream(data, level, sizes, repeat):
    """Reading a gzip stream in arbitrary piece sizes gives back exactly the original."""
    data = data * repeat
    body = SitemapBody(gzip.compress(data, compresslevel=level))
    out = []
    i = 0
    while piece := body.read(sizes[i % len(sizes)]):
        assert len(piece) <= sizes[i % len(sizes)]
        out.append(piece)
        i += 1
    assert b"".join(out) == data
    assert body.size == len(data)
    assert body.problem is None


def test_multi_member_gzip_is_read_to_the_end():
    """Concatenated gzip members (``cat a.gz b.gz``) are one body."""
    body = SitemapBody(gzip.compress(b"first\n") + gzip.compress(b"second\n"))
    assert read_all(body, 3) == b"first\nsecond\n"
    assert body.problem is None


def test_empty_bodies():
    """Empty raw bytes read as empty; a bare magic number is a truncated stream."""
    assert SitemapBody(b"").read() == b""
    body = SitemapBody(GZIP_MAGIC)
    assert body.read() == b""
    assert body.problem and "truncated" in body.problem


# -- size cap ---------------------------------------------------------------------------------


@pytest.mark.parametrize("gzipped", [False, True], ids=["plain", "gzip"])
def test_cap_allows_exactly_max_bytes(gzipped):
    """A body of exactly ``max_bytes`` is fine; one byte less of cap raises."""
    raw = gzip.compress(TEXT) if gzipped else TEXT
    assert read_all(SitemapBody(raw, max_bytes=len(TEXT)), 5) == TEXT
    body = SitemapBody(raw, max_bytes=len(TEXT) - 1)
    with pytest.raises(SitemapTooLarge) as info:
        read_all(body, 5)
    assert info.value.limit == len(TEXT) - 1
    assert "cap" in str(info.value)


def test_real_bomb_refused_in_chunks_with_bounded_memory():
    """bomb-gzip.bin (28 kB → 11.5 MB) read in 64 KiB pieces stops just past a 1 MB cap."""
    raw = realdata("edgecases", "scrapy-compressed", "bomb-gzip.bin").read_bytes()
    body = SitemapBody(raw, max_bytes=1 << 20)
    with pytest.raises(SitemapTooLarge):
        read_all(body, 1 << 16)
    assert body.size <= (1 << 20) + (1 << 16)


def test_real_bomb_read_at_once_costs_at_most_the_cap():
    """``read()`` with no size on a bomb must not inflate it all before refusing it.

    Bug: ``read(-1)`` calls ``_inflate(1 << 30)``, which inflates up to 1 GiB into memory and
    only then checks ``max_bytes`` (peak ~25 MB here for a 1 MB cap; a bigger bomb costs up
    to 1 GiB) — against the module's promise "a gzip bomb costs at most the cap".
    """
    raw = realdata("edgecases", "scrapy-compressed", "bomb-gzip.bin").read_bytes()
    body = SitemapBody(raw, max_bytes=1 << 20)
    tracemalloc.start()
    try:
        with pytest.raises(SitemapTooLarge):
            body.read()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20


def test_peek_past_the_cap_raises():
    """Peeking more than the cap of a larger body already refuses it."""
    with pytest.raises(SitemapTooLarge):
        SitemapBody(b"x" * 100, max_bytes=10).peek(50)


# -- truncated and corrupt streams ---------------------------------------------------------


def test_truncated_real_stream_keeps_what_was_read():
    """truncated-crc-error-short.gz: the readable part is kept and ``problem`` says truncated."""
    raw = realdata("edgecases", "scrapy-compressed", "truncated-crc-error-short.gz").read_bytes()
    body = SitemapBody(raw)
    data = read_all(body)
    assert data == partial_inflate(raw)
    assert len(data) > 1000
    assert body.problem is not None and "truncated" in body.problem


def test_unexpected_eof_matches_scrapy_expected_output():
    """unexpected-eof.gz recovers scrapy's expected partial output (stored as latin-1→UTF-8)."""
    raw = realdata("edgecases", "scrapy-compressed", "unexpected-eof.gz").read_bytes()
    expected = realdata("edgecases", "scrapy-compressed", "unexpected-eof-output.txt").read_bytes()
    body = SitemapBody(raw)
    data = read_all(body)
    assert data.decode("latin-1").encode("utf-8") == expected
    assert "truncated" in (body.problem or "")


@pytest.mark.parametrize("n", [1, 3, 100, 1 << 16])
@pytest.mark.parametrize("name", ["truncated-crc-error-short.gz", "truncated-crc-error.gz"])
def test_truncated_output_does_not_depend_on_read_size(name, n):
    """The bytes recovered from a truncated stream are the same whatever the read size.

    Bug: with small reads zlib can hold inflated output internally once all input is
    consumed; ``_inflate`` stops at ``if not data`` without draining it, so read(1) loses
    the last 4 bytes of truncated-crc-error-short.gz (3737 instead of 3741).
    """
    raw = realdata("edgecases", "scrapy-compressed", name).read_bytes()
    assert read_all(SitemapBody(raw), n) == partial_inflate(raw)


def test_corrupt_crc_keeps_inflated_data():
    """A stream whose only damage is a bad CRC keeps its content; ``problem`` says corrupt.

    Bug: the zlib.error raised when the trailer is checked discards the output of that
    ``decompress`` call, so with ``read()`` the whole body is lost (b'' returned).
    """
    payload = b"<urlset><url><loc>https://example.com/</loc></url></urlset>\n" * 20
    raw = bytearray(gzip.compress(payload))
    raw[-8] ^= 0xFF  # first CRC32 byte of the trailer
    body = SitemapBody(bytes(raw))
    assert body.read() == payload
    assert body.problem is not None and "corrupt" in body.problem


def test_corrupt_deflate_data_sets_problem():
    """Garbage in the compressed data ends the body with a ``corrupt`` problem, no exception."""
    raw = bytearray(gzip.compress(TEXT * 50))
    raw[15:25] = b"\xff" * 10
    body = SitemapBody(bytes(raw))
    read_all(body)
    assert body.problem is not None


# -- peek, readline, restart ---------------------------------------------------------------


@pytest.mark.parametrize("gzipped", [False, True], ids=["plain", "gzip"])
def test_peek_does_not_consume(gzipped):
    """``peek`` returns the first bytes, reading then starts from the beginning."""
    body = SitemapBody(gzip.compress(TEXT) if gzipped else TEXT)
    assert body.peek(5) == TEXT[:5]
    assert body.size == 5  # size counts bytes produced (the cap applies to them)
    assert body.peek(5) == TEXT[:5]
    assert read_all(body, 4) == TEXT
    assert body.size == len(TEXT)


@pytest.mark.parametrize("gzipped", [False, True], ids=["plain", "gzip"])
def test_read_all_after_peek_returns_everything(gzipped):
    """File-like contract: ``read()`` after ``peek`` returns the whole rest of the body.

    Bug: ``read(-1)`` returns only the peeked bytes when ``_pending`` is set (b'https'
    here), so a caller doing ``peek(); read()`` gets a truncated document.
    """
    body = SitemapBody(gzip.compress(TEXT) if gzipped else TEXT)
    body.peek(5)
    assert body.read() == TEXT


@pytest.mark.parametrize("gzipped", [False, True], ids=["plain", "gzip"])
def test_readline(gzipped):
    """``readline`` splits on LF (keeping CR), returns the last line without LF, then b''."""
    body = SitemapBody(gzip.compress(TEXT) if gzipped else TEXT)
    assert body.readline() == b"https://example.com/a\n"
    assert body.readline() == b"https://example.com/b\r\n"
    assert body.readline() == b"https://example.com/c"
    assert body.readline() == b""
    assert body.size == len(TEXT)


def test_readline_longer_than_a_chunk_and_mixed_with_read():
    """A line longer than the 64 KiB chunk is returned whole; ``read`` continues after it."""
    long_line = b"x" * 200_000 + b"\n"
    body = SitemapBody(gzip.compress(long_line + b"tail\nmore"))
    assert body.readline() == long_line
    assert body.read(4) == b"tail"
    assert body.readline() == b"\n"
    assert body.readline() == b"more"


@settings(max_examples=50, deadline=None)
@given(st.lists(st.binary(max_size=300).map(lambda b: b.replace(b"\n", b"")), max_size=30))
def test_readline_roundtrip(lines):
    """Lines read back one by one join to the original body."""
    data = b"\n".join(lines)
    body = SitemapBody(gzip.compress(data))
    out = []
    while line := body.readline():
        out.append(line)
    assert b"".join(out) == data
    assert all(line.endswith(b"\n") for line in out[:-1])


@pytest.mark.parametrize("gzipped", [False, True], ids=["plain", "gzip"])
def test_restart_reads_again_from_the_start(gzipped):
    """``restart`` after a partial or full read gives the whole body again, size reset."""
    body = SitemapBody(gzip.compress(TEXT) if gzipped else TEXT)
    body.read(10)
    body.restart()
    assert body.size == 0
    assert read_all(body, 3) == TEXT
    body.restart()
    assert body.peek(3) == TEXT[:3]
    assert read_all(body) == TEXT


def test_restart_multi_member_and_problem_reset():
    """``restart`` undoes the multi-member bookkeeping and clears then re-finds problems."""
    raw = gzip.compress(b"one\n") + gzip.compress(b"two\n")
    body = SitemapBody(raw)
    assert read_all(body, 2) == b"one\ntwo\n"
    body.restart()
    assert read_all(body) == b"one\ntwo\n"

    truncated = SitemapBody(gzip.compress(TEXT * 100)[:-20])
    read_all(truncated)
    assert truncated.problem
    truncated.restart()
    assert truncated.problem is None
    read_all(truncated)
    assert truncated.problem
