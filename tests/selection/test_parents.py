"""``selection/parents.py``: path depths — the batch count (C-level on plain URLs) agrees
with the definition URL by URL, whatever the URLs."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from discovery_crawler.selection.parents import count_path_depths, path_depth

segments = st.lists(st.sampled_from(["a", "blog", "p-1", "", "x.html", "ü"]), max_size=6)
urls = st.builds(
    lambda scheme, host, segs, slash, query, fragment: (
        f"{scheme}://{host}{'/' if segs or slash else ''}{'/'.join(segs)}"
        f"{'/' if slash and segs else ''}{query}{fragment}"
    ),
    st.sampled_from(["http", "https"]),
    st.sampled_from(["h", "example.com", "example.com:8080", "[::1]"]),
    segments,
    st.booleans(),
    st.sampled_from(["", "?q=1", "?next=/a/b/", "?"]),
    st.sampled_from(["", "#top", "#/x/y"]),
)


def test_path_depth_counts_non_empty_segments_only():
    assert path_depth("https://example.com/") == 0
    assert path_depth("https://example.com") == 0
    assert path_depth("https://example.com/a") == path_depth("https://example.com/a/") == 1
    assert path_depth("http://h:80/a/b/c.html") == 3
    assert path_depth("https://h/a//b/?next=/x/y/#/z") == 2
    assert path_depth("https://h?next=/x/y/") == path_depth("https://h#/x") == 0


@given(st.lists(urls, max_size=30))
def test_the_batch_count_is_the_definitions(batch):
    assert count_path_depths(batch) == Counter(map(path_depth, batch))


@given(st.lists(urls.filter(lambda u: "?" not in u and "#" not in u), max_size=30))
def test_the_plain_path_agrees_too(batch):
    assert count_path_depths(batch) == Counter(map(path_depth, batch))
