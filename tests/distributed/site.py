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
