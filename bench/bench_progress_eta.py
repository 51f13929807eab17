"""How right is the progress line's ETA over a long link crawl?

Crawls a site on 127.0.0.1 with ``scrapy crawl discover -a mode=links`` (or ``union``),
reading each progress line as it is logged (``PROGRESS_INTERVAL``, timed here as it
arrives), and when the crawl has ended compares, at 10 %, 25 %, 50 % and 75 % of its
wall time, the remaining time the line predicted with the time that really remained.

Two predictions are scored from the same lines:

- ``eta``: what the line says now (the link crawl's estimate of its total pages, from the
  frontier's growth per page fetched; ``≥``/``≤`` bounds read as their number);
- ``frontier``: what the line said before this estimate existed — the queued pages at
  the recent rate (``queued / pages/s``, one host interval apart at least), a lower bound.

The site is generated (``--pages``, default 3,000: a tree of sections, each page linking
to its children, its parent, the top sections and a few pages elsewhere, so the frontier
grows fast and then runs out of new links as a real site's does) or a real-data archive
(``--site path/to/site.tar.xz``) served by ``discovery_crawler.site_server``.

    .venv/bin/python bench/bench_progress_eta.py --pages 3000 --host-interval 0.03
    .venv/bin/python bench/bench_progress_eta.py \\
        --site ../shared/realdata/sites/arhackintosh-wordpress/site.tar.xz --host-interval 0.1
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from discovery_crawler.site_server import SiteServer, unpack_site  # noqa: E402

MARKS = (0.10, 0.25, 0.50, 0.75)
_PAGES = re.compile(r"pages ([\d,]+) fetched(?: of (≥ |≤ |~)?([\d,]+))?.*? · ([\d,]+) queued")
_RATE = re.compile(r" · ([\d,.]+) pages/s")
_ETA = re.compile(r" · ETA (≥ |~)?(< 1 s|[\d.]+ (?:s|min|h))")
_UNITS = {"s": 1.0, "min": 60.0, "h": 3600.0}


def generate_site(root: Path, pages: int, seed: int = 7) -> None:
    """``pages`` pages: page i's parent is (i - 1) // 4 (a tree four wide); each links to
    its children, its parent, the first six sections and three "related" pages near it
    (within 40 of its number), so new pages keep turning up for most of the crawl."""
    rng = random.Random(seed)
    for i in range(pages):
        children = [c for c in range(4 * i + 1, 4 * i + 5) if c < pages]
        targets = [*children, (i - 1) // 4 if i else 0, *range(1, 7)]
        targets += [min(pages - 1, max(0, i + rng.randint(-40, 40))) for _ in range(3)]
        body = "".join(f'<a href="/p/{t}/">page {t}</a> ' for t in targets)
        html = f"<html><head><title>page {i}</title></head><body>{body}</body></html>"
        path = root / ("index.html" if i == 0 else f"p/{i}/index.html")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(html, encoding="utf-8")
        if i == 0:
            (root / "p/0").mkdir(parents=True, exist_ok=True)
            (root / "p/0/index.html").write_text(html, encoding="utf-8")


def seconds_of(words: str) -> float:
    if words == "< 1 s":
        return 0.5
    number, unit = words.split()
    return float(number) * _UNITS[unit]


def read_line(line: str) -> dict[str, float] | None:
    """The link crawl's figures in one progress line (None: no crawl part yet)."""
    pages = _PAGES.search(line)
    if pages is None:
        return None
    figures: dict[str, float] = {
        "done": float(pages.group(1).replace(",", "")),
        "queued": float(pages.group(4).replace(",", "")),
    }
    if pages.group(3):
        figures["total"] = float(pages.group(3).replace(",", ""))
    if rate := _RATE.search(line):
        figures["rate"] = float(rate.group(1).replace(",", ""))
    if eta := _ETA.search(line[pages.start() :]):
        figures["eta"] = seconds_of(eta.group(2))
    return figures


def crawl(url: str, out: Path, mode: str, interval: float, report: float) -> tuple[list, float]:
    """Run the crawl; [(seconds since start, figures)] of each progress line, and its
    wall time to the spider's close."""
    cmd = [
        sys.executable, "-m", "scrapy", "crawl", "discover", "-a", f"url={url}",
        "-a", f"mode={mode}", "-a", f"out={out}",
        "-s", f"HOST_INTERVAL={interval}", "-s", f"PROGRESS_INTERVAL={report}",
        "-s", "PROGRESS_TTY=never", "-s", "LOG_LEVEL=INFO",
    ]  # fmt: skip
    started = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            text=True, encoding="utf-8")  # fmt: skip
    samples: list[tuple[float, dict[str, float]]] = []
    closed = None
    assert proc.stderr is not None
    for line in proc.stderr:
        now = time.monotonic() - started
        if "Progress: " in line and (figures := read_line(line)) is not None:
            samples.append((now, figures))
        elif "Closing spider" in line and closed is None:
            closed = now
    proc.wait()
    return samples, closed if closed is not None else time.monotonic() - started


def frontier_eta(figures: dict[str, float], interval: float) -> float | None:
    """The old line's ETA: the queued pages at the recent rate, an interval apart."""
    rate = figures.get("rate")
    per_page = 1.0 / rate if rate else None
    if interval > 0:
        per_page = max(per_page or 0.0, interval)
    return None if per_page is None else figures["queued"] * per_page


def score(samples: list, end: float, interval: float) -> list[dict[str, float | None]]:
    rows = []
    for mark in MARKS:
        at = end * mark
        before = [s for s in samples if s[0] <= at]
        if not before:
            continue
        when, figures = before[-1]
        actual = end - when
        row: dict[str, float | None] = {"mark": mark, "t": when, "actual": actual}
        row.update(done=figures["done"], total=figures.get("total"))
        for name, predicted in (
            ("eta", figures.get("eta")),
            ("frontier", frontier_eta(figures, interval)),
        ):
            row[name] = predicted
            row[f"{name}_error"] = None if predicted is None else (predicted - actual) / actual
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=3000, help="generated site's pages")
    parser.add_argument("--site", type=Path, help="a site folder or .tar.xz to serve instead")
    parser.add_argument("--mode", default="links", choices=("links", "union"))
    parser.add_argument("--host-interval", type=float, default=0.03)
    parser.add_argument("--progress-interval", type=float, default=1.0)
    parser.add_argument("--json", type=Path, help="write the rows here too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-eta-") as tmp:
        tmp_path = Path(tmp)
        if args.site is not None:
            root = unpack_site(args.site, tmp_path / "site") if args.site.is_file() else args.site
        else:
            root = tmp_path / "site"
            generate_site(root, args.pages)
        server = SiteServer(root).start()
        try:
            samples, end = crawl(
                server.url("/"), tmp_path / "out", args.mode, args.host_interval,
                args.progress_interval,
            )  # fmt: skip
        finally:
            server.stop()
        log = tmp_path / "out" / "_crawl-log.json"
        fetched = (
            json.loads(log.read_text())["runs"][-1]["discovery"]["crawl"]["fetched"]
            if log.exists()
            else 0
        )
    rows = score(samples, end, args.host_interval)
    what = args.site.name if args.site else f"generated {args.pages:,}-page site"
    print(f"{what}, mode={args.mode}, HOST_INTERVAL={args.host_interval}: {fetched:,} pages "
          f"fetched in {end:.0f} s, {len(samples)} progress lines")  # fmt: skip
    print("at    t(s)  done/total    actual  eta (error)       frontier (error)")
    for r in rows:
        total = f"{r['total']:,.0f}" if r["total"] else "?"

        def cell(name: str, r: dict = r) -> str:
            if r[name] is None:
                return "-".ljust(17)
            return f"{r[name]:6.0f} s ({r[f'{name}_error']:+.0%})".ljust(17)

        print(f"{r['mark']:>4.0%} {r['t']:6.0f}  {r['done']:>5,.0f}/{total:<6} "
              f"{r['actual']:6.0f} s  {cell('eta')} {cell('frontier')}")  # fmt: skip
    if args.json:
        record = {"site": what, "end": end, "rows": rows, "samples": samples}
        args.json.write_text(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
