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


CORPUS = {
    "/%D8%AA%D9%82%D9%86%D9%8A%D8%A9/": "/تقنية/",  # Arabic
    "/%E6%97%A5%E6%9C%AC%E8%AA%9E": "/日本語",  # CJK
    "/%F0%9F%98%80-smile": "/😀-smile",  # emoji (4 bytes)
    "/a%2Fb": "/a%2Fb",  # an escaped slash stays: decoded it would be another path
    "/100%25-%D8%AA": "/100%25-ت",  # an escaped % stays
    "/bad%C3%28-%FF%FE": "/bad%C3%28-%FF%FE",  # not UTF-8: as written
    "/%E2%80%AE-rtl": "/%E2%80%AE-rtl",  # an invisible bidi override stays escaped
    "/%D8": "/%D8",  # a sequence cut short
}


def test_the_corpus_reads_as_a_person_reads_it():
    for encoded, shown in CORPUS.items():
        assert readable(encoded) == shown, encoded


@given(st.text(max_size=20))
def test_reading_twice_reads_the_same(text):
    """Every view may pass text through ``readable`` once more (a summary line holding a
    path already shown): decoded letters are never ``%``, so nothing new decodes."""
    once = readable(quote(text, safe="/%"))
    assert readable(once) == once


def test_the_treemap_gets_the_same_names_as_every_other_view():
    """The treemap's script decodes nothing: its JSON carries ``readable``'s names (``n``,
    ``d``) beside the recorded path (``p``), so it cannot differ from the tables."""
    from discovery_crawler.output.report_treemap import JS, shape_tree

    children = [{"name": e.strip("/"), "path": e, "count": 1} for e in CORPUS]
    shaped = shape_tree({"root": {"name": "/", "count": len(children), "children": children}})
    assert shaped is not None
    for node, encoded in zip(shaped["root"]["ch"], CORPUS, strict=True):
        assert node["p"] == encoded
        assert node["d"] == CORPUS[encoded]
        assert node["n"] == CORPUS[encoded].strip("/")
    assert "decodeURI" not in JS


def test_report_links_show_the_iri_and_keep_the_encoded_href():
    from discovery_crawler.output.report import link, shown

    html = link("https://x.com/%D8%AA%D9%82/a%2Fb")
    assert html == (
        '<a href="https://x.com/%D8%AA%D9%82/a%2Fb" rel="noopener noreferrer nofollow">'
        "https://x.com/تق/a%2Fb</a>"
    )
    assert shown("<%D8%AA>") == "&lt;ت&gt;"
