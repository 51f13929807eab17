"""ultimate-sitemap-parser reads one sitemap (or index) URL; runs inside
``bench/.venv-peers`` (``bench/bench_sitemap.py`` creates it). Prints the sorted URL set
of its pages as JSON on stdout: the differential check of the sitemaps ``scrapy sitemap``
writes (``tests/e2e/test_sitemap_writer.py``, ``bench/bench_sitemap_writer.py``).

    bench/.venv-peers/bin/python bench/usp_sitemap_urls.py http://127.0.0.1:PORT/sitemaps/sitemap_index.xml
"""

from __future__ import annotations

import json
import sys

from usp.fetch_parse import SitemapFetcher


def main() -> int:
    tree = SitemapFetcher(url=sys.argv[1], recursion_level=0).sitemap()
    urls = sorted({page.url for page in tree.all_pages()})
    print(json.dumps({"type": type(tree).__name__, "urls": urls}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
