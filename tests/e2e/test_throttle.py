"""The per-host throttle (SPEC §6), measured at the server: a loopback server records the
arrival time of every request (monotonic clock, in its own thread) while a real crawl with
8 concurrent requests runs against it as a subprocess."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
import time
from email.utils import formatdate
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


PROBE = Path(__file__).resolve().parent.parent / "fixtures" / "throttle" / "probe_spider.py"


JITTER = 0.03  # seconds of scheduling noise allowed below an interval


# -- a server that says when each request arrived ------------------------------------------
class ArrivalServer:
    """HTTP/1.1 on 127.0.0.1 (port 0). Records (monotonic time, Host name, path) as each
    request arrives; answers 200, or the scripted (status, Retry-After) responses for a path
    in turn. A Retry-After of ``"date+N"`` is an HTTP-date N seconds after the Date header.
    ``stall`` paths are read that many seconds late, as if set-up had delayed them."""

    def __init__(
        self,
        script: dict[str, list[tuple[int, str]]] | None = None,
        stall: dict[str, float] | None = None,
    ):
        self.arrivals: list[tuple[float, str, str]] = []
        self.stall = stall or {}
        self.script = {path: list(answers) for path, answers in (script or {}).items()}
        self._lock = threading.Lock()
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def url(self, host: str, path: str) -> str:
        return f"http://{host}:{self.port}{path}"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def times(self, host: str) -> list[float]:
        return sorted(t for t, h, _ in self.arrivals if h == host)

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                time.sleep(server.stall.get(self.path, 0))
                arrived = time.monotonic()
                host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
                with server._lock:
                    server.arrivals.append((arrived, host, self.path))
                    answers = server.script.get(self.path)
                    status, retry_after = answers.pop(0) if answers else (200, "")
                now = int(time.time())
                if retry_after.startswith("date+"):
                    retry_after = formatdate(now + int(retry_after[5:]), usegmt=True)
                body = b"ok"
                self.send_response_only(status)
                self.send_header("Date", formatdate(now, usegmt=True))
                if retry_after:
                    self.send_header("Retry-After", retry_after)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


@pytest.fixture
def arrival_server():
    servers: list[ArrivalServer] = []

    def start(
        script: dict[str, list[tuple[int, str]]] | None = None,
        stall: dict[str, float] | None = None,
    ) -> ArrivalServer:
        servers.append(ArrivalServer(script, stall))
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


def crawl(tmp_path: Path, plan: list[dict[str, Any]], **settings: Any) -> dict[str, Any]:
    """Run the probe spider over ``plan`` with 8 concurrent requests; return its result."""
    plan_file, out = tmp_path / "plan.json", tmp_path / "result.json"
    plan_file.write_text(json.dumps(plan), encoding="utf-8")
    merged: dict[str, Any] = {
        "CONCURRENT_REQUESTS": 8,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
        "LOG_LEVEL": "INFO",
        "PROGRESS_INTERVAL": 0,
    }
    merged.update(settings)
    cmd = [sys.executable, "-m", "scrapy", "runspider", str(PROBE)]
    cmd += ["-a", f"plan={plan_file}", "-a", f"out={out}"]
    for name, value in merged.items():
        value = json.dumps(value) if isinstance(value, dict) else value
        cmd += ["-s", f"{name}={value}"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    result = json.loads(out.read_text(encoding="utf-8"))
    result["log"] = proc.stderr
    return result


def gaps(times: list[float]) -> list[float]:
    return [b - a for a, b in pairwise(times)]


def pages(server: ArrivalServer, host: str, n: int, **meta: Any) -> list[dict[str, Any]]:
    return [{"url": server.url(host, f"/{host}/{i}"), "meta": meta} for i in range(n)]


# -- end to end ------------------------------------------------------------------------------
def test_interval_holds_at_the_server_and_hosts_are_independent(arrival_server, tmp_path):
    """HOST_INTERVAL=0.5 with 8 requests allowed at once: at the server, no two requests to
    a host arrive closer than 0.5 s; 127.0.0.1 and localhost are spaced independently (they
    run side by side, so the crawl takes about as long as one host's share)."""
    server = arrival_server()
    plan = [
        p
        for pair in zip(*(pages(server, h, 5) for h in ("127.0.0.1", "localhost")), strict=True)
        for p in pair
    ]
    result = crawl(tmp_path, plan, HOST_INTERVAL=0.5)
    a, b = server.times("127.0.0.1"), server.times("localhost")
    assert len(a) == len(b) == 5
    for times in (a, b):
        assert min(gaps(times)) >= 0.5 - JITTER, gaps(times)
        assert max(gaps(times)) < 0.5 + 0.3, gaps(times)  # a floor, not a crawl-stopper
    assert abs(a[0] - b[0]) < 0.3  # both hosts start at once...
    assert max(a[-1], b[-1]) - min(a[0], b[0]) < 2.0 + 0.5  # ...and interleave (serial: 4.5 s)
    assert result["stats"]["throttle/waits"] >= 6
    assert result["throttle"]["interval"] == 0.5
    assert result["throttle"]["waits"] == result["stats"]["throttle/waits"]


def test_a_late_first_arrival_still_gets_its_interval(arrival_server, tmp_path):
    """A host's first request may reach the server late (DNS, TCP and TLS set-up; here the
    server reads it 0.3 s late) while the next one reuses its connection: the interval after
    it is counted from its response, so the server still sees the interval."""
    server = arrival_server(stall={"/first": 0.3})
    plan = [{"url": server.url("127.0.0.1", "/first")}, *pages(server, "127.0.0.1", 3)]
    crawl(tmp_path, plan, HOST_INTERVAL=0.5)
    times = server.times("127.0.0.1")
    assert server.arrivals[0][2] == "/first"
    assert min(gaps(times)) >= 0.5 - JITTER, gaps(times)


def test_zero_interval_means_no_spacing_and_overrides_apply(arrival_server, tmp_path):
    """HOST_INTERVAL=0 sends a host's requests together; a per-host override
    (HOST_INTERVAL_OVERRIDES) still spaces that host. An unreadable Retry-After and an
    unreadable Crawl-delay are counted, said once, and change nothing."""
    server = arrival_server({"/garbled": [(429, "soon")]})
    plan = [{"url": server.url("127.0.0.1", "/garbled"), "meta": {"robots_crawl_delay": "x"}}]
    plan += pages(server, "127.0.0.1", 5) + pages(server, "localhost", 4)
    result = crawl(tmp_path, plan, HOST_INTERVAL=0, HOST_INTERVAL_OVERRIDES={"localhost": 0.4})
    free, spaced = server.times("127.0.0.1"), server.times("localhost")
    assert len(free) == 7 and len(spaced) == 4  # 6 requests and the 429's retry
    assert free[-1] - free[0] < 0.25, gaps(free)
    assert min(gaps(spaced)) >= 0.4 - JITTER, gaps(spaced)
    assert result["throttle"]["overrides"] == {"localhost": 0.4}
    stats = result["stats"]
    assert stats["throttle/retry_after_invalid"] == 1
    assert stats["throttle/crawl_delay_invalid"] == 2  # the request and its retry
    assert "throttle/retry_after" not in stats
    assert stats["throttle/waits"] == 3  # localhost's; 127.0.0.1 is not throttled
    assert result["log"].count("with an unreadable Retry-After 'soon'") == 1
    assert result["log"].count("ignoring Crawl-delay 'x' for 127.0.0.1") == 1


def test_crawl_delay_raises_the_interval_up_to_its_cap(arrival_server, tmp_path):
    """A Crawl-delay (here through the ``robots_crawl_delay`` meta key the robots policy
    sets) larger than HOST_INTERVAL is the host's interval; one above MAX_CRAWL_DELAY is
    capped there."""
    server = arrival_server()
    plan = pages(server, "127.0.0.1", 4, robots_crawl_delay=0.6)
    plan += pages(server, "localhost", 4, robots_crawl_delay=5)
    result = crawl(tmp_path, plan, HOST_INTERVAL=0.2, MAX_CRAWL_DELAY=0.8)
    delayed, capped = server.times("127.0.0.1"), server.times("localhost")
    assert min(gaps(delayed)) >= 0.6 - JITTER, gaps(delayed)
    assert min(gaps(capped)) >= 0.8 - JITTER, gaps(capped)
    assert max(gaps(capped)) < 0.8 + 0.3, gaps(capped)  # the cap, not the stated 5 s
    stats = result["stats"]
    assert stats["throttle/crawl_delay_applied"] == 2
    assert stats["throttle/crawl_delay_capped"] == 1
    hosts = result["throttle"]["hosts"]
    assert hosts["127.0.0.1"]["interval"] == 0.6
    assert hosts["localhost"] == {
        "interval": 0.8,
        "base": 0.2,
        "crawl_delay": 5.0,
        "crawl_delay_capped": True,
    }
    assert "localhost: robots.txt Crawl-delay sets its interval to 0.8s" in result["log"]


def test_retry_after_backs_the_host_off(arrival_server, tmp_path):
    """A 429 with ``Retry-After: 1`` and a 503 with an HTTP-date 2 s after its Date header:
    no request reaches that host sooner — neither the ones already queued nor the retry
    RetryMiddleware sends. A Retry-After of an hour is capped by MAX_RETRY_AFTER."""
    script = {
        "/busy": [(429, "1")],
        "/down": [(503, "date+2")],
        "/later": [(503, "3600")],
    }
    server = arrival_server(script)
    plan = [{"url": server.url("127.0.0.1", "/busy")}, {"url": server.url("localhost", "/down")}]
    plan += pages(server, "127.0.0.1", 3) + pages(server, "localhost", 3)
    plan += [{"url": server.url("127.0.0.1", "/later")}]
    result = crawl(tmp_path, plan, HOST_INTERVAL=0.1, MAX_RETRY_AFTER=2.5, RETRY_TIMES=1)
    waits = {"/busy": 1.0, "/down": 2.0, "/later": 2.5}
    for path, wait in waits.items():
        first, host = next((t, h) for t, h, p in server.arrivals if p == path)
        after = [t for t in server.times(host) if t > first]
        assert after, path
        assert min(after) - first >= wait - JITTER, (path, min(after) - first)
        retried = [t for t, _, p in server.arrivals if p == path]
        assert len(retried) == 2 and retried[1] - retried[0] >= wait - JITTER, path
    later = [t for t, _, p in server.arrivals if p == "/later"]
    assert later[1] - later[0] < 2.5 + 0.5  # capped, not an hour
    stats = result["stats"]
    assert stats["throttle/retry_after"] == 3
    assert stats["throttle/retry_after/429"] == 1
    assert stats["throttle/retry_after/503"] == 2
    assert stats["throttle/retry_after_capped"] == 1
    assert stats["throttle/retry_after_max_seconds"] == 3600
    assert result["throttle"]["hosts"]["localhost"]["retry_after"] == 1
    assert "127.0.0.1 answered 429 with Retry-After; no request to it for 1.0s" in result["log"]


def test_arrival_gaps_helper():
    assert gaps([1.0, 1.5, 3.0]) == [0.5, 1.5]
