"""The refusal classifier (SPEC §11) as plain functions: hits, near misses, failures, the
identical-content tracker."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    IgnoreRequest,
)
from twisted.internet.error import ConnectionDone, ConnectionLost, DNSLookupError
from twisted.internet.error import ConnectionRefusedError as TxConnectionRefusedError
from twisted.python.failure import Failure
from twisted.web.client import ResponseFailed, ResponseNeverReceived

from discovery_crawler.refusals import (
    REFUSAL_CLASSES,
    IdenticalContentTracker,
    Refusal,
    RefusalSummary,
    classify_failure,
    classify_response,
    failure_reason,
    is_login_url,
    looks_like_shell,
    readable_text,
)
from tests.refusal_site import (
    ABOUT_LOGIN,
    CHALLENGE,
    LOGIN_PAGE,
    NEXT_SSR,
    NOT_FOUND_SHELL,
    PDF,
    SHELL,
    SHORT,
)

HTML = {"Content-Type": "text/html; charset=utf-8"}
U = "https://example.org"

CRA_SHELL = b"""<!doctype html><html><head><title>React App</title>
<script defer src="/static/js/main.1a2b.js"></script></head><body>
<noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div>
</body></html>"""
ANGULAR_SHELL = b"""<html><head><base href="/"></head><body><app-root>Loading...</app-root>
<script src="runtime.js"></script><script src="main.js"></script></body></html>"""
BARE_SCRIPT_SHELL = b"<html><body><script src=/bundle.js></script></body></html>"
CAPTCHA_PAGE = b"""<html><head><title>Security check</title></head><body>
<h1>One more step</h1><p>Please complete the CAPTCHA below to continue.</p>
<div class="g-recaptcha" data-sitekey="x"></div></body></html>"""
ACCESS_DENIED = b"""<html><head><title>Access Denied</title></head><body><h1>Access Denied</h1>
You don't have permission to access this page on this server. Reference #18.2f</body></html>"""
LONG_ARTICLE = (
    b"<html><head><title>Why access denied errors happen</title></head><body><article><p>"
    + b"When a server answers access denied, or shows a captcha, it is deciding about you. " * 40
    + b"</p></article>"
    + b"".join(b'<a href="/post/%d">post</a>' % i for i in range(30))
    + b"</body></html>"
)
CONTACT_WITH_CAPTCHA = (
    b"<html><body><h1>Contact</h1><form>Name <input> Message <textarea></textarea>"
    b"<div class=g-recaptcha></div></form><script src=https://www.google.com/recaptcha/api.js>"
    b"</script><nav>"
    + b"".join(b'<a href="/section/%d">Section %d</a>' % (i, i) for i in range(15))
    + b"</nav></body></html>"
)


def classify(status=200, body=b"", headers=None, url=f"{U}/page", chain=None, **kw):
    return classify_response(url, status, HTML if headers is None else headers, body, chain, **kw)


HITS = [
    # (id, kwargs, class)
    ("404", {"status": 404, "body": b"<html>Not found</html>"}, "missing"),
    ("410", {"status": 410}, "missing"),
    (
        "404 with a shell body is missing, not shell",
        {"status": 404, "body": NOT_FOUND_SHELL},
        "missing",
    ),
    ("401", {"status": 401}, "wall"),
    ("403", {"status": 403, "body": ACCESS_DENIED}, "wall"),
    ("429", {"status": 429}, "wall"),
    ("451", {"status": 451}, "wall"),
    ("503 challenge", {"status": 503, "headers": {"cf-mitigated": "challenge"}}, "wall"),
    ("503 block page", {"status": 503, "body": CHALLENGE}, "wall"),
    ("503 captcha", {"status": 503, "body": CAPTCHA_PAGE}, "wall"),
    (
        "503 unavailable",
        {"status": 503, "body": b"<html>Down for maintenance</html>"},
        "server_error",
    ),
    ("500", {"status": 500, "body": b"oops"}, "server_error"),
    ("502", {"status": 502}, "server_error"),
    ("504", {"status": 504}, "server_error"),
    ("522", {"status": 522}, "server_error"),
    ("599", {"status": 599}, "server_error"),
    ("408", {"status": 408}, "timeout"),
    (
        "403 serving a PDF is a wall",
        {"status": 403, "headers": {"Content-Type": "application/pdf"}, "body": PDF},
        "wall",
    ),
    ("pdf", {"headers": {"Content-Type": "application/pdf"}, "body": PDF}, "download"),
    ("pdf, no content-type", {"headers": {}, "body": PDF}, "download"),
    (
        "zip attachment",
        {
            "headers": {
                "Content-Type": "application/octet-stream",
                "Content-Disposition": 'attachment; filename="a.zip"',
            },
            "body": b"PK\x03\x04",
        },
        "download",
    ),
    (
        "html attachment",
        {
            "headers": {
                "Content-Type": "text/html",
                "Content-Disposition": "attachment; filename=page.html",
            },
            "body": SHORT,
        },
        "download",
    ),
    ("image", {"headers": {"Content-Type": "image/png"}, "body": b"\x89PNG\r\n"}, "download"),
    ("json", {"headers": {"Content-Type": "application/json"}, "body": b'{"a": 1}'}, "download"),
    (
        "bytes headers (Scrapy's)",
        {"headers": {b"Content-Type": [b"application/zip"]}, "body": b"PK"},
        "download",
    ),
    ("cloudflare challenge with 200", {"body": CHALLENGE}, "wall"),
    ("captcha page", {"body": CAPTCHA_PAGE}, "wall"),
    ("access denied page with 200", {"body": ACCESS_DENIED}, "wall"),
    ("react shell", {"body": CRA_SHELL}, "shell"),
    ("angular shell", {"body": ANGULAR_SHELL}, "shell"),
    ("bare script, no text", {"body": BARE_SCRIPT_SHELL}, "shell"),
    ("fixture shell", {"body": SHELL}, "shell"),
    (
        "login redirect, relative next",
        {"url": f"{U}/login?next=%2Fmembers%2F", "chain": [f"{U}/members/"], "body": LOGIN_PAGE},
        "login",
    ),
    (
        "login redirect, absolute returnTo",
        {
            "url": f"{U}/auth/sign_in?returnTo=https%3A%2F%2Fexample.org%2Fdocs%2Fa",
            "chain": [f"{U}/docs/a"],
            "body": LOGIN_PAGE,
        },
        "login",
    ),
    (
        "login on another host",
        {
            "url": "https://accounts.example.com/ServiceLogin?continue=https://example.org/x",
            "chain": [f"{U}/x", f"{U}/x/"],
        },
        "login",
    ),
    (
        "login answering 401",
        {"status": 401, "url": f"{U}/signin?redirect=/a", "chain": [f"{U}/a"]},
        "login",
    ),
    (
        "wp-login",
        {
            "url": f"{U}/wp-login.php?redirect_to=https%3A%2F%2Fexample.org%2Fwp-admin%2F",
            "chain": [f"{U}/wp-admin/"],
        },
        "login",
    ),
]

NEAR_MISSES = [
    ("a short real page", {"body": SHORT}),
    ("a long article about access denied and captchas", {"body": LONG_ARTICLE}),
    ("a contact page with a captcha widget and a menu", {"body": CONTACT_WITH_CAPTCHA}),
    ("a page about logging in", {"body": ABOUT_LOGIN}),
    ("the login page asked for directly", {"url": f"{U}/login", "body": LOGIN_PAGE}),
    (
        "a redirect to /login with no return parameter",
        {"url": f"{U}/login", "chain": [f"{U}/members/"]},
    ),
    (
        "a redirect to /login returning elsewhere",
        {"url": f"{U}/login?next=/home", "chain": [f"{U}/members/"]},
    ),
    (
        "a redirect to /blog/login-tips/ (not a login address)",
        {"url": f"{U}/blog/login-tips/?next=/a", "chain": [f"{U}/a"]},
    ),
    ("server-rendered Next.js page", {"body": NEXT_SSR}),
    ("a shell after rendering", {"body": SHELL, "rendered": True}),
    ("HTML served as text/plain", {"headers": {"Content-Type": "text/plain"}, "body": SHORT}),
    ("HTML with no Content-Type", {"headers": {}, "body": SHORT}),
    ("XHTML", {"headers": {"Content-Type": "application/xhtml+xml"}, "body": SHORT}),
    ("empty 200", {"body": b""}),
    ("a 400 is not a refusal class", {"status": 400, "body": b"bad request"}),
    ("an unfollowed 301", {"status": 301}),
    (
        "a page with scripts and a sentence, no app root",
        {"body": b"<html><body><p>Hello, this is our page.</p><script>x()</script></body>"},
    ),
]


@pytest.mark.parametrize(("kwargs", "expected"), [h[1:] for h in HITS], ids=[h[0] for h in HITS])
def test_classifies_each_refusal(kwargs, expected):
    refusal = classify(**kwargs)
    assert refusal is not None and refusal.refusal_class == expected, refusal
    assert refusal.reason


@pytest.mark.parametrize("kwargs", [n[1] for n in NEAR_MISSES], ids=[n[0] for n in NEAR_MISSES])
def test_near_misses_are_pages(kwargs):
    assert classify(**kwargs) is None


def test_wall_status_is_named_in_words():
    assert classify(403).reason == "403 Forbidden: access denied by the server"
    busy = classify(429, headers={"Retry-After": "120"})
    assert busy.reason == "429 Too Many Requests: rate limited by the server, retry after 120"
    cf = classify(403, CHALLENGE, {"Content-Type": "text/html", "cf-mitigated": "challenge"})
    assert cf.reason.endswith("(Cloudflare challenge)")
    cf503 = classify(503, headers={"cf-mitigated": "challenge", "Retry-After": "5"})
    assert cf503.reason == (
        "503 Service Unavailable: the server turns crawlers away (Cloudflare challenge), "
        "retry after 5"
    )
    assert classify(503, CHALLENGE).reason.startswith(
        '503 Service Unavailable: block page: "Just a moment..."'
    )


def test_server_errors_are_named_in_words():
    assert classify(500).reason == "500 Internal Server Error: the server failed"
    busy = classify(503, headers={"Retry-After": "120"})
    assert busy.reason == "503 Service Unavailable: the server failed, retry after 120"
    assert classify(522).reason == "522: the CDN's connection to the origin timed out"
    assert classify(408).reason == (
        "408 Request Timeout: the server gave up waiting for the request"
    )


def test_login_record_names_the_requested_url_and_where_it_ended():
    end = f"{U}/login?next=%2Fmembers%2F"
    refusal = classify(url=end, chain=[f"{U}/members/"])
    assert (refusal.url, refusal.final_url, refusal.status) == (f"{U}/members/", end, 200)
    assert refusal.reason == "redirected to a login page (/login) with next= pointing back"


def test_download_reason_names_the_file():
    headers = {
        "content-type": "application/zip",
        "content-disposition": "attachment; filename=a.zip",
    }
    refusal = classify(body=b"PK", headers=headers)
    assert (
        refusal.reason == "server sent a file a.zip (application/zip, as an attachment), not HTML"
    )
    assert classify(headers={}, body=PDF).reason == "server sent a PDF, not HTML"


def test_login_urls():
    assert is_login_url(f"{U}/login")
    assert is_login_url(f"{U}/users/sign_in")
    assert is_login_url(f"{U}/login.php")
    assert is_login_url("https://login.example.com/")
    assert not is_login_url(f"{U}/blog/how-to-login/")
    assert not is_login_url(f"{U}/authors/")


def test_readable_text_and_shell_helpers():
    assert readable_text(CRA_SHELL) == ""
    assert (
        readable_text(
            b"<html><head><title>T</title><style>p{}</style></head>"
            b"<body><p>Hi <b>there</b></p><script>x=1</script></body></html>"
        )
        == "Hi there"
    )
    assert looks_like_shell(CRA_SHELL)
    assert not looks_like_shell(NEXT_SSR)
    assert not looks_like_shell(SHORT)
    assert readable_text(b"") == ""


def test_citation_comes_from_the_meta():
    refusal = Refusal("missing", f"{U}/x", 404, "404 Not Found")
    refusal.cite({"found_on": f"{U}/", "anchor": "a" * 300, "depth": 2, "via": "link"})
    record = refusal.as_dict()
    assert list(record)[:4] == ["class", "url", "status", "reason"]
    assert record["class"] == "missing"
    assert (record["found_on"], record["depth"], record["via"]) == (f"{U}/", 2, "link")
    assert len(record["anchor"]) == 160
    nested = Refusal("wall", f"{U}/y", 403, "r").cite({"citation": {"found_on": f"{U}/z"}})
    assert nested.found_on == f"{U}/z" and nested.anchor is None


def _wrapped(cause: Exception) -> DownloadFailedError:
    """A ``DownloadFailedError`` raised from ``cause``, as Scrapy's download handler does."""
    try:
        raise DownloadFailedError(str(cause)) from cause
    except DownloadFailedError as exc:
        return exc


class PlaywrightError(Exception):
    """Stands in for playwright's Error: the classifier goes by name and message."""


PlaywrightError.__name__ = "Error"


class PlaywrightTimeout(Exception):
    pass


PlaywrightTimeout.__name__ = "TimeoutError"

FAILURES = [
    (
        DownloadTimeoutError("Getting x took longer than 30.0 seconds."),
        "timeout",
        "timed out: Getting x took longer than 30.0 seconds.",
    ),
    (TimeoutError(), "timeout", "timed out: TimeoutError"),
    (
        PlaywrightTimeout("Page.goto: Timeout 2000ms exceeded.\nCall log:\n - navigating"),
        "timeout",
        "timed out: Page.goto: Timeout 2000ms exceeded.",
    ),
    (CannotResolveHostError("no.such.host"), "network", "DNS lookup failed: no.such.host"),
    (DNSLookupError("x"), "network", "DNS lookup failed: DNS lookup failed: x."),
    (DownloadConnectionRefusedError("refused"), "network", "connection refused: refused"),
    (ConnectionResetError(), "network", "connection reset"),
    (
        ConnectionLost(),
        "network",
        "connection lost before a full response: "
        "Connection to the other side was lost in a non-clean fashion.",
    ),
    (
        PlaywrightError("Page.goto: net::ERR_NAME_NOT_RESOLVED at http://x/"),
        "network",
        "DNS lookup failed (ERR_NAME_NOT_RESOLVED, in the browser)",
    ),
    (
        PlaywrightError("Page.goto: net::ERR_SSL_PROTOCOL_ERROR at x"),
        "network",
        "browser failed to load it (ERR_SSL_PROTOCOL_ERROR)",
    ),
    (RuntimeError("odd"), "network", "download failed (RuntimeError: odd)"),
]


@pytest.mark.parametrize(
    ("exc", "expected", "reason"),
    FAILURES,
    ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else None,
)
def test_failures_are_named(exc, expected, reason):
    refusal = classify_failure(f"{U}/x", exc)
    assert (refusal.refusal_class, refusal.reason, refusal.status) == (expected, reason, None)


@pytest.mark.parametrize(
    ("exc", "words"),
    [
        (DownloadConnectionRefusedError("x"), "connection refused"),
        (TxConnectionRefusedError(), "connection refused"),
        (ConnectionRefusedError(), "connection refused"),
        (DownloadTimeoutError("took longer than 30 s"), "timed out"),
        (CannotResolveHostError("no.such"), "DNS lookup failed"),
        (ConnectionResetError(), "connection reset"),
        # Scrapy's wrapper of Twisted's ResponseFailed: its reasons say what happened
        (
            _wrapped(ResponseNeverReceived([Failure(ConnectionDone())])),
            "connection closed before a response",
        ),
        (
            _wrapped(ResponseFailed([Failure(ConnectionLost())])),
            "connection lost before a full response",
        ),
        (DownloadFailedError("?"), "download failed"),
        (RuntimeError("odd"), "RuntimeError"),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else None,
)
def test_failure_reasons_are_short_words(exc, words):
    assert failure_reason(exc) == words


def test_decisions_are_not_failures():
    assert classify_failure(f"{U}/x", IgnoreRequest("robots")) is None

    class Forbidden(IgnoreRequest):
        pass

    assert classify_failure(f"{U}/x", Forbidden()) is None


@given(
    status=st.integers(100, 599),
    body=st.binary(max_size=400) | st.text(max_size=300).map(str.encode),
    ctype=st.sampled_from(
        ["text/html", "", "application/pdf", "text/plain", "image/png", "x/y; q"]
    ),
    chain=st.lists(st.sampled_from([f"{U}/a", f"{U}/login?next=/a", "::", ""]), max_size=3),
)
def test_never_raises_and_gives_one_known_class(status, body, ctype, chain):
    refusal = classify(status, body, {"Content-Type": ctype}, chain=chain)
    assert refusal is None or refusal.refusal_class in REFUSAL_CLASSES
    if status in (404, 410):
        assert refusal.refusal_class == "missing"


@given(st.text(max_size=500))
def test_html_helpers_never_raise(text):
    assert isinstance(readable_text(text), str)
    assert isinstance(looks_like_shell(text.encode()), bool)


def test_identical_content_warns_once_naming_the_urls():
    tracker = IdenticalContentTracker()
    body = b"<html><body>Choose your region</body></html>"
    assert tracker.add(f"{U}/a", body) is None
    assert tracker.add(f"{U}/a", body) is None  # the same URL again is not another URL
    assert tracker.add(f"{U}/b", body) is None
    assert tracker.add(f"{U}/other", b"<html>different</html>") is None
    warning = tracker.add(f"{U}/c", body)
    assert warning is not None and warning["urls"] == [f"{U}/a", f"{U}/b", f"{U}/c"]
    assert warning["count"] == 3 and f"{U}/a, {U}/b, {U}/c" in warning["message"]
    assert tracker.add(f"{U}/d", body) is None  # one warning per group; its count grows
    assert tracker.warnings == [warning] and warning["count"] == 4
    assert tracker.add(f"{U}/e", b"") is None


def test_identical_content_memory_is_bounded():
    tracker = IdenticalContentTracker(max_bodies=10, list_urls=5)
    for i in range(1000):
        tracker.add(f"{U}/{i}", b"page %d" % i)
    assert len(tracker._seen) == 10
    for i in range(20):
        tracker.add(f"{U}/same/{i}", b"same")
    assert len(tracker.warnings) == 1 and len(tracker.warnings[0]["urls"]) == 5
    assert tracker.warnings[0]["count"] == 20


def test_summary_counts_every_class():
    summary = RefusalSummary(list_cap=1)
    summary.add(Refusal("missing", f"{U}/a", 404, "404 Not Found").as_dict())
    summary.add(Refusal("wall", f"{U}/b", 403, "403").as_dict())
    data = summary.as_dict()
    assert data["counts"] == {c: (1 if c in ("missing", "wall") else 0) for c in REFUSAL_CLASSES}
    assert (data["total"], data["listed"]) == (2, 1)
    assert summary.line() == "Refusals (2): 1 missing, 1 wall"
