"""The Python API's pure pieces (``api.py``) and the package's lazy exports: each piece
gives what the crawl's own code gives (the parser, the normalizer, the robots policy);
``command`` builds the child's command line. ``discover`` itself runs crawls: its tests
are in ``e2e/test_python_api.py``."""

from __future__ import annotations

import gzip
import json
import re
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

import discovery_crawler
from discovery_crawler import api
from discovery_crawler.sitemaps import SitemapTooLarge, iter_sitemap
from discovery_crawler.urls.normalize import UrlError, normalize

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
segment = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=12)
paths = st.lists(segment, min_size=1, max_size=4).map(lambda parts: "/" + "/".join(parts))


def test_the_package_exports_the_api_lazily():
    from discovery_crawler import discover, normalize_url, parse_sitemap, robots_policy

    assert (discover, parse_sitemap) == (api.discover, api.parse_sitemap)
    assert (normalize_url, robots_policy) == (api.normalize_url, api.robots_policy)
    assert issubclass(discovery_crawler.BadArguments, discovery_crawler.DiscoveryError)
    assert {"discover", "robots_policy", "__version__"} <= set(dir(discovery_crawler))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        discovery_crawler.nope  # noqa: B018


# -- parse_sitemap ---------------------------------------------------------------------------
@given(st.lists(paths, min_size=1, max_size=20, unique=True), st.booleans())
def test_parse_sitemap_reads_a_urlset_as_the_crawl_does(locs, gzipped):
    body = (
        f"<urlset {NS}>"
        + "".join(f"<url><loc>{p}</loc><lastmod>2024-05-01</lastmod></url>" for p in locs)
        + "</urlset>"
    ).encode()
    base = "https://example.com/sitemap.xml"
    entries = api.parse_sitemap(gzip.compress(body) if gzipped else body, base)
    assert entries == list(iter_sitemap(body, base))
    assert [e.loc for e in entries] == [f"https://example.com{p}" for p in locs]
    assert {e.lastmod for e in entries} == {"2024-05-01"}


def test_parse_sitemap_index_children_and_formats():
    index = (
        f"<sitemapindex {NS}><sitemap><loc>/a.xml.gz</loc></sitemap>"
        "<sitemap><loc>https://example.com/b.xml</loc></sitemap></sitemapindex>"
    ).encode()
    entries = api.parse_sitemap(index, "https://example.com/sitemap_index.xml")
    assert [(e.loc, e.is_sitemap) for e in entries] == [
        ("https://example.com/a.xml.gz", True),
        ("https://example.com/b.xml", True),
    ]
    text = api.parse_sitemap(b"https://example.com/x\n\nhttps://example.com/y\n")
    assert [e.loc for e in text] == ["https://example.com/x", "https://example.com/y"]
    assert api.parse_sitemap(b"") == []


def test_parse_sitemap_refuses_a_bomb():
    bomb = gzip.compress(f"<urlset {NS}>".encode() + b" " * 2_000_000 + b"</urlset>")
    with pytest.raises(SitemapTooLarge):
        api.parse_sitemap(bomb, max_bytes=1_000_000)


# -- normalize_url ---------------------------------------------------------------------------
@given(paths, st.sampled_from(["http", "HTTPS", "https"]), st.booleans())
def test_normalize_url_is_the_crawls_and_idempotent(path, scheme, tracking):
    url = f"{scheme}://WWW.Example.COM:{443 if scheme.lower() == 'https' else 80}{path}"
    url += "?utm_source=x&b=1#frag" if tracking else ""
    once = api.normalize_url(url)
    assert once == normalize(url)
    assert api.normalize_url(once) == once
    assert once.startswith(f"{scheme.lower()}://www.example.com/") and "#" not in once
    assert "utm_source" not in once


def test_normalize_url_resolves_and_refuses():
    assert api.normalize_url("../b/./c", "https://example.com/a/x/") == "https://example.com/a/b/c"
    for bad in ("javascript:alert(1)", "http://", "http://a..b/"):
        with pytest.raises(UrlError):
            api.normalize_url(bad)
    assert issubclass(UrlError, ValueError)


# -- robots_policy ---------------------------------------------------------------------------
ROBOTS = """\
User-agent: *
Disallow: /private/
Allow: /private/open
Crawl-delay: 2
Sitemap: /sitemap_index.xml

User-agent: discovery-crawler
Disallow: /
"""


def test_robots_policy_answers_as_the_crawl():
    robots = api.robots_policy(ROBOTS, "https://example.com/robots.txt")
    assert robots.group == "*"
    assert robots.allowed("https://example.com/about")
    assert not robots.allowed("https://example.com/private/x")
    assert robots.allowed("https://example.com/private/open")
    assert robots.rule("https://example.com/private/x") == "Disallow: /private/"
    assert robots.rule("https://example.com/about") is None
    assert robots.crawl_delay == 2.0
    assert robots.sitemaps == ["https://example.com/sitemap_index.xml"]
    # another agent, by name: its own group
    assert not robots.allowed("https://example.com/about", agent="Discovery-Crawler")
    assert robots.rule("https://example.com/about", agent="discovery-crawler") == "Disallow: /"
    assert api.robots_policy(ROBOTS.encode(), agent="discovery-crawler").crawl_delay is None


@given(paths, paths)
def test_robots_policy_disallow_is_a_path_prefix(rule, path):
    robots = api.robots_policy(f"User-agent: *\nDisallow: {rule}\n")
    assert robots.allowed(f"https://example.com{path}") == (not path.startswith(rule))


# -- the child's command line ------------------------------------------------------------------
def test_command_passes_arguments_and_settings(tmp_path):
    cmd = api.command(
        "https://example.com/",
        mode="union",
        out=tmp_path,
        settings={"HOST_INTERVAL": 0.5, "HOST_INTERVAL_OVERRIDES": {"a.example": 2}},
        verify=True,
        include_paths=["/docs/", "/blog/"],
        max_pages=10,
        cap=None,
    )
    assert cmd[:5] == [sys.executable, "-m", "scrapy", "crawl", "discover"]
    pairs = dict(zip(cmd[5::2], cmd[6::2], strict=False))
    assert pairs["-O"] == str(tmp_path / "inventory.jsonl")
    args = [cmd[i + 1] for i, a in enumerate(cmd) if a == "-a"]
    assert "mode=auto" not in api.command("https://example.com/", out=tmp_path)
    assert args == [
        "url=https://example.com/",
        "mode=union",
        f"out={tmp_path}",
        "verify=1",
        "include_paths=/docs/,/blog/",
        "max_pages=10",
    ]
    sets = [cmd[i + 1] for i, a in enumerate(cmd) if a == "-s"]
    assert sets[0] == "HOST_INTERVAL=0.5"
    assert json.loads(sets[1].partition("=")[2]) == {"a.example": 2}


def test_error_classes_say_their_exit_status():
    for cls, status, outcome in (
        (api.BadArguments, 2, None),
        (api.RunFailed, 1, "failed"),
        (api.Interrupted, 3, "interrupted"),
        (api.OutputFailed, 4, "output_failed"),
    ):
        error = cls("one line")
        assert (str(error), error.exit_code, error.outcome) == ("one line", status, outcome)
        assert isinstance(error, api.DiscoveryError)
    assert re.fullmatch(r"<Discovery 0 records, bounded>", repr(api.Discovery(
        [], exit_code=5, run=None, files={}, log="")))  # fmt: skip
