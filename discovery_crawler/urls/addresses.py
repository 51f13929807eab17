"""What the SSRF guard decides from a URL and an address alone (SPEC §12).

A host is read the way a resolver or a browser reads it before anything is compared:
percent-escapes and full-width digits undone (NFKC, as IDNA does), a trailing dot dropped,
brackets and an IPv6 zone id (``%eth0``, ``%25eth0``) removed, and an IPv4 literal taken
in every ``inet_aton`` notation — decimal ``2130706433``, octal ``0177.0.0.1``, hex
``0x7f.1``, short ``127.1`` — so ``http://0x7f.1/`` is loopback before any lookup. Then an
address is classified: loopback, private (RFC 1918), CGNAT, link-local, multicast,
documentation, unique-local, unspecified, reserved, looking through the IPv4 address that
an IPv4-mapped, IPv4-compatible, NAT64 or 6to4 IPv6 address carries. Only a globally
reachable address is no refusal.

No Scrapy, no sockets: the middleware (``middlewares/ssrf.py``) resolves names and asks
these functions about the answers.
"""

from __future__ import annotations

import contextlib
import ipaddress
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

DEFAULT_PORTS = {"http": 80, "https": 443}
ALLOWED_SCHEMES = frozenset(DEFAULT_PORTS)

# The rules a refusal names, one word each (the crawl log's ``rule``).
RULES: tuple[str, ...] = (
    "scheme",
    "credentials",
    "port",
    "invalid_host",
    "loopback",
    "private",
    "cgnat",
    "link_local",
    "multicast",
    "documentation",
    "ula",
    "unspecified",
    "reserved",
    "other_origin",
)

_V4 = ipaddress.IPv4Network
_V6 = ipaddress.IPv6Network
# Checked in order: the first match names the refusal.
_V4_RANGES: tuple[tuple[Network, str], ...] = (
    (_V4("0.0.0.0/8"), "unspecified"),  # "this network"; 0.0.0.0 reaches the host itself
    (_V4("127.0.0.0/8"), "loopback"),
    (_V4("10.0.0.0/8"), "private"),
    (_V4("172.16.0.0/12"), "private"),
    (_V4("192.168.0.0/16"), "private"),
    (_V4("100.64.0.0/10"), "cgnat"),
    (_V4("169.254.0.0/16"), "link_local"),
    (_V4("224.0.0.0/4"), "multicast"),
    (_V4("192.0.2.0/24"), "documentation"),
    (_V4("198.51.100.0/24"), "documentation"),
    (_V4("203.0.113.0/24"), "documentation"),
    (_V4("192.0.0.0/24"), "reserved"),  # IETF protocol assignments
    (_V4("192.88.99.0/24"), "reserved"),  # the old 6to4 relay anycast
    (_V4("198.18.0.0/15"), "reserved"),  # benchmarking
    (_V4("240.0.0.0/4"), "reserved"),  # future use, and the broadcast address
)
_MAPPED = _V6("::ffff:0:0/96")
_COMPATIBLE = _V6("::/96")
_NAT64 = _V6("64:ff9b::/96")
_SIXTOFOUR = _V6("2002::/16")
_V6_RANGES: tuple[tuple[Network, str], ...] = (
    (_V6("::/128"), "unspecified"),
    (_V6("::1/128"), "loopback"),
    (_V6("64:ff9b:1::/48"), "private"),  # NAT64 for local use (RFC 8215)
    (_V6("fc00::/7"), "ula"),
    (_V6("fe80::/10"), "link_local"),
    (_V6("fec0::/10"), "reserved"),  # site-local, deprecated
    (_V6("ff00::/8"), "multicast"),
    (_V6("2001:db8::/32"), "documentation"),
    (_V6("3fff::/20"), "documentation"),  # RFC 9637
    (_V6("2001::/32"), "reserved"),  # Teredo: a tunnel to somewhere else, never a site
    (_V6("100::/64"), "reserved"),  # discard-only
)
_GLOBAL_UNICAST = _V6("2000::/3")

_NUMBER = re.compile(r"0[xX][0-9a-fA-F]*|0[0-7]*|[1-9][0-9]*")
_LOOKS_NUMERIC = re.compile(r"(?:0[xX][0-9a-zA-Z]*|[0-9][0-9a-zA-Z]*)")


class HostError(ValueError):
    """A host that is no name and no address (``0x1g.1``, ``1.2.3.4.5``, ``[::zz]``)."""


def clean_host(host: str) -> str:
    """A URL's host as a resolver sees it: percent-escapes undone, NFKC (full-width digits
    and dots become ASCII, as IDNA maps them), lowercase, one trailing dot dropped, an
    internationalized name in its ASCII (punycode) form."""
    text = unicodedata.normalize("NFKC", unquote(host)).replace("\u3002", ".").lower()
    text = text[:-1] if text.endswith(".") and not text.endswith("..") else text
    if not text.isascii() and not text.startswith("["):
        # an IDN: compared and resolved in the ASCII form requests are sent with (no
        # valid name: left as it is, the resolver fails it)
        with contextlib.suppress(UnicodeError):
            text = text.encode("idna").decode("ascii")
    return text


def _ipv4_number(part: str) -> int:
    if not _NUMBER.fullmatch(part):
        raise HostError(f"{part!r} is no number")
    if part[:2] in ("0x", "0X"):
        return int(part[2:] or "0", 16)
    if len(part) > 1 and part[0] == "0":
        return int(part[1:], 8)
    return int(part)


def parse_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """An IPv4 literal in any ``inet_aton`` notation (1 to 4 parts, each decimal, octal
    with a leading 0 or hex with 0x; the last fills the remaining bytes), as browsers and
    ``getaddrinfo`` read it. None for a host name; ``HostError`` for a host that reads as
    numbers but is no address (WHATWG: a host whose last label is numeric is an IPv4)."""
    parts = host.split(".")
    if not parts or not _LOOKS_NUMERIC.fullmatch(parts[-1]):
        return None  # a name: its last label is not a number
    if len(parts) > 4 or "" in parts:
        raise HostError(f"{host!r} is no IPv4 address")
    numbers = [_ipv4_number(p) for p in parts]
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(numbers)):
        raise HostError(f"{host!r} is out of the IPv4 range")
    value = last
    for i, n in enumerate(head):
        value += n << (8 * (3 - i))
    return ipaddress.IPv4Address(value)


def parse_host(host: str) -> Address | None:
    """The address a URL's host names literally, in any notation (``[::1]``,
    ``[fe80::1%25eth0]``, ``0177.0.0.1``, ``2130706433``…), or None for a host name.
    ``HostError`` when it is neither."""
    text = clean_host(host)
    if text.startswith("[") or ":" in text:
        inner = text[1:-1] if text.startswith("[") and text.endswith("]") else text
        inner = inner.partition("%")[0]  # the zone id: the address is what is compared
        try:
            return ipaddress.IPv6Address(inner)
        except ValueError as exc:
            raise HostError(f"{host!r} is no IPv6 address") from exc
    if not text:
        raise HostError("empty host")
    return parse_ipv4(text)


def embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for: IPv4-mapped ``::ffff:a.b.c.d``,
    IPv4-compatible ``::a.b.c.d``, NAT64 ``64:ff9b::a.b.c.d``, 6to4 ``2002:AABB:CCDD::``."""
    value = int(address)
    if address in _MAPPED or address in _NAT64:
        return ipaddress.IPv4Address(value & 0xFFFFFFFF)
    if address in _COMPATIBLE and value > 1:
        return ipaddress.IPv4Address(value & 0xFFFFFFFF)
    if address in _SIXTOFOUR:
        return ipaddress.IPv4Address((value >> 80) & 0xFFFFFFFF)
    return None


def address_rule(address: Address) -> str | None:
    """Why connecting to ``address`` is refused (a word of ``RULES``), or None: it is a
    globally reachable unicast address."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.scope_id:
            address = ipaddress.IPv6Address(address.compressed.partition("%")[0])
        inner = embedded_ipv4(address)
        if inner is not None:
            return address_rule(inner)
        for network, rule in _V6_RANGES:
            if address in network:
                return rule
        if address not in _GLOBAL_UNICAST or not address.is_global:
            return "reserved"
        return None
    for network, rule in _V4_RANGES:
        if address in network:
            return rule
    return None if address.is_global else "reserved"


RULE_WORDS = {
    "loopback": "loopback",
    "private": "a private address",
    "cgnat": "a carrier-grade NAT address (100.64.0.0/10)",
    "link_local": "link-local",
    "multicast": "multicast",
    "documentation": "a documentation address",
    "ula": "an IPv6 unique-local address (fc00::/7)",
    "unspecified": "the unspecified address",
    "reserved": "a reserved address",
}


def parse_networks(values: Iterable[str]) -> tuple[Network, ...]:
    """``SSRF_ALLOWED_NETWORKS`` read: CIDR blocks or single addresses."""
    return tuple(
        ipaddress.ip_network(str(v).strip(), strict=False) for v in values if str(v).strip()
    )


@dataclass(frozen=True)
class Refused:
    """A refusal: the rule (one of ``RULES``) and the reason in words."""

    rule: str
    reason: str


@dataclass(frozen=True)
class AddressPolicy:
    """What the guard lets through: the ports and the networks an explicit allow-list
    opens (a test's loopback server, a private deployment's own hosts)."""

    ports: frozenset[int] = frozenset({80, 443})
    networks: tuple[Network, ...] = ()

    def allowed(self, address: Address) -> bool:
        if isinstance(address, ipaddress.IPv6Address) and address.scope_id:
            address = ipaddress.IPv6Address(address.compressed.partition("%")[0])
        return any(address.version == n.version and address in n for n in self.networks)

    def check_address(self, address: Address, host: str | None = None) -> Refused | None:
        """Refused when ``address`` is not globally reachable and not allow-listed."""
        if self.allowed(address):
            return None
        rule = address_rule(address)
        if rule is None:
            return None
        named = f"{host} resolves to {address}" if host and host != str(address) else str(address)
        inner = embedded_ipv4(address) if isinstance(address, ipaddress.IPv6Address) else None
        if inner is not None:
            named += f" (carrying {inner})"
        return Refused(rule, f"{named} is {RULE_WORDS[rule]}")

    def check_url(self, url: str) -> tuple[Refused | None, str | None, Address | None]:
        """(refusal, host name to resolve, literal address) for ``url``: refused for its
        scheme, credentials, port or literal address; else the name the guard must
        resolve (None for a literal address, which needs no lookup)."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            return Refused("invalid_host", f"unreadable host or port ({exc})"), None, None
        scheme = parts.scheme.lower()
        if scheme not in ALLOWED_SCHEMES:
            return (
                Refused("scheme", f"scheme {scheme or '(none)'}: only http and https"),
                None,
                None,
            )
        if parts.username is not None or parts.password is not None or "@" in parts.netloc:
            return Refused("credentials", "credentials in the URL"), None, None
        port = DEFAULT_PORTS[scheme] if port is None else port
        if port not in self.ports:
            allowed = ", ".join(str(p) for p in sorted(self.ports))
            return (
                Refused("port", f"port {port} is not allowed (SSRF_ALLOWED_PORTS: {allowed})"),
                None,
                None,
            )
        raw = _netloc_host(parts.netloc)
        try:
            address = parse_host(raw)
        except HostError as exc:
            return Refused("invalid_host", str(exc)), None, None
        if address is not None:
            return self.check_address(address), None, address
        name = clean_host(raw)
        if name == "localhost" or name.endswith(".localhost"):
            # RFC 6761: resolvers answer loopback for these without asking anyone
            loop = ipaddress.IPv4Address("127.0.0.1")
            if self.allowed(loop):
                return None, name, None
            return Refused("loopback", f"{name} is loopback"), None, None
        return None, name, None


def _netloc_host(netloc: str) -> str:
    """The host of a netloc as written (brackets, zone and escapes kept for parse_host)."""
    host = netloc.rpartition("@")[2]
    if host.startswith("["):
        return host[: host.find("]") + 1] if "]" in host else host
    return host.rpartition(":")[0] if ":" in host else host


def url_origin(url: str) -> str:
    """``scheme://host[:port]`` as compared for "same origin": lowercase, default port
    dropped, host cleaned as a resolver reads it."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = clean_host(_netloc_host(parts.netloc))
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is not None and port != DEFAULT_PORTS.get(scheme):
        return f"{scheme}://{host}:{port}"
    return f"{scheme}://{host}"


def same_origin(url: str, site: str) -> bool:
    """``url`` is on ``site``'s origin (``scheme://host[:port]``, as ``url_origin`` writes it),
    or is that origin upgraded to HTTPS: ``http://host`` → ``https://host`` on the default
    ports is the same server's secure address, which every site redirects to — not a
    second origin a stranger's URL could point the crawler at."""
    origin = url_origin(url)
    if origin == site:
        return True
    # the upgrade on the default ports only (the site's origin names no port)
    return (
        site.startswith("http://") and urlsplit(site).port is None and origin == "https" + site[4:]
    )
