"""How a URL or path segment is shown to a person (an IRI, RFC 3987 §3.2): percent-escapes
of UTF-8 letters decoded (``/%D8%AA%D9%82`` reads ``/تق``), everything else as written —
ASCII escapes (``%2F``, ``%20``, ``%3F``) stay, since decoding them would change what the
URL says, and a run of escapes that is not UTF-8 or decodes to an invisible character
stays escaped. The feed keeps the encoded URL; the report, the path tree and
``scrapy report --tree`` show this. Pure; no Scrapy imports."""

from __future__ import annotations

import re
from urllib.parse import quote

_NON_ASCII_ESCAPES = re.compile(r"(?:%[89A-Fa-f][0-9A-Fa-f])+")


def _decoded(match: re.Match[str]) -> str:
    text = match.group(0)
    try:
        shown = bytes.fromhex(text.replace("%", "")).decode("utf-8")
    except UnicodeDecodeError:
        return text
    if shown.isprintable():
        return shown
    return "".join(c if c.isprintable() else quote(c, safe="") for c in shown)


def readable(url: str) -> str:
    """``url`` (or a path, or a segment) as a person reads it; the same text when it holds
    no escaped UTF-8."""
    if "%" not in url:
        return url
    return _NON_ASCII_ESCAPES.sub(_decoded, url)
