"""The sites file of ``scrapy rediscover``: which sites a scheduled run discovers again.

One site a line: its URL (a homepage, a sitemap or a robots.txt URL, as ``-a url=``),
then optionally ``key=value`` spider arguments (``-a``), separated by spaces::

    # nightly
    https://example.com/
    https://docs.example.org/sitemap.xml  mode=sitemap max_pages=5000   # the docs

``#`` at the start of a line or after a space starts a comment (a ``#`` inside a URL is
kept); blank lines are skipped. Each site runs into ``ROOT/<host>/`` (``<host>`` as a
plain run names its folder, ``arguments.default_out_dir``), so ``out`` is not an argument
here and two lines may not name one folder. A malformed line is not skipped: the whole
file is refused, each bad line said by its number — a scheduled job that silently left a
site out would go unnoticed.

Pure rules (no Scrapy): the command checks each site's arguments against the spider.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from discovery_crawler.arguments import default_out_dir

_COMMENT = re.compile(r"(?:^|\s)#.*\Z", re.DOTALL)
_KEY = re.compile(r"[a-z_][a-z0-9_]*\Z")
RESERVED = ("url", "out")  # set by rediscover itself: the line's URL, ROOT/<host>


@dataclass(frozen=True)
class Site:
    """One line of the sites file: its number, URL and spider arguments."""

    line: int
    url: str
    arguments: dict[str, str] = field(default_factory=dict)

    @property
    def folder(self) -> str:
        """The site's folder name under the root (``example.com``, ``127.0.0.1_8080``)."""
        return default_out_dir(self.url).name


@dataclass(frozen=True)
class Problem:
    """A malformed line: its number and what is wrong with it."""

    line: int
    message: str


class SitesFileError(Exception):
    """The sites file cannot be used; ``lines`` says why, one line each, naming the file
    (and the line)."""

    def __init__(self, lines: list[str]):
        self.lines = lines
        super().__init__("\n".join(lines))


def _site_url(token: str) -> str | None:
    """Why ``token`` is not a site URL, or None."""
    try:
        parts = urlsplit(token)
        parts.port  # noqa: B018 — a bad port raises here
    except ValueError as exc:
        return f"{token!r} is not a URL ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"{token!r} is not a site URL (http:// or https:// and a host)"
    return None


def parse_line(number: int, text: str) -> Site | Problem | None:
    """One line: a ``Site``, a ``Problem``, or None (blank or a comment)."""
    tokens = _COMMENT.sub("", text).split()
    if not tokens:
        return None
    url, *pairs = tokens
    if (why := _site_url(url)) is not None:
        return Problem(number, why)
    arguments: dict[str, str] = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not _KEY.match(key):
            return Problem(number, f"{pair!r} is not a key=value spider argument")
        if key in RESERVED:
            return Problem(
                number, f"{key}= is set by rediscover (the line's URL, ROOT/<host>/); remove it"
            )
        if key in arguments:
            return Problem(number, f"{key}= is given twice")
        arguments[key] = value
    return Site(number, url, arguments)


def parse_sites(text: str) -> tuple[list[Site], list[Problem]]:
    """Every site of a sites file's text, and every malformed line (two lines naming one
    folder: the second is the problem)."""
    sites: list[Site] = []
    problems: list[Problem] = []
    folders: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        found = parse_line(number, line)
        if isinstance(found, Problem):
            problems.append(found)
        elif found is not None:
            if (first := folders.setdefault(found.folder, number)) != number:
                problems.append(
                    Problem(number, f"runs into {found.folder}/ as line {first} does; keep one")
                )
            else:
                sites.append(found)
    return sites, problems


def read_text(path: Path) -> str:
    """The sites file's text; ``SitesFileError`` when it is missing, unreadable or not
    UTF-8 text."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SitesFileError([f"cannot read the sites file {path}: {exc.strerror}"]) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        number = data.count(b"\n", 0, exc.start) + 1
        raise SitesFileError([f"{path}:{number}: not UTF-8 text"]) from None


def problem_lines(path: Path, sites: list[Site], problems: list[Problem]) -> list[str]:
    """What is said of a refused file, one line per malformed line in the file's order
    (``sites.txt:4: …``); a file with no site at all is refused too."""
    if not sites and not problems:
        return [f"{path}: no site in it (one site URL a line)"]
    return [f"{path}:{p.line}: {p.message}" for p in sorted(problems, key=lambda p: p.line)]
