"""``scrapy`` with the sitemap worker killed (SIGKILL) right after its first reply.

    python tests/probes/worker_death.py crawl discover -a url=… -O feed.jsonl

Used by ``tests/sitemaps/test_worker.py`` to show that a worker dying mid-document loses
nothing: the spider re-parses in-process from the entry where the worker stopped.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from scrapy.cmdline import execute

from discovery_crawler.sitemaps import worker

_deliver = worker.ParseWorker._deliver


def _deliver_then_kill(self: worker.ParseWorker, message: tuple[str, int, Any]) -> None:
    _deliver(self, message)
    if message[0] == "batches" and not getattr(self, "killed", False):
        self.killed = True
        assert self._process is not None
        os.kill(self._process.pid, signal.SIGKILL)


worker.ParseWorker._deliver = _deliver_then_kill  # type: ignore[method-assign]

if __name__ == "__main__":
    sys.argv = ["scrapy", *sys.argv[1:]]
    execute()
