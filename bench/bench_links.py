"""Link-crawl benchmark: ours (``scrapy crawl links``) vs a bare Scrapy CrawlSpider.

Two sites, each served on 127.0.0.1 at a kernel-chosen port by the project's
``SiteServer`` (a thread of this process):

- ``synthetic``: a generated 5,000-page site (home, 20 sections with 10 listing pages
  each, articles, static pages; 50-100 links a page: navigation, footer, pagination,
  breadcrumbs, related and popular articles, a few PDFs, external and nofollow links);
- ``arhackintosh``: the real WordPress export in ../shared/realdata (~850 pages reached
  by BFS from the home page), its production origins rewritten to the local one.

Politeness is off for both contenders (``HOST_INTERVAL=0``, no robots.txt), with the same
``CONCURRENT_REQUESTS`` and ``CONCURRENT_REQUESTS_PER_DOMAIN``. Contenders take turns
(ours, bare, ours, ...), each reported by its median run by wall time (spawn to exit,
so start-up counts); peak RSS from ``os.wait4`` on the child (see bench_sitemap.py).
Target (SPEC §14): ours/bare pages/s ≥ 1.0×, never below 0.8×.

Example::

    /work/main/.venv/bin/python bench/bench_links.py --sites synthetic --repeat 3
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
PROJECT_DIR = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(PROJECT_DIR))

from bench_sitemap import median_run, run_measured, tail  # noqa: E402

from discovery_crawler.site_server import SiteServer, unpack_site  # noqa: E402

REALDATA = PROJECT_DIR.parent / "shared" / "realdata"
CONTENDERS = ("ours", "bare")
SITES = ("synthetic", "arhackintosh")
PLACEHOLDER = "https://bench.example"
ARHACKINTOSH_ORIGINS = [
    "https://xn--mgbg4a8cpdl.com",
    "https://%D9%87%D8%A7%D9%83%D9%86%D8%AA%D9%88%D8%B4.com",  # the same IDN host, %-encoded
]
WORDS = tuple(
    [
        "crawler",
        "sitemap",
        "page",
        "link",
        "index",
        "archive",
        "section",
        "article",
        "update",
        "release",
        "guide",
        "note",
        "server",
        "client",
        "request",
        "response",
        "budget",
        "depth",
        "frontier",
        "queue",
        "policy",
        "record",
        "citation",
    ]
)


# --------------------------------------------------------------------------
# Synthetic site
# --------------------------------------------------------------------------


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _page(title: str, nav: str, body: str) -> str:
    return (
        "<!doctype html><html><head><meta charset=utf-8>"
        f"<title>{title}</title><link rel=stylesheet href=/static/site.css></head>"
        f"<body><header>{nav}</header><main>{body}</main></body></html>\n"
    )


def generate_site(root: Path, sections: int = 20, listing_pages: int = 10, seed: int = 1) -> int:
    """Write the synthetic site; return the number of HTML pages a full BFS fetches."""
    rng = random.Random(seed)
    per_listing = 24
    articles = [
        [f"/section-{s}/article-{s}-{i}/" for i in range(listing_pages * per_listing - 1)]
        for s in range(sections)
    ]
    statics = [f"/about/page-{i}/" for i in range(19)]
    nav_links = ['<a href="/">Home</a>'] + [
        f'<a href="/section-{s}/">Section {s}</a>' for s in range(sections)
    ]
    footer = [f'<a href="{PLACEHOLDER}{p}">About {i}</a>' for i, p in enumerate(statics)]
    nav = "<nav>" + " ".join(nav_links) + "</nav><footer>" + " ".join(footer) + "</footer>"
    all_articles = [a for sec in articles for a in sec]
    pages = 0

    def write(path: str, html: str) -> None:
        nonlocal pages
        out = root / path.strip("/") / "index.html" if path != "/" else root / "index.html"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(html, encoding="utf-8")
        pages += 1

    latest = " ".join(f'<a href="{a}">Article {a[-8:-1]}</a>' for a in all_articles[:30])
    write("/", _page("Home", nav, f"<p>{_text(rng, 300)}</p>{latest}"))
    for i, path in enumerate(statics):
        write(path, _page(f"About {i}", nav, f"<p>{_text(rng, 200)}</p>"))
    for s in range(sections):
        section = articles[s]
        for n in range(1, listing_pages + 1):
            path = f"/section-{s}/" if n == 1 else f"/section-{s}/page/{n}/"
            chunk = section[(n - 1) * per_listing : n * per_listing]
            items = " ".join(f'<h2><a href="{a}">{_text(rng, 6)}</a></h2>' for a in chunk)
            pager = " ".join(
                f'<a href="/section-{s}/page/{k}/">{k}</a>' for k in range(2, listing_pages + 1)
            )
            pager = f'<a href="/section-{s}/">1</a> ' + pager
            write(path, _page(f"Section {s} page {n}", nav, f"{items}<p>{pager}</p>"))
        for i, path in enumerate(section):
            related = " ".join(
                f'<a href="../{Path(section[(i + k) % len(section)]).name}/">{_text(rng, 4)}</a>'
                for k in range(1, 13)
            )
            popular = " ".join(
                f'<a href="{rng.choice(all_articles)}">{_text(rng, 3)}</a>' for _ in range(20)
            )
            extras = (
                f'<a href="/section-{s}/">Section {s}</a> <a href="#comments">Comments</a> '
                f'<a href="https://elsewhere.example/{i}">Elsewhere</a> '
                f'<a rel="nofollow" href="/login/?next={path}">Log in</a>'
            )
            if i % 50 == 0:
                extras += f' <a href="/files/report-{s}-{i}.pdf">Report (PDF)</a>'
            body = f"{extras}<article><p>{_text(rng, 400)}</p></article>{related}{popular}"
            write(path, _page(f"Article {s}-{i}", nav, body))
    return pages


# --------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------


@dataclass
class Result:
    name: str
    site: str
    ok: bool = False
    pages: int = 0
    seconds: float = 0.0
    pages_per_s: float = 0.0
    peak_rss_mb: float = 0.0
    error: str | None = None


def contender_cmd(name: str, url: str, work: Path, concurrency: int) -> tuple[list[str], Path]:
    common = [
        "-s",
        f"CONCURRENT_REQUESTS={concurrency}",
        "-s",
        f"CONCURRENT_REQUESTS_PER_DOMAIN={concurrency}",
        "-s",
        "LOG_LEVEL=INFO",
    ]
    if name == "bare":
        cmd = [sys.executable, "-m", "scrapy", "runspider", str(BENCH_DIR / "bare_crawl_spider.py")]
        cmd += ["-a", f"url={url}", "-O", str(work / "bare.jsonl"), *common]
        return cmd, work  # no scrapy.cfg here: project settings cannot leak in
    cmd = [sys.executable, "-m", "scrapy", "crawl", "links", "-a", f"url={url}"]
    cmd += ["-a", f"out={work / 'ours'}", "-O", str(work / "ours.jsonl")]
    cmd += ["-s", "HOST_INTERVAL=0", *common]
    return cmd, PROJECT_DIR


def pages_fetched(name: str, work: Path) -> int:
    """Pages fetched with a 2xx: from the crawl log (ours) or the feed (bare)."""
    if name == "bare":
        path = work / "bare.jsonl"
        return sum(1 for _ in path.open()) if path.exists() else 0
    log = work / "ours" / "_crawl-log.json"
    if not log.exists():
        return 0
    crawl = json.loads(log.read_text())["runs"][-1]["discovery"].get("crawl") or {}
    return sum(v for k, v in crawl.get("status", {}).items() if k.startswith("2"))


def run_one(name: str, site: str, url: str, work: Path, args: argparse.Namespace) -> Result:
    res = Result(name, site)
    for leftover in ("ours", "ours.jsonl", "bare.jsonl"):
        path = work / leftover
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
    cmd, cwd = contender_cmd(name, url, work, args.concurrency)
    log_path = work / f"{site}-{name}.log"
    print(f"[run] {site} {name}: {' '.join(cmd)}", flush=True)
    rc, res.seconds, res.peak_rss_mb, timed_out, _ = run_measured(cmd, cwd, log_path, args.timeout)
    res.pages = pages_fetched(name, work)
    if timed_out:
        res.error = f"timed out after {args.timeout:.0f}s"
    elif rc != 0:
        res.error = f"exit code {rc}"
    elif not res.pages:
        res.error = "fetched no pages"
    res.ok = res.error is None
    res.pages_per_s = res.pages / res.seconds if res.seconds else 0.0
    if res.error:
        print(f"[run] {name} FAILED ({res.error}):\n{tail(log_path)}", flush=True)
    return res


def serve_site(site: str, tmp: Path, seed: int) -> tuple[SiteServer, int | None]:
    if site == "synthetic":
        root = tmp / "synthetic"
        root.mkdir()
        t0 = time.perf_counter()
        expected = generate_site(root, seed=seed)
        print(f"[gen] synthetic: {expected:,} pages in {time.perf_counter() - t0:.1f}s", flush=True)
        return SiteServer(root, [PLACEHOLDER]).start(), expected
    archive = REALDATA / "sites" / "arhackintosh-wordpress" / "site.tar.xz"
    root = unpack_site(archive, tmp / "arhackintosh")
    return SiteServer(root, ARHACKINTOSH_ORIGINS).start(), None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sites", default=",".join(SITES), help="comma list of: synthetic,arhackintosh")
    p.add_argument("--only", default=",".join(CONTENDERS), help="comma list of: ours,bare")
    p.add_argument("--repeat", type=int, default=3, help="runs per contender (median reported)")
    p.add_argument("--concurrency", type=int, default=16, help="CONCURRENT_REQUESTS (both)")
    p.add_argument("--timeout", type=float, default=900)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", type=Path, help="write results as JSON here")
    p.add_argument("--keep", action="store_true", help="keep the temp dir")
    args = p.parse_args(argv)
    sites = [s.strip() for s in args.sites.split(",") if s.strip()]
    only = [c.strip() for c in args.only.split(",") if c.strip()]
    tmp = Path(tempfile.mkdtemp(prefix="bench-links-"))
    results: dict[str, dict[str, Result]] = {}
    ok = True
    try:
        for site in sites:
            server, expected = serve_site(site, tmp, args.seed)
            work = tmp / f"work-{site}"
            work.mkdir()
            try:
                runs: dict[str, list[Result]] = {name: [] for name in only}
                for _ in range(args.repeat):
                    for name in only:
                        runs[name].append(run_one(name, site, server.url("/"), work, args))
                for name, rs in runs.items():
                    times = ", ".join(f"{r.seconds:.2f}" for r in rs)
                    print(f"[runs] {site} {name}: {times} s (median reported)", flush=True)
                results[site] = {name: median_run(rs) for name, rs in runs.items()}  # type: ignore[arg-type]
            finally:
                server.stop()
            if expected is not None:
                print(f"[check] {site}: {expected:,} pages generated", flush=True)
        print()
        head = f"{'site':<13} {'contender':<9} {'pages':>7} {'seconds':>8} {'pages/s':>8}"
        head += f" {'RSS MB':>7}"
        print(head)
        print("-" * len(head))
        for site, by_name in results.items():
            for r in by_name.values():
                ok = ok and r.ok
                status = "" if r.ok else f"  FAILED: {r.error}"
                print(
                    f"{site:<13} {r.name:<9} {r.pages:>7,} {r.seconds:>8.2f}"
                    f" {r.pages_per_s:>8.1f} {r.peak_rss_mb:>7.1f}{status}"
                )
            ours, bare = by_name.get("ours"), by_name.get("bare")
            if ours and bare and ours.ok and bare.ok and bare.pages_per_s:
                ratio = ours.pages_per_s / bare.pages_per_s
                verdict = "PASS" if ratio >= 1.0 else ("MISS (>= 0.8)" if ratio >= 0.8 else "FAIL")
                print(f"{site:<13} ours/bare pages/s {ratio:.2f}x  target >= 1.0x  {verdict}")
        if args.json:
            payload = {s: {n: asdict(r) for n, r in rs.items()} for s, rs in results.items()}
            args.json.write_text(json.dumps(payload, indent=2) + "\n")
        return 0 if ok else 1
    finally:
        if args.keep:
            print(f"[keep] {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
