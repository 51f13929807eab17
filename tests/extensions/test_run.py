"""``extensions/run.py``: the run's owner, built from the ``DISCOVERY_RUN`` setting."""

from __future__ import annotations

import pickle

from scrapy.utils.test import get_crawler

from discovery_crawler.extensions.run import DiscoveryRun, run_of
from discovery_crawler.pipelines.dedup import DedupPipeline
from discovery_crawler.pipelines.filter import FilterPipeline
from discovery_crawler.pipelines.groups import GroupsPipeline
from discovery_crawler.pipelines.junk import JunkFilterPipeline
from discovery_crawler.pipelines.normalize import NormalizePipeline
from discovery_crawler.pipelines.score import ScorePipeline
from discovery_crawler.pipelines.slug import SlugPipeline
from discovery_crawler.pipelines.state import StatePipeline
from discovery_crawler.sitemaps.attempts import SitemapAttempt
from tests.pipelines.helpers import SITE, SITEMAP, build, crawler_for, entries_batch, run_for

STAGES = (
    NormalizePipeline,
    DedupPipeline,
    FilterPipeline,
    JunkFilterPipeline,
    ScorePipeline,
    SlugPipeline,
    GroupsPipeline,
    StatePipeline,
)


def test_no_run_without_its_setting():
    crawler = get_crawler(settings_dict={"EXTENSIONS": {DiscoveryRun: 0}})
    assert run_of(crawler) is None


def test_the_run_is_what_the_entry_point_described():
    crawler = crawler_for({"DISCOVERY_MODE": "union"}, max_pages="7")
    run = run_for(crawler)
    assert run.options.url == SITE + "/" and run.options.max_pages == 7
    assert run.mode == "union"  # -a mode=auto: the profile's DISCOVERY_MODE
    assert run_for(crawler_for(mode="sitemap")).mode == "sitemap"
    assert str(run.out_dir) == "discovery/example.com"


def test_naming_the_site_rewrites_its_other_spellings():
    run = run_for(crawler_for())
    run.name_site("https://www.example.com", "named")
    assert run.record.site_origin == "https://www.example.com"
    assert run.origins.normalize("http://example.com/a") == "https://www.example.com/a"
    assert run.record.notes == ["named"]


def test_a_run_with_no_answer_is_judged_unreachable_once():
    run = run_for(crawler_for())
    attempt = SitemapAttempt(SITEMAP, "conventional", None, 0)
    attempt.error = "DNS lookup failed: example.com"
    run.record.attempts[SITEMAP] = attempt
    run.finish("finished")
    assert run.record.failure == "site unreachable: DNS lookup failed: example.com"
    run.record.failure = None
    run.finish()
    assert run.record.failure is None  # judged once


def test_a_run_whose_input_failed_for_a_named_reason_says_it_not_unreachable():
    """Nothing answered, and the input's own fetch failed for a reason with a name (a
    component set ``input_failure``: a TLS handshake, a sitemap over DOWNLOAD_MAXSIZE):
    that is the run's failure, in place of "site unreachable: <the first error>"."""
    run = run_for(crawler_for())
    attempt = SitemapAttempt(SITEMAP, "input", None, 0)
    attempt.error = "larger than DOWNLOAD_MAXSIZE (64 MiB): 70,000,000 bytes announced"
    run.record.attempts[SITEMAP] = attempt
    run.record.input_failure = f"{SITEMAP} is larger than DOWNLOAD_MAXSIZE (64 MiB)"
    run.finish("finished")
    assert run.record.failure == f"{SITEMAP} is larger than DOWNLOAD_MAXSIZE (64 MiB)"
    answered = run_for(crawler_for())  # something answered: no failure, whatever was noted
    answered.record.input_failure = "TLS handshake failed with https://example.com/ (x)"
    answered.record.robots = {"status": 404}
    answered.finish("finished")
    assert answered.record.failure is None


def test_what_the_run_accumulated_can_be_saved(tmp_path):
    """Every structure a resumable crawl must keep is reachable from the run and pickles
    (the nothing-lost issue saves it with JOBDIR)."""
    crawler = crawler_for(out=str(tmp_path))
    run = run_for(crawler)
    run.name_site(SITE)
    stages = [build(stage, crawler) for stage in STAGES]
    stages[-1].open_spider()  # the state stage loads the run's state
    batch = entries_batch(SITE + "/", SITE + "/blog/a/", SITE + "/blog/b/", SITE + "/test/")
    for stage in stages:
        batch = stage.process_item(batch)
    assert len(batch.records) == 4
    saved = run.jobdir_state()
    assert set(saved) == set(DiscoveryRun.JOBDIR_STATE)
    restored = pickle.loads(pickle.dumps(saved))
    record = restored["record"]
    assert record.counts["unique"] == 4 and record.junk.count == 1
    assert SITE + "/blog/a/" in record.seen
    assert record.tree.as_dict()["root"]["count"] == 4
    assert restored["selection"].listed.count == 4
    assert restored["slugs"].nbytes == run.slugs.nbytes
    assert restored["state"].changes.new.count == 4
