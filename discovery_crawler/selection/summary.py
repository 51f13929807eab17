"""The selection's lines in the end-of-run summary (informational, no confirmation gate),
in the form of the IA-extraction design note::

    Discovered 38 pages on https://example.com (sitemap.xml).
    Selecting 5 highest-priority pages:
      - / (home)
      - /about (pillar)
    Not selected (28 pages, in the inventory all the same; all=1 selects all): /blog/post-1, …

Selection picks the pages to read first; it drops nothing from the inventory, so the line
of the pages it passed over says they are still there. "pages" counts the URLs selection
chose among (file kinds such as PDFs are not pages) plus the pages flagged as junk (never
selected, in the feed or left out of it), so the numbers add up: discovered = junk +
selected + not selected.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from discovery_crawler.selection.paths import url_path

if TYPE_CHECKING:
    from discovery_crawler.selection.selector import Candidate, Selection

SHOWN_CUT = 4  # cut examples on the Cut line
SHOWN_ALL = 10  # kept pages listed when all=1 keeps everything


def _plural(n: int, word: str = "page") -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def _display(c: Candidate) -> str:
    url = c.url
    path = url_path(url)
    query = url.partition("?")[2]
    return path + ("?" + query if query else "")


def source_label(record: Any, sources: dict[str, int]) -> str:
    """Where the pages came from: the top-level sitemap file(s) that served, and/or links."""
    names = []
    for attempt in getattr(record, "attempts", {}).values():
        if attempt.ok and attempt.depth == 0:
            name = attempt.url.rstrip("/").rsplit("/", 1)[-1] or attempt.url
            if name not in names:
                names.append(name)
    parts = []
    if names:
        parts.append(", ".join(names[:2]) + (f" +{len(names) - 2} more" if len(names) > 2 else ""))
    elif sources.get("sitemap"):
        parts.append("sitemaps")
    if sources.get("link") or sources.get("seed"):
        parts.append("links")
    return " + ".join(parts) or "no source"


def selection_lines(record: Any) -> list[str]:
    """The summary lines of the selection; none when selection did not run."""
    selection: Selection | None = getattr(record, "selection", None)
    if selection is None:
        return []
    plan = selection.plan
    filtered = getattr(record, "filtered", None)
    junk = selection.junk + (filtered["junk"] if filtered else 0)  # offered + left out
    site = record.site_origin or record.options.url
    pages = selection.candidates + junk
    lines = [f"Discovered {_plural(pages)} on {site} ({source_label(record, selection.sources)})."]
    kept = selection.kept
    if plan.mode == "all":
        lines.append(f"Selecting all {_plural(selection.kept_count)} (all=1):")
    elif plan.mode == "pages":
        lines.append(f"Selecting {_plural(selection.kept_count)} named in pages=:")
    elif selection.cut_count == 0 and selection.kept_count:
        lines.append(f"Selecting all {_plural(selection.kept_count)} (cap {plan.cap}):")
    else:
        lines.append(f"Selecting {_plural(selection.kept_count, 'highest-priority page')}:")
    shown = kept[:SHOWN_ALL] if plan.mode == "all" else kept
    for c in shown:
        lines.append(f"  - {_display(c)} ({c.type})")
    if plan.mode == "all" and selection.kept_count > len(shown):
        lines.append(f"  … ({selection.kept_count - len(shown):,} more)")
    if selection.cut_count:
        examples = ", ".join(_display(c) for c in selection.cut[:SHOWN_CUT])
        more = ", …" if selection.cut_count > min(SHOWN_CUT, len(selection.cut)) else ""
        lines.append(
            f"Not selected ({_plural(selection.cut_count)}, in the inventory all the same; "
            f"all=1 selects all): {examples}{more}"
        )
    for error in selection.errors:
        lines.append(f"Error: {error}")
    return lines
