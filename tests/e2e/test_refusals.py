"""The refusal middleware end to end: a probe spider run as ``scrapy runspider`` against a
loopback site that refuses in every way, with and without a real headless Chromium."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from discovery_crawler.refusals import REFUSAL_CLASSES
from tests.conftest import ROOT
from tests.refusal_site import RefusalSite
from tests.test_rendering import require_browser

PROBE = ROOT / "tests" / "probes" / "refusal_probe.py"


@pytest.fixture
def site():
    with_closed_port = RefusalSite(extra_links=[_closed_port_url()], slow_seconds=4).start()
    yield with_closed_port
    with_closed_port.stop()


def _closed_port_url() -> str:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/closed"


def probe(site: RefusalSite, tmp_path: Path, render: str) -> tuple[dict, dict, str]:
    """Run the probe spider; return (items by URL, the summary, stderr)."""
    items_path, summary_path = tmp_path / "items.jsonl", tmp_path / "summary.json"
    cmd = [sys.executable, "-m", "scrapy", "runspider", str(PROBE)]
    cmd += ["-a", f"start={site.url()}", "-a", f"out={summary_path}", "-O", str(items_path)]
    cmd += ["-s", f"RENDER_MODE={render}"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    items: dict[str, dict] = {}
    for line in items_path.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        items[item["url"]] = item
    return items, json.loads(summary_path.read_text(encoding="utf-8")), proc.stderr


EXPECTED = {
    "/report": ("download", 200),
    "/export": ("download", 200),
    "/gone-404": ("missing", 404),
    "/gone-410": ("missing", 410),
    "/private": ("wall", 403),
    "/busy": ("wall", 429),
    "/legal": ("wall", 451),
    "/challenge": ("wall", 200),
    "/members/": ("login", 200),
    "/slow": ("timeout", None),
}


PAGES = ["/", "/short/", "/about-login/", "/next-ssr/", "/same-1", "/same-2", "/same-3"]


def refusals_by_path(items: dict, site: RefusalSite) -> dict[str, dict]:
    """Refusal records keyed by the path of the URL the crawl asked for."""
    out = {}
    for item in items.values():
        if item["refusal"]:
            out[item["refusal"]["url"].removeprefix(site.origin)] = item["refusal"]
    return out


def check_common(items: dict, summary: dict, site: RefusalSite) -> dict[str, dict]:
    refused = refusals_by_path(items, site)
    for path, (cls, status) in EXPECTED.items():
        assert (refused[path]["class"], refused[path]["status"]) == (cls, status), path
        assert refused[path]["found_on"] == site.url("/"), path
        assert refused[path]["anchor"] == f"link to {path}", path
    network = [r for p, r in refused.items() if p.endswith("/closed")]
    assert [r["class"] for r in network] == ["network"]
    for path in PAGES:
        assert items[site.url(path)]["refusal"] is None, path
    assert refused["/members/"]["final_url"] == site.url("/login?next=%2Fmembers%2F")
    assert refused["/private"]["reason"] == "403 Forbidden: access denied by the server"
    # the errback finds the record on failure.request.meta
    assert items[site.url("/slow")]["error"] == "DownloadTimeoutError"
    # 404 / 410 are fetched once: never rendered
    paths = site.paths()
    assert paths.count("/gone-404") == 1 and paths.count("/gone-410") == 1
    # identical content: one warning naming the three URLs
    [warning] = summary["identical_content"]
    assert sorted(warning["urls"]) == [site.url(f"/same-{i}") for i in (1, 2, 3)]
    assert set(summary["counts"]) == set(REFUSAL_CLASSES)
    assert summary["total"] == sum(summary["counts"].values()) == len(refused)
    return refused


def test_never_reports_the_shell_as_a_refusal(site, tmp_path):
    items, summary, stderr = probe(site, tmp_path, "never")
    refused = check_common(items, summary, site)
    assert refused["/app/"]["class"] == "shell"
    assert refused["/app/"]["reason"].startswith("JavaScript shell: 1 script(s), an app root")
    assert not any(p.startswith("/only-js-") for p in site.paths())
    assert summary["render"] == {"mode": "never", "requested": 0, "rendered": 0}
    assert "served byte-identical content (an interstitial?)" in stderr
    assert "Refusals (12): 2 download, 2 missing, 4 wall, 1 login, 1 shell" in stderr


def test_auto_renders_the_shell_and_finds_its_javascript_links(site, tmp_path):
    require_browser()
    items, summary, _ = probe(site, tmp_path, "auto")
    refused = check_common(items, summary, site)
    app = items[site.url("/app/")]
    assert app["refusal"] is None and app["rendered"] is True
    assert {site.url("/only-js-1"), site.url("/only-js-2")} <= set(app["links"])
    paths = site.paths()
    assert "/only-js-1" in paths and "/only-js-2" in paths  # the crawl followed them
    assert paths.count("/app/") == 2  # plain, then through the browser
    assert "/app/" not in refused and summary["counts"]["shell"] == 0
    assert summary["render"] == {"mode": "auto", "requested": 1, "rendered": 1}
    assert items[site.url("/short/")]["rendered"] is False  # only the shell went to the browser


def test_always_renders_every_page(site, tmp_path):
    require_browser()
    items, summary, _ = probe(site, tmp_path, "always")
    refused = refusals_by_path(items, site)
    assert items[site.url("/")]["rendered"] and items[site.url("/short/")]["rendered"]
    assert site.url("/only-js-1") in items[site.url("/app/")]["links"]
    assert site.paths().count("/app/") == 1
    assert refused["/gone-404"]["class"] == "missing"
    assert refused["/members/"]["class"] == "login"
    assert refused["/report"]["class"] == "download"
    assert summary["render"]["mode"] == "always"
