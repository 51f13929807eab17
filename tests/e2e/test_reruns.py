"""Incremental re-runs end to end (SPEC §10): ``scrapy crawl discover`` twice into the same
out folder against a site on loopback whose sitemap changes between runs — new / removed /
changed exactly, stable slugs, refresh, origin refusals, a corrupt state kept aside, and
the service profile's preview.json.
"""

from __future__ import annotations

import json
import shutil
import socket

from discovery_crawler.output.state import CHANGES_NAME, STATE_NAME, iter_entries
from discovery_crawler.site_server import SiteServer
from tests.conftest import FIXTURES, run_discover, ssrf_allow

SITE = "https://example.com"


def site_copy(tmp_path):
    root = tmp_path / "site"
    shutil.copytree(FIXTURES / "state", root)
    return root


def edit_sitemap(root, *, drop=(), add=(), lastmod=None):
    """Remove the ``<url>`` lines naming ``drop``, add ``add`` paths, change lastmods."""
    path = root / "sitemap.xml"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines = [ln for ln in lines if not any(f"{SITE}{d}</loc>" in ln for d in drop)]
    for old, new in (lastmod or {}).items():
        lines = [ln.replace(old, new) if "<url>" in ln else ln for ln in lines]
    end = lines.index("</urlset>")
    lines[end:end] = [f"  <url><loc>{SITE}{p}</loc></url>" for p in add]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def crawl(server, tmp_path, out, *args, settings=None):
    return run_discover(server.url("/"), tmp_path, *args, out=out, settings=settings)


def test_rerun_reports_new_removed_changed(serve, tmp_path):
    root = site_copy(tmp_path)
    server = serve(root, rewrite=[SITE])
    base = server.url("/").rstrip("/")
    out = tmp_path / "out"
    first = crawl(server, tmp_path, out)
    assert first.returncode == 0, first.stderr[-3000:]
    assert first.run["changes"]["previous_run"] is None
    assert "State: first run on this folder; 8 URLs recorded" in first.stderr
    assert not (out / CHANGES_NAME).exists()
    slugs_before = {r["url"]: r["slug"] for r in first.records}
    assert slugs_before[f"{base}/search?q=hats"] == "search-2"

    edit_sitemap(
        root,
        drop=["/pricing/", "/search?q=shoes"],
        add=["/careers/", "/blog/third-post/"],
        lastmod={"first-post/</loc><lastmod>2026-11-02": "first-post/</loc><lastmod>2026-11-20"},
    )
    second = crawl(server, tmp_path, out)
    assert second.returncode == 0, second.stderr[-3000:]
    changes = second.run["changes"]
    assert changes["previous_run"] == 1 and changes["run"] == 2
    assert sorted(changes["new"]["items"]) == [f"{base}/blog/third-post/", f"{base}/careers/"]
    assert sorted(changes["removed"]["items"]) == [f"{base}/pricing/", f"{base}/search?q=shoes"]
    assert changes["changed"]["items"] == [
        {"url": f"{base}/blog/first-post/", "lastmod": "2026-11-20"}
    ]
    assert changes["known"] == 5 and changes["removals_judged"] is True
    day = first.run["provenance"]["finished_at"][:10]
    assert f"Since the previous run ({day}): 2 new, 2 removed, 1 changed (removals" in second.stderr
    # slugs: known URLs keep theirs, even a suffixed one whose base URL is gone
    for rec in second.records:
        if rec["url"] in slugs_before:
            assert rec["slug"] == slugs_before[rec["url"]], rec["url"]
    by_url = {r["url"]: r for r in second.records}
    assert by_url[f"{base}/search?q=hats"]["slug"] == "search-2"
    # the report a cron job reads, and the state itself
    assert json.loads((out / CHANGES_NAME).read_text()) == changes
    state = {e[0]: e for e in list(iter_entries(out / STATE_NAME))[1:]}
    assert state[f"{base}/pricing/"][5] == "removed"
    assert state[f"{base}/careers/"][2:4] == [2, 2]
    assert state[f"{base}/about/"][2:] == [1, 2, "2026-11-01", "known"]
    assert second.run["status"] == "completed"

    # A run that cannot have seen everything (a limit binds) does not judge removals.
    third = crawl(server, tmp_path, out, settings={"SITEMAP_MAX_URLS": 3})
    assert third.returncode == 5, third.stderr[-3000:]  # bounded: complete up to the limit
    assert third.run["changes"]["removals_judged"] is False
    assert third.run["changes"]["removed"]["count"] == 0
    assert "removals not judged (limit bound: SITEMAP_MAX_URLS)" in third.stderr


def test_refresh_and_refresh_all(serve, tmp_path):
    root = site_copy(tmp_path)
    server = serve(root, rewrite=[SITE])
    out = tmp_path / "out"
    assert crawl(server, tmp_path, out).returncode == 0
    one = crawl(server, tmp_path, out, "-a", "refresh=about,no-such-slug")
    assert one.returncode == 0, one.stderr[-3000:]
    assert one.run["changes"]["refreshed"] == 1
    assert one.run["changes"]["refresh_unknown"] == ["no-such-slug"]
    assert "refresh: no URL with slug 'no-such-slug' in state.json; ignored" in one.stderr
    assert "Refreshed: 1 URL(s)" in one.stderr
    every = crawl(server, tmp_path, out, "-a", "refresh_all=1")
    assert every.returncode == 0, every.stderr[-3000:]
    assert every.run["changes"]["refresh_all"] is True
    assert every.run["changes"]["refreshed"] == 8
    assert "Refreshed: all URLs (refresh_all=1)" in every.stderr


def test_other_origin_is_refused_before_crawling(serve, tmp_path):
    """The same out folder, another site: one line, exit status 2, nothing fetched, the
    state untouched."""
    out = tmp_path / "out"
    first_server = serve(site_copy(tmp_path), rewrite=[SITE])
    assert crawl(first_server, tmp_path, out).returncode == 0
    before = (out / STATE_NAME).read_bytes()
    other_root = tmp_path / "other"
    shutil.copytree(FIXTURES / "state", other_root)
    other = serve(other_root, rewrite=[SITE])  # another port: another origin
    refused = crawl(other, tmp_path, out)
    assert refused.returncode == 2
    lines = [ln for ln in refused.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, refused.stderr
    assert lines[0].startswith("error: argument url: http://127.0.0.1:")
    assert "is not the site recorded in" in lines[0] and "-a out=" in lines[0]
    assert other.requests == []
    assert (out / STATE_NAME).read_bytes() == before


def test_sitemap_input_naming_another_site_is_refused(serve, tmp_path):
    """A sitemap given as input names its site by its first URL: checked then, the run
    fails (exit 1) with one line and the state is left as it was."""
    out = tmp_path / "out"
    first = run_discover(serve(FIXTURES / "url_stages").url("/sitemap.xml"), tmp_path, out=out)
    assert first.returncode == 0, first.stderr[-3000:]
    before = (out / STATE_NAME).read_bytes()
    other = tmp_path / "other"
    other.mkdir()
    (other / "sitemap.xml").write_text(
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<url><loc>https://other.example/a/</loc></url></urlset>"
    )
    second = run_discover(serve(other).url("/sitemap.xml"), tmp_path, out=out)
    assert second.returncode == 1
    refused = [ln for ln in second.stderr.splitlines() if "ERROR: refused:" in ln]
    assert len(refused) == 1 and "https://other.example is not the site" in refused[0]
    assert "FAILED: refused: https://other.example" in second.stderr  # the summary
    assert "Traceback" not in second.stderr
    assert (out / STATE_NAME).read_bytes() == before


def test_corrupt_state_is_kept_aside_and_the_run_carries_on(serve, tmp_path):
    root = site_copy(tmp_path)
    server = serve(root, rewrite=[SITE])
    out = tmp_path / "out"
    out.mkdir()
    (out / STATE_NAME).write_text('{"format": "discovery-crawler/state/1", "origin": ')
    result = crawl(server, tmp_path, out)
    assert result.returncode == 0, result.stderr[-3000:]
    errors = [ln for ln in result.stderr.splitlines() if "kept it aside" in ln]
    assert len(errors) == 1 and "Traceback" not in result.stderr
    [aside] = [p for p in out.iterdir() if p.name.startswith(f"{STATE_NAME}.corrupt-")]
    assert aside.read_text().startswith('{"format"')
    assert result.run["changes"]["previous_run"] is None
    assert any("state.json" in w and "afresh" in w for w in result.run["warnings"])
    assert len(list(iter_entries(out / STATE_NAME))) == 1 + 8


def test_service_profile_writes_preview(serve, tmp_path):
    root = site_copy(tmp_path)
    server = serve(root, rewrite=[SITE])
    out = tmp_path / "out"
    # The SSRF guard of profile service refuses loopback: the tests' allow-list opens it.
    # One invocation (MAX_CHUNK_PAGES=0): chunks are tests/e2e/test_service.py's.
    settings = {
        **ssrf_allow(server.url("/")),
        "PREVIEW_MAX_PAGES": 3,
        "PREVIEW_CHUNK": 2,
        "MAX_CHUNK_PAGES": 0,
    }
    result = crawl(server, tmp_path, out, "-a", "profile=service", settings=settings)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.run["ssrf"]["enabled"] and result.run["ssrf"]["refused"]["count"] == 0
    preview = json.loads((out / "preview.json").read_text())
    assert preview["status"] == 1
    assert preview["truncated"] is True and preview["discovered"] == 8
    base = server.url("/").rstrip("/")
    assert preview["pages"][0] == {"url": f"{base}/", "title": None, "depth": None}
    assert len(preview["pages"]) == 3
    # The listed pages by exact parent path (the root is in none): 3 pages, the root's first.
    listed = {p["url"] for p in preview["pages"]}
    members = [u for g in preview["groups"] for u in g["members"]]
    assert sorted(members) == sorted(listed - {f"{base}/"})
    assert isinstance(preview["warnings"], list)
    assert preview["updated_at"].startswith(result.run["provenance"]["finished_at"][:10])
    assert not (tmp_path / "no-preview").exists()
    plain = crawl(server, tmp_path, tmp_path / "no-preview")
    assert plain.returncode == 0 and not (tmp_path / "no-preview" / "preview.json").exists()


class FailingServer(SiteServer):
    """A ``SiteServer`` whose ``broken`` paths close the connection without an answer."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.broken: set[str] = set()

    def _handler_class(self):
        base, server = super()._handler_class(), self

        class Handler(base):
            def do_GET(self):
                if self.path in server.broken:
                    server.log(self.path, 0)
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                super().do_GET()

        return Handler


def test_a_page_that_failed_to_load_makes_no_page_removed(tmp_path):
    """Run 2 cannot fetch /a/ (the connection drops): the pages only /a/ links to are not
    found, and they are not called removed — the summary says why removals were not judged."""
    root = tmp_path / "site"
    pages = {"": ["a", "b"], "a": ["a1", "a2"], "b": ["b1"], "a1": [], "a2": [], "b1": []}
    for name, links in pages.items():
        folder = root / name if name else root
        folder.mkdir(parents=True, exist_ok=True)
        anchors = "".join(f'<a href="/{link}/">{link}</a>' for link in links)
        (folder / "index.html").write_text(f"<html><body>{anchors}</body></html>")
    out = tmp_path / "out"
    with FailingServer(root) as server:
        args = ("-a", "mode=links")
        first = run_discover(server.url("/"), tmp_path, *args, out=out)
        assert first.returncode == 0, first.stderr[-2000:]
        assert len(first.records) == 6
        server.broken.add("/a/")
        second = run_discover(
            server.url("/"), tmp_path, *args, out=out, settings={"RETRY_TIMES": 0}
        )
    # /a/ not read after its retries: the run is incomplete (exit 7), not completed
    assert second.returncode == 7, second.stderr[-2000:]
    assert second.run["not_read"]["by_class"] == {"network": 1}
    changes = second.run["changes"]
    assert changes["removed"]["count"] == 0
    assert "page fetches failed (1 network)" in changes["removals_not_judged_because"]
    assert "removals not judged (1 page fetches failed (1 network))" in second.stderr
    kept = {entry[0]: entry for entry in list(iter_entries(out / STATE_NAME))[1:]}
    assert server.url("/a1/") in kept
    assert kept[server.url("/a1/")][-1] != "removed"
