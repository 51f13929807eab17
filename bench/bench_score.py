"""Micro-benchmark of the score stage's per-URL cost (SPEC §8 on the sitemap hot path).

Times ``Rater.rate_many`` + writing ``score`` + ``Selector.offer_many`` on 1,000-URL batches,
as ``pipelines/score.py`` runs them, on two inputs:

- ``bench``: the URLs of ``bench_sitemap.py`` (``/section-N/article-N/`` with lastmod,
  changefreq and priority), the 1M-URL benchmark's shape;
- ``real``: every ``<loc>`` of the realdata sitemaps (``../shared/realdata``), when present.

    .venv/bin/python bench/bench_score.py [--urls 200000]

Prints µs per URL (best of 5 runs) for scoring alone and for scoring + selection.
"""

from __future__ import annotations

import argparse
import gzip
import random
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from discovery_crawler.selection.scoring import Rater  # noqa: E402
from discovery_crawler.selection.selector import Selector, plan_selection  # noqa: E402

CHANGEFREQS = ["always", "hourly", "daily", "weekly", "monthly", "yearly", "never"]
BASE = "http://127.0.0.1:8000"
REALDATA = ROOT.parent / "shared" / "realdata" / "sitemaps"


def bench_records(n: int, seed: int = 1) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        ts = 1_600_000_000 + rng.randrange(150_000_000)
        out.append(
            {
                "url": f"{BASE}/section-{rng.randrange(1, 41)}/article-{100_001 + i}/",
                "source": "sitemap",
                "sitemap": "http://127.0.0.1:8000/sitemap-01.xml.gz",
                "lastmod": time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(ts)),
                "priority": rng.randrange(1, 11) / 10,
                "changefreq": rng.choice(CHANGEFREQS),
                "alternates": None,
                "kind": "page",
                "flags": None,
                "slug": None,
            }
        )
    return out


def real_records() -> list[dict]:
    locs: list[str] = []
    if not REALDATA.exists():
        return []
    for path in sorted(REALDATA.rglob("*")):
        if not path.is_file() or path.suffix not in (".xml", ".gz"):
            continue
        data = path.read_bytes()
        if data[:2] == b"\x1f\x8b":
            try:
                data = gzip.decompress(data)
            except OSError:
                continue
        text = data.decode("utf-8", "replace")
        locs += [m.strip() for m in re.findall(r"<loc>([^<]+)</loc>", text)]
    locs = [u for u in locs if u.startswith(("http://", "https://")) and u.find("/", 8) > 0]
    return [
        {
            "url": u,
            "lastmod": None,
            "priority": None,
            "changefreq": None,
            "kind": "page",
            "flags": None,
        }
        for u in locs
    ]


def batches(records: list[dict], size: int = 1000) -> list[list[dict]]:
    return [records[i : i + size] for i in range(0, len(records), size)]


def run(records: list[dict], select: bool) -> float:
    best = float("inf")
    for _ in range(5):
        rater = Rater()
        plan = plan_selection(
            cap=None,
            all_pages=False,
            pages=(),
            single=False,
            setting_cap=5,
            setting_source="default",
        )
        selector = Selector(plan, 100)
        parts = batches([dict(r) for r in records])
        start = time.perf_counter()
        for batch in parts:
            totals, types, slots = rater.rate_many(batch, fetched=False, write=True)
            if select:
                selector.offer_many(batch, totals, types, slots)
        best = min(best, time.perf_counter() - start)
    return best / len(records) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--urls", type=int, default=200_000)
    args = parser.parse_args()
    inputs = {"bench": bench_records(args.urls), "real": real_records()}
    for name, records in inputs.items():
        if not records:
            print(f"{name}: no input (realdata missing)")
            continue
        score = run(records, select=False)
        both = run(records, select=True)
        print(
            f"{name:5} {len(records):>8,} URLs: score {score:.2f} µs/URL, "
            f"score + select {both:.2f} µs/URL"
        )


if __name__ == "__main__":
    main()
