"""Google's robots.txt conformance data (google/robotstxt-spec-test, 400 expectations) run
through our policy: ``RobotsPolicy`` built from each file, asked with the test's user agent
as the agent token.

Every expectation either agrees with Google or is in ``KNOWN_DIFFERENCES`` below, with the
reason; the list is asserted exactly, so a change of behaviour (ours or Protego's) shows.
"""

from __future__ import annotations

import pytest

from discovery_crawler.robots import RobotsPolicy
from tests.conftest import realdata
from tests.robots_textproto import Expectation, load_expectations

# (file, test index, user agent, URL) -> what we answer instead of Google.
KNOWN_DIFFERENCES = {
    # RFC 9309 §2.2.2: "The /robots.txt URI is implicitly allowed." Protego (and we) never
    # block the file itself; Google's matcher applies `Disallow: /` to it.
    ("stress/327748.textproto", 0, "asdfbot", "http://m.example.com/robots.txt"): True,
    ("stress/369883.textproto", 0, "BarBot", "http://example.com/robots.txt"): True,
    ("stress/369883.textproto", 0, "AB", "http://example.com/robots.txt"): True,
    ("stress/860237.textproto", 0, "XYZ", "http://example.com/robots.txt"): True,
    # Google leaves percent-encoding the URL to the caller and compares bytes, so a raw
    # `ツ` does not match `Allow: /foo/bar/ツ` (nor its %E3%83%84 form). Protego encodes
    # the URL before comparing, so the allow rule matches. Scrapy requests are always
    # percent-encoded (safe_url_string), so a crawl never sees the raw form.
    ("correctness/non-ascii-paths.textproto", 1, "FooBot", "http://foo.bar/foo/bar/ツ"): True,
    ("correctness/non-ascii-paths.textproto", 2, "FooBot", "http://foo.bar/foo/bar/ツ"): True,
    # `Allow: /foo/bar/%62%61%7A` (encoded unreserved letters): Google compares strings
    # and calls the rule "illegal"; Protego decodes unreserved escapes (RFC 3986 §6.2.2.2),
    # so the rule matches /foo/bar/baz, the same resource.
    ("correctness/non-ascii-paths.textproto", 3, "FooBot", "http://foo.bar/foo/bar/baz"): True,
}
# Fixed on our side (they differed with plain Protego): Protego matches a group whose name
# is found anywhere in the agent at a word boundary (`barbarbot*` applied to
# `barbarbot-prod`) and keeps `Foo Bar` / `AB42bot` as names. RobotsPolicy reads a
# User-agent value as the product token it starts with (letters, `_`, `-`; Google's reading
# of RFC 9309 §2.2.1) and applies a group only to an exact token match, else `*`.


def _expectations() -> list[Expectation]:
    return load_expectations(realdata("robots", "google-robotstxt-spec-test"))


def _key(exp: Expectation) -> tuple[str, int, str, str]:
    return (exp.file, exp.test, exp.useragent, exp.url)


def _answer(exp: Expectation) -> tuple[bool, str | None]:
    policy = RobotsPolicy.from_text(exp.robotstxt, exp.useragent)
    return policy.check(exp.url)


def test_the_data_is_all_there():
    expectations = _expectations()
    assert len(expectations) == 400
    assert len({e.file for e in expectations}) == 16 + 25
    assert sum(e.google_specific for e in expectations) == 22


def test_every_expectation_agrees_with_google_or_is_a_known_difference():
    differences = {}
    for exp in _expectations():
        allowed, _rule = _answer(exp)
        if allowed != exp.allowed:
            differences[_key(exp)] = allowed
    assert differences == KNOWN_DIFFERENCES


def test_google_specific_expectations_all_pass():
    """The 22 GOOGLE_SPECIFIC ones (missing colon, `User-agent: Foo Bar`, …) all agree."""
    failing = [e.id for e in _expectations() if e.google_specific and _answer(e)[0] != e.allowed]
    assert failing == []


def test_every_refusal_names_a_disallow_rule_of_the_applied_group():
    """The rule we report is always a verbatim `disallow` line of the group that applies
    (never the 'not identified' fallback), for every URL Protego refuses."""
    refusals = 0
    for exp in _expectations():
        policy = RobotsPolicy.from_text(exp.robotstxt, exp.useragent)
        allowed, rule = policy.check(exp.url)
        if allowed:
            assert rule is None
            continue
        refusals += 1
        texts = {r.text for r in policy.rules if r.field == "disallow"}
        assert rule in texts, (exp.id, rule, texts)
    assert refusals > 150


@pytest.mark.parametrize(
    ("file", "test", "agent", "url", "rule"),
    [
        (
            "correctness/most-specific-match.textproto",
            0,
            "FooBot",
            "http://foo.bar/x/page.html",
            "disallow: /x/page.html",
        ),
    ],
)
def test_reported_rule_examples(file, test, agent, url, rule):
    exp = next(e for e in _expectations() if (e.file, e.test) == (file, test))
    assert RobotsPolicy.from_text(exp.robotstxt, agent).check(url) == (False, rule)
