"""Workers of one distributed job in the sitemap-reading modes (``sitemap``, ``union``,
``auto``), end to end: real ``scrapy crawl discover`` processes, a real ``redis-server``
(``conftest.py``), sitemap trees and sites served on 127.0.0.1 whose request log says what
was fetched; each job's one inventory compared with a single run's."""

from __future__ import annotations

import json
import os
import signal
import time
from collections import Counter
from pathlib import Path

import pytest

from bench.bench_sitemap import generate_tree
from discovery_crawler.distributed.job import JobKeys
from discovery_crawler.site_server import unpack_site
from tests.conftest import realdata, run_discover
from tests.distributed.site import write_listed_site, write_site
from tests.distributed.test_workers import (
    comparable,
    finisher_out,
    inventory,
    job_keys_left,
    worker,
)


def _stat(log: str, name: str) -> int:
    """A worker's stat from the dump Scrapy logs at the end (0 when absent)."""
    for line in log.splitlines():
        if line.strip().startswith(f"'{name}':"):
            return int(line.split(":", 1)[1].strip().rstrip(",}"))
    return 0


def joined_or_late(workers, outs: list[Path]) -> None:
    """Every worker ended 0, or (started after the job was done: a small job on a busy
    machine) was refused in one line rather than crawling it again alone: exit 2 when
    the job was done before its arguments were checked, 1 when it ended in between."""
    for w, out in zip(workers, outs, strict=True):
        code = w.wait(900)
        if code in (1, 2):
            log = (out.parent / f"{out.name}.log").read_text(encoding="utf-8")
            assert "is done: it finished less than" in log, log[-2000:]
        else:
            assert code == 0, (out, code)


def fetches(server) -> Counter:
    return Counter(path for _, path, _ in server.requests)


def sitemap_tree(tmp_path: Path, serve, children: int, per_child: int):
    """A realistic sitemap tree (robots.txt → an index → gzipped urlsets, with alternates,
    malformed and other-host entries: ``bench/bench_sitemap.py``), served."""
    root = tmp_path / "tree"
    root.mkdir()
    server = serve(root)
    generate_tree(root, server.url("").rstrip("/"), children, per_child, seed=7, tree="realistic")
    return server


def single_run(url: str, tmp_path: Path, *args: str) -> list[dict]:
    one = run_discover(url, tmp_path, *args, feed=None, out=tmp_path / "one")
    assert one.returncode == 0, one.stderr[-3000:]
    return one.records


def same_inventory(ours: list[dict], theirs: list[dict]) -> None:
    mine, single = comparable(ours), comparable(theirs)
    assert set(mine) == set(single), (len(mine), len(single))
    differ = [(url, mine[url], single[url]) for url in single if mine[url] != single[url]]
    assert differ == [], differ[:3]


def test_three_workers_share_a_200k_url_sitemap_tree(tmp_path, serve, redis_server):
    """3 workers, mode=sitemap, a 40-child tree of 200,000 <loc>s (220k records): robots.txt
    and every sitemap fetched once in the job (the server's log), the child sitemaps read
    by more than one worker, and the finisher's inventory record for record (and line for
    line) a single run's; the job's keys are gone."""
    server = sitemap_tree(tmp_path, serve, children=40, per_child=5000)
    outs = [tmp_path / f"w{i}" for i in range(3)]
    args = ("-a", "mode=sitemap", "-a", "job=tree")
    workers = [
        worker(server.url("/"), out, redis_server.url, *args, spider="discover") for out in outs
    ]
    assert [w.wait(600) for w in workers] == [0, 0, 0]
    asked = fetches(server)
    assert [path for path, n in asked.items() if n > 1] == []  # nothing fetched twice
    assert asked["/robots.txt"] == 1 and asked["/sitemap_index.xml"] == 1
    assert sum(path.endswith(".xml.gz") for path in asked) == 40
    finisher = finisher_out(outs)
    job = json.loads((finisher / "_crawl-log.json").read_text())["runs"][-1]["distributed"]
    assert len(job["workers"]) == 3 and job["missing_workers"] == []
    read = [
        len(
            json.loads((out / "_crawl-log.json").read_text())["runs"][-1]["discovery"][
                "sitemap_attempts"
            ]
        )
        for out in outs
    ]
    assert sum(n > 0 for n in read) >= 2, read  # the walk was shared
    merged = inventory(finisher)
    assert len(merged) >= 200_000
    server.requests.clear()
    single = single_run(server.url("/"), tmp_path, "-a", "mode=sitemap")
    same_inventory(merged, single)
    assert [r["url"] for r in merged] == [r["url"] for r in single]  # one run's order
    assert job_keys_left(redis_server.client()) == []


def _sitemap_attempts(out: Path) -> list:
    return json.loads((out / "_crawl-log.json").read_text())["runs"][-1]["discovery"][
        "sitemap_attempts"
    ]


def test_a_worker_killed_mid_walk_its_sitemaps_are_read_again(tmp_path, serve, redis_server):
    """SIGKILL one of three workers while it holds child sitemaps (leased or read, its
    records not handed over): the others read them again and finish; the job's inventory
    is a single run's, and only the victim's sitemaps were fetched twice."""
    server = sitemap_tree(tmp_path, serve, children=30, per_child=200)
    server.delay = 0.15  # each answer: slow enough that the kill lands mid-walk
    outs = [tmp_path / f"w{i}" for i in range(3)]
    args = ("-a", "mode=sitemap", "-a", "job=killed")
    workers = [
        worker(server.url("/"), out, redis_server.url, *args, spider="discover") for out in outs
    ]
    victim = workers[0]
    client = redis_server.client()
    keys = JobKeys("killed")
    deadline = time.monotonic() + 60
    held = 0
    while time.monotonic() < deadline and not held:
        names = [m.decode() for m in client.smembers(keys.workers)]
        mine = [n for n in names if n.split(":")[1] == str(victim.pid)]
        if mine:
            read = client.hlen(keys.read(mine[0]))
            held = read + client.hlen(keys.lease(mine[0])) if read else 0
        time.sleep(0.01)
    assert held, "the victim never read a sitemap"
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait(10)
    # its account at death (it read on between the look and the kill), before the reaper
    held = client.hlen(keys.read(mine[0])) + client.hlen(keys.lease(mine[0]))
    assert [w.wait(300) for w in workers[1:]] == [0, 0]
    server.delay = 0.0
    asked = fetches(server)
    twice = [path for path, n in asked.items() if n > 1]
    # read again: the victim's sitemaps (robots.txt, the conventional addresses such as
    # /sitemap.txt, the index when it read them: their children were already in the job,
    # so are not asked twice)
    assert twice and len(twice) <= held + 1, (twice, held)  # (+1: a request in flight)
    assert all(path.endswith((".xml", ".xml.gz", ".txt")) for path in twice), twice
    finisher = finisher_out(outs[1:])
    merged = inventory(finisher)
    job = json.loads((finisher / "_crawl-log.json").read_text())["runs"][-1]
    (missing,) = job["distributed"]["missing_workers"]
    assert missing.split(":")[1] == str(victim.pid)
    server.requests.clear()
    single = single_run(server.url("/"), tmp_path, "-a", "mode=sitemap")
    same_inventory(merged, single)
    assert job_keys_left(client) == []


def test_the_document_budget_is_the_jobs(tmp_path, serve, redis_server):
    """SITEMAP_MAX_DOCUMENTS=6 over 3 workers: 6 sitemap documents fetched in the job (the
    index and 5 children), not 6 per worker; the run is bounded."""
    server = sitemap_tree(tmp_path, serve, children=12, per_child=20)
    server.delay = 0.3  # the job outlasts the workers' start-up: all three join it
    outs = [tmp_path / f"w{i}" for i in range(3)]
    args = ("-a", "mode=sitemap", "-a", "job=budget")
    workers = [
        worker(
            server.url("/"),
            out,
            redis_server.url,
            *args,
            spider="discover",
            SITEMAP_MAX_DOCUMENTS=6,
            SITEMAP_CONVENTIONAL_PATHS="",
        )
        for out in outs
    ]
    codes = [w.wait(300) for w in workers]
    assert 5 in codes and set(codes) <= {0, 5}, codes
    asked = fetches(server)
    documents = [p for p in asked if p.endswith((".xml", ".xml.gz"))]
    assert len(documents) == 6 and max(asked.values()) == 1, asked


def test_the_url_limit_is_the_jobs(tmp_path, serve, redis_server):
    """SITEMAP_MAX_URLS=700 over 3 workers: the job stops asking for documents once its
    workers kept 700 URLs between them (not 700 each), and the finisher's inventory is a
    single run's with the same limit, record for record: the first 700 URLs in reading
    order; the finisher says the limit bound."""
    server = sitemap_tree(tmp_path, serve, children=12, per_child=200)
    server.delay = 0.2  # the job outlasts the workers' start-up: all three join it
    outs = [tmp_path / f"w{i}" for i in range(3)]
    args = ("-a", "mode=sitemap", "-a", "job=urls")
    # one document at a time per worker: the job's count is seen before all are fetched
    limits = {"SITEMAP_MAX_URLS": 700, "SITEMAP_CONVENTIONAL_PATHS": "", "SITEMAP_CONCURRENCY": 1}
    workers = [
        worker(server.url("/"), out, redis_server.url, *args, spider="discover", **limits)
        for out in outs
    ]
    codes = [w.wait(300) for w in workers]
    assert 5 in codes and set(codes) <= {0, 5}, codes
    asked = fetches(server)
    documents = [p for p in asked if p.endswith((".xml", ".xml.gz"))]
    assert max(asked.values()) == 1, asked
    assert len(documents) == 13, documents  # the index and 12 children, each asked once
    logs = [(out.parent / f"{out.name}.log").read_text(encoding="utf-8") for out in outs]
    parsed = sum(_stat(log, "discovery/sitemaps/ok") for log in logs)
    assert parsed < 13, parsed  # the rest not parsed: the job's count was at the limit
    assert sum("not parsed: SITEMAP_MAX_URLS (700) already reached" in log for log in logs)
    finisher = finisher_out(outs)
    merged = inventory(finisher)
    assert len(merged) == 700
    entry = json.loads((finisher / "_crawl-log.json").read_text())["runs"][-1]
    assert entry["status"] == "bounded", entry["status"]
    one = run_discover(
        server.url("/"),
        tmp_path,
        "-a",
        "mode=sitemap",
        feed=None,
        out=tmp_path / "one",
        settings=limits,
    )
    assert one.returncode == 5, one.stderr[-3000:]
    same_inventory(merged, one.records)


@pytest.mark.parametrize("mode", ["auto", "sitemap"])
def test_sitemap_modes_three_workers_on_a_real_site(tmp_path, serve, redis_server, mode):
    """ayatoashihara (Hugo, multilingual: an index and its language sitemaps) served on
    loopback, 3 workers: each sitemap once in the job, the inventory a single run's."""
    root = unpack_site(realdata("sites", "ayatoashihara-myblog_multi", "site.tar.xz"), tmp_path)
    site = serve(root)
    outs = [tmp_path / f"w{i}" for i in range(3)]
    args = ("-a", f"mode={mode}", "-a", f"job=real-{mode}")
    workers = [
        worker(site.url("/"), out, redis_server.url, *args, spider="discover") for out in outs
    ]
    joined_or_late(workers, outs)
    asked = fetches(site)
    assert [p for p, n in asked.items() if n > 1] == []
    merged = inventory(finisher_out(outs))
    assert len(merged) > 100
    site.requests.clear()
    single = single_run(site.url("/"), tmp_path, "-a", f"mode={mode}")
    same_inventory(merged, single)


def test_three_workers_in_union_mode_write_one_runs_inventory(tmp_path, serve, redis_server):
    """mode=union, 3 workers, a 1,200-page site whose sitemaps list every third page, 50
    pages no page links to and one 404: each page, sitemap and robots.txt fetched once in
    the job; the job's inventory is a single run's — a URL listed in a sitemap one worker
    read and linked from a page another fetched is one record with both sides, and the
    sitemap_only / links_only flags are the job's, not a worker's."""
    root = tmp_path / "site"
    root.mkdir()
    site = serve(root)
    pages = write_listed_site(root, site.url("").rstrip("/"), 1200, 50)
    outs = [tmp_path / f"w{i}" for i in range(3)]
    args = ("-a", "mode=union", "-a", "job=union")
    workers = [
        worker(site.url("/"), out, redis_server.url, *args, spider="discover") for out in outs
    ]
    assert [w.wait(600) for w in workers] == [0, 0, 0]
    asked = fetches(site)
    assert [p for p, n in asked.items() if n > 1] == []
    assert pages <= set(asked)
    finisher = finisher_out(outs)
    merged = inventory(finisher)
    flags = Counter(f for rec in merged for f in rec.get("flags") or ())
    # the 50 orphans and the listed 404; the 800 pages of 1,200 no sitemap lists
    assert flags["sitemap_only"] == 51 and flags["links_only"] == 800, flags
    site.requests.clear()
    single = single_run(site.url("/"), tmp_path, "-a", "mode=union")
    same_inventory(merged, single)
    assert job_keys_left(redis_server.client()) == []


def test_union_mode_three_workers_on_a_real_site(tmp_path, serve, redis_server):
    """arhackintosh (WordPress + Yoast, an IDN host rewritten to loopback), mode=union,
    3 workers: nothing fetched twice, the job's inventory a single run's."""
    root = unpack_site(realdata("sites", "arhackintosh-wordpress", "site.tar.xz"), tmp_path)
    rewrite = [
        "https://xn--mgbg4a8cpdl.com",
        "https://%D9%87%D8%A7%D9%83%D9%86%D8%AA%D9%88%D8%B4.com",
    ]
    site = serve(root, rewrite=rewrite)
    outs = [tmp_path / f"w{i}" for i in range(3)]
    args = ("-a", "mode=union", "-a", "job=real-union")
    workers = [
        worker(site.url("/"), out, redis_server.url, *args, spider="discover") for out in outs
    ]
    assert [w.wait(900) for w in workers] == [0, 0, 0]
    asked = fetches(site)
    assert [p for p, n in asked.items() if n > 1] == []
    merged = inventory(finisher_out(outs))
    assert len(merged) > 700
    site.requests.clear()
    single = single_run(site.url("/"), tmp_path, "-a", "mode=union")
    same_inventory(merged, single)


def test_auto_mode_falls_back_to_links_once_for_the_job(tmp_path, serve, redis_server):
    """mode=auto on a site with no sitemap, 3 workers: the job's walk listed no page, so
    the job falls back to the link crawl (the homepage admitted once: the job's
    seen-set), shared by the workers; every page fetched once; one run's inventory."""
    pages = write_site(tmp_path / "site", 400)
    site = serve(tmp_path / "site")
    site.delay = 0.01
    outs = [tmp_path / f"w{i}" for i in range(3)]
    args = ("-a", "mode=auto", "-a", "job=auto")
    workers = [
        worker(site.url("/"), out, redis_server.url, *args, spider="discover") for out in outs
    ]
    joined_or_late(workers, outs)
    asked = fetches(site)
    assert [p for p, n in asked.items() if n > 1] == []
    assert pages <= set(asked)
    logs = [(tmp_path / f"w{i}.log").read_text(encoding="utf-8") for i in range(3)]
    assert any("fell back to a BFS link crawl" in log for log in logs)
    merged = inventory(finisher_out(outs))
    site.requests.clear()
    single = single_run(site.url("/"), tmp_path, "-a", "mode=auto")
    same_inventory(merged, single)


def test_a_worker_started_after_the_job_is_done_is_refused(tmp_path, serve, redis_server):
    """A job done (its keys gone, its done mark left for a minute): a worker started late
    with the same job is refused in one line, exit 2, nothing written — not a second walk
    of the whole site alone."""
    server = sitemap_tree(tmp_path, serve, children=2, per_child=10)
    args = ("-a", "mode=sitemap", "-a", "job=late")
    first = worker(server.url("/"), tmp_path / "w0", redis_server.url, *args, spider="discover")
    assert first.wait(300) == 0
    asked = sum(fetches(server).values())
    late = worker(server.url("/"), tmp_path / "w1", redis_server.url, *args, spider="discover")
    assert late.wait(300) == 2
    log = (tmp_path / "w1.log").read_text(encoding="utf-8")
    assert "job late is done: it finished less than 60 s ago" in log
    assert sum(fetches(server).values()) == asked
    assert not (tmp_path / "w1").exists()
