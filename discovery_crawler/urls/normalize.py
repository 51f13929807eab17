"""Resolve and normalize URLs before they enter the discovered set.

This is the hot path of a sitemap walk (millions of calls), so it is written for speed:
the scheme/host/port part of a URL repeats across a sitemap and is normalized once per
distinct origin (``OriginCache``); the rest of the URL is handled with plain string
operations. ``urllib.parse`` / ``w3lib`` are used on the slow (general) path only — measured
here, ``urljoin`` costs ~7 µs and ``safe_url_string`` ~7 µs per URL, against a budget of
~6 µs for the whole per-URL pipeline (STACK.md).

Rules applied now (SPEC §5 rules 1-4): lowercase scheme and host, IDN host to punycode,
strip default ports, bare host gets ``/``, strip fragments. The remaining rules (percent
escapes, tracking parameters, trailing-slash and www twins) belong to the URL pipelines.
"""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

DEFAULT_PORTS = {"http": "80", "https": "443"}
# ASCII controls, DEL and spaces never belong in a host (IDNA maps away the invisible
# Unicode ones, such as U+200B).
_BAD_HOST_CHARS = re.compile("[\x00-\x20\x7f]")


class UrlError(ValueError):
    """A URL that cannot be resolved or normalized; ``reason`` says why in words."""

    def __init__(self, reason: str, raw: str):
        super().__init__(f"{reason}: {raw[:200]!r}")
        self.reason = reason
        self.raw = raw


def resolve(raw: str, base: str) -> str:
    """Resolve ``raw`` (absolute, root-relative or ``./x``) against ``base``."""
    raw = raw.strip()
    if not raw:
        raise UrlError("empty URL", raw)
    if raw.startswith(("https://", "http://")):
        return raw
    try:
        return urljoin(base, raw)
    except ValueError as exc:  # e.g. an invalid IPv6 literal
        raise UrlError(f"cannot resolve ({exc})", raw) from None


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
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            raise UrlError("invalid international host name", scheme_and_authority) from None
    if "[" in parts.netloc:  # an IP literal (IPv6, IPvFuture) keeps its brackets
        host = f"[{host}]"
    netloc = host
    if port is not None and str(port) != DEFAULT_PORTS[scheme]:
        netloc = f"{host}:{port}"
    userinfo = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
    if userinfo:
        netloc = f"{userinfo}@{netloc}"
    return f"{scheme}://{netloc}"


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

    def origin(self, raw_origin: str) -> str:
        cached = self._origins.get(raw_origin)
        if cached is None:
            try:
                cached = _normalize_origin(raw_origin)
                cached = self.rewrite.get(cached, cached)
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
                hash_at = rest.find("#")
                if hash_at >= 0:
                    rest = rest[:hash_at].rstrip()
                if not rest.isprintable():
                    raise UrlError("control characters in URL", url)
                return cached + rest
        raw_origin, rest = _split_origin(url)
        origin = self.origin(raw_origin)
        hash_at = rest.find("#")
        if hash_at >= 0:
            rest = rest[:hash_at].rstrip()
        if not rest or rest[0] == "?":
            rest = "/" + rest
        if not rest.isprintable():
            raise UrlError("control characters in URL", url)
        return origin + rest

    def normalize_many(self, raws: list[str], base: str) -> list[str | UrlError]:
        """Resolve (against ``base``) and normalize a batch of raw locations; each result
        is the URL or the ``UrlError`` saying why not. One call per batch keeps the
        per-URL cost of the common case — an absolute URL on a known origin — to a few
        C-level string operations (the same rules as ``normalize``)."""
        origins = self._origins
        out: list[str | UrlError] = []
        append = out.append
        for raw in raws:
            # Only absolute http(s) URLs whose origin normalized cleanly are cached as str.
            slash = raw.find("/", 8)
            if slash > 0:
                cached = origins.get(raw[:slash])
                if cached is not None and cached.__class__ is str and "#" not in raw:
                    rest = raw[slash:]
                    if rest.isprintable():
                        append(cached + rest)
                        continue
            try:
                if not raw.startswith(("https://", "http://")):
                    raw = resolve(raw, base)
                append(self.normalize(raw))
            except UrlError as exc:
                append(exc)
        return out

    def invalidate(self) -> None:
        """Forget cached origins (after ``rewrite`` changed)."""
        self._origins.clear()


_DEFAULT = OriginCache()


def normalize(url: str, base: str | None = None) -> str:
    """Resolve ``url`` against ``base`` (if given) and normalize it; raise ``UrlError``."""
    url = resolve(url, base) if base is not None else url.strip()
    return _DEFAULT.normalize(url)


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of a normalized URL."""
    return _split_origin(url)[0]


def host_of(url: str) -> str:
    """Host (with port when not default) of a normalized URL."""
    return _split_origin(url)[0].partition("://")[2].rpartition("@")[2]
