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
    extra_word_mistake,
    feed_format_of,
    feed_mistake,
    one_line_errors,
    profile_option_mistake,
    setting_mistake,
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
    with pytest.raises(CommandLineMistake, match="no spider given"):
        check_command_line([], opts, SPIDERS, ["massive"], lambda _: FORMATS, SCRAPY)


@pytest.mark.parametrize(
    ("word", "value", "says"),
    [
        (
            "--max-pages",
            "5",
            "unknown option --max-pages; spider arguments go as -a NAME=VALUE: "
            "did you mean -a max_pages=5?",
        ),
        ("--mode=union", None, "did you mean -a mode=union?"),
        ("--frobnicate", None, "unknown option --frobnicate (scrapy crawl -h lists the options"),
        ("https://example.com/", None, "give the start URL as -a url=https://example.com/"),
        ("example.com", None, "give the start URL as -a url=example.com"),
        ("links", None, "'links' after 'discover': scrapy crawl runs one spider"),
    ],
)
def test_a_word_after_the_spider_says_what_was_meant(word, value, says):
    assert says in extra_word_mistake("discover", word, value, ["max_pages", "mode", "url"])


@pytest.mark.parametrize(
    ("name", "value", "default", "says"),
    [
        (
            "HOST_INTERVAL",
            "abc",
            1.0,
            "-s HOST_INTERVAL=abc: expected a number, e.g. -s HOST_INTERVAL=1.0 (its default)",
        ),
        ("CONCURRENT_REQUESTS", "many", 16, "expected a number"),
        ("ROBOTSTXT_OBEY", "maybe", False, "expected True or False (or 1 or 0)"),
        ("FEEDS", "{not json", {}, "expected a JSON object"),
    ],
)
def test_a_setting_value_its_setting_cannot_read(name, value, default, says):
    assert says in (setting_mistake(name, value, default) or "")


def test_an_int_default_takes_seconds_with_a_fraction():
    """Scrapy reads DOWNLOAD_TIMEOUT (default 180) with getfloat: 1.5 is a good value."""
    assert setting_mistake("DOWNLOAD_TIMEOUT", "1.5", 180) is None


@pytest.mark.parametrize(
    ("value", "default"),
    [
        ("2", 1.0),
        ("0.5", 1.0),
        ("3", 16),
        ("true", False),
        ("0", True),
        ("x", "text"),
        ("x", None),
        ('{"a": 1}', {}),
    ],
)
def test_a_setting_value_that_reads_is_no_mistake(value, default):
    assert setting_mistake("NAME", value, default) is None


def test_a_folder_given_as_the_feed_is_said(tmp_path):
    line = feed_mistake("-O", str(tmp_path), FORMATS, SCRAPY)
    assert line == (
        f"-O {tmp_path}: is a folder, not a feed file; use -O {tmp_path / 'inventory.jsonl'} "
        f"(or -a out={tmp_path} for the run's folder)"
    )


def test_the_parser_says_its_error_in_one_line(capsys):
    parser = argparse.ArgumentParser(usage="scrapy crawl [options] <spider>")
    parser.add_argument("-O", "--overwrite-output", action="append")
    parser.add_argument("--depth", type=int)
    one_line_errors(parser)
    with pytest.raises(SystemExit) as exit_:
        parser.parse_args(["-O"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err == (
        "error: argument -O/--overwrite-output: expected one argument (e.g. -O inventory.jsonl)\n"
    )
    with pytest.raises(SystemExit):
        parser.error("give one crawl log")
    assert capsys.readouterr().err == (
        "error: give one crawl log (usage: scrapy crawl [options] <spider>)\n"
    )
