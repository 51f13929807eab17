"""Spider arguments and profiles: validated once, one clear line on error (exit status 2 on
the command line: ``tests/e2e/test_arguments.py``)."""

from __future__ import annotations

import pytest

from discovery_crawler.arguments import ArgumentError, RunOptions, input_kind
from discovery_crawler.profiles import available_profiles, load_profile

PROFILES = available_profiles()


def test_the_five_profiles_exist_and_load():
    """SPEC §1: default, sample, massive, polite, service — each a file of settings."""
    assert PROFILES == ("default", "massive", "polite", "sample", "service")
    for name in PROFILES:
        settings = load_profile(name)
        assert settings and all(key.isupper() for key in settings)
    assert load_profile("sample")["SITEMAP_MAX_URLS"] == 10_000
    assert load_profile("massive")["SITEMAP_CONCURRENCY"] == 8
    assert load_profile("polite")["SITEMAP_MAX_DOCUMENTS"] == 20


def test_the_massive_profile_bounds_the_sitemaps_waiting_for_a_parse():
    """Scrapy's downloader takes up to CONCURRENT_REQUESTS requests whatever the scraper's
    backlog: the massive profile keeps it at its fetch concurrency, and the scraper's
    backlog of bodies to 2 MB (all 20 children of a 1M-URL index were held at Scrapy's)."""
    massive = load_profile("massive")
    assert massive["CONCURRENT_REQUESTS"] == massive["SITEMAP_CONCURRENCY"]
    assert massive["SCRAPER_SLOT_MAX_ACTIVE_SIZE"] <= 2_000_000


def test_the_massive_profile_sizes_tables_for_ten_million_urls():
    """SPEC §14's largest walk: from the default cap the tables would double past it."""
    assert load_profile("massive")["INVENTORY_RESERVE_URLS"] >= 10_000_000


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("https://example.com/", "homepage"),
        ("https://example.com/blog", "homepage"),
        ("https://example.com/robots.txt", "robots"),
        ("https://example.com/sitemap.xml", "sitemap"),
        ("https://example.com/s/sitemap.xml.gz", "sitemap"),
        ("https://example.com/sitemap.txt", "sitemap"),
        ("https://example.com/feed.rss", "sitemap"),
        ("https://example.com/SITEMAP.XML", "sitemap"),
    ],
)
def test_input_kind(url, kind):
    assert input_kind(url) == kind


def test_valid_arguments_are_parsed():
    opts = RunOptions.from_arguments(
        {
            "url": "example.com",
            "mode": "SITEMAP",
            "profile": "massive",
            "include_paths": "blog, /docs",
            "cap": "7",
            "all": "1",
            "_job": "abc",  # Scrapyd's own argument is accepted
        },
        PROFILES,
    )
    assert opts.url == "https://example.com"
    assert opts.mode == "sitemap"
    assert opts.include_paths == ("/blog", "/docs")
    assert opts.cap == 7 and opts.all is True
    assert opts.extra == {"_job": "abc"}


@pytest.mark.parametrize(
    ("args", "name"),
    [
        ({}, "url"),
        ({"url": ""}, "url"),
        ({"url": "ftp://example.com/"}, "url"),
        ({"url": "http://[::1"}, "url"),
        ({"url": "http://exa mple.com/"}, "url"),
        ({"url": "https://x.com", "mode": "fast"}, "mode"),
        ({"url": "https://x.com", "profile": "huge"}, "profile"),
        ({"url": "https://x.com", "cap": "0"}, "cap"),
        ({"url": "https://x.com", "max_pages": "many"}, "max_pages"),
        ({"url": "https://x.com", "all": "maybe"}, "all"),
        ({"url": "https://x.com", "render": "sometimes"}, "render"),
        ({"url": "https://x.com", "out": " "}, "out"),
        ({"url": "https://x.com", "colour": "blue"}, "colour"),
        ({"url": "https://x.com", "verify": "yes please"}, "verify"),
        ({"url": "https://x.com", "verify": "1", "mode": "links"}, "verify"),
    ],
)
def test_bad_arguments_name_the_argument(args, name):
    with pytest.raises(ArgumentError) as info:
        RunOptions.from_arguments(args, PROFILES)
    assert info.value.name == name
    assert str(info.value).startswith(f"argument {name}: ")


def test_verify_with_links_mode_is_refused_in_one_line():
    with pytest.raises(ArgumentError) as err:
        RunOptions.from_arguments(
            {"url": "https://e.com/", "mode": "links", "verify": "1"}, ("default",)
        )
    assert "verify" in str(err.value) and "union" in str(err.value)
