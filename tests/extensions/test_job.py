"""What makes a resumable job the same job (``extensions/job.py``); resuming itself is
crawled end to end in ``tests/e2e/test_resume.py`` and, under Scrapyd,
``tests/operations/test_scrapyd.py``."""

from __future__ import annotations

from discovery_crawler.extensions.job import job_arguments


def test_scrapyds_own_arguments_are_not_the_jobs():
    """Scrapyd passes ``_job`` (new for every job it schedules) and ``_version``: a job
    scheduled again with the same arguments and JOBDIR is the same job."""
    first = {"url": "https://example.com/", "mode": "links", "_job": "a1", "_version": "1"}
    again = {"url": "https://example.com/", "mode": "links", "_job": "b2"}
    assert (
        job_arguments(first)
        == job_arguments(again)
        == {
            "url": "https://example.com/",
            "mode": "links",
        }
    )
    assert job_arguments(None) == {}
    assert job_arguments({"url": "https://example.com/", "mode": "sitemap"}) != job_arguments(again)
