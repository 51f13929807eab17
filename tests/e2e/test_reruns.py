"""Incremental re-runs end to end (SPEC §10): ``scrapy crawl discover`` twice into the same
out folder against a site on loopback whose sitemap changes between runs — new / removed /
changed exactly, stable slugs, refresh, origin refusals, a corrupt state kept aside, and
the service profile's preview.json.
"""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import sys
import time

from discovery_crawler.output.state import CHANGES_NAME, STATE_NAME, iter_entries
from discovery_crawler.site_server import SiteServer
from tests.conftest import FIXTURES, ROOT, run_discover, ssrf_allow

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


# -- conditional re-runs: state format 2's sitemap sections (docs: re-runs) ----------------
INDEX = "/index.xml"
CHILDREN = 3
PER_CHILD = 40


def write_tree(root, *, drop=(), add=(), bump=None):
    """A sitemap index of CHILDREN urlsets of PER_CHILD URLs each (lastmod, priority,
    changefreq, an hreflang alternate on some). Child 1 can lose ``drop`` URLs and gain
    ``add`` ones; ``bump`` is its new index ``<lastmod>``."""
    root.mkdir(parents=True, exist_ok=True)
    ns = (
        'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
        'xmlns:xhtml="http://www.w3.org/1999/xhtml"'
    )
    for c in range(CHILDREN):
        paths = [f"/c{c}/item-{i}/" for i in range(PER_CHILD)]
        if c == 1:
            paths = [p for p in paths if p not in drop] + list(add)
        blocks = []
        for path in paths:
            i = sum(map(ord, path))  # the listing depends on the URL, not its place
            alt = (
                f'<xhtml:link rel="alternate" hreflang="de" href="{SITE}/de{path}"/>'
                if i % 10 == 0
                else ""
            )
            blocks.append(
                f"<url><loc>{SITE}{path}</loc><lastmod>2026-01-{c + 1:02d}</lastmod>"
                f"<changefreq>weekly</changefreq><priority>0.{i % 9 + 1}</priority>{alt}</url>"
            )
        (root / f"s{c}.xml").write_text(f"<urlset {ns}>{''.join(blocks)}</urlset>")
    lastmods = [f"2026-01-{c + 1:02d}" for c in range(CHILDREN)]
    if bump:
        lastmods[1] = bump
    items = "".join(
        f"<sitemap><loc>{SITE}/s{c}.xml</loc><lastmod>{lastmods[c]}</lastmod></sitemap>"
        for c in range(CHILDREN)
    )
    (root / INDEX.lstrip("/")).write_text(
        f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{items}</sitemapindex>'
    )


DROPPED = [f"/c1/item-{i}/" for i in (3, 4)]
ADDED = ["/c1/fresh-a/", "/c1/fresh-b/"]


def change_child(root):
    write_tree(root, drop=DROPPED, add=ADDED, bump="2026-02-01")


def sitemap_run(server, tmp_path, out, *args, settings=None, feed="inventory.jsonl"):
    return run_discover(server.url(INDEX), tmp_path, *args, out=out, settings=settings, feed=feed)


def asked(server):
    """(path, status, conditional headers) of each request the server answered."""
    heads = [
        {k: v for k, v in h.items() if k.lower().startswith("if-")} for _, h in server.headers_seen
    ]
    return [
        (path, status, head) for (_, path, status), head in zip(server.requests, heads, strict=True)
    ]


def comparable(records):
    """Every field but ``change`` (new on a first run, known on a re-run), by URL."""
    return {r["url"]: {k: v for k, v in r.items() if k != "change"} for r in records}


def fresh_run(serve, tmp_path, root, name):
    """A first run of the tree as it is now, into a folder of its own."""
    copy = tmp_path / f"{name}-site"
    shutil.copytree(root, copy)
    server = serve(copy, rewrite=[SITE])
    result = sitemap_run(server, tmp_path, tmp_path / name, feed=f"{name}.jsonl")
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def test_rerun_asks_conditionally_and_carries_unchanged_sitemaps_over(serve, tmp_path):
    root = tmp_path / "site"
    write_tree(root)
    server = serve(root, rewrite=[SITE], validators=True)
    out = tmp_path / "out"
    first = sitemap_run(server, tmp_path, out)
    assert first.returncode == 0, first.stderr[-3000:]
    assert all(not head for _, _, head in asked(server))  # nothing to ask conditionally
    state_head = json.loads(
        (out / STATE_NAME).read_text().splitlines()[0][: -len(', "entries": [')] + "}"
    )
    assert state_head["format"] == "discovery-crawler/state/2"
    assert (out / state_head["sitemaps"]).is_file()

    # Nothing changed: the index answers 304, its children are carried over unasked.
    server.requests.clear()
    server.headers_seen.clear()
    same = sitemap_run(server, tmp_path, out)
    assert same.returncode == 0, same.stderr[-3000:]
    [(path, status, head)] = asked(server)
    assert (path, status) == (INDEX, 304)
    assert head.keys() == {"If-None-Match", "If-Modified-Since"}
    assert comparable(same.records) == comparable(first.records)
    changes = same.run["changes"]
    assert changes["new"]["count"] == changes["removed"]["count"] == 0
    assert changes["removals_judged"] is True
    attempts = {a["url"]: a for a in same.run["discovery"]["sitemap_attempts"]}
    assert "not modified (HTTP 304)" in attempts[server.url(INDEX)]["note"]
    child = attempts[server.url("/s0.xml")]
    assert child["status"] is None and child["ok"] and child["urls"] == PER_CHILD
    assert "index <lastmod> (2026-01-01) is unchanged" in child["note"]

    # One child changed (2 URLs out, 2 in, its index <lastmod> bumped): the index and that
    # child are downloaded, nothing else; exactly those changes; the inventory a fresh run
    # of the changed tree writes.
    change_child(root)
    server.requests.clear()
    server.headers_seen.clear()
    second = sitemap_run(server, tmp_path, out)
    assert second.returncode == 0, second.stderr[-3000:]
    got = asked(server)
    assert [(p, s) for p, s, _ in got] == [(INDEX, 200), ("/s1.xml", 200)]
    assert all(head.keys() == {"If-None-Match", "If-Modified-Since"} for _, _, head in got)
    changes = second.run["changes"]
    base = server.url("").rstrip("/")
    assert sorted(changes["new"]["items"]) == sorted(base + p for p in ADDED)
    assert sorted(changes["removed"]["items"]) == sorted(base + p for p in DROPPED)
    assert changes["changed"]["count"] == 0 and changes["removals_judged"] is True
    fresh = fresh_run(serve, tmp_path, root, "fresh")
    fresh_base = fresh.records[0]["url"].split("/c")[0]
    theirs = {
        url.replace(fresh_base, base): json.loads(json.dumps(rec).replace(fresh_base, base))
        for url, rec in comparable(fresh.records).items()
    }
    assert comparable(second.records) == theirs


def test_carried_children_enter_in_the_order_a_fresh_run_reads_them(serve, tmp_path):
    """A URL listed by s1 (changed, fetched) and by s2 (carried over unasked): the re-run
    lists it first under s1 as a fresh run does, and writes the feed in the same order
    (a carried child waits for its turn after the siblings the index named before it)."""
    root = tmp_path / "site"
    shared = f"<url><loc>{SITE}/shared/</loc></url></urlset>"

    def tree(**kw):
        write_tree(root, **kw)
        for c in (1, 2):
            path = root / f"s{c}.xml"
            path.write_text(path.read_text().replace("</urlset>", shared))

    tree()
    server = serve(root, rewrite=[SITE], validators=True)
    out = tmp_path / "out"
    assert sitemap_run(server, tmp_path, out).returncode == 0
    tree(add=["/c1/late/"], bump="2026-02-01")
    server.requests.clear()
    server.headers_seen.clear()
    server.jitter = 0.05  # answers cross; the reading order must not
    second = sitemap_run(server, tmp_path, out)
    assert second.returncode == 0, second.stderr[-3000:]
    assert [(p, s) for p, s, _ in asked(server)] == [(INDEX, 200), ("/s1.xml", 200)]
    base = server.url("").rstrip("/")
    by_url = {r["url"]: r for r in second.records}
    assert by_url[f"{base}/shared/"]["sitemap"] == f"{base}/s1.xml"
    fresh = fresh_run(serve, tmp_path, root, "fresh")
    fresh_base = fresh.records[0]["url"].split("/c")[0]
    assert [r["url"] for r in second.records] == [
        r["url"].replace(fresh_base, base) for r in fresh.records
    ]


def test_distrusting_index_lastmod_asks_every_child(serve, tmp_path):
    root = tmp_path / "site"
    write_tree(root)
    server = serve(root, rewrite=[SITE], validators=True)
    out = tmp_path / "out"
    first = sitemap_run(server, tmp_path, out)
    assert first.returncode == 0, first.stderr[-3000:]
    change_child(root)
    server.requests.clear()
    server.headers_seen.clear()
    second = sitemap_run(server, tmp_path, out, settings={"SITEMAP_TRUST_INDEX_LASTMOD": False})
    assert second.returncode == 0, second.stderr[-3000:]
    got = sorted((p, s) for p, s, _ in asked(server))
    assert got == [(INDEX, 200), ("/s0.xml", 304), ("/s1.xml", 200), ("/s2.xml", 304)]
    assert all(head for _, _, head in asked(server))
    changes = second.run["changes"]
    assert (changes["new"]["count"], changes["removed"]["count"]) == (2, 2)
    assert (
        comparable(second.records).keys()
        == comparable(
            sitemap_run(server, tmp_path, tmp_path / "again", feed="again.jsonl").records
        ).keys()
    )


def test_a_304_to_a_request_without_validators_is_a_failed_read(serve, tmp_path):
    root = tmp_path / "site"
    write_tree(root)
    server = serve(root, rewrite=[SITE], validators=True)
    out = tmp_path / "out"
    assert sitemap_run(server, tmp_path, out).returncode == 0
    server.always_304.add("/s2.xml")  # answered 304 whatever was asked
    settings = {"SITEMAP_CONDITIONAL_REQUESTS": False}
    second = sitemap_run(server, tmp_path, out, settings=settings)
    attempts = {a["url"]: a for a in second.run["discovery"]["sitemap_attempts"]}
    failed = attempts[server.url("/s2.xml")]
    assert failed["status"] == 304 and not failed["ok"]
    assert failed["error"].startswith("HTTP 304 to a request that sent no validator")
    # s2's URLs were not read: not "removed", and the summary says why
    changes = second.run["changes"]
    assert changes["removed"]["count"] == 0 and changes["removals_judged"] is False
    assert "/s2.xml not read (HTTP 304" in changes["removals_not_judged_because"]
    assert not any("/c2/" in r["url"] for r in second.records)


def test_format_1_state_is_migrated_with_one_line(serve, tmp_path):
    root = tmp_path / "site"
    write_tree(root)
    server = serve(root, rewrite=[SITE], validators=True)
    out = tmp_path / "out"
    first = sitemap_run(server, tmp_path, out)
    assert first.returncode == 0, first.stderr[-3000:]
    # What a run before format 2 wrote: format 1, no sitemap sections.
    text = (out / STATE_NAME).read_text()
    head, rest = text.split("\n", 1)
    head = head.replace("state/2", "state/1")
    head = head[: head.index(', "sitemaps"')] + ', "entries": ['
    (out / STATE_NAME).write_text(head + "\n" + rest)
    for path in out.glob("state.sitemaps.*"):
        path.unlink()
    server.requests.clear()
    server.headers_seen.clear()
    second = sitemap_run(server, tmp_path, out)
    assert second.returncode == 0, second.stderr[-3000:]
    said = [ln for ln in second.stderr.splitlines() if "migrated to 2" in ln]
    assert len(said) == 1 and "format 1" in said[0], said
    assert all(not h for _, _, h in asked(server)) and len(asked(server)) == 1 + CHILDREN
    assert second.run["changes"]["previous_run"] == 1
    assert second.run["changes"]["new"]["count"] == 0
    assert (out / STATE_NAME).read_text().startswith('{"format": "discovery-crawler/state/2"')
    server.requests.clear()
    server.headers_seen.clear()
    third = sitemap_run(server, tmp_path, out)
    assert third.returncode == 0 and [(p, s) for p, s, _ in asked(server)] == [(INDEX, 304)]


def test_killed_mid_rerun_then_the_next_rerun_is_right(serve, tmp_path):
    root = tmp_path / "site"
    write_tree(root)
    server = serve(root, rewrite=[SITE], validators=True)
    out = tmp_path / "out"
    first = sitemap_run(server, tmp_path, out)
    assert first.returncode == 0, first.stderr[-3000:]
    before = (out / STATE_NAME).read_bytes()
    change_child(root)
    server.delay = 1.0  # the children are on the wire when the run is killed
    cmd = [
        sys.executable, "-m", "scrapy", "crawl", "discover", "-a", f"url={server.url(INDEX)}",
        "-a", f"out={out}", "-s", "SITEMAP_TRUST_INDEX_LASTMOD=0", "-s", "HOST_INTERVAL=0",
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not any(p == "/s0.xml" for p, _ in server.headers_seen) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert (out / STATE_NAME).read_bytes() == before  # the previous state stands
    server.delay = 0.0
    server.requests.clear()
    server.headers_seen.clear()
    second = sitemap_run(server, tmp_path, out)
    assert second.returncode == 0, second.stderr[-3000:]
    changes = second.run["changes"]
    assert (changes["new"]["count"], changes["removed"]["count"]) == (2, 2)
    assert [(p, s) for p, s, _ in asked(server)] == [(INDEX, 200), ("/s1.xml", 200)]
    assert len(list(out.glob("state.sitemaps.*"))) == 1
    assert not list(out.glob(f".{STATE_NAME}.*"))  # the killed run's spools swept


def test_an_unchanged_rerun_starts_no_sitemap_worker(serve, tmp_path):
    """SITEMAP_WORKER_EARLY starts the worker with a first run; a re-run that asks
    conditionally does not (nothing of an unchanged site is parsed), and still starts it
    for a changed child big enough to go there — the inventory the same either way."""
    root = tmp_path / "site"
    write_tree(root)
    server = serve(root, rewrite=[SITE], validators=True)
    out = tmp_path / "out"
    worker = {"SITEMAP_WORKER_EARLY": True, "SITEMAP_WORKER_MIN_BYTES": 1}
    first = sitemap_run(server, tmp_path, out, settings=worker)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "'discovery/sitemaps/worker_started': True" in first.stderr
    same = sitemap_run(server, tmp_path, out, settings=worker)
    assert same.returncode == 0, same.stderr[-3000:]
    assert "worker_started" not in same.stderr
    assert "'discovery/sitemaps/carried_over': 4" in same.stderr
    assert comparable(same.records) == comparable(first.records)
    change_child(root)
    second = sitemap_run(server, tmp_path, out, settings=worker)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "'discovery/sitemaps/worker_started': True" in second.stderr
    assert "'discovery/sitemaps/worker_documents': 2" in second.stderr  # index + child
    assert second.run["changes"]["new"]["count"] == len(ADDED)
