"""Micro-benchmark: what counting the inventory's depths (``RunRecord.depths``, the crawl
log's ``discovery.depths``) adds per URL to the crawl-log stage.

    python bench/bench_depths.py [--urls 200000] [--repeat 5]

Feeds batches of 1,000 records (the unit of work, SPEC §2) shaped as the normalize stage
makes them to ``InventoryDepths.add_many`` and prints µs per URL, best of ``repeat`` (the
machine may be shared): plain sitemap URLs (the one-pass path), URLs with a query (URL by
URL), and link-crawl records that carry a ``depth``.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from typing import Any

from discovery_crawler.run_record import InventoryDepths

BATCH = 1_000
Maker = Callable[[int], list[dict[str, Any]]]


def _record(url: str, **extra: Any) -> dict[str, Any]:
    return {
        "url": url,
        "source": "sitemap",
        "sitemap": "https://example.com/sitemap.xml",
        "lastmod": "2026-01-01",
        "priority": None,
        "changefreq": None,
        "alternates": None,
        **extra,
    }


def sections(start: int) -> list[dict[str, Any]]:
    """bench_sitemap.py's shape: 40 sections, unique article ids."""
    rng = random.Random(start)
    return [
        _record(f"https://example.com/section-{rng.randrange(1, 41)}/article-{i}/")
        for i in range(start, start + BATCH)
    ]


def queries(start: int) -> list[dict[str, Any]]:
    """One URL in ten with a query: the whole batch is counted URL by URL."""
    return [
        _record(f"https://example.com/shop/item-{i}/" + ("?page=2" if i % 10 == 0 else ""))
        for i in range(start, start + BATCH)
    ]


def links(start: int) -> list[dict[str, Any]]:
    return [
        _record(f"https://example.com/docs/p{i}/", source="link", depth=i % 5)
        for i in range(start, start + BATCH)
    ]


CASES: dict[str, Maker] = {"sections": sections, "queries": queries, "links": links}


def measure(maker: Maker, urls: int, repeat: int) -> float:
    batches = [maker(start) for start in range(0, urls, BATCH)]
    best = float("inf")
    for _ in range(repeat):
        depths = InventoryDepths()
        began = time.perf_counter()
        for batch in batches:
            depths.add_many(batch)
        best = min(best, time.perf_counter() - began)
        assert sum(depths.path.values()) == len(batches) * BATCH
    return best / (len(batches) * BATCH) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for name, maker in CASES.items():
        print(f"{name:>10}: {measure(maker, args.urls, args.repeat):.3f} µs/URL")


if __name__ == "__main__":
    main()
