"""``scrapy`` that says, when it ends, the peak memory of its process tree: one line on
stderr, ``peak_rss_kb=N`` — its own high-water mark (``VmHWM``) plus the largest of its
children's (a sitemap worker), an upper bound.

    python tests/probes/peak_rss.py crawl links -a url=… -O feed.jsonl

Used by ``tests/e2e/test_links_bad_input.py`` to hold a page of 200,000 links to bounded
memory: ``RUSAGE_CHILDREN`` in the test process would be the largest of every crawl the
session ran, not this one's.
"""

from __future__ import annotations

import atexit
import resource
import sys

from scrapy.cmdline import execute


def _say_peak() -> None:
    own = 0
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                own = int(line.split()[1])
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"peak_rss_kb={own + children}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    atexit.register(_say_peak)
    sys.argv = ["scrapy", *sys.argv[1:]]
    execute()
