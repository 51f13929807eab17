"""``pipelines/base.py``: a stage is bound to the run it works for, or off without one."""

from __future__ import annotations

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from discovery_crawler.pipelines.base import BatchStage
from tests.pipelines.helpers import build, crawler_for, run_for


def test_a_stage_takes_the_runs_record_and_options():
    crawler = crawler_for(cap=3)
    stage = build(BatchStage, crawler)
    run = run_for(crawler)
    assert stage.run is run
    assert stage.record is run.record
    assert stage.options.cap == 3


def test_without_a_run_a_stage_is_off():
    with pytest.raises(NotConfigured):
        build(BatchStage, get_crawler(settings_dict={}))
