"""Faults of a distributed job that ``test_workers.py`` leaves out (issue 36 point 7): a
job whose only worker is killed with SIGKILL is finished by a replacement started later
— no other worker is alive to reap the dead one's leases until it comes."""

from __future__ import annotations

import json
import os
import signal
import time

from discovery_crawler.distributed.job import JobKeys
from tests.distributed.site import write_site
from tests.distributed.test_workers import job_keys_left, page_fetches, worker


def test_a_replacement_started_later_finishes_a_killed_workers_job(tmp_path, serve, redis_server):
    """The job's one worker SIGKILLed mid-crawl; a replacement started 1 s later joins the
    job, hands the dead worker's leases back once its heartbeat lapses
    (REDIS_HEARTBEAT_TIMEOUT=3), and finishes: every page fetched, none twice but those
    the dead worker held (leased, or fetched with its records not handed over); the
    replacement writes the job's result, with every page in it, naming the dead worker
    as missing; the job's keys deleted."""
    pages = write_site(tmp_path / "site", 400)
    site = serve(tmp_path / "site")
    first = worker(site.url("/"), tmp_path / "w0", redis_server.url, "-a", "job=alone",
                   HOST_INTERVAL=0.02)  # fmt: skip
    client, keys = redis_server.client(), JobKeys("alone")
    deadline = time.monotonic() + 60
    lease = None
    while time.monotonic() < deadline and lease is None:
        names = [m.decode() for m in client.smembers(keys.workers)]
        mine = [n for n in names if n.split(":")[1] == str(first.pid)]
        if mine and client.hlen(keys.lease(mine[0])) and len(page_fetches(site)) > 60:
            lease = keys.lease(mine[0])
        time.sleep(0.02)
    assert lease is not None, "the worker never held a lease"
    os.kill(first.pid, signal.SIGKILL)
    first.wait(10)
    # its account at death: its leases and the pages it fetched, records not handed over
    held = client.hlen(lease) + client.hlen(keys.read(lease.rsplit("lease:", 1)[1]))
    fetched_before = len(page_fetches(site))
    assert 0 < fetched_before < len(pages) - 100  # killed mid-crawl
    time.sleep(1)
    second = worker(site.url("/"), tmp_path / "w1", redis_server.url, "-a", "job=alone",
                    HOST_INTERVAL=0.02)  # fmt: skip
    assert second.wait(300) == 0, (tmp_path / "w1.log").read_text()[-3000:]
    fetched = page_fetches(site)
    assert set(fetched) == pages
    twice = [path for path, n in fetched.items() if n > 1]
    assert len(twice) <= held, (twice, held)
    log = (tmp_path / "w1.log").read_text()
    assert "Requeued" in log  # the replacement handed the dead worker's leases back
    entry = json.loads((tmp_path / "w1" / "_crawl-log.json").read_text())["runs"][-1]
    (missing,) = entry["distributed"]["missing_workers"]
    assert missing.split(":")[1] == str(first.pid)
    assert any("stopped before handing over their records" in w for w in entry["warnings"])
    assert job_keys_left(client) == []  # (but its done mark)
    urls = {json.loads(line)["url"] for line in (tmp_path / "w1" / "inventory.jsonl").open()}
    assert {site.url(path) for path in pages} <= urls  # the dead worker's pages too
