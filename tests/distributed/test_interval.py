"""One politeness budget per host across the workers of a job (``distributed/interval.py``
under ``extensions/host_turns.py``), measured at the server: real ``scrapy crawl links``
workers, a real ``redis-server`` (``conftest.py``), and a loopback server that notes the
moment each request arrives (its request line read), on its own thread."""

from __future__ import annotations

import http.server
import os
import subprocess
import sys
import threading
import time
from itertools import pairwise
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.distributed.site import page_path

TOLERANCE = 0.015  # seconds a gap may fall short of the interval (the measure)


class LinkSite:
    """``pages`` HTML pages in a ternary tree (``tests/distributed/site.py``'s shape), in
    memory; ``script`` answers a path with (status, Retry-After) responses in turn."""

    def __init__(self, pages: int, script: dict[str, list[tuple[int, str]]] | None = None):
        self.pages = {page_path(i): self._page(i, pages) for i in range(pages)}
        self.script = {path: list(answers) for path, answers in (script or {}).items()}
        self.arrivals: list[tuple[float, str, int]] = []  # (monotonic, path, status)
        self._lock = threading.Lock()
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @staticmethod
    def _page(i: int, pages: int) -> bytes:
        links = [page_path(c) for c in (3 * i + 1, 3 * i + 2, 3 * i + 3) if c < pages]
        body = "".join(f'<a href="{href}">link</a>' for href in [*links, "/"])
        return f"<html><head><title>Page {i}</title></head><body>{body}</body></html>".encode()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def times(self) -> list[float]:
        return sorted(t for t, path, _ in self.arrivals if path != "/robots.txt")

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                arrived = time.monotonic()
                with site._lock:
                    answers = site.script.get(self.path)
                    status, retry_after = answers.pop(0) if answers else (200, "")
                    body = site.pages.get(self.path)
                    if body is None:
                        status = 404
                    site.arrivals.append((arrived, self.path, status))
                body = body if status == 200 else b"busy"
                self.send_response_only(status)
                if retry_after:
                    self.send_header("Retry-After", retry_after)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


@pytest.fixture
def link_site():
    sites: list[LinkSite] = []

    def start(pages: int, script: dict[str, list[tuple[int, str]]] | None = None) -> LinkSite:
        sites.append(LinkSite(pages, script))
        return sites[-1]

    yield start
    for site in sites:
        site.stop()


def workers(site: LinkSite, tmp_path: Path, redis_url: str, job: str, **settings: object):
    """Three workers of ``job`` over ``site``, each into its own out folder; their exits."""
    procs = []
    for i in range(3):
        out = tmp_path / f"w{i}"
        cmd = [sys.executable, "-m", "scrapy", "crawl", "links", "-a", f"url={site.url}"]
        cmd += ["-a", f"out={out}", "-a", f"job={job}", "-s", f"REDIS_URL={redis_url}"]
        base = {"PROGRESS_INTERVAL": 0, "REDIS_HEARTBEAT_TIMEOUT": 3, "RETRY_BACKOFF_BASE": 0.05}
        for name, value in {**base, **settings}.items():
            cmd += ["-s", f"{name}={value}"]
        log = (tmp_path / f"w{i}.log").open("w")
        procs.append(subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log))
    return [p.wait(300) for p in procs]


def test_three_workers_keep_one_interval_per_host(link_site, tmp_path, redis_server):
    """HOST_INTERVAL=0.1 over 3 workers: every gap between two requests the server gets is
    at least 0.1 s, within 15 ms (without the shared budget: ~0.033 s gaps)."""
    site = link_site(90)
    assert workers(site, tmp_path, redis_server.url, "polite", HOST_INTERVAL=0.1) == [0, 0, 0]
    times = site.times()
    assert len(times) == 90
    gaps = [b - a for a, b in pairwise(times)]
    short = [round(g, 4) for g in gaps if g < 0.1 - TOLERANCE]
    # A worker stalled for more than an interval between taking its host's turn and its
    # request reaching the server (descheduled: on this shared 2-core machine the load
    # reached 15) can land one send next to another's; counting each interval from the
    # answer (RedisBudget.answers_anchor) covers shorter stalls. Overloaded, one such
    # gap in 89 is allowed; otherwise none.
    overloaded = os.getloadavg()[0] > 2 * (os.cpu_count() or 1)
    assert len(short) <= (1 if overloaded else 0), (short, sorted(gaps)[:5])
    assert sorted(gaps)[1] >= 0.1 - TOLERANCE, sorted(gaps)[:5]
    logs = [(tmp_path / f"w{i}.log").read_text() for i in range(3)]
    assert sum("'redis/interval/waits'" in log for log in logs) >= 2  # they took turns


def test_one_workers_retry_after_holds_the_host_for_every_worker(link_site, tmp_path, redis_server):
    """A 503 with ``Retry-After: 2`` answered to one worker: no worker's request reaches
    the host for 2 s; the crawl then goes on (the page retried) and completes."""
    busy = page_path(20)
    site = link_site(120, {busy: [(503, "2")]})
    assert workers(site, tmp_path, redis_server.url, "held", HOST_INTERVAL=0.2) == [0, 0, 0]
    (answered,) = [t for t, path, status in site.arrivals if status == 503]
    later = [t for t in site.times() if t > answered]
    assert len(later) > 10  # the crawl had more to do after the 503
    assert min(later) - answered >= 2.0 - TOLERANCE, min(later) - answered
    assert [s for _, p, s in site.arrivals if p == busy] == [503, 200]  # retried once
    fetched = {p for _, p, s in site.arrivals if s == 200}
    assert len(fetched) == 120
