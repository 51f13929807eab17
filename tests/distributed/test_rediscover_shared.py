"""``scrapy rediscover SITES_FILE -s REDIS_URL=…`` on several machines (issue 36 point 6):
real ``rediscover`` processes (each standing for a machine, its own ``--root``), a real
``redis-server`` (``conftest.py``), local sites whose request logs say who fetched what.
Each site is run by one machine at a time; a site that fails is recorded and the others
go on; a machine killed mid-site has its site taken again by another."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from discovery_crawler.distributed.job import JobKeys
from tests.conftest import ROOT, free_port
from tests.e2e.test_rediscover import folder, listed_site
from tests.e2e.test_service import tree_site

FAST = ("HOST_INTERVAL=0", "PROGRESS_INTERVAL=0", "RETRY_BACKOFF_BASE=0.05")


def machine(
    sites: Path, root: Path, redis_url: str, *extra: str, settings: tuple[str, ...] = FAST
) -> subprocess.Popen[str]:
    """One machine's ``rediscover`` (its output read with ``communicate``)."""
    cmd = [sys.executable, "-m", "scrapy", "rediscover", str(sites), "--root", str(root)]
    for setting in (*settings, f"REDIS_URL={redis_url}", "REDIS_HEARTBEAT_TIMEOUT=3"):
        cmd += ["-s", setting]
    return subprocess.Popen(
        [*cmd, *extra], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def said(stdout: str) -> dict[str, str]:
    found = {}
    for line in stdout.splitlines():
        name, colon, rest = line.partition(": ")
        if colon and name != "rediscover":
            found[name] = rest
    return found


def ran_here(root: Path) -> set[str]:
    """The sites whose folder under ``root`` has a crawl-log entry."""
    return {p.parent.name for p in root.glob("*/_crawl-log.json")}


def test_two_machines_share_the_list_each_site_run_once(serve, tmp_path, redis_server):
    """Two machines, five sites (one dead): every site run by exactly one machine (its
    folder in that machine's root, its server asked once for its home page), both
    machines ran some; the dead site recorded as failed and the others run; each
    machine's exit status is its own sites' (1 only where the dead site ran); one machine
    writes the round's results naming every site's machine and folder; a machine started
    after the round is over runs nothing."""
    servers = [serve(listed_site(tmp_path / f"s{i}", [1, 2, 3])) for i in range(4)]
    dead = f"http://127.0.0.1:{free_port()}/"
    urls = [s.url("/") for s in servers[:2]] + [dead] + [s.url("/") for s in servers[2:]]
    sites = tmp_path / "sites.txt"
    sites.write_text("".join(f"{u}\n" for u in urls))
    roots = [tmp_path / "m0", tmp_path / "m1"]
    # 0.3 s between requests to a host: a site takes ~2 s, so both machines take some
    slow = (*FAST[1:], "HOST_INTERVAL=0.3")
    procs = [machine(sites, root, redis_server.url, settings=slow) for root in roots]
    outs = [p.communicate(timeout=300) for p in procs]
    codes = [p.returncode for p in procs]
    runs = [ran_here(root) for root in roots]
    names = {folder(u) for u in urls}
    assert runs[0] | runs[1] == names, (outs, runs)
    assert not runs[0] & runs[1]  # no site run twice
    assert runs[0] and runs[1], runs  # the list was shared
    for server in servers:
        assert [p for _, p, _ in server.requests].count("/robots.txt") == 1
    for i in range(2):
        lines = said(outs[i][0])
        assert set(lines) == runs[i], outs[i]
        has_dead = folder(dead) in runs[i]
        assert codes[i] == (1 if has_dead else 0), outs[i]
        if has_dead:
            assert re.match(
                r"failed \(exit 1\), 0 URLs, first run: site unreachable", lines[folder(dead)]
            )
        ran, ok = len(runs[i]), len(runs[i]) - has_dead
        assert (
            outs[i][0]
            .splitlines()[-1]
            .endswith(
                f"5 site(s) in all; {ran} ran here, {ok} done, {ran - ok} not; exit {codes[i]}"
            )
        ), outs[i][0]
    finished = [root for root in roots if list(root.glob("_round-*.json"))]
    assert len(finished) == 1, outs
    (results_file,) = finished[0].glob("_round-*.json")
    results = json.loads(results_file.read_text())
    assert {s["folder"] for s in results["sites"].values()} == names
    for entry in results["sites"].values():
        root = next(r for r, ran in zip(roots, runs, strict=True) if entry["folder"] in ran)
        assert entry["root"] == str(root.resolve())
        assert entry["out"] == str((root / entry["folder"]).resolve())
        assert entry["outcome"] == ("failed" if entry["folder"] == folder(dead) else "completed")
    assert f"round {results['round']} is done: 5 site(s) on 1 machine(s)" in "".join(
        out for out, _ in outs
    )
    client = redis_server.client()
    left = [k.decode() for k in client.keys("*")]
    assert left == [JobKeys(f"sites:{results['round']}").prefix + "done"], left
    late = machine(sites, tmp_path / "m2", redis_server.url)
    out, err = late.communicate(timeout=120)
    assert late.returncode == 0, out + err
    assert f"round {results['round']} was finished at" in out
    assert not (tmp_path / "m2").exists()
    assert all([p for _, p, _ in s.requests].count("/robots.txt") == 1 for s in servers)


def test_a_killed_machines_site_is_taken_again(serve, tmp_path, redis_server):
    """Machine A SIGKILLed while it runs a slow site: its site is stopped (interrupted, in
    A's root); machine B, waiting in the round, takes it once A's heartbeat lapses
    (REDIS_HEARTBEAT_TIMEOUT=3) and completes it; B exits 0 and ends the round."""
    slow = serve(tree_site(tmp_path / "slow", 12))
    quick = serve(listed_site(tmp_path / "quick", [1]))
    sites = tmp_path / "sites.txt"
    sites.write_text(f"{slow.url('/')}\n{quick.url('/')}\n")
    settings = (*FAST[1:], "HOST_INTERVAL=0.5")
    a = machine(sites, tmp_path / "a", redis_server.url, settings=settings)
    deadline = time.monotonic() + 60
    while not slow.requests:  # A runs the slow site
        assert a.poll() is None and time.monotonic() < deadline, a.communicate()
        time.sleep(0.05)
    b = machine(sites, tmp_path / "b", redis_server.url, settings=settings)
    deadline = time.monotonic() + 60
    while not (tmp_path / "b" / folder(quick.url("/")) / "_crawl-log.json").exists():
        assert b.poll() is None and time.monotonic() < deadline, b.communicate()
        time.sleep(0.05)
    os.kill(a.pid, signal.SIGKILL)
    a.wait(30)
    out, err = b.communicate(timeout=300)
    assert b.returncode == 0, out + err
    lines = said(out)
    assert lines[folder(slow.url("/"))].startswith("completed (exit 0), 12 URLs"), out
    assert "1 site(s) of a machine that stopped beating went back to round" in out
    killed = tmp_path / "a" / folder(slow.url("/")) / "_crawl-log.json"
    deadline = time.monotonic() + 60
    while not killed.exists():  # A's site stops on its own (its parent died)
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert json.loads(killed.read_text())["runs"][-1]["status"] == "interrupted"
    (results_file,) = (tmp_path / "b").glob("_round-*.json")
    results = json.loads(results_file.read_text())
    assert {s["worker"].split(":")[1] for s in results["sites"].values()} == {str(b.pid)}


def test_unreachable_redis_is_one_line_and_nothing_written(tmp_path):
    sites = tmp_path / "sites.txt"
    sites.write_text("http://127.0.0.1:9/\n")
    address = f"127.0.0.1:{free_port()}"
    proc = machine(sites, tmp_path / "root", f"redis://{address}/0")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1
    assert out == ""
    (line,) = err.strip().splitlines()
    assert line.startswith(f"error: cannot reach Redis at {address}/0 (REDIS_URL): ")
    assert line.endswith("(exit 1)")
    assert not (tmp_path / "root").exists()


def test_another_sites_file_under_the_rounds_name_is_refused(tmp_path, redis_server):
    first, second = tmp_path / "one.txt", tmp_path / "two.txt"
    first.write_text("http://127.0.0.1:9/\n")
    second.write_text("http://127.0.0.1:10/\n")
    client = redis_server.client()
    from discovery_crawler.distributed.sites import SitesRound

    SitesRound.join(
        redis_server.url, "nightly", [{"line": 1, "url": "http://127.0.0.1:9/", "arguments": {}}],
        3, 1,
    )  # fmt: skip
    proc = machine(second, tmp_path / "root", redis_server.url, "--job", "nightly")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, out + err
    assert err.strip() == (
        "error: round nightly runs another sites file (other sites or arguments); give "
        "every machine the same file, or another --job NAME (exit 2)"
    )
    assert not (tmp_path / "root").exists()
    assert client.exists(JobKeys("sites:nightly").identity)


def test_redis_restarted_without_its_data_stops_the_machine_in_one_line(
    serve, tmp_path, redis_server
):
    """The round's keys lost mid-site (Redis restarted empty): one error line naming the
    round and the address, the running site stopped (interrupted), exit 1."""
    slow = serve(tree_site(tmp_path / "slow", 30))
    sites = tmp_path / "sites.txt"
    sites.write_text(f"{slow.url('/')}\n")
    proc = machine(
        sites, tmp_path / "root", redis_server.url, settings=(*FAST[1:], "HOST_INTERVAL=0.5")
    )
    deadline = time.monotonic() + 60
    while not slow.requests:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    redis_server.restart(keep_data=False)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, out + err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, err
    assert re.fullmatch(
        rf"error: round sites-[0-9a-f]{{8}} is gone from Redis at 127\.0\.0\.1:"
        rf"{redis_server.port}/0 \(Redis restarted without its data, or the keys were "
        r"deleted\): which sites ran is lost; run the list again",
        errors[0],
    )
    assert said(out)[folder(slow.url("/"))].startswith("interrupted (exit 3)"), out
    assert "exit 1" in out.splitlines()[-1]
    assert len(slow.requests) < 30


def test_a_round_name_without_redis_is_a_usage_error(tmp_path):
    sites = tmp_path / "sites.txt"
    sites.write_text("http://127.0.0.1:9/\n")
    cmd = [sys.executable, "-m", "scrapy", "rediscover", str(sites), "--root", str(tmp_path / "r")]
    done = subprocess.run([*cmd, "--job", "x"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.startswith(
        "error: --job names a round of a sites list shared over Redis; give -s "
        "REDIS_URL=redis://host:port/db too"
    )
    assert not (tmp_path / "r").exists()
