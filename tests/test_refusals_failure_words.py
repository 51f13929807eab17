"""A fetch that got no answer, in words (``refusals.py``: ``describe_exception``,
``failure_text``, ``tls_failure_reason``, ``download_cap_text``, ``size_words``): a TLS
handshake that failed and a download over DOWNLOAD_MAXSIZE are named as what they are,
from the exceptions Scrapy 2.19 raises for them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scrapy.exceptions import DownloadCancelledError, DownloadFailedError, IgnoreRequest

from discovery_crawler.refusals import (
    classify_failure,
    classify_oversize,
    describe_exception,
    download_cap_text,
    failure_text,
    size_words,
    tls_failure_reason,
)

# What Scrapy's HTTP/1.1 handler raises when the server does not speak TLS (a plain-HTTP
# server on the port an https:// URL names): Twisted's ResponseNeverReceived of pyOpenSSL's
# error, wrapped.
WRONG_VERSION = DownloadFailedError(
    "[<twisted.python.failure.Failure OpenSSL.SSL.Error: "
    "[('SSL routines', '', 'wrong version number')]>]"
)
ALERT = DownloadFailedError(
    "[<twisted.python.failure.Failure OpenSSL.SSL.Error: "
    "[('SSL routines', 'ssl3_read_bytes', 'sslv3 alert handshake failure')]>]"
)


def test_a_tls_handshake_failure_is_named_with_openssls_reason():
    assert tls_failure_reason(WRONG_VERSION) == "wrong version number"
    assert tls_failure_reason(ALERT) == "sslv3 alert handshake failure"
    assert describe_exception(WRONG_VERSION) == ("tls handshake failed", "wrong version number")
    assert failure_text(WRONG_VERSION) == "TLS handshake failed: wrong version number"
    refusal = classify_failure("https://example.com/", WRONG_VERSION)
    assert refusal is not None and refusal.refusal_class == "network"
    assert refusal.reason == "TLS handshake failed (wrong version number)"
    # a fail-closed robots.txt rule repeats it in words
    robots = IgnoreRequest(
        "Forbidden by robots.txt: https://example.com/ (fail closed: robots.txt tls "
        "handshake failed (wrong version number))"
    )
    assert tls_failure_reason(robots) == "wrong version number"
    assert describe_exception(robots)[0] == "refused"  # still a refusal of robots.txt's
    for other in (DownloadFailedError("Connection refused"), ValueError("x"), IgnoreRequest()):
        assert tls_failure_reason(other) is None


def test_a_download_over_download_maxsize_says_the_cap():
    announced = DownloadCancelledError(
        "Expected to receive 70000000 bytes which is larger than download max size "
        "(67108864) in request <GET https://example.com/sitemap.xml>."
    )
    assert failure_text(announced) == (
        "larger than DOWNLOAD_MAXSIZE (64 MiB): 70,000,000 bytes announced, not downloaded"
    )
    assert describe_exception(announced)[0] == "too large"
    received = DownloadCancelledError(
        "Received 1048577 bytes which is larger than download max size (1048576) in request "
        "<GET https://example.com/x>."
    )
    assert download_cap_text(received) == (
        "larger than DOWNLOAD_MAXSIZE (1 MiB): the download was stopped at 1,048,577 bytes"
    )
    # streamed without a length, HTTP/1.1 cancels it without a word: the cap is given
    assert failure_text(DownloadCancelledError(""), 64 << 20) == (
        "larger than DOWNLOAD_MAXSIZE (64 MiB): the download was stopped past it"
    )
    inflated = IgnoreRequest(
        "Ignored response <200 https://example.com/s.xml> because its body (101444 B "
        "compressed, 1048576 B decompressed so far) exceeded DOWNLOAD_MAXSIZE (1000000 B) "
        "during decompression."
    )
    assert failure_text(inflated) == (
        "larger than DOWNLOAD_MAXSIZE (1,000,000 bytes) once decompressed (Content-Encoding): "
        "101,444 bytes as served, over 1,048,576 decompressed, not read"
    )
    assert download_cap_text(IgnoreRequest("robots")) is None
    assert download_cap_text(WRONG_VERSION) is None


@pytest.mark.parametrize(
    ("size", "words"),
    [(64 << 20, "64 MiB"), (53_477_376, "51 MiB"), (1_000_000, "1,000,000 bytes"), (0, "0 bytes")],
)
def test_size_words(size, words):
    assert size_words(size) == words


@given(st.text(max_size=200))
def test_the_words_of_any_failure_never_raise(text):
    for exc in (DownloadFailedError(text), DownloadCancelledError(text), IgnoreRequest(text)):
        kind, message = describe_exception(exc, 1 << 20)
        assert kind and isinstance(message, str)
        failure_text(exc, 1 << 20)
        tls_failure_reason(exc)


def test_a_connection_closed_mid_headers_is_named_not_listed_as_reprs():
    """A 1 MB header line: Twisted closes the connection and raises ``ResponseFailed`` of
    a ``ConnectionDone``; its message is the list of Failure reprs — the refusal and the
    sitemap error name the cause instead."""
    from twisted.internet.error import ConnectionDone
    from twisted.python.failure import Failure
    from twisted.web._newclient import ResponseFailed

    failed = ResponseFailed([Failure(ConnectionDone())])
    refusal = classify_failure("https://example.com/", failed)
    assert refusal is not None and refusal.refusal_class == "network"
    assert refusal.reason == "connection closed before a full response"
    assert failure_text(failed) == "ResponseFailed: connection closed before a full response"


def test_a_content_encoding_bomb_is_a_download_refusal_with_the_cap():
    """HttpCompression's IgnoreRequest past DOWNLOAD_MAXSIZE: class ``download``, the cap in
    words; any other failure is not one."""
    bomb = IgnoreRequest(
        "Ignored response <200 https://example.com/p> because its body (81605 B compressed, "
        "67174400 B decompressed so far) exceeded DOWNLOAD_MAXSIZE (67108864 B) during "
        "decompression."
    )
    refusal = classify_oversize("https://example.com/p", bomb)
    assert refusal is not None and refusal.refusal_class == "download"
    assert refusal.reason == (
        "larger than DOWNLOAD_MAXSIZE (64 MiB) once decompressed (Content-Encoding): 81,605 "
        "bytes as served, over 67,174,400 decompressed, not read"
    )
    assert classify_oversize("https://example.com/p", IgnoreRequest("robots")) is None
