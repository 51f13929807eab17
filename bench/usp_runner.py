"""ultimate-sitemap-parser contender; runs inside ``bench/.venv-peers``.

Kept in its own file (and venv) so usp's dependencies never touch the
project venv.  It does exactly what a usp user would: discover the tree from
the homepage (robots.txt + ~14 guessed paths), then iterate ``all_pages()``.
Prints one JSON line ``{"urls": N, "seconds": S}`` on stdout.
"""

from __future__ import annotations

import json
import sys
import time

from usp.tree import sitemap_tree_for_homepage


def main() -> int:
    """Count pages without keeping them, so RSS reflects usp itself."""
    homepage = sys.argv[1]
    t0 = time.perf_counter()
    tree = sitemap_tree_for_homepage(homepage)
    count = sum(1 for _ in tree.all_pages())
    print(json.dumps({"urls": count, "seconds": time.perf_counter() - t0}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
