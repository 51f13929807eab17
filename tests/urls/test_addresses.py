"""``urls/addresses.py``: the SSRF guard's decisions from a URL and an address alone —
every literal notation read as a resolver reads it, every non-public range named."""

from __future__ import annotations

import ipaddress
import socket

import pytest
from hypothesis import given
from hypothesis import strategies as st

from discovery_crawler.urls.addresses import (
    RULES,
    AddressPolicy,
    HostError,
    address_rule,
    embedded_ipv4,
    parse_host,
    parse_ipv4,
    same_origin,
    url_origin,
)
from tests.conftest import free_port

POLICY = AddressPolicy()

# (URL, the rule that refuses it): the hostile targets, none of which needs a lookup.
HOSTILE: list[tuple[str, str]] = [
    # schemes and credentials
    ("file:///etc/passwd", "scheme"),
    ("ftp://example.com/", "scheme"),
    ("gopher://example.com:70/_x", "scheme"),
    ("dict://example.com:11211/", "scheme"),
    ("data:text/html,hi", "scheme"),
    ("javascript:alert(1)", "scheme"),
    ("https://user:secret@example.com/", "credentials"),
    ("https://user@example.com/", "credentials"),
    ("https://example.com@evil.example/", "credentials"),
    # ports
    ("http://example.com:22/", "port"),
    ("http://example.com:6379/", "port"),
    ("https://example.com:8443/", "port"),
    ("http://example.com:0/", "port"),
    # loopback in every notation
    ("http://127.0.0.1/", "loopback"),
    ("http://127.255.255.254/", "loopback"),
    ("http://2130706433/", "loopback"),
    ("http://0177.0.0.1/", "loopback"),
    ("http://0177.0000.0000.0001/", "loopback"),
    ("http://0x7f.1/", "loopback"),
    ("http://0x7f000001/", "loopback"),
    ("http://0X7F.0.0.1/", "loopback"),
    ("http://127.1/", "loopback"),
    ("http://127.0.1/", "loopback"),
    ("http://127.0.0.1./", "loopback"),
    ("http://%31%32%37.0.0.1/", "loopback"),
    ("http://１２７.０.０.１/", "loopback"),
    ("http://localhost/", "loopback"),
    ("http://LocalHost./", "loopback"),
    ("http://api.localhost/", "loopback"),
    ("http://[::1]/", "loopback"),
    ("http://[0:0:0:0:0:0:0:1]/", "loopback"),
    ("http://[::ffff:127.0.0.1]/", "loopback"),
    ("http://[::ffff:7f00:1]/", "loopback"),
    ("http://[::127.0.0.1]/", "loopback"),
    ("http://[64:ff9b::127.0.0.1]/", "loopback"),
    ("http://[2002:7f00:1::]/", "loopback"),
    # unspecified
    ("http://0.0.0.0/", "unspecified"),
    ("http://0/", "unspecified"),
    ("http://[::]/", "unspecified"),
    # private (RFC 1918) and the forms that carry one
    ("http://10.0.0.1/", "private"),
    ("http://012.0.0.1/", "private"),
    ("http://167772161/", "private"),
    ("http://172.16.0.1/", "private"),
    ("http://172.31.255.255/", "private"),
    ("http://192.168.1.1/", "private"),
    ("http://0xc0.0xa8.1.1/", "private"),
    ("http://192.168.257/", "private"),
    ("http://[::ffff:10.0.0.1]/", "private"),
    ("http://[::ffff:192.168.0.1]/", "private"),
    ("http://[64:ff9b::10.1.2.3]/", "private"),
    ("http://[64:ff9b:1::1]/", "private"),
    ("http://[2002:c0a8:101::1]/", "private"),
    # CGNAT, link-local (cloud metadata), multicast
    ("http://100.64.0.1/", "cgnat"),
    ("http://100.127.255.254/", "cgnat"),
    ("http://169.254.169.254/latest/meta-data/", "link_local"),
    ("http://2852039166/", "link_local"),
    ("http://0xa9.0xfe.0xa9.0xfe/", "link_local"),
    ("http://[fe80::1]/", "link_local"),
    ("http://[fe80::1%25eth0]/", "link_local"),
    ("http://[fe80::a:b%eth0]/", "link_local"),
    ("http://[::ffff:169.254.169.254]/", "link_local"),
    ("http://224.0.0.1/", "multicast"),
    ("http://239.255.255.250/", "multicast"),
    ("http://[ff02::1]/", "multicast"),
    # documentation, reserved, unique-local
    ("http://192.0.2.1/", "documentation"),
    ("http://198.51.100.7/", "documentation"),
    ("http://203.0.113.9/", "documentation"),
    ("http://[2001:db8::1]/", "documentation"),
    ("http://240.0.0.1/", "reserved"),
    ("http://255.255.255.255/", "reserved"),
    ("http://198.18.0.1/", "reserved"),
    ("http://192.0.0.8/", "reserved"),
    ("http://[2001::1]/", "reserved"),
    ("http://[fec0::1]/", "reserved"),
    ("http://[100::1]/", "reserved"),
    ("http://[fc00::1]/", "ula"),
    ("http://[fd12:3456:789a::1]/", "ula"),
    # not a host at all
    ("http://1.2.3.4.5/", "invalid_host"),
    ("http://0x1g.1/", "invalid_host"),
    ("http://256.256.256.256/", "invalid_host"),
    ("http://[::zz]/", "invalid_host"),
    ("http://4294967296/", "invalid_host"),
]


def test_the_matrix_has_more_than_fifty_targets_and_names_every_address_rule():
    assert len(HOSTILE) >= 50
    named = {rule for _, rule in HOSTILE}
    assert named >= set(RULES) - {"other_origin"}


@pytest.mark.parametrize(("url", "rule"), HOSTILE, ids=[u for u, _ in HOSTILE])
def test_a_hostile_target_is_refused_by_its_rule_without_a_lookup(url, rule):
    refused, name, _ = POLICY.check_url(url)
    assert refused is not None and refused.rule == rule, refused
    assert name is None  # decided from the URL: nothing to resolve, no packet
    assert refused.reason


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/",
        "http://example.com:80/a?b=c",
        "https://EXAMPLE.com:443/",
        "https://xn--bcher-kva.example/",
        "https://1e100.net/",
        "https://host-with-digits2.example/",
    ],
)
def test_a_public_name_is_left_to_resolve(url):
    refused, name, address = POLICY.check_url(url)
    assert refused is None and address is None
    assert name == url.split("//")[1].split("/")[0].split(":")[0].lower()


@pytest.mark.parametrize(
    "url", ["http://8.8.8.8/", "http://134744072/", "http://[2606:4700:4700::1111]/"]
)
def test_a_public_literal_address_passes_without_a_lookup(url):
    refused, name, address = POLICY.check_url(url)
    assert refused is None and name is None and address is not None


def test_an_allowed_network_and_port_open_the_tests_loopback_server():
    port = free_port()
    policy = AddressPolicy(frozenset({80, 443, port}), (ipaddress.ip_network("127.0.0.1/32"),))
    assert policy.check_url(f"http://127.0.0.1:{port}/")[0] is None
    assert policy.check_url(f"http://0x7f.0.0.1:{port}/")[0] is None  # the same address
    assert policy.check_url(f"http://localhost:{port}/")[0] is None
    assert policy.check_url(f"http://127.0.0.2:{port}/")[0].rule == "loopback"  # only that one
    other = next(p for p in range(port + 1, port + 10) if p not in policy.ports)
    assert policy.check_url(f"http://127.0.0.1:{other}/")[0].rule == "port"


def test_the_reason_says_the_name_and_the_address_it_carries():
    refused = POLICY.check_address(ipaddress.ip_address("::ffff:10.0.0.1"), "rebind.example")
    assert refused.rule == "private"
    assert (
        refused.reason
        == "rebind.example resolves to ::ffff:a00:1 (carrying 10.0.0.1) is a private address"
    )


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_every_ipv4_notation_reads_as_inet_aton_reads_it(value):
    """Decimal, hex, octal, 2- and 3-part short forms of one address: all the same
    address, and the same as the C library's inet_aton (what a resolver does)."""
    a, b, c, d = value.to_bytes(4, "big")
    forms = [
        str(value),
        hex(value),
        f"0{value:o}",
        f"{a}.{(b << 16) | (c << 8) | d}",
        f"{a}.{b}.{(c << 8) | d}",
        f"{hex(a)}.{oct(b).replace('o', '')}.{c}.{hex(d)}",
        f"{a}.{b}.{c}.{d}",
    ]
    expected = ipaddress.IPv4Address(value)
    for form in forms:
        assert parse_ipv4(form) == expected, form
        assert socket.inet_aton(form) == expected.packed, form


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_every_ipv6_wrapping_of_an_ipv4_address_is_judged_as_that_address(value):
    v4 = ipaddress.IPv4Address(value)
    for wrapped in (
        ipaddress.IPv6Address((0xFFFF << 32) | value),  # ::ffff:a.b.c.d
        ipaddress.IPv6Address((0x64FF9B << 96) | value),  # NAT64
        ipaddress.IPv6Address((0x2002 << 112) | (value << 80)),  # 6to4
    ):
        assert embedded_ipv4(wrapped) == v4
        assert address_rule(wrapped) == address_rule(v4)


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_no_ipv4_address_that_python_calls_non_global_passes(value):
    address = ipaddress.IPv4Address(value)
    if not address.is_global:
        assert address_rule(address) is not None


@given(st.integers(min_value=0, max_value=2**128 - 1))
def test_no_ipv6_address_that_python_calls_non_global_passes(value):
    address = ipaddress.IPv6Address(value)
    if embedded_ipv4(address) is None and not address.is_global:
        assert address_rule(address) is not None


@given(st.text(max_size=30))
def test_any_host_text_is_an_address_a_name_or_a_host_error(text):
    try:
        found = parse_host(text)
    except HostError:
        return
    assert found is None or isinstance(found, ipaddress.IPv4Address | ipaddress.IPv6Address)


def test_origins_compare_as_a_browser_compares_them():
    assert url_origin("HTTPS://Example.COM:443/a") == "https://example.com"
    assert url_origin("http://example.com:80/") == "http://example.com"
    assert url_origin("http://example.com:8080/") == "http://example.com:8080"
    assert url_origin("https://example.com/") != url_origin("http://example.com/")
    assert url_origin("https://www.example.com/") != url_origin("https://example.com/")
    # an IDN given as typed is the origin its requests are sent to (punycode)
    assert url_origin("https://Bücher.example/a") == "https://xn--bcher-kva.example"
    assert url_origin("https://xn--bcher-kva.example/") == "https://xn--bcher-kva.example"


def test_the_same_origin_is_the_same_scheme_host_and_port_or_its_https_upgrade():
    site = url_origin("http://example.com/")
    assert same_origin("http://example.com/a", site)
    assert same_origin("https://example.com/a", site)  # the same host's upgrade
    assert not same_origin("https://example.com:8443/a", site)
    assert not same_origin("http://example.com:8080/a", site)
    assert not same_origin("https://www.example.com/a", site)
    # no downgrade: an https site's http:// URL is another origin
    assert not same_origin("http://example.com/a", url_origin("https://example.com/"))
    # the upgrade is the default ports' only: http on 8080 and https on 8080 are two servers
    assert not same_origin("https://example.com:8080/a", url_origin("http://example.com:8080/"))
    assert same_origin("http://example.com:8080/b", url_origin("http://example.com:8080/"))
