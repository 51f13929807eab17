"""One way to show a URL (issue 37.6) on a real Arabic-script site (360muslimexperts,
MANIFEST: a WordPress site whose post slugs are Urdu/Arabic): the end-of-run summary, the
report's text and ``scrapy report --tree`` show the letters; the feed and the report's
links keep the percent-encoded URL."""

from __future__ import annotations

import re
import subprocess
import sys

from discovery_crawler.site_server import unpack_site
from tests.conftest import ROOT, realdata

SLUG = "/%D8%AD%D8%AF%DB%8C%D8%AB-%D8%A7%D8%B1%D8%A8%D8%B9%DB%8C%D9%86-course/index.html"
SHOWN = "/حدیث-اربعین-course/index.html"


def test_arabic_paths_read_as_arabic_everywhere_a_person_reads(serve, discover, tmp_path):
    root = unpack_site(realdata("sites", "360muslimexperts", "site.tar.xz"), tmp_path / "site")
    server = serve(root, rewrite=["https://360muslimexperts.com"])
    result = discover(
        server.url("/"), "-a", "mode=sitemap", "-a", f"pages={server.url(SLUG)}", feed=None
    )
    assert result.returncode == 0, result.stderr[-3000:]
    summary = result.stderr[result.stderr.index("Summary") :]
    assert f"  - {SHOWN} (article)" in summary  # the page named in pages=
    assert "%D8" not in summary and "%D9" not in summary
    # the feed keeps the URL as it is requested
    urls = {r["url"] for r in result.records}
    assert server.url(SLUG) in urls
    assert sum("%D8" in u for u in urls) >= 5 and not any("حد" in u for u in urls)
    out = tmp_path / "out"
    html = (out / "report.html").read_text(encoding="utf-8")
    shown = re.sub(r"<script.*?</script>|<style.*?</style>", " ", html, flags=re.S)
    text = re.sub(r"<[^>]*>", " ", shown)  # what the page shows, not its attributes
    assert "حدیث-اربعین-course" in text and "%D8" not in text
    assert f'href="{server.url(SLUG)}"' in html  # links keep the encoded URL
    tree = subprocess.run(
        [sys.executable, "-m", "scrapy", "report", str(out), "--tree"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert tree.returncode == 0, tree.stderr
    assert "├── حدیث-اربعین-course  1" in tree.stdout or "└── حدیث-اربعین-course  1" in tree.stdout
    assert "%D8" not in tree.stdout
