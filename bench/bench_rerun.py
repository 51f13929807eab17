"""Re-run benchmark (issue 35): what a scheduled re-run costs against a first run, with a
server that answers conditional requests (ETag / Last-Modified, 304).

For each tree — ``realistic`` (``bench_sitemap.py``'s 1.1M-URL tree) and ``questions``
(every URL in a folder of its own, ``/questions/<id>/<slug>``, as large Q&A and shop
sitemaps are written) — it runs ``scrapy crawl discover -a profile=massive``:

1. a first run into an empty folder;
2. a re-run with nothing changed;
3. a re-run after one child sitemap changed (5 URLs added, 5 removed, its index
   ``<lastmod>`` updated) — checked: exactly 5 new and 5 removed, only the index and that
   child downloaded, and the same inventory (every field but ``change``) as
4. a first run of the changed tree into another folder.

``--no-validators``: the server sends no ETag / Last-Modified (nothing answers 304; a child
whose index ``<lastmod>`` is unchanged is still carried over, SITEMAP_TRUST_INDEX_LASTMOD).
With ``--no-lastmod-trust`` as well, every re-run is a full walk.
Prints wall s, CPU s, peak RSS (the process tree's), bytes and requests served per run.

    .venv/bin/python bench/bench_rerun.py --children 4 --per-child 10000   # quick
    .venv/bin/python bench/bench_rerun.py                                  # 20 x 50k
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import multiprocessing
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
PROJECT = BENCH_DIR.parent
sys.path[:0] = [str(BENCH_DIR), str(PROJECT)]

from bench_sitemap import (  # noqa: E402
    PROJECT_SCRAPY,
    child_name,
    generate_questions,
    generate_tree,
    run_measured,
)

from discovery_crawler.site_server import SiteServer  # noqa: E402

_BLOCK = re.compile(r"<url>.*?</url>", re.DOTALL)
_LOC = re.compile(r"<loc>\s*(.*?)\s*</loc>", re.DOTALL)


def mutate(root: Path, base: str, children: int) -> tuple[list[str], list[str]]:
    """Child 1: 5 plain page blocks out (none listed elsewhere), 5 new in; its index
    ``<lastmod>`` updated. Returns (removed, added) URLs."""
    name = child_name(1, children)
    text = gzip.decompress((root / name).read_bytes()).decode()
    elsewhere = b"".join(
        gzip.decompress((root / child_name(c, children)).read_bytes())
        for c in range(2, children + 1)
    ).decode()
    removed, drop = [], []
    for match in _BLOCK.finditer(text):
        block = match.group(0)
        loc = _LOC.search(block)
        if loc is None or "<xhtml" in block or not loc.group(1).startswith(base + "/"):
            continue
        url = loc.group(1)
        if any(ch in url for ch in "?#&% ") or text.count(url) != 1 or url in elsewhere:
            continue
        removed.append(url)
        drop.append(match.span())
        if len(removed) == 5:
            break
    for start, end in reversed(drop):
        text = text[:start] + text[end:]
    added = [f"{base}/bench-new/page-{i}/" for i in range(5)]
    new = "".join(f"<url><loc>{u}</loc><lastmod>2025-06-01</lastmod></url>\n" for u in added)
    text = text.replace("</urlset>", new + "</urlset>")
    (root / name).write_bytes(gzip.compress(text.encode(), 6, mtime=0))
    index = (root / "sitemap_index.xml").read_text()
    loc = f"<loc>{base}/{name}</loc>"
    at = index.index(loc)
    end = index.index("</lastmod>", at)
    start = index.index("<lastmod>", at) + len("<lastmod>")
    (root / "sitemap_index.xml").write_text(
        index[:start] + "2025-06-01T00:00:00+00:00" + index[end:]
    )
    return removed, added


def digests(path: Path) -> list[bytes]:
    """Each feed record's digest, every field but ``change`` (sorted: order aside)."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            rec.pop("change", None)
            out.append(
                hashlib.blake2b(json.dumps(rec, sort_keys=True).encode(), digest_size=12).digest()
            )
    out.sort()
    return out


def one_run(
    server: SiteServer, work: Path, out: str, label: str, timeout: float, extra: tuple = ()
) -> dict:
    server.requests.clear()
    server.bytes_sent = 0
    feed = work / f"{label}.jsonl"
    cmd = [
        str(PROJECT_SCRAPY), "crawl", "discover", "-a", f"url={server.url('/sitemap_index.xml')}",
        "-a", f"out={work / out}", "-a", "profile=massive", "-O", str(feed),
        "-s", "TELNETCONSOLE_ENABLED=False", "-s", "LOG_LEVEL=INFO", *extra,
    ]  # fmt: skip
    code, wall, rss, timed_out, cpu = run_measured(cmd, PROJECT, work / f"{label}.log", timeout)
    changes = {}
    if (work / out / "changes.json").is_file():
        changes = json.loads((work / out / "changes.json").read_text())
    return {
        "label": label,
        "exit": code,
        "timed_out": timed_out,
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "peak_rss_mb": round(rss, 1),
        "bytes": server.bytes_sent,
        "requests": len(server.requests),
        "asked": sorted({(p, s) for _, p, s in server.requests}),
        "new": (changes.get("new") or {}).get("count"),
        "removed": (changes.get("removed") or {}).get("count"),
        "feed": str(feed),
    }


def _realistic(site: Path, base: str, children: int, per_child: int, seed: int) -> int:
    return generate_tree(site, base, children, per_child, seed, tree="realistic")


def _in_child(fn: Any, *args: Any) -> Any:
    """``fn(*args)`` in a spawned process. Building or editing the tree holds hundreds of
    MB in this process, and a crawl started from it by fork inherits that high-water mark
    as its own ``ru_maxrss`` (Linux keeps it across exec): the one-changed re-run and the
    fresh run of the changed tree both showed the 784 MB of ``mutate``, not their own."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(fn, args)


def bench_tree(tree: str, args: argparse.Namespace, work: Path) -> dict:
    site = work / f"{tree}-site"
    site.mkdir()
    server = SiteServer(site, validators=not args.no_validators)
    base = server.origin
    if tree == "questions":
        _in_child(generate_questions, site, base, args.children, args.per_child, args.seed)
    else:
        _in_child(_realistic, site, base, args.children, args.per_child, args.seed)
    server.start()
    extra = ("-s", "SITEMAP_TRUST_INDEX_LASTMOD=False") if args.no_lastmod_trust else ()
    t = args.timeout
    try:
        runs = [one_run(server, work, f"{tree}-a", f"{tree}-first", t, extra)]
        runs.append(one_run(server, work, f"{tree}-a", f"{tree}-unchanged", t, extra))
        removed, added = _in_child(mutate, site, base, args.children)
        runs.append(one_run(server, work, f"{tree}-a", f"{tree}-one-changed", t, extra))
        runs.append(one_run(server, work, f"{tree}-b", f"{tree}-fresh-changed", t, extra))
    finally:
        server.stop()
    first, same, changed, fresh = runs
    checks = {
        "five_new_five_removed": (changed["new"], changed["removed"]) == (5, 5),
        "inventory_equals_fresh_run": digests(Path(changed["feed"]))
        == digests(Path(fresh["feed"])),
    }
    if not args.no_validators or not args.no_lastmod_trust:
        child = f"/{child_name(1, args.children)}"
        checks["downloads_only_index_and_child"] = [
            p for p, s in changed["asked"] if s == 200
        ] == sorted(["/sitemap_index.xml", child])
    ratios = {
        "one_changed_wall": round(changed["wall_s"] / first["wall_s"], 2),
        "one_changed_rss": round(changed["peak_rss_mb"] / first["peak_rss_mb"], 2),
        "unchanged_wall": round(same["wall_s"] / first["wall_s"], 2),
        "unchanged_rss": round(same["peak_rss_mb"] / first["peak_rss_mb"], 2),
    }
    return {
        "tree": tree,
        "runs": runs,
        "checks": checks,
        "ratios": ratios,
        "removed": removed,
        "added": added,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--children", type=int, default=20)
    p.add_argument("--per-child", type=int, default=50_000)
    p.add_argument("--trees", default="realistic,questions")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--timeout", type=float, default=1800)
    p.add_argument("--no-validators", action="store_true", help="a server without validators")
    p.add_argument(
        "--no-lastmod-trust",
        action="store_true",
        help="SITEMAP_TRUST_INDEX_LASTMOD=False: no child carried over on its index <lastmod>",
    )
    p.add_argument("--json", type=Path)
    p.add_argument("--keep", action="store_true")
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-rerun-"))
    results = []
    try:
        for tree in args.trees.split(","):
            result = bench_tree(tree, args, work)
            results.append(result)
            print(f"\n{tree} ({args.children} x {args.per_child:,})")
            print(
                "| run | exit | wall s | CPU s | peak RSS MB | bytes | requests | new | removed |"
            )
            print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
            for r in result["runs"]:
                print(
                    f"| {r['label']} | {r['exit']} | {r['wall_s']} | {r['cpu_s']} | "
                    f"{r['peak_rss_mb']} | {r['bytes']:,} | {r['requests']} | {r['new']} | "
                    f"{r['removed']} |"
                )
            print("ratios:", result["ratios"])
            print("checks:", result["checks"])
        if args.json:
            args.json.write_text(json.dumps(results, indent=2))
    finally:
        if args.keep:
            print("kept", work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0 if all(all(r["checks"].values()) for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
