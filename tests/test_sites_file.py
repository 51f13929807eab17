"""The sites file of ``scrapy rediscover`` (``sites_file.py``): a URL and ``key=value``
arguments a line, ``#`` comments, blank lines; every malformed line found, by number."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from discovery_crawler.sites_file import (
    Problem,
    Site,
    SitesFileError,
    parse_line,
    parse_sites,
    problem_lines,
    read_text,
)

hosts = st.from_regex(r"[a-z][a-z0-9-]{0,10}(\.[a-z]{2,5}){1,2}", fullmatch=True)
ports = st.one_of(st.just(""), st.integers(1, 65535).map(lambda p: f":{p}"))
paths = st.from_regex(r"(/[A-Za-z0-9._~%-]{0,8}){0,3}/?(#[a-z]{1,5})?", fullmatch=True)
urls = st.builds(
    lambda s, h, p, path: f"{s}://{h}{p}{path}",
    st.sampled_from(["http", "https"]),
    hosts,
    ports,
    paths,
)
keys = st.from_regex(r"[a-z_][a-z0-9_]{0,12}", fullmatch=True).filter(
    lambda k: k not in ("url", "out")
)
values = st.text(st.characters(exclude_categories=("Z", "C")), max_size=12).filter(
    lambda v: "#" not in v
)
arguments = st.dictionaries(keys, values, max_size=4)
spaces = st.sampled_from([" ", "  ", "\t", " \t "])


@given(url=urls, args=arguments, gap=spaces, comment=st.sampled_from(["", " # a note", "\t#x"]))
def test_a_line_gives_its_url_and_arguments(url, args, gap, comment):
    text = gap.join([url, *(f"{k}={v}" for k, v in args.items())]) + comment
    assert parse_line(7, f"{gap}{text}{gap}") == Site(7, url, args)


@given(st.text(st.characters(exclude_characters="\n\r"), max_size=40))
def test_a_comment_or_blank_line_is_skipped(text):
    assert parse_line(1, "#" + text) is None
    assert parse_line(1, "   \t#" + text) is None
    assert parse_line(1, " \t ") is None


@given(st.text(max_size=300))
def test_any_text_parses_without_error_and_every_line_is_accounted(text):
    sites, problems = parse_sites(text)
    lines = text.split("\n")
    numbers = [s.line for s in sites] + [p.line for p in problems]
    assert len(numbers) == len(set(numbers))  # a line is a site, a problem or nothing
    assert all(1 <= n <= len(lines) for n in numbers)
    assert all(isinstance(p.message, str) and p.message for p in problems)


def test_a_hash_inside_a_url_is_not_a_comment():
    assert parse_line(1, "https://example.com/#top mode=sitemap # nightly") == Site(
        1, "https://example.com/#top", {"mode": "sitemap"}
    )


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("example.com/", "is not a site URL"),
        ("ftp://example.com/", "is not a site URL"),
        ("https:///nohost", "is not a site URL"),
        ("https://example.com:99999/", "is not a URL"),
        ("https://example.com/ max_pages", "'max_pages' is not a key=value spider argument"),
        ("https://example.com/ =5", "'=5' is not a key=value"),
        ("https://example.com/ Mode=links", "'Mode=links' is not a key=value"),
        ("https://example.com/ out=/tmp/x", "out= is set by rediscover"),
        ("https://example.com/ url=https://a.org/", "url= is set by rediscover"),
        ("https://example.com/ mode=links mode=union", "mode= is given twice"),
    ],
)
def test_a_malformed_line_is_a_problem_naming_it(line, says):
    found = parse_line(3, line)
    assert isinstance(found, Problem) and found.line == 3
    assert says in found.message


def test_two_lines_into_one_folder_are_refused_at_the_second():
    text = "https://example.com/\n\nhttps://example.com/sitemap.xml mode=sitemap\n"
    sites, problems = parse_sites(text)
    assert [s.line for s in sites] == [1]
    assert problems == [Problem(3, "runs into example.com/ as line 1 does; keep one")]


def test_lines_are_numbered_as_an_editor_numbers_them():
    """A form feed, U+2028 or U+0085 inside a line does not end it: the malformed line is
    said by the number ``wc -l`` and an editor give it (and CRLF ends a line as LF)."""
    text = "https://a.com/\x0c\r\nfoo\r\nhttps://b.com/ mode=links\u2028\x85\nbar\n"
    sites, problems = parse_sites(text)
    assert [s.line for s in sites] == [1, 3]
    assert [p.line for p in problems] == [2, 4]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("https://EXAMPLE.com", "https://example.com/"),
        ("https://example.com:443/", "https://Example.com/sitemap.xml"),
        ("https://هاكنتوش.com/", "https://xn--mgbg4a8cpdl.com/"),
        ("https://%D9%87%D8%A7%D9%83%D9%86%D8%AA%D9%88%D8%B4.com/", "https://هاكنتوش.com/"),
    ],
)
def test_one_host_written_two_ways_is_one_folder(first, second):
    """Upper case, a default port, an IDN in Unicode, percent-encoded or xn-- form: one
    host, one folder (and a plain run's default folder is the same one)."""
    sites, problems = parse_sites(f"{first}\n{second}\n")
    assert len(problems) == 1 and problems[0].line == 2, problems
    assert sites[0].folder == problems[0].message.split()[2].rstrip("/")
    assert sites[0].folder.isascii() and sites[0].folder == sites[0].folder.lower()


def test_two_idns_of_one_length_are_two_folders():
    """Two IDNs never fold into one ``_``-filled name (``b_cher.de``) and refuse each other."""
    sites, problems = parse_sites("https://bücher.de/\nhttps://bäcker.de/\n")
    assert problems == []
    assert [s.folder for s in sites] == ["xn--bcher-kva.de", "xn--bcker-gra.de"]


def test_a_port_is_part_of_the_folder():
    sites, _ = parse_sites("http://example.com:81/\nhttp://example.com:82/\n")
    assert [s.folder for s in sites] == ["example.com_81", "example.com_82"]


def test_the_refusal_names_the_file_and_each_line_in_order(tmp_path):
    path = tmp_path / "sites.txt"
    lines = problem_lines(path, [], [Problem(9, "b"), Problem(2, "a")])
    assert lines == [f"{path}:2: a", f"{path}:9: b"]
    assert problem_lines(path, [], []) == [f"{path}: no site in it (one site URL a line)"]


def test_a_missing_or_binary_file_is_said_in_one_line(tmp_path):
    with pytest.raises(SitesFileError) as missing:
        read_text(tmp_path / "nope.txt")
    assert missing.value.lines == [
        f"cannot read the sites file {tmp_path / 'nope.txt'}: No such file or directory"
    ]
    binary = tmp_path / "bin.txt"
    binary.write_bytes(b"https://example.com/\n# ok\n\xff\xfe\n")
    with pytest.raises(SitesFileError) as bad:
        read_text(binary)
    assert bad.value.lines == [f"{binary}:3: not UTF-8 text"]
    with_bom = tmp_path / "bom.txt"
    with_bom.write_bytes(b"\xef\xbb\xbfhttps://example.com/\n")
    assert parse_sites(read_text(with_bom))[0] == [Site(1, "https://example.com/")]


def test_a_folder_given_as_the_file_is_unreadable(tmp_path: Path):
    with pytest.raises(SitesFileError) as folder:
        read_text(tmp_path)
    assert folder.value.lines == [f"cannot read the sites file {tmp_path}: Is a directory"]
