"""List every URL of the project's real data that the junk table flags (SPEC §7), as Markdown.

What it reads, under ``../shared/realdata`` (or ``--realdata``):

- ``sitemaps/``: every file, gzip or not (by its magic bytes): each ``<loc>`` and every other
  ``http(s)://`` URL in it (alternates, image and news locations, text sitemaps, feeds);
- ``sites/*/site.tar.xz``: every file's path as the URL it is served at (``X/index.html`` is
  ``X/``), and every ``href`` of every HTML file, resolved against that page;
- everything else (``robots/``, ``urls/``, ``edgecases/``, gzip and tar.gz included): every
  ``http(s)://`` URL in it and every ``href`` of its HTML.

Each URL is normalized as the crawler does (``urls.normalize``, falling back to the raw text)
and its path goes through ``urls.junk.junk_pattern``. The output is one table row per flagged
path: the URL (the first when several name it), the pattern, where it was found, and the
verdict from ``VERDICTS`` below (``to judge`` for a URL nobody has looked at yet — look at
it, and either fix the table or add the verdict with why).

    .venv/bin/python scripts/junk_hits.py > junk-hits.md
    .venv/bin/python scripts/junk_hits.py --module path/to/old/junk.py   # another table

Runs in ~10 s (the site archives are read in memory, never extracted).
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import html
import importlib.util
import re
import sys
import tarfile
from collections import defaultdict
from pathlib import Path
from urllib.parse import quote, urljoin, urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from discovery_crawler.urls.normalize import UrlError, normalize  # noqa: E402

URL_RE = re.compile(rb"""https?://[^\s<>"'\\]+""")
HREF_RE = re.compile(rb"""href\s*=\s*["']([^"']*)["']""", re.IGNORECASE)

# host + path → (verdict, why). "junk", "real page" (then the table must be fixed), or "not a
# page" for a URL that is no page at all (a file the filter drops before the junk stage).
VERDICTS: dict[str, tuple[str, str]] = {
    "docs.128technology.com/blog/hello-world": (
        "junk",
        "Docusaurus v2's template blog post (with /blog/hola and /blog/welcome, tags "
        "docusaurus, facebook, hello, hola): sample content left in a docs site's build",
    ),
    "example.org/test": (
        "junk",
        "a URL-parser test vector (WPT urltestdata) on example.org: literally a test URL, "
        "no site's page",
    ),
    "www.example.com/tmp/null": (
        "junk",
        "a robots.txt conformance test URL (Google's stress tests) on example.com",
    ),
    "cached.blob.core.windows.net/tmp/sitemap_all_v2.xml": (
        "not a page",
        "the sitemap file Bing's robots.txt advertises, in a tmp/ folder: kind asset, "
        "dropped by the filter (reason asset) before the junk stage",
    ),
    "www.vrbo.com/vd2/temp/vrboserpindex.xml": (
        "not a page",
        "a sitemap file in vrbo's robots.txt, in a temp/ folder: kind asset, dropped by "
        "the filter before the junk stage",
    ),
}


def load_table(module: Path | None):
    """``junk_pattern`` of the project, or of another copy of ``urls/junk.py``."""
    if module is None:
        from discovery_crawler.urls.junk import junk_pattern

        return junk_pattern
    spec = importlib.util.spec_from_file_location("other_junk", module)
    assert spec is not None and spec.loader is not None
    other = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(other)
    return other.junk_pattern


def path_of(url: str) -> str:
    with contextlib.suppress(UrlError, ValueError):
        url = normalize(url)
    try:
        return urlsplit(url).path or "/"
    except ValueError:
        return url.split("?", 1)[0].split("#", 1)[0]


def host_path(url: str) -> str:
    try:
        parts = urlsplit(normalize(url))
    except (UrlError, ValueError):
        return url
    return parts.netloc + parts.path


def urls_in(data: bytes) -> list[str]:
    text = data.replace(b"&amp;", b"&")
    return [u.decode("utf-8", "replace").rstrip(".,;)") for u in URL_RE.findall(text)]


def hrefs_in(data: bytes, base: str) -> list[str]:
    out = []
    for raw in HREF_RE.findall(data):
        href = html.unescape(raw.decode("utf-8", "replace")).strip()
        if href and not href.startswith(("#", "mailto:", "tel:", "javascript:", "data:")):
            try:
                out.append(urljoin(base, href))
            except ValueError:
                continue
    return out


def unpacked(data: bytes) -> bytes:
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def scan(realdata: Path):
    """Yield (url, where) for every URL of the real data."""
    for file in sorted(p for p in realdata.rglob("*") if p.is_file()):
        rel = file.relative_to(realdata).as_posix()
        if rel.endswith((".tar.xz", ".tar.gz")):
            yield from scan_archive(file, rel)
            continue
        try:
            data = unpacked(file.read_bytes())
        except (OSError, EOFError, gzip.BadGzipFile):
            data = file.read_bytes()  # a truncated or broken gzip test file: as written
        for url in urls_in(data):
            yield url, rel
        if rel.endswith((".html", ".htm")):
            for url in hrefs_in(data, "https://edgecase.invalid/"):
                yield url, rel


def scan_archive(archive: Path, rel: str):
    site = archive.parent.name if rel.startswith("sites/") else rel
    origin = f"https://{site}.invalid"
    with tarfile.open(archive, "r:*") as tar:
        for member in tar:
            if not member.isfile():
                continue
            name = member.name.split("/", 1)[1] if "/" in member.name else member.name
            if rel.startswith("sites/"):
                path = "/" + name
                served = path[: -len("index.html")] if path.endswith("/index.html") else path
                yield origin + quote(served), f"{rel} (file)"
            data = tar.extractfile(member).read()  # type: ignore[union-attr]
            with contextlib.suppress(OSError, EOFError):
                data = unpacked(data)
            if name.endswith((".html", ".htm")) and rel.startswith("sites/"):
                for url in hrefs_in(data, origin + quote("/" + name)):
                    yield url, f"{rel} (href)"
            else:
                for url in urls_in(data):
                    yield url, f"{rel}:{name}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--realdata", type=Path, default=ROOT.parent / "shared" / "realdata")
    parser.add_argument("--module", type=Path, help="another urls/junk.py to run instead")
    args = parser.parse_args(argv)
    junk_pattern = load_table(args.module)
    hits: dict[tuple[str, str], dict[str, set[str]]] = {}
    paths = set()
    for url, where in scan(args.realdata):
        path = path_of(url)
        paths.add(path)
        found = junk_pattern(path)
        if found is not None:
            entry = hits.setdefault((path, found.name), defaultdict(set))
            entry["urls"].add(url)
            entry["where"].add(where)
    print(f"{len(paths):,} distinct paths scanned under {args.realdata}; {len(hits)} flagged.\n")
    print("| URL | pattern | found in | verdict | why |")
    print("|---|---|---|---|---|")
    for (_, name), entry in sorted(hits.items()):
        url = sorted(entry["urls"])[0]
        verdict, why = VERDICTS.get(host_path(url), ("to judge", ""))
        where = sorted(entry["where"])
        more = f" +{len(where) - 2} more" if len(where) > 2 else ""
        print(f"| {url} | `{name}` | {', '.join(where[:2])}{more} | {verdict} | {why} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
