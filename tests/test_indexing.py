"""Indexing directives and the indexability verdict (``discovery_crawler/indexing.py``)."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from discovery_crawler.indexing import (
    INDEXABLE,
    REASONS,
    UNFETCHED,
    VERDICTS,
    IndexTally,
    directives,
    header_directives,
    indexability_of,
    judged,
    last_modified,
    meta_applies,
    page_directives,
    problem_line,
    verdict_flags,
)

AGENT = "discovery-crawler"
_WORDS = st.sampled_from(
    ["noindex", "nofollow", "none", "all", "index", "follow", "noarchive", "nosnippet"]
)


def test_directives_are_comma_separated_and_case_insensitive():
    assert directives(" NoIndex ,FOLLOW") == {"noindex", "follow"}
    assert directives("max-snippet:20, noindex") == {"max-snippet", "noindex"}
    assert directives("") == frozenset()


def test_none_is_noindex_and_nofollow():
    assert verdict_flags(directives("none")) == (True, True)
    assert verdict_flags(directives("noindex")) == (True, False)
    assert verdict_flags(directives("nofollow")) == (False, True)
    assert verdict_flags(directives("index, follow")) == (False, False)


def test_header_agent_prefix_applies_to_that_agent_only():
    assert header_directives("googlebot: noindex", AGENT) == frozenset()
    assert header_directives("noindex", AGENT) == {"noindex"}
    assert header_directives(f"{AGENT.upper()}: noindex, nofollow", AGENT) == {
        "noindex",
        "nofollow",
    }
    # unprefixed first, then another agent's: only the first applies to us
    assert header_directives("nofollow, googlebot: noindex", AGENT) == {"nofollow"}
    # a value directive is no agent prefix
    assert header_directives("unavailable_after: 25 Jun 2030 15:00:00 PST", AGENT) == {
        "unavailable_after"
    }


def test_meta_names_robots_and_the_agent_token():
    assert meta_applies("ROBOTS", AGENT)
    assert meta_applies(AGENT, AGENT)
    assert not meta_applies("googlebot", AGENT)
    assert not meta_applies("robots-extra", AGENT)


def test_page_directives_add_up_meta_and_header():
    assert page_directives(["nofollow"], ["noindex"], AGENT) == (True, True)
    assert page_directives([], ["googlebot: none"], AGENT) == (False, False)


@given(st.lists(_WORDS, max_size=6), st.booleans())
def test_directive_order_and_case_do_not_matter(words, upper):
    content = ", ".join(w.upper() if upper else w for w in words)
    noindex, nofollow = verdict_flags(directives(content))
    assert noindex == ("noindex" in words or "none" in words)
    assert nofollow == ("nofollow" in words or "none" in words)
    assert verdict_flags(directives(", ".join(reversed(words)))) == (noindex, nofollow)


@given(st.lists(_WORDS, min_size=1, max_size=4), st.sampled_from(["googlebot", "bingbot"]))
def test_another_agents_header_never_applies(words, other):
    assert header_directives(f"{other}: " + ", ".join(words), AGENT) == frozenset()
    assert header_directives(f"{AGENT}: " + ", ".join(words), AGENT) == set(words)


def page(**fields):
    return {"url": "https://example.com/a", "status": 200, "refusal": None, **fields}


def test_indexability_reasons():
    assert indexability_of(page()) == INDEXABLE
    assert indexability_of(page(flags=["noindex"])) == "noindex"
    assert indexability_of(page(flags=["canonical_elsewhere"], canonical="x")) == (
        "canonical_elsewhere"
    )
    assert indexability_of(page(redirected_to="https://example.com/b")) == "redirect"
    assert indexability_of(page(status=301)) == "redirect"
    assert indexability_of(page(status=404)) == "status"
    assert indexability_of(page(status=None, refusal={"class": "timeout"})) == "status"
    assert indexability_of(page(refusal={"class": "wall"})) == "refused"
    assert indexability_of(page(refusal={"class": "shell"})) == INDEXABLE
    assert indexability_of(page(flags=["junk"])) == "junk"
    assert indexability_of({"url": "u", "flags": ["robots_disallowed"]}) == "robots_disallowed"
    assert indexability_of({"url": "u", "sitemap": "s"}) == UNFETCHED
    assert indexability_of({"url": "u", "flags": ["sitemap_only"]}) == UNFETCHED


_FLAGS = st.lists(
    st.sampled_from(
        ["noindex", "canonical_elsewhere", "junk", "robots_disallowed", "meta_refresh", "x"]
    ),
    max_size=3,
)


@given(_FLAGS, st.sampled_from([None, 200, 301, 404, 500]))
def test_every_record_gets_one_verdict_of_the_closed_set(flags, status):
    verdict = indexability_of({"url": "u", "status": status, "flags": flags})
    assert verdict in VERDICTS
    # the first reason in REASONS' order wins
    if "junk" in flags:
        assert verdict == "junk"
    elif verdict in REASONS and status == 200 and "meta_refresh" not in flags:
        assert verdict in ("robots_disallowed", "noindex", "canonical_elsewhere")


def test_tally_counts_every_record_and_lists_sitemap_urls_not_indexable():
    tally = IndexTally(cap=2)
    records = [
        page(sitemap="s", flags=["noindex"]),
        page(sitemap="s", flags=["noindex"]),
        page(sitemap="s", status=301, redirected_to="b"),
        page(),  # linked, indexable
        page(flags=["noindex"]),  # not listed: not a sitemap problem
        {"url": "u", "sitemap": "s"},  # unfetched: no field
    ]
    assert tally.observe(records)
    assert [r.get("indexability") for r in records] == [
        "noindex",
        "noindex",
        "redirect",
        INDEXABLE,
        "noindex",
        None,
    ]
    assert tally.counts["noindex"] == 3 and tally.counts[UNFETCHED] == 1
    assert tally.listed == Counter(noindex=2, redirect=1)
    out = tally.as_dict()["listed_not_indexable"]
    assert out["count"] == 3 and out["listed"] == 2
    assert "3 sitemap URLs are not indexable: 2 noindex, 1 redirect" in tally.lines()[1]


def test_problem_line_words():
    line = problem_line(Counter(noindex=9, redirect=3, canonical_elsewhere=2), 14)
    assert line == "14 sitemap URLs are not indexable: 9 noindex, 3 redirect, 2 canonical elsewhere"


@given(
    st.datetimes(
        min_value=__import__("datetime").datetime(1970, 1, 1),
        timezones=st.just(__import__("datetime").UTC),
    ).map(lambda t: t.replace(microsecond=0))
)
def test_last_modified_reads_an_http_date_as_a_w3c_datetime(when):
    import email.utils

    header = email.utils.format_datetime(when, usegmt=True)
    assert last_modified(header) == when.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_last_modified_that_is_no_http_date_is_none():
    for header in (None, "", "yesterday", "Mon, 99 Foo 2024 25:61:00", "2024-01-01"):
        assert last_modified(header) is None


record = st.fixed_dictionaries(
    {"url": st.just("https://e.com/a"), "sitemap": st.sampled_from([None, "https://e.com/s.xml"])},
    optional={
        "status": st.sampled_from([None, 200, 404]),
        "flags": st.sampled_from([None, [], ["noindex"], ["redirected"]]),
        "refusal": st.sampled_from([None, "robots"]),
    },
)


@given(st.lists(record, max_size=30))
def test_a_batch_is_tallied_as_its_records_one_by_one(records):
    """The batch-wide test for a batch without anything to judge counts and marks exactly
    what ``judged`` record by record does."""
    tally = IndexTally()
    tally.observe([dict(r) for r in records])
    expected = Counter(dict.fromkeys(tally.counts, 0))
    for rec in records:
        expected[indexability_of(rec) if judged(rec) else "unfetched"] += 1
    assert tally.counts == expected
