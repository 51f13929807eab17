"""Resolve and normalize URLs before they enter the discovered set.

This is the hot path of a sitemap walk (millions of calls), so it is written for speed:
the scheme/host/port part of a URL repeats across a sitemap and is normalized once per
distinct origin (``OriginCache``); the rest of the URL is handled with plain string
operations. ``urllib.parse`` / ``w3lib`` are used on the slow (general) path only: either of
``urljoin`` and ``safe_url_string`` alone costs more than the budget for the whole per-URL
pipeline (STACK.md).

Rules (SPEC §5): 1. lowercase scheme and host; IDN hosts to punycode, a percent-encoded
UTF-8 host being the same host; 2. default ports stripped; 3. a bare host gets ``/``;
4. fragments stripped; 5. percent escapes: unreserved characters decoded (``%7E`` → ``~``),
the others kept with upper-case hex (``%2f`` → ``%2F``), non-ASCII and unsafe characters
encoded as UTF-8 (what ``w3lib.url.safe_url_string`` does — done here with
``urllib.parse.quote`` on the slow path only); an invalid escape (``%zz``) is an error;
6. tracking parameters (``utm_*``, ``gclid``, ``fbclid``, ``mc_*``, ``_ga``, ``ref``,
``source``) dropped, other parameters kept in their order; "." and ".." path segments
removed (RFC 3986 §5.2.4, after the escapes: ``/a/%2E%2E/b`` → ``/b``). Rules 7
(trailing-slash twins) and 8 (www vs bare) need the whole site: the dedup stage and the
spider's origin rewrites apply them. ``normalize`` is idempotent.

A path and query made only of characters that never need work (``_NEEDS_WORK``) and
without a dot segment are already normal: one compiled-regex search and one substring
test (``"/."``) decide that, so the common URL costs no more.
"""

from __future__ import annotations

import ipaddress
import re
from collections import Counter
from typing import Any
from urllib.parse import quote, unquote, urljoin, urlsplit

from discovery_crawler.compiled import extension

# normalize_many's common case in C (``_known_origins.c``); where not built, in Python
_known_origins = extension("discovery_crawler.urls._known_origins")

DEFAULT_PORTS = {"http": "80", "https": "443"}
# ASCII controls, DEL and spaces never belong in a host (IDNA maps away the invisible
# Unicode ones, such as U+200B).
_BAD_HOST_CHARS = re.compile("[\x00-\x20\x7f]")
# WHATWG's forbidden domain code points: what a host name may not hold once decoded
# (``%40`` is "@", IDNA maps U+00A0 to a space and U+FF05 to "%"), lest the URL written
# name another host (``http://a%40b.com/`` → ``http://a@b.com/``, host b.com).
_FORBIDDEN_IN_DOMAIN = re.compile(r"[\x00-\x20#%/:<>?@\[\\\]^|\x7f]")
# Anything but these (RFC 3986 unreserved + sub-delims + ":@/") needs the slow path:
# "%", "?", "#", spaces, controls, non-ASCII, and the unsafe ASCII ``"<>\\^`{|}``.
_NEEDS_WORK = re.compile(r"[^A-Za-z0-9\-._~/:@!$&'()*+,;=]")
_PATH_SAFE = "/:@!$&'()*+,;=-._~%"
_QUERY_SAFE = _PATH_SAFE + "?"
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
# A "." or ".." path segment (RFC 3986 §3.3), which ``remove_dot_segments`` takes out; a
# match in the query or fragment only sends the URL to the slow path, which leaves them be.
_DOT_SEGMENT = re.compile(r"/\.\.?(?:[/?#]|$)")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_TRACKING_PREFIXES = ("utm_", "mc_")
_TRACKING_NAMES = frozenset(("gclid", "fbclid", "_ga", "ref", "source"))
EMPTY_LABEL = "empty label in the host"


def _fix_escape(match: re.Match[str]) -> str:
    char = chr(int(match.group(1), 16))
    return char if char in _UNRESERVED else "%" + match.group(1).upper()


def _clean(component: str, safe: str, url: str) -> str:
    """Encode what must be encoded, decode what need not be, upper-case the rest."""
    if _BAD_ESCAPE.search(component):
        raise UrlError("invalid percent escape", url)
    return _ESCAPE.sub(_fix_escape, quote(component, safe=safe))


def remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4, as written: ``/a/./b`` → ``/a/b``, ``/a/../b`` → ``/b``, ``/..`` →
    ``/``. Unlike ``posixpath.normpath`` it keeps a trailing slash (``/a/b/..`` → ``/a/``)
    and empty segments (``/a//b`` stays)."""
    out: list[str] = []
    rest = path
    while rest:
        if rest.startswith("../"):  # A
            rest = rest[3:]
        elif rest.startswith(("./", "/./")):  # A, B
            rest = rest[2:]
        elif rest == "/.":
            rest = "/"
        elif rest.startswith("/../"):  # C
            rest = rest[3:]
            if out:
                out.pop()
        elif rest == "/..":
            rest = "/"
            if out:
                out.pop()
        elif rest in (".", ".."):  # D
            rest = ""
        else:  # E: the first segment, with its leading "/", to the output
            cut = rest.find("/", 1)
            if cut < 0:
                cut = len(rest)
            out.append(rest[:cut])
            rest = rest[cut:]
    return "".join(out)


def _needs_work(rest: str) -> bool:
    """Whether a path and query are not normal as they are: a character that needs work,
    or a dot segment (``"/." in`` first: a C-speed scan the common URL ends with)."""
    return _NEEDS_WORK.search(rest) is not None or (
        "/." in rest and _DOT_SEGMENT.search(rest) is not None
    )


def is_tracking_parameter(name: str) -> bool:
    """``utm_*``, ``gclid``, ``fbclid``, ``mc_*``, ``_ga``, ``ref``, ``source`` (SPEC §5)."""
    name = name.lower()
    return name.startswith(_TRACKING_PREFIXES) or name in _TRACKING_NAMES


def _normalize_rest(rest: str, url: str) -> str:
    """Normalize path + query (+ fragment, dropped): the slow path, rules 3-6."""
    hash_at = rest.find("#")
    if hash_at >= 0:
        rest = rest[:hash_at]
    if not rest.isprintable():
        raise UrlError("control characters in URL", url)
    path, question, query = rest.partition("?")
    path = _clean(path, _PATH_SAFE, url)
    if "/." in path:  # after the escapes: "%2E%2E" is ".." (RFC 3986 §6.2.2.3)
        path = remove_dot_segments(path)
    if question:
        params = [
            p for p in query.split("&") if p and not is_tracking_parameter(p.split("=", 1)[0])
        ]
        query = _clean("&".join(params), _QUERY_SAFE, url)
    if not path:
        path = "/"
    return f"{path}?{query}" if query else path


class UrlError(ValueError):
    """A URL that cannot be resolved or normalized; ``reason`` says why in words."""

    def __init__(self, reason: str, raw: str):
        super().__init__(f"{reason}: {raw[:200]!r}")
        self.reason = reason
        self.raw = raw

    def __reduce__(self) -> tuple[Any, ...]:  # pickled by the sitemap worker
        return (UrlError, (self.reason, self.raw))


def resolve(raw: str, base: str) -> str:
    """Resolve ``raw`` (absolute, root-relative or ``./x``) against ``base``, as a browser
    does (RFC 3986): ``www.example.com/`` is a path here. Sitemap locations go through
    ``resolve_location``, which reads such a location as a host."""
    raw = raw.strip()
    if not raw:
        raise UrlError("empty URL", raw)
    if raw.startswith(("https://", "http://")):
        return raw
    try:
        return urljoin(base, raw)
    except ValueError as exc:  # e.g. an invalid IPv6 literal
        raise UrlError(f"cannot resolve ({exc})", raw) from None


HOST_FIRST = "a location without a scheme that names a host: read as that host"
"""The reason counted (``OriginCache.repairs``) each time ``resolve_location`` reads a
scheme-less location as a host."""

# Generic top-level domains a scheme-less location's first segment may end with (the
# common ones; every two-letter country code counts too, except the labels below).
_GENERIC_TLD_NAMES = (
    "com net org edu gov mil int info biz name pro mobi app dev io blog shop store online "
    "site tech xyz cloud news media live"
)
_GENERIC_TLDS = frozenset(_GENERIC_TLD_NAMES.split())
# Two-letter labels that are far more often a file's extension than a country's domain in
# a relative path (``readme.md``, ``run.py/``): read as paths unless written ``www.…``.
_EXTENSION_LABEL_NAMES = "md py sh rs pl pm ps so ml js ts cs rb go hs db gz xz"
_EXTENSION_LABELS = frozenset(_EXTENSION_LABEL_NAMES.split())
_HOST_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)\Z")


def host_first(raw: str, base: str | None = None) -> bool:
    """Whether a location without a scheme starts with a host name (``www.example.com/``,
    ``example.com/page``) rather than a relative path (``page.html``, ``blog/post``,
    ``./x``, ``2024/05/x``).

    The first segment (up to ``/``, ``?`` or ``#``) names a host when it is the host (and
    port) of ``base`` or its www/bare twin, or it is a host name — two or more labels of
    letters, digits and hyphens, no empty label, optionally ``:port`` — that starts with
    ``www.`` (three labels or more) or ends with a common generic TLD (``_GENERIC_TLDS``)
    or a two-letter country code other than a common file extension (``_EXTENSION_LABELS``).
    So ``page.html``, ``v1.2/x``, ``docs.python/x`` and ``readme.md`` stay paths.
    """
    if not raw or raw[0] in "/.?#\\" or "://" in raw:
        return False
    end = len(raw)
    for sep in "/?#":
        i = raw.find(sep)
        if 0 <= i < end:
            end = i
    segment = raw[:end].lower()
    if "." not in segment:
        return False
    if base is not None:
        authority = base.partition("://")[2]
        for sep in "/?#":
            authority = authority.partition(sep)[0]
        authority = authority.rpartition("@")[2].lower()
        if (authority and segment in (authority, "www." + authority)) or (
            authority.startswith("www.") and segment == authority[4:]
        ):
            return True
    host, colon, port = segment.partition(":")
    if colon and not (port.isdigit() and len(port) <= 5):
        return False
    labels = host.split(".")
    if len(labels) < 2 or not all(
        _HOST_LABEL.match(label) or (label and not label.isascii() and label.isprintable())
        for label in labels
    ):
        return False
    if labels[0] == "www" and len(labels) >= 3:
        return True
    tld = labels[-1]
    if tld.startswith("xn--"):
        return True
    if not tld.isalpha():
        return False
    return tld in _GENERIC_TLDS or (len(tld) == 2 and tld not in _EXTENSION_LABELS)


def resolve_location(raw: str, base: str) -> str:
    """``resolve`` for a location a sitemap lists: one without a scheme that names a host
    (``host_first``) is read as that host with the scheme of ``base``
    (``www.example.com/`` → ``https://www.example.com/``), not as a path under the
    sitemap's directory; anything else resolves as ``resolve`` does."""
    raw = raw.strip()
    if raw and not raw.startswith(("https://", "http://")):
        as_host = _as_host(raw, base)
        if as_host is not None:
            return as_host
    return resolve(raw, base)


def _as_host(raw: str, base: str) -> str | None:
    """A stripped scheme-less location that names a host, as a URL on that host; else None."""
    if not host_first(raw, base):
        return None
    scheme = base.partition(":")[0].lower()
    return f"{scheme if scheme in DEFAULT_PORTS else 'http'}://{raw}"


def _normalize_origin(scheme_and_authority: str) -> str:
    """Normalize ``scheme://authority`` (slow path; the result is cached per origin)."""
    try:
        parts = urlsplit(scheme_and_authority)  # drops tabs and newlines, as WHATWG does
        port = parts.port  # validates the port
    except ValueError as exc:
        raise UrlError(f"invalid host or port ({exc})", scheme_and_authority) from None
    if _BAD_HOST_CHARS.search(parts.netloc):
        raise UrlError("control characters or spaces in the host", scheme_and_authority)
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise UrlError(f"not an HTTP(S) URL (scheme {scheme or 'missing'!r})", scheme_and_authority)
    host = parts.hostname or ""
    if not host:
        raise UrlError("no host", scheme_and_authority)
    if "%" in host:  # a percent-encoded UTF-8 host is the same host (IDN)
        try:
            host = unquote(host, errors="strict").lower()
        except UnicodeDecodeError:
            raise UrlError("invalid percent-encoded host", scheme_and_authority) from None
        if _BAD_HOST_CHARS.search(host) or "/" in host:
            raise UrlError("invalid percent-encoded host", scheme_and_authority)
    # An IP literal is the bracketed host part (a "[" in the userinfo is not one; urlsplit
    # reads ``evil.com[v1.fe]`` as host ``v1.fe``).
    host_part = parts.netloc.rpartition("@")[2]
    literal = host_part.startswith("[")
    if "[" in host_part and not literal:
        raise UrlError("a character no host name holds", scheme_and_authority)
    if not literal and (host[0] == "." or ".." in host):
        # ``http://.example.com``, ``a..b``: no such name (a single trailing dot, the DNS
        # root, is a name).
        raise UrlError(EMPTY_LABEL, scheme_and_authority)
    if "xn--" in host:
        try:
            host.encode("ascii").decode("idna")
        except UnicodeError:
            raise UrlError(
                "invalid international host name (punycode)", scheme_and_authority
            ) from None
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            raise UrlError("invalid international host name", scheme_and_authority) from None
    if literal:  # an IP literal (IPv6, IPvFuture) keeps its brackets
        if "]" not in host_part or not _is_ip_literal(host):
            # urlsplit checks the authority's first bracketed part only (the userinfo's in
            # ``http://[::1]@[¸``), and before any escape is decoded (``[::1%7E``)
            raise UrlError("invalid IP literal", scheme_and_authority)
        host = f"[{host}]"
    elif _FORBIDDEN_IN_DOMAIN.search(host):
        raise UrlError("a character no host name holds", scheme_and_authority)
    netloc = host
    if port is not None and str(port) != DEFAULT_PORTS[scheme]:
        netloc = f"{host}:{port}"
    userinfo = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
    if userinfo:
        netloc = f"{userinfo}@{netloc}"
    return f"{scheme}://{netloc}"


_IP_FUTURE = re.compile(r"[vV][0-9A-Fa-f]+\.[A-Za-z0-9._~!$&'()*+,;=:-]+")


def _is_ip_literal(inside: str) -> bool:
    """Whether the text between a host's brackets is an IPv6 address or an IPvFuture one
    (RFC 3986 §3.2.2), as urlsplit checks it."""
    if _IP_FUTURE.fullmatch(inside):
        return True
    try:
        ipaddress.IPv6Address(inside)
    except ValueError:
        return False
    return True


def _split_origin(url: str) -> tuple[str, str]:
    """Split an absolute URL into (scheme://authority, rest)."""
    start = url.find("//")
    if start < 0 or ":" not in url[:start]:
        raise UrlError("not an absolute URL", url)
    start += 2
    end = len(url)
    for sep in "/?#":
        i = url.find(sep, start)
        if 0 <= i < end:
            end = i
    return url[:end], url[end:]


class OriginCache:
    """Normalizes URLs, caching the normalized form of every origin seen.

    ``rewrite`` maps a normalized origin to another one (http→https reconciliation,
    www vs bare); it is consulted after normalization.
    """

    def __init__(self, max_origins: int = 100_000):
        self._origins: dict[str, str | UrlError] = {}
        self._max = max_origins
        self.rewrite: dict[str, str] = {}
        self.rewritten: dict[str, str] = {}  # normalized origins a rewrite applied to
        # Locations read other than as written (a scheme-less host), by reason, since the
        # last ``take_repairs``; a few examples with them.
        self.repairs: Counter[str] = Counter()
        self.repair_examples: list[dict[str, str]] = []
        self.version = 0  # bumped by ``invalidate``: URLs normalized before may differ

    def origin(self, raw_origin: str) -> str:
        cached = self._origins.get(raw_origin)
        if cached is None:
            try:
                cached = _normalize_origin(raw_origin)
                target = self.rewrite.get(cached)
                if target is not None:
                    if len(self.rewritten) < 100:
                        self.rewritten.setdefault(cached, target)
                    cached = target
            except UrlError as exc:
                cached = exc
            if len(self._origins) >= self._max:  # hostile input: many distinct hosts
                self._origins.clear()
            self._origins[raw_origin] = cached
        if isinstance(cached, UrlError):
            raise UrlError(cached.reason, raw_origin)
        return cached

    def normalize(self, url: str) -> str:
        """Return the normalized form of an absolute URL, or raise ``UrlError``."""
        # Fast path: ``http(s)://authority/path`` with a plain authority, whose origin is
        # already cached (one slice and one dict lookup instead of a scan for "/?#").
        slash = url.find("/", 8)
        if slash > 0:
            cached = self._origins.get(url[:slash])
            if cached is not None and cached.__class__ is str:
                rest = url[slash:]
                if _needs_work(rest):
                    rest = _normalize_rest(rest, url)
                return cached + rest
        raw_origin, rest = _split_origin(url)
        origin = self.origin(raw_origin)
        if not rest or _needs_work(rest):
            rest = _normalize_rest(rest, url)
        return origin + rest

    def normalize_many(self, raws: list[str], base: str) -> list[str | UrlError]:
        """Resolve (against ``base``) and normalize a batch of raw locations; each result
        is the URL or the ``UrlError`` saying why not. One call per batch keeps the
        per-URL cost of the common case — an absolute URL on a known origin — to a few
        C-level string operations (the same rules as ``normalize``); where it was built, a C
        pass over the batch works out every location on a cached origin (``_known_origins``)
        and the others take ``_resolved``."""
        if _known_origins is not None:
            urls, left = _known_origins.on_known_origins(
                raws, self._origins, _TRACKING_PREFIXES, _TRACKING_NAMES
            )
            for j in left:
                urls[j] = self._resolved(raws[j], base)
            return urls
        origins = self._origins
        # One search over the whole batch usually proves every location clean ("/" joins
        # them: a character that never needs work, so it can neither hide nor add one).
        # A dot segment across two locations ("…/.." + "/" + "…") is a false alarm only.
        joined = "/".join(raws)
        needs_work = _needs_work if _needs_work(joined) else None
        if needs_work is None and raws:
            same = self._one_clean_origin(raws)
            if same is not None:
                return same
        out: list[str | UrlError] = []
        append = out.append
        for raw in raws:
            # Only absolute http(s) URLs whose origin normalized cleanly are cached as str.
            slash = raw.find("/", 8)
            if slash > 0:
                cached = origins.get(raw[:slash])
                if cached is not None and cached.__class__ is str:
                    rest = raw[slash:]
                    if needs_work is None or not needs_work(rest):
                        append(cached + rest)
                        continue
            append(self._resolved(raw, base))
        return out

    def _resolved(self, raw: str, base: str) -> str | UrlError:
        """One location of ``normalize_many`` resolved and normalized, or why not."""
        try:
            raw = raw.strip()
            if not raw.startswith(("https://", "http://")):
                as_host = _as_host(raw, base)
                if as_host is not None:
                    self.note_repair(HOST_FIRST, raw, as_host, base)
                raw = as_host if as_host is not None else resolve(raw, base)
            return self.normalize(raw)
        except UrlError as exc:
            return exc

    def note_repair(self, reason: str, raw: str, url: str, document: str) -> None:
        """Count a location read other than as written (kept: ``take_repairs``)."""
        self.repairs[reason] += 1
        if len(self.repair_examples) < _REPAIR_EXAMPLES:
            self.repair_examples.append(
                {"raw": raw[:500], "url": url[:500], "reason": reason, "sitemap": document}
            )

    def take_repairs(self) -> tuple[Counter[str], list[dict[str, str]]]:
        """The repairs counted since the last call, and a few examples; then forget them."""
        taken = self.repairs, self.repair_examples
        self.repairs, self.repair_examples = Counter(), []
        return taken

    def _one_clean_origin(self, raws: list[str]) -> list[str | UrlError] | None:
        """The loop's result for a batch that needs no work and whose locations all start
        with one cached origin and a slash (a sitemap's usual batch), or None: a batch-level
        test, far cheaper than a find, a slice and a lookup per URL."""
        slash = shared_path_start(raws)
        if slash < 0:
            return None
        origin = raws[0][:slash]
        cached = self._origins.get(origin)
        if cached is None or cached.__class__ is not str:
            return None
        if cached == origin:
            return list(raws)
        return [cached + raw[slash:] for raw in raws]

    def invalidate(self) -> None:
        """Forget cached origins (after ``rewrite`` changed)."""
        self._origins.clear()
        self.version += 1


_DEFAULT = OriginCache()
_REPAIR_EXAMPLES = 100


def normalize(url: str, base: str | None = None) -> str:
    """Resolve a location against ``base`` (if given: ``resolve_location``) and normalize
    it; raise ``UrlError``."""
    url = resolve_location(url, base) if base is not None else url.strip()
    return _DEFAULT.normalize(url)


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of a normalized URL."""
    return _split_origin(url)[0]


def host_of(url: str) -> str:
    """Host (with port when not default) of a normalized URL."""
    return _split_origin(url)[0].partition("://")[2].rpartition("@")[2]


def shared_path_start(urls: list[str]) -> int:
    """Where the path starts in every URL of a non-empty batch (``url.find("/", 8)``), when
    all start with the first one's ``scheme://host[:port]/``; else -1. The smallest and
    largest URL share that start only if all do: two C-level scans, no loop per URL."""
    first = urls[0]
    slash = first.find("/", 8)
    if slash < 0:
        return -1
    prefix = first[: slash + 1]
    if not (min(urls).startswith(prefix) and max(urls).startswith(prefix)):
        return -1
    return slash


def twin_keys(urls: list[str]) -> list[str]:
    """``twin_key`` for a batch (the dedup hot path): a URL already in the slash form is
    its own key (no new string), the common case on most sites."""
    return [
        url if url[-1] == "/" else (url + "/" if "?" not in url else twin_key(url)) for url in urls
    ]


def twin_key(url: str) -> str:
    """The key trailing-slash twins share (SPEC §5 rule 7): the URL in its slash form
    (``/foo`` and ``/foo/`` both give ``/foo/``); the URL itself when already so."""
    query = url.find("?")
    end = len(url) if query < 0 else query
    if url[end - 1] == "/":
        return url
    return url[:end] + "/" + url[end:]
