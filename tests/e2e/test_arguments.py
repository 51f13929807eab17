"""A wrong spider argument on the command line: one line on stderr, exit status 2."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([], "argument url: missing"),
        (["-a", "url=https://x.com", "-a", "mode=bogus"], "expected one of auto, sitemap"),
        (["-a", "url=https://x.com", "-a", "profile=nope"], "default, massive, polite"),
        (["-a", "url=https://x.com", "-O", "out.xml"], "format 'xml' is not supported"),
        (["-a", "url=https://x.com", "-a", "verify=1", "-a", "mode=links"], "mode=links reads"),
        (["-a", "url=https://x.com", "-a", "verify=1", "-s", "VERIFY_METHOD=PUT"], "HEAD or"),
    ],
)
def test_cli_bad_argument_one_line_exit_2(args, expected, tmp_path):
    """A wrong argument: one line on stderr, status 2, no traceback, no crawl started."""
    proc = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "discover", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: argument ")
    assert expected in lines[0]
