"""Re-runs tried as a hostile user would (issue 35, points 1, 2, 4, 5 and its faults):
``scrapy crawl discover`` run again into the same folder against ``tests/rerun_site.py``
on loopback — servers that answer conditional requests every way real ones do (weak
ETags, Last-Modified only, validators ignored, an ETag new on every answer, a blind 304),
listed children that fail (500, a timeout), a robots.txt that newly disallows, a state
written by format 1 or by a newer version, a sections file damaged, SIGKILL at the write.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

from discovery_crawler.output.kill_points import KILL_ENV
from discovery_crawler.output.state import CHANGES_NAME, STATE_NAME, iter_entries
from discovery_crawler.site_server import unpack_site
from tests.conftest import ROOT, realdata, run_discover
from tests.e2e.test_write_faults import small_disk as small_disk_fixture  # noqa: F401
from tests.rerun_site import INDEX, RerunSite

_TIMES = {"fetched_at", "first_seen", "last_seen", "changed_at", "seen_at"}


def crawl(site, tmp_path, *args, out=None, name="inventory.jsonl", **kwargs):
    out = out or tmp_path / "out"
    return run_discover(site.url("/"), tmp_path, *args, out=out, feed=name, **kwargs)


def ok(result, codes=(0,)):
    assert result.returncode in codes, result.stderr[-3000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    return result


def counts(result) -> tuple[int, int, int]:
    changes = result.run["changes"]
    return tuple(changes[k]["count"] for k in ("new", "removed", "changed"))


def comparable(result) -> dict[str, dict]:
    return {
        r["url"]: {k: v for k, v in r.items() if k not in _TIMES | {"change"}}
        for r in result.records
    }


def conditional(site) -> dict[str, tuple[int, set[str]]]:
    """Each sitemap asked: (status, the conditional headers it carried)."""
    return {p: (s, set(h)) for p, s, h in site.sitemap_requests()}


@pytest.fixture
def site():
    with RerunSite() as running:
        yield running


# -- servers that answer conditional requests their own way ---------------------------------
@pytest.mark.parametrize(
    ("validators", "sent", "status"),
    [
        ("strong", {"If-None-Match", "If-Modified-Since"}, 304),
        ("weak", {"If-None-Match", "If-Modified-Since"}, 304),
        ("last_modified", {"If-Modified-Since"}, 304),
        ("ignore", {"If-None-Match", "If-Modified-Since"}, 200),
        ("changing", {"If-None-Match"}, 200),
        ("none", set(), 200),
    ],
)
def test_nothing_changed_whatever_the_server_does_with_validators(
    tmp_path, validators, sent, status
):
    """Index lastmods off (every child is asked): a server that honours validators answers
    304 and the child is carried over; one that ignores them or changes its ETag every time
    answers 200 and the child is read in full. Either way 0 new / 0 removed / 0 changed and
    the same inventory."""
    with RerunSite(validators=validators) as site:
        for name in site.index_lastmod:
            site.index_lastmod[name] = None
        first = ok(crawl(site, tmp_path, "-a", "mode=sitemap"))
        site.clear()
        again = ok(crawl(site, tmp_path, "-a", "mode=sitemap", name="again.jsonl"))
        asked = conditional(site)
        assert set(asked) == {INDEX, "/s/a.xml", "/s/b.xml", "/s/c.xml"}
        assert {p: h for p, (_, h) in asked.items()} == dict.fromkeys(asked, sent)
        assert {s for s, _ in asked.values()} == {status}
        assert counts(again) == (0, 0, 0)
        assert again.run["changes"]["removals_judged"] is True
        assert comparable(again) == comparable(first)
        assert {r["change"] for r in again.records} == {"known"}
        # and a third run still asks with the validators of the last read
        site.clear()
        third = ok(crawl(site, tmp_path, "-a", "mode=sitemap", name="third.jsonl"))
        assert {p: h for p, (_, h) in conditional(site).items()} == dict.fromkeys(asked, sent)
        assert counts(third) == (0, 0, 0) and comparable(third) == comparable(first)


@pytest.mark.parametrize("mode", ["sitemap", "links", "union", "auto"])
def test_nothing_changed_in_every_mode(site, tmp_path, mode):
    first = ok(crawl(site, tmp_path, "-a", f"mode={mode}"))
    site.clear()
    again = ok(crawl(site, tmp_path, "-a", f"mode={mode}", name="again.jsonl"))
    assert counts(again) == (0, 0, 0)
    assert again.run["changes"]["unconfirmed"]["count"] == 0
    assert comparable(again) == comparable(first)
    if mode != "links":  # the index answered 304, its children were not asked
        assert conditional(site) == {INDEX: (304, {"If-None-Match", "If-Modified-Since"})}


def test_a_carried_url_is_the_record_a_fresh_read_writes(site, tmp_path):
    """One child changed (a URL added, one removed, one lastmod changed): the re-run asks
    the index and that child only, reports exactly those, and each carried-over record
    equals a fresh run's in every field (sources, sitemap, lastmod, priority, changefreq,
    alternates, flags, robots verdict, slug)."""
    ok(crawl(site, tmp_path, "-a", "mode=sitemap"))
    b = site.children["b"]
    del b["/b/3/"]
    b["/b/new/"] = "2026-02-01"
    b["/b/5/"] = "2026-02-02"
    site.index_lastmod["b"] = "2026-02-02"
    site.robots = "User-agent: *\nDisallow: /a/2/\n"  # a carried URL's verdict changes
    site.clear()
    again = ok(crawl(site, tmp_path, "-a", "mode=sitemap", name="again.jsonl"))
    assert sorted((p, s) for p, s, _ in site.sitemap_requests()) == [
        ("/s/b.xml", 200),
        (INDEX, 200),
    ]
    changes = again.run["changes"]
    assert changes["new"]["items"] == [site.url("/b/new/")]  # (its alternate: none)
    assert changes["removed"]["items"] == [site.url("/b/3/")]
    assert changes["changed"]["items"] == [{"url": site.url("/b/5/"), "lastmod": "2026-02-02"}]
    fresh = ok(crawl(site, tmp_path, "-a", "mode=sitemap", out=tmp_path / "fresh", name="f.jsonl"))
    assert comparable(again) == comparable(fresh)
    carried = {r["url"]: r for r in again.records}[site.url("/c/0/")]
    assert carried["alternates"] and carried["priority"] and carried["changefreq"] == "weekly"
    assert "robots_disallowed" in {r["url"]: r for r in again.records}[site.url("/a/2/")]["flags"]


# -- listed children that fail: a failed read, never "removed" ---------------------------------
@pytest.mark.parametrize("fault", ["500", "timeout", "404"])
def test_a_listed_child_that_fails_removes_nothing_and_comes_back_known(site, tmp_path, fault):
    args = ("-a", "mode=sitemap")
    settings = {"DOWNLOAD_TIMEOUT": 2, "RETRY_TIMES": 0}
    ok(crawl(site, tmp_path, *args, settings=settings))
    site.index_lastmod["b"] = "2026-03-01"  # asked again (not skipped on its lastmod)
    if fault == "timeout":
        site.stall["/s/b.xml"] = 4
    else:
        site.status["/s/b.xml"] = int(fault)
    failed = crawl(site, tmp_path, *args, settings=settings, name="failed.jsonl")
    assert failed.returncode in (0, 7), failed.stderr[-3000:]
    changes = failed.run["changes"]
    assert changes["removed"]["count"] == 0 and changes["removals_judged"] is False
    assert sorted(changes["unconfirmed"]["items"]) == sorted(site.urls("b"))
    assert "/s/b.xml not read" in changes["removals_not_judged_because"]
    assert "removals not judged (sitemap" in failed.stderr
    # The child answers again: its URLs are known (not "new"), nothing removed.
    site.status.clear()
    site.stall.clear()
    back = ok(crawl(site, tmp_path, *args, settings=settings, name="back.jsonl"))
    assert counts(back) == (0, 0, 0)
    assert back.run["changes"]["removals_judged"] is True
    assert {r["change"] for r in back.records} == {"known"}


def test_a_304_for_a_sitemap_the_state_does_not_know_is_a_failed_read(site, tmp_path):
    ok(crawl(site, tmp_path, "-a", "mode=sitemap"))
    site.children["d"] = {"/d/0/": "2026-01-01"}
    site.index_lastmod["d"] = "2026-01-01"
    site.status["/s/d.xml"] = 304  # a server answering 304 to an unconditional request
    again = ok(crawl(site, tmp_path, "-a", "mode=sitemap", name="again.jsonl"), (0, 7))
    attempt = again.attempt("/s/d.xml")
    assert attempt["status"] == 304 and not attempt["ok"]
    assert attempt["error"].startswith("HTTP 304 to a request that sent no validator")
    assert again.run["changes"]["removals_judged"] is False
    assert "/s/d.xml not read (HTTP 304" in again.run["changes"]["removals_not_judged_because"]


# -- scope changes ---------------------------------------------------------------------------
@pytest.mark.xfail(
    strict=True,
    reason="a page refused by robots.txt is not a failed read for the removal judgement: "
    "the pages only it linked are judged removed (pipelines/state.py run-level faults)",
)
def test_robots_newly_disallowing_a_section_in_a_link_crawl(site, tmp_path):
    """``links``: the hub page that leads to /l/* is now disallowed. The hub is refused
    (seen, flagged); the pages only it linked are out of reach by the run's own rules,
    not gone from the site: not "removed" (unconfirmed), and the summary says why."""
    first = ok(crawl(site, tmp_path, "-a", "mode=links"))
    assert {site.url(p) for p in site.links_only} <= set(first.urls)
    site.robots = "User-agent: *\nDisallow: /hub/\n"
    again = crawl(site, tmp_path, "-a", "mode=links", name="again.jsonl")
    assert again.returncode in (0, 7), again.stderr[-3000:]
    changes = again.run["changes"]
    assert changes["removed"]["count"] == 0, changes["removed"]
    assert sorted(changes["unconfirmed"]["items"]) == sorted(site.url(p) for p in site.links_only)


def test_robots_newly_disallowing_a_child_sitemap(site, tmp_path):
    ok(crawl(site, tmp_path, "-a", "mode=sitemap"))
    site.robots = "User-agent: *\nDisallow: /s/b.xml\n"
    site.index_lastmod["b"] = "2026-03-01"
    again = crawl(site, tmp_path, "-a", "mode=sitemap", name="again.jsonl")
    assert again.returncode in (0, 7), again.stderr[-3000:]
    changes = again.run["changes"]
    assert changes["removed"]["count"] == 0 and changes["removals_judged"] is False
    assert sorted(changes["unconfirmed"]["items"]) == sorted(site.urls("b"))


def test_max_pages_then_no_limit_then_limit_again(site, tmp_path):
    """A budget binds: nothing judged; the unbounded run after it: the pages over the
    budget are not "new" twice; the budget again: not judged, nothing removed."""
    ok(crawl(site, tmp_path, "-a", "mode=links"))
    bounded = ok(crawl(site, tmp_path, "-a", "mode=links", "-a", "max_pages=3"), (5,))
    assert bounded.run["changes"]["removed"]["count"] == 0
    assert bounded.run["changes"]["removals_judged"] is False
    assert "removals not judged (limit bound" in bounded.stderr
    full = ok(crawl(site, tmp_path, "-a", "mode=links", name="full.jsonl"))
    assert counts(full) == (0, 0, 0)


def test_profile_changed_judges_nothing_and_says_so(site, tmp_path):
    ok(crawl(site, tmp_path, "-a", "mode=sitemap"))
    del site.children["c"]["/c/0/"]
    site.index_lastmod["c"] = "2026-03-01"
    again = crawl(
        site,
        tmp_path,
        "-a",
        "mode=sitemap",
        "-a",
        "profile=polite",
        name="again.jsonl",
    )
    assert again.returncode in (0, 5), again.stderr[-3000:]
    changes = again.run["changes"]
    assert changes["removed"]["count"] == 0 and changes["removals_scope"] == "none"
    assert "profile default→polite" in again.stderr


# -- states the run did not write ---------------------------------------------------------------
def _v1_state(site, entries: list[list]) -> str:
    """A state as format 1 wrote it (the code before 535b8f5, run for real): no sitemap
    sections, no scope in its runs, no ``unconfirmed`` status."""
    head = {
        "format": "discovery-crawler/state/1",
        "origin": site.origin,
        "input_origins": [site.origin],
        "run": 1,
        "updated_at": "2026-12-01T10:00:00+00:00",
        "fields": ["url", "slug", "first_seen", "last_seen", "lastmod", "status"],
    }
    lines = [json.dumps(head)[:-1] + ', "entries": [']
    lines.append(",\n".join(json.dumps(e) for e in entries))
    run = {
        "run": 1,
        "started_at": "2026-12-01T09:59:00+00:00",
        "finished_at": "2026-12-01T10:00:00+00:00",
        "removals_judged": True,
        "new": len(entries),
        "removed": 0,
        "changed": 0,
        "urls": len(entries),
    }
    tail = {
        "count": len(entries),
        "counts": {"new": len(entries), "known": 0, "changed": 0, "removed": 0},
        "runs": [run],
    }
    lines.append("], " + json.dumps(tail)[1:])
    return "\n".join(lines) + "\n"


def test_a_real_format_1_state_is_migrated(site, tmp_path):
    """A v1 state written by a sitemap-only run: the re-run reads it, says so in one line,
    reports 0 changes, and writes format 2."""
    out = tmp_path / "out"
    out.mkdir()
    urls = [u for c in site.children for u in site.urls(c)]
    entries = [[u, f"s{i}", 1, 1, "2026-01-01", "new"] for i, u in enumerate(urls)]
    (out / STATE_NAME).write_text(_v1_state(site, entries))
    again = ok(crawl(site, tmp_path, "-a", "mode=sitemap"))
    said = [ln for ln in again.stderr.splitlines() if "migrated to 2" in ln]
    assert len(said) == 1, said
    assert counts(again) == (0, 0, 0)
    by_url = {r["url"]: r for r in again.records}
    assert by_url[urls[5]]["slug"] == "s5"  # slugs kept
    assert next(iter_entries(out / STATE_NAME))["format"] == "discovery-crawler/state/2"


def test_a_format_1_state_of_a_link_crawl_then_a_sitemap_run_removes_nothing_unseen(site, tmp_path):
    """A v1 state recorded no scope: the pages only links led to (a ``union`` run, v1)
    cannot be judged by a sitemap-only re-run — they were never looked for."""
    out = tmp_path / "out"
    out.mkdir()
    urls = [u for c in site.children for u in site.urls(c)] + [
        site.url(p) for p in ["/", "/hub/", *site.links_only]
    ]
    entries = [[u, f"s{i}", 1, 1, None, "new"] for i, u in enumerate(urls)]
    (out / STATE_NAME).write_text(_v1_state(site, entries))
    again = ok(crawl(site, tmp_path, "-a", "mode=sitemap"))
    changes = again.run["changes"]
    assert changes["removed"]["count"] == 0, changes["removed"]["items"]
    assert changes["removals_scope"] == "none"
    assert "the previous state recorded no scope (format 1)" in again.stderr
    # a union run looks both ways: it judges them (the links-only pages are there: known)
    site.clear()
    union = ok(crawl(site, tmp_path, "-a", "mode=union", name="union.jsonl"))
    assert counts(union) == (0, 0, 0)
    assert union.run["changes"]["removals_judged"] is True


def test_a_state_of_a_newer_format_is_not_destroyed(site, tmp_path):
    """A state written by a newer version (format 3): this version cannot read it. It must
    not be overwritten: kept aside (or refused), said in one line."""
    out = tmp_path / "out"
    ok(crawl(site, tmp_path, "-a", "mode=sitemap"))
    text = (out / STATE_NAME).read_text().replace("state/2", "state/3", 1)
    (out / STATE_NAME).write_text(text)
    again = crawl(site, tmp_path, "-a", "mode=sitemap", name="again.jsonl")
    assert again.returncode in (0, 2), again.stderr[-3000:]
    kept = [p for p in out.iterdir() if p.read_bytes() == text.encode()] if out.is_dir() else []
    assert kept, "the newer state was overwritten"
    said = [ln for ln in again.stderr.splitlines() if "state/3" in ln]
    assert len(said) == 1, said


@pytest.mark.parametrize("damage", ["truncate", "missing"])
def test_a_damaged_sections_file_costs_a_full_walk_not_a_wrong_answer(site, tmp_path, damage):
    out = tmp_path / "out"
    first = ok(crawl(site, tmp_path, "-a", "mode=sitemap"))
    [sections] = out.glob("state.sitemaps.*.jsonl")
    data = sections.read_bytes()
    if damage == "truncate":
        sections.write_bytes(data[: len(data) // 2])
    else:
        sections.unlink()
    site.clear()
    again = ok(crawl(site, tmp_path, "-a", "mode=sitemap", name="again.jsonl"))
    assert "its sitemap sections are not usable" in again.stderr
    assert counts(again) == (0, 0, 0)
    assert comparable(again) == comparable(first)


def test_a_damaged_part_of_the_sections_file_is_a_failed_read_of_that_sitemap(site, tmp_path):
    """The sections file's last line and meta lines are intact but a part (child a's
    entries) is scrambled: found only when a is carried over. Before, the exception ended
    the index's carry-over: 0 URLs discovered, exit 0, a traceback, and the damaged part
    copied into the next run's file. Now a alone is a failed read (one line, its URLs
    unconfirmed, removals not judged), b and c are carried over, and the next run reads a
    in full: the first run's inventory again."""
    out = tmp_path / "out"
    first = ok(crawl(site, tmp_path, "-a", "mode=sitemap"))
    [sections] = out.glob("state.sitemaps.*.jsonl")
    data = sections.read_bytes()
    sections.write_bytes(data[:20] + b"x" * 40 + data[60:])  # the same size
    again = ok(crawl(site, tmp_path, "-a", "mode=sitemap", name="again.jsonl"), (0, 7))
    said = [ln for ln in again.stderr.splitlines() if "not carried over" in ln and "ERROR" in ln]
    assert len(said) == 1 and "/s/a.xml" in said[0] and "damaged" in said[0], said
    changes = again.run["changes"]
    assert changes["removed"]["count"] == 0 and changes["removals_judged"] is False
    assert sorted(changes["unconfirmed"]["items"]) == sorted(site.urls("a"))
    assert set(again.urls) == set(first.urls) - set(site.urls("a"))
    site.clear()
    healed = ok(crawl(site, tmp_path, "-a", "mode=sitemap", name="healed.jsonl"))
    assert ("/s/a.xml", 200) in [(p, s) for p, s, _ in site.sitemap_requests()]
    assert counts(healed) == (0, 0, 0) and healed.run["changes"]["removals_judged"] is True
    assert comparable(healed) == comparable(first)


@pytest.mark.parametrize("fault", ["read_only", "full"])
def test_an_out_folder_that_cannot_be_written_keeps_the_old_state(site, tmp_path, fault, request):
    """A re-run whose out folder turned read-only (a remount) or full: exit 4, state.json
    and its sections file as they were; once the folder is writable again the next run
    reports the real change against them and carries the unchanged children over."""
    out = request.getfixturevalue("small_disk_fixture")(2048) / "out"  # a tmpfs
    first = ok(crawl(site, tmp_path, "-a", "mode=sitemap", out=out))
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.name.startswith("state.")}
    del site.children["a"]["/a/1/"]
    site.index_lastmod["a"] = "2026-03-01"
    if fault == "read_only":
        subprocess.run(["mount", "-o", "remount,ro", str(out.parent)], check=True)
    else:
        filler = out.parent / "filler"
        with open(filler, "wb", buffering=0) as fh, contextlib.suppress(OSError):
            while True:
                fh.write(b"x" * 4096)
    try:
        failed = crawl(site, tmp_path, "-a", "mode=sitemap", out=out, name="failed.jsonl")
    finally:
        if fault == "read_only":
            subprocess.run(["mount", "-o", "remount,rw", str(out.parent)], check=True)
        else:
            filler.unlink()
    assert failed.returncode == 4, failed.stderr[-3000:]
    assert "Traceback" not in failed.stderr
    after = {p.name: p.read_bytes() for p in out.iterdir() if p.name.startswith("state.")}
    assert after == before
    site.clear()
    nxt = ok(crawl(site, tmp_path, "-a", "mode=sitemap", out=out, name="next.jsonl"))
    assert nxt.run["changes"]["removed"]["items"] == [site.url("/a/1/")]
    assert set(nxt.urls) == set(first.urls) - {site.url("/a/1/")}
    assert sorted((p, s) for p, s, _ in site.sitemap_requests()) == [
        ("/s/a.xml", 200),
        (INDEX, 200),
    ]


# -- kills ------------------------------------------------------------------------------------
@pytest.mark.parametrize("point", ["changes_write", "state_rename"])
def test_a_kill_at_the_write_without_a_job_loses_no_report(site, tmp_path, point):
    """No JOBDIR (cron): killed right after changes.json, or right after the rename. The
    report is in changes.json (state_rename) or the next run reports it (changes_write);
    the next run's carry-over reads a complete sections file either way."""
    out = tmp_path / "out"
    first = ok(crawl(site, tmp_path, "-a", "mode=sitemap"))
    del site.children["a"]["/a/1/"]
    site.children["a"]["/a/new/"] = "2026-01-01"
    site.index_lastmod["a"] = "2026-03-01"
    killed = crawl(site, tmp_path, "-a", "mode=sitemap", env={KILL_ENV: point})
    assert killed.returncode == -9
    written = json.loads((out / CHANGES_NAME).read_text())
    assert (written["new"]["count"], written["removed"]["count"]) == (1, 1)
    site.clear()
    nxt = ok(crawl(site, tmp_path, "-a", "mode=sitemap", name="next.jsonl"))
    expected = (0, 0, 0) if point == "state_rename" else (1, 1, 0)
    assert counts(nxt) == expected
    assert len(list(out.glob("state.sitemaps.*.jsonl"))) == 1
    assert not list(out.glob(".state.json.*"))
    assert set(comparable(nxt)) == set(comparable(first)) - {site.url("/a/1/")} | {
        site.url("/a/new/")
    }
    # and once more: everything carried over, still the same inventory
    site.clear()
    last = ok(crawl(site, tmp_path, "-a", "mode=sitemap", name="last.jsonl"))
    assert counts(last) == (0, 0, 0) and comparable(last) == comparable(nxt)
    assert conditional(site) == {INDEX: (304, {"If-None-Match", "If-Modified-Since"})}


# -- a real site ------------------------------------------------------------------------------
def _real_site(serve, tmp_path):
    root = unpack_site(realdata("sites", "360muslimexperts", "site.tar.xz"), tmp_path / "site")
    return root, serve(root, rewrite=["https://360muslimexperts.com"], validators=True)


def _edit_post_sitemap(root) -> tuple[list[str], str]:
    """Drop the 2nd and 3rd ``<url>`` of post-sitemap.xml, change the 4th's lastmod, bump
    its index lastmod: what was dropped, and the changed location."""
    path = root / "post-sitemap.xml"
    text = path.read_text()
    blocks = re.findall(r"\t<url>.*?</url>\n", text, flags=re.S)
    dropped = [re.search(r"<loc>(.*?)</loc>", b).group(1) for b in blocks[1:3]]
    changed = re.search(r"<loc>(.*?)</loc>", blocks[3]).group(1)
    edited = re.sub(r"<lastmod>[^<]*</lastmod>", "<lastmod>2026-11-30T00:00:00+00:00</lastmod>",
                    blocks[3])  # fmt: skip
    text = text.replace(blocks[1], "").replace(blocks[2], "").replace(blocks[3], edited)
    path.write_text(text)
    index = root / "sitemap_index.xml"
    index.write_text(
        index.read_text().replace(
            "<loc>./post-sitemap.xml</loc>\n\t\t<lastmod>2025-08-07T15:48:05+00:00",
            "<loc>./post-sitemap.xml</loc>\n\t\t<lastmod>2026-11-30T00:00:00+00:00",
        )
    )
    return dropped, changed


def _asked_sitemaps(server) -> list[tuple[str, int]]:
    return sorted((p, s) for _, p, s in server.requests if p.endswith(".xml") and s != 404)


@pytest.mark.parametrize("mode", ["sitemap", "union"])
def test_a_real_site_with_one_child_changed(serve, tmp_path, mode):
    """360muslimexperts (Yoast: an index of 10 children, relative locations): the post
    sitemap loses two URLs and changes one lastmod. The re-run downloads the index and
    that child only, writes every record as a fresh run of the edited site does, and
    reports exactly the difference between the first inventory and that one."""
    root, server = _real_site(serve, tmp_path)
    args = ("-a", f"mode={mode}")
    first = ok(run_discover(server.url("/"), tmp_path, *args, out=tmp_path / "out"))
    _dropped, changed = _edit_post_sitemap(root)
    server.requests.clear()
    again = ok(run_discover(server.url("/"), tmp_path, *args, out=tmp_path / "out", feed="b.jsonl"))
    assert _asked_sitemaps(server) == [
        ("/post-sitemap.xml", 200),
        ("/sitemap.xml", 304),  # (the conventional address: a copy of the index)
        ("/sitemap_index.xml", 200),
    ]
    fresh = ok(
        run_discover(server.url("/"), tmp_path, *args, out=tmp_path / "fresh", feed="f.jsonl")
    )
    assert comparable(again) == comparable(fresh)
    # exactly what differs between the first run's inventory and the edited site's
    before, after = comparable(first), comparable(fresh)
    changes = again.run["changes"]
    assert sorted(changes["removed"]["items"]) == sorted(before.keys() - after.keys())
    assert changes["new"]["count"] == len(after.keys() - before.keys()) == 0
    assert sorted(c["url"] for c in changes["changed"]["items"]) == sorted(
        u
        for u in before.keys() & after.keys()
        if after[u]["lastmod"] and before[u]["lastmod"] != after[u]["lastmod"]
    )  # (a page no longer listed has no lastmod any more: that is not "changed")
    if mode == "sitemap":  # (union: the dropped pages are still linked: not removed)
        assert changes["removed"]["count"] >= 1
    assert any(c["url"].endswith(changed.removeprefix(".")) for c in changes["changed"]["items"])


def test_a_child_that_redirects_is_read_and_asked_conditionally_at_its_new_address(site, tmp_path):
    """/s/b.xml answers 301 to /s/b-moved.xml (as after an http→https or a CMS move), its
    index lastmod off: a first run reads it there; the re-run follows the redirect with
    the validators and the 304 there carries its URLs over; nothing new or removed."""
    site.index_lastmod["b"] = None
    site.moved["/s/b.xml"] = "/s/b-moved.xml"
    first = ok(crawl(site, tmp_path, "-a", "mode=sitemap"))
    assert set(site.urls("b")) <= set(first.urls)
    site.clear()
    again = ok(crawl(site, tmp_path, "-a", "mode=sitemap", name="again.jsonl"))
    asked = {p: (s, set(h)) for p, s, h in site.sitemap_requests()}
    assert asked["/s/b-moved.xml"] == (304, {"If-None-Match", "If-Modified-Since"})
    assert counts(again) == (0, 0, 0) and again.run["changes"]["removals_judged"] is True
    assert comparable(again) == comparable(first)


def test_a_child_that_starts_redirecting_is_read_at_its_new_address(site, tmp_path):
    """A child read by the last run now answers 301 (a CMS moved it): the walk follows the
    redirect (Scrapy's RedirectMiddleware, each hop past the SSRF guard) and reads it
    there, so nothing is removed and removals are judged (before: the redirect was not
    followed, and all 10 of its URLs were judged removed)."""
    first = ok(crawl(site, tmp_path, "-a", "mode=sitemap"))
    site.moved["/s/b.xml"] = "/s/b-moved.xml"
    site.index_lastmod["b"] = "2026-03-01"
    again = ok(crawl(site, tmp_path, "-a", "mode=sitemap", name="again.jsonl"))
    changes = again.run["changes"]
    assert counts(again) == (0, 0, 0), changes["removed"]["items"]
    assert changes["removals_judged"] is True
    assert set(site.urls("b")) <= set(again.urls)
    assert comparable(again) == comparable(first)


def test_a_child_that_redirects_in_a_loop_is_a_failed_read(site, tmp_path):
    """A child that answers 301 to itself: Scrapy's RedirectMiddleware gives up after
    REDIRECT_MAX_TIMES, the child is a failed read, and its URLs are unconfirmed, not
    removed. (Like a listed child answering 404, the site's own doing: a warning, not an
    incomplete run.)"""
    ok(crawl(site, tmp_path, "-a", "mode=sitemap"))
    site.moved["/s/b.xml"] = "/s/b.xml"
    site.index_lastmod["b"] = "2026-03-01"
    again = ok(
        crawl(site, tmp_path, "-a", "mode=sitemap", "-s", "REDIRECT_MAX_TIMES=3", name="a.jsonl"),
    )
    changes = again.run["changes"]
    assert changes["removed"]["count"] == 0 and changes["removals_judged"] is False
    assert "/s/b.xml not read (" in changes["removals_not_judged_because"]
    assert sorted(changes["unconfirmed"]["items"]) == sorted(site.urls("b"))
    asked = [p for p, _, _ in site.sitemap_requests() if p == "/s/b.xml"]
    assert 4 <= len(asked) <= 5  # the first ask and REDIRECT_MAX_TIMES hops, then given up


@pytest.mark.parametrize("point", ["changes_write", "state_rename"])
def test_a_job_killed_at_the_write_resumes_and_the_run_after_it_carries_over(site, tmp_path, point):
    """JOBDIR: killed at the write, resumed (the real changes reported), then a plain
    re-run: nothing changed, the index answers 304, the sections file is whole."""
    jobdir = {"JOBDIR": str(tmp_path / "job")}
    first = ok(crawl(site, tmp_path, "-a", "mode=sitemap"))
    del site.children["c"]["/c/2/"]
    site.index_lastmod["c"] = "2026-03-01"
    killed = crawl(site, tmp_path, "-a", "mode=sitemap", settings=jobdir, env={KILL_ENV: point})
    assert killed.returncode == -9
    resumed = ok(crawl(site, tmp_path, "-a", "mode=sitemap", settings=jobdir, name="r.jsonl"))
    assert resumed.run["changes"]["removed"]["items"] == [site.url("/c/2/")]
    site.clear()
    after = ok(crawl(site, tmp_path, "-a", "mode=sitemap", name="after.jsonl"))
    assert counts(after) == (0, 0, 0) and after.run["changes"]["removals_judged"] is True
    assert conditional(site) == {INDEX: (304, {"If-None-Match", "If-Modified-Since"})}
    assert set(after.urls) == set(first.urls) - {site.url("/c/2/")}
    assert len(list((tmp_path / "out").glob("state.sitemaps.*.jsonl"))) == 1


@pytest.mark.parametrize(
    "edit",
    [
        ("sitemaps_not_a_string", lambda h: {**h, "sitemaps": 5}),
        ("sitemaps_outside", lambda h: {**h, "sitemaps": "/etc/hostname"}),
        ("run_not_a_number", lambda h: {**h, "run": "two"}),
        ("scope_of_another_shape", lambda h: {**h, "scope": ["sitemap"]}),
    ],
    ids=lambda e: e[0],
)
def test_a_hand_edited_state_header_is_said_in_one_line_never_a_traceback(site, tmp_path, edit):
    out = tmp_path / "out"
    ok(crawl(site, tmp_path, "-a", "mode=sitemap"))
    text = (out / STATE_NAME).read_text()
    head, rest = text.split("\n", 1)
    header = json.loads(head.removesuffix(', "entries": [') + "}")
    head = json.dumps(edit[1](header))[:-1] + ', "entries": ['
    (out / STATE_NAME).write_text(head + "\n" + rest)
    again = crawl(site, tmp_path, "-a", "mode=sitemap", name="again.jsonl")
    assert again.returncode == 0, again.stderr[-3000:]
    assert "Traceback" not in again.stderr, again.stderr[-3000:]
    assert again.run["changes"]["removed"]["count"] == 0


def test_sigkill_at_any_moment_of_a_rerun_loses_no_report(tmp_path):
    """A re-run (4 × 1,500 URLs, one child changed: +1, −1) killed with SIGKILL at several
    moments — starting, walking, carrying over, writing. After each kill: either the
    killed run's state stands with its changes.json written, or the old state stands and
    the next run reports the real +1 −1; never a third thing, and that next run's
    inventory is what a fresh run of the site writes."""
    with RerunSite(children=4, per_child=1500) as site:
        out = tmp_path / "out"
        ok(crawl(site, tmp_path, "-a", "mode=sitemap"))
        b = site.children["b"]
        del b["/b/8/"]
        b["/b/late/"] = "2026-01-01"
        site.index_lastmod["b"] = "2026-03-01"
        fresh = ok(
            crawl(site, tmp_path, "-a", "mode=sitemap", out=tmp_path / "fresh", name="f.jsonl")
        )
        cmd = [
            sys.executable, "-m", "scrapy", "crawl", "discover", "-a", f"url={site.url('/')}",
            "-a", "mode=sitemap", "-a", f"out={out}", "-s", "HOST_INTERVAL=0",
            "-s", "PROGRESS_INTERVAL=0",
        ]  # fmt: skip
        saved = tmp_path / "saved"
        shutil.copytree(out, saved)
        for delay in (1.0, 2.0, 3.0):
            shutil.rmtree(out)
            shutil.copytree(saved, out)
            proc = subprocess.Popen(
                cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            time.sleep(delay)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            state_run = next(iter_entries(out / STATE_NAME))["run"]
            if state_run == 2:  # read before the next run writes its own
                written = json.loads((out / CHANGES_NAME).read_text())
            nxt = ok(crawl(site, tmp_path, "-a", "mode=sitemap", name="n.jsonl"))
            if state_run == 2:  # the kill came after the rename: the report is written
                assert (written["new"]["items"], written["removed"]["items"]) == (
                    [site.url("/b/late/")],
                    [site.url("/b/8/")],
                ), delay
                assert counts(nxt) == (0, 0, 0), delay
            else:
                assert state_run == 1, delay
                changes = nxt.run["changes"]
                assert changes["new"]["items"] == [site.url("/b/late/")], delay
                assert changes["removed"]["items"] == [site.url("/b/8/")], delay
            assert comparable(nxt) == comparable(fresh), delay
            assert len(list(out.glob("state.sitemaps.*.jsonl"))) == 1, delay
            assert not list(out.glob(".state.json.*")), delay


@pytest.mark.parametrize("cap", [9, 10, 11])
def test_a_url_cap_reached_at_a_documents_end_binds(site, tmp_path, cap):
    """SITEMAP_MAX_URLS reached exactly when a document ends (child a: 8 pages + 2
    alternates = 10): the children not asked were cut by it. Before, cap 10 ran
    "completed" (exit 0) and called the 22 other URLs removed, "every source was read"."""
    ok(crawl(site, tmp_path, "-a", "mode=sitemap"))
    settings = {"SITEMAP_MAX_URLS": cap, "SITEMAP_CONDITIONAL_REQUESTS": False}
    capped = ok(crawl(site, tmp_path, "-a", "mode=sitemap", settings=settings), (5,))
    changes = capped.run["changes"]
    assert changes["removed"]["count"] == 0 and changes["removals_judged"] is False
    assert "removals not judged (limit bound: SITEMAP_MAX_URLS)" in capped.stderr
    assert len(capped.records) == cap


@pytest.mark.parametrize("second", ["changes_write", "state_rename"])
def test_a_job_killed_at_the_write_twice_still_reports_the_real_changes(site, tmp_path, second):
    """JOBDIR: killed right after the rename, then its resume killed at the write too;
    the next resume still reports the real change (judged against the run before)."""
    jobdir = {"JOBDIR": str(tmp_path / "job")}
    ok(crawl(site, tmp_path, "-a", "mode=sitemap"))
    del site.children["c"]["/c/2/"]
    site.children["c"]["/c/late/"] = "2026-01-01"
    site.index_lastmod["c"] = "2026-03-01"
    args = ("-a", "mode=sitemap")
    first_kill = crawl(site, tmp_path, *args, settings=jobdir, env={KILL_ENV: "state_rename"})
    assert first_kill.returncode == -9
    second_kill = crawl(site, tmp_path, *args, settings=jobdir, env={KILL_ENV: second})
    assert second_kill.returncode == -9
    resumed = ok(crawl(site, tmp_path, *args, settings=jobdir, name="r.jsonl"))
    changes = resumed.run["changes"]
    assert (changes["new"]["items"], changes["removed"]["items"]) == (
        [site.url("/c/late/")],
        [site.url("/c/2/")],
    )
    assert changes["run"] == 2
    assert json.loads((tmp_path / "out" / CHANGES_NAME).read_text()) == changes


@pytest.mark.xfail(
    strict=True,
    reason="a page refused as a wall (429 rate limited, or 401/403) is not a failed read "
    "for the removal judgement (pipelines/state.py UNREAD_REFUSALS: network, timeout, "
    "server_error only): the pages only it linked are judged removed, then new again",
)
def test_a_rate_limited_page_in_a_link_crawl_removes_nothing_it_linked(site, tmp_path):
    """``links``: /hub/ answered 200 last time and 429 now (its retries spent): the four
    pages only it links could not be re-confirmed; they must not be called removed."""
    settings = {"RETRY_TIMES": 0}
    ok(crawl(site, tmp_path, "-a", "mode=links", settings=settings))
    site.status["/hub/"] = 429
    again = crawl(site, tmp_path, "-a", "mode=links", settings=settings, name="again.jsonl")
    assert again.returncode in (0, 7), again.stderr[-3000:]
    changes = again.run["changes"]
    assert changes["removed"]["count"] == 0, changes["removed"]["items"]
    assert sorted(changes["unconfirmed"]["items"]) == sorted(site.url(p) for p in site.links_only)
