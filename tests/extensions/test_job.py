"""``job.json`` read back (``extensions/job.py``): a file of any shape — wrong types,
not an object, cut short, binary — is never half used and never raises; it is kept aside
(``job.json.corrupt-<time>``) with one warning and a new job starts."""

from __future__ import annotations

import logging

from hypothesis import HealthCheck, given, settings

from discovery_crawler.extensions.job import (
    JOB_FILE,
    ResumableJob,
    job_arguments,
    job_file_problem,
    read_job_file,
)
from tests.conftest import run_crawler
from tests.fuzzing_files import contents

VALID = {
    "run": {"arguments": {"url": "https://example.com/"}, "mode": None},
    "feeds": {"/tmp/all.jsonl": 120},
    "invocations": [{"started_at": "2026-12-01T00:00:00+00:00", "ended_at": None}],
    "finished": False,
    "last_requests": {"https://example.com": 1764547200.5},
}


def test_the_file_this_module_writes_is_read_back():
    assert job_file_problem(VALID) is None


def test_the_wrong_types_of_issue_34_are_a_problem_not_a_crash(tmp_path):
    path = tmp_path / JOB_FILE
    path.write_text('{"run": null, "invocations": 5}')
    assert read_job_file(path) == (None, "has no run arguments")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(contents(VALID))
def test_read_job_file_never_raises(tmp_path_factory, raw):
    path = tmp_path_factory.mktemp("job") / JOB_FILE
    path.write_bytes(raw)
    data, problem = read_job_file(path)
    if problem is None:
        assert isinstance(data, dict) and job_file_problem(data) is None
    else:
        assert data is None and isinstance(problem, str)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(contents(VALID))
def test_a_job_of_any_shape_starts_or_resumes_and_keeps_a_bad_file_aside(tmp_path_factory, raw):
    """The extension itself, on whatever ``job.json`` holds: it is built (no exception),
    writes a good ``job.json``, and a file it could not use is kept aside byte for byte
    with one warning."""
    folder = tmp_path_factory.mktemp("jobdir")
    (folder / JOB_FILE).write_bytes(raw)
    usable = read_job_file(folder / JOB_FILE)[1] is None
    crawler = run_crawler(settings={"DISCOVERY_JOBDIR": str(folder)})
    job = ResumableJob(crawler, folder)
    assert job.journal is not None
    job.journal.close()
    assert read_job_file(folder / JOB_FILE)[1] is None  # it wrote one it can read
    aside = list(folder.glob(f"{JOB_FILE}.corrupt-*"))
    if usable:
        assert aside == []
    else:
        assert len(aside) == 1 and aside[0].read_bytes() == raw


def test_a_bad_job_file_is_one_warning(tmp_path, caplog):
    (tmp_path / JOB_FILE).write_bytes(b"\x00\xff garbage")
    crawler = run_crawler(settings={"DISCOVERY_JOBDIR": str(tmp_path)})
    with caplog.at_level(logging.WARNING, logger="discovery_crawler.extensions.job"):
        job = ResumableJob(crawler, tmp_path)
    assert job.journal is not None
    job.journal.close()
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1
    assert "job.json is not valid JSON (UnicodeDecodeError); kept it aside as" in said[0]
    assert not job.resumed


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
