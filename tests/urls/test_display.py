"""``urls.display.readable``: the IRI a person reads (issue 37.6)."""

from __future__ import annotations

from urllib.parse import quote, unquote

from hypothesis import given
from hypothesis import strategies as st

from discovery_crawler.output.tree_text import path_tree_lines
from discovery_crawler.urls.display import readable


def test_an_arabic_path_reads_as_arabic_and_ascii_escapes_stay():
    assert readable("https://x.com/%D8%AA%D9%82%D9%86%D9%8A%D8%A9/") == "https://x.com/تقنية/"
    assert readable("/a%2Fb%20c%3F") == "/a%2Fb%20c%3F"
    assert readable("/bad%C3%28") == "/bad%C3%28"  # not UTF-8: as written
    assert readable("/plain") == "/plain"


@given(st.text(min_size=1, max_size=12))
def test_decoding_shows_non_ascii_letters_and_never_changes_what_the_url_says(text):
    encoded = quote(text, safe="")
    shown = readable(encoded)
    assert unquote(shown) == text
    for char in text:
        if ord(char) >= 128 and char.isprintable():
            assert char in shown


def test_the_text_path_tree_shows_decoded_segments():
    node = {"name": "%D8%AA%D9%82", "path": "/%D8%AA%D9%82", "count": 3}
    run = {"tree": {"urls": 3, "nodes": 2, "root": {"name": "/", "count": 3, "children": [node]}}}
    text = "\n".join(path_tree_lines(run))
    assert "تق" in text and "%D8" not in text
