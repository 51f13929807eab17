"""``scrapy crawl`` for this project: the stock command, plus

- a wrong spider argument prints one line naming it and what it accepts, and exits with
  status 2 — no traceback (the spider validates the same way under Scrapyd);
- a run that could not do its job (an unreachable host) exits with status 1.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from scrapy.exceptions import UsageError

from discovery_crawler.arguments import ArgumentError

if TYPE_CHECKING:
    import argparse


class Command(ScrapyCrawlCommand):
    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1:
            super().run(args, opts)
            return
        assert self.crawler_process
        spidercls = self.crawler_process.spider_loader.load(args[0])
        validate = getattr(spidercls, "validate_arguments", None)
        if validate is not None:
            try:
                validate(opts.spargs, self.settings)
            except ArgumentError as exc:
                print(f"error: {exc}", file=sys.stderr)
                self.exitcode = 2
                return
        crawler = self._create_crawler(args[0])
        self.crawler_process.crawl(crawler, **opts.spargs)
        self.crawler_process.start()
        if self.crawler_process.bootstrap_failed or crawler.stats.get_value("discovery/failed"):
            self.exitcode = 1


__all__ = ["Command", "UsageError"]
