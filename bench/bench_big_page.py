"""One page with 200,000 links: peak RSS and wall time of ``scrapy crawl links`` on it.

The site, served on 127.0.0.1 at a kernel-chosen port by a thread of this process:
``/`` lists ``--links`` distinct same-site links (``/p/0`` … ``/p/N-1``, each with its
anchor text), and every ``/p/i`` is a small page linking back to ``/``. robots.txt is a
404 (allow all).

Each case runs the real spider as a subprocess (``HOST_INTERVAL=0``, no progress line),
``--repeat`` times in turns; the median run by wall time is reported. Peak RSS is that of
the process tree (``run_measured`` in bench_sitemap.py: ``wait4``'s maxrss, the child's
VmHWM, against the RSS summed over the tree sampled every 20 ms, whichever is larger).

Cases: ``default`` (profile default with ``-a max_pages=100``: 100 pages fetched, every
other link recorded ``over_max_pages``) and ``service`` (profile service: its own
budgets, 500 pages, and its per-page link cap ``LINKS_PER_PAGE_MAX``).

    .venv/bin/python bench/bench_big_page.py --links 200000 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
PROJECT_DIR = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

from bench_sitemap import count_lines, run_measured, tail  # noqa: E402

CASES = {
    "default": ["-a", "max_pages=100"],
    "service": ["-a", "profile=service"],
}


def big_page(links: int) -> bytes:
    anchors = "".join(f'<a href="/p/{i}">page {i}</a>\n' for i in range(links))
    return (
        f"<html><head><title>{links:,} links</title></head><body>{anchors}</body></html>"
    ).encode()


def serve(links: int) -> ThreadingHTTPServer:
    home = big_page(links)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            if self.path == "/":
                body, status = home, 200
            elif self.path.startswith("/p/"):
                body = f'<html><title>{self.path}</title><a href="/">home</a></html>'.encode()
                status = 200
            else:
                body, status = b"not found", 404
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def run_case(name: str, origin: str, work: Path, timeout: float) -> dict[str, object]:
    out = work / name
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    feed = out / "pages.jsonl"
    cmd = [sys.executable, "-m", "scrapy", "crawl", "links", "-a", f"url={origin}/"]
    cmd += ["-a", f"out={out / 'files'}", "-O", str(feed), *CASES[name]]
    cmd += ["-s", "HOST_INTERVAL=0", "-s", "PROGRESS_INTERVAL=0"]
    log = out / "log.txt"
    code, seconds, peak_mb, timed_out, _ = run_measured(cmd, PROJECT_DIR, log, timeout)
    result: dict[str, object] = {
        "case": name,
        "exit": code,
        "seconds": round(seconds, 2),
        "peak_rss_mb": round(peak_mb, 1),
        "records": count_lines(feed),
        "timed_out": timed_out,
    }
    crawl_log = out / "files" / "_crawl-log.json"
    if crawl_log.exists():
        crawl = json.loads(crawl_log.read_text())["runs"][-1]["discovery"].get("crawl") or {}
        result["fetched"] = crawl.get("fetched")
        result["not_fetched"] = crawl.get("not_fetched")
        result["links_dropped"] = crawl.get("links_dropped")
    if code != 0 or timed_out:
        result["log"] = tail(log)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--links", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default=",".join(CASES))
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    cases = [c for c in args.only.split(",") if c]
    server = serve(args.links)
    origin = f"http://127.0.0.1:{server.server_address[1]}"
    work = Path(tempfile.mkdtemp(prefix="bench-big-page-"))
    runs: dict[str, list[dict[str, object]]] = {c: [] for c in cases}
    failed = False
    try:
        for _ in range(args.repeat):
            for case in cases:
                result = run_case(case, origin, work, args.timeout)
                runs[case].append(result)
                failed = failed or result["exit"] != 0 or bool(result["timed_out"])
                print(json.dumps(result), flush=True)
    finally:
        server.shutdown()
        server.server_close()
        shutil.rmtree(work, ignore_errors=True)
    print(f"\n{args.links:,} links on one page, median of {args.repeat} by wall time:")
    print("| case | runs (s) | median s | peak RSS MB | records |")
    print("|---|---|---|---|---|")
    summary = {}
    for case, results in runs.items():
        ordered = sorted(results, key=lambda r: r["seconds"])
        median = ordered[len(ordered) // 2]
        times = ", ".join(f"{r['seconds']:.2f}" for r in results)
        peak = statistics.median(float(r["peak_rss_mb"]) for r in results)
        row = [case, times, f"{median['seconds']:.2f}", f"{peak:.0f}", f"{median['records']:,}"]
        print("| " + " | ".join(row) + " |")
        summary[case] = {"median": median, "peak_rss_mb": peak, "runs": results}
    if args.json:
        args.json.write_text(json.dumps({"links": args.links, "cases": summary}, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
