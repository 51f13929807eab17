"""What the entry points do before a crawl (``spiders/base.py``): the profile applied at
spider priority, the job folder a chunked run gets (``MAX_CHUNK_PAGES``), and the folders
a run holds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from scrapy.settings import Settings

from discovery_crawler import settings as project
from discovery_crawler.arguments import RunOptions
from discovery_crawler.extensions.job import JOBDIR_SETTING
from discovery_crawler.profiles import available_profiles
from discovery_crawler.spiders.base import (
    RunEntry,
    default_feeds,
    hold_run_folders,
    job_folder_of,
)
from tests.conftest import free_port


def applied(tmp_path: Path, profile: str, **cmdline: object) -> Settings:
    settings = Settings()
    settings.setmodule(project, priority="project")
    settings.setdict(cmdline, priority="cmdline")
    url = f"http://127.0.0.1:{free_port()}/"
    arguments = {"url": url, "profile": profile, "out": str(tmp_path / "out")}
    RunEntry.apply_profile(RunOptions.from_arguments(arguments, available_profiles()), settings)
    return settings


def test_a_chunked_run_without_jobdir_keeps_its_job_under_the_out_folder(tmp_path):
    settings = applied(tmp_path, "service")
    assert settings.getint("MAX_CHUNK_PAGES") == 10
    assert settings.get(JOBDIR_SETTING) == str(tmp_path / "out" / "_job")
    assert settings.get("JOBDIR") is None  # Scrapy's own use of it is off


def test_jobdir_given_is_the_job_folder(tmp_path):
    settings = applied(tmp_path, "service", JOBDIR=str(tmp_path / "job"))
    assert settings.get(JOBDIR_SETTING) == str(tmp_path / "job")


def test_no_job_folder_without_chunks(tmp_path):
    assert applied(tmp_path, "service", MAX_CHUNK_PAGES=0).get(JOBDIR_SETTING) is None
    assert applied(tmp_path, "default").get(JOBDIR_SETTING) is None
    chunked = applied(tmp_path, "default", MAX_CHUNK_PAGES=50)  # any profile can chunk
    assert chunked.get(JOBDIR_SETTING) == str(tmp_path / "out" / "_job")


def test_the_job_folder_checked_before_the_run_is_the_one_the_run_gets(tmp_path):
    """``job_folder_of`` (the crawl command's check and lock, before the profile is
    applied) names the folder ``apply_profile`` gives the run, in every case above."""
    cases = [("service", {}), ("service", {"JOBDIR": str(tmp_path / "job")})]
    cases += [("service", {"MAX_CHUNK_PAGES": 0}), ("default", {})]
    cases += [("default", {"MAX_CHUNK_PAGES": 50})]
    for profile, cmdline in cases:
        settings = Settings()
        settings.setmodule(project, priority="project")
        settings.setdict(cmdline, priority="cmdline")
        url = f"http://127.0.0.1:{free_port()}/"
        arguments = {"url": url, "profile": profile, "out": str(tmp_path / "out")}
        options = RunOptions.from_arguments(arguments, available_profiles())
        expected = applied(tmp_path, profile, **cmdline).get(JOBDIR_SETTING)
        assert job_folder_of(options, settings) == expected, (profile, cmdline)


def test_no_feed_given_is_the_out_folders_inventory(tmp_path):
    settings = applied(tmp_path, "default")
    assert settings.getdict("FEEDS") == {
        str(tmp_path / "out" / "inventory.jsonl"): {"format": "jsonlines", "overwrite": True}
    }
    given = {str(tmp_path / "mine.csv"): {"format": "csv"}}
    assert applied(tmp_path, "default", FEEDS=given).getdict("FEEDS") == given
    assert applied(tmp_path, "default", FEED_URI="x.jsonl").getdict("FEEDS") == {}


def test_a_default_feed_path_that_reads_as_a_uri_is_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    options = RunOptions.from_arguments(
        {"url": "https://example.com/", "out": "s3:bucket"}, available_profiles()
    )
    [path] = default_feeds(options, Settings())
    assert path == str(tmp_path / "s3:bucket" / "inventory.jsonl")


def test_a_run_not_started_by_the_crawl_command_holds_its_folders_too(tmp_path):
    """A script's crawl (no ``crawl`` command to check the outputs) holds its out folder
    and job folder as its spider is configured: another process is refused both."""
    settings = applied(tmp_path, "service", JOBDIR=str(tmp_path / "job"))
    url = f"http://127.0.0.1:{free_port()}/"
    arguments = {"url": url, "out": str(tmp_path / "out")}
    options = RunOptions.from_arguments(arguments, available_profiles())
    hold_run_folders(options, settings)
    hold_run_folders(options, settings)  # held already: a no-op
    probe = (
        "import sys; from pathlib import Path; "
        "from discovery_crawler.output.folder_lock import FolderBusy, hold_folder\n"
        "for folder, name in ((sys.argv[1], '_run.lock'), (sys.argv[2], 'job.lock')):\n"
        "    try:\n        hold_folder(Path(folder), name)\n"
        "    except FolderBusy as exc:\n        print(exc.holder.pid)\n"
    )
    args = [str(tmp_path / "out"), str(tmp_path / "job")]
    said = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True)
    assert said.stdout.split() == [str(os.getpid())] * 2, said.stderr
