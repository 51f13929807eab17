"""Slips of the hand on ``scrapy crawl``'s command line, each said in one line that names
what was typed and what would work, before Scrapy parses the rest (``commands/crawl.py``
calls ``check_command_line`` first and exits with status 2 on a ``CommandLineMistake``):

- a spider name that is not one (``scrapy crawl discovr``): Scrapy would raise a
  ``KeyError`` traceback once the crawler is built;
- ``--profile massive``: Scrapy's own ``--profile FILE`` runs the command under cProfile and
  writes the stats to ``FILE``, so the settings profile of that name would silently not
  apply (the project's profiles are ``-a profile=NAME``);
- ``-O inventory.txt``: Scrapy's message lists every exporter it knows (xml, marshal,
  pickle …), which the project's spiders then refuse; this one names the formats the
  spider writes.
"""

from __future__ import annotations

import difflib
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterable, Sequence


class CommandLineMistake(ValueError):
    """A slip on the command line, its message one line."""


def spider_name_mistake(name: str, spiders: Sequence[str]) -> str | None:
    """``no spider named 'discovr' (spiders: discover, estimate, links); did you mean
    'discover'?`` — None when ``name`` is a spider."""
    if name in spiders:
        return None
    message = f"no spider named {name!r} (spiders: {', '.join(sorted(spiders)) or 'none'})"
    close = difflib.get_close_matches(name, spiders, n=1)
    if close:
        message += f"; did you mean {close[0]!r}?"
    return message


def profile_option_mistake(value: str | None, profiles: Iterable[str]) -> str | None:
    """Scrapy's ``--profile`` given a settings profile's name (None otherwise: a real
    profiler run, ``--profile stats.prof``, is left alone)."""
    if not value or value not in set(profiles):
        return None
    return (
        f"--profile is Scrapy's profiler option (it writes cProfile stats to a file named "
        f"{value!r}); did you mean -a profile={value}?"
    )


def feed_format_of(element: str, known: Iterable[str]) -> str:
    """The format of a ``-o``/``-O`` value as Scrapy reads it: ``URI:FORMAT`` when the part
    after the last colon is a known format, else the file's extension."""
    uri, colon, fmt = element.rpartition(":")
    if colon and uri and fmt in set(known):
        return fmt
    return PurePath(element).suffix.lstrip(".")


def _formats_words(formats: Sequence[str]) -> str:
    """``jsonl (jsonlines), json and csv``: aliases of one exporter in parentheses."""
    aliases = {"jsonlines": "jsonl", "jl": "jsonl"}
    main = [f for f in formats if f not in aliases or aliases[f] not in formats]
    words = []
    for fmt in main:
        also = [a for a in formats if aliases.get(a) == fmt]
        words.append(f"{fmt} ({', '.join(also)})" if also else fmt)
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " and " + words[-1]


def feed_mistake(
    flag: str, element: str, formats: Sequence[str], known: Iterable[str]
) -> str | None:
    """``-O inventory.txt: unknown feed format 'txt'; discovery_crawler writes jsonl
    (jsonlines), json and csv: use -O inventory.jsonl or -O inventory.csv`` — None when
    ``element``'s format is one of ``formats`` (``known``: every format Scrapy would
    read after a colon)."""
    fmt = feed_format_of(element, [*known, *formats])
    if fmt in formats:
        return None
    first = formats[0] if formats else "jsonl"
    if not fmt:  # no extension (``-O -``, ``-O out``): the format after a colon
        what = "no feed format (no file extension)"
        uses = [f"{flag} {element}:{first}"]
    else:
        what = f"unknown feed format {fmt!r}"
        if element.endswith(":" + fmt):
            stem = element[: -len(fmt) - 1]
        else:
            stem = str(PurePath(element).with_suffix(""))
        uses = [f"{flag} {stem}.{f}" for f in dict.fromkeys([first, "csv"]) if f in formats]
    return (
        f"{flag} {element}: {what}; discovery_crawler writes {_formats_words(formats)}: "
        f"use {' or '.join(uses)}"
    )


def check_command_line(
    args: Sequence[str],
    opts: argparse.Namespace,
    spiders: Sequence[str],
    profiles: Iterable[str],
    formats_of: Any,
    known_formats: Iterable[str],
) -> None:
    """Raise ``CommandLineMistake`` for the first slip found (``formats_of(spider)``: the
    feed formats that spider writes)."""
    if len(args) != 1:
        return  # no spider, or several: Scrapy's usage message says it
    name = args[0]
    if (mistake := spider_name_mistake(name, spiders)) is not None:
        raise CommandLineMistake(mistake)
    if (mistake := profile_option_mistake(getattr(opts, "profile", None), profiles)) is not None:
        raise CommandLineMistake(mistake)
    formats = list(formats_of(name))
    for flag, elements in (("-o", opts.output), ("-O", opts.overwrite_output)):
        for element in elements or ():
            if (mistake := feed_mistake(flag, element, formats, known_formats)) is not None:
                raise CommandLineMistake(mistake)
