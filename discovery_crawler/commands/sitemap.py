"""``scrapy sitemap DIR``: the sitemap set the site should have, written from the
inventory of the run in ``DIR`` (``output/sitemap_writer.py``): its indexable pages, split
at the protocol's limits, a ``sitemap_index.xml`` naming the parts under ``--base``, and
``changes.txt`` / ``changes.json`` against the site's own sitemaps.

A folder without a finished run, an inventory that is missing, or a base URL on another
origin (without ``--cross-origin``): one line, exit status 2. A folder that cannot be
written: one line, exit status 4 (output_failed)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from discovery_crawler.outcomes import BAD_ARGUMENTS, OUTPUT_FAILED, exit_code

if TYPE_CHECKING:
    import argparse


class Command(ScrapyCommand):
    requires_crawler_process = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_ENABLED": False}

    def syntax(self) -> str:
        return "DIR [--base URL] [--gzip] [--include-unfetched] [--cross-origin] [-o OUT]"

    def short_desc(self) -> str:
        return "Write the sitemap set the site should have from a run's folder"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument(
            "--base", default=None, help="URL the parts are served under (default: site/sitemaps/)"
        )
        parser.add_argument("--gzip", action="store_true", help="write sitemap-N.xml.gz")
        parser.add_argument(
            "--include-unfetched",
            action="store_true",
            help="also list sitemap URLs that were not fetched and that nothing contradicts",
        )
        parser.add_argument(
            "--cross-origin",
            action="store_true",
            help="allow a --base on another origin (its robots.txt must name the index)",
        )
        parser.add_argument("-o", "--out", default=None, help="output folder (DIR/sitemaps/)")
        parser.add_argument(
            "--inventory", default=None, help="the run's feed, when not DIR/inventory.jsonl"
        )

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1:
            raise UsageError("give one run folder (the -a out= folder of a finished run)")
        self.exitcode = write_from_folder(
            Path(args[0]),
            base=opts.base,
            gzipped=opts.gzip,
            include_unfetched=opts.include_unfetched,
            cross_origin=opts.cross_origin,
            out=Path(opts.out) if opts.out else None,
            inventory=Path(opts.inventory) if opts.inventory else None,
        )


def write_from_folder(
    folder: Path,
    *,
    base: str | None = None,
    gzipped: bool = False,
    include_unfetched: bool = False,
    cross_origin: bool = False,
    out: Path | None = None,
    inventory: Path | None = None,
) -> int:
    """Write the folder's sitemap set; print the summary; the exit status."""
    from discovery_crawler.output.sitemap_writer import (
        INVENTORY,
        RunFolderError,
        check_base,
        finished_run,
        run_site,
        summary_lines,
        write_sitemaps,
    )

    try:
        site = run_site(finished_run(folder), folder)
    except RunFolderError as exc:
        print(f"sitemap: {exc}", file=sys.stderr)
        return BAD_ARGUMENTS
    try:
        base = check_base(base or f"{site.rstrip('/')}/sitemaps/", site, cross_origin)
    except ValueError as exc:
        print(f"sitemap: {exc}", file=sys.stderr)
        return BAD_ARGUMENTS
    inventory = inventory or folder / INVENTORY
    if not inventory.is_file():
        print(f"sitemap: {inventory}: no inventory (give --inventory FEED.jsonl)", file=sys.stderr)
        return BAD_ARGUMENTS
    out = out or folder / "sitemaps"
    try:
        written = write_sitemaps(
            inventory, out, site, base, gzipped=gzipped, include_unfetched=include_unfetched
        )
    except OSError as exc:
        print(f"sitemap: cannot write {out}: {exc.strerror or exc}", file=sys.stderr)
        return exit_code(OUTPUT_FAILED)
    for line in summary_lines(written.changes, written.urls, len(written.parts)):
        print(line)
    print(f"Index: {written.index} (parts under {base}); changes: {written.changes_path}")
    return 0
