"""Shared test helpers: loopback site servers, real-data paths, and running the real spider.

Every crawl test runs ``scrapy crawl discover`` as a subprocess against a server on
127.0.0.1 at a free port — the way users run it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from discovery_crawler.site_server import SiteServer

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
REALDATA = Path(os.environ.get("DISCOVERY_REALDATA", ROOT.parent / "shared" / "realdata"))
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def needs_compiled(module: object) -> pytest.MarkDecorator:
    """Skip a test of a C extension (``discovery_crawler/*/_*.c``) where it was not built;
    in CI it runs anyway, and ``tests/test_compiled.py`` fails on the missing build."""
    return pytest.mark.skipif(  # never in CI: there the test runs (and fails) without it
        module is None and not IN_CI,
        reason="this C extension was not built here (pip install -e . builds it; in CI its "
        "absence fails tests/test_compiled.py)",
    )


def realdata(*parts: str) -> Path:
    """A path under ../shared/realdata; fails in CI and skips elsewhere when it is missing."""
    path = REALDATA.joinpath(*parts)
    if not path.exists():
        message = f"real-data folder missing: {path} (set DISCOVERY_REALDATA)"
        if IN_CI:
            pytest.fail(f"{message}; in CI this is a failure, not a skip")
        pytest.skip(f"{message}; outside CI such tests skip")
    return path


def free_port() -> int:
    """A loopback port nobody listens on now (tests never name a fixed port)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def serve():
    """Start a ``SiteServer`` for a folder: ``serve(root, rewrite=[...])``. As real static
    hosts do, it answers a folder without its trailing slash with 301 to the slash form
    (``dir_redirect=False``: serves its index.html there, silently)."""
    servers: list[SiteServer] = []

    def start(
        root: Path,
        rewrite: list[str] | None = None,
        dir_redirect: bool = True,
        validators: bool = False,
        jitter: float = 0.0,
    ) -> SiteServer:
        server = SiteServer(
            root, rewrite, dir_redirect=dir_redirect, validators=validators, jitter=jitter
        ).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def ssrf_allow(*urls: str) -> dict[str, str]:
    """The explicit allow-list through which a crawl under the SSRF guard (profile
    service) reaches the tests' own loopback servers: 127.0.0.1 and their ports."""
    ports = ",".join(["80", "443", *(str(urlsplit(u).port) for u in urls)])
    return {"SSRF_ALLOWED_NETWORKS": "127.0.0.1/32", "SSRF_ALLOWED_PORTS": ports}


def serve_pages_sitemap(serve: Any, root: Path, count: int) -> str:
    """Serve ``root`` with a ``sitemap.xml`` listing ``/p-0/`` … ``/p-{count - 1}/``; its URL."""
    root.mkdir(parents=True, exist_ok=True)
    server = serve(root)
    locs = "".join(f"<url><loc>{server.url(f'/p-{i}/')}</loc></url>" for i in range(count))
    (root / "sitemap.xml").write_text(
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'
    )
    return server.url("/sitemap.xml")


@dataclass
class CrawlResult:
    returncode: int
    stdout: str
    stderr: str
    records: list[dict[str, Any]]
    crawl_log: dict[str, Any] | None
    feed: Path
    out: Path
    raw_feed: str = field(default="", repr=False)

    @property
    def run(self) -> dict[str, Any]:
        assert self.crawl_log is not None, self.stderr[-3000:]
        return self.crawl_log["runs"][-1]

    @property
    def discovery(self) -> dict[str, Any]:
        return self.run["discovery"]

    @property
    def urls(self) -> list[str]:
        return [r["url"] for r in self.records]

    def attempt(self, url_end: str) -> dict[str, Any]:
        matches = [a for a in self.discovery["sitemap_attempts"] if a["url"].endswith(url_end)]
        assert len(matches) == 1, (url_end, self.discovery["sitemap_attempts"])
        return matches[0]


def run_discover(
    url: str,
    tmp_path: Path,
    *args: str,
    feed: str | None = "inventory.jsonl",
    settings: dict[str, Any] | None = None,
    timeout: float = 600,
    out: Path | None = None,
    spider: str = "discover",
    command: list[str] | None = None,
    env: dict[str, str] | None = None,
) -> CrawlResult:
    """Run ``scrapy crawl <spider> -a url=… -O feed`` in the project, return what it wrote.
    ``command`` replaces ``python -m scrapy`` (a probe script that wraps Scrapy's);
    ``feed=None`` gives no ``-O`` (the run's default feed, ``<out>/inventory.jsonl``, is
    read); ``env`` is added to the environment."""
    out = out or tmp_path / "out"
    feed_path = tmp_path / feed if feed else out / "inventory.jsonl"
    # Fast crawls: no interval, no progress line, retries paused 0.05 s … 0.2 s (the defaults
    # would pause a failing host 1 + 2 + 4 + 8 + 16 s before a fetch is final).
    merged = {
        "HOST_INTERVAL": 0,
        "PROGRESS_INTERVAL": 0,
        "RETRY_BACKOFF_BASE": 0.05,
        "RETRY_BACKOFF_MAX": 0.2,
    }
    merged.update(settings or {})
    cmd = [*(command or [sys.executable, "-m", "scrapy"]), "crawl", spider, "-a", f"url={url}"]
    cmd += ["-a", f"out={out}", *(["-O", str(feed_path)] if feed else [])]
    for name, value in merged.items():
        cmd += ["-s", f"{name}={value}"]
    cmd += list(args)
    environ = {**os.environ, **env} if env else None
    proc = subprocess.run(
        cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=environ
    )
    raw = feed_path.read_text(encoding="utf-8") if feed_path.is_file() else ""
    records: list[dict[str, Any]] = []
    if feed_path.name.endswith(".jsonl"):
        records = [json.loads(line) for line in raw.splitlines() if line.strip()]
    log_path = out / "_crawl-log.json"
    crawl_log = json.loads(log_path.read_text(encoding="utf-8")) if log_path.exists() else None
    return CrawlResult(
        proc.returncode, proc.stdout, proc.stderr, records, crawl_log, feed_path, out, raw
    )


@pytest.fixture
def discover(tmp_path):
    """``discover(url, *args, **kw)``: run the real spider into this test's temp folder."""

    def run(url: str, *args: str, **kwargs: Any) -> CrawlResult:
        return run_discover(url, tmp_path, *args, **kwargs)

    return run


@pytest.fixture
def links(tmp_path):
    """``links(url, *args, **kw)``: run the real ``links`` spider (BFS link crawl)."""

    def run(url: str, *args: str, **kwargs: Any) -> CrawlResult:
        return run_discover(url, tmp_path, *args, spider="links", **kwargs)

    return run


def run_crawler(
    url: str = "https://example.com/",
    settings: dict[str, Any] | None = None,
    mode: str | None = None,
    **arguments: Any,
) -> Any:
    """A crawler with the project's settings, a discovery run (``extensions/run.py``) and
    no crawl: build a stage
    on it (``Stage.from_crawler(crawler)``) and feed it batches. ``arguments`` are the
    spider's ``-a`` arguments besides ``url``; ``mode`` the mode it runs (default: the
    arguments')."""
    from scrapy.utils.test import get_crawler

    from discovery_crawler import settings as project
    from discovery_crawler.extensions.run import DiscoveryRun

    run: dict[str, Any] = {"arguments": {"url": url, **arguments}}
    if mode is not None:
        run["mode"] = mode
    defaults = {name: getattr(project, name) for name in dir(project) if name.isupper()}
    merged = {
        **defaults,  # the project's settings, as a crawl has them
        "EXTENSIONS": {DiscoveryRun: 0},  # the run only: no progress line, no GC tuning
        "DISCOVERY_RUN": run,
        **(settings or {}),
    }
    return get_crawler(settings_dict=merged)
