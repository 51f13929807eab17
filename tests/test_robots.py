"""The robots policy of one origin (``discovery_crawler.robots``): RFC 9309 outcomes, the
record, the rule that blocked, and hostile files."""

from __future__ import annotations

import contextlib
import os
import tarfile

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from protego import Protego

from discovery_crawler.robots import (
    ALLOW_ALL,
    DEFAULT_MAX_BYTES,
    FAIL_CLOSED,
    PARSED,
    PolicyStore,
    RobotsPolicy,
    agent_name,
    cap_body,
    request_origin,
)
from discovery_crawler.urls.normalize import UrlError, normalize
from tests.conftest import REALDATA, realdata

URL = "https://example.com/robots.txt"
TOKEN = "discovery-crawler"


def respond(status: int, body: bytes = b"", **kw) -> RobotsPolicy:
    return RobotsPolicy.from_response(URL, status, body, TOKEN, **kw)


# -- outcomes (RFC 9309 §2.3.1) ---------------------------------------------------------


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 451])
def test_4xx_allows_all(status):
    policy = respond(status, b"User-agent: *\nDisallow: /\n")
    assert policy.outcome == ALLOW_ALL
    assert policy.check("https://example.com/private/") == (True, None)
    record = policy.as_dict()
    assert record["fetched"] is True
    assert record["status"] == status
    assert f"answered {status}" in record["reason"] and "allow all" in record["reason"]
    assert record["group"] is None and record["rules"] == []


@pytest.mark.parametrize("status", [500, 502, 503, 504, 429])
def test_5xx_and_429_fail_closed(status):
    policy = respond(status)
    assert policy.outcome == FAIL_CLOSED
    assert policy.check("https://example.com/") == (
        False,
        f"fail closed: robots.txt answered {status}",
    )
    assert "disallow all" in policy.reason
    # The file itself stays reachable, so a later fetch may lift the block.
    assert policy.check(URL) == (True, None)


def test_404_and_503_are_told_apart_in_the_record():
    missing, unavailable = respond(404).as_dict(), respond(503).as_dict()
    assert (missing["status"], missing["outcome"]) == (404, ALLOW_ALL)
    assert (unavailable["status"], unavailable["outcome"]) == (503, FAIL_CLOSED)
    assert missing["reason"] != unavailable["reason"]


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("timeout", "Getting https://example.com/robots.txt took longer than 30.0 seconds."),
        ("dns lookup failed", "no such host example.invalid"),
        ("connection refused", "Connection was refused by other side"),
        ("network error", "ConnectionLost: connection lost"),
    ],
)
def test_failures_fail_closed_and_say_why(kind, message):
    policy = RobotsPolicy.from_failure(URL, kind, message, TOKEN)
    record = policy.as_dict()
    assert record["outcome"] == FAIL_CLOSED
    assert record["fetched"] is False and record["status"] is None
    assert record["error"] == f"{kind}: {message}"
    assert kind in record["reason"] and "fail closed" in record["reason"]
    allowed, rule = policy.check("https://example.com/a")
    assert not allowed and rule.startswith(f"fail closed: robots.txt {kind}")
    assert rule.count("(") == rule.count(")")  # the error text whole, colons and all


def test_a_fail_closed_rule_keeps_the_error_text_with_its_colons():
    """Twisted's refusal text holds colons: the rule said it cut at the first one, leaving
    "(Connection was refused by other side" unclosed in the summary's one line."""
    message = "Connection was refused by other side: 111: Connection refused."
    policy = RobotsPolicy.from_failure(URL, "connection refused", message, TOKEN)
    assert policy.check("https://example.com/a") == (
        False,
        f"fail closed: robots.txt connection refused ({message})",
    )


def test_fail_closed_can_be_turned_off():
    policy = respond(503, fail_closed=False)
    assert policy.outcome == ALLOW_ALL
    assert "ROBOTS_FAIL_CLOSED is off" in policy.reason
    assert policy.allowed("https://example.com/x")
    timeout = RobotsPolicy.from_failure(URL, "timeout", "slow", fail_closed=False)
    assert timeout.outcome == ALLOW_ALL and timeout.allowed("https://example.com/x")


def test_redirect_chain_is_recorded():
    chain = ["http://example.com/robots.txt", "https://example.com/robots.txt"]
    policy = RobotsPolicy.from_response(
        chain[0],
        200,
        b"User-agent: *\nDisallow: /x\nSitemap: /sitemap.xml\n",
        final_url="https://www.example.com/robots.txt",
        redirects=chain,
    )
    record = policy.as_dict()
    assert record["url"] == "http://example.com/robots.txt"
    assert record["final_url"] == "https://www.example.com/robots.txt"
    assert record["redirects"] == 2 and record["redirect_chain"] == chain
    # A relative Sitemap: resolves against the robots.txt actually read.
    assert record["sitemaps"] == ["https://www.example.com/sitemap.xml"]
    assert policy.check("http://example.com/x/1") == (False, "Disallow: /x")


def test_redirect_that_never_ends_counts_as_unavailable():
    hops = [f"https://example.com/r{i}" for i in range(5)]
    policy = respond(301, redirects=hops)
    assert policy.outcome == ALLOW_ALL
    assert "after 5 hop(s)" in policy.reason and policy.as_dict()["redirects"] == 5


# -- groups and rules -------------------------------------------------------------------

FILE = b"""\
# comment
User-agent: *
Disallow: /private/
Allow: /private/open/   # a comment after a rule
Crawl-delay: 3

User-agent: discovery-crawler
User-agent: otherbot
Disallow: /ours/
Allow: /ours/public
Disallow: /*.pdf$
Crawl-delay: 7

User-agent: discovery
Disallow: /

Sitemap: https://example.com/sitemap.xml
Sitemap: /news.xml
"""


def test_token_group_wins_over_star_and_over_a_shorter_name():
    record = RobotsPolicy.from_text(FILE, TOKEN, URL).as_dict()
    assert record["outcome"] == PARSED
    assert record["group"] == "discovery-crawler"
    assert record["rules"] == [
        "Disallow: /ours/",
        "Allow: /ours/public",
        "Disallow: /*.pdf$",
    ]
    assert record["crawl_delay"] == 7.0
    assert record["sitemaps"] == [
        "https://example.com/sitemap.xml",
        "https://example.com/news.xml",
    ]
    assert record["bytes"] == len(FILE) and record["truncated"] is False


def test_star_group_when_the_token_is_not_named():
    record = RobotsPolicy.from_text(FILE, "somebot", URL).as_dict()
    assert record["group"] == "*"
    assert record["rules"] == ["Disallow: /private/", "Allow: /private/open/"]
    assert record["crawl_delay"] == 3.0


def test_no_group_applies():
    policy = RobotsPolicy.from_text(b"User-agent: otherbot\nDisallow: /\n", TOKEN)
    assert policy.as_dict()["group"] is None
    assert policy.check("http://example.com/anything") == (True, None)


@pytest.mark.parametrize(
    ("token", "url", "expected"),
    [
        (TOKEN, "https://example.com/ours/x", (False, "Disallow: /ours/")),
        (TOKEN, "https://example.com/ours/public/a", (True, None)),  # longer allow wins
        (TOKEN, "https://example.com/doc.pdf", (False, "Disallow: /*.pdf$")),
        (TOKEN, "https://example.com/doc.pdf?x=1", (True, None)),  # $ anchors the end
        (TOKEN, "https://example.com/private/", (True, None)),  # * rules do not apply
        ("somebot", "https://example.com/private/a", (False, "Disallow: /private/")),
        ("somebot", "https://example.com/private/open/a", (True, None)),
        ("discovery", "https://example.com/", (False, "Disallow: /")),
    ],
)
def test_rule_reporting(token, url, expected):
    assert RobotsPolicy.from_text(FILE, token, URL).check(url) == expected


def test_allow_wins_a_tie():
    policy = RobotsPolicy.from_text(b"User-agent: *\nDisallow: /page\nAllow: /page\n")
    assert policy.check("http://example.com/page") == (True, None)


def test_reported_rule_is_verbatim_and_the_longest_match():
    text = b"User-agent: *\nDISALLOW: /a\ndisallow /a/b/c\nDisallow: /a/b\n"
    policy = RobotsPolicy.from_text(text)
    assert policy.check("http://example.com/a/b/c/d") == (False, "disallow /a/b/c")
    assert policy.check("http://example.com/a/b/x") == (False, "Disallow: /a/b")
    assert policy.check("http://example.com/a/x") == (False, "DISALLOW: /a")


@pytest.mark.parametrize(
    ("value", "name"),
    [("FooBot", "foobot"), ("FooBot/1.0", "foobot"), ("barbot*", "barbot"), ("Foo Bar", "foo")],
)
def test_agent_names_are_product_tokens(value, name):
    assert agent_name(value) == name
    assert agent_name("*") == "*"


def test_request_origin():
    assert request_origin("HTTPS://Example.COM:443/a?b") == "https://example.com"
    assert request_origin("http://example.com:8080/x") == "http://example.com:8080"
    assert request_origin("http://[::1]:8000/") == "http://[::1]:8000"


def test_policy_store_gives_crawl_delay_by_origin_or_url():
    store = PolicyStore()
    policy = RobotsPolicy.from_text(FILE, TOKEN, URL)
    assert store.put("https://example.com", policy) is True
    assert store.put("https://example.com", respond(503)) is False  # the first one stays
    assert store.crawl_delay("https://example.com/some/page") == 7.0
    assert store.crawl_delay("https://other.example") is None


# -- hostile input ------------------------------------------------------------------------


def test_a_1_mib_file_is_read_up_to_the_cap_at_a_line_break():
    line = b"Disallow: /spam/" + b"x" * 40 + b"\n"
    body = b"User-agent: *\nDisallow: /first/\n" + line * (1_048_576 // len(line))
    body += b"Disallow: /after-the-cap/\n"
    policy = respond(200, body)
    record = policy.as_dict()
    assert record["truncated"] is True and record["bytes"] == len(body)
    assert record["parsed_bytes"] <= DEFAULT_MAX_BYTES
    assert "only the first" in record["reason"]
    assert policy.check("https://example.com/first/") == (False, "Disallow: /first/")
    assert policy.allowed("https://example.com/after-the-cap/")  # never read
    assert all(rule.startswith("Disallow: /") for rule in record["rules"])  # none cut


def test_cap_body():
    assert cap_body(b"a\nbb\nccc", 6) == (b"a\nbb\n", True)
    assert cap_body(b"short", 100) == (b"short", False)
    assert cap_body(b"x" * 10, 4) == (b"xxxx", True)  # no line break at all
    assert cap_body(b"x" * 10, 0) == (b"x" * 10, False)  # 0 = no cap


def test_garbage_and_binary_parse_without_error():
    garbage = bytes(range(256)) * 4000 + os.urandom(200_000)
    for body in (garbage, b"\x00" * 600_000, b"<html><body>Not found</body></html>" * 50):
        policy = respond(200, body)
        assert policy.outcome == PARSED
        assert policy.check("https://example.com/x")[0] is True
        assert policy.as_dict()["bytes"] == len(body)


@pytest.mark.parametrize(
    "bom", [b"\xef\xbb\xbf", b"\xef\xbb", b"\xef", b"\xff\xfe", b"\xfe\xff"], ids=repr
)
def test_byte_order_marks(bom):
    text = "User-agent: *\nDisallow: /x\n"
    if bom == b"\xff\xfe":
        body = bom + text.encode("utf-16-le")
    elif bom == b"\xfe\xff":
        body = bom + text.encode("utf-16-be")
    else:
        body = bom + text.encode()
    assert respond(200, body).check("https://example.com/x") == (False, "Disallow: /x")


# -- the reported rule always agrees with Protego's answer --------------------------------

_paths = st.lists(
    st.sampled_from(["/", "/a", "/a/", "/a/b", "/*.php", "/a*b$", "/x$", "/%7Ea", "/~a", "/é"]),
    max_size=6,
)


@settings(max_examples=300, deadline=None)
@given(
    allows=_paths,
    disallows=_paths,
    path=st.text(alphabet="/ab.x~%7Eéphp?=", max_size=12),
)
def test_reported_rule_agrees_with_protego(allows, disallows, path):
    lines = ["User-agent: *"]
    lines += [f"Allow: {a}" for a in allows] + [f"Disallow: {d}" for d in disallows]
    text = "\n".join(lines)
    url = "http://example.com/" + path.lstrip("/")
    policy = RobotsPolicy.from_text(text)
    allowed, rule = policy.check(url)
    assert allowed == Protego.parse(text).can_fetch(url, "*")
    if not allowed:
        assert rule in {f"Disallow: {d}" for d in disallows}


# -- every real robots.txt ----------------------------------------------------------------


def _real_robots_files() -> list[str]:
    root = REALDATA / "robots"
    if not root.is_dir():
        return ["<missing>"]  # realdata() below then skips (or fails in CI)
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and p.suffix not in (".textproto", ".md", ".tsv", ".gz")
    )


@pytest.mark.parametrize("name", _real_robots_files())
def test_every_real_robots_file_parses_into_a_record(name):
    body = realdata("robots", *name.split("/")).read_bytes()
    host = name.rpartition("/")[2].removesuffix(".robots.txt").removesuffix("-robots.txt")
    policy = RobotsPolicy.from_response(f"https://{host}/robots.txt", 200, body, TOKEN)
    record = policy.as_dict()
    assert record["outcome"] == PARSED and record["bytes"] == len(body)
    assert record["group"] in (None, "*", TOKEN)
    assert len(record["rules"]) == len(policy.rules)
    assert all(s.startswith(("http://", "https://")) for s in record["sitemaps"])
    for rule in policy.rules[:40]:  # each rule's own path is decided and explained
        path = rule.value.split("*")[0].rstrip("$") or "/"
        url = f"https://{host}/{path.lstrip('/')}"
        allowed, why = policy.check(url)
        assert allowed == (why is None)
        if not allowed:
            assert why in {r.text for r in policy.rules if r.field == "disallow"}


def test_the_whole_protego_corpus_parses_and_explains(tmp_path):
    """4,231 real robots.txt files: no error, and every refusal names a disallow rule."""
    archive = realdata("robots", "protego-test_data-all.tar.gz")
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path, filter="data")
    files = sorted((tmp_path / "test_data").iterdir())
    assert len(files) == 4231
    refusals = 0
    for file in files:
        policy = RobotsPolicy.from_response(
            f"https://{file.name}/robots.txt", 200, file.read_bytes(), "googlebot"
        )
        policy.as_dict()
        disallows = {r.text for r in policy.rules if r.field == "disallow"}
        for rule in policy.rules[:20]:
            path = rule.value.split("*")[0].rstrip("$") or "/"
            allowed, why = policy.check(f"https://{file.name}/{path.lstrip('/')}x")
            if not allowed:
                refusals += 1
                assert why in disallows, (file.name, why)
    assert refusals > 10_000


# -- the batch verdicts agree with check() -------------------------------------------------

_rule_values = st.lists(
    st.sampled_from(
        ["/", "/a", "/a/", "/a/b", "/*.php", "/a*b$", "/x$", "/%7Ea", "/~a", "/é", "/*?",
         "/*?replytocom=", "/a&b", "/q=1", "*x", "/%e9", "/A"]
    ),
    max_size=6,
)  # fmt: skip


_path_pieces = st.lists(
    st.sampled_from(
        [
            *"/ab.xA~%7Eéphp?=&39F;:@!,+ -_日",
            "%E6%97%A5",
            "%3F",
            "%C3%A9",
            "%F0%9F%98%80",
            "%ED%A0%80",
        ]
    ),
    max_size=10,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(allows=_rule_values, disallows=_rule_values, paths=st.lists(_path_pieces, max_size=8))
@example(allows=[], disallows=["/*?"], paths=["/a%3Fb"])  # an escaped "?" is a "?" to Protego
@example(allows=[], disallows=["/a&b"], paths=["/a%26b"])
@example(allows=[], disallows=["/q=1"], paths=["/q%3D1"])
@example(allows=[], disallows=["/%e9"], paths=["/é", "/%93"])  # bad UTF-8: U+FFFD to Protego
@example(allows=["/a/b"], disallows=["/a"], paths=["/a/b", "/a/c", "/b"])
def test_disallowed_many_is_check_per_url(allows, disallows, paths):
    """The batch scan only narrows which URLs are checked: its answer is ``check``'s for
    every URL, whatever the patterns' wildcards, anchors, escapes and query characters."""
    lines = ["User-agent: *"]
    lines += [f"Allow: {a}" for a in allows] + [f"Disallow: {d}" for d in disallows]
    policy = RobotsPolicy.from_text("\n".join(lines))
    urls = []  # as the pipeline has them: normalized
    for path in paths:
        with contextlib.suppress(UrlError):
            urls.append(normalize("http://example.com/" + path.lstrip("/")))
    assert policy.disallowed_many(urls, "http://example.com") == [policy.check(u)[1] for u in urls]


def test_disallowed_many_without_rules_or_fail_closed():
    origin = "https://example.com"
    urls = [origin + "/a", origin + "/robots.txt"]
    assert RobotsPolicy.from_text("User-agent: *\nAllow: /\n").disallowed_many(urls, origin) == [
        None,
        None,
    ]
    closed = RobotsPolicy.from_response(origin + "/robots.txt", 503, b"", TOKEN)
    assert closed.disallowed_many(urls, origin) == [closed.check(urls[0])[1], None]
