"""What a run did not read (``unread.py``): the sources that failed after their retries
make it incomplete; the site's own answers (a 404, a wall) do not."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from discovery_crawler.refusals import REFUSAL_CLASSES
from discovery_crawler.sitemaps.attempts import SitemapAttempt
from discovery_crawler.unread import (
    NOT_READ_CLASSES,
    broken_reference_warning,
    broken_references,
    not_read_of,
)

classes = st.sampled_from([None, *REFUSAL_CLASSES, "ssrf", "robots"])
attempts = st.lists(
    st.builds(
        SitemapAttempt,
        url=st.sampled_from(["https://x/a.xml", "https://x/b.xml"]),
        source=st.sampled_from(["robots", "conventional", "index", "input"]),
        status=st.sampled_from([None, 200, 404, 500]),
        ok=st.booleans(),
        failure_class=classes,
    ),
    max_size=4,
)
page_tallies = st.lists(st.dictionaries(classes.filter(bool), st.integers(0, 50)), max_size=2)


@given(attempts, classes, page_tallies)
def test_not_read_exactly_when_a_source_failed_for_the_server_or_the_network(
    tried, robots_class, tallies
):
    robots = {"url": "https://x/robots.txt", "failure_class": robots_class, "error": "boom"}
    found = not_read_of(tried, robots, tallies, retries=2)
    # a failed guess (a conventional address) counts only when no sitemap was read
    any_read = any(a.ok for a in tried)
    sources = [a for a in tried if not (any_read and a.source == "conventional")]
    failed = (
        any(a.failure_class in NOT_READ_CLASSES for a in sources)
        or robots_class in NOT_READ_CLASSES
        or any(t.get(c, 0) for t in tallies for c in NOT_READ_CLASSES)
    )
    assert bool(found) == failed
    assert bool(found.line()) == failed
    assert found.sitemaps_count == sum(a.failure_class in NOT_READ_CLASSES for a in sources)
    assert set(found.as_dict()["by_class"]) <= set(NOT_READ_CLASSES)  # never a 404 or a wall


def test_the_line_names_the_sitemap_and_counts_pages_by_class():
    sitemap = SitemapAttempt("https://x/sitemap-2.xml", "index", "https://x/index.xml")
    sitemap.status, sitemap.error, sitemap.failure_class = 500, "HTTP 500", "server_error"
    found = not_read_of(
        [sitemap, SitemapAttempt("https://x/ok.xml", "index")],
        {"url": "https://x/robots.txt", "status": 200},
        [Counter(timeout=120, network=38, missing=7), Counter(timeout=100)],
        retries=3,
    )
    assert found.line() == (
        "1 sitemap not read after 3 retries (https://x/sitemap-2.xml: HTTP 500), "
        "158 pages failed after retries (timeout 120, network 38)"
    )
    assert found.as_dict() == {
        "robots": None,
        "sitemaps": [
            {
                "url": "https://x/sitemap-2.xml",
                "source": "index",
                "parent": "https://x/index.xml",
                "class": "server_error",
                "reason": "HTTP 500",
            }
        ],
        "sitemaps_count": 1,
        "pages": 158,
        "by_class": {"timeout": 120, "network": 38},
    }


def test_a_listed_child_answering_404_is_a_broken_reference_not_a_source_not_read():
    child = SitemapAttempt("https://x/gone.xml", "index", "https://x/index.xml", status=404)
    guess = SitemapAttempt("https://x/sitemap.xml", "conventional", status=404)
    assert not not_read_of([child, guess], None)
    broken = broken_references([child, guess])
    assert broken == [{"url": "https://x/gone.xml", "parent": "https://x/index.xml", "status": 404}]
    warning = broken_reference_warning(broken)
    assert warning is not None and "https://x/gone.xml (HTTP 404, listed by " in warning
    assert broken_reference_warning([]) is None


def test_a_guess_that_failed_beside_a_sitemap_read_is_no_gap():
    """A WAF answering 503 for /sitemap.xml while robots.txt's sitemap was read: complete;
    with no sitemap read, the failed guess may hide the sitemaps: not read."""
    read = SitemapAttempt("https://x/sitemap_index.xml", "robots", ok=True, status=200)
    guess = SitemapAttempt("https://x/sitemap.xml", "conventional", status=503)
    guess.failure_class = "server_error"
    assert not not_read_of([read, guess], None)
    assert not_read_of([guess], None).sitemaps_count == 1
