"""The crawl log's trees as text (``output/tree_text.py``): golden output on crawl logs of
real runs, the options, hostile names and logs that cannot be read."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from discovery_crawler.output import report, tree_text
from tests.conftest import FIXTURES

TREE = FIXTURES / "tree"


def _run(name: str) -> dict[str, Any]:
    return json.loads((TREE / name).read_text(encoding="utf-8"))["runs"][-1]


def test_golden_index_site():
    """robots.txt → index → gzipped child, nested index, missing children; paths with
    a document among pages."""
    expected = (TREE / "index-tree.txt").read_text(encoding="utf-8")
    assert tree_text.render(_run("index-crawl-log.json")) == expected


def test_golden_demo_run_cut_at_depth_2():
    expected = (TREE / "demo-tree-depth2.txt").read_text(encoding="utf-8")
    assert tree_text.render(_run("demo-crawl-log.json"), depth=2) == expected


def test_sitemap_lines_say_format_gzip_urls_and_error():
    lines = tree_text.sitemap_tree_lines(_run("index-crawl-log.json"))
    assert lines[0] == "Sitemaps of https://example.com/"
    [gz] = [line for line in lines if "posts.xml.gz" in line]
    assert gz == "│   │   ├── https://example.com/posts.xml.gz  [index, urlset, gzip, 6 URLs]"
    [gone] = [line for line in lines if "gone.xml" in line]
    assert gone.endswith("gone.xml  [index]  error: HTTP 404")
    assert lines[-1].startswith("└── https://example.com/sitemap.txt  [conventional]")


def test_path_tree_counts_and_box_drawing():
    lines = tree_text.path_tree_lines(_run("index-crawl-log.json"))
    assert lines[:3] == ["Paths (15 URLs, 18 nodes)", "/  15  (page 14, document 1)", "├── blog  6"]
    assert "│       ├── post-1  1" in lines
    assert lines[-1] == "    └── admin  1"


def test_depth_zero_shows_the_root_and_what_is_below():
    lines = tree_text.path_tree_lines(_run("demo-crawl-log.json"), depth=0)
    assert lines[1:] == [
        "/  165",
        "└── … 6 nodes, 164 URLs below (--depth 0)",
    ]  # the home page is the root's own


def test_one_tree_only():
    run = _run("index-crawl-log.json")
    assert "Paths" not in tree_text.render(run, paths=False)
    assert "Sitemaps of" not in tree_text.render(run, sitemaps=False)


def test_input_sitemap_orphans_skips_and_cycles():
    """A sitemap given as input is a root; a child whose parent has no line is drawn at
    the top; a skipped sitemap says why; a cycle (a → b → a) is drawn once."""
    run = {
        "input": {"url": "https://example.com/a.xml"},
        "discovery": {
            "sitemap_attempts": [
                {"url": "https://example.com/a.xml", "source": "input", "parent": None,
                 "ok": True, "index": True, "format": "sitemapindex", "sitemaps": 1},
                {"url": "https://example.com/b.xml", "source": "index",
                 "parent": "https://example.com/a.xml", "ok": True, "index": True,
                 "format": "sitemapindex", "sitemaps": 1},
                {"url": "https://example.com/a.xml", "source": "index",
                 "parent": "https://example.com/b.xml", "error": "already visited"},
                {"url": "https://example.com/c.xml", "source": "index",
                 "parent": "https://example.com/lost.xml", "ok": True, "urls": 3},
            ],
            "sitemaps_skipped": {"items": [
                {"url": "https://example.com/d.xml", "parent": "https://example.com/b.xml",
                 "reason": "depth"}]},
        },
    }  # fmt: skip
    assert tree_text.sitemap_tree_lines(run) == [
        "Sitemaps of https://example.com/a.xml",
        "├── https://example.com/a.xml  [input, sitemapindex, 1 sitemap]",
        "│   └── https://example.com/b.xml  [index, sitemapindex, 1 sitemap]",
        "│       ├── https://example.com/a.xml  [index]  error: already visited",
        "│       └── https://example.com/d.xml  skipped: depth",
        "└── https://example.com/c.xml  [index, 3 URLs]",
    ]


def test_empty_and_old_runs_print_something():
    assert tree_text.render({}) == (
        "Sitemaps of ?\n(no robots.txt or sitemap was fetched)\n\n"
        "Paths\n(no path tree: no URL reached the groups stage)\n"
    )
    # wrong types where dicts and lists belong are empty parts, not a traceback
    odd = {"discovery": {"sitemap_attempts": "x", "robots": [1]}, "tree": {"root": 3}}
    assert "no robots.txt" in tree_text.render(odd)


def test_hostile_names_are_escaped_and_cut():
    evil = "\x1b[2J\x1b]0;pwned\x07\u202eevil\nname" + "x" * 500
    run = {
        "discovery": {"sitemap_attempts": [{"url": evil, "error": "bad\rline"}]},
        "tree": {"urls": 1, "nodes": 2, "root": {"name": "/", "count": 1, "children": [
            {"name": evil, "count": 1, "kinds": {"page\x1b": 1}}]}},
    }  # fmt: skip
    text = tree_text.render(run)
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text and "\r" not in text
    assert "\\x1b[2J" in text and "\\u202e" in text
    assert text.count("\n") == len(text.splitlines())  # one line per entry
    assert max(len(line) for line in text.splitlines()) < 400


@given(st.text())
def test_clean_is_one_printable_line(value):
    out = tree_text.clean(value)
    assert len(out) <= tree_text.MAX_NAME
    assert all(ch.isprintable() for ch in out), repr(out)


def _args(log: Path | str, *extra: str) -> Any:
    return tree_text.parser().parse_args([str(log), "--tree", *extra])


def test_runs_by_number_and_folder(tmp_path):
    first, last = _run("index-crawl-log.json"), _run("demo-crawl-log.json")
    (tmp_path / "_crawl-log.json").write_text(json.dumps({"runs": [first, last]}))
    for extra, site in (
        ((), "23people"),
        (("--run", "1"), "example.com"),
        (("--run", "-1"), "23people"),
    ):
        out = io.StringIO()
        assert tree_text.print_trees(_args(tmp_path, *extra), out) == 0
        assert site in out.getvalue().splitlines()[0]


@pytest.mark.parametrize(
    ("content", "status", "says"),
    [
        (None, 2, "no _crawl-log.json in this folder"),
        (b"{not json", 1, "invalid JSON"),
        (b"\xff\xfe\x00", 1, "not UTF-8"),
        (b'{"runs": []}', 1, "no runs[]"),
        (b"[1, 2]", 1, "no runs[]"),
    ],
)
def test_unreadable_logs_are_one_line(tmp_path, capsys, content, status, says):
    log = tmp_path / "_crawl-log.json"
    if content is not None:
        log.write_bytes(content)
    assert tree_text.print_trees(_args(log), io.StringIO()) == status
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and says in err


def test_a_run_that_is_not_there(tmp_path, capsys):
    log = tmp_path / "log.json"
    log.write_text(json.dumps({"runs": [{}]}))
    assert tree_text.print_trees(_args(log, "--run", "2"), io.StringIO()) == 2
    assert "no run 2 (the log has runs 1 to 1)" in capsys.readouterr().err


def test_report_module_dispatches_tree(capsys):
    assert report.main([str(TREE / "index-crawl-log.json"), "--tree"]) == 0
    assert capsys.readouterr().out == (TREE / "index-tree.txt").read_text(encoding="utf-8")


def test_deep_nesting_draws_without_recursion():
    """A chain of 5,000 nested indexes (SITEMAP_MAX_DEPTH 0 allows it) and as deep a
    hand-made path tree: drawn, not a RecursionError."""
    deep = 5000
    attempts = [
        {
            "url": f"https://example.com/{i}.xml",
            "parent": f"https://example.com/{i - 1}.xml" if i else None,
        }
        for i in range(deep)
    ]
    node: dict[str, Any] = {"name": "leaf", "count": 1}
    for i in range(deep):
        node = {"name": f"n{i}", "count": 1, "children": [node]}
    run = {"discovery": {"sitemap_attempts": attempts}, "tree": {"root": node}}
    sitemaps = tree_text.sitemap_tree_lines(run)
    paths = tree_text.path_tree_lines(run)
    assert len(sitemaps) == deep + 1 and sitemaps[-1].endswith("── https://example.com/4999.xml")
    assert len(paths) == deep + 2 and paths[-1].endswith("└── leaf  1")
    assert len(tree_text.path_tree_lines(run, depth=3)) == 6


def test_report_module_dispatches_each_tree_option(tmp_path, capsys):
    log = str(TREE / "index-crawl-log.json")
    assert report.main([log, "--no-sitemaps"]) == 0
    assert capsys.readouterr().out.startswith("Paths (15 URLs, 18 nodes)")
    assert not (tmp_path / "--no-sitemaps").exists()
