"""Resumable runs (``-s JOBDIR=…``, ``extensions/job.py``): a 5,000-page link crawl and a
1M-URL sitemap walk, each killed with SIGKILL at five random points and once with SIGINT,
then run to the end, give the inventory of an uninterrupted run — the same URLs with the
same sources, flags, slugs and selection, no feed line twice (``-O`` and ``-o``), and
nothing fetched again but what was in flight at a kill. A real site, killed when its job
has journaled a given number of responses, resumes to the uninterrupted run's inventory
record for record (union, sitemap, and links mode under ``max_pages``)."""

from __future__ import annotations

import gzip
import json
import random
import signal
import struct
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from discovery_crawler.journal import MAGIC
from discovery_crawler.site_server import unpack_site
from tests.conftest import ROOT, realdata, run_discover

KILLS = 5
SAME = ("source", "sources", "sitemap", "flags", "slug", "kind", "status", "score", "lastmod")


def _feed(path: Path) -> tuple[dict[str, dict[str, Any]], int]:
    """The feed's records by URL, and how many lines repeat a URL."""
    records: dict[str, dict[str, Any]] = {}
    repeated = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        repeated += rec["url"] in records
        records[rec["url"]] = rec
    return records, repeated


def _last_run(out: Path) -> dict[str, Any]:
    return json.loads((out / "_crawl-log.json").read_text(encoding="utf-8"))["runs"][-1]


def _command(
    url: str, out: Path, feed: Path, job: Path | None, flag: str, extra: list[str]
) -> list[str]:
    cmd = [sys.executable, "-m", "scrapy", "crawl", "discover", "-a", f"url={url}"]
    cmd += ["-a", f"out={out}", flag, str(feed), *extra, "-s", "HOST_INTERVAL=0"]
    cmd += ["-s", "PROGRESS_INTERVAL=0", "-s", "LOG_LEVEL=INFO"]
    return cmd + (["-s", f"JOBDIR={job}"] if job is not None else [])


def _stopped(cmd: list[str], server: Any, at: int, sig: signal.Signals, pause: float) -> int:
    """Run ``cmd`` until the server has answered ``at`` requests in all (a point of the
    job, whatever the replay before it took), ``pause`` seconds on, then ``sig`` it."""
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while len(server.requests) < at and proc.poll() is None:
        assert time.monotonic() < deadline, "the run made no progress"
        time.sleep(0.01)
    time.sleep(pause)
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=300)
    assert b"Traceback" not in stderr, stderr.decode()[-3000:]
    return proc.returncode


def _resumed_as_uninterrupted(
    url: str,
    tmp_path: Path,
    server: Any,
    feed_flag: str,
    extra: list[str],
    seed: int,
    stops: tuple[int, int],
) -> None:
    """Run once uninterrupted; run again as a job interrupted once and killed KILLS times
    (when the server has answered a random number of requests in ``stops``); compare."""
    whole = subprocess.run(
        _command(url, tmp_path / "out-whole", tmp_path / "whole.jsonl", None, "-O", extra),
        cwd=ROOT,
        capture_output=True,
        timeout=600,
    )
    assert whole.returncode == 0, whole.stderr.decode()[-3000:]
    expected, _ = _feed(tmp_path / "whole.jsonl")
    server.requests.clear()

    out, feed, job = tmp_path / "out", tmp_path / "resumed.jsonl", tmp_path / "job"
    cmd = _command(url, out, feed, job, feed_flag, extra)
    points = random.Random(seed)
    ats = sorted(points.sample(range(*stops), KILLS + 1))  # requests answered at each stop
    for at, sig in zip(ats, [signal.SIGINT] + [signal.SIGKILL] * KILLS, strict=True):
        code = _stopped(cmd, server, at, sig, points.uniform(0, 0.3))
        assert code == (-9 if sig == signal.SIGKILL else 3)
    last = subprocess.run(cmd, cwd=ROOT, capture_output=True, timeout=600)
    assert last.returncode == 0, last.stderr.decode()[-3000:]

    got, repeated = _feed(feed)
    assert repeated == 0
    assert set(got) == set(expected)
    for field in SAME:
        differ = [u for u in expected if expected[u].get(field) != got[u].get(field)]
        assert not differ, (field, differ[:5])
    run, whole_run = _last_run(out), _last_run(tmp_path / "out-whole")
    assert run["status"] == "completed"
    assert run["selection"]["kept"] == whole_run["selection"]["kept"]
    # The same URLs: the same path depths (click depths follow the order pages answered).
    depths, whole_depths = run["discovery"]["depths"], whole_run["discovery"]["depths"]
    assert depths["path"] == whole_depths["path"]
    assert sum(depths["path"].values()) == run["discovery"]["counts"]["discovered"]
    for groups in ("path_groups", "parent_groups"):  # (their samples follow arrival order)
        counts = [(g["id"], g["count"]) for g in run["groups"][groups]]
        assert counts == [(g["id"], g["count"]) for g in whole_run["groups"][groups]]
    assert run["job"]["resumed"] is True
    assert run["job"]["responses_replayed"] > 0
    # One crawl-log entry per invocation that got as far as starting its job (a kill during
    # start-up leaves nothing to tell).
    earlier = run["job"]["earlier_invocations"]
    assert 1 <= len(earlier) <= KILLS + 1
    assert earlier[0]["status"] == "interrupted"  # the SIGINT, first
    statuses = [r["status"] for r in json.loads((out / "_crawl-log.json").read_text())["runs"]]
    assert statuses == ["interrupted"] * len(earlier) + ["completed"]
    # Fetched again: only what was in flight at each stop (CONCURRENT_REQUESTS at most).
    fetched = Counter(path for _, path, _ in server.requests)
    again = sum(n - 1 for n in fetched.values())
    assert again <= (KILLS + 1) * 16, again
    assert not (job / "responses.journal").exists()  # a finished job frees its disk
    assert not list(out.glob(".state.json.*")), "a killed run's spool was left behind"


def _link_site(root: Path, pages: int) -> Path:
    for i in range(pages):
        targets = (2 * i + 1, 2 * i + 2, (i * 31 + 7) % pages)
        links = "".join(f'<a href="/p/{j}/">page {j}</a>' for j in targets if 0 < j < pages)
        folder = root if i == 0 else root / "p" / str(i)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "index.html").write_text(
            f"<html><head><title>Page {i}</title></head><body><h1>Page {i}</h1>{links}</body>"
            "</html>"
        )
    return root


def test_a_killed_link_crawl_resumes_to_the_uninterrupted_inventory(serve, tmp_path):
    server = serve(_link_site(tmp_path / "site", 5000))
    extra = ["-a", "mode=links", "-s", "SITEMAP_CONCURRENCY=16"]
    _resumed_as_uninterrupted(
        server.url("/"), tmp_path, server, "-O", extra, seed=16, stops=(50, 4500)
    )


def _sitemap_tree(root: Path, origin: str, children: int, per_child: int) -> None:
    """An index of ``children`` gzipped urlsets (lastmod and priority on every entry)."""
    root.mkdir(parents=True, exist_ok=True)
    index = []
    for c in range(children):
        rows = "".join(
            f"<url><loc>{origin}/section-{c}/topic-{n % 97}/article-{c}-{n}/</loc>"
            f"<lastmod>2024-0{1 + n % 9}-1{n % 10}</lastmod><priority>0.{n % 10}</priority></url>\n"
            for n in range(per_child)
        )
        body = f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{rows}</urlset>\n'
        (root / f"sitemap-{c}.xml.gz").write_bytes(gzip.compress(body.encode(), 1))
        index.append(f"<sitemap><loc>{origin}/sitemap-{c}.xml.gz</loc></sitemap>")
    (root / "sitemap_index.xml").write_text(
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        + "".join(index)
        + "</sitemapindex>"
    )


def test_a_killed_million_url_sitemap_walk_resumes_to_the_uninterrupted_inventory(serve, tmp_path):
    """With ``-o`` (append): the feed is cut back to where the job began, then replayed."""
    site = tmp_path / "site"
    site.mkdir()
    server = serve(site)
    _sitemap_tree(site, server.origin, 20, 50_000)
    url = server.url("/sitemap_index.xml")
    _resumed_as_uninterrupted(
        url, tmp_path, server, "-o", ["-a", "profile=massive"], seed=15, stops=(1, 19)
    )


def test_max_pages_holds_over_the_whole_job(serve, tmp_path):
    """``max_pages=300`` over a job killed twice: 300 pages fetched in the end, as an
    uninterrupted run fetches, not 300 per invocation; the rest listed over the budget."""
    server = serve(_link_site(tmp_path / "site", 3000))
    extra = ["-a", "mode=links", "-a", "max_pages=300", "-s", "SITEMAP_CONCURRENCY=16"]
    out, feed, job = tmp_path / "out", tmp_path / "resumed.jsonl", tmp_path / "job"
    cmd = _command(server.url("/"), out, feed, job, "-O", extra)
    for at in (60, 180):
        assert _stopped(cmd, server, at, signal.SIGKILL, 0.0) == -9
    last = subprocess.run(cmd, cwd=ROOT, capture_output=True, timeout=300)
    assert last.returncode == 5, last.stderr.decode()[-3000:]  # bounded by max_pages
    got, repeated = _feed(feed)
    assert repeated == 0
    fetched = [u for u, rec in got.items() if rec["status"] is not None]
    assert len(fetched) == 300
    assert all(rec["flags"] == ["over_max_pages"] for rec in got.values() if rec["status"] is None)
    pages = {path for _, path, _ in server.requests if path.startswith("/p/")}
    assert len(pages) <= 300 + 2 * 16  # the job's, plus what was in flight at the kills
    assert _last_run(out)["discovery"]["crawl"]["fetched"] == 300


# -- a real site, killed after N responses journaled ------------------------------------
_TIMES = {"fetched_at", "first_seen", "last_seen", "changed_at", "seen_at"}  # when, not what
_REAL = {"CONCURRENT_REQUESTS_PER_DOMAIN": 8, "HOST_INTERVAL": 0}  # answers cross
_JOURNAL_HEAD = struct.Struct("<4sII")  # journal.py: magic, payload length, CRC-32


def _journaled(path: Path) -> int:
    """Whole entries in a live job's journal, read by their heads only (opening it as a
    ``ResponseJournal`` would cut the tail being written)."""
    count = 0
    try:
        with path.open("rb") as fh:
            end = fh.seek(0, 2)
            pos = 0
            while pos + _JOURNAL_HEAD.size <= end:
                fh.seek(pos)
                magic, size, _ = _JOURNAL_HEAD.unpack(fh.read(_JOURNAL_HEAD.size))
                pos += _JOURNAL_HEAD.size + size
                if magic != MAGIC or pos > end:
                    break
                count += 1
    except FileNotFoundError:
        return 0
    return count


def _killed_once_journaled(cmd: list[str], journal: Path, entries: int, log: Path) -> int:
    """Run ``cmd`` until its job's journal holds ``entries`` responses, then SIGKILL it."""
    with log.open("wb") as err:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + 300
        while _journaled(journal) < entries and proc.poll() is None:
            assert time.monotonic() < deadline, "the run made no progress"
            time.sleep(0.005)
        proc.kill()
        proc.wait(timeout=60)
    assert b"Traceback" not in log.read_bytes(), log.read_text()[-3000:]
    return proc.returncode


def _without_times(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    found = {r["url"]: {k: v for k, v in r.items() if k not in _TIMES} for r in records}
    assert len(found) == len(records)  # one record a URL
    return found


@pytest.mark.parametrize(
    ("mode", "extra", "kills"),
    [
        ("union", [], (40, 120)),
        ("sitemap", [], (15,)),
        ("links", ["-a", "max_pages=60"], (15, 40)),
    ],
)
def test_a_real_site_killed_mid_crawl_resumes_to_the_uninterrupted_inventory(
    serve, tmp_path, mode, extra, kills
):
    """360muslimexperts (two Yoast indexes; URLs listed by two sitemaps), answers delayed
    at random: killed when the job has journaled each of ``kills`` responses, then run to
    its end, every record equals the uninterrupted run's but for its timestamps — a URL
    listed twice keeps its first sitemap (``found_on``, ``sitemap``, ``lastmod``, the order
    of ``sources``), however fast the journal answers on resume."""
    root = unpack_site(realdata("sites", "360muslimexperts", "site.tar.xz"), tmp_path / "site")
    server = serve(root, rewrite=["https://360muslimexperts.com"], jitter=0.01)
    args = ("-a", f"mode={mode}", *extra)
    whole = run_discover(server.url("/"), tmp_path / "whole", *args, settings=_REAL)
    assert whole.returncode in (0, 5), whole.stderr[-3000:]  # 5: bounded by max_pages
    expected = _without_times(whole.records)
    assert len(expected) > 150

    job, folder = tmp_path / "job", tmp_path / "resumed"
    resumed = {"JOBDIR": job, **_REAL}
    # The command run_discover runs last (the same arguments: the same job).
    cmd = [sys.executable, "-m", "scrapy", "crawl", "discover", "-a", f"url={server.url('/')}"]
    cmd += ["-a", f"out={folder / 'out'}", "-O", str(folder / "inventory.jsonl"), *args]
    for name, value in {"PROGRESS_INTERVAL": 0, **resumed}.items():
        cmd += ["-s", f"{name}={value}"]
    for n, entries in enumerate(kills):
        log = tmp_path / f"killed-{n}.log"
        assert _killed_once_journaled(cmd, job / "responses.journal", entries, log) == -9
    last = run_discover(server.url("/"), folder, *args, settings=resumed)
    assert last.returncode == whole.returncode, last.stderr[-3000:]
    assert "Traceback" not in last.stderr

    got = _without_times(last.records)
    assert sorted(set(got) ^ set(expected)) == []
    differ = [
        (url, name, expected[url].get(name), got[url].get(name))
        for url in sorted(expected)
        for name in sorted(set(expected[url]) | set(got[url]))
        if expected[url].get(name) != got[url].get(name)
    ]
    assert differ == []
    job_entry = last.run["job"]
    assert job_entry["resumed"] is True
    assert job_entry["responses_in_journal_at_start"] >= kills[-1]
    # All but robots.txt's second entry: the spider's own request for it, answered from
    # the robots middleware's fetch, is journaled too but never asked of the journal.
    assert job_entry["responses_replayed"] >= job_entry["responses_in_journal_at_start"] - 1
    assert len(job_entry["earlier_invocations"]) == len(kills)
