"""A prompt stop (``extensions/stop.py``, ``middlewares/stop.py``), measured at the server:
a polite link crawl (``HOST_INTERVAL`` 1 s, the default concurrency) of a 300-page site
signalled mid-crawl sends nothing after the signal, ends within 3 s ``interrupted`` (exit
3) and resumes to the uninterrupted inventory; a second signal ends it at once with its
crawl-log entry written though a request is still on the wire."""

from __future__ import annotations

import contextlib
import http.server
import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

PAGES = 300
STOP_WITHIN = 3.0  # seconds from the signal to the process's end (the bound)
FORCED_WITHIN = 1.5  # seconds from a second signal to the end


class ArrivalServer:
    """A generated site (``/`` links ``/p0/`` … ``/pN/``), recording when each request
    arrived (before it is answered); a path in ``stall`` is answered ``stall_seconds`` late."""

    def __init__(self, pages: int = PAGES, stall: frozenset[str] = frozenset()):
        self.arrivals: list[tuple[float, str]] = []
        self.stall = stall
        self.stall_seconds = 60.0
        self.released = threading.Event()
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.arrivals.append((time.monotonic(), self.path))
                if self.path in site.stall:
                    site.released.wait(site.stall_seconds)
                body = site.page(self.path)
                if body is None:
                    self.send_error(404)
                    return
                kind = "text/plain" if self.path == "/robots.txt" else "text/html"
                self.send_response(200)
                self.send_header("Content-Type", f"{kind}; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                # (the crawler may have gone: a stalled page, abandoned)
                with contextlib.suppress(OSError):
                    self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.pages = pages
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def page(self, path: str) -> bytes | None:
        if path == "/robots.txt":
            return b"User-agent: *\nAllow: /\n"
        if path == "/":
            links = "".join(f'<a href="/p{i}/">page {i}</a>' for i in range(self.pages))
            return f"<html><body>{links}</body></html>".encode()
        if path.startswith("/p") and path.endswith("/") and path[2:-1].isdigit():
            nxt = (int(path[2:-1]) + 1) % self.pages
            links = f'<a href="/">home</a><a href="/p{nxt}/">next</a>'
            return f"<html><body>{links}</body></html>".encode()
        return None

    def close(self) -> None:
        self.released.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def site():
    servers: list[ArrivalServer] = []

    def start(**kwargs: Any) -> ArrivalServer:
        server = ArrivalServer(**kwargs)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


def _command(url: str, out: Path, job: Path, *settings: str) -> list[str]:
    cmd = [sys.executable, "-m", "scrapy", "crawl", "links", "-a", f"url={url}"]
    cmd += ["-a", f"out={out}", "-s", f"JOBDIR={job}", "-s", "PROGRESS_INTERVAL=0"]
    for setting in settings:
        cmd += ["-s", setting]
    return cmd


def _start(cmd: list[str], server: ArrivalServer, arrived: int) -> subprocess.Popen[bytes]:
    """Start ``cmd`` and return once ``arrived`` requests reached the server."""
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while len(server.arrivals) < arrived:
        assert proc.poll() is None, proc.stderr.read().decode()[-3000:]  # type: ignore[union-attr]
        assert time.monotonic() < deadline, "the crawl made no progress"
        time.sleep(0.005)
    return proc


def _wait(proc: subprocess.Popen[bytes]) -> tuple[int, float, str]:
    _, stderr = proc.communicate(timeout=120)
    return proc.returncode, time.monotonic(), stderr.decode()


def _runs(out: Path) -> list[dict[str, Any]]:
    return json.loads((out / "_crawl-log.json").read_text(encoding="utf-8"))["runs"]


def _urls(out: Path) -> set[str]:
    lines = (out / "inventory.jsonl").read_text(encoding="utf-8").splitlines()
    return {json.loads(line)["url"] for line in lines if line.strip()}


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_one_signal_sends_nothing_more_ends_within_3s_and_resumes(site, tmp_path, sig):
    server = site()
    out, job = tmp_path / "out", tmp_path / "job"
    cmd = _command(server.url, out, job)  # HOST_INTERVAL 1 s, 16 requests at once
    # robots.txt, / and two pages: by then the host's slot holds its 16 requests, one
    # leaving per second
    proc = _start(cmd, server, arrived=4)
    signalled = time.monotonic()
    proc.send_signal(sig)
    code, ended, stderr = _wait(proc)

    late = [(round(at - signalled, 3), path) for at, path in server.arrivals if at > signalled]
    assert late == []  # the next send was ~1 s away: none was on the wire
    assert ended - signalled <= STOP_WITHIN, stderr[-3000:]
    assert code == 3, stderr[-3000:]
    assert "Traceback" not in stderr
    assert "request(s) waiting for their host's interval dropped unsent" in stderr
    (run,) = _runs(out)
    assert run["status"] == "interrupted"
    assert run["finish_reason"] == "shutdown"
    # The dropped requests are nobody's refusal, failure or retry.
    assert run["refusals"]["total"] == 0
    assert run["retries"] in (None, {}) or not run["retries"].get("gave_up")
    assert not (out / "state.json").exists()  # an interrupted run leaves state.json as it was
    sent = len(server.arrivals)

    # The same command resumes the job: the pages dropped unsent are asked for again.
    resumed = subprocess.run(
        [*cmd, "-s", "HOST_INTERVAL=0"], cwd=ROOT, capture_output=True, timeout=300
    )
    assert resumed.returncode == 0, resumed.stderr.decode()[-3000:]
    whole = subprocess.run(
        _command(server.url, tmp_path / "whole", tmp_path / "whole-job", "HOST_INTERVAL=0"),
        cwd=ROOT,
        capture_output=True,
        timeout=300,
    )
    assert whole.returncode == 0, whole.stderr.decode()[-3000:]
    assert _urls(out) == _urls(tmp_path / "whole")
    assert len(_urls(out)) == PAGES + 1
    runs = _runs(out)
    assert [r["status"] for r in runs] == ["interrupted", "completed"]
    assert runs[-1]["job"]["resumed"] is True
    # Only what the first invocation had sent was replayed, the rest fetched once.
    assert runs[-1]["job"]["responses_replayed"] <= sent


def test_a_second_signal_ends_at_once_and_writes_the_crawl_log(site, tmp_path):
    # Every page stalls: the first one sent is still on the wire when the signals come.
    server = site(stall=frozenset(f"/p{i}/" for i in range(PAGES)))
    out, job = tmp_path / "out", tmp_path / "job"
    proc = _start(_command(server.url, out, job), server, arrived=3)  # robots, /, /p0/
    time.sleep(0.3)
    first = time.monotonic()
    proc.send_signal(signal.SIGINT)
    time.sleep(1.0)
    assert proc.poll() is None  # waiting for /p0/, on the wire
    second = time.monotonic()
    proc.send_signal(signal.SIGINT)
    code, ended, stderr = _wait(proc)

    assert [path for at, path in server.arrivals if at > first] == []
    assert ended - second <= FORCED_WITHIN, stderr[-3000:]
    assert code == 3, stderr[-3000:]
    assert "Received SIGINT again: 1 request(s) on their way abandoned" in stderr
    (run,) = _runs(out)
    assert run["status"] == "interrupted"
    assert run["refusals"]["total"] == 0
