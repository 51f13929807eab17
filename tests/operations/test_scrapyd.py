"""Scrapyd deploys and runs the project (issue 34, point 1): a real ``scrapyd`` on
127.0.0.1 (a free port, temporary folders), ``scrapyd-deploy`` from a clean clone of the
committed HEAD, jobs scheduled over Scrapyd's HTTP API against the demo site served on
loopback, and each job's outcome read from Scrapyd alone (``listjobs.json``, the job's
log at ``log_url``, its items at ``items_url``), as a monitor would.

Outside CI a missing ``scrapyd``/``scrapyd-deploy`` or ``git`` skips, saying so; in CI it
fails (``pip install -e '.[test]'`` installs them).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from discovery_crawler.site_server import SiteServer, unpack_site
from tests.conftest import IN_CI, ROOT, free_port

PROJECT = "discovery_crawler"
BIN = Path(sys.executable).parent
DEMO_SITE = ROOT / "demo" / "23people-handbook" / "site.tar.xz"
OUTCOME = "'discovery/outcome': '{}'"
FAST = [("setting", "HOST_INTERVAL=0"), ("setting", "PROGRESS_INTERVAL=0")]


def _needed(path: Path | str | None, what: str) -> Path:
    if path is None or not Path(path).exists():
        message = f"{what} is not installed here (pip install -e '.[test]' installs Scrapyd)"
        if IN_CI:
            pytest.fail(f"{message}; in CI this is a failure, not a skip")
        pytest.skip(f"{message}; outside CI this skips (in CI it fails)")
    return Path(path)


class Scrapyd:
    """A ``scrapyd`` process of its own: its config, folders and HTTP API."""

    def __init__(self, folder: Path, items: bool = False) -> None:
        """``items``: an ``items_dir`` (Scrapyd passes each job its own feed) and a
        ``jobs_dir`` (Scrapyd passes each job a ``JOBDIR`` named after its id)."""
        self.folder = folder
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        folder.mkdir(parents=True)
        lines = [
            "[scrapyd]",
            "bind_address = 127.0.0.1",
            f"http_port = {self.port}",
            f"eggs_dir = {folder / 'eggs'}",
            f"logs_dir = {folder / 'logs'}",
            f"dbs_dir = {folder / 'dbs'}",
            f"items_dir = {folder / 'items' if items else ''}",
            f"jobs_dir = {folder / 'jobs' if items else ''}",
            "poll_interval = 0.2",
            "max_proc = 4",
        ]
        (folder / "scrapyd.conf").write_text("\n".join(lines) + "\n")
        self.output = (folder / "scrapyd.out").open("wb")
        # scrapyd reads scrapyd.conf in its working folder
        self.process = subprocess.Popen(
            [str(_needed(BIN / "scrapyd", "scrapyd"))],
            cwd=folder,
            stdout=self.output,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                self.get("daemonstatus.json")
                break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    pytest.fail(f"scrapyd did not start: {self.own_log()[-3000:]}")
                time.sleep(0.2)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.output.close()

    def own_log(self) -> str:
        return (self.folder / "scrapyd.out").read_text(encoding="utf-8", errors="replace")

    # -- the HTTP API -------------------------------------------------------------------
    def text(self, path: str, params: list[tuple[str, str]] | None = None) -> str:
        url = urllib.parse.urljoin(self.url, path)
        data = urllib.parse.urlencode(params).encode() if params is not None else None
        with urllib.request.urlopen(url, data=data, timeout=30) as answer:
            return answer.read().decode("utf-8")

    def get(self, path: str, **query: str) -> dict[str, Any]:
        if query:
            path = f"{path}?{urllib.parse.urlencode(query)}"
        return json.loads(self.text(path))

    def post(self, path: str, params: list[tuple[str, str]]) -> dict[str, Any]:
        answer = json.loads(self.text(path, params))
        assert answer["status"] == "ok", answer
        return answer

    def deploy(self, clone: Path) -> float:
        """``scrapyd-deploy`` from the clone, to this Scrapyd; its wall time."""
        cfg = clone / "scrapy.cfg"
        text = cfg.read_text(encoding="utf-8")
        # the clone's [deploy] target becomes this Scrapyd (at its free port)
        text = re.sub(r"(?m)^url = .*$", f"url = {self.url}", text)
        cfg.write_text(text, encoding="utf-8")
        started = time.monotonic()
        deploy = subprocess.run(
            [str(_needed(BIN / "scrapyd-deploy", "scrapyd-deploy"))],
            cwd=clone,
            capture_output=True,
            text=True,
            timeout=300,
        )
        cfg.write_text(text, encoding="utf-8")
        assert deploy.returncode == 0, deploy.stdout + deploy.stderr
        assert '"status": "ok"' in deploy.stdout, deploy.stdout + deploy.stderr
        return time.monotonic() - started

    def schedule(self, spider: str, params: list[tuple[str, str]]) -> str:
        answer = self.post("schedule.json", [("project", PROJECT), ("spider", spider), *params])
        return answer["jobid"]

    def job(self, jobid: str, runs: int = 1) -> tuple[str, dict[str, Any]] | None:
        """The job's state (pending, running, finished) and its entry in listjobs.json;
        ``runs``: the how-manieth run of that job id (finished ones listed first)."""
        jobs = self.get("listjobs.json", project=PROJECT)
        found = [
            (state, entry)
            for state in ("finished", "running", "pending")
            for entry in jobs[state]
            if entry["id"] == jobid
        ]
        return found[runs - 1] if len(found) >= runs else None

    def wait(self, jobid: str, timeout: float = 90, runs: int = 1) -> dict[str, Any]:
        """Poll listjobs.json until the job (its ``runs``-th run) is finished; its entry."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.job(jobid, runs)
            if found is not None and found[0] == "finished":
                return found[1]
            time.sleep(0.2)
        raise AssertionError(f"job {jobid} not finished in {timeout} s: {self.own_log()[-3000:]}")

    def log(self, entry: dict[str, Any]) -> str:
        """The job's log, read where Scrapyd serves it (``log_url``)."""
        return self.text(entry["log_url"])


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The demo site (the 23people MkDocs handbook: 165 sitemap URLs, 53 pages linked
    from its home page) on a free loopback port."""
    root = unpack_site(DEMO_SITE, tmp_path_factory.mktemp("site"))
    server = SiteServer(root, ["https://23people.io"]).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    """A clean clone of the repository's committed HEAD (what an operator deploys)."""
    git = _needed(shutil.which("git"), "git")
    folder = tmp_path_factory.mktemp("clone") / "discovery_crawler"
    subprocess.run(
        [str(git), "clone", "--quiet", "--no-hardlinks", str(ROOT), str(folder)],
        check=True,
        timeout=120,
    )
    return folder


@pytest.fixture(scope="module")
def scrapyd(tmp_path_factory, clone):
    """Scrapyd with its default ``items_dir`` (none), the clone deployed to it."""
    server = Scrapyd(tmp_path_factory.mktemp("scrapyd") / "plain")
    try:
        server.deploy_seconds = server.deploy(clone)
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def scrapyd_items(tmp_path_factory, clone):
    """Scrapyd with an ``items_dir``: it passes its own feed to each job."""
    server = Scrapyd(tmp_path_factory.mktemp("scrapyd") / "items", items=True)
    try:
        server.deploy(clone)
        yield server
    finally:
        server.stop()


def _crawl_log(out: Path) -> dict[str, Any]:
    return json.loads((out / "_crawl-log.json").read_text(encoding="utf-8"))


def _command_line(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The same run from the command line (the working tree, not the egg)."""
    command = [sys.executable, "-m", "scrapy", "crawl", "discover", "-a", f"url={url}", *args]
    return subprocess.run(
        [*command, "-s", "HOST_INTERVAL=0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _urls(lines: str) -> set[str]:
    return {json.loads(line)["url"] for line in lines.splitlines() if line.strip()}


def test_the_deployed_egg_lists_the_projects_spiders(scrapyd):
    spiders = scrapyd.get("listspiders.json", project=PROJECT)["spiders"]
    assert sorted(spiders) == ["discover", "estimate", "links"]
    assert scrapyd.get("listprojects.json")["projects"] == [PROJECT]
    print(f"deploy: {scrapyd.deploy_seconds:.1f} s")


def test_each_jobs_outcome_is_in_its_log(scrapyd, site, tmp_path):
    """A good job, one against a dead port and one with a bad argument, scheduled at once;
    each ends "finished" in listjobs.json, and its log says how it really ended."""
    good_out, dead_out, bad_out = tmp_path / "good", tmp_path / "dead", tmp_path / "bad"
    good = scrapyd.schedule(
        "discover",
        [
            ("url", site.url("/")),
            ("profile", "default"),
            ("mode", "union"),
            ("out", str(good_out)),
            *FAST,
            # the sitemap worker process, started from inside the egg
            ("setting", "SITEMAP_WORKER_MIN_BYTES=1"),
        ],
    )
    dead_url = f"http://127.0.0.1:{free_port()}/"
    dead = scrapyd.schedule(
        "discover", [("url", dead_url), ("out", str(dead_out)), ("setting", "RETRY_TIMES=0")]
    )
    bad = scrapyd.schedule(
        "discover", [("url", site.url("/")), ("out", str(bad_out)), ("max_pages", "many")]
    )
    entries = {job: scrapyd.wait(job) for job in (good, dead, bad)}
    assert all(entry["items_url"] is None for entry in entries.values())  # no items_dir

    log = scrapyd.log(entries[good])
    assert OUTCOME.format("completed") in log, log[-3000:]
    assert "C speed-ups: 10 extensions loaded from the zipped egg" in log
    assert "C speed-ups not available" not in log
    assert "'discovery/sitemaps/worker_documents'" in log and "worker_failed" not in log
    assert "Traceback" not in log and " ERROR: " not in log
    # without items_dir, the inventory is where the same command line puts it
    inventory = good_out / "inventory.jsonl"
    assert f"Feed: {inventory}" in log
    cli_out = tmp_path / "cli"
    cli = _command_line(site.url("/"), "-a", "mode=union", "-a", f"out={cli_out}")
    assert cli.returncode == 0, cli.stderr[-3000:]
    urls = _urls(inventory.read_text(encoding="utf-8"))
    assert urls == _urls((cli_out / "inventory.jsonl").read_text(encoding="utf-8"))
    assert len(urls) >= 165
    [run] = _crawl_log(good_out)["runs"]
    assert run["status"] == "completed"

    log = scrapyd.log(entries[dead])
    assert OUTCOME.format("failed") in log
    assert "FAILED: site unreachable: connection refused" in log
    assert _crawl_log(dead_out)["runs"][-1]["status"] == "failed"

    # a bad argument: the command line's one line, in the job's log, and its outcome
    log = scrapyd.log(entries[bad])
    cli = _command_line(site.url("/"), "-a", f"out={bad_out}", "-a", "max_pages=many")
    assert cli.returncode == 2
    [line] = cli.stderr.strip().splitlines()
    assert line.startswith("error: ") and "max_pages" in line
    assert f"ERROR: {line}\n" in log
    assert OUTCOME.format("bad_arguments") in log
    assert not bad_out.exists()  # the run never started
    assert "exitstatus=2" in scrapyd.own_log()


def _cancel_and_resume(
    server: Scrapyd, params: list[tuple[str, str]], site: SiteServer, jobdir: Path, out: Path
) -> tuple[str, dict[str, Any]]:
    """Schedule a slow link crawl, cancel it a few pages in (cancel.json: SIGINT, Scrapyd's
    default), check it ended interrupted and resumable, schedule it again; the second
    run's log and listjobs entry."""
    params = [*params, ("url", site.url("/")), ("mode", "links"), ("out", str(out))]
    params.append(("setting", "PROGRESS_INTERVAL=0"))
    slow = server.schedule("discover", [*params, ("setting", "HOST_INTERVAL=0.25")])
    journal = jobdir / "responses.journal"
    deadline = time.monotonic() + 60
    while not journal.exists() or journal.stat().st_size < 5000:  # a few pages in
        assert time.monotonic() < deadline, server.own_log()[-3000:]
        time.sleep(0.2)
    state, _ = server.job(slow) or ("gone", {})
    assert state == "running"
    server.post("cancel.json", [("project", PROJECT), ("job", slow)])
    log = server.log(server.wait(slow, 30))
    assert OUTCOME.format("interrupted") in log
    assert "INTERRUPTED (shutdown): the inventory is partial; run it again" in log
    [first] = _crawl_log(out)["runs"]
    assert first["status"] == "interrupted" and first["job"]["resumed"] is False

    again = server.schedule("discover", [*params, ("setting", "HOST_INTERVAL=0")])
    entry = server.wait(again, runs=2 if again == slow else 1)
    log = server.log(entry)
    assert OUTCOME.format("completed") in log
    second = _crawl_log(out)["runs"][-1]
    assert second["status"] == "completed"
    assert second["job"]["resumed"] is True and second["job"]["responses_replayed"] > 0
    return log, entry


def _pages(lines: str) -> int:
    """The pages fetched (status 200), each once."""
    records = [json.loads(line) for line in lines.splitlines() if line.strip()]
    assert len({r["url"] for r in records}) == len(records)  # no line twice
    return sum(1 for r in records if r.get("status") == 200)


def test_a_cancelled_job_is_interrupted_and_resumes(scrapyd, site, tmp_path):
    """With ``setting=JOBDIR=…``: scheduled again with the same JOBDIR, the job goes on."""
    out, jobdir = tmp_path / "out", tmp_path / "job"
    _cancel_and_resume(scrapyd, [("setting", f"JOBDIR={jobdir}")], site, jobdir, out)
    assert _pages((out / "inventory.jsonl").read_text(encoding="utf-8")) == 53


def test_with_jobs_dir_a_cancelled_job_resumes_under_its_id(scrapyd_items, site, tmp_path):
    """Scrapyd's ``jobs_dir`` gives each job id its JOBDIR: the same ``jobid`` scheduled
    again resumes, and its items file (appended to) holds every page once."""
    out, jobid = tmp_path / "out", "site-1"
    jobdir = scrapyd_items.folder / "jobs" / PROJECT / "discover" / jobid
    log, entry = _cancel_and_resume(scrapyd_items, [("jobid", jobid)], site, jobdir, out)
    assert log.count("'discovery/outcome': ") == 2  # one log per job id: both runs
    assert _pages(scrapyd_items.text(entry["items_url"])) == 53


def test_with_items_dir_the_inventory_is_at_items_url(scrapyd_items, site, tmp_path):
    out = tmp_path / "out"
    job = scrapyd_items.schedule(
        "discover", [("url", site.url("/sitemap.xml.gz")), ("out", str(out)), *FAST]
    )
    entry = scrapyd_items.wait(job)
    log = scrapyd_items.log(entry)
    assert OUTCOME.format("completed") in log
    assert entry["items_url"] == f"/items/{PROJECT}/discover/{job}.jl"
    urls = _urls(scrapyd_items.text(entry["items_url"]))
    assert len(urls) == 165
    assert not (out / "inventory.jsonl").exists()  # Scrapyd's feed is the only one
    assert _crawl_log(out)["runs"][-1]["status"] == "completed"
