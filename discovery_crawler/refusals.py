"""Say why a page fetch yielded no page: one refusal class per fetch (SPEC §11).

A crawl that reports "0 links on /members/" without saying the server answered with a login
redirect, a Cloudflare challenge or an empty JavaScript shell leaves its user guessing. So
every page fetch that does not yield a page becomes a ``Refusal`` record with exactly one
class, the status, a reason in words and the citation of the page that linked to it:

- ``missing``: 404 / 410 (never rendered);
- ``login``: a redirect chain ending on a login address (``/login``, ``/signin``,
  ``/auth``…, or a ``login.`` / ``accounts.`` host) whose query carries a return parameter
  pointing back to a URL of the chain (``?next=/members/``);
- ``wall``: 401, 403, 429, 451, named in words; a 503 that reads as a block page (a
  Cloudflare challenge, ``cf-mitigated: challenge``, or a block page's text); or a short 2xx
  page whose text reads like a block page (captcha, "access denied", "enable JavaScript and
  cookies", Cloudflare's "Just a moment...") with few links;
- ``download``: the server sent a file (PDF, zip, image…), by Content-Disposition
  ``attachment`` or a Content-Type that is not HTML (a body sniffed as HTML is a page);
  or a response over DOWNLOAD_MAXSIZE, not read (``classify_oversize``: a Content-Encoding
  bomb, which Scrapy refuses after the refusal middleware has seen the response);
- ``shell``: HTML with scripts, an app root (``<div id="root|app|__next">``…) and no
  readable text, and few or no links — when no browser ran;
- ``server_error``: a 5xx answer (500, 502, 504, 522…; a 503 that is not a block page:
  the server is down or overloaded), once its retries are spent (``middlewares/retry.py``);
- ``timeout``: the fetch timed out (``classify_failure``), or the server answered 408;
- ``network``: the fetch failed: connection refused or reset, DNS (``classify_failure``).

Checked in that order (``classify_response``): a 404 behind a login redirect is missing; a
403 serving a PDF is a wall. Other statuses (400, an unfollowed 3xx) are not refusals: the
page record's status says what happened.

Near misses matter as much as hits: a short real page is not a wall, a page that mentions
"login" is not a login refusal, a server-rendered Next.js page (``id="__next"`` full of text
and links) is not a shell. The HTML checks cost a lowercase copy of the body and a few byte
searches per page; lxml parses only pages that could be walls or shells (few links, and a
block-page phrase or a script), so a crawl of ordinary pages does not parse twice.

No Scrapy imports: the downloader middleware (``middlewares/refusals.py``) is a thin layer
over these functions.
"""

from __future__ import annotations

import hashlib
import re
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qsl, unquote, urljoin, urlsplit

import lxml.etree
import lxml.html

REFUSAL_CLASSES: tuple[str, ...] = (
    "download",
    "missing",
    "wall",
    "login",
    "shell",
    "server_error",
    "timeout",
    "network",
)
"""The closed set of classes, in the order tallies are reported."""

MISSING_STATUSES = frozenset({404, 410})
WALL_STATUSES = frozenset({401, 403, 429, 451})
_WALL_WHY = {
    401: "the server asks for credentials",
    403: "access denied by the server",
    429: "rate limited by the server",
    451: "blocked for legal reasons",
    503: "the server turns crawlers away",
}
# 503 is what an overloaded or down server answers, and what some bot walls answer: a wall
# only when it says so (a challenge header, a block page), a server error otherwise.
UNAVAILABLE = 503
TIMEOUT_STATUS = 408  # the server gave up waiting for the request: a timeout
# Status codes with no phrase in http.HTTPStatus that servers and CDNs send.
_SERVER_WHY = {
    520: "the CDN got an unknown error from the origin",
    521: "the origin refused the CDN's connection",
    522: "the CDN's connection to the origin timed out",
    523: "the origin is unreachable from the CDN",
    524: "the origin did not answer the CDN in time",
}

ANCHOR_MAX = 160  # SPEC §10: citation anchors are at most 160 characters

# A block page is short and has few links (a real page that mentions a captcha has a menu).
WALL_MAX_WORDS = 200
WALL_MAX_LINKS = 10
# A shell has (almost) no text and few links; an app root allows a "Loading…" line.
SHELL_MAX_LINKS = 3
SHELL_MAX_WORDS_WITH_ROOT = 20
# Only bodies this small are parsed for the wall check (block pages are a few KB to ~100 KB).
_WALL_MAX_BYTES = 256 * 1024
# Bodies with more "<a" tags than these cannot be a wall / a shell: no parse, no phrase scan.
_MAX_ANCHOR_TAGS = 3 * WALL_MAX_LINKS
_SHELL_MAX_ANCHOR_TAGS = 4 * SHELL_MAX_LINKS

_HTML_TYPES = ("text/html", "application/xhtml+xml")
# Types that may still carry HTML (misconfigured servers): decided by sniffing the body.
_SNIFF_TYPES = ("", "text/plain", "application/octet-stream", "application/xml", "text/xml")
_HTML_START = re.compile(
    rb"^\s*(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b", re.I | re.S
)
_MAGIC = (
    (b"%PDF-", "a PDF"),
    (b"PK\x03\x04", "a zip archive"),
    (b"\x1f\x8b", "gzip data"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
)

# Block-page phrases, matched in the title and the text (noscript included) with
# whitespace collapsed. Each names what it is; "just a moment" only counts in the title
# (Cloudflare's interstitial), where no ordinary page puts it alone.
_WALL_PHRASES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), name)
    for p, name in (
        (r"\bcaptcha\b|recaptcha|hcaptcha", "captcha"),
        (r"\baccess (?:is |was )?denied\b", "access denied"),
        (r"\benable javascript and cookies\b", "enable JavaScript and cookies"),
        (r"\bchecking (?:if the site connection is secure|your browser)\b", "browser check"),
        (r"\battention required\b", "attention required (Cloudflare)"),
        (r"\bverify(?:ing)? (?:that )?you are (?:a )?human\b", "verify you are human"),
        (r"\bare you (?:a robot|human)\b|\bnot a robot\b", "are you a robot"),
        (r"\bunusual traffic\b", "unusual traffic"),
        (r"\byou (?:have|'ve) been blocked\b|\brequest (?:was )?blocked\b", "blocked"),
        (r"\bpardon our interruption\b", "pardon our interruption"),
        (r"\bddos protection\b", "DDoS protection"),
        (r"\brequest unsuccessful\. incapsula\b", "Incapsula"),
        (r"\bplease (?:enable|turn on) cookies\b", "enable cookies"),
        (r"\btoo many requests\b", "too many requests"),
        (r"\b403 forbidden\b", "403 Forbidden"),
    )
)
_WALL_TITLE_PHRASES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^just a moment\b"), "Cloudflare challenge"),
    (re.compile(r"^please wait\b"), "challenge page"),
)
# Cheap byte pre-check: a body none of these occur in cannot be a block page.
_WALL_HINTS = (
    b"captcha",
    b"access denied",
    b"access is denied",
    b"access was denied",
    b"javascript and cookies",
    b"checking your browser",
    b"checking if the site",
    b"attention required",
    b"you are human",
    b"you are a human",
    b"are you a robot",
    b"are you human",
    b"not a robot",
    b"unusual traffic",
    b"been blocked",
    b"request blocked",
    b"request was blocked",
    b"pardon our interruption",
    b"ddos protection",
    b"incapsula",
    b"enable cookies",
    b"turn on cookies",
    b"too many requests",
    b"403 forbidden",
    b"just a moment",
    b"please wait",
)

_APP_ROOT_IDS = frozenset(
    {"root", "app", "__next", "__nuxt", "___gatsby", "app-root", "svelte", "main-app", "q-app"}
)
_APP_ROOT_TAGS = frozenset({"app-root"})  # Angular's default root component
_APP_ROOT_ATTRS = ("ng-app", "data-reactroot", "ng-version", "data-v-app")
_NOT_TEXT = ("script", "style", "noscript", "template", "svg")

_LOGIN_SEGMENTS = frozenset(
    {
        "login",
        "log-in",
        "log_in",
        "logon",
        "signin",
        "sign-in",
        "sign_in",
        "auth",
        "authenticate",
        "authorize",
        "oauth",
        "sso",
        "cas",
        "wp-login.php",
        "servicelogin",
    }
)
_LOGIN_STEMS = frozenset({"login", "logon", "signin", "sign-in", "auth", "sso"})
_LOGIN_HOST_PREFIXES = ("login.", "auth.", "sso.", "signin.", "accounts.", "account.", "id.")


@dataclass
class Refusal:
    """One page fetch that yielded no page: its class, why, and where it was linked from."""

    refusal_class: str
    url: str
    status: int | None
    reason: str
    final_url: str | None = None  # where a redirect chain ended, when it did
    found_on: str | None = None
    anchor: str | None = None
    depth: int | None = None
    via: str | None = None

    def cite(self, meta: Mapping[str, Any]) -> Refusal:
        """Copy the citation (found_on, anchor, depth, via) from a request's meta.

        Read from top-level keys or a ``citation`` dict in the meta; missing ones stay None.
        """
        citation = meta.get("citation")
        sources = (meta, citation) if isinstance(citation, Mapping) else (meta,)
        for source in sources:
            for key in ("found_on", "anchor", "depth", "via"):
                value = source.get(key)
                if value is not None and getattr(self, key) is None:
                    setattr(self, key, value)
        if isinstance(self.anchor, str) and len(self.anchor) > ANCHOR_MAX:
            self.anchor = self.anchor[:ANCHOR_MAX]
        return self

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["class"] = data.pop("refusal_class")
        return {"class": data.pop("class"), **data}


# -- HTML signals ----------------------------------------------------------------------------


@dataclass(frozen=True)
class PageSignals:
    """What one parse of an HTML body says about it."""

    title: str
    text: str  # readable text: body text without script, style, noscript, template
    noscript: str  # text inside <noscript> (block pages put their message there)
    links: int  # <a>/<area> with an href that leaves the page (not "#…", not javascript:)
    scripts: int
    app_root: bool

    @property
    def words(self) -> int:
        return len(self.text.split())


def _collapse(text: str) -> str:
    return " ".join(text.split())


def page_signals(html: bytes | str) -> PageSignals:
    """Parse an HTML body once (lxml) and collect what the wall and shell checks need."""
    empty = PageSignals("", "", "", 0, 0, False)
    if not html or not html.strip():
        return empty
    try:
        root = lxml.html.document_fromstring(html)
    except (lxml.etree.ParserError, ValueError):
        return empty
    title_el = root.find(".//title")
    title = _collapse(title_el.text_content()) if title_el is not None else ""
    scripts = 0
    links = 0
    app_root = False
    for el in root.iter(lxml.etree.Element):
        tag = el.tag if isinstance(el.tag, str) else ""
        if tag == "script":
            scripts += 1
        elif tag in ("a", "area"):
            href = (el.get("href") or "").strip().lower()
            if href and not href.startswith(("#", "javascript:")):
                links += 1
        if not app_root and (
            (el.get("id") or "").lower() in _APP_ROOT_IDS
            or tag in _APP_ROOT_TAGS
            or any(el.get(a) is not None for a in _APP_ROOT_ATTRS)
        ):
            app_root = tag not in ("html", "head", "script", "style")
    noscript = _collapse(" ".join(el.text_content() for el in root.iter("noscript")))
    body = root.find("body")
    if body is None:
        return PageSignals(title, "", noscript, links, scripts, app_root)
    lxml.etree.strip_elements(body, *_NOT_TEXT, with_tail=False)
    return PageSignals(title, _collapse(body.text_content()), noscript, links, scripts, app_root)


def readable_text(html: bytes | str) -> str:
    """The text a reader sees in the body: no scripts, styles, noscript or templates."""
    return page_signals(html).text


def looks_like_shell(html: bytes | str) -> bool:
    """True for a JavaScript shell: scripts, an app root (or no text at all), no readable
    text and few or no links."""
    return _shell_reason(page_signals(html)) is not None


def _shell_reason(sig: PageSignals) -> str | None:
    if not sig.scripts or sig.links > SHELL_MAX_LINKS:
        return None
    if sig.app_root and sig.words <= SHELL_MAX_WORDS_WITH_ROOT:
        what = f"{sig.words} words" if sig.words else "no readable text"
    elif sig.words == 0:
        what = "no readable text"
    else:
        return None
    links = f"{sig.links} link" + ("" if sig.links == 1 else "s")
    root = "an app root, " if sig.app_root else ""
    return f"JavaScript shell: {sig.scripts} script(s), {root}{what}, {links}"


def _wall_reason(sig: PageSignals) -> str | None:
    words = len(f"{sig.text} {sig.noscript}".split())
    if words > WALL_MAX_WORDS or sig.links > WALL_MAX_LINKS:
        return None
    title = sig.title.lower()
    for pattern, name in _WALL_TITLE_PHRASES:
        if pattern.search(title):
            return f'block page: "{sig.title[:80]}" ({name}), {words} words'
    haystack = f"{title} {sig.text} {sig.noscript}".lower()
    for pattern, name in _WALL_PHRASES:
        if pattern.search(haystack):
            return f'block page: reads "{name}", {words} words, {sig.links} links'
    return None


# -- response classification -----------------------------------------------------------------


def _header(headers: Mapping[Any, Any] | None, name: str) -> str:
    """A header's value as text, whatever the mapping's key case or value type."""
    if not headers:
        return ""
    value = headers.get(name)
    if value is None:
        lname = name.lower()
        for key, val in headers.items():
            k = key.decode("latin-1") if isinstance(key, bytes) else str(key)
            if k.lower() == lname:
                value = val
                break
    if isinstance(value, list | tuple):
        value = value[-1] if value else None
    if isinstance(value, bytes):
        return value.decode("latin-1")
    return "" if value is None else str(value)


def _status_words(status: int) -> str:
    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return str(status)


def _looks_like_html(body: bytes) -> bool:
    head = body[:1024].lstrip(b"\xef\xbb\xbf")
    return bool(_HTML_START.match(head)) or b"<html" in head.lower()


def _download_reason(headers: Mapping[Any, Any] | None, body: bytes) -> str | None:
    ctype_full = _header(headers, "Content-Type").strip()
    ctype = ctype_full.split(";", 1)[0].strip().lower()
    disposition = _header(headers, "Content-Disposition").strip()
    attachment = disposition.lower().startswith("attachment")
    if ctype in _HTML_TYPES and not attachment:
        return None
    if not attachment and ctype in _SNIFF_TYPES and (not body or _looks_like_html(body)):
        return None
    what = ctype or next((name for magic, name in _MAGIC if body.startswith(magic)), "")
    what = what or "a body with no Content-Type"
    if attachment:
        match = re.search(r"filename\*?=(?:UTF-8'')?\"?([^\";]+)", disposition, re.I)
        name = f" {unquote(match.group(1))}" if match else ""
        return f"server sent a file{name} ({what}, as an attachment), not HTML"
    return f"server sent {what}, not HTML"


def _same_page(a: str, b: str) -> bool:
    """Same host, path (trailing slash ignored) and query; scheme and fragment ignored."""
    sa, sb = urlsplit(a), urlsplit(b)
    return (
        sa.netloc.lower() == sb.netloc.lower()
        and (sa.path.rstrip("/") or "/") == (sb.path.rstrip("/") or "/")
        and sa.query == sb.query
    )


def is_login_url(url: str) -> bool:
    """A login address: a path segment like /login, /signin, /auth, or a login host."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if host.startswith(_LOGIN_HOST_PREFIXES):
        return True
    for segment in parts.path.lower().split("/"):
        if segment in _LOGIN_SEGMENTS or segment.rsplit(".", 1)[0] in _LOGIN_STEMS:
            return True
    return False


def _return_param(login_url: str, chain: Iterable[str]) -> str | None:
    """The name of the query parameter of ``login_url`` that points back into ``chain``."""
    chain = [u for u in chain if not is_login_url(u)]
    if not chain:
        return None
    for name, value in parse_qsl(urlsplit(login_url).query, keep_blank_values=False):
        for candidate in {value, unquote(value)}:
            target = urljoin(chain[0], candidate.strip())
            if any(_same_page(target, u) for u in chain):
                return name
    return None


def classify_response(
    url: str,
    status: int,
    headers: Mapping[Any, Any] | None,
    body: bytes,
    redirect_urls: Iterable[str] | None = None,
    *,
    rendered: bool = False,
) -> Refusal | None:
    """Classify a page response; None when it yields a page.

    ``url`` is where the response came from (the end of any redirect chain);
    ``redirect_urls`` the URLs requested before it (Scrapy's ``meta["redirect_urls"]``), the
    first being the URL the crawl asked for, which the record names. ``rendered``: a browser
    ran, so an empty page is what it is and not a shell.
    """
    chain = list(redirect_urls or ())
    requested = chain[0] if chain else url
    final = url if chain else None
    body = body or b""
    if status in MISSING_STATUSES:
        return Refusal("missing", requested, status, f"{_status_words(status)}", final)
    if chain and is_login_url(url):
        param = _return_param(url, chain)
        if param is not None:
            return Refusal(
                "login",
                requested,
                status,
                f"redirected to a login page ({urlsplit(url).path or '/'}) "
                f"with {param}= pointing back",
                final,
            )
    challenge = _header(headers, "cf-mitigated").lower() == "challenge"
    retry_after = _header(headers, "Retry-After").strip()
    if status in WALL_STATUSES or (status == UNAVAILABLE and challenge):
        reason = f"{_status_words(status)}: {_WALL_WHY[status]}"
        if challenge:
            reason += " (Cloudflare challenge)"
        if retry_after and status in (429, 503):
            reason += f", retry after {retry_after}"
        return Refusal("wall", requested, status, reason, final)
    if status == UNAVAILABLE and (why := _block_page_reason(body)):
        return Refusal("wall", requested, status, f"{_status_words(status)}: {why}", final)
    if status == TIMEOUT_STATUS:
        reason = f"{_status_words(status)}: the server gave up waiting for the request"
        return Refusal("timeout", requested, status, reason, final)
    if 500 <= status < 600:
        reason = f"{_status_words(status)}: {_SERVER_WHY.get(status, 'the server failed')}"
        if retry_after:
            reason += f", retry after {retry_after}"
        return Refusal("server_error", requested, status, reason, final)
    if not 200 <= status < 300:
        return None
    why = _download_reason(headers, body)
    if why is not None:
        return Refusal("download", requested, status, why, final)
    # Cheap gates before any parse: walls and shells have few links, so a body with many
    # "<a" tags (an over-count: <abbr>, <article>… match too) is a page; hints pick walls.
    lower = body.lower()
    anchor_tags = lower.count(b"<a")
    if anchor_tags > _MAX_ANCHOR_TAGS:
        return None
    wall_candidate = len(body) <= _WALL_MAX_BYTES and any(h in lower for h in _WALL_HINTS)
    shell_candidate = not rendered and anchor_tags <= _SHELL_MAX_ANCHOR_TAGS and b"<script" in lower
    if not (wall_candidate or shell_candidate):
        return None
    sig = page_signals(body)
    if wall_candidate and (why := _wall_reason(sig)):
        return Refusal("wall", requested, status, why, final)
    if shell_candidate and (why := _shell_reason(sig)):
        return Refusal("shell", requested, status, why, final)
    return None


def _block_page_reason(body: bytes) -> str | None:
    """Why a body reads as a block page (a short page with a block-page phrase), or None."""
    if not body or len(body) > _WALL_MAX_BYTES:
        return None
    lower = body.lower()
    if lower.count(b"<a") > _MAX_ANCHOR_TAGS or not any(h in lower for h in _WALL_HINTS):
        return None
    return _wall_reason(page_signals(body))


# -- failures --------------------------------------------------------------------------------

# By exception class name (any class in the MRO), so no Scrapy or Twisted import is needed.
_NOT_FETCH_FAILURES = frozenset(
    {
        "IgnoreRequest",
        "DownloadCancelledError",
        "CancelledError",
        "StopDownload",
        "UnsupportedURLSchemeError",
        "NotSupported",
        "NotConfigured",
        "CloseSpider",
    }
)
_TIMEOUTS = frozenset(
    {"DownloadTimeoutError", "TimeoutError", "TCPTimedOutError", "UserTimeoutError"}
)
_NETWORK_WORDS = {
    "CannotResolveHostError": "DNS lookup failed",
    "DNSLookupError": "DNS lookup failed",
    "DownloadConnectionRefusedError": "connection refused",
    "ConnectionRefusedError": "connection refused",
    "ConnectionResetError": "connection reset",
    "ConnectionAbortedError": "connection aborted",
    "ConnectionLost": "connection lost before a full response",
    "ConnectionDone": "connection closed before a full response",
    "ResponseNeverReceived": "connection closed before a response",
    "ResponseDataLossError": "response cut short (data loss)",
    "DownloadFailedError": "download failed",
    "ResponseFailed": "download failed",
    "NoRouteError": "no route to host",
    "TunnelError": "proxy tunnel failed",
    "SSLError": "TLS handshake failed",
    "ConnectError": "could not connect",
}
# Browser (Playwright) errors carry Chromium's net::ERR_… codes in the message.
_CHROMIUM_NET = (
    ("ERR_NAME_NOT_RESOLVED", "network", "DNS lookup failed"),
    ("ERR_CONNECTION_REFUSED", "network", "connection refused"),
    ("ERR_CONNECTION_RESET", "network", "connection reset"),
    ("ERR_CONNECTION_CLOSED", "network", "connection closed before a full response"),
    ("ERR_TIMED_OUT", "timeout", "timed out"),
    ("ERR_CONNECTION_TIMED_OUT", "timeout", "connection timed out"),
    ("ERR_ADDRESS_UNREACHABLE", "network", "address unreachable"),
    ("ERR_INTERNET_DISCONNECTED", "network", "no network"),
    ("ERR_UNSAFE_PORT", "network", "port refused by the browser as unsafe"),
)
_CHROMIUM_ERROR = re.compile(r"net::(ERR_[A-Z_]+)")


def _message(exc: BaseException) -> str:
    """The exception's message on one line, without Playwright's multi-line call log."""
    text = str(exc).split("Call log:", 1)[0]
    return _collapse(text)[:200]


def classify_failure(url: str, exc: BaseException) -> Refusal | None:
    """Classify a failed fetch as ``timeout`` or ``network``, with the cause in words.

    None for exceptions that are not fetch failures (a request ignored by a middleware, a
    cancelled download, an unsupported scheme): those are decisions, not refusals. Any other
    exception is a ``network`` refusal naming its type.
    """
    names = [cls.__name__ for cls in type(exc).__mro__]
    if any(n in _NOT_FETCH_FAILURES for n in names):
        return None
    message = _message(exc)
    for code, refusal_class, words in _CHROMIUM_NET:
        if f"net::{code}" in message:
            return Refusal(refusal_class, url, None, f"{words} ({code}, in the browser)")
    if match := _CHROMIUM_ERROR.search(message):
        return Refusal("network", url, None, f"browser failed to load it ({match.group(1)})")
    if any(n in _TIMEOUTS for n in names):
        return Refusal("timeout", url, None, f"timed out: {message or names[0]}")
    if (tls := tls_failure_reason(exc)) is not None:
        return Refusal("network", url, None, f"TLS handshake failed ({tls})")
    for name in names:
        if name in _NETWORK_WORDS:
            if name in _GENERIC_FAILURES and (cause := failure_reason(exc)) != _NETWORK_WORDS[name]:
                # what it wraps says what happened; its message is a list of Failure reprs
                return Refusal("network", url, None, cause)
            detail = f": {message}" if message else ""
            return Refusal("network", url, None, f"{_NETWORK_WORDS[name]}{detail}")
    detail = f": {message}" if message else ""
    return Refusal("network", url, None, f"download failed ({names[0]}{detail})")


def classify_oversize(url: str, exc: BaseException) -> Refusal | None:
    """A fetch Scrapy stopped at DOWNLOAD_MAXSIZE (cancelled as it came, or ignored once
    decompressed past it) as a ``download`` refusal with the cap in words; else None."""
    text = download_cap_text(exc)
    return None if text is None else Refusal("download", url, None, text)


# Words that say only that something failed: a wrapped cause says more when there is one.
_GENERIC_FAILURES = frozenset({"DownloadFailedError", "ResponseFailed", "ConnectError"})


def _causes(exc: BaseException, limit: int = 8) -> list[BaseException]:
    """``exc``, then what it wraps: ``__cause__`` / ``__context__``, and the failures a
    Twisted ``ResponseFailed`` lists in ``reasons`` (each a ``Failure`` with a ``value``)."""
    found: list[BaseException] = []
    queue: list[BaseException] = [exc]
    while queue and len(found) < limit:
        current = queue.pop(0)
        if any(current is seen for seen in found):
            continue
        found.append(current)
        for inner in (current.__cause__, current.__context__):
            if isinstance(inner, BaseException):
                queue.append(inner)
        for reason in getattr(current, "reasons", None) or ():
            value = getattr(reason, "value", reason)
            if isinstance(value, BaseException):
                queue.append(value)
    return found


def failure_reason(exc: BaseException) -> str:
    """A failed fetch's cause in a few words, without its message: ``connection refused``,
    ``timed out``, ``DNS lookup failed``, ``connection lost before a full response``… (the
    reasons retries are counted by). A wrapped cause is looked through: Scrapy's
    ``DownloadFailedError`` around Twisted's ``ResponseFailed`` says only "download failed",
    the connection loss inside it says what happened."""
    generic = None
    for candidate in _causes(exc):
        names = [cls.__name__ for cls in type(candidate).__mro__]
        if any(n in _TIMEOUTS for n in names):
            return "timed out"
        name = next((n for n in names if n in _NETWORK_WORDS), None)
        if name is None:
            continue
        if name not in _GENERIC_FAILURES:
            return _NETWORK_WORDS[name]
        generic = generic or _NETWORK_WORDS[name]
    return generic or type(exc).__name__


# -- failures in words (no refusal class) ---------------------------------------------------
def describe_exception(exc: BaseException, maxsize: int = 0) -> tuple[str, str]:
    """(kind, message) of a fetch that got no answer: ``refused`` (a component refused it:
    robots.txt, the SSRF guard), ``too large`` (over DOWNLOAD_MAXSIZE, ``maxsize`` when
    Scrapy's message does not say it), ``dns lookup failed``, ``timeout``, ``connection
    refused``, ``tls handshake failed`` or ``network error``. The one place a failure is
    put in words (robots.txt fetches, sitemap attempts, the estimate)."""
    names = [cls.__name__ for cls in type(exc).__mro__]
    name = names[0]
    text = str(exc).strip() or name
    if (too_large := download_cap_text(exc, maxsize)) is not None:
        return "too large", too_large
    if "IgnoreRequest" in names:
        return "refused", text
    if "DNS" in name or "lookup" in text.lower():
        return "dns lookup failed", text
    if "Timeout" in name or "timed out" in text.lower():
        return "timeout", text
    if "Refused" in name:
        return "connection refused", text
    if (tls := tls_failure_reason(exc)) is not None:
        return "tls handshake failed", tls
    if name in _GENERIC_FAILURES and (cause := failure_reason(exc)) != _NETWORK_WORDS[name]:
        return "network error", f"{name}: {cause}"  # not the repr of the Failures it wraps
    return "network error", f"{name}: {text}"


def failure_text(exc: BaseException, maxsize: int = 0) -> str:
    """``describe_exception`` as one line, as a sitemap attempt's or robots.txt's error
    says it: ``DNS lookup failed: …``, ``timeout: …``, ``connection refused: …``,
    ``TLS handshake failed: …``, ``larger than DOWNLOAD_MAXSIZE …``, ``RobotsDisallowed:
    …``, ``ConnectionLost: …``."""
    kind, message = describe_exception(exc, maxsize)
    if kind == "dns lookup failed":
        return f"DNS lookup failed: {message}"
    if kind == "tls handshake failed":
        return f"TLS handshake failed: {message}"
    if kind in ("timeout", "connection refused"):
        return f"{kind}: {message}"
    if kind == "refused":
        if message.startswith("refused by the SSRF guard") and hasattr(exc, "reason"):
            return f"refused by the SSRF guard: {exc.reason}"  # the URL is the attempt's
        return f"{type(exc).__name__}: {message}"
    return message


# OpenSSL's reason, as pyOpenSSL lists it: [('SSL routines', '<function>', '<reason>')]
_SSL_REASON = re.compile(r"\('SSL routines', '[^']*', '([^']+)'\)")
_TLS_WORDS = re.compile(r"tls handshake failed \(([^)]+)\)", re.IGNORECASE)
# Scrapy's words for a download over DOWNLOAD_MAXSIZE (its downloader, HttpCompression).
_MAXSIZE = re.compile(
    r"(Expected to receive|Received) (\d+) bytes which is larger than download max size "
    r"\((\d+)\)"
)
_DECOMPRESSED = re.compile(
    r"\((\d+) B compressed, (\d+) B decompressed[^)]*\) exceeded DOWNLOAD_MAXSIZE \((\d+) B\)"
)


def tls_failure_reason(exc: BaseException) -> str | None:
    """What failed in a TLS handshake (``wrong version number``: the server speaks plain
    HTTP; ``sslv3 alert handshake failure``…), or None when ``exc`` is no TLS failure.
    Scrapy hands OpenSSL's error over wrapped (a ``DownloadFailedError`` of Twisted's
    ``ResponseNeverReceived``, its text listing the ``OpenSSL.SSL.Error``); a fail-closed
    robots.txt rule repeats it in words."""
    text = str(exc)
    if match := _SSL_REASON.search(text):
        return match.group(1)
    if "OpenSSL.SSL.Error" in text or type(exc).__module__ in ("OpenSSL.SSL", "ssl"):
        return "TLS error"
    if match := _TLS_WORDS.search(text):
        return match.group(1)
    return None


def download_cap_text(exc: BaseException, maxsize: int = 0) -> str | None:
    """A response over DOWNLOAD_MAXSIZE in words, or None when ``exc`` is not one. Scrapy
    cancels such a download (``DownloadCancelledError``: the size its Content-Length
    announced, or no words at all when it came in chunks) or, for a ``Content-Encoding``
    body, ignores it once decompressed past the cap (HttpCompressionMiddleware's
    ``IgnoreRequest``). ``maxsize``: the cap, when Scrapy's words do not say it."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    text = str(exc)
    if "DownloadCancelledError" in names:
        if match := _MAXSIZE.search(text):
            size, limit = int(match.group(2)), int(match.group(3))
            if match.group(1).startswith("Expected"):
                return (
                    f"larger than DOWNLOAD_MAXSIZE ({size_words(limit)}): {size:,} bytes "
                    "announced, not downloaded"
                )
            return (
                f"larger than DOWNLOAD_MAXSIZE ({size_words(limit)}): the download was "
                f"stopped at {size:,} bytes"
            )
        cap = f" ({size_words(maxsize)})" if maxsize else ""
        return f"larger than DOWNLOAD_MAXSIZE{cap}: the download was stopped past it"
    if "IgnoreRequest" in names and "DOWNLOAD_MAXSIZE" in text:
        if match := _DECOMPRESSED.search(text):
            served, inflated, limit = (int(g) for g in match.groups())
            return (
                f"larger than DOWNLOAD_MAXSIZE ({size_words(limit)}) once decompressed "
                f"(Content-Encoding): {served:,} bytes as served, over {inflated:,} "
                "decompressed, not read"
            )
        return "larger than DOWNLOAD_MAXSIZE once decompressed (Content-Encoding), not read"
    return None


def size_words(size: int) -> str:
    """A byte cap as people read it: ``64 MiB`` when it is whole mebibytes, else bytes."""
    mib = 1 << 20
    if size >= mib and size % mib == 0:
        return f"{size // mib:,} MiB"
    return f"{size:,} bytes"


# -- identical content -----------------------------------------------------------------------


class IdenticalContentTracker:
    """Warn when three or more distinct URLs serve byte-identical bodies (an interstitial,
    a soft-404 page, a consent wall…).

    Memory is bounded: per distinct body a 16-byte hash, a count and the first
    ``list_urls`` URLs; at most ``max_bodies`` bodies are remembered (the oldest are
    forgotten first), so a huge crawl costs a few megabytes at most.
    """

    def __init__(self, threshold: int = 3, list_urls: int = 5, max_bodies: int = 50_000):
        self.threshold = threshold
        self.list_urls = max(list_urls, threshold)
        self.max_bodies = max_bodies
        self._seen: OrderedDict[bytes, dict[str, Any]] = OrderedDict()
        self.warnings: list[dict[str, Any]] = []

    def add(self, url: str, body: bytes) -> dict[str, Any] | None:
        """Record one body; return the warning the first time its group reaches the
        threshold (the same dict stays in ``warnings`` and its count keeps growing)."""
        if not body:
            return None
        digest = hashlib.blake2b(body, digest_size=16).digest()
        entry = self._seen.get(digest)
        if entry is None:
            if len(self._seen) >= self.max_bodies:
                self._seen.popitem(last=False)
            self._seen[digest] = {"urls": [url], "count": 1, "warning": None}
            return None
        if url in entry["urls"]:
            return None
        entry["count"] += 1
        if len(entry["urls"]) < self.list_urls:
            entry["urls"].append(url)
        warning = entry["warning"]
        if warning is not None:
            warning["urls"] = list(entry["urls"])
            warning["count"] = entry["count"]
            return None
        if entry["count"] >= self.threshold:
            warning = {
                "warning": "identical_content",
                "message": (
                    f"{entry['count']} distinct URLs served byte-identical content "
                    f"(an interstitial?): {', '.join(entry['urls'])}"
                ),
                "count": entry["count"],
                "bytes": len(body),
                "urls": list(entry["urls"]),
            }
            entry["warning"] = warning
            self.warnings.append(warning)
            return warning
        return None


class RefusalSummary:
    """What a crawl's refusals add up to: counts per class (zeros included), the first
    ``list_cap`` records, identical-content warnings and what rendering did."""

    def __init__(self, list_cap: int = 1000):
        self.list_cap = list_cap
        self.counts: dict[str, int] = dict.fromkeys(REFUSAL_CLASSES, 0)
        self.records: list[dict[str, Any]] = []
        self.identical_content: list[dict[str, Any]] = []
        self.render: dict[str, Any] = {"mode": "never", "requested": 0, "rendered": 0}

    def add(self, record: dict[str, Any]) -> None:
        self.counts[record["class"]] = self.counts.get(record["class"], 0) + 1
        if len(self.records) < self.list_cap:
            self.records.append(record)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def line(self) -> str:
        """``Refusals (4): 2 missing, 1 wall, 1 login`` — or an empty string."""
        parts = [f"{n} {name}" for name, n in self.counts.items() if n]
        return f"Refusals ({self.total}): {', '.join(parts)}" if parts else ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "counts": dict(self.counts),
            "total": self.total,
            "listed": len(self.records),
            "records": list(self.records),
            "identical_content": list(self.identical_content),
            "render": dict(self.render),
        }
