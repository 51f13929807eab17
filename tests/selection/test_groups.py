"""Path groups and parent groups (``selection/groups.py``): exact counts, ``other`` last,
samples, confidence and reason, caps, batch independence, bounded memory."""

from __future__ import annotations

import tracemalloc
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from discovery_crawler.selection import groups as groups_module
from discovery_crawler.selection.groups import Groups, group_of_parent, groups_lines, segment_shape
from discovery_crawler.selection.parents import parent_path, split_many

SITE = "https://example.com"


def grouped(paths: list[str], batch: int = 1000, **kwargs: int) -> Groups:
    groups = Groups(**kwargs)
    urls = [SITE + p for p in paths]
    for i in range(0, len(urls), batch):
        groups.add_many(urls[i : i + batch])
    return groups


def by_name(groups: Groups) -> dict[str, dict]:
    return {g["name"]: g for g in groups.path_groups()}


def test_split_many_parents_ignore_trailing_slash_and_query():
    urls = [
        f"{SITE}/",
        f"{SITE}/about",
        f"{SITE}/about/",
        f"{SITE}/blog/post/",
        f"{SITE}/blog/post?x=/y/z",
    ]
    bare, parents = split_many(urls)
    assert bare[-1] == f"{SITE}/blog/post"
    assert [parent_path(p) for p in parents] == ["", "/", "/", "/blog/", "/blog/"]


def test_group_of_parent():
    assert group_of_parent("https://") == ""  # the root URL: the home group
    assert group_of_parent(f"{SITE}/") is None  # top-level URLs: their own segment
    assert group_of_parent(f"{SITE}/blog/2024/") == "blog"


def test_path_groups_count_by_first_segment_other_last():
    paths = (
        ["/blog/", "/blog/a/", "/blog/b/", "/blog/2024/c/"]
        + [f"/docs/p{i}/" for i in range(5)]
        + ["/about/", "/contact/", "/", "/contact/form/"]
    )
    groups = grouped(paths)
    listed = groups.path_groups()
    assert [g["name"] for g in listed] == ["docs", "blog", "other"]
    named = by_name(groups)
    assert named["blog"]["count"] == 4  # /blog/ itself is in its group
    assert named["docs"]["count"] == 5
    other = named["other"]
    assert other["count"] == 4  # about 1, contact 2, home 1
    assert other["merged_groups"] == 3
    assert sum(g["count"] for g in listed) == len(paths)
    assert named["blog"]["label"] == "/blog/" and named["blog"]["id"] == "path:/blog/"


def test_path_group_samples_are_the_first_ten_in_order():
    paths = [f"/blog/post-{i}/" for i in range(25)]
    groups = grouped(paths, batch=7)
    blog = by_name(groups)["blog"]
    assert blog["samples"] == [SITE + p for p in paths[:10]]
    assert blog["representative"] == SITE + paths[0]
    assert blog["count"] == 25


def test_query_does_not_make_a_group_but_samples_keep_the_url():
    groups = grouped(["/shop?page=1", "/shop/a?x=1", "/shop/b/"])
    shop = by_name(groups)["shop"]
    assert shop["count"] == 3
    assert shop["samples"][0] == f"{SITE}/shop?page=1"


def test_path_groups_cap_counts_the_rest_in_other():
    paths = [f"/s{i}/p{j}/" for i in range(10) for j in range(4)]
    groups = grouped(paths, path_groups_max=3)
    listed = groups.path_groups()
    assert [g["name"] for g in listed] == ["s0", "s1", "s2", "other"]
    assert listed[-1]["count"] == 28 and listed[-1]["untracked_urls"] == 28
    assert sum(g["count"] for g in listed) == 40


def test_parent_groups_confidence_and_reason():
    paths = (
        [f"/blog/2024/post-{i}-title/" for i in range(6)]
        + ["/products/123/", "/products/red-shoe/", "/products/abcdef12/", "/products/x%20y/"]
        + ["/team/ann/", "/team/bob/"]
    )
    groups = grouped(paths)
    parents = {g["label"]: g for g in groups.parent_groups()}
    blog = parents["/blog/2024/"]
    assert blog["confidence"] == "high"
    assert blog["count"] == 6
    assert blog["shape"] == "/blog/2024/{slug}/"
    assert blog["representative"] == f"{SITE}/blog/2024/post-0-title/"
    assert blog["id"] == "parent:/blog/2024/"
    assert "6 siblings under /blog/2024/ share the shape /blog/2024/{slug}/" in blog["reason"]
    products = parents["/products/"]
    assert products["confidence"] == "medium"
    assert "mixed shapes" in products["reason"]
    team = parents["/team/"]
    assert team["confidence"] == "low" and team["reason"] == "only 2 URLs under /team/"
    assert next(g["label"] for g in groups.parent_groups()) == "/blog/2024/"  # biggest first


def test_top_level_pages_form_the_root_parent_group_and_home_has_none():
    groups = grouped(["/", "/about/", "/contact/", "/pricing/"])
    parents = groups.parent_groups()
    assert [g["label"] for g in parents] == ["/"]
    assert parents[0]["count"] == 3


def test_parent_groups_cap_counts_untracked():
    paths = [f"/c{i}/item/" for i in range(50)]
    groups = grouped(paths, parent_groups_max=10)
    data = groups.as_dict()
    assert data["parent_groups_tracked"] == 10
    assert data["parent_groups_untracked_urls"] == 40
    assert data["urls"] == 50


def test_as_dict_lists_at_most_limit_parent_groups():
    groups = grouped([f"/c{i}/item/" for i in range(30)])
    data = groups.as_dict(limit=5)
    assert data["parent_groups_listed"] == 5 and data["parent_groups_tracked"] == 30


def test_segment_shapes():
    cases = {
        "post-12-hello/": "{slug}/",
        "hello/": "{slug}/",
        "12345/": "{n}/",
        "2024-05-01": "{date}",
        "20240501": "{date}",
        "3f2a9c1be4d5": "{id}",
        "123e4567-e89b-12d3-a456-426614174000": "{id}",
        "report.PDF": "{slug}.pdf",
        "page.html": "{slug}.html",
        "v1.2": "{slug}",
        "Hello World": "{other}",
        "%E3%83%86%E3%82%B9%E3%83%88/": "{slug}/",
        "Hello-World": "{slug}",
        "": "{empty}",
    }
    assert {k: segment_shape(k) for k in cases} == cases


def _shape_by_patterns(segment):
    """``segment_shape`` as first written, every pattern tried in turn: the definition."""
    slash = "/" if segment.endswith("/") else ""
    text = segment.rstrip("/")
    ext = ""
    found = groups_module._EXTENSION.fullmatch(text)
    if found is not None and not found.group(2)[1:].isdigit():
        text, ext = found.group(1), found.group(2).lower()
    if not text:
        shape = "{empty}"
    elif text.isdigit() and not groups_module._DATE.fullmatch(text):
        shape = "{n}"
    elif groups_module._DATE.fullmatch(text):
        shape = "{date}"
    elif groups_module._ID.fullmatch(text.lower()):
        shape = "{id}"
    elif groups_module._SLUG.fullmatch(text.lower()):
        shape = "{slug}"
    else:
        shape = "{other}"
    return shape + ext + slash


_SHAPE_TEXT = st.text(alphabet="ab0129-_.%~+/fFKéİ²٣ \u212a", max_size=24)
_SHAPE_DATES = st.from_regex(
    r"((19|20)\d{6}|\d{4}-\d{2}(-\d{2})?)(\.[a-z]{1,4})?/?", fullmatch=True
)


@settings(max_examples=2000, deadline=None)
@given(
    st.one_of(
        _SHAPE_TEXT,
        _SHAPE_DATES,
        st.text(max_size=16),
        st.from_regex(r"[a-z0-9]+(-[a-z0-9]+)*/?", fullmatch=True),
    )
)
def test_segment_shape_is_the_patterns_tried_in_turn(segment):
    """The string-method shortcuts (a slug told without its pattern, a pattern tried only
    where its first character could match) give the patterns' shape, Unicode included."""
    assert segment_shape(segment) == _shape_by_patterns(segment)


def test_summary_line():
    paths = (
        [f"/blog/{i}/" for i in range(120)]
        + [f"/docs/{i}/" for i in range(45)]
        + ["/a/", "/b/", "/c/", "/d/"]
    )
    assert grouped(paths).summary_line() == "Groups (3): blog 120, docs 45, other 4"
    many = [f"/s{n}/{i}/" for n in range(7) for i in range(3 + n)]
    line = grouped([*many, "/x/"]).summary_line(shown=2)
    assert line == "Groups (8): s6 9, s5 8, … other 1"


def test_groups_lines_from_a_record():
    class Record:
        groups = grouped(["/blog/a/", "/blog/b/", "/blog/c/"])

    assert groups_lines(Record()) == ["Groups (1): blog 3"]
    assert groups_lines(object()) == []


# -- properties ---------------------------------------------------------------------------
segment = st.sampled_from(["a", "b", "blog", "2024", "x-y", "12"])
path = st.lists(segment, max_size=4).map(lambda s: "/" + "".join(p + "/" for p in s))


def reference(paths: list[str]) -> Counter[str]:
    return Counter(p.strip("/").partition("/")[0] for p in paths)


@settings(max_examples=150, deadline=None)
@given(st.lists(path, max_size=60), st.integers(1, 17))
def test_counts_are_exact_and_independent_of_batching(paths, batch):
    one = grouped(paths, batch=1000)
    many = grouped(paths, batch=batch)
    assert one.as_dict() == many.as_dict()
    ref = reference(paths)
    listed = one.path_groups()
    assert sum(g["count"] for g in listed) == len(paths)
    for g in listed:
        if g["id"] != "other":
            assert g["count"] == ref["" if g["name"] == "/" else g["name"]] >= 3
    assert all(len(g["samples"]) <= 10 for g in listed)
    if listed and any(g["id"] == "other" for g in listed):
        assert listed[-1]["id"] == "other"
    parents = Counter(p.rstrip("/").rpartition("/")[0] + "/" for p in paths if p != "/")
    assert {g["label"]: g["count"] for g in one.parent_groups()} == dict(parents)


@settings(max_examples=150, deadline=None)
@given(st.lists(path, max_size=60), st.integers(1, 17), st.integers(1, 6), st.integers(1, 3))
def test_a_full_parent_table_counts_its_parents_and_the_rest_as_untracked(
    paths, batch, cap, samples
):
    """Past ``parent_groups_max`` the parents already in the table keep counting (and
    sampling, first members first) and every other URL is untracked: none lost."""
    groups = grouped(paths, batch=batch, parent_groups_max=cap, samples=samples)
    urls = [SITE + p for p in paths]
    members = [u for u in urls if u != SITE + "/"]
    assert len(groups.parents) <= cap
    tracked = sum(g.count for g in groups.parents.values())
    assert tracked + groups.parent_untracked == len(members)
    for parent, group in groups.parents.items():
        under = [u for u in members if u.rstrip("/").rpartition("/")[0] + "/" == parent]
        assert group.count == len(under)
        assert group.representative == under[0]
        assert group.sampled == sum(group.shapes.values()) == min(samples, len(under))


# -- memory -------------------------------------------------------------------------------
def feed(groups: Groups, make, n: int, batch: int = 1000) -> int:
    tracemalloc.start()
    try:
        for start in range(0, n, batch):
            groups.add_many(make(start, batch))
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_bounded_with_a_million_urls_in_few_groups():
    names = ("blog", "docs", "news", "shop")

    def make(start: int, n: int) -> list[str]:
        return [f"{SITE}/{names[i % 4]}/{i % 9}/post-{i}/" for i in range(start, start + n)]

    groups = Groups()
    peak = feed(groups, make, 1_000_000)
    assert peak < 20_000_000, peak
    assert {g["name"]: g["count"] for g in groups.path_groups()} == dict.fromkeys(names, 250_000)


def test_memory_bounded_by_the_caps_with_a_million_distinct_parents():
    def make(start: int, n: int) -> list[str]:
        return [f"{SITE}/c{i}/item/" for i in range(start, start + n)]

    groups = Groups()
    peak = feed(groups, make, 1_000_000)
    assert peak < 20_000_000, peak
    data = groups.as_dict()
    assert data["parent_groups_tracked"] == 5_000
    assert data["parent_groups_untracked_urls"] == 995_000
    assert data["path_groups"][-1]["count"] == 1_000_000  # all in other (1 URL each)
