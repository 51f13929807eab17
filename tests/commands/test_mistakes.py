"""The command line's slips, as plain functions (``commands/mistakes.py``); the real
command is run in ``e2e/test_hand_mistakes.py``."""

from __future__ import annotations

import argparse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from discovery_crawler.commands.mistakes import (
    CommandLineMistake,
    check_command_line,
    feed_format_of,
    feed_mistake,
    profile_option_mistake,
    spider_name_mistake,
)

SPIDERS = ("discover", "estimate", "links")
FORMATS = ("jsonl", "jsonlines", "json", "csv")
SCRAPY = (*FORMATS, "jl", "xml", "marshal", "pickle")


def test_spider_name_known_is_no_mistake():
    assert spider_name_mistake("links", SPIDERS) is None


def test_spider_name_far_from_any_lists_them_without_a_guess():
    message = spider_name_mistake("zzz", SPIDERS)
    assert message == "no spider named 'zzz' (spiders: discover, estimate, links)"


@given(st.sampled_from(SPIDERS), st.integers(0, 7))
def test_spider_name_one_letter_dropped_is_guessed(name, at):
    typo = name[: at % len(name)] + name[at % len(name) + 1 :]
    message = spider_name_mistake(typo, SPIDERS)
    assert message is not None and message.endswith(f"did you mean {name!r}?")


def test_profile_option_left_alone_unless_it_names_a_profile():
    assert profile_option_mistake(None, ["massive"]) is None
    assert profile_option_mistake("stats.prof", ["massive"]) is None
    assert "-a profile=polite" in (profile_option_mistake("polite", ["polite"]) or "")


@pytest.mark.parametrize(
    ("element", "fmt"),
    [
        ("inventory.jsonl", "jsonl"),
        ("out/inv.csv", "csv"),
        ("inv:xml", "xml"),
        ("s3://b/k.json", "json"),  # the colon of a scheme is not a format
        ("-", ""),
        ("C:/x/inventory.txt", "txt"),
    ],
)
def test_feed_format_read_as_scrapy_reads_it(element, fmt):
    assert feed_format_of(element, SCRAPY) == fmt


@given(st.sampled_from(FORMATS), st.text("abcxyz_-", min_size=1, max_size=12))
def test_feed_in_a_written_format_is_no_mistake(fmt, stem):
    assert feed_mistake("-O", f"out/{stem}.{fmt}", FORMATS, SCRAPY) is None


def test_feed_without_extension_suggests_the_colon_form():
    message = feed_mistake("-O", "-", FORMATS, SCRAPY)
    assert message is not None and message.endswith("use -O -:jsonl")


def test_check_command_line_first_slip_wins():
    opts = argparse.Namespace(profile="massive", output=None, overwrite_output=["a.txt"])
    with pytest.raises(CommandLineMistake, match="did you mean -a profile=massive"):
        check_command_line(["discover"], opts, SPIDERS, ["massive"], lambda _: FORMATS, SCRAPY)
    opts.profile = None
    with pytest.raises(CommandLineMistake, match=r"-O a\.txt: unknown feed format 'txt'"):
        check_command_line(["discover"], opts, SPIDERS, ["massive"], lambda _: FORMATS, SCRAPY)
    check_command_line([], opts, SPIDERS, ["massive"], lambda _: FORMATS, SCRAPY)  # Scrapy's
