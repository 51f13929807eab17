"""SPEC §8 on real sites (issue 5 point 6): the directory-index rule that lets the default
selection of a static export cover three templates (that crawl:
``tests/e2e/test_discover_selection.py``) (``/x/index.html`` is the page ``/x/``)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from discovery_crawler.selection.paths import INDEX_FILES, path_facts
from discovery_crawler.selection.scoring import Rater, score_url
from tests.conftest import realdata

# site → (origins rewritten to the loopback server, page types its kept five must include)
SITES = {
    # MkDocs: no form page anywhere in it.
    "23people-handbook-mkdocs": (["https://23people.io"], {"home", "article", "listing"}),
    # Simply Static export: every URL ends in index.html; /contact-us/ has a <form>.
    "360muslimexperts": (
        ["https://360muslimexperts.com"],
        {"home", "article", "listing", "form"},
    ),
    # WordPress + Yoast: the sitemap lists posts and three pages, none of them a form.
    "arhackintosh-wordpress": (
        [
            "https://xn--mgbg4a8cpdl.com",
            "https://%D9%87%D8%A7%D9%83%D9%86%D8%AA%D9%88%D8%B4.com",
        ],
        {"home", "article", "listing"},
    ),
    # Hugo multilingual: root-relative sitemaps, no contact page in them.
    "ayatoashihara-myblog_multi": ([], {"home", "article", "listing"}),
}


# -- the directory-index rule ------------------------------------------------------------------


def test_index_file_is_not_a_segment():
    assert path_facts("/index.html").segments == ()
    assert path_facts("/blog/index.html") == path_facts("/blog/")
    assert path_facts("/about-us/INDEX.HTM").segments == ("about-us",)
    assert path_facts("/a/default.aspx").segments == ("a",)
    # only as the last segment, and only the exact file names
    assert path_facts("/index.html/x/").segments == ("index.html", "x")
    assert path_facts("/blog/myindex.html").segments == ("blog", "myindex.html")
    assert path_facts("/blog/index.json").segments == ("blog", "index.json")


def test_index_file_pages_take_their_directory_type():
    site = "https://example.com"
    assert score_url(f"{site}/index.html").type == "home"
    assert score_url(f"{site}/blog/index.html").type == "listing"
    assert score_url(f"{site}/contact-us/index.html").type == "form"
    assert score_url(f"{site}/how-we-ship-software/index.html").type == "article"
    assert score_url(f"{site}/index.php?page_id=2").type == "home"


segment = st.from_regex(r"[a-z0-9][a-z0-9-]{0,12}", fullmatch=True)


@given(st.lists(segment, max_size=5), st.sampled_from(sorted(INDEX_FILES)))
def test_fast_path_agrees_with_the_reference_on_index_files(segments, index_file):
    """``Rater`` (the batch fast path) and ``score_url`` agree, and ``/x/index.html``
    scores and types exactly as ``/x/``."""
    base = "https://example.com/" + "".join(f"{s}/" for s in segments)
    urls = [base, base + index_file]
    records = [{"url": u, "priority": None, "changefreq": None, "flags": None} for u in urls]
    totals, types, slots = Rater().rate_many(records, fetched=False)
    reference = [score_url(u) for u in urls]
    assert totals == [r.total for r in reference]
    assert types == [r.type for r in reference]
    assert slots == [r.slot for r in reference]
    assert (totals[0], types[0], slots[0]) == (totals[1], types[1], slots[1])


def test_unpacked_site_paths_exist():
    """The MANIFEST's four sites are the ones tested here."""
    sites = realdata("sites")
    assert {p.name for p in Path(sites).iterdir() if p.is_dir()} >= set(SITES)
