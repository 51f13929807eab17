"""Micro-benchmark: per-URL cost and peak memory of the groups + path tree stage.

    python bench/bench_groups.py [--urls 1000000] [--repeat 3]

For each URL shape it feeds batches of 1,000 URLs (the unit of work, SPEC §2) through
``split_many`` + ``Groups.add_many`` + ``PathTree.add_many`` — and, as the pipeline does,
through the column extraction from records — and prints µs per URL (best of ``repeat``,
the machine may be shared) and the tracemalloc peak over the whole run. Target (issue 5):
≤ 0.6 µs/URL for the stage on the benchmark sitemap's shape (``sections``).
"""

from __future__ import annotations

import argparse
import random
import time
import tracemalloc
from collections.abc import Callable

from discovery_crawler.pipelines.groups import columns
from discovery_crawler.selection.groups import Groups
from discovery_crawler.selection.parents import split_many
from discovery_crawler.selection.tree import PathTree

BATCH = 1_000
Maker = Callable[[int], list[str]]


def sections(start: int) -> list[str]:
    """The shape of bench_sitemap.py: 40 sections, unique article ids."""
    rng = random.Random(start)
    return [
        f"https://example.com/section-{rng.randrange(1, 41)}/article-{i}/"
        for i in range(start, start + BATCH)
    ]


def few(start: int) -> list[str]:
    names = ("blog", "docs", "news", "shop", "help")
    return [
        f"https://example.com/{names[i % 5]}/{2020 + i % 7}/post-{i}-hello-world/"
        for i in range(start, start + BATCH)
    ]


def distinct_parents(start: int) -> list[str]:
    return [f"https://example.com/c{i}/item/" for i in range(start, start + BATCH)]


def top_level(start: int) -> list[str]:
    return [f"https://example.com/post-{i}-hello/" for i in range(start, start + BATCH)]


CASES: dict[str, Maker] = {
    "sections": sections,
    "few": few,
    "distinct_parents": distinct_parents,
    "top_level": top_level,
}


def records_of(urls: list[str]) -> list[dict[str, object]]:
    return [{"url": u, "source": "sitemap", "kind": "page"} for u in urls]


def run(make: Maker, urls: int, with_records: bool, trace: bool) -> tuple[float, float]:
    groups, tree = Groups(), PathTree()
    batches = urls // BATCH
    elapsed = 0.0
    if trace:
        tracemalloc.start()
    for b in range(batches):
        batch = make(b * BATCH)
        records = records_of(batch) if with_records else None
        kinds = ["page"] * BATCH
        sources = ["sitemap"] * BATCH
        t0 = time.perf_counter()
        if records is not None:
            batch, kinds, sources, statuses = columns(records)
        else:
            statuses = None
        split = split_many(batch)
        groups.add_many(batch, split=split)
        tree.add_many(batch, kinds, sources, statuses, split=split)
        elapsed += time.perf_counter() - t0
        del batch, records, split
    peak = 0.0
    if trace:
        peak = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
    return elapsed / (batches * BATCH) * 1e6, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'case':<18} {'stage µs/URL':>13} {'+columns µs/URL':>16} {'peak MB':>8}")
    for name, make in CASES.items():
        stage = min(run(make, args.urls, False, False)[0] for _ in range(args.repeat))
        full = min(run(make, args.urls, True, False)[0] for _ in range(args.repeat))
        _, peak = run(make, args.urls, False, True)
        print(f"{name:<18} {stage:>13.3f} {full:>16.3f} {peak:>8.1f}")


if __name__ == "__main__":
    main()
