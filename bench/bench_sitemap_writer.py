"""How long ``scrapy sitemap`` takes, and how much memory, on a large inventory
(``discovery_crawler/output/sitemap_writer.py``): a synthetic ``inventory.jsonl`` of N
realistic records (union-mode page records: citation, fetch fields, a lastmod; 1 in 10
not indexable, 1 in 20 with hreflang alternates, 1 in 50 not fetched), a crawl log that
says the run completed, then ``write_sitemaps`` in a child process: wall time, CPU time
and the child's peak RSS (``wait4``).

    .venv/bin/python bench/bench_sitemap_writer.py --urls 1000000 [--gzip] [--keep DIR]

Results go in bench/README.md ("Sitemap writer").
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SITE = "https://shop.example.com"


def write_inventory(path: Path, urls: int) -> None:
    """N feed lines as a union crawl writes them, fast (a template per kind)."""
    page = (
        '{{"url": "{site}/catalog/{g}/item-{i}/", "source": "sitemap", '
        '"sitemap": "{site}/sitemap-{g}.xml", "sources": ["{site}/sitemap-{g}.xml"], '
        '"lastmod": "2024-0{m}-1{d}T10:2{d}:00+00:00", "priority": null, "changefreq": null, '
        '"alternates": {alts}, "via": "sitemap", "found_on": "{site}/sitemap-{g}.xml", '
        '"anchor": null, "depth": 1, "title": "Item {i} of group {g}", "status": {status}, '
        '"refusal": null, "kind": "page", "flags": {flags}, "slug": "item-{i}", "score": 3, '
        '"change": "new", "live": true, "indexability": "{verdict}"}}\n'
    )
    unfetched = (
        '{{"url": "{site}/files/doc-{i}.pdf", "source": "sitemap", '
        '"sitemap": "{site}/sitemap-{g}.xml", "sources": ["{site}/sitemap-{g}.xml"], '
        '"lastmod": null, "priority": null, "changefreq": null, "alternates": null, '
        '"kind": "document", "flags": null, "slug": "doc-{i}", "score": 1, "change": "new"}}\n'
    )
    with path.open("w", encoding="utf-8", buffering=1 << 20) as out:
        for i in range(urls):
            g = i % 97
            if i % 50 == 49:
                out.write(unfetched.format(site=SITE, g=g, i=i))
                continue
            alts = "null"
            if i % 20 == 0:
                alts = json.dumps(
                    [
                        {"hreflang": "en", "href": f"{SITE}/catalog/{g}/item-{i}/"},
                        {"hreflang": "de", "href": f"{SITE}/de/katalog/{g}/artikel-{i}/"},
                    ]
                )
            bad = i % 10 == 3
            out.write(
                page.format(
                    site=SITE,
                    g=g,
                    i=i,
                    m=1 + i % 9,
                    d=i % 10,
                    alts=alts,
                    status=200,
                    flags='["noindex"]' if bad else "null",
                    verdict="noindex" if bad else "indexable",
                )
            )
    log = {"runs": [{"status": "completed", "discovery": {"site": SITE}}]}
    (path.parent / "_crawl-log.json").write_text(json.dumps(log), encoding="utf-8")


CHILD = """
import sys, time
from pathlib import Path
from discovery_crawler.output.sitemap_writer import write_sitemaps
folder, gz = Path(sys.argv[1]), sys.argv[2] == "1"
t0 = time.perf_counter()
w = write_sitemaps(folder / "inventory.jsonl", folder / "sitemaps", sys.argv[3],
                   sys.argv[3] + "/sitemaps/", gzipped=gz)
print(w.urls, len(w.parts), round(time.perf_counter() - t0, 2))
"""


def run_writer(folder: Path, gzipped: bool) -> dict[str, float]:
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(folder), "1" if gzipped else "0", SITE],
        stdout=subprocess.PIPE,
        text=True,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    out = proc.stdout.read().split() if proc.stdout else []
    if status != 0 or len(out) != 3:
        raise SystemExit(f"writer failed (status {status}): {out}")
    size = sum(p.stat().st_size for p in (folder / "sitemaps").iterdir())
    return {
        "urls_written": int(out[0]),
        "parts": int(out[1]),
        "write_seconds": float(out[2]),
        "wall_seconds": round(wall, 2),
        "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "output_mb": round(size / 1e6, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--gzip", action="store_true")
    parser.add_argument("--keep", type=Path, default=None, help="work here, and keep it")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-sitemap-writer-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        inventory = work / "inventory.jsonl"
        t0 = time.perf_counter()
        if not inventory.exists():
            write_inventory(inventory, args.urls)
        made = time.perf_counter() - t0
        result = {
            "urls": args.urls,
            "gzip": args.gzip,
            "inventory_mb": round(inventory.stat().st_size / 1e6, 1),
            "inventory_seconds": round(made, 1),
            **run_writer(work, args.gzip),
            "bench_peak_rss_mb": round(
                resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1
            ),
        }
        print(json.dumps(result))
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
