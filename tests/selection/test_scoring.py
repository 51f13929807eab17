"""Tests for ``selection/scoring.py`` and ``selection/checklist.py``: every rule of the SPEC §8
table with a hit and a near miss, the page types, and the batch fast path against the
reference on random URLs (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discovery_crawler.selection import scoring
from discovery_crawler.selection.checklist import page_type
from discovery_crawler.selection.paths import keyword_matcher, path_facts
from discovery_crawler.selection.scoring import Rater, priority_points, score_record, score_url

SITE = "https://example.com"


def points(path: str, rule: str, **kw) -> int:
    """The points ``rule`` gave ``path`` (0 when it did not fire)."""
    return dict(score_url(SITE + path, **kw).breakdown).get(rule, 0)


def test_about_scores_7_and_outranks_markers():
    """SPEC §8, literally: /about scores 7 (keyword 5 + shallow 2) and outranks /2/, /new/,
    /feed/."""
    about = score_url(SITE + "/about")
    assert about.total == 7
    assert about.breakdown == (("pillar_keyword", 5), ("shallow_path", 2))
    for path in ("/2/", "/new/", "/feed/"):
        assert score_url(SITE + path).total < about.total, path


@pytest.mark.parametrize(
    ("path", "rule", "hit"),
    [
        # home +10
        ("/", "home", 10),
        ("/index", "home", 0),
        # IA-pillar keyword in the first segment +5: tokens of the first segment
        ("/about", "pillar_keyword", 5),
        ("/About-Us/", "pillar_keyword", 5),
        ("/our_team", "pillar_keyword", 5),
        ("/docs/getting-started", "pillar_keyword", 5),
        ("/aboutface", "pillar_keyword", 0),  # not a token
        ("/product", "pillar_keyword", 0),  # the list says products
        ("/x/about", "pillar_keyword", 0),  # not the first segment
        # shallow path: 1 segment +2, 2 segments +1, 3 none
        ("/a", "shallow_path", 2),
        ("/a/", "shallow_path", 2),
        ("/a/b", "shallow_path", 1),
        ("/a/b/c", "shallow_path", 0),
        ("/", "shallow_path", 0),
        # extra depth: −1 per segment beyond 3
        ("/a/b/c", "extra_depth", 0),
        ("/a/b/c/d", "extra_depth", -1),
        ("/a/b/c/d/e/f", "extra_depth", -3),
        ("/a//b/c/d", "extra_depth", -1),  # empty segments do not count
        # date-like archive −3
        ("/2023/06/", "date_archive", -3),
        ("/blog/2023/06/23/launch/", "date_archive", -3),
        ("/2023-06-23/", "date_archive", -3),
        ("/news/2023-06/", "date_archive", -3),
        ("/2023/", "date_archive", 0),  # a year alone
        ("/2023/13/", "date_archive", 0),  # no month 13
        ("/year-2024/", "date_archive", 0),
        ("/20230623/", "date_archive", 0),
        ("/1850/06/", "date_archive", 0),
        # version/test marker −4 (once per URL)
        ("/v2/", "version_marker", -4),
        ("/docs/v1.2/api", "version_marker", -4),
        ("/new/", "version_marker", -4),
        ("/old/", "version_marker", -4),
        ("/beta/", "version_marker", -4),
        ("/2/", "version_marker", -4),
        ("/feed/", "version_marker", -4),
        ("/new/v2/3/", "version_marker", -4),
        ("/news/", "version_marker", 0),
        ("/new-york/", "version_marker", 0),
        ("/feedback/", "version_marker", 0),
        ("/v2x/", "version_marker", 0),
        ("/2023/", "version_marker", 0),  # four digits: a year, not a marker
        ("/2023/06/", "version_marker", 0),  # the month is part of the date
    ],
)
def test_rule_table(path, rule, hit):
    assert points(path, rule) == hit


@pytest.mark.parametrize(
    ("priority", "expected"),
    [
        (1.0, 4),
        (0.8, 3),
        (0.5, 2),
        (0.1, 0),
        (0.0, 0),
        ("0.75", 3),
        (1, 4),
        (1.5, 0),
        (-0.5, 0),
        ("high", 0),
        (None, 0),
        (float("nan"), 0),
        (True, 0),
    ],
)
def test_sitemap_priority(priority, expected):
    assert priority_points(priority) == expected
    assert points("/a/b/c", "sitemap_priority", priority=priority) == expected


def test_auth_walled():
    assert points("/my-account/", "auth_walled", flags=["requires_auth"]) == -10
    assert points("/my-account/", "auth_walled", flags=[]) == 0
    assert points("/my-account/", "auth_walled", flags=["other"]) == 0


def test_checklist_hit_types():
    """+8 for article, listing, form, data, subsection; home and pillar score through
    their own rules."""
    assert points("/contact", "checklist") == 8  # form
    assert points("/blog/", "checklist") == 8  # listing
    assert points("/how-we-ship-software/", "checklist") == 8  # article
    assert points("/data/", "checklist") == 8
    assert points("/services/consulting/", "checklist") == 8  # subsection
    assert points("/", "checklist") == 0  # home
    assert points("/about", "checklist") == 0  # pillar
    assert points("/a/b/c", "checklist") == 0  # generic page


def test_breakdown_sums_to_total_and_keeps_table_order():
    s = score_url(SITE + "/blog/2023/06/v2/", priority=1.0, flags=["requires_auth"])
    assert s.total == sum(p for _, p in s.breakdown)
    rules = [r for r, _ in s.breakdown]
    order = [
        "home",
        "pillar_keyword",
        "sitemap_priority",
        "shallow_path",
        "extra_depth",
        "date_archive",
        "version_marker",
        "auth_walled",
        "checklist",
    ]
    assert rules == sorted(rules, key=order.index)


def test_keywords_extendable():
    """SELECTION_PILLAR_KEYWORDS adds localized keywords (hyphens allowed)."""
    kw = keyword_matcher(["about", "chi-siamo"])
    assert score_url(SITE + "/chi-siamo/", keywords=kw).total == 7
    assert score_url(SITE + "/chi-siamo/").total == 2
    assert path_facts("/chi-siamo-noi", kw).keyword == "chi-siamo"


@pytest.mark.parametrize(
    ("path", "expected", "kw"),
    [
        ("/", "home", {}),
        ("/contact-us/", "form", {}),
        ("/get-involved/donate", "form", {}),
        ("/sign-up", "form", {}),
        ("/newsletter", "form", {}),
        ("/contacts-list/x/y", "page", {}),  # "contacts" is not "contact"
        ("/welcome", "form", {"title": "Contact us"}),
        ("/open-data/", "data", {}),
        ("/covid/dashboard/", "data", {}),
        ("/database/", "pillar", {}),  # not the token "data"
        ("/blog/", "listing", {}),
        ("/blog/tag/python/", "listing", {}),
        ("/2023/06/", "listing", {}),
        ("/x/y/z", "listing", {"links": 120}),
        ("/x/y/z", "page", {"links": 12}),
        ("/whatever", "listing", {"changefreq": "daily"}),
        ("/a/b/c", "page", {"changefreq": "daily"}),  # too deep for the hint
        ("/about", "pillar", {}),
        ("/pricing/", "pillar", {}),
        ("/community/", "pillar", {}),  # a top section without a keyword
        ("/privacy/", "page", {}),  # a utility page is no pillar
        ("/2023/", "page", {}),
        ("/how-we-ship-software/", "article", {}),
        ("/blog/first-post/", "article", {}),
        ("/2023/06/launch/", "article", {}),
        ("/about/team/", "subsection", {}),
        ("/a/b/c", "page", {}),
        ("/new/", "page", {}),
    ],
)
def test_page_types(path, expected, kw):
    assert page_type(path, **kw).type == expected


def test_pillar_slots_one_per_keyword():
    assert page_type("/about").slot == "pillar:about"
    assert page_type("/about-us").slot == "pillar:about"
    assert page_type("/pricing").slot == "pillar:pricing"
    assert page_type("/community").slot == "pillar:section"
    assert page_type("/blog/x/").slot == "article"
    assert page_type("/a/b/c").slot is None


# -- the fast path agrees with the reference -------------------------------------------------

SEGMENT = st.one_of(
    st.sampled_from(
        [
            "about",
            "about-us",
            "blog",
            "news",
            "2023",
            "06",
            "23",
            "2023-06-23",
            "v2",
            "new",
            "feed",
            "2",
            "tag",
            "contact",
            "sign-up",
            "data",
            "privacy",
            "docs",
            "Docs",
            "how-we-ship-software",
            "post_one",
            "a.html",
            "article-100001",
            "team",
            "x",
            "caf%c3%a9-cr%c3%a8me",
            "%e6%97%a5%e6%9c%ac",
            "%C3%BCber-uns",
            "a%2fb",
            "sign%2dup",
            "v%32",
        ]
    ),
    st.from_regex(r"[a-zA-Z0-9][a-zA-Z0-9._-]{0,15}", fullmatch=True),
)
RECORD = st.fixed_dictionaries(
    {
        "path": st.lists(SEGMENT, max_size=6),
        "slash": st.booleans(),
        "query": st.sampled_from(["", "?id=7", "?a=b/c"]),
        "priority": st.none() | st.sampled_from([0.0, 0.5, 0.8, 1.0, 0.33, 2.0]) | st.just("x"),
        "changefreq": st.none() | st.sampled_from(["daily", "weekly", "Hourly"]),
        "flags": st.none() | st.just(["requires_auth"]),
        "title": st.none() | st.sampled_from(["Contact us", "Blog", "Hello"]),
        "links": st.none() | st.sampled_from([3, 80]),
    }
)


def make(r: dict) -> dict:
    path = "/" + "/".join(r["path"]) + ("/" if r["slash"] and r["path"] else "")
    rec = {
        "url": SITE + path + r["query"],
        "priority": r["priority"],
        "changefreq": r["changefreq"],
        "flags": r["flags"],
        "lastmod": None,
    }
    if r["title"] is not None:
        rec["title"] = r["title"]
    if r["links"] is not None:
        rec["links"] = r["links"]
    return rec


@settings(max_examples=1500, deadline=None)
@given(st.lists(RECORD, min_size=1, max_size=20), st.booleans())
def test_fast_path_equals_reference(raw, extended):
    """``Rater.rate_many`` gives every record the reference's total, type and slot."""
    keywords = ("about", "team", "docs", "blog", "chi-siamo") if extended else None
    rater = Rater(keywords)
    records = [make(r) for r in raw]
    totals, types, slots = rater.rate_many(records)
    for rec, total, kind, slot in zip(records, totals, types, slots, strict=True):
        ref = score_record(rec, rater.keywords)
        assert (total, kind, slot) == (ref.total, ref.type, ref.slot), rec["url"]
    # and again, with the prefix cache warm
    assert rater.rate_many(records) == (totals, types, slots)


def test_rate_many_reads_a_title_whatever_the_batch_promises():
    """A sitemap batch (``fetched=False``) may hold a fetched page's record in union mode:
    where the full rules run, they read its title like ``score_record`` does."""
    rec = {
        "url": "https://example.com/uber~uns",  # not plain: the full rules
        "priority": None,
        "changefreq": None,
        "title": "Contact us",
    }
    scored = score_record(rec)
    assert Rater().rate_many([rec], fetched=False) == ([scored.total], [scored.type], [scored.slot])
    untitled = score_record({**rec, "title": None})
    assert (scored.type, scored.total) != (untitled.type, untitled.total)


PLAIN_SEGMENT = st.sampled_from(
    [
        *("blog", "docs", "section-11", "article-100001", "how-we-ship-software", "2024"),
        *("06", "team", "a", "news", "category", "tag", "page-2", "p-1", "v2", "x9", "z-z-z"),
        *("contact-us", "sign-up", "login"),
    ]
) | st.from_regex(r"[a-z][a-z0-9]{0,6}(-[a-z0-9]{1,4}){0,3}", fullmatch=True)
BATCH_ROW = st.fixed_dictionaries(
    {
        "path": st.lists(PLAIN_SEGMENT | SEGMENT, min_size=0, max_size=5),
        "slash": st.booleans(),
        "priority": st.none() | st.sampled_from([0.0, 0.5, 0.8, 1.0, 0.33, 2.0]) | st.just("x"),
        "changefreq": st.none() | st.sampled_from(["daily", "weekly", "Hourly", "always"]),
    },
    optional={
        "query": st.sampled_from(["?utm_id=1&page=2", "?a=b/c", "?x=%2F"]),
        "origin": st.just("https://other.example"),
    },
)


def _batch_urls(rows: list[dict], origin: str = SITE) -> list[str]:
    return [
        (r.get("origin") or origin)
        + "/"
        + "/".join(r["path"])
        + ("/" if r["slash"] and r["path"] else "")
        + r.get("query", "")
        for r in rows
    ]


@settings(max_examples=1500, deadline=None)
@given(st.lists(BATCH_ROW, min_size=16, max_size=60), st.booleans())
def test_whole_batch_rating_equals_the_reference(rows, extended):
    """A sitemap batch (one origin, no query) rated as a whole gives each URL the total,
    type and slot of the reference rules, whatever its last segments hold."""
    keywords = ("about", "team", "docs", "blog", "chi-siamo") if extended else None
    rater = Rater(keywords)
    urls = _batch_urls(rows)
    priorities = [r["priority"] for r in rows]
    changefreqs = [r["changefreq"] for r in rows]
    rated = rater.rate_columns(urls, priorities, changefreqs)
    for j, url in enumerate(urls):
        rec = {"url": url, "priority": priorities[j], "changefreq": changefreqs[j]}
        ref = score_record(rec, rater.keywords)
        assert (rated[0][j], rated[1][j], rated[2][j]) == (ref.total, ref.type, ref.slot), url
    assert rater._rate_each(urls, priorities, changefreqs, None, None, False) == rated


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.lists(PLAIN_SEGMENT, min_size=2, max_size=4).filter(lambda p: p[-1] != "v2"),
        min_size=16,
        max_size=40,
    )
)
def test_a_plain_batch_is_rated_as_a_whole(paths):
    """Plain lowercase paths of two segments or more take the whole-batch path."""
    urls = [SITE + "/" + "/".join(p) + "/" for p in paths]
    priorities = [0.5] * len(urls)
    changefreqs = ["weekly"] * len(urls)
    rater = Rater()
    bulk = rater._rate_bulk(urls, priorities, changefreqs, None, False)
    assert bulk is not None
    assert bulk == rater._rate_each(urls, priorities, changefreqs, None, None, False)


def test_batches_the_whole_batch_path_leaves_to_the_per_url_rules():
    """An index file or an empty segment: rated one by one; a query (the rules read the
    path) or a few URLs of another origin (rated apart): as a whole. The same either way."""
    rater = Rater()
    base = [f"{SITE}/docs/page-{i}/" for i in range(20)]
    args = ([None] * 20, [None] * 20, None, False)
    assert rater._rate_bulk(base, *args) is not None
    for odd in (
        f"{SITE}/docs/?p=1",
        "https://other.example/docs/x/",
        f"{SITE}/docs/index.html",
        f"{SITE}/docs//x/",
    ):
        urls = [*base[:-1], odd]
        assert (rater._rate_bulk(urls, *args) is None) == ("index" in odd or "//x" in odd), odd
        assert rater.rate_columns(urls, [None] * 20, [None] * 20) == rater._rate_each(
            urls, *args[:2], None, None, False
        )


def test_the_caches_start_over_between_batches_and_the_totals_stay_the_reference(monkeypatch):
    """A site with very many distinct prefix segments (ids in the middle of paths) fills
    the numbered states: they start over between batches, never in the middle of one (a
    state's number from before would name nothing), and every total is ``score_url``'s;
    a prefix of hundreds of segments is folded without recursion."""
    monkeypatch.setattr(scoring, "CACHE_LIMIT", 40)
    monkeypatch.setattr(scoring, "PREFIX_CACHE_LIMIT", 40)
    deep = ["https://h/" + "/".join(f"s{j}" for j in range(300)) + f"/p{i}" for i in range(50)]
    urls = [f"https://h/u{i}/x{i * 7919 % 10007}/y{i % 9}/post-a-b" for i in range(4000)] + deep
    rater = scoring.Rater()
    for start in range(0, len(urls), 100):
        batch = urls[start : start + 100]
        totals, _, _ = rater.rate_columns(batch, [None] * len(batch), [None] * len(batch))
        assert totals == [scoring.score_url(u).total for u in batch]
    assert rater._generation > 1


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["questions", "2024", "blog", "v2", "p", "new", "archive"]),
            st.one_of(
                st.integers(min_value=0, max_value=10**9),
                st.sampled_from([12345, 2024, 100000, 99999, 7]),
            ),
            st.sampled_from(["how-to-fix", "list", "a", "2023", "06", "index.html", ""]),
        ),
        min_size=1,
        max_size=60,
    ),
    st.sampled_from([None, ("docs",), ("12345",), ("100000",)]),
)
def test_ids_in_folders_are_rated_as_by_the_plain_rules(paths, keywords):
    """A folder a URL (``/questions/<id>/<slug>``): the ids' steps are shared (one id's
    facts stand for any other's of as many digits or more), and every total, type and slot
    is the one the per-URL rules give, also when a keyword is a number (nothing shared)."""
    urls = [f"https://e.com/{top}/{i}/{last}" for top, i, last in paths]
    urls += [f"https://e.com/{top}/{i}/{i % 1000}/" for top, i, _ in paths]
    urls += [f"https://e.com/{i}/{last}" for _, i, last in paths]  # an id first: keyword?
    priorities, changefreqs = ["0.5"] * len(urls), ["weekly"] * len(urls)
    shared = Rater(keywords).rate_columns(urls, priorities, changefreqs)
    plain = Rater(keywords)
    plain._ids_alike = False  # every id worked out as itself
    each = plain._rate_each(urls, priorities, changefreqs, None, None, False)
    assert shared == each
    assert shared == plain.rate_columns(urls, priorities, changefreqs)
