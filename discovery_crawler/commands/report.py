"""``scrapy report LOG``: a crawl log (``_crawl-log.json``, or its folder) read again.
With ``--tree`` it prints the sitemap tree as walked and the path tree with counts
(``output/tree_text.py``); without, it rewrites ``report.html`` beside the log, as
``python -m discovery_crawler.output.report LOG`` does. A missing or unreadable log is
one line and exit status 2 (no such file) or 1 (not a crawl log)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from discovery_crawler.commands.mistakes import one_line_errors

if TYPE_CHECKING:
    import argparse


class Command(ScrapyCommand):
    requires_crawler_process = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_ENABLED": False}

    def syntax(self) -> str:
        return "LOG [--tree] [--run N] [--depth N] [--no-sitemaps | --sitemaps-only]"

    def short_desc(self) -> str:
        return "Print a crawl log's sitemap and path trees (--tree), or rewrite its report.html"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        one_line_errors(parser)
        parser.add_argument("--tree", action="store_true", help="print the trees as text")
        parser.add_argument("--run", type=int, default=None, help="run N (1 = first; default last)")
        parser.add_argument("--depth", type=int, default=None, help="cut the path tree below N")
        parser.add_argument("--no-sitemaps", action="store_true", help="only the path tree")
        parser.add_argument("--sitemaps-only", action="store_true", help="only the sitemap tree")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1:
            raise UsageError("give one crawl log (_crawl-log.json, or the folder holding it)")
        if opts.depth is not None and opts.depth < 0:
            raise UsageError("--depth: a number of levels, 0 or more")
        if opts.no_sitemaps and opts.sitemaps_only:
            raise UsageError("--no-sitemaps and --sitemaps-only exclude each other")
        from discovery_crawler.output import tree_text

        if opts.tree or opts.no_sitemaps or opts.sitemaps_only:
            opts.log = args[0]
            self.exitcode = tree_text.print_trees(opts)
            return
        from discovery_crawler.output.report import main as report_main

        self.exitcode = report_main([str(tree_text.log_path_of(args[0]))])
