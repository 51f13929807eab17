"""The sitemap writer (``discovery_crawler/output/sitemap_writer.py``): parts at the
protocol's limits, valid against the sitemaps.org schemas, escaping and encoding, what is
left out, and the changes against the site's own sitemaps."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lxml import etree

from discovery_crawler.output.sitemap_writer import (
    RunFolderError,
    check_base,
    escape,
    finished_run,
    write_sitemaps,
    xsd_lastmod,
)
from tests.conftest import FIXTURES, IN_CI

SCHEMAS = FIXTURES / "sitemap_schema"
SITE = "https://example.com"
BASE = "https://example.com/sitemaps/"
NS = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9", "x": "http://www.w3.org/1999/xhtml"}


def schema(name: str) -> etree.XMLSchema:
    return etree.XMLSchema(etree.parse(str(SCHEMAS / name)))


URLSET = schema("xhtml_link.xsd")  # sitemap.xsd, with xhtml:link declared
INDEX = schema("siteindex.xsd")


def inventory(tmp_path: Path, records: list[dict]) -> Path:
    path = tmp_path / "inventory.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def page(path: str, **fields) -> dict:
    return {"url": SITE + path, "status": 200, "refusal": None, **fields}


def read_part(path: Path) -> etree._ElementTree:
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    return etree.ElementTree(etree.fromstring(data))


def locs(paths: list[Path]) -> list[str]:
    return [e.text for p in paths for e in read_part(p).iterfind(".//s:loc", NS)]


def test_indexable_pages_written_and_others_dropped_with_reasons(tmp_path):
    records = [
        page("/", sitemap="s", lastmod="2024-01-02T03:04+02:00"),
        page("/new/"),  # linked only: added
        page("/hidden/", sitemap="s", flags=["noindex"]),
        page("/moved", sitemap="s", status=301, redirected_to=SITE + "/moved/"),
        page("/copy/", sitemap="s", flags=["canonical_elsewhere"], canonical=SITE + "/"),
        page("/gone/", sitemap="s", status=404),
        {"url": SITE + "/listed-only/", "sitemap": "s", "lastmod": "2024"},
        {"url": SITE + "/private/", "sitemap": "s", "flags": ["robots_disallowed"]},
    ]
    out = tmp_path / "sitemaps"
    written = write_sitemaps(inventory(tmp_path, records), out, SITE, BASE)
    assert locs(written.parts) == [SITE + "/", SITE + "/new/"]
    assert read_part(written.parts[0]).findtext(".//s:lastmod", namespaces=NS) == (
        "2024-01-02T03:04:00+02:00"
    )
    changes = written.changes
    assert (changes.kept, changes.added) == (1, 1)
    assert dict(changes.dropped) == {
        "noindex": 1,
        "redirect": 1,
        "canonical_elsewhere": 1,
        "status": 1,
        "unfetched": 1,
        "robots_disallowed": 1,
    }
    text = (out / "changes.txt").read_text()
    assert f"+ {SITE}/new/\n" in text
    assert f"- {SITE}/hidden/\tnoindex\n" in text
    assert text.startswith("# Sitemap: 2 URLs in 1 file(s); against the site's sitemaps: 1 added")
    assert json.loads((out / "changes.json").read_text())["dropped"]["count"] == 6
    # --include-unfetched: the listed page nothing contradicts is written too
    again = write_sitemaps(inventory(tmp_path, records), out, SITE, BASE, include_unfetched=True)
    assert SITE + "/listed-only/" in locs(again.parts)
    assert SITE + "/private/" not in locs(again.parts)


def test_parts_split_at_the_url_and_byte_limits_and_the_index_names_them(tmp_path):
    records = [page(f"/p{i}/") for i in range(25)]
    out = tmp_path / "s"
    written = write_sitemaps(inventory(tmp_path, records), out, SITE, BASE, max_urls=10)
    assert [p.name for p in written.parts] == ["sitemap-1.xml", "sitemap-2.xml", "sitemap-3.xml"]
    assert [len(locs([p])) for p in written.parts] == [10, 10, 5]
    index = etree.parse(str(written.index))
    assert INDEX.validate(index), INDEX.error_log
    assert [e.text for e in index.iterfind(".//s:loc", NS)] == [
        BASE + p.name for p in written.parts
    ]
    by_bytes = write_sitemaps(inventory(tmp_path, records), out, SITE, BASE, max_bytes=1000)
    assert all(p.stat().st_size <= 1000 for p in by_bytes.parts)
    assert locs(by_bytes.parts) == [r["url"] for r in records]
    assert len(list(out.glob("sitemap-*.xml"))) == len(by_bytes.parts)  # old parts gone


def test_gzip_parts_and_schema_validity_with_escaping_idn_and_alternates(tmp_path):
    site = "https://bücher.example"
    records = [
        {
            "url": site + "/a?x=1&y='2'",
            "status": 200,
            "sitemap": "s",
            "alternates": [
                {"hreflang": "de", "href": site + "/de/ä"},
                {"hreflang": "fr", "href": "https://other.example/fr/"},
            ],
        },
        {"url": site + "/caf\u00e9 menu/", "status": 200},
    ]
    out = tmp_path / "s"
    written = write_sitemaps(
        inventory(tmp_path, records), out, site, "https://xn--bcher-kva.example/s/", gzipped=True
    )
    assert written.parts[0].name == "sitemap-1.xml.gz"
    tree = read_part(written.parts[0])
    assert URLSET.validate(tree), URLSET.error_log
    assert locs(written.parts) == [
        "https://xn--bcher-kva.example/a?x=1&y='2'",
        "https://xn--bcher-kva.example/caf%C3%A9%20menu/",
    ]
    raw = gzip.decompress(written.parts[0].read_bytes()).decode()
    assert "&amp;y=&apos;2&apos;" in raw
    links = tree.findall(".//x:link", NS)
    assert [(e.get("hreflang"), e.get("href")) for e in links] == [
        ("de", "https://xn--bcher-kva.example/de/%C3%A4")
    ]
    assert written.changes.alternates_dropped == 1


def test_urls_that_cannot_be_written_are_left_out_counted_listed(tmp_path):
    long = SITE + "/" + "a" * 2100
    records = [
        page("/ok/"),
        {**page("/x"), "url": long, "sitemap": "s"},
        page("/y", url="https://other.example/y"),
    ]
    written = write_sitemaps(inventory(tmp_path, records), tmp_path / "s", SITE, BASE)
    assert locs(written.parts) == [SITE + "/ok/"]
    assert dict(written.changes.excluded) == {"too_long": 1, "other_host": 1}
    assert {i["reason"] for i in written.changes.excluded_items} == {"too_long", "other_host"}
    assert written.changes.dropped["too_long"] == 1  # listed: dropped, with its reason


def test_empty_inventory_writes_a_valid_empty_set(tmp_path):
    written = write_sitemaps(inventory(tmp_path, []), tmp_path / "s", SITE, BASE)
    assert written.urls == 0 and len(written.parts) == 1
    assert etree.parse(str(written.parts[0])).getroot().tag.endswith("urlset")


@pytest.mark.skipif(  # never in CI: there the test runs (and fails) without xmllint
    not shutil.which("xmllint") and not IN_CI,
    reason="xmllint not installed (libxml2-utils): outside CI this skips, in CI it fails",
)
def test_xmllint_accepts_the_parts_and_index(tmp_path):
    written = write_sitemaps(
        inventory(tmp_path, [page("/a&b/", alternates=[{"hreflang": "en", "href": SITE + "/"}])]),
        tmp_path / "s",
        SITE,
        BASE,
    )
    for xsd, path in (
        (SCHEMAS / "xhtml_link.xsd", written.parts[0]),
        (SCHEMAS / "siteindex.xsd", written.index),
    ):
        done = subprocess.run(
            ["xmllint", "--noout", "--schema", str(xsd), str(path)], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr


@given(
    st.datetimes(min_value=datetime(1000, 1, 1), timezones=st.none()),
    st.sampled_from(["", "Z", "+02:00", "-0530"]),
    st.booleans(),
)
def test_lastmod_becomes_a_schema_date_or_datetime(when, zone, seconds):
    text = when.strftime("%Y-%m-%dT%H:%M" + (":%S" if seconds else "")) + zone
    value = xsd_lastmod(text)
    assert value is not None
    doc = etree.fromstring(
        f'<urlset xmlns="{NS["s"]}"><url><loc>https://example.com/</loc>'
        f"<lastmod>{value}</lastmod></url></urlset>"
    )
    assert URLSET.validate(doc), (text, value, URLSET.error_log)


def test_lastmod_that_is_no_day_is_dropped():
    assert xsd_lastmod("2024") is None
    assert xsd_lastmod("2024-05") is None
    assert xsd_lastmod("yesterday") is None
    assert xsd_lastmod("2024-05-06") == "2024-05-06"
    assert xsd_lastmod("2024-02-30") is None
    assert xsd_lastmod("2024-02-03T25:00Z") is None


@given(st.text())
def test_escape_round_trips_through_an_xml_parser(text):
    text = "".join(c for c in text if c.isprintable())  # XML 1.0 characters only
    doc = etree.fromstring(f"<a b='{escape(text)}'>{escape(text)}</a>".encode())
    assert (doc.text or "") == text
    assert doc.get("b") == text


def test_base_on_another_origin_is_refused_unless_cross_origin():
    assert check_base("https://example.com/maps", SITE, False) == "https://example.com/maps/"
    with pytest.raises(ValueError, match=r"another origin.*--cross-origin"):
        check_base("https://cdn.example.net/maps/", SITE, False)
    assert check_base("https://cdn.example.net/maps/", SITE, True)
    with pytest.raises(ValueError, match="http"):
        check_base("ftp://example.com/", SITE, False)


def test_a_folder_without_a_finished_run_is_refused(tmp_path):
    with pytest.raises(RunFolderError, match=r"no _crawl-log\.json"):
        finished_run(tmp_path)
    (tmp_path / "_crawl-log.json").write_text(json.dumps({"runs": [{"status": "interrupted"}]}))
    with pytest.raises(RunFolderError, match=r"did not finish \(status interrupted"):
        finished_run(tmp_path)
    (tmp_path / "_crawl-log.json").write_text(json.dumps({"runs": [{"status": "bounded"}]}))
    assert finished_run(tmp_path)["status"] == "bounded"


def test_an_unlisted_page_takes_its_last_modified_as_lastmod(tmp_path):
    """The listing's lastmod first; a page no listing dated takes its Last-Modified."""
    records = [
        page("/dated/", sitemap="s", lastmod="2024-05-01", last_modified="2025-01-02T03:04:05Z"),
        page("/linked/", last_modified="2025-01-02T03:04:05Z"),
        page("/bare/"),
    ]
    written = write_sitemaps(inventory(tmp_path, records), tmp_path / "s", SITE, BASE)
    got = {
        u.findtext("s:loc", namespaces=NS): u.findtext("s:lastmod", namespaces=NS)
        for u in read_part(written.parts[0]).iterfind(".//s:url", NS)
    }
    assert got == {
        SITE + "/dated/": "2024-05-01",
        SITE + "/linked/": "2025-01-02T03:04:05Z",
        SITE + "/bare/": None,
    }


def test_parts_split_at_the_protocols_own_limits(tmp_path):
    """The defaults are the protocol's: 50,000 URLs a file, and 50 MB (52,428,800 bytes)
    uncompressed a file, gzipped or not."""
    path = tmp_path / "inventory.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for i in range(50_001):
            out.write(f'{{"url": "{SITE}/p/{i}/", "status": 200}}\n')
    by_count = write_sitemaps(path, tmp_path / "n", SITE, BASE, gzipped=True)
    assert [p.name for p in by_count.parts] == ["sitemap-1.xml.gz", "sitemap-2.xml.gz"]
    assert [len(locs([p])) for p in by_count.parts] == [50_000, 1]
    long = "/" + "y" * 2000  # ~2,060 bytes an entry: 50 MB is ~25,450 of them
    with path.open("w", encoding="utf-8") as out:
        for i in range(26_000):
            out.write(f'{{"url": "{SITE}/{i}{long}", "status": 200}}\n')
    by_size = write_sitemaps(path, tmp_path / "b", SITE, BASE)
    sizes = [p.stat().st_size for p in by_size.parts]
    assert len(sizes) == 2 and max(sizes) <= 50 * 1024 * 1024
    assert sizes[0] > 50 * 1024 * 1024 - 2100  # full: the next entry would not fit
    assert sum(len(locs([p])) for p in by_size.parts) == 26_000
