"""Sitemap-discovery benchmark: ours vs ultimate-sitemap-parser vs stock Scrapy.

Generates a gzipped sitemap index tree (default 20 x 50,000 = 1M URLs),
serves it on 127.0.0.1 at a kernel-chosen port, runs each contender as its
own subprocess, and reports URLs found, wall seconds, URLs/s and peak RSS,
plus the ratios the project targets.  Standard library only: the contenders
bring their own environments (project venv, ``bench/.venv-peers``).

Example::

    .venv/bin/python bench/bench_sitemap.py --children 4 --per-child 10000 \
        --only usp,stock --json /tmp/bench.json
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gzip
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote

BENCH_DIR = Path(__file__).resolve().parent
PROJECT_DIR = BENCH_DIR.parent
PROJECT_SCRAPY = PROJECT_DIR / ".venv" / "bin" / "scrapy"
PEERS_VENV = BENCH_DIR / ".venv-peers"
USP_VERSION = "1.8.1"
CONTENDERS = ("ours", "usp", "stock")
# (name, numerator, denominator, metric, target, higher_is_better)
TARGETS = (
    ("ours/usp URLs/s", "ours", "usp", "urls_per_s", 4.0, True),
    ("ours/stock URLs/s", "ours", "stock", "urls_per_s", 15.0, True),
    ("ours/usp peak RSS", "ours", "usp", "peak_rss_mb", 1.0, False),
)
CHANGEFREQS = ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")


# --------------------------------------------------------------------------
# Sitemap tree generation
# --------------------------------------------------------------------------


def child_name(index: int, children: int) -> str:
    """``sitemap-01.xml.gz``; width grows if there are >99 children."""
    width = max(2, len(str(children)))
    return f"sitemap-{index:0{width}d}.xml.gz"


def generate_tree(
    root: Path, base: str, children: int, per_child: int, seed: int, tree: str = "clean"
) -> int:
    """Write robots.txt, sitemap_index.xml and gzipped urlsets; return the URL count our
    feed must hold (every generated page, and on the realistic tree its alternates, less
    the malformed and other-host entries)."""
    if tree == "questions":
        return _questions_tree(root, base, children, per_child, seed)
    (root / "robots.txt").write_text(
        f"User-agent: *\nDisallow: /private/\n\nSitemap: {base}/sitemap_index.xml\n"
    )
    index = ['<?xml version="1.0" encoding="UTF-8"?>']
    index.append('<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">')
    write = _clean_urlset if tree == "clean" else _realistic_urlset
    expected = 0
    for c in range(1, children + 1):
        name = child_name(c, children)
        rng = random.Random(seed * 1_000_003 + c)
        text, count = write(rng, base, c, per_child)
        expected += count
        with gzip.open(root / name, "wb", compresslevel=6) as fh:
            fh.write(text.encode())
        index.append(
            f"  <sitemap>\n    <loc>{base}/{name}</loc>\n"
            f"    <lastmod>2025-01-{c % 28 + 1:02d}T00:00:00+00:00</lastmod>\n"
            "  </sitemap>"
        )
    index.append("</sitemapindex>\n")
    (root / "sitemap_index.xml").write_text("\n".join(index))
    return expected


def generate_questions(root: Path, base: str, children: int, per_child: int, seed: int) -> int:
    """A Q&A site's tree: ``/questions/<id>/<slug>``, one parent folder a URL."""
    rng = random.Random(seed)
    words = [
        "how",
        "why",
        "what",
        "python",
        "scrapy",
        "sitemap",
        "parse",
        "fast",
        "memory",
        "error",
        "list",
        "dict",
        "json",
    ]
    index = ['<?xml version="1.0" encoding="UTF-8"?>']
    index.append('<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">')
    qid = 1_000_000
    for c in range(1, children + 1):
        blocks = []
        for _ in range(per_child):
            qid += rng.randint(1, 7)
            slug = "-".join(rng.choice(words) for _ in range(rng.randint(3, 8)))
            day = rng.randint(1, 28)
            blocks.append(
                f"<url><loc>{base}/questions/{qid}/{slug}</loc>"
                f"<lastmod>2025-0{rng.randint(1, 9)}-{day:02d}</lastmod>"
                f"<changefreq>weekly</changefreq><priority>0.{rng.randint(1, 9)}</priority></url>"
            )
        text = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
            + "\n".join(blocks)
            + "\n</urlset>\n"
        )
        with gzip.open(root / child_name(c, children), "wb", compresslevel=6) as fh:
            fh.write(text.encode())
        index.append(
            f"  <sitemap>\n    <loc>{base}/{child_name(c, children)}</loc>\n"
            f"    <lastmod>2025-01-{c % 28 + 1:02d}T00:00:00+00:00</lastmod>\n  </sitemap>"
        )
    index.append("</sitemapindex>\n")
    (root / "sitemap_index.xml").write_text("\n".join(index))
    return children * per_child


def _questions_tree(root: Path, base: str, children: int, per_child: int, seed: int) -> int:
    """A Q&A site's tree (``/questions/<id>/<slug>``, a parent folder per URL): the one
    ``bench_rerun.py`` measures re-runs on, with the same robots.txt as the others."""
    (root / "robots.txt").write_text(
        f"User-agent: *\nDisallow: /private/\n\nSitemap: {base}/sitemap_index.xml\n"
    )
    return generate_questions(root, base, children, per_child, seed)


def _clean_urlset(rng: random.Random, base: str, child: int, per_child: int) -> tuple[str, int]:
    """The easiest tree there is: ``/section-N/article-N/``, every field, one shape.

    URLs are unique (article ids are a running counter) and the extra fields vary, so
    parsers do realistic work rather than chewing identical lines.
    """
    article = 100_000 + (child - 1) * per_child
    lines = ['<?xml version="1.0" encoding="UTF-8"?>']
    lines.append('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">')
    for _ in range(per_child):
        article += 1
        ts = 1_600_000_000 + rng.randrange(150_000_000)
        lastmod = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(ts))
        section = rng.randrange(1, 41)
        lines.append(
            "  <url>\n"
            f"    <loc>{base}/section-{section}/article-{article}/</loc>\n"
            f"    <lastmod>{lastmod}</lastmod>\n"
            f"    <changefreq>{rng.choice(CHANGEFREQS)}</changefreq>\n"
            f"    <priority>{rng.randrange(1, 11) / 10:.1f}</priority>\n"
            "  </url>"
        )
    lines.append("</urlset>\n")
    return "\n".join(lines), per_child


# The realistic tree: what large sites' generators write (Yoast, next-sitemap, Rails'
# sitemap_generator, news sites). Section paths two to four segments deep under a dozen
# top sections (thousands of distinct parents), slugs of words with an id, some ``.html``
# pages and some without the trailing slash.
_TOP = (
    "blog", "news", "products", "docs", "help", "guides", "shop", "stories",
    "events", "recipes", "learn", "category",
)  # fmt: skip
_WORDS = (
    "kitchen", "garden", "travel", "sports", "music", "health", "finance", "science",
    "design", "cars", "home", "tools", "outdoor", "fashion", "books", "movies", "games",
    "family", "pets", "photo", "art", "history", "energy", "climate", "food", "drinks",
    "office", "software", "hardware", "mobile", "security", "cloud", "data", "people",
    "culture", "local", "world", "europe", "asia", "africa",
)  # fmt: skip
_SLUG_WORDS = (
    "best", "new", "how", "to", "guide", "review", "top", "ideas", "easy", "quick",
    "simple", "complete", "ultimate", "cheap", "small", "large", "green", "red", "blue",
    "modern", "classic", "winter", "summer", "spring", "autumn", "city", "weekend",
    "family", "budget", "premium", "tips", "tricks", "things", "places", "ways", "start",
    "make", "build", "choose", "clean", "fix", "grow", "cook", "plan", "visit", "know",
)  # fmt: skip
# Non-ASCII words as sites write them: raw UTF-8 in the XML, or already percent-encoded.
_UNICODE_WORDS = ("café", "crème-brûlée", "straße", "über", "niño", "日本語", "москва", "çà")
_LANGS = ("fr", "de", "es", "it", "nl", "pt")
_IMAGE_NS = "http://www.google.com/schemas/sitemap-image/1.1"
_NEWS_NS = "http://www.google.com/schemas/sitemap-news/0.9"
_XHTML_NS = "http://www.w3.org/1999/xhtml"
# Entries no tool can read as a page of the site: an empty or missing <loc>, a URL
# without a host, a broken IPv6 host, another host's page.
_MALFORMED = (
    "    <loc></loc>\n",
    "    <lastmod>2024-03-01</lastmod>\n",
    "    <loc>http:///no-host/page/</loc>\n",
    "    <loc>https://[broken/page/</loc>\n",
    "    <loc>https://cdn.other-site.example/asset/page/</loc>\n",
)


def _realistic_urlset(rng: random.Random, base: str, child: int, per_child: int) -> tuple[str, int]:
    """A urlset as real sites write them; returns its text and the URLs the feed must
    hold from it.

    Per ``<url>``: lastmod (dates, timestamps, fractional seconds and offsets) and
    priority on every entry, changefreq on half; 10 % with ``xhtml:link`` hreflang
    alternates (itself and another language's page, which only the alternate names);
    2 % with tracking parameters and another query parameter (``&amp;``-escaped); 15 %
    with an ``image:image``, 3 % with a ``news:news`` block; 3 % with a non-ASCII slug; a
    few padded with whitespace; one in 5,000 malformed or on another host.
    """
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="{_XHTML_NS}"'
        f' xmlns:image="{_IMAGE_NS}" xmlns:news="{_NEWS_NS}">',
    ]
    article = 100_000 + (child - 1) * per_child
    expected = 0
    for _ in range(per_child):
        article += 1
        r = rng.random()
        if r < 0.0002:
            bad = _MALFORMED[rng.randrange(len(_MALFORMED))]
            lines.append(f"  <url>\n{bad}    <priority>0.5</priority>\n  </url>")
            continue
        expected += 1
        depth = rng.choice((2, 2, 3, 3, 3, 4))
        section = [_TOP[rng.randrange(len(_TOP))]]
        section += [_WORDS[rng.randrange(len(_WORDS))] for _ in range(depth - 1)]
        words = [_SLUG_WORDS[rng.randrange(len(_SLUG_WORDS))] for _ in range(rng.randrange(2, 6))]
        if rng.random() < 0.03:
            word = _UNICODE_WORDS[rng.randrange(len(_UNICODE_WORDS))]
            words.insert(1, word if rng.random() < 0.5 else quote(word))
        slug = "-".join(words) + f"-{article}"
        shape = rng.random()
        tail = ".html" if shape < 0.1 else "" if shape < 0.3 else "/"
        path = "/".join(section) + "/" + slug + tail
        query = ""
        if rng.random() < 0.02:
            other = rng.choice((f"variant={article % 7}", f"id={article}", "lang=en", "ref=home"))
            campaign = f"spring-{article % 97}"
            query = (
                "?utm_source=newsletter&amp;utm_medium=email"
                f"&amp;utm_campaign={campaign}&amp;{other}"
            )
        loc = f"{base}/{path}{query}"
        block = ["  <url>"]
        if rng.random() < 0.005:
            block.append(f"    <loc>\n      {loc}\n    </loc>")
        else:
            block.append(f"    <loc>{loc}</loc>")
        ts = 1_600_000_000 + rng.randrange(150_000_000)
        form = rng.random()
        if form < 0.3:
            lastmod = time.strftime("%Y-%m-%d", time.gmtime(ts))
        elif form < 0.8:
            lastmod = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(ts))
        elif form < 0.9:
            lastmod = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + f".{ts % 1000:03d}Z"
        else:
            lastmod = time.strftime("%Y-%m-%dT%H:%M:%S+02:00", time.gmtime(ts))
        block.append(f"    <lastmod>{lastmod}</lastmod>")
        if rng.random() < 0.5:
            block.append(f"    <changefreq>{rng.choice(CHANGEFREQS)}</changefreq>")
        block.append(f"    <priority>{rng.randrange(1, 11) / 10:.1f}</priority>")
        if rng.random() < 0.10:
            lang = _LANGS[rng.randrange(len(_LANGS))]
            block.append(f'    <xhtml:link rel="alternate" hreflang="en" href="{loc}"/>')
            block.append(
                f'    <xhtml:link rel="alternate" hreflang="{lang}" href="{base}/{lang}/{path}"/>'
            )
            expected += 1
        if rng.random() < 0.15:
            block.append(
                "    <image:image>\n"
                f"      <image:loc>{base}/wp-content/uploads/{2019 + article % 6}/"
                f"{article % 12 + 1:02d}/{words[0]}-{article}.jpg</image:loc>\n"
                "    </image:image>"
            )
        if rng.random() < 0.03:
            day = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))
            title = " ".join(words).capitalize().replace("&", "and")
            block.append(
                "    <news:news>\n      <news:publication>\n"
                "        <news:name>The Example Times</news:name>\n"
                "        <news:language>en</news:language>\n      </news:publication>\n"
                f"      <news:publication_date>{day}</news:publication_date>\n"
                f"      <news:title>{title}</news:title>\n    </news:news>"
            )
        block.append("  </url>")
        lines.append("\n".join(block))
    lines.append("</urlset>\n")
    return "\n".join(lines), expected


# --------------------------------------------------------------------------
# Loopback server
# --------------------------------------------------------------------------


class QuietHandler(SimpleHTTPRequestHandler):
    """Static files; ``.gz`` as opaque gzip bytes (no Content-Encoding)."""

    def guess_type(self, path: str | os.PathLike[str]) -> str:
        """Sitemaps are served the way most sites serve ``.xml.gz`` files."""
        path = str(path)
        if path.endswith(".gz"):
            return "application/x-gzip"
        if path.endswith(".xml"):
            return "application/xml"
        return super().guess_type(path)

    def log_message(self, *args: object) -> None:
        """Keep per-request noise off the benchmark output."""


def bind_server(root: Path) -> ThreadingHTTPServer:
    """Bind 127.0.0.1:0 *before* generating, so URLs can embed the port."""
    handler = functools.partial(QuietHandler, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    return server


# --------------------------------------------------------------------------
# Running contenders
# --------------------------------------------------------------------------


@dataclass
class Result:
    """One contender's outcome; ``error`` is set when it did not succeed."""

    name: str
    ok: bool = False
    urls: int = 0
    seconds: float = 0.0
    urls_per_s: float = 0.0
    peak_rss_mb: float = 0.0
    cpu_seconds: float = 0.0
    complete: bool = False
    returncode: int | None = None
    error: str | None = None
    cmd: list[str] = field(default_factory=list)
    log: str | None = None


def run_measured(
    cmd: list[str], cwd: Path, log_path: Path, timeout: float
) -> tuple[int, float, float, bool, float]:
    """Run ``cmd``; return (exit code, wall seconds, peak RSS MB, timed out, CPU seconds).

    Peak RSS is the larger of two figures: ``os.wait4`` on this very child (the
    kernel returns the child's own ``ru_maxrss``, max'd with that of any
    descendants it reaped, never their sum), and the peak of the RSS *summed over
    the child and its descendants*, sampled every 20 ms from ``/proc`` — so a
    contender that spreads its work over processes (ours: a sitemap worker) pays
    for all of them. The sum counts shared pages (the interpreter, libraries)
    once per process: an upper bound.  ``getrusage(RUSAGE_CHILDREN)`` would not
    do: its maxrss is the max over *all* reaped children so far.  Wall time
    includes interpreter start-up and imports, as a user would experience.
    CPU seconds (user + system) are ``wait4``'s for the child, which on Linux include
    the descendants it reaped (ours: the sitemap worker): what load on a shared machine
    distorts least.
    """
    env = {
        k: v for k, v in os.environ.items() if not k.upper().startswith(("SCRAPY_", "PYTHONPATH"))
    }
    env |= {"NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
    env["PYTHONUNBUFFERED"] = "1"
    with open(log_path, "wb") as log:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        timed_out = threading.Event()

        def _kill() -> None:
            timed_out.set()
            with contextlib.suppress(ProcessLookupError):
                proc.kill()

        timer = threading.Timer(timeout, _kill)
        timer.start()
        sampler = TreeRss(proc.pid)
        sampler.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:
            _kill()
            os.waitpid(proc.pid, 0)
            raise
        finally:
            timer.cancel()
            sampler.stop()
        seconds = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)  # already reaped: tell Popen
    peak_mb = max(usage.ru_maxrss / 1024, sampler.peak_kb / 1024)
    cpu = usage.ru_utime + usage.ru_stime
    return proc.returncode, seconds, peak_mb, timed_out.is_set(), cpu


class TreeRss(threading.Thread):
    """Samples the RSS summed over a process and its descendants (Linux ``/proc``)."""

    def __init__(self, pid: int, interval: float = 0.02):
        super().__init__(daemon=True)
        self.pid = pid
        self.interval = interval
        self.peak_kb = 0
        self._done = threading.Event()

    def stop(self) -> None:
        self._done.set()
        self.join()

    def run(self) -> None:
        while not self._done.is_set():
            self.peak_kb = max(self.peak_kb, sum(_rss_kb(p) for p in _tree(self.pid)))
            self._done.wait(self.interval)


def _tree(pid: int) -> list[int]:
    pids, i = [pid], 0
    while i < len(pids):
        try:
            for task in os.listdir(f"/proc/{pids[i]}/task"):
                with open(f"/proc/{pids[i]}/task/{task}/children") as fh:
                    pids.extend(int(c) for c in fh.read().split())
        except OSError:
            pass  # gone (or not Linux): counted by wait4 alone
        i += 1
    return pids


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def count_lines(path: Path) -> int:
    """Count JSONL records in bounded memory."""
    if not path.exists():
        return 0
    n = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            n += chunk.count(b"\n")
    return n


def tail(path: Path, lines: int = 15) -> str:
    """Last lines of a log, for the failure message."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def ensure_peers_venv() -> Path:
    """Create ``bench/.venv-peers`` with usp pinned, once; return its python."""
    py = PEERS_VENV / "bin" / "python"
    probe = "import importlib.metadata as m; print(m.version('ultimate-sitemap-parser'))"
    if py.exists():
        got = subprocess.run([py, "-c", probe], capture_output=True, text=True, check=False)
        if got.stdout.strip() == USP_VERSION:
            return py
    base = shutil.which("python3") or sys.executable
    print(
        f"[setup] creating {PEERS_VENV} with ultimate-sitemap-parser=={USP_VERSION}",
        flush=True,
    )
    subprocess.run([base, "-m", "venv", str(PEERS_VENV)], check=True)
    subprocess.run(
        [
            py,
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            f"ultimate-sitemap-parser=={USP_VERSION}",
        ],
        check=True,
    )
    return py


def contender_cmd(name: str, base: str, work: Path) -> tuple[list[str], Path, Path | None]:
    """Return (argv, cwd, JSONL output or None when the count is on stdout)."""
    quiet = ["-s", "TELNETCONSOLE_ENABLED=False", "-s", "REMOTE_CONTROL_ENABLED=False"]
    if name == "usp":
        py = ensure_peers_venv()
        return [str(py), str(BENCH_DIR / "usp_runner.py"), f"{base}/"], work, None
    if name == "stock":
        out = work / "stock.jsonl"
        cmd = [
            str(PROJECT_SCRAPY),
            "runspider",
            str(BENCH_DIR / "stock_sitemap_spider.py"),
        ]
        cmd += [
            "-a",
            f"url={base}/sitemap_index.xml",
            "-O",
            str(out),
            "-s",
            "LOG_LEVEL=INFO",
            *quiet,
        ]
        # cwd=work (no scrapy.cfg) so project settings cannot leak into the baseline.
        return cmd, work, out
    out = work / "ours.jsonl"
    cmd = [
        str(PROJECT_SCRAPY),
        "crawl",
        "discover",
        "-a",
        f"url={base}/sitemap_index.xml",
        # massive: the profile for 1M-10M URL trees (8 concurrent fetches, no interval).
        "-a",
        "profile=massive",
    ]
    cmd += [
        "-a",
        f"out={work / 'ours'}",
        "-O",
        str(out),
        "-s",
        "LOG_LEVEL=INFO",
        *quiet,
    ]
    return cmd, PROJECT_DIR, out


def median_run(runs: list[Result]) -> Result:
    """The median run by wall time (failed runs sort last)."""
    ordered = sorted(runs, key=lambda r: (not r.ok, r.seconds))
    ok = [r for r in ordered if r.ok]
    return ok[(len(ok) - 1) // 2] if ok else ordered[0]


def run_contender(name: str, base: str, work: Path, expected: int, timeout: float) -> Result:
    """Run one contender; any failure is recorded, never raised."""
    res = Result(name=name)
    log_path = work / f"{name}.log"
    res.log = str(log_path)
    try:
        cmd, cwd, out = contender_cmd(name, base, work)
    except (OSError, subprocess.CalledProcessError) as exc:
        res.error = f"setup failed: {exc}"
        return res
    res.cmd = cmd
    if name == "ours":
        # A first walk each time: a folder holding the previous run's state.json would make
        # this an incremental re-run (it loads the old state and reports what changed).
        shutil.rmtree(work / "ours", ignore_errors=True)
    print(f"[run] {name}: {' '.join(cmd)}", flush=True)
    rc, res.seconds, res.peak_rss_mb, timed_out, res.cpu_seconds = run_measured(
        cmd, cwd, log_path, timeout
    )
    res.returncode = rc
    if out is not None:
        res.urls = count_lines(out)
    else:
        for line in reversed(log_path.read_text(errors="replace").splitlines()):
            if line.startswith('{"urls"'):
                res.urls = json.loads(line)["urls"]
                break
    if timed_out:
        res.error = f"timed out after {timeout:.0f}s"
    elif rc != 0:
        res.error = f"exit code {rc}"
    elif res.urls == 0:
        res.error = "produced no URLs"
    res.ok = res.error is None
    res.complete = res.urls == expected
    res.urls_per_s = res.urls / res.seconds if res.seconds else 0.0
    if res.error:
        print(
            f"[run] {name} FAILED ({res.error}); log tail:\n{tail(log_path)}",
            flush=True,
        )
    return res


# --------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------


def compute_ratios(results: dict[str, Result]) -> list[dict[str, object]]:
    """Ratios vs targets; PASS needs both sides OK and ours complete."""
    rows = []
    for label, num, den, metric, target, higher in TARGETS:
        row: dict[str, object] = {
            "ratio": label,
            "target": target,
            "higher_is_better": higher,
        }
        a, b = results.get(num), results.get(den)
        if not (a and b and a.ok and b.ok and getattr(b, metric)):
            row |= {"value": None, "verdict": "n/a"}
        else:
            value = getattr(a, metric) / getattr(b, metric)
            met = value >= target if higher else value <= target
            verdict = "PASS" if met and a.complete else "MISS"
            row |= {"value": round(value, 3), "verdict": verdict}
            if not a.complete:
                row["note"] = f"{num} found {a.urls} URLs, not all"
        rows.append(row)
    return rows


def print_report(
    results: dict[str, Result], ratios: list[dict[str, object]], expected: int
) -> None:
    """Human-readable table; the JSON file carries the same numbers."""
    print(f"\nExpected URLs: {expected:,}")
    head = f"{'contender':<10} {'URLs found':>12} {'seconds':>9} {'URLs/s':>11}"
    head += f" {'peak RSS MB':>12} {'CPU s':>7}  status"
    print(head)
    print("-" * len(head))
    for r in results.values():
        status = "ok" if r.ok else f"FAILED: {r.error}"
        if r.ok and not r.complete:
            status = "ok (incomplete)" if r.urls < expected else "ok (duplicates?)"
        print(
            f"{r.name:<10} {r.urls:>12,} {r.seconds:>9.2f} {r.urls_per_s:>11,.0f}"
            f" {r.peak_rss_mb:>12.1f} {r.cpu_seconds:>7.2f}  {status}"
        )
    print()
    for row in ratios:
        op = ">=" if row["higher_is_better"] else "<="
        value = "n/a" if row["value"] is None else f"{row['value']:.2f}x"
        note = f"  ({row['note']})" if "note" in row else ""
        print(
            f"{row['ratio']:<20} {value:>9}  target {op} {row['target']}x  {row['verdict']}{note}"
        )


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """CLI flags; defaults give the 1M-URL configuration."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--children", type=int, default=20, help="child sitemaps (default 20)")
    p.add_argument("--per-child", type=int, default=50_000, help="URLs per child (default 50000)")
    p.add_argument("--only", default=",".join(CONTENDERS), help="comma list of: ours,usp,stock")
    p.add_argument("--json", type=Path, help="write results as JSON here")
    p.add_argument(
        "--timeout",
        type=float,
        default=1800,
        help="seconds per contender (default 1800)",
    )
    p.add_argument("--seed", type=int, default=1, help="RNG seed for the generated tree")
    p.add_argument(
        "--tree",
        choices=("clean", "realistic", "questions"),
        default="clean",
        help="clean: one plain shape; realistic: alternates, queries, extensions, deep and"
        " non-ASCII paths, malformed entries; questions: /questions/<id>/<slug>, a parent"
        " folder per URL (default clean)",
    )
    p.add_argument(
        "--repeat", type=int, default=3, help="runs per contender, median reported (default 3)"
    )
    p.add_argument("--keep", action="store_true", help="keep the temp dir (tree, outputs, logs)")
    args = p.parse_args(argv)
    args.only = [c.strip() for c in args.only.split(",") if c.strip()]
    if bad := set(args.only) - set(CONTENDERS):
        p.error(f"unknown contender(s): {', '.join(sorted(bad))}")
    if args.children < 1 or args.per_child < 1:
        p.error("--children and --per-child must be >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    """Generate, serve, run, report, clean up; exit 1 if a contender failed."""
    args = parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="bench-sitemap-"))
    site, work = tmp / "site", tmp / "work"
    site.mkdir()
    work.mkdir()
    server = bind_server(site)
    thread = None
    # A SIGTERM should clean up like Ctrl-C does.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        host, port = server.server_address[:2]
        base = f"http://{host}:{port}"
        t0 = time.perf_counter()
        expected = generate_tree(site, base, args.children, args.per_child, args.seed, args.tree)
        gz_mb = sum(f.stat().st_size for f in site.glob("*.gz")) / 2**20
        print(
            f"[gen] {args.tree} tree: {expected:,} URLs in {args.children} children"
            f" ({gz_mb:.1f} MB gzipped) "
            f"in {time.perf_counter() - t0:.1f}s; serving {base}/ from {site}",
            flush=True,
        )
        thread = threading.Thread(target=server.serve_forever, name="sitemap-server", daemon=True)
        thread.start()

        # Contenders take turns (ours, usp, stock, ours, ...) so slow phases of the machine
        # hit all of them alike; each is reported by its median run (by wall time).
        runs: dict[str, list[Result]] = {name: [] for name in args.only}
        for turn in range(args.repeat):
            for name in args.only:
                if turn and runs[name] and not runs[name][-1].ok:
                    continue  # a failed contender is not retried
                runs[name].append(run_contender(name, base, work, expected, args.timeout))
        results = {name: median_run(rs) for name, rs in runs.items()}
        if args.repeat > 1:
            for name, rs in runs.items():
                times = ", ".join(f"{r.seconds:.2f} ({r.cpu_seconds:.1f} CPU)" for r in rs)
                print(f"[runs] {name}: {times} s (median reported)", flush=True)
        ratios = compute_ratios(results)
        print_report(results, ratios, expected)
        if args.json:
            if not args.keep:  # logs are deleted below; don't point at them
                for r in results.values():
                    r.log = None
            payload = {
                "config": {
                    "children": args.children,
                    "per_child": args.per_child,
                    "expected_urls": expected,
                    "seed": args.seed,
                    "tree": args.tree,
                    "usp_version": USP_VERSION,
                    "cpus": os.cpu_count(),
                    "python": sys.version.split()[0],
                },
                "results": {k: asdict(v) for k, v in results.items()},
                "ratios": ratios,
            }
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(payload, indent=2) + "\n")
            print(f"\n[json] {args.json}")
        return 0 if all(r.ok for r in results.values()) else 1
    finally:
        if thread is not None:
            server.shutdown()
        server.server_close()
        if args.keep:
            print(f"[keep] {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
