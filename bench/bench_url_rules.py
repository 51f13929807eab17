"""Per-URL cost of the URL-kind and junk rules, µs per URL (``timeit``, best of 15), and
optionally against another copy of them (``--old DIR`` holding ``kinds.py`` and ``junk.py``,
e.g. from ``git show main:discovery_crawler/urls/kinds.py``), interleaved in one process so
that the machine's load hits both alike:

    .venv/bin/python bench/bench_url_rules.py [--old DIR]

Sets: plain sitemap URLs (``/section-N/article-N/``, one batch-level test settles them),
the same without the trailing slash (a per-URL test each), the first 50,000 ``<loc>`` of
../shared/realdata/sitemaps, and Sphinx API pages (``/api/….html``, the ``url_kind`` path).
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import re
import sys
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from discovery_crawler.urls import junk as new_junk  # noqa: E402
from discovery_crawler.urls import kinds as new_kinds  # noqa: E402
from discovery_crawler.urls.slugs import normalized_paths  # noqa: E402


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--old", type=Path, help="a folder with other kinds.py and junk.py")
args = parser.parse_args()
old_kinds = _load(args.old / "kinds.py", "old_kinds") if args.old else new_kinds
old_junk = _load(args.old / "junk.py", "old_junk") if args.old else new_junk
N = 50_000
plain = [f"https://www.example.com/section-{i % 7}/article-{i}/" for i in range(N)]
noslash = [f"https://www.example.com/section-{i % 7}/article-{i}" for i in range(N)]
real = []
for f in sorted((ROOT.parent / "shared" / "realdata" / "sitemaps").rglob("*")):
    if f.is_file():
        b = f.read_bytes()
        if b[:2] == b"\x1f\x8b":
            b = gzip.decompress(b)
        real += re.findall(r"<loc>\s*(https?://[^<\s]+)\s*</loc>", b.decode("utf-8", "replace"))
real = real[:N]
sphinx = [f"https://docs.example.com/api/ktk.Player.m{i}.html" for i in range(N)]


def per_url(fn, n: int) -> float:
    return min(timeit.repeat(fn, number=1, repeat=15)) / n * 1e6


def kinds_many(module, batches):
    return lambda: [module.url_kinds_many(batch) for batch in batches]


def kind_each(module, urls):
    return lambda: [module.url_kind(url) for url in urls]


def junk_many(module, batches):
    return lambda: [module.junk_patterns_many(batch) for batch in batches]


SETS = (("plain", plain), ("no-slash", noslash), ("real", real), ("sphinx-api", sphinx))
for name, urls in SETS:
    batches = [urls[i : i + 1000] for i in range(0, len(urls), 1000)]
    paths = [normalized_paths(batch) for batch in batches]
    row = [f"{name:10}"]
    for label, make, data in (
        ("url_kinds_many", kinds_many, batches),
        ("url_kind", kind_each, urls),
    ):
        old = per_url(make(old_kinds, data), len(urls))
        new = per_url(make(new_kinds, data), len(urls))
        row.append(f"{label} {old:.3f} -> {new:.3f}")
    old = per_url(junk_many(old_junk, paths), len(urls))
    new = per_url(junk_many(new_junk, paths), len(urls))
    row.append(f"junk_patterns_many {old:.3f} -> {new:.3f}")
    print("  ".join(row))
