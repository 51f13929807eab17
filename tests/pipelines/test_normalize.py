"""``pipelines/normalize.py`` on its own: raw entries in, same-site records out."""

from __future__ import annotations

from discovery_crawler.pipelines.normalize import NormalizePipeline
from tests.pipelines.helpers import SITE, SITEMAP, build, crawler_for, entries_batch, run_for


def test_entries_become_records_of_the_site_and_other_hosts_are_counted():
    crawler = crawler_for()
    run = run_for(crawler)
    run.name_site(SITE)
    stage = build(NormalizePipeline, crawler)
    batch = entries_batch(
        "https://EXAMPLE.com/a/?utm_source=x", "/b", "https://other.example/c", "http://"
    )
    stage.process_item(batch)
    assert [r["url"] for r in batch.records] == [SITE + "/a/", SITE + "/b"]
    assert batch.records[0]["sitemap"] == SITEMAP and batch.records[0]["source"] == "sitemap"
    record = run.record
    assert record.other_hosts == {"https://other.example": 1}
    assert record.filtered["other_host"] == 1
    assert record.counts["malformed"] == 1 and record.malformed.items[0]["raw"] == "http://"


def test_a_sitemap_given_as_input_names_the_site_by_its_first_url():
    crawler = crawler_for()
    run = run_for(crawler)
    stage = build(NormalizePipeline, crawler)
    batch = entries_batch("https://www.example.org/a", "https://example.org/b")
    stage.process_item(batch)
    assert run.record.site_origin == "https://www.example.org"
    assert "site taken from the sitemap's first URL: https://www.example.org" in run.record.notes
    # the bare twin is the same site: rewritten to the site's spelling
    assert [r["url"] for r in batch.records] == [
        "https://www.example.org/a",
        "https://www.example.org/b",
    ]


def test_same_site_alternates_enter_after_the_locs():
    crawler = crawler_for()
    run_for(crawler).name_site(SITE)
    stage = build(NormalizePipeline, crawler)
    batch = entries_batch(SITE + "/en/", alternates=(("fr", SITE + "/fr/"),))
    stage.process_item(batch)
    assert [(r["url"], r["source"]) for r in batch.records] == [
        (SITE + "/en/", "sitemap"),
        (SITE + "/fr/", "alternate"),
    ]
    assert batch.records[0]["alternates"] == [{"hreflang": "fr", "href": SITE + "/fr/"}]
