"""Distributed mode (``-s REDIS_URL``) measured: workers, overhead, Redis memory.

1. **Workers** (``--workers``): the synthetic BFS site of ``bench_links.py`` (5,000 pages,
   50-100 links a page) crawled by ``scrapy crawl links`` in local mode (``local``), then
   as one distributed job of 1, 2 and 3 workers (``w1`` ``w2`` ``w3``: processes started
   together, each its own ``out``) against a ``redis-server`` started here on a free
   loopback port. Politeness off (``HOST_INTERVAL=0``, no robots.txt on the site), the
   same ``CONCURRENT_REQUESTS`` for every process. Contenders take turns; each is
   reported by its median run by wall time (first spawn to last exit), with CPU seconds
   summed over its processes (``os.wait4``) and Redis's peak ``used_memory``. ``local``
   against ``w1`` is distributed mode's overhead on one machine.
2. **Queue memory** (``--queue N,…``): N requests queued as the Redis scheduler queues
   them (a ZSET entry and a HASH entry holding the pickled ``Request.to_dict``), the
   payloads being real ones sampled from the ``w1`` run's queue; ``used_memory`` before
   and after. The seen-set per URL is ``bench_redis_seen.py``'s.
3. ``--tree CHILDREN,PER_CHILD``: the same worker matrix on ``bench_sitemap.py``'s
   sitemap tree (``discover -a mode=sitemap``) — ready for the distributed sitemap walk;
   until it lands every worker walks the whole tree.

    .venv/bin/python bench/bench_distributed.py --repeat 3 --queue 1000000,10000000
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
PROJECT_DIR = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(PROJECT_DIR))

import redis  # noqa: E402
from bench_links import PLACEHOLDER, generate_site  # noqa: E402

from discovery_crawler.distributed.job import JobKeys  # noqa: E402
from discovery_crawler.site_server import SiteServer  # noqa: E402

CONTENDERS = ("local", "w1", "w2", "w3")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RedisServer:
    def __init__(self, folder: Path) -> None:
        self.port = free_port()
        self.process = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--dir",
             str(folder), "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        self.client = redis.Redis(port=self.port, socket_timeout=600)
        for _ in range(200):
            try:
                self.client.ping()
                return
            except redis.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def used(self) -> int:
        return int(self.client.info("memory")["used_memory"])

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait()


@dataclass
class Result:
    name: str
    ok: bool = False
    pages: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    pages_per_s: float = 0.0
    redis_peak_mb: float = 0.0
    redis_commands: int = 0  # commands Redis processed during the run
    load: str = ""
    error: str | None = None
    payloads: list[bytes] = field(default_factory=list, repr=False)


class RedisSampler(threading.Thread):
    """Redis's peak ``used_memory`` during a run, and a sample of the queued payloads."""

    def __init__(self, server: RedisServer, job: str | None) -> None:
        super().__init__(daemon=True)
        self.server, self.job = server, job
        self.peak = 0
        self.payloads: list[bytes] = []
        self._done = threading.Event()

    def stop(self) -> None:
        self._done.set()
        self.join()

    def run(self) -> None:
        client = redis.Redis(port=self.server.port)
        key = JobKeys(self.job).requests if self.job else None
        while not self._done.wait(0.1):
            try:
                self.peak = max(self.peak, int(client.info("memory")["used_memory"]))
                if key and len(self.payloads) < 500 and client.hlen(key) > 50:
                    got = client.hrandfield(key, 50, withvalues=True)
                    self.payloads += got[1::2]
            except redis.RedisError:
                pass


def command(name: str, target: str, mode: str, out: Path, redis_url: str, job: str, conc: int):
    spider = "links" if mode == "links" else "discover"
    cmd = [sys.executable, "-m", "scrapy", "crawl", spider, "-a", f"url={target}"]
    if mode == "sitemap":
        cmd += ["-a", "mode=sitemap"]
    cmd += ["-a", f"out={out}", "-s", "HOST_INTERVAL=0", "-s", "LOG_LEVEL=INFO"]
    cmd += ["-s", f"CONCURRENT_REQUESTS={conc}", "-s", f"CONCURRENT_REQUESTS_PER_DOMAIN={conc}"]
    cmd += ["-s", "PROGRESS_INTERVAL=0"]
    if name != "local":
        cmd += ["-a", f"job={job}", "-s", f"REDIS_URL={redis_url}"]
    return cmd


def pages_of(name: str, outs: list[Path], mode: str) -> int:
    """Pages fetched with a 2xx (local, one worker's own) or the job's (the finisher's
    ``distributed.fetched``); records for a sitemap walk."""
    total = 0
    for out in outs:
        log = out / "_crawl-log.json"
        if not log.exists():
            continue
        run = json.loads(log.read_text())["runs"][-1]
        if mode == "sitemap":
            total = max(total, run.get("discovery", {}).get("counts", {}).get("discovered", 0))
            continue
        job = run.get("distributed") or {}
        if "workers" in job:
            return int(job["fetched"])
        crawl = run["discovery"].get("crawl") or {}
        total += sum(v for k, v in crawl.get("status", {}).items() if k.startswith("2"))
    return total


def run_one(name: str, target: str, mode: str, work: Path, server: RedisServer, args, n: int):
    res = Result(name)
    workers = 1 if name == "local" else int(name[1:])
    job = f"bench-{name}-{n}"
    server.client.flushall()
    outs = [work / f"{name}-{i}" for i in range(workers)]
    for out in outs:
        shutil.rmtree(out, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("SCRAPY_")}
    env |= {"NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
    commands_before = int(server.client.info("stats")["total_commands_processed"])
    sampler = RedisSampler(server, job if name != "local" else None)
    sampler.start()
    res.load = os.getloadavg().__repr__()
    t0 = time.perf_counter()
    procs = []
    for out in outs:
        log = (work / f"{out.name}.log").open("wb")
        cmd = command(name, target, mode, out, server.url, job, args.concurrency)
        procs.append(
            subprocess.Popen(cmd, cwd=PROJECT_DIR, env=env, stdout=log, stderr=subprocess.STDOUT)
        )
    codes = []
    for proc in procs:
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        codes.append(proc.returncode)
        res.cpu_seconds += usage.ru_utime + usage.ru_stime
    res.seconds = time.perf_counter() - t0
    sampler.stop()
    # the sampler's own calls (~2 per 0.1 s) are left in: a small overcount
    res.redis_commands = int(server.client.info("stats")["total_commands_processed"])
    res.redis_commands -= commands_before
    res.redis_peak_mb = sampler.peak / 2**20 if name != "local" else 0.0
    res.payloads = sampler.payloads
    res.pages = pages_of(name, outs, mode)
    if any(codes):
        res.error = f"exit codes {codes} (logs in {work})"
    elif not res.pages:
        res.error = "fetched no pages"
    res.ok = res.error is None
    res.pages_per_s = res.pages / res.seconds if res.seconds else 0.0
    print(
        f"[run] {name}: {res.pages:,} pages {res.seconds:.1f} s ({res.pages_per_s:.0f}/s), "
        f"CPU {res.cpu_seconds:.1f} s, Redis peak {res.redis_peak_mb:.1f} MB, "
        f"{res.redis_commands / max(res.pages, 1):.1f} Redis commands a page, load "
        f"{os.getloadavg()[0]:.2f}{'' if res.ok else '  FAILED: ' + str(res.error)}",
        flush=True,
    )
    return res


def median(runs: list[Result]) -> Result:
    ordered = sorted(runs, key=lambda r: (not r.ok, r.seconds))
    ok = [r for r in ordered if r.ok]
    return ok[(len(ok) - 1) // 2] if ok else ordered[0]


def matrix(target: str, mode: str, work: Path, server: RedisServer, args) -> dict[str, Result]:
    only = [c.strip() for c in args.only.split(",") if c.strip()]
    runs: dict[str, list[Result]] = {name: [] for name in only}
    for n in range(args.repeat):
        for name in only:
            runs[name].append(run_one(name, target, mode, work, server, args, n))
    picked = {name: median(rs) for name, rs in runs.items()}
    payloads = [p for rs in runs.values() for r in rs for p in r.payloads]
    head = (
        f"{'contender':<9} {'pages':>7} {'wall s':>7} {'pages/s':>8} {'CPU s':>7} {'Redis MB':>9}"
    )
    print(f"\n[{mode}] medians of {args.repeat} (wall: " + "; ".join(
        f"{n} " + ", ".join(f"{r.seconds:.1f}" for r in rs) for n, rs in runs.items()
    ) + ")")  # fmt: skip
    print(head)
    print("-" * len(head))
    for r in picked.values():
        print(
            f"{r.name:<9} {r.pages:>7,} {r.seconds:>7.1f} {r.pages_per_s:>8.1f} "
            f"{r.cpu_seconds:>7.1f} {r.redis_peak_mb:>9.1f}{'' if r.ok else '  FAILED'}"
        )
    base = picked.get("local") or picked.get("w1")
    for r in picked.values():
        if base and r is not base and r.ok and base.ok and base.pages_per_s:
            cpu_per_page = (r.cpu_seconds / r.pages) / (base.cpu_seconds / base.pages)
            print(
                f"{r.name} / {base.name}: pages/s {r.pages_per_s / base.pages_per_s:.2f}x, "
                f"CPU per page {cpu_per_page:.2f}x"
            )
    matrix.payloads = payloads  # type: ignore[attr-defined]
    return picked


# KEYS: requests, queue;  ARGV: first id, count, then the payloads to cycle through
# Filled inside Redis: 10M entries from Python's pipeline run at ~4,000 a second on this
# loaded machine; the entries are the ones the scheduler's ENQUEUE writes.
FILL = """
local first, count, n = tonumber(ARGV[1]), tonumber(ARGV[2]), #ARGV - 2
for i = first, first + count - 1 do
  redis.call('HSET', KEYS[1], i, ARGV[3 + (i % n)])
  redis.call('ZADD', KEYS[2], -1 * 4294967296 + i, i)
end
return count
"""


def queue_memory(server: RedisServer, count: int, payloads: list[bytes]) -> tuple[float, float]:
    """Bytes per queued request (ZSET + HASH entries as ENQUEUE writes them), and the
    mean payload size."""
    server.client.flushall()
    keys = JobKeys("bench")
    fill = server.client.register_script(FILL)
    before = server.used()
    step = 20_000  # entries per script call: Redis answers nothing else meanwhile
    for first in range(1, count + 1, step):
        fill(
            keys=[keys.requests, keys.queue], args=[first, min(step, count + 1 - first), *payloads]
        )
    per = (server.used() - before) / count
    server.client.flushall()
    return per, statistics.mean(len(p) for p in payloads)


def fallback_payloads() -> list[bytes]:
    """Payloads shaped as the link crawl's when no run was sampled (a plain Request)."""
    from scrapy import Request

    return [
        pickle.dumps(
            Request(
                f"http://127.0.0.1:40000/section-{i % 20}/article-{i % 20}-{i}/",
                meta={"page_fetch": True, "depth": 3, "job_claimed": True},
                priority=-3,
            ).to_dict(),
            protocol=4,
        )
        for i in range(100)
    ]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default=",".join(CONTENDERS), help="comma list: local,w1,w2,w3")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--no-workers", action="store_true", help="skip the worker matrix")
    p.add_argument("--queue", default="", help="comma list of queue sizes to measure")
    p.add_argument(
        "--payloads",
        type=Path,
        help="a pickle file: the queue's sampled payloads are saved there, or read when "
        "the worker matrix is skipped (--no-workers)",
    )
    p.add_argument("--tree", default="", help="CHILDREN,PER_CHILD: also on a sitemap tree")
    args = p.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="bench-distributed-"))
    (tmp / "redis").mkdir()
    server = RedisServer(tmp / "redis")
    ok = True
    payloads: list[bytes] = []
    try:
        print(
            f"[uptime] {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}"
        )
        if not args.no_workers:
            root = tmp / "synthetic"
            root.mkdir()
            pages = generate_site(root, seed=1)
            site = SiteServer(root, [PLACEHOLDER]).start()
            print(f"[gen] synthetic: {pages:,} pages, {site.url('/')}", flush=True)
            work = tmp / "work"
            work.mkdir()
            try:
                picked = matrix(site.url("/"), "links", work, server, args)
                ok = all(r.ok for r in picked.values())
                payloads = matrix.payloads  # type: ignore[attr-defined]
            finally:
                site.stop()
        if args.tree:
            from bench_sitemap import generate_tree

            children, per_child = (int(x) for x in args.tree.split(","))
            root = tmp / "tree"
            root.mkdir()
            site = SiteServer(root).start()
            base = site.url("/").rstrip("/")
            urls = generate_tree(root, base, children, per_child, seed=1)
            print(f"[gen] sitemap tree: {urls:,} URLs, {base}/sitemap_index.xml", flush=True)
            work = tmp / "work-tree"
            work.mkdir()
            try:
                matrix(f"{base}/sitemap_index.xml", "sitemap", work, server, args)
            finally:
                site.stop()
        sizes = [int(s) for s in args.queue.split(",") if s.strip()]
        if args.payloads and payloads:
            args.payloads.write_bytes(pickle.dumps(payloads))
        elif args.payloads and args.payloads.exists():
            payloads = pickle.loads(args.payloads.read_bytes())  # our own file
        if sizes:
            source = "sampled from a w1 run" if payloads else "built here"
            payloads = payloads or fallback_payloads()
            for count in sizes:
                per, mean = queue_memory(server, count, payloads)
                print(
                    f"queue, {count:,} requests: {per:.1f} bytes per queued request "
                    f"(payload {mean:.0f} bytes on average, {len(payloads)} payloads {source})",
                    flush=True,
                )
        print(
            f"[uptime] {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}"
        )
        return 0 if ok else 1
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
