"""The progress line of a real run (issue 18): a sitemap walk's URLs against their estimated
total with a percentage and an ETA, a union crawl's pages against its budget and frontier
beside it, plain log lines when stdout is no terminal, one line rewritten in place when it
is one (a pty). Walks paced by ``HOST_INTERVAL`` so that several reports come."""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
from typing import TYPE_CHECKING

from tests.conftest import ROOT

if TYPE_CHECKING:
    from pathlib import Path

CHILDREN, PER_CHILD = 10, 5
TOTAL = CHILDREN * PER_CHILD
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
# Each document one host interval apart: ~3 s of walk, a report every 0.2 s
PACED = {"PROGRESS_INTERVAL": 0.2, "HOST_INTERVAL": 0.25, "SITEMAP_CONCURRENCY": 1}
ESTIMATED = re.compile(
    rf"Progress: sitemaps \d+ done / \d+ pending · [\d,]+ of ~{TOTAL} URLs \(\d+%\).* ETA ~"
)


def index_site(serve, root: Path) -> str:
    """An index of ``CHILDREN`` sitemaps of ``PER_CHILD`` pages each; the index's URL."""
    root.mkdir(parents=True, exist_ok=True)
    server = serve(root)
    children = []
    for i in range(CHILDREN):
        locs = "".join(
            f"<url><loc>{server.url(f'/p-{i}-{j}/')}</loc></url>" for j in range(PER_CHILD)
        )
        (root / f"s{i}.xml").write_text(f"<urlset {NS}>{locs}</urlset>", encoding="utf-8")
        children.append(f"<sitemap><loc>{server.url(f'/s{i}.xml')}</loc></sitemap>")
    (root / "index.xml").write_text(
        f"<sitemapindex {NS}>{''.join(children)}</sitemapindex>", encoding="utf-8"
    )
    return server.url("/index.xml")


def progress_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "Progress: " in line]


def test_a_walk_reports_urls_of_its_estimated_total_with_an_eta(serve, tmp_path, discover):
    result = discover(index_site(serve, tmp_path / "site"), settings=PACED)
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(result.records) == TOTAL
    lines = progress_lines(result.stderr)
    # after the index and a child: 5 URLs read, 9 children pending at 5 each: ~50
    estimated = [line for line in lines if ESTIMATED.search(line)]
    assert len(estimated) >= 3, "\n".join(lines)
    shares = [int(m.group(1)) for line in estimated if (m := re.search(r"\((\d+)%\)", line))]
    assert shares == sorted(shares) and all(0 <= s <= 100 for s in shares), shares
    assert "Traceback" not in result.stderr


def test_a_union_crawl_shows_the_walk_and_the_pages_against_the_budget(serve, tmp_path, discover):
    root = tmp_path / "site"
    index = index_site(serve, root)
    links = "".join(f"<a href='/p-0-{j}/'>{j}</a>" for j in range(PER_CHILD))
    (root / "index.html").write_text(f"<html><body>{links}</body></html>", encoding="utf-8")
    (root / "robots.txt").write_text(f"Sitemap: {index}\n", encoding="utf-8")
    result = discover(
        index.replace("/index.xml", "/"),
        "-a",
        "mode=union",
        "-a",
        "max_pages=8",
        settings={**PACED, "HOST_INTERVAL": 0.15},
    )
    assert result.returncode in (0, 5), result.stderr[-3000:]
    lines = progress_lines(result.stderr)
    both = [
        line
        for line in lines
        if re.search(
            r"Progress: sitemaps \d+ done / \d+ pending · .* \| pages \d+ fetched of "
            r"(≤ |≥ |~)?\d+.* · \d+ queued · max_pages 8.* · \d+ refused · ETA",
            line,
        )
    ]
    assert len(both) >= 2, "\n".join(lines)
    assert any("pages/s" in line for line in both), "\n".join(lines)


def run_on_a_pty(url: str, tmp_path: Path, columns: int) -> tuple[int, str, str]:
    """``scrapy crawl discover`` with stdout on a pseudo-terminal ``columns`` wide (stderr
    piped): its exit status, what the terminal showed, its stderr."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    cmd = [sys.executable, "-m", "scrapy", "crawl", "discover", "-a", f"url={url}"]
    cmd += ["-a", f"out={tmp_path / 'out'}", "-O", str(tmp_path / "inventory.jsonl")]
    for name, value in {**PACED, "RETRY_BACKOFF_BASE": 0.05}.items():
        cmd += ["-s", f"{name}={value}"]
    err_path = tmp_path / "stderr.txt"
    with err_path.open("w") as err:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=slave, stderr=err, stdin=subprocess.DEVNULL)
    os.close(slave)
    shown = b""
    try:
        while True:  # drain it as it comes: a full pty would block the crawl
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: the crawl closed its end
                    break
                if not data:
                    break
                shown += data
            elif proc.poll() is not None:
                break
        proc.wait(timeout=120)
    finally:
        os.close(master)
    return proc.returncode, shown.decode("utf-8"), err_path.read_text(encoding="utf-8")


def test_on_a_terminal_one_line_is_rewritten_in_place(serve, tmp_path):
    columns = 100
    code, shown, stderr = run_on_a_pty(index_site(serve, tmp_path / "site"), tmp_path, columns)
    assert code == 0, stderr[-3000:]
    draws = shown.split("\r")
    lines = [d.removesuffix("\x1b[K") for d in draws if d.startswith("Progress: ")]
    assert len(lines) >= 3, repr(shown)
    assert any(ESTIMATED.search(line) for line in lines), repr(shown)
    # cut to the terminal's width, never wrapped; no newline until the run's end
    assert all(len(line) < columns for line in lines), lines
    assert shown.count("\n") == 1 and shown.endswith("\x1b[K\r\n"), repr(shown[-300:])
    assert f"of {TOTAL} URLs (100%)" in lines[-1]
    # stderr, no terminal, keeps every line as before
    assert len(progress_lines(stderr)) >= len(lines) - 1
