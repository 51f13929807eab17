"""Frames over a real pipe (``sitemaps/frames.py``): what is sent is what is read, whole,
whatever its size, and the end of the pipe is an ``EOFError``."""

from __future__ import annotations

import os
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discovery_crawler.sitemaps.frames import recv_frame, send_frame


def _round_trip(messages: list[bytes]) -> list[bytes]:
    read_end, write_end = os.pipe()

    def write() -> None:
        try:
            for message in messages:
                send_frame(write_end, message)
        finally:
            os.close(write_end)

    writer = threading.Thread(target=write)
    writer.start()
    got = []
    try:
        with pytest.raises(EOFError):
            while True:
                got.append(bytes(recv_frame(read_end)))
    finally:
        writer.join()
        os.close(read_end)
    return got


@settings(max_examples=50, deadline=None)
@given(st.lists(st.binary(max_size=5_000), max_size=20))
def test_frames_come_back_as_sent(messages):
    assert _round_trip(messages) == messages


def test_a_frame_larger_than_the_pipe_arrives_whole():
    big = os.urandom(3 * 1024 * 1024)  # a pipe holds 64 KB to 1 MB: many partial writes
    assert _round_trip([b"a", big, b""]) == [b"a", big, b""]


def test_a_pipe_closed_mid_frame_is_an_eof():
    read_end, write_end = os.pipe()
    os.write(write_end, (100).to_bytes(8, "big") + b"only ten b")
    os.close(write_end)
    with pytest.raises(EOFError):
        recv_frame(read_end)
    os.close(read_end)


def test_writing_to_a_pipe_nobody_reads_is_a_broken_pipe():
    read_end, write_end = os.pipe()
    os.close(read_end)
    with pytest.raises(BrokenPipeError):
        send_frame(write_end, b"x" * 10)
    os.close(write_end)
