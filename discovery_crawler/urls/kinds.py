"""Give every discovered URL exactly one kind, judged from the URL alone.

The kind tally is what tells a user what a site *is* (on vtu.ac.in, 7,907 of 17,126 discovered
URLs were PDFs), and SPEC §5 has it carried by every progress report and by the crawl log,
so it must cost next to nothing: it is computed once per URL as the URL is discovered, without
a request, and never from a response. The filter (``filters.py``) then drops or keeps a URL
partly by its kind.

The closed set of seven (``KINDS``) and the rules, first match wins:

1. **Extension** of the last path segment (the query is ignored, so ``/download?file=x.pdf``
   is a page), case-insensitive: ``document``, ``media``, ``archive`` (the three *file kinds*,
   ``FILE_KINDS``) or ``asset``. It comes first because it says what the server will send,
   whatever the path: ``/api/report.pdf`` is a document, ``/page/2/feed.xml`` an asset.
   ``.html``, ``.htm``, ``.php``, ``.aspx``, any extension not in the tables, a trailing slash
   (``/report.pdf/``) and no extension at all are not a file kind and fall through.
   ``.tar.gz`` / ``.tar.bz2`` are archives by their last extension; ``.xml.gz`` / ``.txt.gz`` are
   assets (compressed sitemaps and feeds, not downloads). A ``;param`` after the extension
   (``/a.pdf;jsessionid=x``) is ignored. The tables (``EXTENSION_KINDS``) hold SPEC's lists
   and more of the same nature (``csv`` and ``mobi`` documents; ``bmp``, ``tiff``, ``heic``,
   ``flac``, ``mkv``… media; ``iso``, ``zst``, ``jar``, ``ipa``… archives; ``xsl``, ``rss``,
   ``wasm``… assets); ``.ts`` is in none (TypeScript source or MPEG stream).
2. **api** — machine endpoints, not pages. Clear from the URL: a first path segment
   ``wp-json``, ``.well-known`` or ``graphql`` (as a whole segment: ``/graphql``,
   ``/wp-json/wp/v2/posts/index.html`` — WordPress exports write JSON into such files —,
   not ``/graphql-tutorial/``), WordPress's ``/xmlrpc.php`` and ``/wp-admin/admin-ajax.php``,
   and a ``rest_route`` query parameter (the WordPress REST API without pretty permalinks).
   A first segment ``api`` (``/api``, ``/api/v2/users``, ``/api?x`` — not
   ``/apis-explained/``, ``/en/api/``) is an API too **unless its last segment has a page's
   name** (``.html``, ``.htm``, ``.shtml``, ``.xhtml``): ``/api/ktk.Player.close.html`` is a
   page of a Sphinx API reference. The other ``/api/…`` paths are *api unless a fetch says HTML*
   (``fetch_decides``): where one is fetched (the link crawl fetches them), the answer's
   Content-Type decides (``answer_kind``: an HTML page is a ``page``, JSON, XML or anything
   else ``api``); where nothing is fetched (a sitemap walk), they stay ``api``. An API URL
   that is also paginated stays ``api``.
3. **paginated**: a page number N ≥ 2 in ``?page=N`` / ``?paged=N`` or in a ``/page/N`` pair of
   path segments at any depth (``/blog/page/3/``, ``/page/2/index.html``). Page 1 (and 0, and
   a non-number) *is* the page: ``?page=1`` and ``/page/1/`` are pages. Only those spellings:
   ``/page-2/`` (a WordPress duplicate slug), ``?p=2`` (a WordPress post id), ``?start=`` and
   ``?offset=`` are pages.
4. otherwise **page**.

Case: extensions and query parameter names are matched case-insensitively (``/report.PDF``,
``?Page=2``); path segments (``api``, ``page``) case-sensitively, as paths are case-sensitive
(RFC 3986) and every CMS writes them in lowercase.

Input URLs are normalized absolute http(s) URLs (lowercase scheme and host, no fragment); other
strings get a kind too (never an exception), judged by the same string rules.

Speed: no ``urlsplit``, which costs many times a ``str.find`` call or an ``in`` test.
``url_kinds_many`` settles the common case inside its loop, with no function call per URL: a
path with no query, no ``/page/``, no API root and no extension on its last segment
(``/section/article-123/``, ``/docs/intro``, ``/a/b.html``) costs one ``find``, two ``in``
tests, one ``startswith`` with a tuple and one last-character test (two ``rfind`` and an
``endswith`` when there is no trailing slash); the rest goes to ``url_kind``, which looks the
extension up in one dict. The scans are linear in the URL's length. Timings: bench/README.md.
"""

from __future__ import annotations

from discovery_crawler.compiled import extension
from discovery_crawler.urls.normalize import shared_path_start

# url_kinds_many's fast test in C (``_screens.c``); where it was not built, in Python
_screens = extension("discovery_crawler.urls._screens")

KINDS: tuple[str, ...] = (
    "page",
    "paginated",
    "api",
    "asset",
    "document",
    "media",
    "archive",
)
"""The closed set of kinds, in the order tallies are reported."""

FILE_KINDS: tuple[str, ...] = ("document", "media", "archive")
"""Files: never fetched, but each same-site one is kept in the inventory (see ``filters``)."""

_DOCUMENT = (
    "pdf doc docx xls xlsx ppt pptx odt ods odp rtf epub"
    # Also downloads a reader opens as a document (not in SPEC's list, same nature).
    " csv mobi"
)
_MEDIA = (
    # images
    "jpg jpeg jpe png gif webp avif svg svgz ico bmp tif tiff heic heif jxl apng"
    # audio
    " mp3 wav ogg oga opus m4a aac flac mid midi weba"
    # video (not .ts: TypeScript sources and MPEG transport streams share it)
    " mp4 m4v webm mov avi mkv wmv flv ogv mpg mpeg 3gp m3u8"
)
_ARCHIVE = (
    "zip tar gz tgz bz2 tbz2 xz txz zst lz lzma 7z rar cab iso"
    # installers and packages
    " dmg pkg exe msi apk ipa deb rpm jar appimage"
)
_ASSET = (
    "css js mjs cjs map json jsonld xml xsl xslt rss atom txt"
    " woff woff2 ttf otf eot webmanifest wasm"
)

EXTENSION_KINDS: dict[str, str] = {
    ext: kind
    for kind, exts in (
        ("document", _DOCUMENT),
        ("media", _MEDIA),
        ("archive", _ARCHIVE),
        ("asset", _ASSET),
    )
    for ext in exts.split()
}
"""Lowercase extension (no dot) → kind; an extension not here is not a file kind."""

# Compressed sitemaps and feeds: ``.gz`` alone would say archive.
_COMPRESSED_ASSETS = (".xml.gz", ".txt.gz", ".rss.gz")

# First path segments that make a URL an API endpoint (as a whole segment); under ``api``
# only where the last segment has no page's name (rule 2).
_API_ROOTS = frozenset(("api", "wp-json", ".well-known", "graphql"))
_API_PREFIXES = tuple("/" + root for root in _API_ROOTS)
_PAGE_NAMES = (".html", ".htm", ".shtml", ".xhtml")
_HTML_MEDIA = frozenset(("text/html", "application/xhtml+xml"))
_API_PATHS = frozenset(("/xmlrpc.php", "/wp-admin/admin-ajax.php"))
_API_PARAMS = frozenset(("rest_route",))

_PAGE_PARAMS = frozenset(("page", "paged"))

_EXTENSION_GET = EXTENSION_KINDS.get
# Last-segment endings that are certainly pages (no kind above, no API path): the batch
# fast path accepts them without a lookup. Not ".php": "/xmlrpc.php" is an API path.
_PAGE_SUFFIXES = (".html", ".htm", ".shtml", ".xhtml", ".aspx", ".asp", ".jsp", ".cfm")

_EMPTY_TALLY = dict.fromkeys(KINDS, 0)


def empty_tally() -> dict[str, int]:
    """A tally with all seven kinds at zero, in ``KINDS`` order (reports show zeros too)."""
    return _EMPTY_TALLY.copy()


def _page_number_at_least_2(digits: str) -> bool:
    """``digits`` is an ASCII decimal number ≥ 2 (any length, leading zeros allowed)."""
    if not digits or not digits.isascii() or not digits.isdigit():
        return False
    digits = digits.lstrip("0")
    return len(digits) > 1 or (digits != "" and digits >= "2")


def _extension_kind(url: str, start: int, end: int) -> str | None:
    """Rule 1: the file kind (or ``asset``) of the last segment of ``url[start:end]``."""
    dot = url.rfind(".", start, end)
    if dot < 0:
        return None
    ext = url[dot + 1 : end]
    if "/" in ext:
        return None
    kind = _EXTENSION_GET(ext) or _EXTENSION_GET(ext.lower())
    if kind is None:
        ext, semi, _ = ext.partition(";")  # /a.pdf;jsessionid=x
        if not semi:
            return None
        kind = _EXTENSION_GET(ext.lower())
        if kind is None:
            return None
        end = dot + 1 + len(ext)
    if kind == "archive" and url[start:end].lower().endswith(_COMPRESSED_ASSETS):
        return "asset"
    return kind


def _api_root(url: str, start: int, end: int) -> str | None:
    """The API root that is the first segment of the path ``url[start:end]``, if any."""
    if url.startswith(_API_PREFIXES, start):
        slash = url.find("/", start + 1, end)
        root = url[start + 1 : slash if slash >= 0 else end]
        if root in _API_ROOTS:
            return root
    return None


def _is_api(url: str, start: int, end: int, query: str) -> bool:
    """Rule 2, for an API root or ``rest_route`` (``url[start:end]`` is the path, ``query``
    the part after "?"); the exact ``_API_PATHS`` are checked with the extension."""
    root = _api_root(url, start, end)
    if root is not None and (root != "api" or not _page_named(url, start, end)):
        return True
    if "rest_route" in query.lower():
        for param in query.split("&"):
            if param.partition("=")[0].lower() in _API_PARAMS:
                return True
    return False


def _page_named(url: str, start: int, end: int) -> bool:
    """The last segment of the path ``url[start:end]`` has a page's name (``x.html``)."""
    if url.endswith(_PAGE_NAMES, start, end):
        return True
    dot = url.rfind(".", start, end)
    return dot >= 0 and url[dot:end].lower() in _PAGE_NAMES


def _path_bounds(url: str) -> tuple[int, int, str]:
    """(start, end, query) of ``url``'s path, as ``url_kind`` finds them."""
    start = url.find("/", 8)
    if start < 0:
        start = url.find("?", 8)
        if start < 0:
            return len(url), len(url), ""
    end = url.find("?", start)
    if end < 0:
        return start, len(url), ""
    return start, end, url[end + 1 :]


def fetch_decides(url: str) -> bool:
    """Whether a fetch would settle ``url``'s kind: an ``/api/…`` path of kind ``api`` only by
    its root (rule 2: no page's name; not ``/wp-json/``, ``/.well-known/``, ``/graphql``, the
    WordPress endpoints nor ``rest_route``). Fetched, ``answer_kind`` says what it is."""
    start, end, query = _path_bounds(url)
    if _api_root(url, start, end) != "api" or url_kind(url) != "api":
        return False
    if query and "rest_route" in query.lower():
        return not any(p.partition("=")[0].lower() in _API_PARAMS for p in query.split("&"))
    return True


def answer_kind(content_type: str | None, html: bool = False) -> str:
    """The kind of a fetched ``fetch_decides`` URL by its 2xx answer: ``page`` when it is an
    HTML page (Content-Type ``text/html`` or ``application/xhtml+xml``), else ``api`` (JSON,
    XML, text…). ``html``: what the body looked like, for an answer without a Content-Type
    (Scrapy's sniffing: whether it made an ``HtmlResponse``)."""
    media = (content_type or "").partition(";")[0].strip().lower()
    if media:
        return "page" if media in _HTML_MEDIA else "api"
    return "page" if html else "api"


def _is_paginated(url: str, start: int, end: int, query: str) -> bool:
    """Rule 3 (same arguments as ``_is_api``)."""
    if "page" in query.lower():
        for param in query.split("&"):
            name, _, value = param.partition("=")
            if name.lower() in _PAGE_PARAMS and _page_number_at_least_2(value):
                return True
    at = url.find("/page/", start, end)
    while at >= 0:
        digits_start = at + 6
        slash = url.find("/", digits_start, end)
        if _page_number_at_least_2(url[digits_start : slash if slash >= 0 else end]):
            return True
        at = url.find("/page/", at + 5, end)
    return False


def url_kind(url: str) -> str:
    """The kind of one URL: one of ``KINDS`` (see the module docstring for the rules)."""
    # The path runs from the first "/" after "scheme://" (index 8 on: "https://" is 8 long,
    # and an http host has at least one character) to the "?". A URL without a path (not
    # normalized: "https://x.com?a") has an empty one.
    start = url.find("/", 8)
    if start < 0:
        start = url.find("?", 8)
        if start < 0:
            return "page"
    end = url.find("?", start)
    if end < 0:
        end = len(url)
        query = ""
    else:
        query = url[end + 1 :]
    if url.find(".", start, end) >= 0:
        kind = _extension_kind(url, start, end)
        if kind is not None:
            return kind
        if url[start:end] in _API_PATHS:
            return "api"
    if (query or url.startswith(_API_PREFIXES, start)) and _is_api(url, start, end, query):
        return "api"
    if (query or "/page/" in url) and _is_paginated(url, start, end, query):
        return "paginated"
    return "page"


def url_kinds_many(urls: list[str]) -> list[str]:
    """The kinds of a batch of URLs (same as ``[url_kind(u) for u in urls]``, faster).

    Fast path: no query, no ``/page/`` (the host cannot hold a "/", so a substring test over
    the whole URL is a safe over-approximation), no API root as first segment, and no file
    extension (a trailing "/", the last "." before the last "/", or a page extension such as
    ``.html``): that URL is a page under every rule of ``url_kind``. The path is located with
    the same ``find`` as ``url_kind``. Everything else goes to ``url_kind``. The fast test
    runs in C where ``_screens`` was built (one scan of each URL, no bytecode per URL).
    """
    if _screens is not None and urls.__class__ is list:
        kinds = ["page"] * len(urls)
        for i in _screens.not_plain_pages(urls, _API_PREFIXES, _PAGE_SUFFIXES):
            kinds[i] = url_kind(urls[i])
        return kinds
    if urls and _all_pages(urls):
        return ["page"] * len(urls)
    out: list[str] = []
    append = out.append
    kind_of = url_kind
    api_prefixes = _API_PREFIXES
    page_suffixes = _PAGE_SUFFIXES
    for url in urls:
        start = url.find("/", 8)
        if (
            start >= 0
            and "?" not in url
            and "/page/" not in url
            and not url.startswith(api_prefixes, start)
            and (url[-1] == "/" or url.rfind(".") < url.rfind("/") or url.endswith(page_suffixes))
        ):
            append("page")
        else:
            append(kind_of(url))
    return out


def _all_pages(urls: list[str]) -> bool:
    """Whether the fast path of ``url_kinds_many`` takes every URL of the batch, checked on
    the whole batch at once (a sitemap's usual batch: one origin, paths ending in "/"): a few
    scans of the joined batch, far cheaper than the per-URL tests."""
    start = shared_path_start(urls)
    if start < 0:
        return False
    n = len(urls)
    text = "\n" + "\n".join(urls) + "\n"
    if text.count("\n") != n + 1 or text.count("/\n") != n:  # a "\n" in a URL, or a file
        return False
    if "?" in text or "/page/" in text:
        return False
    origin = "\n" + urls[0][:start]
    return not any(origin + api in text for api in _API_PREFIXES)
