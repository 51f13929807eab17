"""Unit tests for ``discovery_crawler.urls.filters``: every drop reason with a hit and a near
miss, reason precedence, ``include_paths`` / ``exclude_paths`` on whole segments, the
``requires_auth`` flag and its near misses, file kinds kept, and property tests that the batch
form agrees with the one-URL form and that no input makes ``decide`` raise.
"""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discovery_crawler.urls import filters
from discovery_crawler.urls.filters import (
    DROP,
    FLAGS,
    KEEP,
    KEEP_REQUIRES_AUTH,
    REASONS,
    Decision,
    FilterPolicy,
    href_reason,
    stats_key,
)
from discovery_crawler.urls.kinds import FILE_KINDS, KINDS, url_kind
from tests import conftest

SITE = "https://example.com"
POLICY = FilterPolicy(SITE)


def decide(path_or_url: str, policy: FilterPolicy = POLICY) -> Decision:
    """Decide through both entry points and check that they agree."""
    url = path_or_url
    if path_or_url.startswith("/") and not path_or_url.startswith("//"):
        url = SITE + path_or_url
    one = policy.decide(url)
    assert policy.decide(url, url_kind(url)) == one
    assert policy.decide_many([url]) == [one]
    assert policy.decide_many([url], [url_kind(url)]) == [one]
    return one


def reason(path_or_url: str, policy: FilterPolicy = POLICY) -> str | None:
    return decide(path_or_url, policy).reason


# -- the API --------------------------------------------------------------------------------


def test_reasons_and_flags_are_stable():
    assert REASONS == (
        "scheme",
        "other_host",
        "asset",
        "api",
        "pagination",
        "action",
        "exclude_paths",
        "include_paths",
    )
    assert FLAGS == ("requires_auth",)
    assert stats_key("asset") == "discovery/urls/filtered/asset"


def test_decision_shape():
    assert tuple(KEEP) == (True, None, ())
    assert tuple(KEEP_REQUIRES_AUTH) == (True, None, ("requires_auth",))
    assert tuple(DROP["api"]) == (False, "api", ())
    keep, why, flags = DROP["action"]
    assert (keep, why, flags) == (False, "action", ())
    assert decide("/about/") is KEEP  # shared decisions, not built per URL


def test_policy_normalizes_its_origin():
    policy = FilterPolicy("HTTPS://Example.COM:443/start/here?x=1")
    assert policy.origin == SITE
    assert policy.site_origin == "HTTPS://Example.COM:443/start/here?x=1"  # as given
    assert policy.decide(SITE + "/a/") == KEEP
    assert FilterPolicy("http://example.com:8080").origin == "http://example.com:8080"
    assert FilterPolicy("https://user@example.com/").origin == SITE


# -- one hit and one near miss per reason ---------------------------------------------------

REASON_CASES = [
    # (url or path, expected reason; None = kept)
    ("mailto:someone@example.com", "scheme"),
    ("tel:+15551234", "scheme"),
    ("javascript:void(0)", "scheme"),
    ("data:text/html,hi", "scheme"),
    ("ftp://example.com/file.txt", "scheme"),
    ("//example.com/x", "scheme"),  # not absolute: never normalized
    ("https://other.org/a/", "other_host"),
    ("https://www.example.com/a/", "other_host"),  # www vs bare is normalization's job
    ("http://example.com/a/", "other_host"),  # another scheme is another origin
    ("https://example.com:8443/a/", "other_host"),
    ("https://example.com.evil.org/a/", "other_host"),
    ("https://evil.org/https://example.com/", "other_host"),
    ("https://example.com:443/a/", None),  # same origin, spelled differently
    ("HTTPS://EXAMPLE.COM/a/", None),
    ("/style.css", "asset"),
    ("/app.js?ver=2", "asset"),
    ("/data.json", "asset"),
    ("/feed.xml", "asset"),
    ("/robots.txt", "asset"),
    ("/fonts/a.woff2", "asset"),
    ("/style.css.html", None),
    ("/css/", None),
    ("/api/v1/users", "api"),
    ("/wp-json/wp/v2/posts", "api"),
    ("/.well-known/openid-configuration", "api"),
    ("/graphql", "api"),
    ("/apis-explained/", None),
    ("/blog/api/", None),
    ("/page/2/", "pagination"),
    ("/blog/?page=3", "pagination"),
    ("/blog/?paged=2", "pagination"),
    ("/page/1/", None),
    ("/blog/?page=1", None),
    ("/pages/", None),
    ("/logout", "action"),
    ("/user/logout/", "action"),
    ("/Account/LogOff", "action"),
    ("/signout", "action"),
    ("/users/sign_out", "action"),
    ("/logout.php", "action"),
    ("/posts/12/delete", "action"),
    ("/cart/remove/3", "action"),
    ("/wp-login.php?action=logout", "action"),
    ("/wiki/Main_Page?action=edit", "action"),
    ("/post/?replytocom=42", "action"),
    ("/shop/?add-to-cart=16772", "action"),
    ("/product/x/?add_to_wishlist=5", "action"),
    ("/cart/add", "action"),
    ("/cart/add/123", "action"),
    ("/shop/cart/add?id=4", "action"),
    ("/cart/?remove_item=abc&_wpnonce=123", "action"),
    ("/add-to-cart/7", "action"),
    ("/delete-your-data-guide/", None),
    ("/how-to-remove-stains/", None),
    ("/logout-tips/", None),
    ("/blog/logging-out-safely/", None),
    ("/cart/", None),
    ("/cart/additional-info/", None),
    ("/add/cart/", None),
    ("/?reaction=1", None),
    ("/?actions=list", None),
    ("/search?q=logout", None),
]


@pytest.mark.parametrize(("url", "expected"), REASON_CASES, ids=[c[0] for c in REASON_CASES])
def test_reason_table(url, expected):
    got = decide(url)
    assert got.reason == expected
    assert got.keep is (expected is None)


def test_every_reason_is_exercised():
    scoped = FilterPolicy(SITE, ("/blog",), ("/blog/drafts",))
    seen = {r for _, r in REASON_CASES if r}
    seen |= {reason("/shop/", scoped), reason("/blog/drafts/x", scoped)}
    assert seen == set(REASONS)


def test_reason_precedence():
    scoped = FilterPolicy(SITE, ("/blog",), ("/shop",))
    # Scheme and host before anything about the path.
    assert reason("https://other.org/style.css", scoped) == "other_host"
    # What a URL is comes before the run's scope.
    assert reason("/shop/style.css", scoped) == "asset"
    assert reason("/other/api/x", scoped) == "include_paths"  # /api is only a first segment
    assert reason("/api/x", scoped) == "api"
    assert reason("/shop/page/2/", scoped) == "pagination"
    assert reason("/shop/logout", scoped) == "action"
    # Kind before action: /api/logout is an API URL.
    assert reason("/api/logout") == "api"
    # Exclude before include.
    assert reason("/shop/x", scoped) == "exclude_paths"
    assert reason("/other/", scoped) == "include_paths"
    # Drops win over flags.
    assert reason("/account/logout") == "action"
    assert reason("/admin/page/2/") == "pagination"


# -- file kinds are kept --------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/report.pdf",
        "/files/budget.XLSX",
        "/wp-content/uploads/2024/05/photo.jpg",
        "/logo.svg",
        "/podcast/ep1.mp3",
        "/video/intro.mp4",
        "/downloads/tool.zip",
        "/downloads/tool.tar.gz",
        "/downloads/setup.exe",
        "/api/report.pdf",  # the extension decides: a document, not an API URL
    ],
)
def test_file_kinds_are_kept(path):
    assert url_kind(SITE + path) in FILE_KINDS
    assert decide(path) == KEEP


def test_file_kinds_obey_host_action_and_scope():
    scoped = FilterPolicy(SITE, ("/docs",), ("/docs/old",))
    assert reason("https://cdn.other.org/report.pdf") == "other_host"
    assert reason("/files/delete/report.pdf") == "action"
    assert reason("/files/report.pdf", scoped) == "include_paths"
    assert reason("/docs/old/report.pdf", scoped) == "exclude_paths"
    assert decide("/docs/report.pdf", scoped) == KEEP
    assert decide("/account/invoice.pdf") == KEEP_REQUIRES_AUTH


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("page", None),
        ("paginated", "pagination"),
        ("api", "api"),
        ("asset", "asset"),
        ("document", None),
        ("media", None),
        ("archive", None),
        ("something-new", None),  # unknown kinds are treated as pages
    ],
)
def test_decision_by_given_kind(kind, expected):
    url = SITE + "/some/path/"
    assert POLICY.decide(url, kind).reason == expected
    assert POLICY.decide_many([url], [kind]) == [POLICY.decide(url, kind)]


# -- include_paths / exclude_paths ----------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "kept"),
    [
        ("/blog", True),
        ("/blog/", True),
        ("/blog/x", True),
        ("/blog/x/y/", True),
        ("/blog?x=1", True),
        ("/blog/?page=1", True),
        ("/BLOG/x", True),  # case-insensitive
        ("/docs/a", True),
        ("/blogger", False),
        ("/blog-post/", False),
        ("/blogs/", False),
        ("/", False),
        ("/about/blog/", False),
        ("/docsx", False),
    ],
)
def test_include_paths_whole_segments(path, kept):
    policy = FilterPolicy(SITE, ("/blog", "/docs"))
    got = decide(path, policy)
    assert got.keep is kept
    assert got.reason == (None if kept else "include_paths")


@pytest.mark.parametrize(
    ("path", "excluded"),
    [
        ("/tag", True),
        ("/tag/", True),
        ("/tag/x", True),
        ("/Tag/X", True),
        ("/tag?x=1", True),
        ("/tags/", False),
        ("/tagged/", False),
        ("/blog/tag/x", False),
        ("/", False),
    ],
)
def test_exclude_paths_whole_segments(path, excluded):
    policy = FilterPolicy(SITE, (), ("/tag",))
    assert decide(path, policy).reason == ("exclude_paths" if excluded else None)


@pytest.mark.parametrize(
    "spelling", ["/blog", "blog", "/blog/", "/blog/*", "/blog*", " /blog ", "/BLOG"]
)
def test_prefix_spellings(spelling):
    policy = FilterPolicy(SITE, (spelling,))
    assert decide("/blog/x", policy) == KEEP
    assert reason("/blogger/", policy) == "include_paths"


def test_nested_include_and_exclude():
    policy = FilterPolicy(SITE, ("/blog",), ("/blog/drafts",))
    assert decide("/blog/post/", policy) == KEEP
    assert reason("/blog/drafts/", policy) == "exclude_paths"
    assert reason("/blog/drafts", policy) == "exclude_paths"
    assert decide("/blog/drafts-2024/", policy) == KEEP
    assert reason("/shop/", policy) == "include_paths"


def test_root_prefixes():
    everything = FilterPolicy(SITE, ("/",))
    assert decide("/anything/", everything) == KEEP
    assert decide("/", everything) == KEEP
    nothing = FilterPolicy(SITE, (), ("/",))
    assert reason("/anything/", nothing) == "exclude_paths"
    assert reason("/", nothing) == "exclude_paths"
    assert reason("/style.css", nothing) == "asset"  # what it is still comes first


def test_non_ascii_prefix_matches_percent_encoded_path():
    policy = FilterPolicy(SITE, ("/café",))
    assert decide("/caf%C3%A9/menu", policy) == KEEP
    assert decide("/caf%c3%a9/menu", policy) == KEEP
    assert reason("/cafe/menu", policy) == "include_paths"


def test_no_scope_keeps_every_path():
    for path in ("/", "/a/", "/blogger/", "/x/y/z"):
        assert decide(path) == KEEP


# -- requires_auth ----------------------------------------------------------------------------

AUTH_FLAGGED = [
    "/account",
    "/account/",
    "/account/orders/12",
    "/Account/Login.aspx",
    "/dashboard/",
    "/admin/",
    "/admin/users?sort=name",
    "/wp-admin/",
    "/login",
    "/login/",
    "/login?next=/x",
    "/signin",
    "/sign-in/",
    "/users/sign_in",
    "/my-account/",
    "/my-account/orders/",
    "/checkout/",
    "/en/account/",
    "/pt-br/checkout/",
    "/zh_hans/dashboard/",
    "/shop/my-account/",
    "/forum/login/",
    "/wp-login.php",
    "/login.php",
]
AUTH_NOT_FLAGGED = [
    "/accounting/",
    "/administration-of-justice/",
    "/dashboard-page/retrieve-password/",
    "/accounts-payable/",
    "/blog/how-to-login-safely/",
    "/login-help/",
    "/docs/admin/",
    "/guides/checkout/",
    "/products/account/",
    "/english/account/",
    "/checkouts/",
    "/myaccount-tips/",
    "/search?q=login",
]


@pytest.mark.parametrize("path", AUTH_FLAGGED)
def test_requires_auth_flagged(path):
    assert decide(path) == KEEP_REQUIRES_AUTH


@pytest.mark.parametrize("path", AUTH_NOT_FLAGGED)
def test_requires_auth_near_misses(path):
    assert decide(path) == KEEP


def test_requires_auth_respects_scope():
    policy = FilterPolicy(SITE, ("/blog",))
    assert reason("/account/", policy) == "include_paths"
    assert decide("/blog/login/", policy) == KEEP_REQUIRES_AUTH


# -- raw hrefs --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "href",
    [
        "mailto:a@b.c",
        "MAILTO:a@b.c",
        "tel:+1",
        "javascript:void(0)",
        " javascript:alert(1)",
        "java\nscript:alert(1)",
        "\tjava\tscript:x",
        "data:image/png;base64,AAAA",
        "ftp://example.com/f",
        "sms:123",
        "whatsapp://send?text=x",
        "\x00\x1fvbscript:x",
    ],
)
def test_href_reason_scheme(href):
    assert href_reason(href) == "scheme"


@pytest.mark.parametrize(
    "href",
    [
        "https://example.com/",
        "HTTP://example.com/",
        "  http://example.com/",
        "/a:b",
        "a/b:c",
        "./x:y",
        "?q=mailto:x",
        "#top",
        "",
        "page.html",
        "//example.com/x",
        "1abc:x",  # a scheme starts with a letter
    ],
)
def test_href_reason_near_misses(href):
    assert href_reason(href) is None


# -- batch and properties ---------------------------------------------------------------------


def test_decide_many_on_a_mixed_batch():
    policy = FilterPolicy(SITE, ("/blog", "/files"), ("/blog/drafts",))
    urls = [SITE + p for p, _ in REASON_CASES if not p.startswith(("http", "mailto"))]
    urls += [
        "https://other.org/x",
        "mailto:x@y",
        SITE + "/blog/login/",
        SITE + "/files/report.pdf",
    ]
    assert policy.decide_many(urls) == [policy.decide(u) for u in urls]
    assert policy.decide_many([]) == []


def test_decide_many_rejects_mismatched_kinds():
    with pytest.raises(ValueError):
        POLICY.decide_many([SITE + "/a/", SITE + "/b/"], ["page"])


def test_batch_pass_finds_the_right_urls():
    """The one-pass search over a joined batch marks the URL that holds the watched segment,
    wherever it sits in the batch — and its slower fallbacks give the same answers."""
    plain = [f"{SITE}/section/article-{i}/" for i in range(50)]
    for at in (0, 17, 49):
        for path, expected in (
            ("/user/logout", DROP["action"]),
            ("/login", KEEP_REQUIRES_AUTH),
            ("/Login.aspx", KEEP_REQUIRES_AUTH),
            ("/cart/add", DROP["action"]),
        ):
            urls = plain.copy()
            urls[at] = SITE + path
            got = POLICY.decide_many(urls)
            assert got[at] == expected
            assert got[:at] + got[at + 1 :] == [KEEP] * 49
    for odd in (SITE + "/İstanbul/login", SITE + "/a\nb/login", SITE + "/a\n/login"):
        urls = [*plain[:3], odd, *plain[3:6]]
        assert POLICY.decide_many(urls) == [POLICY.decide(u) for u in urls]
        assert POLICY.decide_many(urls)[3] == KEEP_REQUIRES_AUTH


def test_watched_pattern_matches_the_watched_set():
    from discovery_crawler.urls import filters

    for word in filters._WATCHED:
        assert filters._WATCHED_RE.fullmatch("/" + word), word
        assert filters._WATCHED_RE.match(f"/{word}/x"), word
        assert not filters._WATCHED_RE.match(f"/{word}z"), word
        assert not filters._WATCHED_RE.match(f"/x{word}"), word


def test_other_host_cache_is_per_origin_spelling():
    policy = FilterPolicy(SITE)
    for _ in range(2):  # the second round is answered from the cache
        assert policy.decide("https://other.org/a/").reason == "other_host"
        assert policy.decide("https://example.com:443/a/") == KEEP
        assert policy.decide("https://u@example.com/a/") == KEEP
        assert policy.decide("https://example.com?x=/a/") == KEEP
        assert policy.decide("mailto:x@example.com/a").reason == "scheme"


_SEGMENTS = [
    "",
    "blog",
    "Blog",
    "blogger",
    "tag",
    "drafts",
    "en",
    "account",
    "accounting",
    "Account",
    "admin",
    "wp-admin",
    "login",
    "Login.aspx",
    "sign_in",
    "my-account",
    "checkout",
    "logout",
    "LogOut",
    "delete",
    "remove",
    "cart",
    "basket",
    "add",
    "add-to-cart",
    "page",
    "2",
    "1",
    "api",
    "wp-json",
    "a.pdf",
    "x.css",
    "y.jpg",
    "index.html",
    "%C3%A9",
    "é",
]
_segment = st.one_of(st.sampled_from(_SEGMENTS), st.text(alphabet="abAB01.-_;%", max_size=6))
_param = st.tuples(
    st.sampled_from(
        ["page", "paged", "action", "Action", "replytocom", "add-to-cart", "_wpnonce", "q", ""]
    ),
    st.sampled_from(["", "=", "=1", "=2", "=x"]),
).map("".join)
_query = st.lists(_param, max_size=3).map(lambda ps: "?" + "&".join(ps) if ps else "")
_origin = st.sampled_from(
    [
        SITE,
        "https://EXAMPLE.com",
        "https://example.com:443",
        "http://example.com",
        "https://www.example.com",
        "https://other.org",
        "https://u@example.com",
        "ftp://example.com",
        "mailto:",
    ]
)
normalized_urls = st.builds(
    lambda origin, segments, query: f"{origin}/{'/'.join(segments)}{query}",
    _origin,
    st.lists(_segment, max_size=5),
    _query,
)
any_urls = st.one_of(normalized_urls, st.text(max_size=60))
_prefix = st.sampled_from(["/blog", "/blog/drafts", "/tag", "/", "/en", "/é", "blog/*", "/a.pdf"])
policies = st.builds(
    lambda inc, exc: FilterPolicy(SITE, tuple(inc), tuple(exc)),
    st.lists(_prefix, max_size=2),
    st.lists(_prefix, max_size=2),
)


@settings(max_examples=500, deadline=None)
@given(policies, any_urls, st.one_of(st.none(), st.sampled_from([*KINDS, "unknown"])))
def test_decide_never_raises(policy, url, kind):
    got = policy.decide(url, kind)
    assert isinstance(got, Decision)
    assert got.keep is (got.reason is None)
    assert got.reason is None or got.reason in REASONS
    assert set(got.flags) <= set(FLAGS)
    assert not got.flags or got.keep


@settings(max_examples=300, deadline=None)
@given(policies, st.lists(any_urls, max_size=25))
def test_decide_many_equals_decide(policy, urls):
    assert policy.decide_many(urls) == [policy.decide(u) for u in urls]


@settings(max_examples=200, deadline=None)
@given(policies, st.lists(st.tuples(any_urls, st.sampled_from([*KINDS, "x"])), max_size=25))
def test_decide_many_equals_decide_with_given_kinds(policy, pairs):
    urls = [u for u, _ in pairs]
    kinds = [k for _, k in pairs]
    assert policy.decide_many(urls, kinds) == [policy.decide(u, k) for u, k in pairs]


@settings(max_examples=300, deadline=None)
@given(normalized_urls)
def test_file_kinds_are_never_dropped_for_their_kind(url):
    kind = url_kind(url)
    got = POLICY.decide(url)
    if kind in FILE_KINDS:
        assert got.reason not in ("asset", "api", "pagination")


_on_site = st.builds(
    lambda segments, query: f"{SITE}/{'/'.join(segments)}{query}",
    st.lists(_segment, max_size=5),
    _query,
)


@settings(max_examples=500, deadline=None)
@given(st.lists(_on_site, min_size=1, max_size=30), st.lists(any_urls, max_size=2))
def test_batch_on_the_origin_equals_one_at_a_time(urls, strangers):
    """A batch on the site's origin (a sitemap's) is decided for the whole batch at once
    where the run has no scope, the URLs to decide found in C (``_screens``) or by the
    regex pass; it gets what ``decide`` gives each URL, and so does one with a stranger
    (another origin, a newline, a non-ASCII letter) among them."""
    mixed = urls + [s for s in strangers if s.__class__ is str]
    for batch in (urls, mixed):
        expected = [POLICY.decide(u) for u in batch]
        assert POLICY.decide_many(batch) == expected
        with mock.patch.object(filters, "_screens", None):
            assert POLICY.decide_many(batch) == expected


@conftest.needs_compiled(filters._screens)
def test_the_compiled_watch_finds_each_watched_word():
    """``_screens.watch_indexes`` names a URL holding a watched word as a segment, in any
    case and at any depth, a query, a non-ASCII letter or another origin; not a word inside
    a segment."""
    watch = filters._screens.watch_indexes
    for word in filters._WATCHED:
        urls = [f"{SITE}/a/{word}", f"{SITE}/{word.upper()}/b/", f"{SITE}/x{word}/", SITE + "/"]
        assert watch(urls, SITE + "/", filters._WATCH_WORDS) == [0, 1], word
    odd = [SITE + "/a?b", SITE + "/\u212a/", SITE + "/a/", SITE + "/login?x", "https://x.org/a/"]
    assert watch(odd, SITE + "/", filters._WATCH_WORDS) == [0, 1, 3, 4]
