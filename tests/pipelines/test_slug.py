"""``pipelines/slug.py`` on its own: unique slugs in discovery order."""

from __future__ import annotations

from discovery_crawler.pipelines.slug import SlugPipeline
from tests.pipelines.helpers import build, crawler_for, records_batch, run_for


def test_slugs_are_unique():
    crawler = crawler_for()
    stage = build(SlugPipeline, crawler)
    batch = records_batch("/", "/about/", "/About/")
    stage.process_item(batch)
    slugs = [r["slug"] for r in batch.records]
    assert slugs[0] == "home" and slugs[1] == "about" and len(set(slugs)) == 3
    assert stage.allocator is run_for(crawler).slugs
