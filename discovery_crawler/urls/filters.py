"""Decide, per normalized URL, whether it enters the inventory: keep, drop with a reason, or
keep with a flag (SPEC §5 "Filtering", §3 ``include_paths`` / ``exclude_paths``).

Every drop names its reason, so "found 10,000, kept 3,000" always comes with why. Reasons are
stable strings: they become stats keys (``discovery/urls/filtered/<reason>``, see
``stats_key``) and crawl-log entries. In the order they are tried — the first that applies is
the one reported:

=================  ==========================================================================
``scheme``         not an absolute http(s) URL: ``mailto:``, ``tel:``, ``javascript:``,
                   ``data:``, ``ftp:``… (``href_reason`` says it for a raw href, before
                   resolution and normalization, where these usually show up).
``other_host``     another origin than the site's (scheme, host or port differ; www vs bare
                   was already reconciled by normalization, SPEC §5 rule 8).
``asset``          kind ``asset`` (``kinds.py``): .css .js .json .xml .txt, fonts, maps…
``api``            kind ``api``: ``/wp-json/``, ``/.well-known/``, ``/graphql``…, and
                   ``/api/…`` paths without a page's name (``/api/x.html`` is a page) that
                   no fetch showed to be HTML (``kinds.py`` rule 2).
``pagination``     kind ``paginated``: past page 1.
``action``         a link that does something instead of showing something (see below).
``exclude_paths``  under one of the run's ``exclude_paths``.
``include_paths``  the run has ``include_paths`` and the URL is under none of them.
=================  ==========================================================================

The reasons that say what a URL *is* come before the user's scope, so the per-reason counts do
not depend on ``include_paths``: ``include_paths`` counts exactly the URLs that the scope alone
removed. ``exclude_paths`` wins over ``include_paths`` (include ``/blog``, exclude
``/blog/drafts``).

**File kinds are kept.** SPEC §5's filter list names ``.pdf``, ``.zip`` and images among the
"asset extensions" to drop, while its URL-kinds paragraph says the file kinds (``document``,
``media``, ``archive``) "never reach the download queue, but each same-site one is recorded once
with the page that linked to it" — and the tally of those kinds is what tells a user that 7,907
of 17,126 URLs on a site were PDFs. The kinds paragraph wins: a same-site file is *kept* here,
with its kind, and it is the kind (not this filter) that keeps it out of the download queue.
Only ``asset`` — what a page is made of, not what a site publishes — is dropped. The file kinds
obey everything else: another host, ``action``, ``exclude_paths`` and ``include_paths`` (the
scope is a path prefix, for files too).

**Action links** (dropped, whole path segments, case-insensitive, at any depth): ``logout``,
``log-out``, ``logoff``, ``log-off``, ``signout``, ``sign-out``, ``sign_out``, ``signoff``,
``delete``, ``remove``, ``add-to-cart`` — also with a script suffix (``logout.php``,
``Delete.aspx``); a cart add ``/cart/add`` or ``/basket/add`` (at any depth); and query
parameters named ``action``, ``replytocom``, ``add-to-cart``, ``add_to_cart``,
``add-to-wishlist``, ``add_to_wishlist``, ``remove_item``, ``_wpnonce`` (a WordPress nonce is
only ever on an action link), ``logout`` or ``delete``. ``/delete-your-data-guide/`` and
``/how-to-remove-stains/`` are pages: a word inside a segment is not the segment.

**requires_auth** (kept, flagged; the crawl does not fetch it). Whole segments,
case-insensitive, by how ambiguous the word is:

- anywhere in the path — the login words, which name a login page wherever they are:
  ``login``, ``log-in``, ``signin``, ``sign-in``, ``sign_in`` (Rails' Devise
  ``/users/sign_in``), ``my-account`` and ``wp-login.php``, also with a script suffix
  (``/Account/Login.aspx``);
- as the first segment only, or the second after a locale segment (``/en/``, ``/pt-br/``,
  ``/zh_hans/``) — the nouns, which deeper down are as often a topic as a wall (``/docs/admin/``
  on a documentation site, ``git checkout`` in ``/guides/checkout/``): ``account``,
  ``dashboard``, ``admin``, ``checkout``, ``wp-admin``.

``/accounting/``, ``/administration-of-justice/`` and ``/dashboard-page/`` are not flagged. A
wall the rule misses (``/shop/checkout/``) still ends as a refused fetch that says why.

``include_paths`` / ``exclude_paths`` are path prefixes matched on whole segments: ``/blog``
matches ``/blog``, ``/blog/`` and ``/blog/x`` (with any query), not ``/blogger``. They are
matched case-insensitively; a trailing ``/`` or ``*`` is ignored (``/blog/*`` is ``/blog``);
non-ASCII characters are percent-encoded as normalization leaves them in URLs; ``/`` as an
include means everything.

Input URLs are normalized (``normalize.py``); anything else still gets a decision, never an
exception. A URL's ``kind`` comes from ``kinds.url_kind``; an unknown kind is treated as a page.

Speed: ``decide_many`` is the hot path. Host-level work (the origin, the scope prefixes with
the origin in front, the answer for each other origin seen) is done once per policy, not per
URL. Which URLs of a batch hold a watched segment (an action or auth word) is found for the
whole batch at once: one regular-expression pass, written as a trie, over the batch joined and
lowercased (a per-URL ``lower``, ``split`` and ``set.isdisjoint`` costs more). A same-site page
with no query and no watched segment is then settled with an ``==``, an ``in`` and a
``startswith`` (plus one ``startswith`` per scope); everything else goes to ``decide``. No
``urlsplit``: it costs many times a ``str.find``. Timings: bench/README.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple
from urllib.parse import quote

from discovery_crawler.compiled import extension
from discovery_crawler.urls.kinds import url_kind, url_kinds_many
from discovery_crawler.urls.normalize import normalize, origin_of, shared_path_start

# which URLs of a batch decide_many must decide, found in C (``_screens.c``)
_screens = extension("discovery_crawler.urls._screens")

REASONS: tuple[str, ...] = (
    "scheme",
    "other_host",
    "asset",
    "api",
    "pagination",
    "action",
    "exclude_paths",
    "include_paths",
)
"""Every drop reason, in the order they are tried."""

FLAGS: tuple[str, ...] = ("requires_auth",)
"""Every flag a kept URL can carry."""

STATS_PREFIX = "discovery/urls/filtered/"


def stats_key(reason: str) -> str:
    """The Scrapy stats key counting URLs dropped for ``reason``."""
    return STATS_PREFIX + reason


class Decision(NamedTuple):
    """What to do with one URL: keep it or not, why not, and flags on a kept one."""

    keep: bool
    reason: str | None
    flags: tuple[str, ...]


KEEP = Decision(True, None, ())
KEEP_REQUIRES_AUTH = Decision(True, None, ("requires_auth",))
DROP: dict[str, Decision] = {reason: Decision(False, reason, ()) for reason in REASONS}
"""The one ``Decision`` per drop reason (decisions are shared, never built per URL)."""

# Kinds dropped for what they are; the file kinds and ``page`` go on.
_KIND_DROPS: dict[str, Decision] = {
    "asset": DROP["asset"],
    "api": DROP["api"],
    "paginated": DROP["pagination"],
}

# A segment may carry a script suffix: /logout.php, /Account/Login.aspx.
_SCRIPT_SUFFIXES = ("", ".php", ".asp", ".aspx", ".html", ".htm", ".jsp", ".do", ".cgi", ".pl")


def _segments(words: str) -> frozenset[str]:
    return frozenset(w + s for w in words.split() for s in _SCRIPT_SUFFIXES)


_ACTION_SEGMENTS = _segments(
    "logout log-out logoff log-off signout sign-out sign_out signoff delete remove add-to-cart"
)
_CART_SEGMENTS = frozenset(("cart", "basket"))
_ADD_SEGMENTS = _segments("add")
_ACTION_PARAMS = frozenset(
    (
        "action",
        "replytocom",
        "add-to-cart",
        "add_to_cart",
        "add-to-wishlist",
        "add_to_wishlist",
        "remove_item",
        "_wpnonce",
        "logout",
        "delete",
    )
)
_AUTH_ANYWHERE = _segments("login log-in signin sign-in sign_in my-account") | {"wp-login.php"}
_AUTH_TOP = _segments("account dashboard admin checkout wp-admin")
_LOCALE = re.compile(r"[a-z]{2}(?:[-_][a-z0-9]{2,4})?")

# Every segment that can make a same-site, query-less page anything but a plain keep.
_WATCHED = _ACTION_SEGMENTS | _CART_SEGMENTS | _AUTH_ANYWHERE | _AUTH_TOP
_WATCH_WORDS = tuple(sorted(_WATCHED))  # for ``_screens.watch_indexes``

_SCHEME, _OTHER_HOST = -1, -2
_OFFSITE_DROPS = {_SCHEME: DROP["scheme"], _OTHER_HOST: DROP["other_host"]}
# What browsers strip around an href (C0 controls and space; tabs and newlines anywhere).
_C0_AND_SPACE = "".join(map(chr, range(0x21)))

_NON_HTTP_SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.\-]*:")
_DEFAULT_PORT = {"http": ":80", "https": ":443"}
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"


def href_reason(href: str) -> str | None:
    """``"scheme"`` if a raw href (before resolution) names a non-HTTP scheme — ``mailto:``,
    ``tel:``, ``javascript:``, ``data:``, ``ftp:``… — else ``None``. Leading and trailing
    whitespace, and tabs and newlines anywhere, are ignored, as browsers do (``java\\nscript:``
    is ``javascript:``). Relative hrefs (``/x``, ``x``, ``?q``, ``#top``) are not refused here.
    """
    if "\t" in href or "\n" in href or "\r" in href:
        href = href.replace("\t", "").replace("\n", "").replace("\r", "")
    href = href.strip(_C0_AND_SPACE)
    match = _NON_HTTP_SCHEME.match(href)
    if match is None:
        return None
    scheme = match.group()[:-1].lower()
    return None if scheme in ("http", "https") else "scheme"


def _clean_prefixes(prefixes: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Lowercase, ``/``-led, without a trailing ``/`` or ``*``, non-ASCII percent-encoded."""
    out: list[str] = []
    for raw in prefixes:
        prefix = raw.strip().rstrip("*").rstrip("/")
        prefix = quote(prefix, safe=_PATH_SAFE).lower()
        if not prefix.startswith("/"):
            prefix = "/" + prefix
        if prefix not in out:
            out.append(prefix)
    return tuple(out)


def _under(path: str, exact: frozenset[str], under: tuple[str, ...]) -> bool:
    return path.startswith(under) or path in exact


@dataclass(frozen=True)
class FilterPolicy:
    """The filter of one run: built once from the site's origin and the run's scope.

    ``site_origin`` may be any URL on the site (``https://Example.com/start``): its
    normalized origin is used. ``include_paths`` / ``exclude_paths`` are as the spider
    arguments give them (``RunOptions``).
    """

    site_origin: str
    include_paths: tuple[str, ...] = ()
    exclude_paths: tuple[str, ...] = ()
    origin: str = field(init=False)
    _origin_slash: str = field(init=False, repr=False)
    _include_all: bool = field(init=False, repr=False)
    _include: tuple[str, ...] = field(init=False, repr=False)
    _exclude_all: bool = field(init=False, repr=False)
    _exclude: tuple[str, ...] = field(init=False, repr=False)
    # Path-only forms (for ``decide``) and origin-led forms (for ``decide_many``).
    _inc_exact: frozenset[str] = field(init=False, repr=False)
    _inc_under: tuple[str, ...] = field(init=False, repr=False)
    _exc_exact: frozenset[str] = field(init=False, repr=False)
    _exc_under: tuple[str, ...] = field(init=False, repr=False)
    _inc_url_exact: frozenset[str] = field(init=False, repr=False)
    _inc_url_under: tuple[str, ...] = field(init=False, repr=False)
    _exc_url_exact: frozenset[str] = field(init=False, repr=False)
    _exc_url_under: tuple[str, ...] = field(init=False, repr=False)
    # Origin spelling (before the path) → ``_path_start`` answer, for URLs not on the fast case.
    _origins: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        scheme, _, authority = origin_of(normalize(self.site_origin)).partition("://")
        origin = f"{scheme}://{authority.rpartition('@')[2]}"  # userinfo is not the origin
        include = _clean_prefixes(self.include_paths)
        exclude = _clean_prefixes(self.exclude_paths)
        include_all = not include or "/" in include
        exclude_all = "/" in exclude
        include = () if include_all else include
        exclude = () if exclude_all else exclude
        values = {
            "origin": origin,
            "_origin_slash": origin + "/",
            "_include_all": include_all,
            "_include": include,
            "_exclude_all": exclude_all,
            "_exclude": exclude,
            "_inc_exact": frozenset(include),
            "_inc_under": tuple(p + "/" for p in include),
            "_exc_exact": frozenset(exclude),
            "_exc_under": tuple(p + "/" for p in exclude),
            "_inc_url_exact": frozenset(origin + p for p in include),
            "_inc_url_under": tuple(origin + p + "/" for p in include),
            "_exc_url_exact": frozenset(origin + p for p in exclude),
            "_exc_url_under": tuple(origin + p + "/" for p in exclude),
            "_origins": {},
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def _path_start(self, lurl: str) -> int:
        """Where the path starts in a same-site URL (``lurl``: lowercased), ``_SCHEME`` for a
        non-HTTP one, ``_OTHER_HOST`` for another site.

        The fast case is the normalized origin followed by "/". Otherwise the origin is
        compared the slow way (case, default port and userinfo do not make another site),
        and the answer is cached by the URL's part before its first "/" after the scheme:
        a sitemap of 50,000 URLs on a staging host costs one slow comparison, not 50,000.
        """
        if lurl.startswith(self._origin_slash):
            return len(self.origin)
        slash = lurl.find("/", 8)
        key = lurl[:slash] if slash > 0 else ""
        if key and "?" not in key and "#" not in key:
            code = self._origins.get(key)
            if code is None:
                code = self._origin_code(key + "/")
                if len(self._origins) >= 10_000:  # hostile input: many distinct hosts
                    self._origins.clear()
                self._origins[key] = code
            return code
        return self._origin_code(lurl)

    def _origin_code(self, lurl: str) -> int:
        sep = lurl.find("://")
        scheme = lurl[:sep] if sep > 0 else ""
        if scheme not in _DEFAULT_PORT:
            return _SCHEME
        start = sep + 3
        end = len(lurl)
        for char in "/?#":
            at = lurl.find(char, start, end)
            if at >= 0:
                end = at
        hostport = lurl[start:end].rpartition("@")[2]
        if hostport.endswith(_DEFAULT_PORT[scheme]):
            hostport = hostport[: -len(_DEFAULT_PORT[scheme])]
        if f"{scheme}://{hostport}" != self.origin:
            return _OTHER_HOST
        return end

    def decide(self, url: str, kind: str | None = None) -> Decision:
        """The decision for one URL of kind ``kind`` (``url_kind(url)`` when not given)."""
        lurl = url.lower()
        start = self._path_start(lurl)
        if start < 0:
            return _OFFSITE_DROPS[start]
        drop = _KIND_DROPS.get(url_kind(url) if kind is None else kind)
        if drop is not None:
            return drop
        query_at = url.find("?", start)
        if query_at < 0:
            path, query = lurl[start:], ""
        else:
            path, query = lurl[start:query_at], url[query_at + 1 :]
        if not path:
            path = "/"
        segments = path.split("/")
        if _is_action(segments, query):
            return DROP["action"]
        if self._exclude_all or (self._exclude and _under(path, self._exc_exact, self._exc_under)):
            return DROP["exclude_paths"]
        if not self._include_all and not _under(path, self._inc_exact, self._inc_under):
            return DROP["include_paths"]
        if _requires_auth(segments):
            return KEEP_REQUIRES_AUTH
        return KEEP

    def decide_many(self, urls: list[str], kinds: list[str] | None = None) -> list[Decision]:
        """The decisions for a batch (same as ``[decide(u, k) for u, k in zip(urls, kinds)]``;
        ``kinds`` defaults to ``url_kinds_many(urls)``).

        Fast path: a same-site URL of kind ``page``, with no query and no watched segment, is
        kept (or dropped by the scope) right here; everything else goes to ``decide``.
        Which URLs hold a watched segment is found for the whole batch at once, by one
        regular-expression pass over the batch joined and lowercased (``_watched_lines``),
        or in C (``_screens``). Without a scope, the batch is kept at once but for the URLs
        those find, its other kinds and its queries (``_all_kept_but``).
        """
        if kinds is None:
            kinds = url_kinds_many(urls)
        elif len(kinds) != len(urls):
            raise ValueError(f"{len(urls)} URLs but {len(kinds)} kinds")
        scoped = self._exclude_all or bool(self._exclude) or not self._include_all
        if (
            not scoped
            and urls
            and _screens is not None
            and urls.__class__ is list
            and self._origin_slash.isascii()
        ):
            kept = self._all_kept_but(urls, kinds)
            if kept is not None:
                return kept
        joined = "\n".join(urls)
        lowered = joined.lower()
        if not scoped and urls:
            kept = self._all_kept_but(urls, kinds, joined, lowered)
            if kept is not None:
                return kept
        watched = _watched_lines(urls, joined, lowered)
        same_case = lowered == joined  # then no URL of the batch needs its own lower()
        out: list[Decision] = []
        append = out.append
        decide = self.decide
        origin_slash = self._origin_slash
        exclude_all = self._exclude_all
        exclude = bool(self._exclude)
        exc_exact, exc_under = self._exc_url_exact, self._exc_url_under
        exc_start = tuple(exc_exact)  # a cheap first test: also true for /tagged under /tag
        include = not self._include_all
        inc_exact, inc_under = self._inc_url_exact, self._inc_url_under
        keep = KEEP
        drop_exclude = DROP["exclude_paths"]
        drop_include = DROP["include_paths"]
        for url, kind, hit in zip(urls, kinds, watched, strict=True):
            if kind == "page" and not hit and "?" not in url and url.startswith(origin_slash):
                if not scoped:
                    append(keep)
                    continue
                lurl = url if same_case else url.lower()
                if exclude_all or (
                    exclude
                    and lurl.startswith(exc_start)
                    and (lurl.startswith(exc_under) or lurl in exc_exact)
                ):
                    append(drop_exclude)
                elif include and not (lurl.startswith(inc_under) or lurl in inc_exact):
                    append(drop_include)
                else:
                    append(keep)
            else:
                append(decide(url, kind))
        return out

    def _all_kept_but(
        self, urls: list[str], kinds: list[str], joined: str = "", lowered: str = ""
    ) -> list[Decision] | None:
        """``decide_many`` without a scope: every URL kept but those that are not pages,
        hold a query or may hold a watched segment, which ``decide`` decides — found for
        the batch at once: by ``_screens`` (C, which sends ``decide`` the URLs off the
        site's origin too) when no ``joined`` text (the batch joined by newlines, and
        ``lowered``) is given, else by the regex pass. None when that pass cannot answer:
        a batch not all on the origin, or whose URLs cannot be told apart by line."""
        if not joined:
            lines = _screens.watch_indexes(urls, self._origin_slash, _WATCH_WORDS)
        else:
            start = shared_path_start(urls)
            if start < 0 or urls[0][: start + 1] != self._origin_slash:
                return None
            lines = _watched_indexes(urls, joined, lowered)
            if lines is None:
                return None
            line = last = 0
            at = joined.find("?")
            while at >= 0:  # the URLs holding a query
                line += joined.count("\n", last, at)
                last = at
                lines.append(line)
                at = joined.find("?", at + 1)
        if kinds.count("page") != len(kinds):
            lines.extend(i for i, kind in enumerate(kinds) if kind != "page")
        out = [KEEP] * len(urls)
        decide = self.decide
        for i in set(lines):
            out[i] = decide(urls[i], kinds[i])
        return out


def _trie_pattern(words: frozenset[str]) -> str:
    """A regular expression matching exactly ``words``, as a trie: Python's ``re`` tries the
    branches of an alternation one by one, so ``(?:login|logout|…)`` over a whole batch is
    slow, and the same words as a trie many times faster."""
    tree: dict[str, dict] = {}
    for word in words:
        node = tree
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: dict[str, dict]) -> str:
        branches = [re.escape(char) + emit(child) for char, child in sorted(node.items()) if char]
        if "" in node:
            return f"(?:{'|'.join(branches)})?" if branches else ""
        return branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"

    return emit(tree)


# A watched word as a whole segment: after "/", before "/", the end of a URL ("\n" in a
# joined batch) or the end of the text. A URL with a query never takes the fast path, so "?"
# need not end a segment here.
_WATCHED_RE = re.compile("/" + _trie_pattern(_WATCHED) + r"(?=[/\n]|\Z)")


def _watched_lines(urls: list[str], joined: str, lowered: str) -> list[bool]:
    """For each URL of a batch: may it hold a watched segment? (True sends it to ``decide``.)

    ``joined`` is ``"\n".join(urls)`` and ``lowered`` its ``lower()``. One regex pass finds
    the matches; a match's URL is the number of "\n" before it. That needs every URL free of
    "\n" and a ``lower()`` that kept every length (it does, but for "İ"); otherwise each URL
    is checked on its own (same answer, slower).
    """
    lines = _watched_indexes(urls, joined, lowered)
    if lines is None:
        return [not _WATCHED.isdisjoint(url.lower().split("/")) for url in urls]
    watched = [False] * len(urls)
    for line in lines:
        watched[line] = True
    return watched


def _watched_indexes(urls: list[str], joined: str, lowered: str) -> list[int] | None:
    """The indexes of the URLs ``_watched_lines`` says True of (an index per match), or
    None where the regex pass cannot tell the URLs apart by line."""
    if len(lowered) != len(joined) or joined.count("\n") != len(urls) - 1:
        return None
    lines = []
    line = last = 0
    for match in _WATCHED_RE.finditer(lowered):
        at = match.start()
        line += lowered.count("\n", last, at)
        last = at
        lines.append(line)
    return lines


def _is_action(segments: list[str], query: str) -> bool:
    """``segments``: the lowercased path split on "/"; ``query``: the raw part after "?"."""
    if not _ACTION_SEGMENTS.isdisjoint(segments):
        return True
    if not _CART_SEGMENTS.isdisjoint(segments):
        for i in range(len(segments) - 1):
            if segments[i] in _CART_SEGMENTS and segments[i + 1] in _ADD_SEGMENTS:
                return True
    if query:
        for param in query.split("&"):
            if param.partition("=")[0].lower() in _ACTION_PARAMS:
                return True
    return False


def _requires_auth(segments: list[str]) -> bool:
    """``segments``: the lowercased path split on "/" (``segments[0]`` is empty)."""
    if not _AUTH_ANYWHERE.isdisjoint(segments):
        return True
    if len(segments) > 1 and segments[1] in _AUTH_TOP:
        return True
    if len(segments) > 2 and segments[2] in _AUTH_TOP:
        return _LOCALE.fullmatch(segments[1]) is not None
    return False
