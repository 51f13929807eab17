"""``scrapy sitemap DIR`` end to end: a union crawl, the sitemap set written from its
folder, served on loopback and given back to ``discover``: the URL set read back is
exactly the run's indexable set — on a hand-made site with one page per verdict, and on
two real sites. ultimate-sitemap-parser reads the same set (where ``bench/.venv-peers``
exists: ``bench/bench_sitemap.py`` creates it)."""

from __future__ import annotations

import gzip
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lxml import etree

from discovery_crawler.site_server import SiteServer, unpack_site
from tests.conftest import FIXTURES, IN_CI, ROOT, realdata, run_discover

SCHEMAS = FIXTURES / "sitemap_schema"
USP = ROOT / "bench" / ".venv-peers" / "bin" / "python"


def scrapy_sitemap(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "sitemap", str(folder), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def indexable(records: list[dict]) -> set[str]:
    return {r["url"] for r in records if r.get("indexability") == "indexable"}


def round_trip(
    server: SiteServer, root: Path, tmp_path: Path, *options: str, **settings
) -> tuple[set, set]:
    """Union crawl of ``server``; the sitemap written into the served ``root`` (under
    ``/sitemaps/``, with ``options`` for ``scrapy sitemap``); ``discover`` of the written
    index. (indexable set, set read back)."""
    crawl = run_discover(
        server.url("/"), tmp_path, "-a", "mode=union", settings=settings, feed=None
    )
    assert crawl.returncode == 0, crawl.stderr[-3000:]
    done = scrapy_sitemap(crawl.out, "-o", str(root / "sitemaps"), *options)
    assert done.returncode == 0, done.stderr
    assert "Sitemap: " in done.stdout
    parts = sorted((root / "sitemaps").glob("sitemap-*.xml*"))
    assert parts and all(
        p.name.endswith(".xml.gz" if "--gzip" in options else ".xml") for p in parts
    )
    xsd = etree.XMLSchema(etree.parse(str(SCHEMAS / "xhtml_link.xsd")))
    for part in parts:
        data = part.read_bytes()
        tree = etree.ElementTree(
            etree.fromstring(gzip.decompress(data) if "--gzip" in options else data)
        )
        assert xsd.validate(tree), xsd.error_log
    back = run_discover(
        server.url("/sitemaps/sitemap_index.xml"),
        tmp_path,
        "-a",
        "mode=sitemap",
        out=tmp_path / "back",
        feed="back.jsonl",
    )
    assert back.returncode == 0, back.stderr[-3000:]
    return indexable(crawl.records), set(back.urls)


def usp_urls(index_url: str) -> set[str] | None:
    if not USP.exists():
        if IN_CI:
            pytest.fail(f"{USP} missing: run bench/bench_sitemap.py once to create it")
        return None
    done = subprocess.run(
        [str(USP), str(ROOT / "bench" / "usp_sitemap_urls.py"), index_url],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout)["urls"])


@pytest.fixture
def indexing_site(tmp_path):
    root = tmp_path / "site"
    shutil.copytree(FIXTURES / "indexing_site", root)
    server = SiteServer(
        root,
        ["https://indexing.example"],
        headers={"/header-noindex/": {"X-Robots-Tag": "noindex"}},
    ).start()
    yield server, root
    server.stop()


def test_local_site_verdicts_and_round_trip(indexing_site, tmp_path):
    server, root = indexing_site
    wanted, back = round_trip(server, root, tmp_path / "run")
    u = server.url
    assert wanted == {u("/"), u("/a/"), u("/moved/"), u("/nofollow/"), u("/orphan/")}
    assert back == wanted
    # the crawl: flags, verdicts, the crawl log's lists and the summary's problem line
    crawl = json.loads((tmp_path / "run" / "out" / "_crawl-log.json").read_text())["runs"][-1]
    records = {
        r["url"]: r
        for r in map(
            json.loads, (tmp_path / "run" / "out" / "inventory.jsonl").read_text().splitlines()
        )
    }
    assert records[u("/noindex/")]["indexability"] == "noindex"
    assert "noindex" in records[u("/header-noindex/")]["flags"]  # X-Robots-Tag
    assert records[u("/agent-noindex/")]["flags"][:2] == ["noindex", "nofollow_page"]
    assert "nofollow_page" in records[u("/nofollow/")]["flags"]
    assert u("/secret/") not in records  # linked only from the nofollow page
    assert records[u("/canonical/")]["indexability"] == "canonical_elsewhere"
    assert records[u("/gone/")]["indexability"] == "status"
    assert records[u("/private/")]["indexability"] == "robots_disallowed"
    idx = crawl["indexability"]
    assert idx["noindex_pages"]["count"] == 3 and idx["nofollow_pages"]["count"] == 2
    assert idx["listed_not_indexable"]["reasons"] == {
        "noindex": 2,
        "robots_disallowed": 1,
        "canonical_elsewhere": 1,
        "status": 1,
    }
    # the changes against the site's own sitemap
    changes = (root / "sitemaps" / "changes.txt").read_text()
    assert f"+ {u('/nofollow/')}\n" in changes
    assert f"- {u('/header-noindex/')}\tnoindex\n" in changes
    part = (root / "sitemaps" / "sitemap-1.xml").read_text()
    assert 'hreflang="fr"' in part and "elsewhere.example" not in part  # same-site only
    # ultimate-sitemap-parser reads the same set
    theirs = usp_urls(server.url("/sitemaps/sitemap_index.xml"))
    if theirs is not None:
        assert theirs == wanted


def test_gzipped_set_round_trip(indexing_site, tmp_path):
    """``--gzip``: the parts are ``sitemap-N.xml.gz``, valid once unpacked, and read back
    (by ``discover`` and by ultimate-sitemap-parser) to the indexable set."""
    server, root = indexing_site
    wanted, back = round_trip(server, root, tmp_path / "run", "--gzip")
    assert len(wanted) == 5 and back == wanted
    theirs = usp_urls(server.url("/sitemaps/sitemap_index.xml"))
    if theirs is not None:
        assert theirs == wanted


def test_bad_input_is_one_line_and_exit_2(indexing_site, tmp_path):
    server, _ = indexing_site
    empty = scrapy_sitemap(tmp_path / "nothing")
    assert empty.returncode == 2 and empty.stderr.count("\n") == 1, empty.stderr
    crawl = run_discover(server.url("/"), tmp_path, "-a", "mode=union", feed=None)
    assert crawl.returncode == 0, crawl.stderr[-3000:]
    other = scrapy_sitemap(crawl.out, "--base", "https://cdn.example.net/maps/")
    assert other.returncode == 2
    assert "another origin" in other.stderr and other.stderr.count("\n") == 1
    allowed = scrapy_sitemap(
        crawl.out, "--base", "https://cdn.example.net/maps/", "--cross-origin", "--gzip"
    )
    assert allowed.returncode == 0, allowed.stderr
    index = (crawl.out / "sitemaps" / "sitemap_index.xml").read_text()
    assert "https://cdn.example.net/maps/sitemap-1.xml.gz" in index


@pytest.mark.parametrize(
    ("name", "rewrite"),
    [
        ("23people-handbook-mkdocs", ["https://23people.io"]),
        (
            "arhackintosh-wordpress",
            [
                "https://xn--mgbg4a8cpdl.com",
                "https://%D9%87%D8%A7%D9%83%D9%86%D8%AA%D9%88%D8%B4.com",
            ],
        ),
    ],
)
def test_real_site_round_trip(name, rewrite, tmp_path):
    root = unpack_site(realdata("sites", name, "site.tar.xz"), tmp_path / "site")
    server = SiteServer(root, rewrite).start()
    try:
        wanted, back = round_trip(server, root, tmp_path / "run", CONCURRENT_REQUESTS_PER_DOMAIN=16)
        assert len(wanted) > 100
        assert back == wanted
        theirs = usp_urls(server.url("/sitemaps/sitemap_index.xml"))
        if theirs is not None:
            assert theirs == wanted
    finally:
        server.stop()


def test_unwritable_output_is_exit_4(indexing_site, tmp_path):
    """An output folder that cannot be made (a file stands where its parent should be:
    unwritable for root too, so the test runs as any user): one line, exit 4."""
    server, _ = indexing_site
    crawl = run_discover(server.url("/"), tmp_path, "-a", "mode=union", feed=None)
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder")
    done = scrapy_sitemap(crawl.out, "-o", str(blocker / "s"))
    assert done.returncode == 4 and "cannot write" in done.stderr, done.stderr[-2000:]
    assert len(done.stderr.strip().splitlines()) == 1


def test_write_sitemap_at_the_end_of_a_run(indexing_site, tmp_path):
    """``-a write_sitemap=1``: the run's folder gets ``sitemaps/`` as ``scrapy sitemap``
    writes it, from the feed given with ``-O`` too."""
    server, _ = indexing_site
    crawl = run_discover(server.url("/"), tmp_path, "-a", "mode=union", "-a", "write_sitemap=1")
    assert crawl.returncode == 0, crawl.stderr[-3000:]
    assert "Sitemap: 5 URLs in 1 file(s)" in crawl.stdout + crawl.stderr
    part = (crawl.out / "sitemaps" / "sitemap-1.xml").read_text()
    assert part.count("<url>") == len(indexable(crawl.records)) == 5
    # the summary's problem line (issue 38.1), and the changes' counts (38.2)
    said = crawl.stdout + crawl.stderr
    problem = re.search(r"(\d+) sitemap URLs are not indexable: ([^(\n]+)", said)
    assert problem is not None, said[-3000:]
    assert problem.group(1) == "5"
    assert sorted(problem.group(2).strip().split(", ")) == [
        "1 canonical elsewhere",
        "1 robots disallowed",
        "1 status",
        "2 noindex",
    ]
    changes = (crawl.out / "sitemaps" / "changes.txt").read_text().splitlines()
    assert changes[0] == (
        "# Sitemap: 5 URLs in 1 file(s); against the site's sitemaps: 1 added, 5 dropped, 4 kept"
    )
    assert [line[0] for line in changes if not line.startswith("#")].count("-") == 5
    assert [line for line in changes if line.startswith("+ ")] == [f"+ {server.url('/nofollow/')}"]
