"""Bad input for the link crawl (issue 4, "Bad input" and point 6), end to end: the real
``links`` spider (``scrapy crawl links``) against a scriptable loopback server whose routes
are redirect loops, a 10 MB page, 50,000 and 200,000 links, a calendar trap, malformed HTML, odd
robots.txt files and a JavaScript shell. Every crawl must finish well within its timeout,
with no traceback, and say in its records and crawl log what happened."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from discovery_crawler import settings as project_settings
from tests.conftest import ROOT, CrawlResult, run_discover, ssrf_allow
from tests.e2e.test_robots_middleware import Server
from tests.refusal_site import RefusalSite
from tests.test_rendering import require_browser

HTML = {"Content-Type": "text/html; charset=utf-8"}
Route = tuple[int, bytes, dict[str, str], float]


def page(links: list[str], title: str = "Page", filler: bytes = b"") -> Route:
    anchors = "".join(f'<a href="{h}">{h}</a>' for h in links).encode()
    body = b"<html><head><title>" + title.encode() + b"</title></head><body>"
    return 200, body + anchors + filler + b"</body></html>", HTML, 0.0


def redirect(to: str) -> Route:
    return 302, b"", {"Location": to}, 0.0


NOT_FOUND: Route = (404, b"not found", {"Content-Type": "text/plain"}, 0.0)


class Routes(dict):
    """Fixed routes, then ``dynamic(path)`` (a handler that makes pages up), then 404.
    ``Server`` asks ``routes.get(path, default)``."""

    def __init__(
        self, fixed: dict[str, Route], dynamic: Callable[[str], Route | None] | None = None
    ):
        super().__init__(fixed)
        self.dynamic = dynamic

    def get(self, path: str, default: Any = None) -> Route:
        if path in self:
            return self[path]
        made = self.dynamic(path) if self.dynamic else None
        return made if made is not None else NOT_FOUND


@pytest.fixture
def site() -> Iterator[Callable[..., Server]]:
    servers: list[Server] = []

    def start(
        fixed: dict[str, Route], dynamic: Callable[[str], Route | None] | None = None
    ) -> Server:
        servers.append(Server(Routes(fixed, dynamic)))
        return servers[-1]

    yield start
    for server in servers:
        server.httpd.shutdown()
        server.httpd.server_close()


def crawl(
    tmp_path: Path,
    url: str,
    *args: str,
    timeout: float = 60,
    allowed_errors: tuple[str, ...] = (),
    spider: str = "links",
    code: int = 0,
    command: list[str] | None = None,
    **settings: Any,
) -> tuple[CrawlResult, float]:
    """``scrapy crawl links`` (or ``spider``; HOST_INTERVAL=0; ``command`` instead of
    ``python -m scrapy``); asserts it finished in time, exit ``code`` (5: a budget stopped
    it), no traceback, no ERROR line but those ending as ``allowed_errors`` say. Returns the
    result and the seconds it took."""
    started = time.monotonic()
    result = run_discover(
        url, tmp_path, *args, spider=spider, settings=settings, timeout=timeout, command=command
    )
    elapsed = time.monotonic() - started
    assert elapsed < timeout
    assert result.returncode == code, result.stderr[-3000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    errors = [line for line in result.stderr.splitlines() if " ERROR: " in line]
    assert [e for e in errors if not e.endswith(allowed_errors)] == [], errors
    return result, elapsed


def pages(server: Server) -> list[str]:
    """Paths the server was asked for, robots.txt left out."""
    return [p for p in server.log if p != "/robots.txt"]


def by_path(result: CrawlResult, server: Server) -> dict[str, dict[str, Any]]:
    return {r["url"][len(server.origin) :]: r for r in result.records}


def crawl_peak_mb(result: CrawlResult) -> float:
    """The crawl's own peak RSS (``tests/probes/peak_rss.py``), in MB."""
    [line] = [line for line in result.stderr.splitlines() if line.startswith("peak_rss_kb=")]
    return int(line.partition("=")[2]) / 1024


PEAK_RSS = [sys.executable, str(ROOT / "tests" / "probes" / "peak_rss.py")]


# -- 1. redirect loops and long chains ------------------------------------------------------


def test_redirect_loops_and_a_30_hop_chain(site, tmp_path):
    """/a → /b → /a, /c → /c and /r/0 → … → /r/30: the crawl finishes; each URL is fetched
    once (the seen-set stops a loop; the spider follows redirects itself); the loop pages
    are flagged ``redirect_loop``; the chain stops after REDIRECT_MAX_TIMES (20) hops and
    the next target is recorded ``over_max_redirects``, not fetched."""
    chain = {f"/r/{i}": redirect(f"/r/{i + 1}") for i in range(30)}
    server = site(
        {
            "/": page(["/a", "/c", "/r/0"]),
            "/a": redirect("/b"),
            "/b": redirect("/a"),
            "/c": redirect("/c"),
            "/r/30": page([], "End of the chain"),
            **chain,
        }
    )
    result, _ = crawl(tmp_path, server.origin + "/", timeout=60)
    fetched = pages(server)
    assert len(fetched) == len(set(fetched))  # nothing fetched twice
    assert {"/a", "/b", "/c"} <= set(fetched)
    assert [p for p in fetched if p.startswith("/r/")] == [f"/r/{i}" for i in range(21)]
    recs = by_path(result, server)
    assert recs["/b"]["flags"] == ["redirect_loop"] and recs["/b"]["status"] == 302
    assert recs["/c"]["flags"] == ["redirect_loop"]
    assert recs["/a"]["flags"] is None  # /a → /b is no loop yet; /b → /a closes it
    assert recs["/r/21"]["status"] is None and recs["/r/21"]["flags"] == ["over_max_redirects"]
    assert "/r/22" not in recs
    crawl_log = result.discovery["crawl"]
    assert crawl_log["not_fetched"] == {"over_max_redirects": 1}
    hops = {(i["url"][len(server.origin) :], i["to"]) for i in crawl_log["redirects"]["items"]}
    assert {("/a", "/b"), ("/b", "/a"), ("/c", "/c"), ("/r/20", "/r/21")} <= hops
    limit = {"limit": "REDIRECT_MAX_TIMES", "value": 20, "url": server.origin + "/r/0"}
    assert limit in result.discovery["limits"]
    assert "Redirect chain from " + server.origin + "/r/0 is 21 hops long" in result.stderr


# -- 2. a 10 MB page ------------------------------------------------------------------------


def big_page(size: int) -> Route:
    """A page of ``size`` bytes: a link at the top, filler, a link at the very end."""
    status, head, headers, delay = page(["/top"], "Big page")
    filler = b"<p>" + b"lorem ipsum dolor sit amet " * 40 + b"</p>\n"
    body = head[: -len(b"</body></html>")]
    tail = b'<a href="/bottom">bottom</a></body></html>'
    body += filler * ((size - len(body) - len(tail)) // len(filler))
    body += b" " * (size - len(body) - len(tail)) + tail
    assert len(body) == size
    return status, body, headers, delay


def test_a_10_mb_page_is_read_whole_under_the_page_cap(site, tmp_path):
    """10 MB is under PAGE_MAX_BYTES (15 MiB, as Googlebot): the page is parsed whole (the
    link at its very end is followed), recorded with its title, in bounded time and
    memory."""
    server = site({"/": page(["/big"]), "/big": big_page(10_000_000)})
    result, elapsed = crawl(tmp_path, server.origin + "/", timeout=60, command=PEAK_RSS)
    assert {"/big", "/top", "/bottom"} <= set(pages(server))
    big = by_path(result, server)["/big"]
    assert (big["status"], big["title"], big["flags"]) == (200, "Big page", None)
    assert result.discovery["crawl"]["truncated"]["count"] == 0
    assert elapsed < 30
    assert crawl_peak_mb(result) < 400  # this crawl's own (its process tree's) peak


@pytest.mark.parametrize(
    ("spider", "args"),
    [("links", ()), ("discover", ("-a", "mode=links"))],
    ids=["links", "discover-mode-links"],
)
def test_a_page_over_the_cap_is_parsed_in_part_and_flagged(site, tmp_path, spider, args):
    """PAGE_MAX_BYTES=1 MB: reading stops there; the page is still recorded (status, title,
    flag ``truncated``), its early links followed, the one past the cap never seen; the
    crawl log lists it and names the limit. The same under ``discover -a mode=links``."""
    server = site({"/": page(["/big"]), "/big": big_page(10_000_000)})
    result, _ = crawl(tmp_path, server.origin + "/", *args, spider=spider, PAGE_MAX_BYTES=1_000_000)
    fetched = pages(server)
    assert "/top" in fetched and "/bottom" not in fetched
    big = by_path(result, server)["/big"]
    assert (big["status"], big["title"], big["flags"]) == (200, "Big page", ["truncated"])
    truncated = result.discovery["crawl"]["truncated"]
    assert truncated["count"] == 1
    [item] = truncated["items"]
    assert item["url"] == server.origin + "/big"
    assert 1_000_000 < item["bytes_read"] < 2_000_000  # stopped within a chunk or so
    assert {"limit": "PAGE_MAX_BYTES", "value": 1_000_000} in result.discovery["limits"]
    assert "is larger than PAGE_MAX_BYTES (1000000): parsed its first" in result.stderr


# -- 3. a page with 50,000 links, and one with 200,000 ---------------------------------------


def test_50000_links_stay_within_max_pages(site, tmp_path):
    """max_pages=100: exactly 100 pages requested; the other 49,900 links are recorded
    ``over_max_pages`` (one record each), quickly — the per-link admission path is a
    hash probe and a record, never a Request."""
    links = [f"/p/{i}" for i in range(50_000)]
    server = site(
        {"/": page(links)},
        lambda path: page(["/"], path) if path.startswith("/p/") else None,
    )
    result, elapsed = crawl(
        tmp_path, server.origin + "/", "-a", "max_pages=100", timeout=90, code=5
    )
    assert len(pages(server)) == 100
    crawl_log = result.discovery["crawl"]
    assert (crawl_log["requested"], crawl_log["fetched"]) == (100, 100)
    assert crawl_log["not_fetched"] == {"over_max_pages": 49_901}
    over = [r for r in result.records if r.get("flags") == ["over_max_pages"]]
    assert len(over) == 49_901 and all(r["status"] is None for r in over)
    assert len(result.records) == 50_001
    assert {"limit": "BFS_MAX_PAGES", "value": 100, "given": "max_pages"} in (
        result.discovery["limits"]
    )
    assert elapsed < 60


@pytest.mark.parametrize(
    ("args", "records", "fetched"),
    [
        (("-a", "max_pages=100"), 200_001, 100),
        # one invocation, not chunks of 10 (MAX_CHUNK_PAGES: tests/e2e/test_service.py)
        (("-a", "profile=service", "-s", "MAX_CHUNK_PAGES=0"), 1_000, 500),
    ],
    ids=["default-max-pages-100", "service"],
)
def test_a_page_of_200000_links_in_bounded_memory(site, tmp_path, args, records, fetched):
    """One page of 200,000 links (7 MB). Its links are read, admitted and written a batch
    at a time, so the crawl's peak RSS stays far below the 520 MB it took when a page's
    records (and lxml's tree of its links) were held at once. With max_pages=100 every
    link is still recorded (199,901 ``over_max_pages``); profile ``service`` reads the
    first LINKS_PER_PAGE_MAX (1,000) links of a page and drops the 199,000 others —
    counted, the page flagged ``links_capped``, the crawl log and the summary saying so —
    and records 1,000 URLs at most (LINKS_MAX_URLS)."""
    links = [f"/p/{i}" for i in range(200_000)]
    server = site(
        {"/": page(links, "Hub")},
        lambda path: page(["/"], path) if path.startswith("/p/") else None,
    )
    # The SSRF guard of profile service refuses loopback: the tests' allow-list opens it.
    allow = ssrf_allow(server.origin) if "profile=service" in args else {}
    result, elapsed = crawl(
        tmp_path, server.origin + "/", *args, timeout=120, command=PEAK_RSS, code=5, **allow
    )
    assert crawl_peak_mb(result) < 200
    assert elapsed < 90
    assert len(result.records) == records
    crawl_log = result.discovery["crawl"]
    assert crawl_log["fetched"] == fetched
    hub = by_path(result, server)["/"]
    if "profile=service" in args:
        assert hub["flags"] == ["links_capped"]
        assert crawl_log["links_dropped"] == 199_000
        assert crawl_log["links_capped"]["items"] == [
            {"url": server.origin + "/", "links": 200_000, "followed": 1_000, "dropped": 199_000}
        ]
        assert {"limit": "LINKS_PER_PAGE_MAX", "value": 1_000} in result.discovery["limits"]
        assert "Links not read (LINKS_PER_PAGE_MAX): 199,000 on 1 page(s)" in result.stderr
        # LINKS_MAX_URLS (1,000): the hub and 999 of its links recorded, the last one not
        assert crawl_log["not_fetched"] == {"over_max_pages": 500}
        assert {"limit": "LINKS_MAX_URLS", "value": 1_000, "kept": 1_000, "seen": 1_001} in (
            result.discovery["limits"]
        )
    else:
        assert hub["flags"] is None and crawl_log["links_dropped"] == 0
        assert crawl_log["not_fetched"] == {"over_max_pages": 199_901}


# -- 4. a calendar trap ---------------------------------------------------------------------


def calendar(path: str) -> Route | None:
    """/calendar?month=N links to ?month=N+1, forever."""
    if not path.startswith("/calendar?month="):
        return None
    month = int(path.rpartition("=")[2])
    return page([f"/calendar?month={month + 1}"], f"Month {month}")


@pytest.mark.parametrize(
    ("args", "fetched", "limit", "reason"),
    [
        (
            ("-a", "max_pages=40"),
            40,
            {"limit": "BFS_MAX_PAGES", "value": 40, "given": "max_pages"},
            "over_max_pages",
        ),
        (
            ("-a", "max_depth=25"),
            26,
            {"limit": "BFS_MAX_DEPTH", "value": 25, "given": "max_depth"},
            "over_max_depth",
        ),
        (
            ("-a", "profile=sample"),
            4,
            {"limit": "BFS_MAX_DEPTH", "value": 3, "given": "BFS_MAX_DEPTH"},
            "over_max_depth",
        ),
    ],
    ids=["max_pages", "max_depth", "profile-sample"],
)
def test_calendar_trap_is_stopped_by_a_budget(site, tmp_path, args, fetched, limit, reason):
    """An endless calendar: the budget named stops it; the next month is recorded with the
    budget as its flag, and the crawl log names the bound limit."""
    server = site({"/": page(["/calendar?month=1"])}, calendar)
    result, _ = crawl(tmp_path, server.origin + "/", *args, timeout=60, code=5)
    got = pages(server)
    assert len(got) == fetched  # the home page and fetched-1 months, then the budget
    last = fetched - 1
    assert got[-1] == f"/calendar?month={last}"
    assert result.discovery["limits"] == [limit]
    assert result.discovery["crawl"]["not_fetched"] == {reason: 1}
    nxt = by_path(result, server)[f"/calendar?month={last + 1}"]
    assert nxt["flags"] == [reason] and nxt["status"] is None


# -- 5. malformed HTML ----------------------------------------------------------------------

LONG = "/" + "x" * 10_000
BAD_LINKS = (
    '<html><head><title>Bad links</title></head><body><div><p><a href="javascript:void(0)">js'
    '</a><a href="mailto:a@example.org">mail</a><a href="http://[::1">v6</a>'
    f'<a href="{LONG}">long</a><a href="/ok-links">ok<table><tr><td>unclosed'
).encode()
MALFORMED = {
    "/": page(["/unclosed", "/binary", "/latin", "/badenc", "/links"], "Home"),
    "/unclosed": (
        200,
        b"<html><head><title>Unclosed</title><body><div><p><a href='/ok-unclosed'>x<div><b><i>",
        HTML,
        0.0,
    ),
    "/binary": (200, bytes(range(256)) * 400, {"Content-Type": "text/html"}, 0.0),
    "/latin": (  # says UTF-8, is Latin-1
        200,
        "<title>Café</title><a href='/ok-latin'>café</a>".encode("latin-1"),
        HTML,
        0.0,
    ),
    "/badenc": (
        200,
        b"<title>Bad charset</title><a href='/ok-badenc'>x</a>\xff\xfe\xc3",
        {"Content-Type": "text/html; charset=no-such-charset"},
        0.0,
    ),
    "/links": (200, BAD_LINKS, HTML, 0.0),
}


def test_malformed_html_is_recorded_and_bad_links_counted(site, tmp_path):
    """Unclosed tags, binary garbage served as text/html, a body that lies about its
    charset, an unknown charset; javascript:/mailto: links skipped, an unparsable
    ``http://[::1`` and a 10,000-character href counted malformed (never requested, never
    recorded): every page recorded, no traceback, no error line."""
    server = site(MALFORMED, lambda path: page([], path) if path.startswith("/ok-") else None)
    result, _ = crawl(tmp_path, server.origin + "/", timeout=60)
    recs = by_path(result, server)
    for path in MALFORMED:
        assert recs[path]["status"] == 200, path
    assert recs["/unclosed"]["title"] == "Unclosed"
    assert recs["/binary"]["title"] is None
    assert recs["/latin"]["title"].startswith("Caf")
    assert recs["/badenc"]["title"] == "Bad charset"
    assert recs["/links"]["title"] == "Bad links"
    # the good links on the bad pages are followed
    for ok in ("/ok-unclosed", "/ok-latin", "/ok-badenc", "/ok-links"):
        assert ok in pages(server) and recs[ok]["found_on"] is not None, ok
    crawl_log = result.discovery["crawl"]
    assert crawl_log["malformed_links"] == 2  # http://[::1 and the 10,000-char href
    assert crawl_log["requested"] == crawl_log["fetched"] == len(pages(server))
    assert not any(p.startswith("/xxx") for p in server.log)
    assert not any(len(r["url"]) > 2083 for r in result.records)
    assert not any(r["url"].startswith(("javascript:", "mailto:")) for r in result.records)


# -- 6. odd robots.txt files ----------------------------------------------------------------


def test_a_1_mb_robots_txt_is_parsed_up_to_robots_max_bytes(site, tmp_path):
    """A rule in the first 500 KiB binds; one past ROBOTS_MAX_BYTES does not (as Google):
    /early is not fetched (recorded ``robots_disallowed``), /late is; the crawl log's
    robots_policy says the file was truncated."""
    head = b"User-agent: *\nDisallow: /early\n"
    filler = b"# " + b"x" * 97 + b"\n"
    body = head + filler * 7_000 + b"User-agent: *\nDisallow: /late\n"
    body += filler * ((1_048_576 - len(body)) // len(filler))
    assert len(body) > 1_000_000
    robots = (200, body, {"Content-Type": "text/plain"}, 0.0)
    server = site({"/robots.txt": robots, "/": page(["/early", "/late"])})
    result, _ = crawl(tmp_path, server.origin + "/", timeout=60)
    fetched = pages(server)
    assert "/late" in fetched and "/early" not in fetched
    assert by_path(result, server)["/early"]["flags"] == ["robots_disallowed"]
    policy = result.discovery["robots_policy"]["policies"][server.origin]
    assert policy["outcome"] == "parsed" and policy["truncated"] is True
    assert policy["parsed_bytes"] <= policy["max_bytes"] == 500 * 1024
    assert policy["rules"] == ["Disallow: /early"]
    assert server.log.count("/robots.txt") == 1


def test_a_binary_garbage_robots_txt_means_no_rules(site, tmp_path):
    """robots.txt of binary garbage (served 200): parsed as no rules, so everything is
    allowed — and the crawl log's robots_policy says parsed, with no rules."""
    garbage = bytes(range(256)) * 64 + b"\x00\xff\xfe\xfd" * 1000
    server = site(
        {
            "/robots.txt": (200, garbage, {"Content-Type": "text/plain"}, 0.0),
            "/": page(["/one", "/two"]),
        }
    )
    result, _ = crawl(tmp_path, server.origin + "/", timeout=60)
    assert {"/", "/one", "/two"} <= set(pages(server))
    policy = result.discovery["robots_policy"]["policies"][server.origin]
    assert (policy["outcome"], policy["status"], policy["rules"]) == ("parsed", 200, [])
    assert result.discovery["robots_policy"]["disallowed"]["count"] == 0


# -- 7. rendering with the real links spider (point 6) --------------------------------------


# The retry middleware logs its give-up on the site's 429 page at ERROR level, as Scrapy's.
BUSY = (f"/busy> (failed {project_settings.RETRY_TIMES + 1} times): 429 Unknown Status",)


@pytest.fixture
def js_site() -> Iterator[RefusalSite]:
    server = RefusalSite(slow_seconds=0).start()
    yield server
    server.stop()


def test_render_auto_follows_links_only_javascript_makes(js_site, tmp_path):
    """``-a render=auto``: /app/ is a JavaScript shell; it is rendered in Chromium and
    /only-js-1 and /only-js-2 (which exist only after its script runs) are fetched and
    recorded as links found on /app/."""
    require_browser()
    # MAX_RETRY_AFTER=0: the site's /busy answers 429 Retry-After: 120, which the throttle
    # would otherwise honour for the whole host (two minutes of politeness, not a hang).
    result, _ = crawl(
        tmp_path,
        js_site.url("/"),
        "-a",
        "render=auto",
        timeout=120,
        allowed_errors=BUSY,
        MAX_RETRY_AFTER=0,
    )
    paths = js_site.paths()
    assert "/only-js-1" in paths and "/only-js-2" in paths
    recs = {r["url"]: r for r in result.records}
    for path in ("/only-js-1", "/only-js-2"):
        rec = recs[js_site.url(path)]
        assert (rec["via"], rec["found_on"], rec["status"]) == ("link", js_site.url("/app/"), 200)
    assert recs[js_site.url("/app/")]["refusal"] is None
    assert result.run["refusals"]["render"] == {"mode": "auto", "requested": 1, "rendered": 1}


def test_render_never_reports_the_shell_and_misses_its_links(js_site, tmp_path):
    """``-a render=never``: /app/ is recorded as a ``shell`` refusal; its JavaScript-only
    links are never fetched."""
    result, _ = crawl(
        tmp_path,
        js_site.url("/"),
        "-a",
        "render=never",
        timeout=60,
        allowed_errors=BUSY,
        MAX_RETRY_AFTER=0,
    )
    assert not any(p.startswith("/only-js-") for p in js_site.paths())
    app = next(r for r in result.records if r["url"] == js_site.url("/app/"))
    assert app["refusal"]["class"] == "shell"
    assert not any("/only-js-" in r["url"] for r in result.records)
