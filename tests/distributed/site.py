"""A generated site for the distributed tests: ``pages`` HTML pages in a ternary tree
(page i links to 3i+1..3i+3), each also linking home and to one page across the tree,
so workers meet the same URLs from several pages."""

from __future__ import annotations

from pathlib import Path


def page_path(i: int) -> str:
    return "/" if i == 0 else f"/p/{i}.html"


def write_site(root: Path, pages: int) -> set[str]:
    """Write the site under ``root``; returns the paths of its pages."""
    (root / "p").mkdir(parents=True, exist_ok=True)
    for i in range(pages):
        links = [page_path(c) for c in (3 * i + 1, 3 * i + 2, 3 * i + 3) if c < pages]
        links += [page_path(0), page_path((i * 7919 + 13) % pages)]
        body = "".join(f'<a href="{href}">link</a>\n' for href in links)
        html = f"<html><head><title>Page {i}</title></head><body>{body}</body></html>"
        target = root / "index.html" if i == 0 else root / "p" / f"{i}.html"
        target.write_text(html, encoding="utf-8")
    return {page_path(i) for i in range(pages)}


def write_listed_site(root: Path, base: str, pages: int, orphans: int) -> set[str]:
    """``write_site`` plus sitemaps (robots.txt → an index → two urlsets) listing every
    third page and ``orphans`` pages no page links to (``/o/<k>.html``), and a listed URL
    that answers 404: union mode's both sides. Returns every page path."""
    paths = write_site(root, pages)
    (root / "o").mkdir(exist_ok=True)
    for k in range(orphans):
        html = f"<html><head><title>Orphan {k}</title></head><body>alone</body></html>"
        (root / "o" / f"{k}.html").write_text(html, encoding="utf-8")
        paths.add(f"/o/{k}.html")
    listed = [page_path(i) for i in range(0, pages, 3)] + [f"/o/{k}.html" for k in range(orphans)]
    listed.append("/gone.html")
    half = len(listed) // 2
    for n, part in enumerate((listed[:half], listed[half:])):
        locs = "".join(f"<url><loc>{base}{path}</loc></url>" for path in part)
        (root / f"sitemap-{n}.xml").write_text(
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'
        )
    children = "".join(f"<sitemap><loc>{base}/sitemap-{n}.xml</loc></sitemap>" for n in (0, 1))
    (root / "sitemap_index.xml").write_text(
        f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{children}</sitemapindex>'
    )
    (root / "robots.txt").write_text(f"User-agent: *\nSitemap: {base}/sitemap_index.xml\n")
    return paths
