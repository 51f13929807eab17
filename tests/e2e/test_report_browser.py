"""report.html's pictures in headless Chromium (Debian ``chromium``, driven by Playwright):
the demo site crawled for real (``mode=union``: sitemap and links, refusals), its report
opened from file:// — no request but the file, no console error, every drawn count equal to
the crawl log's, the treemap zooms, shows counts on hover and changes colouring — and a
5,000-node synthetic tree drawn in a few seconds. Screenshots (the whole page and each chart)
go to ``$TEST_ARTIFACTS_DIR/report/`` (``<repo>/test-artifacts/report/`` by default)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from discovery_crawler.output.report import REPORT_NAME, write_report
from discovery_crawler.output.report_charts import filter_counts
from discovery_crawler.output.report_treemap import status_group
from discovery_crawler.rendering import LAUNCH_ARGS
from discovery_crawler.site_server import SiteServer, unpack_site
from tests.conftest import IN_CI, ROOT, realdata, run_discover
from tests.output.test_report import hostile_run
from tests.output.test_report_charts import synthetic_tree

DEMO = ROOT / "demo" / "23people-handbook" / "site.tar.xz"


def artifacts() -> Path:
    base = Path(os.environ.get("TEST_ARTIFACTS_DIR") or ROOT / "test-artifacts")
    path = base / "report"
    path.mkdir(parents=True, exist_ok=True)
    return path


def chromium() -> str:
    """Debian's Chromium and Playwright's Python API, or a skip naming them (in CI, where
    ``.ci/run`` installs Chromium, a failure)."""
    path = shutil.which("chromium")
    if path is None or importlib.util.find_spec("playwright") is None:
        message = "the report's browser tests need Chromium on PATH (apt-get install chromium)"
        message += " and Playwright (pip install -e '.[render]')"
        if IN_CI:
            pytest.fail(f"{message}; in CI this is a failure, not a skip")
        pytest.skip(message)  # outside CI only: with CI=true the line above fails
    return path


@pytest.fixture(scope="module")
def browser():
    path = chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        instance = pw.chromium.launch(executable_path=path, headless=True, args=list(LAUNCH_ARGS))
        try:
            yield instance
        finally:
            instance.close()


@pytest.fixture(scope="module")
def demo_crawl(tmp_path_factory):
    """The demo site (the README's demo, 165 sitemap URLs) crawled once in union mode."""
    tmp = tmp_path_factory.mktemp("demo")
    server = SiteServer(unpack_site(DEMO, tmp / "site"), ["https://23people.io"]).start()
    try:
        result = run_discover(server.url("/"), tmp, "-a", "mode=union")
    finally:
        server.stop()
    assert result.returncode == 0, result.stderr[-3000:]
    return result


class Page:
    """A page opened from file:// with every request, console message and error recorded,
    and anything but the file itself refused."""

    def __init__(self, browser: Any, path: Path, width: int = 1366, height: int = 768):
        self.url = path.resolve().as_uri()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page = browser.new_page(viewport={"width": width, "height": height})
        page = self.page
        page.on("request", lambda req: self.requests.append(req.url))
        page.on(
            "console",
            lambda msg: (
                self.errors.append(f"{msg.type}: {msg.text}")
                if msg.type in ("error", "warning")
                else None
            ),
        )
        page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        page.route("**/*", lambda r: r.continue_() if r.request.url == self.url else r.abort())
        started = time.perf_counter()
        page.goto(self.url, wait_until="load")
        page.wait_for_selector("#treemap.tm-drawn", state="attached", timeout=20_000)
        self.load_seconds = time.perf_counter() - started

    def eval(self, script: str, arg: Any = None) -> Any:
        return self.page.evaluate(script, arg)

    def bars(self, chart: str) -> dict[str, int]:
        return self.eval(
            """c => Object.fromEntries(Array.from(document.querySelectorAll(
                `[data-chart="${c}"] [data-label]`))
                .map(e => [e.dataset.label, +e.dataset.count]))""",
            chart,
        )

    def shoot(self, name: str) -> list[Path]:
        out = artifacts()
        shots = [out / f"{name}-page.png"]
        self.page.screenshot(path=str(shots[0]), full_page=True)
        for fig in self.page.query_selector_all("[data-chart]"):
            shot = out / f"{name}-{fig.get_attribute('data-chart')}.png"
            fig.screenshot(path=str(shot))
            shots.append(shot)
        print(f"screenshots of {name}: {out}")
        return shots

    def close(self) -> None:
        self.page.close()


def nonzero(counts: dict[str, Any]) -> dict[str, int]:
    return {k: v for k, v in counts.items() if v}


def test_demo_report_draws_the_crawl_logs_counts(browser, demo_crawl):
    run = demo_crawl.run
    page = Page(browser, demo_crawl.out / REPORT_NAME)
    try:
        tree = page.eval(
            """() => { const f = document.querySelector('[data-chart="tree"]');
                const top = Array.from(f.querySelectorAll('g.cell[data-level="1"]'));
                return {count: +f.dataset.count, zoom: f.dataset.zoom,
                        top: top.reduce((s, g) => s + +g.dataset.count, 0),
                        cells: f.querySelectorAll('g.cell').length}; }"""
        )
        sitemap_lines = page.eval(
            """() => Array.from(document.querySelectorAll(
                '[data-chart="sitemaps"] li[data-attempt]'))
                .map(li => [+li.dataset.attempt, +li.dataset.count])"""
        )
        depth_notes = page.eval(
            """() => ['click-depth', 'path-depth', 'timeline'].map(c =>
                document.querySelector(`[data-chart="${c}"]`).hasAttribute('data-absent'))"""
        )
        kinds, refusals, filtered = (page.bars(c) for c in ("kinds", "refusals", "filtered"))
        click, path = page.bars("click-depth"), page.bars("path-depth")
        hosts = page.eval(
            """() => Object.fromEntries(Array.from(document.querySelectorAll(
                '[data-chart="timeline"] polyline.tl-host'))
                .map(e => [e.dataset.host, +e.dataset.count]))"""
        )
        shots = page.shoot("demo")
    finally:
        page.close()
    assert page.requests == [page.url]
    assert page.errors == [] and page.dialogs == []
    # what is drawn is the crawl log's
    assert tree["count"] == tree["top"] == run["tree"]["urls"] == 251
    assert tree["zoom"] == "/" and tree["cells"] > 100
    attempts = run["discovery"]["sitemap_attempts"]
    assert sorted(sitemap_lines) == [[i, a["urls"]] for i, a in enumerate(attempts)]
    assert kinds == nonzero(run["discovery"]["kinds"])
    assert refusals == nonzero(run["refusals"]["counts"]) == {"missing": 86}
    assert filtered == nonzero(filter_counts(run["discovery"]))
    depths = run["discovery"].get("depths")
    timeline = run.get("timeline")
    assert depth_notes == [depths is None, depths is None, timeline is None]
    if depths is not None:  # the crawl logs that record them (issue 18's data half)
        expected = {k: v for k, v in depths["click"].items() if v}
        assert {k: v for k, v in click.items() if k != "none" and v} == expected
        assert click.get("none", 0) == depths["click_none"]
        assert {k: v for k, v in path.items() if v} == nonzero(depths["path"])
    if timeline is not None:
        assert hosts == {h: sum(v["requests"]) for h, v in timeline["hosts"].items()}
    assert all(shot.stat().st_size > 2_000 for shot in shots)


def test_treemap_zooms_shows_counts_on_hover_and_recolours(browser, demo_crawl):
    run = demo_crawl.run
    page = Page(browser, demo_crawl.out / REPORT_NAME)
    p = page.page
    try:
        biggest = max(run["tree"]["root"]["children"], key=lambda c: c["count"])
        cell = p.locator(f'svg.tm g.cell[data-level="1"][data-path="{biggest["path"]}"] > rect')
        box = cell.bounding_box()
        assert box is not None
        p.mouse.move(box["x"] + 6, box["y"] + 6)  # its header: the cell itself, not a child
        tip = p.locator("#treemap .tm-tip")
        tip.wait_for(state="visible")
        tip_text = tip.inner_text()
        p.mouse.click(box["x"] + 6, box["y"] + 6)
        zoomed = page.eval(
            """() => { const f = document.getElementById('treemap');
                const top = Array.from(f.querySelectorAll('g.cell[data-level="1"]'));
                return [f.dataset.zoom, +f.dataset.zoomCount,
                        top.reduce((s, g) => s + +g.dataset.count, 0),
                        Array.from(f.querySelectorAll('.tm-crumbs button'))
                            .map(b => b.textContent)]; }"""
        )
        page.page.locator("#treemap").screenshot(path=str(artifacts() / "demo-tree-zoomed.png"))
        p.locator("#treemap .tm-crumbs button").first.click()
        back = page.eval("() => document.getElementById('treemap').dataset.zoom")
        fills = """() => Array.from(document.querySelectorAll('svg.tm rect'))
            .map(r => r.getAttribute('fill'))"""
        legend = """() => Array.from(document.querySelectorAll('.tm-legend [data-category]'))
            .map(s => s.dataset.category)"""
        by_source, legend_source = page.eval(fills), page.eval(legend)
        p.locator('#treemap button[data-mode="status"]').click()
        by_status, legend_status = page.eval(fills), page.eval(legend)
        pressed = p.locator('#treemap button[data-mode="status"]').get_attribute("aria-pressed")
        page.page.locator("#treemap").screenshot(path=str(artifacts() / "demo-tree-status.png"))
        p.locator('#treemap button[data-mode="kind"]').click()
        legend_kind = page.eval(legend)
    finally:
        page.close()
    assert page.errors == []
    assert f"URLs: {biggest['count']:,}" in tip_text and biggest["path"] in tip_text
    assert "sources:" in tip_text and "statuses:" in tip_text
    assert zoomed[0] == biggest["path"] and zoomed[1] == zoomed[2] == biggest["count"]
    assert zoomed[3][0] == f"/ ({run['tree']['urls']:,})" and len(zoomed[3]) == 2
    assert back == "/"
    assert set(legend_source) == {"sitemap", "links", "both"}  # union mode: all three
    assert pressed == "true" and by_status != by_source
    assert {"2xx", "4xx"} <= set(legend_status)
    assert legend_kind == ["page"]


def test_5000_node_tree_draws_in_a_few_seconds(browser, tmp_path):
    tree = synthetic_tree(5_000)
    run = {
        "discovery": {"site": "https://big.example", "kinds": {"page": tree["urls"]}},
        "tree": tree,
    }
    report = write_report(tmp_path / REPORT_NAME, run)
    page = Page(browser, report)
    try:
        cells = page.eval("() => document.querySelectorAll('svg.tm g.cell').length")
        count = page.eval("() => +document.getElementById('treemap').dataset.count")
        started = time.perf_counter()
        page.page.locator('#treemap button[data-mode="status"]').click()
        page.page.locator('svg.tm g.cell[data-level="1"] > rect').first.click(
            position={"x": 5, "y": 5}
        )
        redraw = time.perf_counter() - started
        zoom = page.eval("() => document.getElementById('treemap').dataset.zoom")
        page.shoot("synthetic-5000")
    finally:
        page.close()
    assert page.errors == [] and page.requests == [page.url]
    assert count == tree["urls"] and cells > 200
    assert zoom != "/"
    assert page.load_seconds < 5, page.load_seconds
    assert redraw < 2, redraw
    print(
        f"5,000 nodes: loaded and drawn in {page.load_seconds:.2f} s, {cells} cells; "
        f"recolour + zoom {redraw:.2f} s"
    )


def test_hostile_report_runs_no_script_of_the_run(browser, tmp_path):
    run = hostile_run()
    child = run["tree"]["root"]["children"][0]
    child["name"] = "</script><script>alert(1)</script>"
    child["path"] = "/</script><script>alert(1)</script>"
    # percent-encoded names are shown decoded; one that does not decode is shown as it is
    for name in ("%D8%AA%D8%B3", "%E0%A4%A", "%"):
        child = {**child, "name": name, "path": f"/{name}", "children": []}
        run["tree"]["root"]["children"].append(child)
        run["tree"]["root"]["count"] += 1
    report = write_report(tmp_path / REPORT_NAME, run)
    page = Page(browser, report)
    try:
        page.page.hover('svg.tm g.cell[data-level="1"] > rect')
        tip = page.page.locator("#treemap .tm-tip").inner_text()
        labels = page.eval(
            "() => Array.from(document.querySelectorAll('svg.tm text')).map(t => t.textContent)"
        )
    finally:
        page.close()
    assert page.dialogs == [] and page.requests == [page.url]
    assert page.errors == []
    assert "</script><script>alert(1)</script>" in tip  # shown as text
    assert {"تس 1", "%E0%A4%A 1", "% 1"} <= set(labels)


def _inventory_classes(records: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Each colour mode's classes counted over the feed's records (union mode)."""
    source: Counter[str] = Counter()
    status: Counter[str] = Counter()
    kind: Counter[str] = Counter()
    for rec in records:
        flags = rec.get("flags") or []
        source[
            "sitemap" if "sitemap_only" in flags else "links" if "links_only" in flags else "both"
        ] += 1
        status[status_group("listed" if rec.get("status") is None else rec["status"])] += 1
        kind[str(rec.get("kind"))] += 1
    return {"source": dict(source), "status": dict(status), "kind": dict(kind)}


def _drawn_classes(page: Page) -> dict[str, Any]:
    """Per colour mode: the legend's count of each class (the URLs each colour stands for)
    and the class of every drawn cell that is one URL."""
    out = {}
    for mode in ("source", "status", "kind"):
        page.page.locator(f'#treemap button[data-mode="{mode}"]').click()
        out[mode] = page.eval(
            """() => [Object.fromEntries(Array.from(
                    document.querySelectorAll('.tm-legend [data-category]'))
                    .map(s => [s.dataset.category, +s.dataset.count]).filter(e => e[1])),
                Array.from(document.querySelectorAll('svg.tm g.cell:not(.self)'))
                    .filter(g => +g.dataset.count === 1)
                    .map(g => [g.dataset.path, g.dataset.category])]"""
        )
    return out


@pytest.mark.parametrize("site", ["demo", "arhackintosh-wordpress"])
def test_treemap_colour_classes_equal_the_inventory(browser, demo_crawl, tmp_path, site):
    """Issue 37.1: in union mode the tree counted each URL under the source that found it
    first (98 leaves of a WordPress site painted "sitemap only" with no sitemap_only record
    in its inventory). Each colour class's count (sitemap only / links only / both, status,
    kind) equals the inventory's, and every cell that is one URL has its record's class."""
    if site == "demo":
        result = demo_crawl
    else:
        server = SiteServer(
            unpack_site(realdata("sites", site, "site.tar.xz"), tmp_path / "site"), []
        ).start()
        try:
            result = run_discover(
                server.url("/"), tmp_path, "-a", "mode=union", settings={"HOST_INTERVAL": 0}
            )
        finally:
            server.stop()
        assert result.returncode in (0, 5), result.stderr[-3000:]
    expected = _inventory_classes(result.records)
    by_path: dict[str, dict[str, Any]] = {}
    for rec in result.records:
        path = "/" + rec["url"].split("/", 3)[3].partition("?")[0].strip("/")
        by_path.setdefault(path, rec)
    page = Page(browser, result.out / REPORT_NAME, width=1400, height=900)
    try:
        drawn = _drawn_classes(page)
    finally:
        page.close()
    assert page.errors == []
    for mode in ("source", "status", "kind"):
        counts, cells = drawn[mode]
        assert counts == expected[mode], mode
        if mode != "source":
            continue
        for path, category in cells:
            rec = by_path.get(path.rstrip("/") or "/")
            if rec is not None:
                assert category == _inventory_classes([rec])["source"].popitem()[0], path
