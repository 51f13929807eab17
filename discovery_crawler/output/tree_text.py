"""A crawl log's trees as text for a terminal (``scrapy report LOG --tree``, ``python -m
discovery_crawler.output.report LOG --tree``): the sitemap tree as walked — the input,
robots.txt, the sitemaps it advertised and the conventional addresses, each index's
children — one line per document with its format, gzip, URLs found and error, like
ultimate-sitemap-parser's ``usp ls``; then the path tree with counts (the crawl log's
``tree``), drawn with box-drawing characters.

Plain functions over the crawl log's JSON (no Scrapy): any ``_crawl-log.json``, old runs
included, is read defensively (a missing key is an empty part). Every name printed comes
from a site, so control and format characters (ANSI escapes, bidi overrides) are shown
escaped and long names are cut: a hostile sitemap cannot rewrite the terminal.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from discovery_crawler.output.log_values import as_dict as _d
from discovery_crawler.output.log_values import as_int as _int
from discovery_crawler.output.log_values import as_list as _l
from discovery_crawler.urls.display import readable

MAX_NAME = 160  # characters of one URL or name shown; the rest is cut, with "…"
BRANCH, LAST, PIPE, SPACE = "├── ", "└── ", "│   ", "    "
LISTED = "listed"  # selection/tree.py's status of a URL nobody fetched


class LogError(Exception):
    """The crawl log cannot be read; the message is the one line to print, ``status`` the
    exit status (2: no such file or run, a wrong argument; 1: not a crawl log)."""

    def __init__(self, message: str, status: int = 1):
        super().__init__(message)
        self.status = status


def clean(value: Any, limit: int = MAX_NAME) -> str:
    """``value`` as one safe line: what is not printable — control and format characters,
    separators but the space — escaped (``\\x1b``, ``\\u202e``, ``\\xa0``),
    cut to ``limit`` characters with ``…``."""
    out = []
    for ch in str(value):
        if not ch.isprintable():  # controls, format (bidi), separators, unassigned
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    text = "".join(out)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _n(count: int, what: str) -> str:
    """``1 URL``, ``2 URLs``."""
    return f"{count:,} {what}{'' if count == 1 else 's'}"


def load_run(path: Path, run: int | None = None) -> dict[str, Any]:
    """Run ``run`` of the crawl log at ``path`` (1 = the first, negative from the end;
    None: the last), or ``LogError`` saying why not."""
    if not path.exists():
        raise LogError(f"{clean(path)}: no such file (give a _crawl-log.json)", 2)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise LogError(
            f"{clean(path)}: cannot read the crawl log ({exc.strerror or exc})"
        ) from None
    except UnicodeDecodeError:
        raise LogError(f"{clean(path)}: not a crawl log (not UTF-8 text)") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise LogError(f"{clean(path)}: not a crawl log (invalid JSON: {exc})") from None
    runs = [r for r in _l(_d(data).get("runs")) if isinstance(r, dict)]
    if not runs:
        raise LogError(f"{clean(path)}: not a crawl log with runs (no runs[] in it)")
    if run is None:
        return runs[-1]
    index = run - 1 if run > 0 else run
    if run == 0 or not -len(runs) <= index < len(runs):
        raise LogError(f"{clean(path)}: no run {run} (the log has runs 1 to {len(runs)})", 2)
    return runs[index]


# -- the sitemap tree ----------------------------------------------------------------------
def _attempt_line(attempt: dict[str, Any]) -> str:
    parts = []
    if attempt.get("source"):
        parts.append(str(attempt["source"]))
    if attempt.get("format"):
        parts.append(str(attempt["format"]))
    if attempt.get("gzipped"):
        parts.append("gzip")
    if (attempt.get("ok") and not attempt.get("index")) or _int(attempt.get("urls")):
        parts.append(_n(_int(attempt.get("urls")), "URL"))
    if _int(attempt.get("sitemaps")) or attempt.get("index"):
        parts.append(_n(_int(attempt.get("sitemaps")), "sitemap"))
    if _int(attempt.get("malformed")):
        parts.append(f"{_int(attempt['malformed']):,} malformed")
    line = clean(attempt.get("url"))
    if parts:
        line += f"  [{', '.join(clean(p) for p in parts)}]"
    for key in ("error", "problem", "note"):
        if attempt.get(key):
            line += f"  {key}: {clean(attempt[key])}"
    return line


def _robots_line(robots: dict[str, Any]) -> str:
    line = f"{clean(robots.get('url'))}  [robots.txt"
    if robots.get("status") is not None:
        line += f", {clean(robots['status'])}"
    line += f", {_n(len(_l(robots.get('sitemaps'))), 'sitemap')}]"
    if robots.get("error"):
        line += f"  error: {clean(robots['error'])}"
    return line


def sitemap_tree_lines(run: dict[str, Any]) -> list[str]:
    """The sitemap tree as walked: the input, robots.txt, each sitemap under whoever named
    it (robots.txt, an index; the conventional addresses and an input sitemap at the top),
    the sitemaps skipped with their reason; a cycle or an orphan is drawn once."""
    discovery = _d(run.get("discovery"))
    attempts = [a for a in _l(discovery.get("sitemap_attempts")) if isinstance(a, dict)]
    skipped = [
        s for s in _l(_d(discovery.get("sitemaps_skipped")).get("items")) if isinstance(s, dict)
    ]
    robots = _d(discovery.get("robots"))
    children: dict[Any, list[tuple[str, Any]]] = {}
    for attempt in attempts:
        children.setdefault(attempt.get("parent"), []).append(
            (_attempt_line(attempt), attempt.get("url"))
        )
    for skip in skipped:
        line = f"{clean(skip.get('url'))}  skipped: {clean(skip.get('reason'))}"
        children.setdefault(skip.get("parent"), []).append((line, None))
    known = {a.get("url") for a in attempts}
    top: list[tuple[str, Any]] = []
    if robots.get("url"):
        top.append((_robots_line(robots), robots["url"]))
        known.add(robots["url"])
    top.extend(children.get(None, []))
    for parent, kids in children.items():  # named by a document the log has no line for
        if parent is not None and parent not in known:
            top.extend(kids)
    head = _d(run.get("input")).get("url") or _d(discovery.get("site")).get("origin")
    lines = [f"Sitemaps of {clean(head or '?')}"]
    if not top:
        return [*lines, "(no robots.txt or sitemap was fetched)"]
    drawn: set[Any] = set()
    # Depth first with a stack of (entries, next index, prefix): a chain of thousands of
    # nested indexes (SITEMAP_MAX_DEPTH 0 allows it) must not hit the recursion limit.
    stack: list[tuple[list[tuple[str, Any]], int, str]] = [(top, 0, "")]
    while stack:
        entries, i, prefix = stack.pop()
        if i >= len(entries):
            continue
        line, url = entries[i]
        last = i == len(entries) - 1
        lines.append(prefix + (LAST if last else BRANCH) + line)
        stack.append((entries, i + 1, prefix))
        if url is not None and url not in drawn:
            drawn.add(url)
            stack.append((children.get(url, []), 0, prefix + (SPACE if last else PIPE)))
    return lines


# -- the path tree -------------------------------------------------------------------------
def _tally(counts: Any, skip: str | None = None) -> str:
    items = [(k, _int(v)) for k, v in _d(counts).items() if k != skip and _int(v)]
    return ", ".join(f"{clean(k, 40)} {v:,}" for k, v in sorted(items, key=lambda kv: -kv[1]))


def _node_line(node: dict[str, Any]) -> str:
    line = f"{clean(readable(str(node.get('name') or '/')))}  {_int(node.get('count')):,}"
    extra = []
    kinds = _d(node.get("kinds"))
    if set(kinds) - {"page"}:
        extra.append(_tally(kinds))
    sources = _d(node.get("sources"))
    if len(sources) > 1 or set(sources) - {"sitemap"}:
        extra.append(_tally(sources))
    statuses = _d(node.get("statuses"))
    if set(statuses) - {LISTED, "200"}:
        extra.append("status " + _tally(statuses))
    return line + (f"  ({'; '.join(extra)})" if extra else "")


def path_tree_lines(run: dict[str, Any], depth: int | None = None) -> list[str]:
    """The path tree with counts (URLs at or below each node); kinds other than pages,
    sources other than sitemaps and statuses other than listed or 200 in brackets; nodes
    deeper than ``depth`` (the root is 0) cut, with what they hold counted."""
    tree = _d(run.get("tree"))
    root = _d(tree.get("root"))
    if not root:
        return ["Paths", "(no path tree: no URL reached the groups stage)"]
    urls, nodes = _n(_int(tree.get("urls")), "URL"), _n(_int(tree.get("nodes")), "node")
    lines = [f"Paths ({urls}, {nodes})"]
    lines.append(_node_line(root))

    def kids_of(node: dict[str, Any]) -> list[dict[str, Any]]:
        return [c for c in _l(node.get("children")) if isinstance(c, dict)]

    # Iterative, as the sitemap tree: a crawl log is input, its nesting unbounded.
    stack: list[tuple[list[dict[str, Any]], int, str, int]] = []

    def push(node: dict[str, Any], prefix: str, level: int) -> None:
        kids = kids_of(node)
        if not kids:
            return
        if depth is not None and level >= depth:
            below = sum(_int(c.get("count")) for c in kids)
            what = f"{_n(len(kids), 'node')}, {_n(below, 'URL')} below"
            lines.append(f"{prefix}{LAST}… {what} (--depth {depth})")
            return
        stack.append((kids, 0, prefix, level))

    push(root, "", 0)
    while stack:
        kids, i, prefix, level = stack.pop()
        if i >= len(kids):
            continue
        last = i == len(kids) - 1
        lines.append(prefix + (LAST if last else BRANCH) + _node_line(kids[i]))
        stack.append((kids, i + 1, prefix, level))
        push(kids[i], prefix + (SPACE if last else PIPE), level + 1)
    return lines


def render(
    run: dict[str, Any], *, depth: int | None = None, sitemaps: bool = True, paths: bool = True
) -> str:
    """Both trees (or one), separated by a blank line, ending with a newline."""
    blocks = []
    if sitemaps:
        blocks.append("\n".join(sitemap_tree_lines(run)))
    if paths:
        blocks.append("\n".join(path_tree_lines(run, depth)))
    return "\n\n".join(blocks) + "\n"


def _depth(text: str) -> int:
    value = int(text)
    if value < 0:
        raise ValueError(text)
    return value


TREE_OPTIONS = ("--tree", "--no-sitemaps", "--sitemaps-only")


def asked(argv: list[str]) -> bool:
    """Whether a command line asks for the trees (``report.py``'s ``main`` dispatches)."""
    return any(arg in TREE_OPTIONS for arg in argv)


def parser(prog: str = "scrapy report") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog, description="Print a crawl log's sitemap tree and path tree."
    )
    p.add_argument("log", metavar="LOG", help="a _crawl-log.json (or the folder holding it)")
    p.add_argument("--tree", action="store_true", help="print the trees (the default)")
    p.add_argument(
        "--run", type=int, default=None, help="run N of the log (1 = first; default: last)"
    )
    p.add_argument("--depth", type=_depth, default=None, help="cut the path tree below depth N")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--no-sitemaps", action="store_true", help="only the path tree")
    which.add_argument("--sitemaps-only", action="store_true", help="only the sitemap tree")
    return p


def log_path_of(text: str) -> Path:
    """A folder stands for its ``_crawl-log.json``."""
    path = Path(text)
    return path / "_crawl-log.json" if path.is_dir() else path


def print_trees(args: argparse.Namespace, out: Any = None) -> int:
    """Print the trees the options ask for; a log that cannot be read is one line on
    stderr and status 1."""
    try:
        run = load_run(log_path_of(args.log), args.run)
    except LogError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.status
    text = render(
        run, depth=args.depth, sitemaps=not args.no_sitemaps, paths=not args.sitemaps_only
    )
    stream = out or sys.stdout
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:  # `| head`: the reader has all it wanted
        # Python flushes stdout again at exit: point it at /dev/null, or that flush fails.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def main(
    argv: list[str] | None = None, prog: str = "python -m discovery_crawler.output.report"
) -> int:
    """Parse ``argv`` (wrong options: argparse's usage line, status 2) and print."""
    return print_trees(parser(prog).parse_args(argv), None)
