"""Spider arguments and profiles: validated once, one clear line on error (exit status 2 on
the command line: ``tests/e2e/test_arguments.py``)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from discovery_crawler.arguments import (
    URL_LENGTH_LIMIT,
    ArgumentError,
    RunOptions,
    check_url_length,
    input_kind,
    redact_credentials,
    tls_failure_text,
    validate_url,
)
from discovery_crawler.profiles import available_profiles, load_profile
from tests.conftest import free_port

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


# -- the start URL: credentials, port 0, length, a scheme left out ------------------------


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://alice:s3cret@example.com/docs/", "https://***@example.com/docs/"),
        ("alice:s3cret@example.com", "https://***@example.com"),  # no scheme: https://
        ("http://ghp_T0KEN@example.com:8080/?q=1", "http://***@example.com:8080/?q=1"),
        ("https://a:b:c@d@example.com#top", "https://***@example.com#top"),
    ],
)
def test_credentials_in_the_url_are_refused_and_never_echoed(url, shown):
    with pytest.raises(ArgumentError) as info:
        RunOptions.from_arguments({"url": url}, PROFILES)
    message = str(info.value)
    assert message.startswith(f"argument url: credentials in the URL ({shown}) are not supported")
    for secret in ("alice", "s3cret", "T0KEN", "a:b"):
        assert secret not in message


@given(
    st.text(st.characters(blacklist_characters="/?#@", blacklist_categories=("Cs",)), min_size=1),
    st.sampled_from(["https://", "http://"]),
)
def test_redaction_leaves_nothing_of_the_credentials(userinfo, scheme):
    """Whatever stands before ``@`` in the authority is gone from what a message shows."""
    assert redact_credentials(f"{scheme}{userinfo}@example.com/p") == f"{scheme}***@example.com/p"


def test_an_at_sign_outside_the_authority_is_no_credential():
    assert validate_url("https://example.com/@team") == "https://example.com/@team"
    assert redact_credentials("https://example.com/a?to=x@y") == "https://example.com/a?to=x@y"


def test_port_0_is_refused_and_the_others_accepted():
    with pytest.raises(ArgumentError) as info:
        validate_url("http://127.0.0.1:0/")
    assert str(info.value) == (
        "argument url: port 0 in 'http://127.0.0.1:0/' is no port a site is served on; give "
        "the site's port (1-65535), or none for the scheme's own (80 for http, 443 for https)"
    )
    assert validate_url("example.com:1") == "https://example.com:1"
    assert validate_url("http://example.com:65535/") == "http://example.com:65535/"


def test_a_url_over_urllength_limit_is_refused_with_its_length_and_the_limit():
    """Scrapy's URLLENGTH_LIMIT (2,083 by default) is where its UrlLengthMiddleware drops
    a request: measured on the URL as requested (normalized: a fragment does not count)."""
    base = "https://example.com/"
    check_url_length(base + "a" * (URL_LENGTH_LIMIT - len(base)), URL_LENGTH_LIMIT)  # fits
    check_url_length(base + "a" * 3000, 0)  # 0: no limit, as Scrapy's
    check_url_length(base + "a" * 2000 + "#" + "f" * 200, URL_LENGTH_LIMIT)  # fragment dropped
    too_long = base + "a" * (URL_LENGTH_LIMIT - len(base) + 1)
    with pytest.raises(ArgumentError) as info:
        check_url_length(too_long, URL_LENGTH_LIMIT)
    assert str(info.value) == (
        f"argument url: {too_long[:50]}… is 2,084 characters long, over URLLENGTH_LIMIT: "
        "2,083 (Scrapy's default, Internet Explorer's old maximum); Scrapy sends no request "
        "for a URL that long — shorten it, or raise -s URLLENGTH_LIMIT"
    )
    with pytest.raises(ArgumentError, match="over URLLENGTH_LIMIT: 100; Scrapy sends"):
        check_url_length(base + "a" * 100, 100)


def test_the_tls_failure_of_a_url_given_without_a_scheme_suggests_http():
    host = f"127.0.0.1:{free_port()}"
    typed = RunOptions.from_arguments({"url": f"{host}/docs/"}, PROFILES)
    assert typed.scheme_added and typed.url == f"https://{host}/docs/"
    assert tls_failure_text(typed, f"https://{host}/robots.txt", "wrong version number") == (
        f"TLS handshake failed with https://{host}/ (wrong version number) — if the "
        f"site serves plain HTTP, try -a url=http://{host}/docs/"
    )
    given_https = RunOptions.from_arguments({"url": f"https://{host}/"}, PROFILES)
    assert not given_https.scheme_added
    assert tls_failure_text(given_https, f"https://{host}/", "x") == (
        f"TLS handshake failed with https://{host}/ (x)"
    )
