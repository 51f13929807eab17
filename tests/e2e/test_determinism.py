"""Two runs of an unchanged site agree (issue 37.4): real sites from
../shared/realdata/sites, served on 127.0.0.1 with a random delay before each answer (so
answers arrive in another order every run), crawled twice in union mode with concurrency
on and no interval. The inventories agree record for record, every field but the
timestamps (citations ``via``/``found_on``/``anchor``/``depth``, first listings, slugs);
with ``max_pages`` the budget reaches the same pages; a re-run into the same folder
reports no change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from discovery_crawler.site_server import unpack_site
from tests.conftest import realdata, run_discover
from tests.selection.test_realdata import SITES

# Fields that say when, not what.
_TIMES = {"fetched_at", "first_seen", "last_seen", "changed_at", "seen_at"}
# Enough concurrency for answers to cross; each answer delayed 0-30 ms at random.
_CONCURRENT = {"CONCURRENT_REQUESTS_PER_DOMAIN": 8, "HOST_INTERVAL": 0}
_JITTER = 0.03


def _records(result: Any) -> dict[str, dict[str, Any]]:
    assert result.returncode in (0, 5), result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    records = {r["url"]: {k: v for k, v in r.items() if k not in _TIMES} for r in result.records}
    assert len(records) == len(result.records)  # one record a URL
    return records


def _differences(a: dict[str, dict], b: dict[str, dict]) -> list[tuple]:
    out: list[tuple] = [("only in one run", u) for u in sorted(set(a) ^ set(b))]
    for url in sorted(set(a) & set(b)):
        for name in sorted(set(a[url]) | set(b[url])):
            if a[url].get(name) != b[url].get(name):
                out.append((url, name, a[url].get(name), b[url].get(name)))
    return out


def _site(serve: Any, tmp_path: Any, name: str) -> Any:
    root = unpack_site(realdata("sites", name, "site.tar.xz"), tmp_path / "site")
    return serve(root, rewrite=SITES[name][0], jitter=_JITTER)


@pytest.mark.parametrize(
    "name", ["23people-handbook-mkdocs", "360muslimexperts", "ayatoashihara-myblog_multi"]
)
def test_two_union_runs_write_the_same_inventory_and_a_rerun_changes_nothing(serve, tmp_path, name):
    server = _site(serve, tmp_path, name)
    runs = [
        run_discover(
            server.url("/"), tmp_path / f"run{i}", "-a", "mode=union", settings=_CONCURRENT
        )
        for i in range(2)
    ]
    first, second = (_records(r) for r in runs)
    assert len(first) > 100
    assert _differences(first, second) == []
    # A listed URL is cited by its sitemap at depth 1; every other by a page one hop nearer.
    listed = [r for r in first.values() if r.get("via") == "sitemap"]
    assert listed and all(r["depth"] == 1 for r in listed)
    # Re-run into the first run's folder: nothing new, removed or changed.
    again = run_discover(
        server.url("/"), tmp_path / "run0", "-a", "mode=union", settings=_CONCURRENT
    )
    _records(again)
    changes = again.run["changes"]
    counts = [changes[k]["count"] for k in ("new", "removed", "changed")]
    assert counts == [0, 0, 0], changes
    # The re-run's records are the first run's, but for ``change`` (new, then unchanged).
    assert [d for d in _differences(first, _records(again)) if d[1] != "change"] == []


@pytest.mark.parametrize("name", ["360muslimexperts", "arhackintosh-wordpress"])
def test_a_page_budget_reaches_the_same_pages_every_run(serve, tmp_path, name):
    """``max_pages=30`` in union mode: the same 30 pages fetched, the same URLs recorded
    over the budget, every record the same."""
    server = _site(serve, tmp_path, name)
    runs = [
        run_discover(
            server.url("/"),
            tmp_path / f"run{i}",
            "-a",
            "mode=union",
            "-a",
            "max_pages=30",
            settings=_CONCURRENT,
        )
        for i in range(2)
    ]
    first, second = (_records(r) for r in runs)
    fetched = [u for u, r in first.items() if r.get("status") is not None]
    assert len(fetched) <= 31  # the budget (a redirect's target is the same page)
    assert any("over_max_pages" in (r.get("flags") or ()) for r in first.values())
    assert _differences(first, second) == []


def test_a_links_crawl_with_a_page_budget_agrees_with_itself(serve, tmp_path):
    """The link crawl alone (``links`` spider) under ``max_pages``: a BFS admitted level
    by level in (found_on, document order), so the same pages every run."""
    server = _site(serve, tmp_path, "arhackintosh-wordpress")
    runs = [
        run_discover(
            server.url("/"),
            tmp_path / f"run{i}",
            "-a",
            "max_pages=60",
            spider="links",
            settings=_CONCURRENT,
        )
        for i in range(2)
    ]
    first, second = (_records(r) for r in runs)
    assert sum(1 for r in first.values() if r.get("status") is not None) <= 61
    assert _differences(first, second) == []


def test_a_slashless_link_to_a_listed_page_is_its_alias_whichever_answered_first(
    serve, tmp_path: Path
):
    """The homepage links ``organization`` (no slash), the sitemap lists
    ``/organization/``: the homepage answers first, so the link is held when the listing
    takes its place, and its spelling still joins the record's aliases, as when the
    sitemap answers first (23people-handbook: a run had the alias, the next not)."""
    root = tmp_path / "site"
    (root / "organization").mkdir(parents=True)
    (root / "index.html").write_text('<html><body><a href="organization">Org</a></body></html>')
    (root / "organization" / "index.html").write_text("<html><title>Org</title></html>")
    server = serve(root)
    # An index of an index of the urlset: the listing comes three answers after robots.txt.
    (root / "robots.txt").write_text(f"Sitemap: {server.url('/sitemap.xml')}\n")
    ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
    for name, child in (("sitemap.xml", "/index-2.xml"), ("index-2.xml", "/pages.xml")):
        (root / name).write_text(
            f"<sitemapindex {ns}><sitemap><loc>{server.url(child)}</loc></sitemap></sitemapindex>"
        )
    (root / "pages.xml").write_text(
        f"<urlset {ns}><url><loc>{server.url('/organization/')}</loc></url></urlset>"
    )
    result = run_discover(server.url("/"), tmp_path / "run", "-a", "mode=union")
    records = _records(result)
    listed = records[server.url("/organization/")]
    assert (listed["via"], listed["found_on"]) == ("sitemap", server.url("/pages.xml"))
    assert listed.get("aliases") == [server.url("/organization")]
    assert server.url("/organization") not in records
