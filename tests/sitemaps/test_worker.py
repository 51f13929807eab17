"""The sitemap worker (``sitemaps/worker.py``, its process; ``sitemaps/facts.py``, what it
works out): what it sends back is what the stages would have worked out in-process, a real
crawl gives the same inventory either way, a fact stands only while the record holds what
it was worked out from, and a worker that dies mid-document loses nothing."""

from __future__ import annotations

import asyncio
import gzip
import json
import pickle
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discovery_crawler.output.feed_lines import json_heads, json_lines
from discovery_crawler.selection.scoring import Rater
from discovery_crawler.sitemaps.body import SitemapTooLarge
from discovery_crawler.sitemaps.facts import (
    FACTS,
    RunContext,
    Tools,
    UrlFacts,
    entries_of,
    facts_for,
    holding,
    parse_document,
    worked_batch,
)
from discovery_crawler.sitemaps.formats.plain_urlset import Undescribed, describe_malformed
from discovery_crawler.sitemaps.parser import ParseResult, priority_value
from discovery_crawler.sitemaps.worker import ParseWorker, WorkerFailed
from discovery_crawler.urls.filters import FilterPolicy
from discovery_crawler.urls.junk import junk_patterns_many
from discovery_crawler.urls.kinds import url_kinds_many
from discovery_crawler.urls.normalize import OriginCache, UrlError
from discovery_crawler.urls.slugs import bases_many, normalized_paths
from tests.conftest import IN_CI, ROOT, realdata

SITE = "https://example.com"
BASE = f"{SITE}/sitemap.xml"


def urlset(locs: list[str], extra: str = "") -> bytes:
    items = "".join(
        f"<url><loc>{loc}</loc><lastmod>2026-01-0{i % 9 + 1}</lastmod>"
        f"<changefreq>weekly</changefreq><priority>0.{i % 10}</priority>{extra}</url>"
        for i, loc in enumerate(locs)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' + items + "</urlset>"
    ).encode()


def worked_entries(entries: list[tuple[Any, ...]], base: str = BASE) -> list[tuple[Any, ...]]:
    """What the spider gets back from the worker for a batch (through pickling)."""
    tools = Tools(RunContext(site=SITE, exclude_paths=("/private",)))
    batch = worked_batch(entries, base, tools)
    return entries_of(pickle.loads(pickle.dumps(batch, pickle.HIGHEST_PROTOCOL)))


def with_facts(worked: list[Any], base: str = BASE) -> list[UrlFacts | None]:
    """The ``UrlFacts`` the normalize stage makes of each worked entry (None: an error)."""
    out = []
    for got in worked:
        if got.facts is None:
            out.append(None)
            continue
        rec = {
            "url": got.url,
            "source": "sitemap",
            "sitemap": base,
            "lastmod": got.lastmod or None,
            "priority": priority_value(got.priority) if got.priority else None,
            "changefreq": got.changefreq or None,
            "alternates": None,
        }
        out.append(facts_for(rec, got.facts, False))
    return out


def in_process(entries: list[tuple[Any, ...]], base: str = BASE) -> list[dict[str, Any]]:
    """The records the normalize stage builds from raw entries (no worker)."""
    urls = OriginCache().normalize_many([e[0] for e in entries], base)
    return [
        {
            "url": url,
            "source": "sitemap",
            "sitemap": base,
            "lastmod": e[1] or None,
            "priority": priority_value(e[3]) if e[3] else None,
            "changefreq": e[2] or None,
            "alternates": None,
        }
        for url, e in zip(urls, entries, strict=True)
        if url.__class__ is str
    ]


def test_url_error_survives_pickling():
    error = pickle.loads(pickle.dumps(UrlError("invalid IDNA host", "http://xn--/")))
    assert isinstance(error, UrlError)
    assert (error.reason, error.raw) == ("invalid IDNA host", "http://xn--/")


SEGMENT = st.one_of(
    st.text(alphabet="abcXYZ019-_.~%é/?=&", min_size=0, max_size=12),
    st.sampled_from(["test", "sample-page", "login", "private", "page/2", "wp-json", "a.pdf"]),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(SEGMENT, SEGMENT), min_size=1, max_size=30))
def test_worked_entries_are_what_the_stages_work_out(pairs):
    """Per entry: the normalized URL (or its UrlError) and facts equal to the in-process
    rater, base slugs and feed-line heads on the records the normalize stage builds."""
    entries = [
        (f"/{a}/{b}" if i % 7 else f"{SITE}/{a}?{b}", "2026-01-01", "daily", "0.5")
        for i, (a, b) in enumerate(pairs)
    ]
    entries.append(("javascript:alert(1)", "", "", ""))
    worked = worked_entries(entries)
    expected_urls = OriginCache().normalize_many([e[0] for e in entries], BASE)
    assert len(worked) == len(entries)
    for got, want in zip(worked, expected_urls, strict=True):
        if isinstance(want, UrlError):
            assert isinstance(got.url, UrlError) and got.url.reason == want.reason
            assert got.facts is None
        else:
            assert got.url == want
    records = in_process(entries)
    facts = [f for f in with_facts(worked) if f is not None]
    totals, types, slots = Rater().rate_many(records, fetched=False)
    assert [(f.score, f.page_type, f.slot) for f in facts] == list(
        zip(totals, types, slots, strict=True)
    )
    urls = [r["url"] for r in records]
    paths = normalized_paths(urls)
    assert [f.base_slug for f in facts] == bases_many(paths)
    # no alternates: the worker sends no head, the feed renders it from the record
    assert [f.head for f in facts] == [""] * len(records)
    kinds = url_kinds_many(urls)
    assert [f.kind for f in facts] == kinds
    policy = FilterPolicy(SITE, (), ("/private",))
    assert [f.decision for f in facts] == policy.decide_many(urls, kinds)
    assert [f.junk for f in facts] == [p and p.name for p in junk_patterns_many(paths)]
    assert all(w.alternates is None for w in worked)  # no alternates in these entries


def test_a_line_from_worker_facts_equals_the_line_rendered_here():
    entries = [(f"{SITE}/blog/post-{i}/", "2026-01-01", "weekly", "0.8") for i in range(5)]
    worked = worked_entries(entries)
    plain = in_process(entries)
    facts = with_facts(worked)
    for rec, f in zip(plain, facts, strict=True):
        rec.update(kind="page", flags=None, slug=f.base_slug, score=f.score, change="new")
    carrying = [dict(rec) for rec in plain]
    for rec, got in zip(carrying, worked, strict=True):
        rec[FACTS] = facts_for(rec, got.facts, False)
    assert None not in holding(carrying)  # the facts stand (no head: no alternates)
    assert json_lines(carrying) == json_lines(plain)
    assert json_lines(carrying).startswith(json_heads(plain)[0])


def test_a_stale_batch_whose_alternates_are_on_the_site_is_decoded_as_records():
    """The site's origin rewrites changed after the worker normalized a batch (the first
    batch named the site): a URL already on the site is as it would be now, so a batch whose
    locations and hreflang alternates are all on the site decodes straight to the records a
    fresh one gives; one alternate elsewhere sends it to the general path (None)."""
    from discovery_crawler.sitemaps.facts import FROM_LISTING, worked_records

    on_site = [
        (f"{SITE}/a/", "2026-01-01", "", "0.5", (("en", f"{SITE}/a/"), ("de", "/de/a/"))),
        (f"{SITE}/b/", "", "", "", ""),
    ]
    batch = worked_batch(on_site, BASE, Tools(RunContext(site=SITE)))
    fresh = worked_records(batch, "sitemap", BASE, SITE + "/")
    stale = worked_records(batch, "sitemap", BASE, SITE + "/", fresh=False)
    assert fresh is not None and stale is not None
    strip = lambda records: [{k: v for k, v in r.items() if k != FACTS} for r in records]  # noqa: E731
    assert strip(stale.records) == strip(fresh.records)
    assert [r["url"] for r in stale.records][-1] == f"{SITE}/de/a/"  # the alternate's record
    assert None not in holding(stale.records, FROM_LISTING)
    assert json_lines(stale.records) == json_lines(strip(fresh.records))
    elsewhere = [(f"{SITE}/c/", "", "", "", (("fr", "https://www.example.com/fr/c/"),))]
    batch = worked_batch(elsewhere, BASE, Tools(RunContext(site=SITE)))
    assert worked_records(batch, "sitemap", BASE, SITE + "/") is not None
    assert worked_records(batch, "sitemap", BASE, SITE + "/", fresh=False) is None


def test_alternates_as_entries_are_left_to_the_normalize_stage():
    """Decoded as entries (the normalize stage's general path), an entry keeps its
    alternates as written and no head: the stage normalizes them, and writes the head."""
    entries = [(f"{SITE}/a/", "", "", "", (("de", "/de/a/"),))]
    (worked,) = worked_entries(entries)
    assert worked.alternates == (("de", "/de/a/"),)  # raw: normalized with the record
    assert not with_facts([worked])[0].head  # no head: the alternates are part of it


def test_alternates_as_records_are_the_normalize_stages():
    """Decoded straight to records, a batch with hreflang alternates gives the records the
    normalize stage builds from the same entries — each alternate normalized, the
    alternates on the site (not the URL itself) as records after the locations — with
    facts for all of them, heads and ratings included."""
    from discovery_crawler.sitemaps.facts import FROM_LISTING, worked_records

    entries = [
        (f"{SITE}/a/", "2026-01-01", "daily", "0.5", (("en", f"{SITE}/a/"), ("de", "/de/a/"))),
        (f"{SITE}/b/", "", "", "", ""),
        (f"{SITE}/c", "", "", "0.3", (("x", "https://other.example/c"), ("y", "http://[bad"))),
    ]
    batch = worked_batch(entries, BASE, Tools(RunContext(site=SITE)))
    batch = pickle.loads(pickle.dumps(batch, pickle.HIGHEST_PROTOCOL))
    worked = worked_records(batch, "sitemap", BASE, SITE + "/")
    assert worked is not None and not worked.malformed and not worked.other_hosts
    records = worked.records
    assert [r["url"] for r in records] == [f"{SITE}/a/", f"{SITE}/b/", f"{SITE}/c", f"{SITE}/de/a/"]
    assert records[0]["alternates"] == [
        {"hreflang": "en", "href": f"{SITE}/a/"},
        {"hreflang": "de", "href": f"{SITE}/de/a/"},
    ]
    assert records[2]["alternates"] == [
        {"hreflang": "x", "href": "https://other.example/c"},
        {"hreflang": "y", "href": "http://[bad"},
    ]
    assert records[3]["source"] == "alternate" and records[3]["alternates"] is None
    facts = holding(records, FROM_LISTING)
    assert None not in facts
    plain = [{k: v for k, v in rec.items() if k != FACTS} for rec in records]
    # a head from the worker where the line has alternates; the feed renders the others
    assert [bool(f.head) for f in facts] == [True, False, True, False]
    assert [f.head or head for f, head in zip(facts, json_heads(plain), strict=True)] == (
        json_heads(plain)
    )
    totals, types, slots = Rater().rate_many(plain, fetched=False)
    assert [(f.score, f.page_type, f.slot) for f in facts] == list(
        zip(totals, types, slots, strict=True)
    )
    assert json_lines(records) == json_lines(plain)


_HREFLANG = st.one_of(st.none(), st.text(max_size=8), st.sampled_from(["en", "x-default", "é\x00"]))
_HREF = st.one_of(
    st.text(max_size=30), st.sampled_from([f"{SITE}/a/", 'a"b\\c', "\u2028\x7f\ud800"])
)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(_HREFLANG, _HREF), max_size=4).map(tuple))
def test_alternates_text_is_the_feeds_json(pairs):
    """A head's alternates, written by hand, are the text ``json.dumps`` gives the
    record's ``alternates`` (quotes, controls, non-ASCII and lone surrogates included)."""
    from discovery_crawler.output.json_text import dumps
    from discovery_crawler.sitemaps.facts import _alternate_dicts, _alternates_text

    assert _alternates_text(pairs) == dumps(_alternate_dicts(pairs))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(
                st.text(max_size=12),
                st.text(max_size=4),
                st.text(max_size=3),
                st.text(max_size=3),
                st.one_of(st.just(""), st.just((("en", "/x"),))),
            ),
            st.tuples(st.text(max_size=12), st.none(), st.none(), st.none()),
        ),
        max_size=8,
    )
)
def test_listing_columns_of_any_entries(entries):
    """The columns of a batch of 5-tuples (transposed a column at a time) or of shorter
    entries are those a comprehension per column gives."""
    from discovery_crawler.sitemaps.facts import _listing_columns

    assert _listing_columns(entries) == (
        [e[0] for e in entries],
        [e[1] or "" for e in entries],
        [e[2] or "" for e in entries],
        [e[3] or "" for e in entries],
        {i: e[4] for i, e in enumerate(entries) if len(e) > 4 and e[4]},
    )


_LOCS = st.sampled_from(
    [f"{SITE}/a/", f"{SITE}/a/ ", f"{SITE}/a/\u3000", " https://example.com/b", "/rel/", "c",
     "http://EXAMPLE.com/%7e", f"{SITE}/caf\u00e9", "http://[bad", "mailto:x", "example.com/d"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_LOCS, st.lists(st.sampled_from(["loc", "other", "bad"]))), max_size=6))
def test_an_alternate_written_as_its_location_is_its_url(rows):
    """An href written exactly as its entry's location is listed as that entry's URL: what
    normalizing the href on its own gives (``_alternate_urls``' shortcut changes nothing)."""
    from discovery_crawler.sitemaps.facts import _alternate_urls
    from discovery_crawler.urls.normalize import resolve_location

    locs = [loc for loc, _ in rows]
    tools = Tools(RunContext(site=SITE))
    urls = tools.origins.normalize_many(locs, BASE)
    hrefs = {"other": f"{SITE}/x/", "bad": "http://[bad"}
    alternates = {
        i: tuple(("en", loc if kind == "loc" else hrefs[kind]) for kind in kinds)
        for i, (loc, kinds) in enumerate(rows)
        if kinds
    }
    listed, named, owners = _alternate_urls(alternates, locs, urls, BASE, tools)

    def one(href):
        try:
            return tools.origins.normalize(
                href if href.startswith(("https://", "http://")) else resolve_location(href, BASE)
            )
        except UrlError:
            return None

    expected_named = []
    for i, pairs in alternates.items():
        want = tuple((h, one(href) or href) for h, href in pairs)
        assert listed[i] == want
        if urls[i].__class__ is str:
            expected_named += [(one(h), i) for _, h in pairs if one(h) and one(h) != urls[i]]
    assert list(zip(named, owners, strict=True)) == expected_named


def test_columns_with_a_nul_or_no_entries_round_trip():
    """Columns travel as NUL-joined strings; a value holding a NUL (no XML value can) keeps
    its column a list, and an empty batch stays empty."""
    entries = [(f"{SITE}/a/", "2026\x0001", "", ""), (f"{SITE}/b/", "", "daily", "0.3")]
    worked = worked_entries(entries)
    assert [w.lastmod for w in worked] == ["2026\x0001", ""]
    assert [w.changefreq for w in worked] == ["", "daily"]
    assert worked_entries([]) == []


def test_parse_document_streams_chunks_then_reports():
    locs = [f"{SITE}/p/{i}/" for i in range(2_500)]
    body = gzip.compress(urlset(locs))
    messages = list(parse_document(body, BASE, 0, 100, Tools(), chunk=8))
    kinds = [kind for kind, _ in messages]
    assert kinds == ["batches", "batches", "batches", "batches", "done"]
    assert [len(p) for k, p in messages if k == "batches"] == [8, 8, 8, 1]
    urls = [e.url for k, p in messages if k == "batches" for b in p for e in entries_of(b)]
    assert urls == locs
    result, too_large, _rewritten = messages[-1][1]
    assert isinstance(result, ParseResult) and result.urls == 2_500 and result.gzipped
    assert too_large is None


def test_parse_document_refuses_a_bomb_with_the_reason():
    body = gzip.compress(urlset([f"{SITE}/{i}" for i in range(5_000)]))
    messages = list(parse_document(body, BASE, 10_000, 100, Tools()))
    kind, (result, too_large, _) = messages[-1]
    assert kind == "done" and too_large == str(SitemapTooLarge(10_000))
    assert result.decompressed_bytes <= 10_000 + 65_536  # stopped at the cap, not at the end


def test_parse_document_stops_at_max_entries_and_says_so():
    """SITEMAP_MAX_URLS_PER_FILE in the worker: the first entries, then ``capped``."""
    body = urlset([f"{SITE}/{i}" for i in range(2_500)])
    messages = list(parse_document(body, BASE, 0, 100, Tools(), max_entries=1_050))
    urls = [e.url for k, p in messages if k == "batches" for b in p for e in entries_of(b)]
    assert urls == [f"{SITE}/{i}" for i in range(1_050)]
    result = messages[-1][1][0]
    assert (result.urls, result.capped) == (1_050, 1_050)


def _with_malformed_blocks() -> bytes:
    body = urlset([f"{SITE}/p/{i}/" for i in range(300)])
    blocks = "<url><lastmod>2026-01-01</lastmod></url><url><priority>0.5</priority></url>"
    return body.replace(b"</urlset>", blocks.encode() + b"</urlset>")


def test_the_worker_leaves_malformed_blocks_to_the_spider_to_describe():
    """In the worker (``describe=False``) a plain urlset's blocks without a <loc> come back
    undescribed; described in the spider they read as the in-process parse's, in order."""
    body = _with_malformed_blocks()
    here = list(parse_document(body, BASE, 0, 100, Tools()))[-1][1][0]
    there = list(parse_document(body, BASE, 0, 100, Tools(), describe=False))[-1][1][0]
    assert there.malformed_count == here.malformed_count == 2
    assert all(raw.__class__ is Undescribed for raw in there.malformed)
    there = pickle.loads(pickle.dumps(there))  # as it crosses the pipe
    describe_malformed(there)
    assert there.malformed == here.malformed
    assert here.malformed[0].startswith("<url") and "lastmod" in here.malformed[0]


def test_the_worker_never_imports_lxml_for_a_plain_urlset_with_malformed_blocks(tmp_path):
    """lxml is ~5 MB of the worker's RSS; a plain urlset, even with malformed blocks, is
    read without it."""
    doc = tmp_path / "sitemap.xml"
    doc.write_bytes(_with_malformed_blocks())
    code = (
        "import sys; from discovery_crawler.sitemaps.facts import Tools, parse_document; "
        f"m = list(parse_document(open(sys.argv[1], 'rb').read(), {BASE!r}, 0, 100, Tools(),"
        " describe=False)); "
        "print(m[-1][1][0].malformed_count, 'lxml' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(doc)], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["2", "False"]


def test_the_worker_process_round_trip_and_death():
    """A real worker process: same entries as in-process; after it dies, a clear error."""
    locs = [f"{SITE}/docs/page-{i}.html" for i in range(3_000)] + ["http://[::1"]
    body = gzip.compress(urlset(locs))

    async def run() -> tuple[list[Any], Any, str]:
        pool = ParseWorker()
        pool.start()
        limits = Path("/proc/sys/fs/pipe-max-size")
        if limits.exists() and int(limits.read_text()) >= 1 << 20:
            import fcntl

            # Room for a whole reply: one or two reads, not ~20 of Linux's default 64 KB.
            assert fcntl.fcntl(pool._reader, fcntl.F_GETPIPE_SZ) == 1 << 20
        got: list[Any] = []
        done = None
        async for kind, payload in pool.parse(body, BASE, 0, 1000, RunContext()):
            if kind == "batches":
                got.extend(e for batch in payload for e in entries_of(batch))
            else:
                done = payload
        assert pool._process is not None
        pool._process.kill()
        pool._process.wait()
        with pytest.raises(WorkerFailed) as failed:
            for _ in range(50):  # the reader thread sees the end of the pipe
                async for _ in pool.parse(body, BASE, 0, 1000, RunContext()):
                    pass
                await asyncio.sleep(0.05)
        pool.close()
        return got, done, str(failed.value)

    got, done, why = asyncio.run(run())
    expected = OriginCache().normalize_many(locs, BASE)
    assert [e.url for e in got[:-1]] == expected[:-1]
    assert isinstance(got[-1].url, UrlError) and got[-1].url.reason == expected[-1].reason
    assert done[0].urls == len(locs)
    assert "exited" in why


def test_the_worker_process_starts_with_the_spiders_mmap_threshold():
    """glibc reads ``MALLOC_MMAP_THRESHOLD_`` at start-up: the worker is given the threshold
    the spider pinned (``MALLOC_MMAP_THRESHOLD``), and none when it is 0."""

    async def environ_of(threshold: int) -> dict[str, str]:
        pool = ParseWorker(threshold)
        pool.start()
        try:
            assert pool._process is not None
            raw = Path(f"/proc/{pool._process.pid}/environ").read_bytes()
        finally:
            pool.close()
        return dict(v.split("=", 1) for v in raw.decode().split("\0") if "=" in v)

    if not Path("/proc/self/environ").exists():
        message = "no /proc on this platform: the worker's environment cannot be read"
        if IN_CI:  # CI runs on Linux: a missing /proc is a broken machine
            pytest.fail(f"{message}; in CI this is a failure, not a skip")
        pytest.skip(f"{message}; outside CI only (in CI a failure)")
    assert asyncio.run(environ_of(1 << 20))["MALLOC_MMAP_THRESHOLD_"] == str(1 << 20)
    assert "MALLOC_MMAP_THRESHOLD_" not in asyncio.run(environ_of(0))


def _sorted_records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(records, key=lambda r: r["url"])


def _state_entries(result: Any) -> list[str]:
    """state.json's entry lines as written, sorted (the worker may write them)."""
    text = (result.out / "state.json").read_text(encoding="utf-8")
    json.loads(text)  # valid
    return sorted(line.rstrip(",") for line in text.splitlines() if line.startswith('["'))


def _feed_lines(result: Any) -> list[str]:
    """The feed's lines as written, sorted: the worker's text must be the stages' text
    byte for byte (a parsed comparison would take 5.0 for 5)."""
    return sorted(result.raw_feed.splitlines())


def _summary(result: Any) -> dict[str, Any]:
    """The crawl log's account, without what depends on the order documents arrived in
    (attempt timings, the first URLs listed with their breakdowns)."""
    run = result.run
    discovery = {k: v for k, v in run["discovery"].items() if k != "sitemap_attempts"}
    selection = {k: v for k, v in run["selection"].items() if k != "scores"}
    return {"discovery": discovery, "selection": selection, "groups": run["groups"]}


@pytest.mark.parametrize(
    ("folder", "path"),
    [
        ("wordpress-yoast-simplystatic-360muslimexperts", "/sitemap_index.xml"),
        ("hugo-multilingual-ayatoashihara", "/sitemap.xml"),  # relative hreflang alternates
        ("stormcrawler", "/tripadvisor.sitemap.xml.gz"),  # 50,000 URLs, app alternates
        ("sitemapjs-refinebio", "/sitemap-1.xml.gz"),  # 36,005 URLs on one line
    ],
)
def test_real_sitemaps_give_the_same_inventory_with_and_without_the_worker(
    serve, tmp_path, folder, path
):
    """Every document through the worker (threshold 1 byte) vs none: the same records
    (slugs, scores, heads of lines), counts, kinds, drops, groups and selection."""
    from tests.conftest import run_discover

    server = serve(realdata("sitemaps", folder))
    url = server.url(path)
    # One document at a time: which sitemap lists a URL first decides its record.
    one = {"SITEMAP_CONCURRENCY": 1, "CONCURRENT_REQUESTS": 1, "SITEMAP_PARSE_CONCURRENCY": 1}
    on = run_discover(url, tmp_path / "on", settings={**one, "SITEMAP_WORKER_MIN_BYTES": 1})
    off = run_discover(url, tmp_path / "off", settings={**one, "SITEMAP_PARSE_WORKER": False})
    assert on.returncode == 0 and off.returncode == 0, on.stderr[-3000:] + off.stderr[-3000:]
    assert "'discovery/sitemaps/worker_documents'" in on.stderr
    assert "worker_documents" not in off.stderr
    assert on.records and _sorted_records(on.records) == _sorted_records(off.records)
    assert _feed_lines(on) == _feed_lines(off)
    assert _summary(on) == _summary(off)
    assert _state_entries(on) == _state_entries(off)


def _mixed_site(root: Path, port_origin: str) -> None:
    """A tree that exercises every stage: other hosts, malformed and relative locations,
    scheme and www twins of the site, slash twins, queries, junk, auth walls, files,
    pagination, duplicates across documents and hreflang alternates."""
    root.mkdir(parents=True, exist_ok=True)
    host = port_origin.split("://")[1]
    odd = [
        "http://[::1",
        "javascript:alert(1)",
        "https://example.com:99999/bad-port/",  # UrlError.raw is the origin alone
        "https://other.example/x/",
        f"http://www.{host}/www-twin/",
        "/relative/page/",
        "./dot-relative/",
        f"{port_origin}/Upper/%7Euser/",
        f"{port_origin}/shop?utm_source=x&id=3",
        f"{port_origin}/blog/page/3/",
        f"{port_origin}/test/",
        f"{port_origin}/sample-page/",
        f"{port_origin}/account/settings/",
        f"{port_origin}/files/report.pdf",
        f"{port_origin}/css/site.css",
        f"{port_origin}/twin",
        f"{port_origin}/twin/",
        f"{port_origin}/about/",
        "/a.b/",  # slug a-b
        "/a-b/",  # slug a-b taken: a-b-2 (the worker's line and state entry must not stand)
        f"{port_origin}/x/y/",
        f"{port_origin}/x__y/",
    ]
    children = []
    for c in range(3):
        locs = [f"{port_origin}/section-{c}/article-{i}/" for i in range(3_000)]
        locs[10:10] = odd
        # listed twice, early in this document: which document's batch reaches the dedup
        # stage first is then not a race between this one's end and the next one's start
        # (Scrapy works the items of two responses concurrently)
        locs.insert(0, f"{port_origin}/section-{(c + 1) % 3}/article-5/")
        name = f"s-{c}.xml.gz"
        extra = ""
        if c == 2:
            extra = '<xhtml:link rel="alternate" hreflang="de" href="/de/alt/"/>'
        body = urlset(locs, extra).replace(
            b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">',
            b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
            b'xmlns:xhtml="http://www.w3.org/1999/xhtml">',
        )
        (root / name).write_bytes(gzip.compress(body))
        children.append(f"<sitemap><loc>/{name}</loc></sitemap>")
    (root / "sitemap_index.xml").write_text(
        '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        + "".join(children)
        + "</sitemapindex>"
    )


@pytest.mark.parametrize("lines", [False, True], ids=["columns", "with-lines"])
def test_every_stage_agrees_with_and_without_the_worker(serve, tmp_path, lines):
    """Malformed, other-host, relative, twin, junk, auth, file and alternate entries: the
    same records and the same account (drops with reasons, malformed, notes) either way,
    with and without the lines the worker writes on a first run (SITEMAP_WORKER_LINES)."""
    from tests.conftest import run_discover

    server = serve(tmp_path / "site")
    _mixed_site(tmp_path / "site", server.url("").rstrip("/"))
    url = server.url("/sitemap_index.xml")
    one = {"SITEMAP_CONCURRENCY": 1, "CONCURRENT_REQUESTS": 1, "SITEMAP_PARSE_CONCURRENCY": 1}
    worker = {"SITEMAP_WORKER_MIN_BYTES": 1, "SITEMAP_WORKER_LINES": lines}
    on = run_discover(url, tmp_path / "on", settings={**one, **worker})
    off = run_discover(url, tmp_path / "off", settings={**one, "SITEMAP_PARSE_WORKER": False})
    assert on.returncode == 0 and off.returncode == 0, on.stderr[-3000:] + off.stderr[-3000:]
    assert "'discovery/sitemaps/worker_documents': 4" in on.stderr  # index + 3
    assert _sorted_records(on.records) == _sorted_records(off.records)
    assert _feed_lines(on) == _feed_lines(off)
    assert _summary(on) == _summary(off)
    assert _state_entries(on) == _state_entries(off)
    assert len(_state_entries(on)) == len(on.records)
    slugs = {r["url"].split("/", 3)[3]: r["slug"] for r in on.records}
    assert (slugs["a.b/"], slugs["a-b/"]) == ("a-b", "a-b-2")
    assert (slugs["x/y/"], slugs["x__y/"]) == ("x__y", "x__y-2")
    discovery = on.discovery
    assert discovery["malformed"]["count"] == 9  # three bad locations in each document
    raws = {m["raw"] for m in discovery["malformed"]["items"]}
    assert "https://example.com:99999/bad-port/" in raws  # as written, not its origin
    assert discovery["other_hosts"] == {"https://other.example": 3}
    assert any("www vs bare host" in note for note in discovery["notes"])  # a stale batch
    # junk is flagged on the feed line on every path (in-process, worker, worker's lines):
    # /test/ and /sample-page/ sit in the middle of a batch the worker wrote lines for
    assert discovery["flagged_as_junk"]["count"] == 2  # /test/, /sample-page/ (deduplicated)
    for result in (on, off):
        lines = [json.loads(line) for line in result.raw_feed.splitlines()]
        junk = {r["url"].split("/", 3)[3]: r for r in lines if r.get("flags") == ["junk"]}
        assert set(junk) == {"test/", "sample-page/"}
        assert {k: r["junk_pattern"] for k, r in junk.items()} == {
            "test/": "test",
            "sample-page/": "sample-page",
        }
        assert not [r for r in lines if "junk_pattern" in r and r not in junk.values()]
        assert result.run["selection"]["junk"] == 2
    assert any(r.get("flags") == ["requires_auth"] for r in on.records)


def test_a_second_run_renders_its_own_lines_with_and_without_the_worker(serve, tmp_path):
    """On a re-run into the same folder no URL is new: nothing the worker would write for
    a first run may stand, and both ways give the same feed and state lines."""
    from tests.conftest import run_discover

    server = serve(tmp_path / "site")
    _mixed_site(tmp_path / "site", server.url("").rstrip("/"))
    url = server.url("/sitemap_index.xml")
    one = {"SITEMAP_CONCURRENCY": 1, "CONCURRENT_REQUESTS": 1, "SITEMAP_PARSE_CONCURRENCY": 1}
    runs = {}
    for name, worker in (
        ("on", {"SITEMAP_WORKER_MIN_BYTES": 1, "SITEMAP_WORKER_LINES": True}),
        ("off", {"SITEMAP_PARSE_WORKER": False}),
    ):
        out = tmp_path / name / "out"
        first = run_discover(url, tmp_path / name, settings={**one, **worker}, out=out)
        again = run_discover(url, tmp_path / name, settings={**one, **worker}, out=out)
        assert first.returncode == 0 and again.returncode == 0, again.stderr[-3000:]
        runs[name] = again
    on, off = runs["on"], runs["off"]
    assert "'discovery/sitemaps/worker_documents': 4" in on.stderr
    assert on.records and "new" not in {r["change"] for r in on.records}
    assert _feed_lines(on) == _feed_lines(off)
    assert _state_entries(on) == _state_entries(off)


@pytest.mark.parametrize("without", ["SlugPipeline", "ScorePipeline", "FilterPipeline"])
def test_the_worker_lines_stand_only_for_the_stages_that_ran(serve, tmp_path, without):
    """A stage taken out of ITEM_PIPELINES leaves its field null in-process; the lines the
    worker wrote assuming it ran must not stand in for them."""
    from discovery_crawler.settings import ITEM_PIPELINES
    from tests.conftest import run_discover

    server = serve(tmp_path / "site")
    _mixed_site(tmp_path / "site", server.url("").rstrip("/"))
    url = server.url("/sitemap_index.xml")
    stages = {path: order for path, order in ITEM_PIPELINES.items() if without not in path}
    one = {"SITEMAP_CONCURRENCY": 1, "CONCURRENT_REQUESTS": 1, "SITEMAP_PARSE_CONCURRENCY": 1}
    one["ITEM_PIPELINES"] = json.dumps(stages)
    worker = {"SITEMAP_WORKER_MIN_BYTES": 1, "SITEMAP_WORKER_LINES": True}
    on = run_discover(url, tmp_path / "on", settings={**one, **worker})
    off = run_discover(url, tmp_path / "off", settings={**one, "SITEMAP_PARSE_WORKER": False})
    assert on.returncode == 0 and off.returncode == 0, on.stderr[-3000:] + off.stderr[-3000:]
    assert "'discovery/sitemaps/worker_documents': 4" in on.stderr
    assert on.records and _feed_lines(on) == _feed_lines(off)
    assert _state_entries(on) == _state_entries(off)


def test_the_worker_process_imports_neither_asyncio_nor_lxml():
    """What the worker runs brings no asyncio (7 MB with ssl) and no lxml (4 MB) into its
    process: plain documents are parsed without either. Nor the spider side's modules
    (subprocess, multiprocessing) or the selector and state writer (~4 MB in all)."""
    spider_side = (
        "asyncio",
        "ssl",
        "lxml",
        "subprocess",
        "multiprocessing",
        "discovery_crawler.output.state",
        "discovery_crawler.selection.selector",
    )
    code = (
        "import sys; from discovery_crawler.sitemaps import worker; "
        f"print(sorted(set({spider_side!r}) & set(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


def test_the_worker_started_early_is_used_and_closed(serve, tmp_path):
    """SITEMAP_WORKER_EARLY (the massive profile): the worker starts with the spider, parses
    the big documents, and the inventory is the one in-process parsing gives."""
    from tests.conftest import run_discover

    server = serve(tmp_path / "site")
    _mixed_site(tmp_path / "site", server.url("").rstrip("/"))
    url = server.url("/sitemap_index.xml")
    one = {"SITEMAP_CONCURRENCY": 1, "CONCURRENT_REQUESTS": 1, "SITEMAP_PARSE_CONCURRENCY": 1}
    early = {"SITEMAP_WORKER_EARLY": True, "SITEMAP_WORKER_MIN_BYTES": 1}
    on = run_discover(url, tmp_path / "on", settings={**one, **early})
    off = run_discover(url, tmp_path / "off", settings={**one, "SITEMAP_PARSE_WORKER": False})
    assert on.returncode == 0 and off.returncode == 0, on.stderr[-3000:] + off.stderr[-3000:]
    assert "'discovery/sitemaps/worker_started': True" in on.stderr
    assert "'discovery/sitemaps/worker_documents': 4" in on.stderr
    assert _feed_lines(on) == _feed_lines(off)
    unused = run_discover(
        url, tmp_path / "unused", settings={"SITEMAP_WORKER_EARLY": True, **one}
    )  # every document under the size threshold: started, never sent one, closed
    assert unused.returncode == 0, unused.stderr[-3000:]
    assert "'discovery/sitemaps/worker_started': True" in unused.stderr
    assert "worker_documents" not in unused.stderr
    assert _feed_lines(unused) == _feed_lines(off)


def test_batches_normalized_before_the_site_was_named_are_normalized_again(serve, tmp_path):
    """The sitemaps live on another host than the site (as on a CDN), so the site is named
    by the first batch, after two big documents went to the worker: www twins of the site
    in later batches of both must be rewritten to the site, as in-process."""
    from tests.conftest import run_discover

    root = tmp_path / "site"
    root.mkdir()
    server = serve(root)
    origin = server.url("").rstrip("/")
    twin = origin.replace("://", "://www.")
    children = []
    for c in range(2):
        locs = [f"{origin}/s{c}/p-{i}/" for i in range(12_000)]
        for i in range(6_000, 12_000, 500):
            locs[i] = f"{twin}/s{c}/twin-{i}/"
        (root / f"s-{c}.xml.gz").write_bytes(gzip.compress(urlset(locs)))
        children.append(f"<sitemap><loc>/s-{c}.xml.gz</loc></sitemap>")
    (root / "sitemap_index.xml").write_text(
        '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        + "".join(children)
        + "</sitemapindex>"
    )
    cdn = server.url("/sitemap_index.xml").replace("127.0.0.1", "localhost")
    result = run_discover(cdn, tmp_path, settings={"SITEMAP_WORKER_MIN_BYTES": 1})
    assert result.returncode == 0, result.stderr[-3000:]
    assert "'discovery/sitemaps/worker_documents': 3" in result.stderr
    assert result.discovery["other_hosts"] == {}
    twins = [u for u in result.urls if "/twin-" in u]
    assert len(twins) == 24 and all(u.startswith(origin + "/") for u in twins)
    assert len(result.records) == 24_000


def test_union_mode_finds_the_same_with_and_without_the_worker(serve, tmp_path):
    """Union mode (sitemap URLs seed the link crawl): the same URLs with the same sources,
    kinds, flags, slugs and fetches. Which sitemap lists a URL first may differ: documents
    and page fetches interleave differently when parsing happens elsewhere."""
    from tests.conftest import run_discover

    server = serve(tmp_path / "site")
    _mixed_site(tmp_path / "site", server.url("").rstrip("/"))
    url = server.url("/sitemap_index.xml")
    args = ("-a", "mode=union", "-a", "max_pages=50")
    one = {"SITEMAP_CONCURRENCY": 1, "CONCURRENT_REQUESTS": 1, "SITEMAP_PARSE_CONCURRENCY": 1}
    on = run_discover(url, tmp_path / "on", *args, settings={**one, "SITEMAP_WORKER_MIN_BYTES": 1})
    off = run_discover(url, tmp_path / "off", *args, settings={**one, "SITEMAP_PARSE_WORKER": 0})
    assert on.returncode == 0 and off.returncode == 0, on.stderr[-3000:] + off.stderr[-3000:]

    def facts(records: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        return sorted(
            (
                r["url"],
                tuple(sorted(r["sources"] or [])),
                r["kind"],
                tuple(r["flags"] or []),
                r["slug"],
                r["change"],
                r.get("status"),
                r.get("via"),
            )
            for r in records
        )

    assert len(on.records) > 9_000 and facts(on.records) == facts(off.records)
    assert _summary(on)["discovery"] == _summary(off)["discovery"]


@pytest.mark.parametrize("feed", ["inventory.csv", "inventory.json"])
def test_csv_and_json_feeds_are_the_same_with_and_without_the_worker(serve, tmp_path, feed):
    from tests.conftest import run_discover

    server = serve(realdata("sitemaps", "stormcrawler"))
    url = server.url("/tripadvisor.sitemap.xml.gz")
    on = run_discover(url, tmp_path / "on", feed=feed, settings={"SITEMAP_WORKER_MIN_BYTES": 1})
    off = run_discover(url, tmp_path / "off", feed=feed, settings={"SITEMAP_PARSE_WORKER": 0})
    assert on.returncode == 0 and off.returncode == 0, on.stderr[-3000:] + off.stderr[-3000:]
    lines = on.raw_feed.splitlines()
    assert len(lines) > 50_000 and "_facts" not in on.raw_feed
    assert sorted(lines) == sorted(off.raw_feed.splitlines())


def _big_site(root: Path, children: int, per_child: int) -> int:
    root.mkdir(parents=True, exist_ok=True)
    index = "".join(f"<sitemap><loc>/s-{c}.xml.gz</loc></sitemap>" for c in range(children))
    (root / "sitemap_index.xml").write_text(
        '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        + index
        + "</sitemapindex>"
    )
    for c in range(children):
        locs = [f"/section-{c}/article-{c}-{i}/" for i in range(per_child)]
        (root / f"s-{c}.xml.gz").write_bytes(gzip.compress(urlset(locs)))
    return children * per_child


def test_the_tables_are_sized_once_for_the_urls_the_sitemaps_promise(serve, tmp_path):
    """After the first urlset the spider expects 4 × 25,000 URLs (``urls_expected``,
    the stat ``discovery/tables/sized_for_urls``): the
    slug table resizes once, to 166,667 slots, where growing by half as URLs arrive takes two
    resizes (at 45,875 and 68,812 of its first 65,536 and 98,304 slots) to 147,456 slots;
    the inventory is the same."""
    from tests.conftest import run_discover

    total = _big_site(tmp_path / "site", children=4, per_child=25_000)
    server = serve(tmp_path / "site")
    url = server.url("/sitemap_index.xml")
    one = {"SITEMAP_CONCURRENCY": 1, "SITEMAP_PARSE_CONCURRENCY": 1, "LOG_LEVEL": "INFO"}
    sized = run_discover(url, tmp_path / "sized", settings=one)
    grown = run_discover(url, tmp_path / "grown", settings={**one, "INVENTORY_RESERVE_URLS": 0})
    assert sized.returncode == 0 and grown.returncode == 0, sized.stderr[-3000:]
    assert "'discovery/tables/sized_for_urls': 100000," in sized.stderr
    assert "'discovery/tables/slugs_resizes': 1," in sized.stderr
    assert "'discovery/tables/slugs_bytes': 1111112," in sized.stderr  # 100,000 / 0.72 slots
    assert "sized_for_urls" not in grown.stderr
    assert "'discovery/tables/slugs_resizes': 2," in grown.stderr
    assert "'discovery/tables/slugs_bytes': 1179648," in grown.stderr  # 147,456 slots
    assert "'discovery/tables/seen_resizes': 0," in sized.stderr  # 1M slots hold 100k
    assert len(sized.urls) == total
    assert _feed_lines(sized) == _feed_lines(grown)


def test_a_worker_killed_mid_document_loses_nothing(serve, tmp_path):
    total = _big_site(tmp_path / "site", children=3, per_child=20_000)
    server = serve(tmp_path / "site")
    from tests.conftest import run_discover

    result = run_discover(
        server.url("/sitemap_index.xml"),
        tmp_path,
        settings={"SITEMAP_WORKER_MIN_BYTES": 1, "LOG_LEVEL": "INFO"},
        command=[sys.executable, str(ROOT / "tests" / "probes" / "worker_death.py")],
    )
    assert result.returncode == 0, result.stderr[-3000:]
    urls = result.urls
    assert len(urls) == len(set(urls)) == total
    notes = " ".join(result.discovery["notes"])
    assert "sitemap worker: the worker process exited; parsing in-process instead" in notes
    assert "'discovery/sitemaps/worker_failed': 1," in result.stderr  # said once
    assert result.stderr.count("ERROR: sitemap worker:") == 1


def test_a_spider_closed_early_stops_its_busy_worker(serve, tmp_path):
    """CLOSESPIDER_ITEMCOUNT closes the spider while the worker is mid-tree: the run ends
    promptly (a busy worker is killed, not waited for), says why it finished, and what was
    in flight is written once."""
    _big_site(tmp_path / "site", children=4, per_child=20_000)
    server = serve(tmp_path / "site")
    from tests.conftest import run_discover

    started = time.monotonic()
    result = run_discover(
        server.url("/sitemap_index.xml"),
        tmp_path,
        settings={"SITEMAP_WORKER_MIN_BYTES": 1, "CLOSESPIDER_ITEMCOUNT": 1},
        timeout=60,
    )
    assert result.returncode == 5, result.stderr[-3000:]  # bounded: CLOSESPIDER_ITEMCOUNT
    assert result.run["finish_reason"] == "closespider_itemcount"
    assert 0 < len(result.records) == len(set(result.urls)) <= 80_000
    assert time.monotonic() - started < 30
    assert "Traceback" not in result.stderr


def test_small_sitemaps_never_start_a_worker(serve, discover):
    server = serve(realdata("sitemaps", "crawler-commons"))
    result = discover(server.url("/sitemap.ns.xml"), settings={"LOG_LEVEL": "INFO"})
    assert result.returncode == 0 and len(result.records) == 2
    assert "worker_documents" not in result.stderr


@pytest.mark.parametrize("compiled", [True, False], ids=["c", "python"])
def test_a_stage_that_changes_a_url_gets_a_line_of_its_own(compiled, monkeypatch):
    """On a batch the worker worked out, a stage moves a record to another URL and changes
    another's lastmod: the feed shows the new values (the worker's heads stand for the
    others only), and the facts that depended on them stand aside (slug, kind, score are
    worked out again), on the C path and the Python path."""
    from discovery_crawler.output import feed_lines
    from discovery_crawler.sitemaps import facts as facts_module
    from discovery_crawler.sitemaps.facts import FROM_LISTING, FROM_RATING, FROM_URL, worked_records

    if compiled and feed_lines._lines is None:
        if IN_CI:  # in CI a missing build is a failure, never a skip
            pytest.fail("output/_lines.c was not built: the C path cannot be tested")
        pytest.skip("output/_lines.c was not built here (in CI this is a failure)")
    if not compiled:
        monkeypatch.setattr(feed_lines, "_lines", None)
        monkeypatch.setattr(facts_module, "_lines", None)
    entries = [(f"{SITE}/blog/post-{i}/", "2026-01-01", "weekly", "0.8", "") for i in range(20)]
    batch = worked_batch(entries, BASE, Tools(RunContext(site=SITE)))
    batch = pickle.loads(pickle.dumps(batch, pickle.HIGHEST_PROTOCOL))
    worked = worked_records(batch, "sitemap", BASE, SITE + "/")
    assert worked is not None
    records = worked.records
    moved = f"{SITE}/moved/elsewhere-3/"
    records[3]["url"] = moved
    records[5]["lastmod"] = "2027-02-02"
    lines = [json.loads(line) for line in json_lines(records).splitlines()]
    assert lines[3]["url"] == moved
    assert lines[5]["lastmod"] == "2027-02-02"
    plain = [{k: v for k, v in rec.items() if k != FACTS} for rec in records]
    assert json_lines(records) == json_lines(plain)  # as if nothing had been worked out
    for checks in (FROM_URL, FROM_RATING, FROM_LISTING):
        held = holding(records, checks)
        assert held[3] is None and held[4] is not None
    assert holding(records, FROM_URL)[5] is not None  # the lastmod is not in its slug
    assert holding(records, FROM_LISTING)[5] is None  # ... but is in its line


def test_a_stage_that_changes_urls_in_a_real_crawl(serve, tmp_path):
    """A stage between normalize and dedup moves some URLs of each batch: with the worker
    the feed, the slugs and the account are those of the in-process crawl, and show the
    moved URLs."""
    from discovery_crawler.settings import ITEM_PIPELINES
    from tests.conftest import run_discover

    server = serve(tmp_path / "site")
    _mixed_site(tmp_path / "site", server.url("").rstrip("/"))
    url = server.url("/sitemap_index.xml")
    stages = {**ITEM_PIPELINES, "tests.probes.url_rewrite.MoveSomeUrls": 150}
    one = {"SITEMAP_CONCURRENCY": 1, "CONCURRENT_REQUESTS": 1, "SITEMAP_PARSE_CONCURRENCY": 1}
    one["ITEM_PIPELINES"] = json.dumps(stages)
    for lines in (False, True):
        worker = {"SITEMAP_WORKER_MIN_BYTES": 1, "SITEMAP_WORKER_LINES": lines}
        on = run_discover(url, tmp_path / f"on-{lines}", settings={**one, **worker})
        off = run_discover(
            url, tmp_path / f"off-{lines}", settings={**one, "SITEMAP_PARSE_WORKER": False}
        )
        assert on.returncode == 0 and off.returncode == 0, on.stderr[-3000:] + off.stderr[-3000:]
        assert "'discovery/sitemaps/worker_documents': 4" in on.stderr
        moved = [r for r in on.records if "/moved-" in r["url"]]
        assert len(moved) > 1000
        assert all("moved-" in r["slug"] for r in moved)
        assert _feed_lines(on) == _feed_lines(off)
        assert _summary(on) == _summary(off)
        assert _state_entries(on) == _state_entries(off)


def test_conventional_guesses_still_out_do_not_multiply_the_urls_expected(serve, tmp_path):
    """A homepage's walk asks the conventional addresses one host interval apart; when
    ``/sitemap.xml`` answers first, the other guesses (most answer 404) are not counted
    as documents like it: 20 URLs expected, not 20 × 6."""
    from tests.conftest import run_discover, serve_pages_sitemap

    sitemap = serve_pages_sitemap(serve, tmp_path / "site", 20)
    home = sitemap.removesuffix("sitemap.xml")
    result = run_discover(home, tmp_path, settings={"HOST_INTERVAL": 0.3})
    assert result.returncode == 0, result.stderr[-3000:]
    assert "'discovery/tables/sized_for_urls': 20," in result.stderr
