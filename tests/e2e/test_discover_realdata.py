"""The real spider on real sitemaps from ../shared/realdata, served on 127.0.0.1.

Expected counts were computed independently (Scrapy's own ``Sitemap`` parser, ``urljoin``
and a set) and agree with ../shared/realdata/MANIFEST.md.
"""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import realdata


@pytest.mark.parametrize(
    ("folder", "path", "expected"),
    [
        # Yoast + Simply Static: relative ./ locs in the index and in all ten urlsets.
        ("wordpress-yoast-simplystatic-360muslimexperts", "/sitemap_index.xml", 173),
        # Hugo multilingual: root-relative index children and locs, relative hreflang.
        ("hugo-multilingual-ayatoashihara", "/sitemap.xml", 134),
        # 50,000 URLs, gzip; every entry has an android-app:// alternate (not a page).
        ("stormcrawler", "/tripadvisor.sitemap.xml.gz", 50_000),
        # sitemap.js output, gzip, 36,005 URLs on one line.
        ("sitemapjs-refinebio", "/sitemap-1.xml.gz", 36_005),
        # Named .gz but plain XML.
        ("advertools", "/regular_sitemap.xml.gz", 5),
        ("crawler-commons", "/sitemap.ns.xml", 2),  # prefixed namespace (sit:)
        ("crawler-commons", "/sitemap.badns.xml", 2),  # old Google namespace
        ("crawler-commons", "/sitemap.txt", 2),
        ("crawler-commons", "/sitemap.txt.gz", 5),
        ("crawler-commons", "/sitemap-with-bom.txt", 2),
        ("crawler-commons", "/atom.xml", 1),
        ("stormcrawler", "/stormcrawler.rss", 6),
        ("mkdocs-23people", "/sitemap.xml.gz", 165),
        ("rails-sitemap_generator-bitrise-blog", "/d8892ca/sitemap1.xml.gz", 393),
    ],
)
def test_real_sitemap_exact_count(serve, discover, folder, path, expected):
    """Each real sitemap yields exactly its number of distinct URLs; every one is either a
    feed line or a counted drop with its reason (nothing vanishes)."""
    server = serve(realdata("sitemaps", folder))
    result = discover(server.url(path))
    assert result.returncode == 0, result.stderr[-3000:]
    counts = result.discovery["counts"]
    assert counts["unique"] == expected
    filtered = result.discovery["filtered"]
    dropped = sum(v["count"] for r, v in filtered.items() if r != "other_host")
    assert len(result.records) == counts["discovered"] == expected - dropped
    assert len(set(result.urls)) == len(result.records)
    assert all(a["ok"] for a in result.discovery["sitemap_attempts"] if a["status"] == 200)


def test_relative_locs_resolve_against_each_sitemap(serve, discover):
    """360muslimexperts: ./child.xml and ./page/index.html resolve on the serving origin."""
    server = serve(realdata("sitemaps", "wordpress-yoast-simplystatic-360muslimexperts"))
    result = discover(server.url("/sitemap_index.xml"))
    assert {a["source"] for a in result.discovery["sitemap_attempts"]} == {"input", "index"}
    assert len(result.discovery["sitemap_attempts"]) == 11
    assert server.url("/about-us/index.html") in result.urls
    assert all(u.startswith(server.origin + "/") for u in result.urls)


def test_hreflang_alternates_captured_and_deduplicated(serve, discover):
    """Hugo: alternates are on the record, resolved; alternates that are also locs appear once."""
    server = serve(realdata("sitemaps", "hugo-multilingual-ayatoashihara"))
    result = discover(server.url("/sitemap.xml"))
    with_alternates = [r for r in result.records if r["alternates"]]
    assert with_alternates, "hreflang alternates were not captured"
    langs = {a["hreflang"] for r in with_alternates for a in r["alternates"]}
    assert {"en", "ja"} <= langs
    assert all(
        a["href"].startswith(server.origin) for r in with_alternates for a in r["alternates"]
    )
    assert result.discovery["counts"]["duplicates"] > 0  # alternates already listed as <loc>
    assert len(result.records) == 134


def test_tripadvisor_alternates_are_not_pages(serve, discover):
    """android-app:// alternates stay on the record and never enter the inventory."""
    server = serve(realdata("sitemaps", "stormcrawler"))
    result = discover(server.url("/tripadvisor.sitemap.xml.gz"))
    assert len(result.records) == 50_000
    assert all(r["url"].startswith("https://www.tripadvisor.com/") for r in result.records)
    assert result.records[0]["alternates"][0]["href"].startswith("android-app://")
    assert result.attempt("/tripadvisor.sitemap.xml.gz")["gzipped"] is True


def test_malformed_real_sitemap_is_recorded_not_fatal(serve, discover):
    """advertools/error_sitemap.xml: unclosed <url …>; the run completes and says why."""
    server = serve(realdata("sitemaps", "advertools"))
    result = discover(server.url("/error_sitemap.xml"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.records == []
    attempt = result.attempt("/error_sitemap.xml")
    assert attempt["ok"] is False
    assert "malformed" in attempt["problem"]
    assert attempt["error"]
    assert "Traceback" not in result.stderr


def test_gzip_bomb_is_refused_with_a_record(serve, discover, tmp_path):
    """scrapy's bomb-gzip.bin (inflates ~410×) past the cap: refused, recorded, run goes on."""
    site = tmp_path / "site"
    site.mkdir()
    shutil.copy(realdata("edgecases", "scrapy-compressed", "bomb-gzip.bin"), site / "bomb.xml.gz")
    server = serve(site)
    result = discover(server.url("/bomb.xml.gz"), settings={"SITEMAP_MAX_BYTES": 1_000_000})
    assert result.returncode == 0, result.stderr[-3000:]
    attempt = result.attempt("/bomb.xml.gz")
    assert attempt["ok"] is False
    assert "refused" in attempt["error"] and "1,000,000" in attempt["error"]
    assert attempt["bytes"] <= 1_000_000 + (1 << 18)


def test_truncated_gzip_is_recorded(serve, discover, tmp_path):
    """A truncated gzip stream: the attempt says so instead of crashing the walk."""
    site = tmp_path / "site"
    site.mkdir()
    source = realdata("edgecases", "scrapy-compressed", "truncated-crc-error-short.gz")
    shutil.copy(source, site / "truncated.xml.gz")
    server = serve(site)
    result = discover(server.url("/truncated.xml.gz"))
    assert result.returncode == 0, result.stderr[-3000:]
    attempt = result.attempt("/truncated.xml.gz")
    assert "truncated gzip" in attempt["problem"]


def test_index_children_on_a_staging_host_are_reported(serve, discover):
    """WordPress core wp-sitemap.xml whose children live on a staging host: each child is
    an attempt with an error, so "found 0 URLs" comes with why."""
    server = serve(realdata("sitemaps", "wordpress-core-wp-sitemap-phillyvotebymail"))
    result = discover(server.url("/wp-sitemap.xml"))
    children = [a for a in result.discovery["sitemap_attempts"] if a["source"] == "index"]
    assert len(children) == 5
    assert all(a["error"] for a in children)
    assert any("getshifter.io" in a["url"] for a in children)
    assert result.records == []


def test_profile_limits_bind_and_say_so(serve, discover):
    """Profile ``sample`` keeps 10,000 of refine.bio's 36,005 URLs and records the limit;
    ``-s`` on the command line overrides the profile."""
    server = serve(realdata("sitemaps", "sitemapjs-refinebio"))
    result = discover(server.url("/sitemap-1.xml.gz"), "-a", "profile=sample")
    assert result.returncode == 5, result.stderr[-3000:]  # bounded: a sample, and it says so
    assert result.run["status"] == "bounded"
    assert result.discovery["counts"]["unique"] == 10_000
    assert result.run["input"]["profile"] == "sample"
    limit = {lim["limit"]: lim for lim in result.discovery["limits"]}["SITEMAP_MAX_URLS"]
    assert limit["value"] == 10_000 and limit["kept"] == 10_000 and limit["seen"] == 36_005
    assert "Limit bound: SITEMAP_MAX_URLS" in result.stderr

    override = discover(
        server.url("/sitemap-1.xml.gz"), "-a", "profile=sample", settings={"SITEMAP_MAX_URLS": 500}
    )
    assert override.discovery["counts"]["unique"] == 500


def test_refinebio_records_are_not_junk(serve, discover, tmp_path):
    """refine.bio's 36,005 experiments: records whose titles end in "young and old" or are
    named "test" / "test1111" are real pages — kept with no flag, in both sitemaps."""
    server = serve(realdata("sitemaps", "sitemapjs-refinebio"))
    for name in ("sitemap-1.xml.gz", "sitemap-2.xml.gz"):
        result = discover(server.url(f"/{name}"), out=tmp_path / name)
        assert result.returncode == 0, result.stderr[-3000:]
        assert result.discovery["flagged_as_junk"]["count"] == 0
        assert not [r for r in result.records if r["flags"] or "junk_pattern" in r]
        assert "likely junk" not in result.stderr
    by_path = {r["url"].split("/", 3)[3]: r for r in result.records}
    assert by_path["experiments/SRP149025/test1111"]["kind"] == "page"
