"""``output/state_scope.py``: which URLs a re-run may call removed, by scope (pure)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from discovery_crawler.output.state_scope import (
    ALL,
    IN_SCOPE,
    NONE,
    RunScope,
    judge,
    listed_sitemap_unread,
)

SITE = "https://example.com"
ORDER = {NONE: 0, IN_SCOPE: 1, ALL: 2}

prefixes = st.lists(st.sampled_from(["/blog", "/orphan", "/a/b", "/shop"]), max_size=2)
scopes = st.builds(
    RunScope.of_run,
    mode=st.sampled_from(["auto", "sitemap", "links", "union"]),
    sources=st.sets(st.sampled_from(["sitemap", "link"]), min_size=1),
    include_paths=prefixes,
    exclude_paths=prefixes,
    profile=st.sampled_from(["default", "service", "polite"]),
)
paths = st.sampled_from(["/", "/blog/x/", "/orphan/y/", "/a/b/c", "/shop/", "/other/"])


def run_scope(mode="union", sources=("sitemap", "link"), include=(), exclude=(), profile="default"):
    return RunScope.of_run(mode, sources, include, exclude, profile)


def test_the_same_scope_judges_everything():
    same = judge(run_scope(), run_scope(), SITE)
    assert same.level == ALL and same.reasons == ()
    assert same.judges(f"{SITE}/anything/")


def test_union_then_auto_judges_nothing_and_says_why():
    auto = run_scope("auto", ("sitemap",))
    judgement = judge(run_scope("union"), auto, SITE)
    assert judgement.level == NONE and not judgement.judges(f"{SITE}/")
    assert judgement.reasons == (
        "mode union→auto (the link crawl did not run: links-only URLs not judged)",
    )
    # the other way round every URL could be found again
    assert judge(auto, run_scope("union"), SITE).level == ALL


def test_exclude_added_on_sitemaps_judges_inside_the_shared_scope():
    before = run_scope("sitemap", ("sitemap",))
    after = run_scope("sitemap", ("sitemap",), exclude=("/orphan/",))
    judgement = judge(before, after, SITE)
    assert judgement.level == IN_SCOPE
    assert judgement.judges(f"{SITE}/blog/x/")
    assert not judgement.judges(f"{SITE}/orphan/x/")
    assert judgement.reasons == (
        "paths changed (no path filter → exclude_paths=/orphan/): URLs out of this scope "
        "not judged",
    )


def test_paths_narrowed_with_a_link_crawl_judge_nothing():
    judgement = judge(run_scope(), run_scope(exclude=("/orphan",)), SITE)
    assert judgement.level == NONE
    assert "the link crawl does not pass through pages out of scope" in judgement.reasons[0]


def test_a_profile_change_judges_nothing():
    judgement = judge(run_scope(), run_scope(profile="service"), SITE)
    assert judgement.level == NONE and judgement.reasons == ("profile default→service",)


def test_a_state_without_a_scope_is_judged_as_before():
    assert judge(None, run_scope(), SITE).level == ALL
    assert judge(None, run_scope(include=("/blog",)), SITE).judges(f"{SITE}/blog/x/")
    assert not judge(None, run_scope(include=("/blog",)), SITE).judges(f"{SITE}/shop/")


def test_a_state_without_a_scope_is_judged_only_by_a_run_that_looked_both_ways():
    """Format 1 recorded no scope: its URLs may be links-only pages of a union run, which
    a run reading only sitemaps (or only links) never looked for."""
    for sources in (("sitemap",), ("link",)):
        judgement = judge(None, run_scope("sitemap", sources), SITE)
        assert judgement.level == NONE and not judgement.judges(f"{SITE}/l/0/")
        assert judgement.reasons == (
            "the previous state recorded no scope (format 1): only a run that reads both "
            "sitemaps and links judges its URLs",
        )


@given(scopes, scopes)
def test_all_only_when_current_covers_recorded(recorded, current):
    judgement = judge(recorded, current, SITE)
    if judgement.level == ALL:
        assert recorded.sources <= current.sources
        assert recorded.profiles == current.profiles
        assert current.path_pair == ((), ()) or recorded.paths == {current.path_pair}
    if not recorded.sources <= current.sources or recorded.profiles != current.profiles:
        assert judgement.level == NONE
    # it says why whenever it does not judge everything (same filters both times excepted)
    if judgement.level != ALL and recorded.paths != current.paths:
        assert judgement.reasons
    if recorded == current and current.path_pair == ((), ()):
        assert judgement.level == ALL and not judgement.reasons


@given(scopes, scopes, paths)
def test_a_judged_url_is_inside_the_current_paths(recorded, current, path):
    judgement = judge(recorded, current, SITE)
    url = SITE + path
    inside = judge(current, current, SITE).judges(url)  # the current scope's own filter
    if judgement.judges(url):
        assert inside
    if judgement.level == NONE:
        assert not judgement.judges(url)


@given(scopes, scopes, scopes)
def test_merge_is_never_judged_more_than_its_parts(a, b, current):
    merged = a.merge(b)
    assert merged == b.merge(a)
    level = ORDER[judge(merged, current, SITE).level]
    assert level <= ORDER[judge(a, current, SITE).level]
    assert level <= ORDER[judge(b, current, SITE).level]


@given(scopes)
def test_round_trip(scope):
    assert RunScope.from_dict(scope.as_dict()) == scope


@given(
    st.recursive(
        st.none() | st.integers() | st.text(max_size=5),
        lambda c: st.lists(c) | st.dictionaries(st.text(max_size=8), c),
    )
)
def test_any_recorded_value_reads_or_is_none(value):
    found = RunScope.from_dict(value)
    assert found is None or isinstance(found, RunScope)


def test_listed_sitemaps_not_read():
    assert listed_sitemap_unread("index", 404, "HTTP 404")  # the index still lists it
    assert listed_sitemap_unread("robots", 410, "HTTP 410")
    assert listed_sitemap_unread("index", None, "connection refused")
    assert listed_sitemap_unread("index", 503, "HTTP 503")
    assert not listed_sitemap_unread("conventional", 404, "HTTP 404")  # /sitemap.xml not there
    assert not listed_sitemap_unread("index", 200, None)
    assert not listed_sitemap_unread("index", None, "on another host (x); not fetched")
