"""Read Google's robots.txt conformance data (protobuf text format) without protobuf.

Schema (google/robotstxt-spec-test, ``specification.proto``):
``RobotsTxtSpecification { repeated RobotsTxtTest tests }``,
``RobotsTxtTest { bytes robotstxt; repeated Expectation test_expectations }``,
``Expectation { string testurl; string useragent; Outcome expected_outcome;
string additional_explanation; TestType test_type }``. String values are C-escaped and
may be split over adjacent quoted pieces, which are concatenated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_TOKEN = re.compile(r'\s+|#[^\n]*|"(?:[^"\\]|\\.)*"|[A-Za-z_][A-Za-z0-9_]*|[:\[\]{},]', re.S)
_ESCAPE = re.compile(rb"\\(x[0-9A-Fa-f]{1,2}|[0-7]{1,3}|.)", re.S)
_SIMPLE = {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"a": b"\a", b"b": b"\b", b"f": b"\f"}
_SIMPLE.update({b"v": b"\v", b"\\": b"\\", b'"': b'"', b"'": b"'", b"?": b"?"})


def unescape(literal: str) -> bytes:
    """The bytes of one C-escaped quoted piece (``"\\xEF\\n"`` → ``b"\\xef\\n"``)."""

    def replace(match: re.Match[bytes]) -> bytes:
        escape = match.group(1)
        if escape[:1] == b"x":
            return bytes([int(escape[1:], 16)])
        if escape[:1].isdigit():
            return bytes([int(escape, 8)])
        return _SIMPLE[escape]

    return _ESCAPE.sub(replace, literal[1:-1].encode("utf-8"))


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise ValueError(f"unexpected text at {pos}: {text[pos : pos + 30]!r}")
        pos = match.end()
        token = match.group()
        if not token.isspace() and not token.startswith("#"):
            out.append(token)
    return out


def parse_textproto(text: str) -> dict[str, Any]:
    """A message as dicts, lists, bytes (quoted values) and str (enum names)."""
    tokens = _tokens(text)
    pos = 0

    def value() -> Any:
        nonlocal pos
        token = tokens[pos]
        if token in "[{":
            pos += 1
            closing = "]" if token == "[" else "}"
            items: list[Any] = []
            fields: dict[str, Any] = {}
            while tokens[pos] != closing:
                if token == "[":
                    items.append(value())
                else:
                    name = tokens[pos]
                    pos += 1 + (tokens[pos + 1] == ":")
                    fields[name] = value()
                pos += tokens[pos] == ","
            pos += 1
            return items if token == "[" else fields
        if token.startswith('"'):
            data = b""
            while pos < len(tokens) and tokens[pos].startswith('"'):
                data += unescape(tokens[pos])
                pos += 1
            return data
        pos += 1
        return token

    message: dict[str, Any] = {}
    while pos < len(tokens):
        name = tokens[pos]
        pos += 1 + (tokens[pos + 1] == ":")
        message[name] = value()
    return message


@dataclass(frozen=True)
class Expectation:
    file: str  # e.g. "correctness/groups.textproto"
    test: int  # index of the robots.txt in the file
    robotstxt: bytes
    url: str
    useragent: str
    allowed: bool
    google_specific: bool

    @property
    def id(self) -> str:
        return f"{self.file}#{self.test}:{self.useragent}:{self.url}"


def load_expectations(root: Path) -> list[Expectation]:
    """Every expectation of every ``*.textproto`` under ``root``, in file order."""
    out = []
    for path in sorted(root.rglob("*.textproto")):
        spec = parse_textproto(path.read_text(encoding="utf-8"))
        for index, test in enumerate(spec.get("tests", [])):
            for exp in test.get("test_expectations", []):
                out.append(
                    Expectation(
                        file=path.relative_to(root).as_posix(),
                        test=index,
                        robotstxt=test.get("robotstxt", b""),
                        url=exp["testurl"].decode("utf-8"),
                        useragent=exp["useragent"].decode("utf-8"),
                        allowed=exp["expected_outcome"] == "ALLOWED",
                        google_specific=exp.get("test_type") == "GOOGLE_SPECIFIC",
                    )
                )
    return out
