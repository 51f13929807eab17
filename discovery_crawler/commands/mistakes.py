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
  spider writes; ``-O some/folder`` says it is a folder;
- no spider (``scrapy crawl``), or words after it that are no option (``scrapy crawl
  discover https://example.com``, ``--max-pages 5``): Scrapy prints its whole help, or
  "more than one spider";
- ``-s HOST_INTERVAL=abc``: Scrapy would take it and fail with a traceback once a component
  reads it; the value is read here as the setting's default's type;
- an option Scrapy's parser refuses (``-O`` with no value): its usage block and the error,
  five lines, become one (``one_line_errors``, for every command of the project).
"""

from __future__ import annotations

import difflib
import re
import sys
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, NoReturn

from discovery_crawler.spiders.base import setting_mistake

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
    if "://" not in element and element not in ("-", "") and Path(element).is_dir():
        first = formats[0] if formats else "jsonl"
        inside = PurePath(element) / f"inventory.{first}"
        return (
            f"{flag} {element}: is a folder, not a feed file; use {flag} {inside} "
            f"(or -a out={element} for the run's folder)"
        )
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


def no_spider_mistake(spiders: Sequence[str]) -> str:
    """``scrapy crawl`` alone."""
    first = "discover" if "discover" in spiders else (sorted(spiders) or ["SPIDER"])[0]
    return (
        f"no spider given (spiders: {', '.join(sorted(spiders)) or 'none'}); "
        f"e.g. scrapy crawl {first} -a url=https://example.com/"
    )


def extra_word_mistake(name: str, word: str, value: str | None, arguments: Iterable[str]) -> str:
    """A word after the spider's name that Scrapy's parser did not take: an option it does
    not know (``--max-pages``), a URL, or a second spider."""
    if word.startswith("-"):
        key, eq, given = word.lstrip("-").partition("=")
        key = key.replace("-", "_")
        given = given if eq else (value or "VALUE")
        if key in set(arguments):
            return (
                f"unknown option {word}; spider arguments go as -a NAME=VALUE: "
                f"did you mean -a {key}={given}?"
            )
        return (
            f"unknown option {word} (scrapy crawl -h lists the options; spider arguments "
            f"go as -a NAME=VALUE)"
        )
    if "://" in word or re.fullmatch(r"[\w-]+(\.[\w-]+)+(:\d+)?(/\S*)?", word):
        return f"{word!r} after the spider's name: give the start URL as -a url={word}"
    return (
        f"{word!r} after {name!r}: scrapy crawl runs one spider; its arguments go as "
        f"-a NAME=VALUE (e.g. -a url=https://example.com/)"
    )


def check_command_line(
    args: Sequence[str],
    opts: argparse.Namespace,
    spiders: Sequence[str],
    profiles: Iterable[str],
    formats_of: Any,
    known_formats: Iterable[str],
    arguments: Iterable[str] = (),
) -> None:
    """Raise ``CommandLineMistake`` for the first slip found (``formats_of(spider)``: the
    feed formats that spider writes; ``arguments``: the ``-a`` names the spiders take)."""
    if not args:
        raise CommandLineMistake(no_spider_mistake(spiders))
    name = args[0]
    if (mistake := spider_name_mistake(name, spiders)) is not None:
        raise CommandLineMistake(mistake)
    if len(args) > 1:
        value = args[2] if len(args) > 2 and not args[2].startswith("-") else None
        raise CommandLineMistake(extra_word_mistake(name, args[1], value, arguments))
    if (mistake := profile_option_mistake(getattr(opts, "profile", None), profiles)) is not None:
        raise CommandLineMistake(mistake)
    formats = list(formats_of(name))
    for flag, elements in (("-o", opts.output), ("-O", opts.overwrite_output)):
        for element in elements or ():
            if (mistake := feed_mistake(flag, element, formats, known_formats)) is not None:
                raise CommandLineMistake(mistake)


def check_settings(given: Sequence[str], defaults: Any) -> None:
    """``given``: Scrapy's ``-s NAME=VALUE`` list; ``defaults(name)``: the default a
    setting has (None: unknown). Raise ``CommandLineMistake`` for the first value its
    setting cannot read."""
    for item in given or ():
        name, _, value = str(item).partition("=")
        if (mistake := setting_mistake(name, value, defaults(name))) is not None:
            raise CommandLineMistake(mistake)


# What would work, for an option given without its value (argparse: "expected one argument").
OPTION_EXAMPLES = {
    "-o/--output": "-o inventory.jsonl",
    "-O/--overwrite-output": "-O inventory.jsonl",
    "-a": "-a url=https://example.com/",
    "-s/--set": "-s HOST_INTERVAL=2",
    "--run": "--run 1",
    "--depth": "--depth 2",
}


def one_line_errors(parser: argparse.ArgumentParser) -> None:
    """Scrapy's parser answers a wrong option (and a command's ``UsageError``) with its
    usage block and the error: five lines, the one that matters last. This parser says
    the error in one line, with an example when the option has one, and exits 2."""
    usage = parser.usage

    def error(message: str) -> NoReturn:
        option = re.match(r"argument (\S+):", message)
        example = OPTION_EXAMPLES.get(option.group(1)) if option else None
        if example:
            hint = f" (e.g. {example})"
        else:  # the usage, unless the message shows it already
            hint = "" if "scrapy " in message else f" (usage: {usage})"
        print(f"error: {message}{hint}", file=sys.stderr)
        raise SystemExit(2)

    parser.error = error  # type: ignore[method-assign]
