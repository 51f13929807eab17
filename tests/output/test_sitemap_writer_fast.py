"""The sitemap writer's fast path (msgspec decoding only the fields it reads, entries
formatted and written in batches) writes the same bytes as the plain path (json.loads of
every line) and as the writer before it (``sitemap_writer_v1.py``, frozen), on the inputs
where one could slip: IDN, percent-encoding, the five escaped characters, hreflang
alternates, lastmod forms, URLs over 2,048 characters, other hosts, lines msgspec refuses,
splits at the URL and byte limits, gzip."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from discovery_crawler.output import sitemap_writer
from tests.output import sitemap_writer_v1

SITE = "https://example.com"
BASE = "https://example.com/sitemaps/"
NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def page(url: str, **fields) -> dict:
    return {"url": url, "status": 200, "refusal": None, "sitemap": f"{SITE}/s.xml", **fields}


TRICKY = [
    page(SITE + "/"),
    page(SITE + "/a?x=1&y='2'&z=\"3\"<4>", lastmod="2024-01-02"),
    page(SITE + "/caf\u00e9 menu/", lastmod="2024-01-02T03:04+0200"),
    page(SITE + "/it's/"),
    page(SITE + '/say-"hi"/'),
    page("https://b\u00fccher.example/x", lastmod="2024-01-02T03:04:05.123Z"),  # other host
    page(SITE + "/%E2%82%AC/already-encoded", lastmod="2024-02-30"),  # no such day
    page(SITE + "/long/" + "a" * 2100),
    page(SITE + "/long-unlisted/" + "b" * 2100, sitemap=None),
    page("https://other.example/page"),
    page("https://EXAMPLE.com/upper-host"),
    page(SITE + "/ctl\u0001char"),
    page(SITE + "/tab\there"),
    page(SITE + "/linked-only/", sitemap=None, last_modified="2025-01-02T03:04:05Z"),
    page(SITE + "/sources-only/", sitemap=None, sources=[SITE + "/s.xml"]),
    page(
        SITE + "/en/",
        lastmod="2024-03-04T05:06:07-05:00",
        alternates=[
            {"hreflang": "de", "href": SITE + "/de/\u00e4?a=1&b=2"},
            {"hreflang": "x-default", "href": SITE + "/"},
            {"hreflang": "fr", "href": "https://other.example/fr/"},
            {"hreflang": "\u65e5\u672c", "href": SITE + "/ja/"},
            {"hreflang": "it", "href": SITE + "/it/" + "c" * 2100},
            {"hreflang": "es"},
        ],
    ),
    page(
        SITE + "/alts-all-dropped/", alternates=[{"hreflang": "fr", "href": "https://o.example/"}]
    ),
    page(SITE + "/noindex/", flags=["noindex"]),
    page(SITE + "/moved", status=301, redirected_to=SITE + "/moved/"),
    page(SITE + "/refresh/", flags=["meta_refresh"]),
    page(SITE + "/canonical/", canonical=SITE + "/"),
    page(SITE + "/gone/", status=404),
    page(SITE + "/wall/", refusal={"class": "login"}),
    page(SITE + "/shell/", refusal={"class": "shell"}),
    page(SITE + "/timeout/", status=None, refusal={"class": "timeout"}),
    {"url": SITE + "/listed-unfetched/", "sitemap": SITE + "/s.xml", "lastmod": "2024"},
    {"url": SITE + "/junk/", "sitemap": SITE + "/s.xml", "flags": ["junk"]},
    {"url": SITE + "/private/", "sources": [SITE + "/s.xml"], "flags": ["robots_disallowed"]},
    page(SITE + "/float-status/", status=200.0),
    page(SITE + "/big/", status=10**30),
    {"url": 5, "status": 200},
    {"status": 200},
]
# Lines msgspec refuses and json reads (or neither): they go down the plain path.
ODD_LINES = [
    '{"url": "https://example.com/nan/", "status": 200, "score": NaN}',
    '{"url": "https://example.com/inf/", "status": 200, "score": 1e400}',
    '\ufeff{"url": "https://example.com/bom/", "status": 200}',
    '{"url": "https://example.com/dup-key/", "url": "https://example.com/dup-2/", "status": 200}',
    "",
    "not json",
    "[1, 2]",
]


def lines_of(records: list[dict], odd: list[str] = ()) -> str:
    return "".join(json.dumps(r) + "\n" for r in records) + "".join(x + "\n" for x in odd)


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def write(module, inventory: Path, out: Path, **options) -> dict[str, bytes]:
    module.write_sitemaps(inventory, out, SITE, BASE, now=NOW, **options)
    return files(out)


OPTIONS = [
    {},
    {"include_unfetched": True},
    {"gzipped": True},
    {"max_urls": 3},
    {"max_bytes": 400},
]


@pytest.mark.parametrize("options", OPTIONS)
def test_fast_path_writes_the_bytes_of_the_plain_path_and_of_the_writer_before(tmp_path, options):
    inventory = tmp_path / "inventory.jsonl"
    inventory.write_text(lines_of(TRICKY * 3) + '{"url": "https://example.com/torn', "utf-8")
    fast = write(sitemap_writer, inventory, tmp_path / "fast", **options)
    plain = write(sitemap_writer, inventory, tmp_path / "plain", fast=False, **options)
    before = write(sitemap_writer_v1, inventory, tmp_path / "before", **options)
    assert fast == plain
    # the same files, and the same counts: the torn line is counted now ("unreadable")
    new_counts = json.loads(fast.pop("changes.json"))
    assert new_counts.pop("unreadable") == 1
    assert new_counts == json.loads(before.pop("changes.json"))
    said = b"# Skipped 1 inventory line(s) that are no record (no JSON object, or a field of"
    lines = fast.pop("changes.txt").split(b"\n")
    assert sum(line.startswith(said) for line in lines) == 1
    assert b"\n".join(x for x in lines if not x.startswith(said)) == before.pop("changes.txt")
    assert fast == before
    assert len([n for n in fast if n.startswith("sitemap-")]) >= 1


def test_lines_msgspec_refuses_are_read_by_json_all_the_same(tmp_path):
    inventory = tmp_path / "inventory.jsonl"
    inventory.write_text(lines_of(TRICKY, ODD_LINES), "utf-8")
    fast = write(sitemap_writer, inventory, tmp_path / "fast")
    plain = write(sitemap_writer, inventory, tmp_path / "plain", fast=False)
    assert fast == plain
    part = fast["sitemap-1.xml"].decode()
    for path in ("/nan/", "/inf/", "/bom/", "/dup-2/"):
        assert f"<loc>{SITE}{path}</loc>" in part
    assert "/dup-key/" not in part  # json: the last of two keys wins; msgspec the same
    assert json.loads(fast["changes.json"])["unreadable"] == 2  # not json, a list (a blank: none)


def test_records_the_walk_never_writes_are_skipped_not_fatal(tmp_path):
    """A hand-edited inventory: a lastmod that is a list, a status that is a string,
    alternates that are no list, a lone surrogate. Counted, and the rest written."""
    hostile = [
        page(SITE + "/list-lastmod/", lastmod=["2024-01-01"]),
        page(SITE + "/str-status/", status="200"),
        page(SITE + "/odd-alts/", alternates=5),
        page(SITE + "/odd-alt/", alternates=["x", {"hreflang": "de", "href": SITE + "/de/"}]),
        page(SITE + "/surrogate-\ud800/"),
        page(SITE + "/ok/"),
        page(SITE + "/bad-port-alt/", alternates=[{"hreflang": "x", "href": SITE + ":\u00e9"}]),
        page("https://example.com:x/bad-port/"),
        page(SITE + "/digits/", lastmod="\u0662\u0660\u0662\u0664-01-01"),  # Arabic-Indic
    ]
    inventory = tmp_path / "inventory.jsonl"
    inventory.write_text(lines_of(hostile), "utf-8")
    fast = write(sitemap_writer, inventory, tmp_path / "fast")
    assert fast == write(sitemap_writer, inventory, tmp_path / "plain", fast=False)
    part = fast["sitemap-1.xml"].decode()
    assert f"<url><loc>{SITE}/list-lastmod/</loc></url>" in part
    assert f"<url><loc>{SITE}/digits/</loc></url>" in part  # no xsd:date in other digits
    assert "/str-status/" not in part and "/surrogate-" not in part
    assert f'hreflang="de" href="{SITE}/de/"' in part
    changes = json.loads(fast["changes.json"])
    assert changes["unreadable"] == 1
    assert "# Skipped 1 inventory line(s) that are no record" in fast["changes.txt"].decode()
    assert changes["excluded"]["reasons"] == {"unencodable": 1, "other_host": 1}
    assert changes["alternates_dropped"] == 1
    assert f"<url><loc>{SITE}/bad-port-alt/</loc></url>" in part
    assert changes["lastmod_dropped"] == 2


TEXT = st.text(alphabet=st.sampled_from("aZ09-_./?&=%'\"<>#~ \u00e9\u4e2d:@+"), max_size=12)


@st.composite
def record(draw) -> dict:
    rec = {
        "url": draw(st.sampled_from([SITE, "https://other.example", "https://b\u00fccher.example"]))
        + "/"
        + draw(TEXT),
        "status": draw(st.sampled_from([None, 200, 301, 404])),
    }
    for name, values in (
        ("flags", st.lists(st.sampled_from(["noindex", "junk", "meta_refresh", "x"]), max_size=2)),
        ("sitemap", st.sampled_from([None, "", SITE + "/s.xml"])),
        ("sources", st.lists(st.just(SITE + "/s.xml"), max_size=1)),
        ("lastmod", st.sampled_from([None, "", "2024-01-02", "2024-01-02T03:04Z", "2024", "x"])),
        ("last_modified", st.sampled_from([None, "2025-01-02T03:04:05Z"])),
        ("canonical", st.sampled_from([None, SITE + "/"])),
        (
            "alternates",
            st.lists(st.fixed_dictionaries({"hreflang": TEXT, "href": TEXT.map(SITE.__add__)})),
        ),
        ("title", TEXT),
    ):
        if draw(st.booleans()):
            rec[name] = draw(values)
    return rec


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(record(), max_size=20), st.sampled_from(OPTIONS))
def test_fast_and_plain_paths_agree_on_any_records(tmp_path_factory, records, options):
    folder = tmp_path_factory.mktemp("w")
    inventory = folder / "inventory.jsonl"
    inventory.write_text(lines_of(records), "utf-8")
    fast = write(sitemap_writer, inventory, folder / "fast", **options)
    assert fast == write(sitemap_writer, inventory, folder / "plain", fast=False, **options)
    try:
        before = write(sitemap_writer_v1, inventory, folder / "before", **options)
    except ValueError:  # the writer before stopped on a port that is no number
        return
    assert fast == before
