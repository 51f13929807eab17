"""``report.html`` (SPEC §10): one run of the crawl log as a page a person can read.

Built from the run's crawl-log entry (``RunRecord.as_dict()``) alone, so it can be
rewritten from any ``_crawl-log.json`` (``python -m discovery_crawler.output.report LOG``).

The file is self-contained and makes no network request: inline CSS and a few lines of
inline JS, no fonts, images or scripts from anywhere, and a Content-Security-Policy that
lets only those two inline blocks (by hash) run — ``default-src 'none'`` forbids the rest.
Everything taken from the run (URLs, titles, reasons, robots rules) is hostile input and
goes through ``html.escape``; links are made only for http(s) URLs. Its size is bounded:
the crawl log's lists are capped (``CRAWL_LOG_LIST_CAP``), the tree by the groups stage
(``TREE_MAX_NODES``), and every table here stops at ``max_rows`` with a line saying how
many were left out. No Scrapy imports.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
import tempfile
from html import escape
from pathlib import Path
from typing import Any

from discovery_crawler.output import report_charts, report_treemap
from discovery_crawler.output.log_values import as_dict as _d
from discovery_crawler.output.log_values import as_int as _int
from discovery_crawler.output.log_values import as_list as _l
from discovery_crawler.urls.display import readable

REPORT_NAME = "report.html"
MAX_ROWS = 1_000  # rows per table; the crawl log's own lists are capped too
MAX_TREE_NODES = 5_000  # nodes drawn; matches TREE_MAX_NODES
FOLD_ROWS = 25  # tables longer than this start folded (a <details> with the row count)
MAX_TREE_DEPTH = 64  # levels listed; the groups stage stops at TREE_MAX_DEPTH (8)
OPEN_DEPTH = 1  # tree levels shown open when the page loads

BASE_CSS = """
:root{--fg:#1d232a;--muted:#5b6673;--line:#d7dce1;--bg:#fff;--alt:#f5f7f9;--ok:#1a7f37;
--bad:#b42318;--warn:#9a6700;--acc:#0b5cad}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);
background:var(--bg);margin:0 auto;max-width:1200px;padding:16px 24px 64px}
h1{font-size:22px;margin:8px 0 4px;word-break:break-all}
h2{font-size:17px;margin:28px 0 8px;padding-bottom:4px;border-bottom:1px solid var(--line)}
h3{font-size:14px;margin:16px 0 6px}
nav{margin:8px 0 0;font-size:13px}nav a{margin-right:10px}
a{color:var(--acc)}
.muted{color:var(--muted)}
.banner{padding:10px 12px;border-radius:6px;margin:12px 0;border:1px solid}
.banner.failed{background:#fdecea;border-color:#f4b4ae;color:var(--bad)}
.banner.warn{background:#fff8e1;border-color:#f0d58a;color:var(--warn)}
.totals{display:flex;flex-wrap:wrap;gap:8px;margin:12px 0}
.totals div{border:1px solid var(--line);border-radius:6px;padding:6px 10px;min-width:110px}
.totals b{display:block;font-size:18px}
table{border-collapse:collapse;width:100%;margin:6px 0 10px;font-size:13px}
th,td{text-align:left;vertical-align:top;padding:4px 8px;border-bottom:1px solid var(--line);
overflow-wrap:break-word}
.wrap{overflow-x:auto}
th{background:var(--alt);font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.url{word-break:break-all;min-width:240px}
.yes{color:var(--ok);font-weight:600}.no{color:var(--bad);font-weight:600}
.badge{display:inline-block;border:1px solid var(--line);border-radius:10px;padding:0 6px;
margin:0 3px 2px 0;font-size:12px;background:var(--alt);white-space:nowrap}
.badge.high{border-color:#8fd19e}.badge.low{border-color:#f0d58a}
pre{background:var(--alt);padding:8px;border-radius:4px;overflow:auto;max-height:320px;
font-size:12px;white-space:pre-wrap;word-break:break-all}
details>summary{cursor:pointer}
.tree{font-size:13px}
.tree details,.tree .leaf{margin-left:18px}
.tree>details{margin-left:0}
.tree summary,.tree .leaf{padding:1px 0}
.tree .name{font-weight:600;word-break:break-all}
.tree .count{display:inline-block;min-width:56px;text-align:right;margin-right:6px;
font-variant-numeric:tabular-nums}
.tree .leaf .name{font-weight:400}
.tools button{font:inherit;font-size:12px;margin-right:6px}
meter{width:160px}
"""

BASE_JS = """
document.addEventListener("DOMContentLoaded",function(){
var t=document.getElementById("tree");if(!t){return;}
document.querySelectorAll("[data-tree-action]").forEach(function(b){
b.addEventListener("click",function(){var open=b.getAttribute("data-tree-action")==="open";
t.querySelectorAll("details").forEach(function(d){d.open=open;});});});
});
"""


CSS = BASE_CSS + report_charts.CSS + report_treemap.CSS
JS = BASE_JS + report_treemap.JS  # one inline script, allowed by its hash


def _csp_hash(source: str) -> str:
    digest = hashlib.sha256(source.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


CSP = (
    "default-src 'none'; "
    f"style-src {_csp_hash(CSS)}; script-src {_csp_hash(JS)}; "
    "img-src 'none'; font-src 'none'; connect-src 'none'; form-action 'none'; base-uri 'none'"
)


# -- small helpers ------------------------------------------------------------------------
def esc(value: Any) -> str:
    """Any value as escaped text (``None`` as an empty string)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value:,}" if isinstance(value, int) else f"{value:g}"
    return escape(str(value), quote=True)


def link(url: Any) -> str:
    """An http(s) URL as a link; anything else (``javascript:``, garbage) as plain text."""
    if not isinstance(url, str) or not url:
        return esc(url)
    if url.lower().startswith(("http://", "https://")):
        text = esc(url)
        return f'<a href="{text}" rel="noopener noreferrer nofollow">{text}</a>'
    return esc(url)


def _yesno(value: Any) -> str:
    if value is None:
        return ""
    return '<span class="yes">yes</span>' if value else '<span class="no">no</span>'


def _badges(counts: Any, cls: str = "") -> str:
    return "".join(
        f'<span class="badge {cls}">{esc(k)} {esc(v)}</span>' for k, v in _d(counts).items()
    )


def _breakdown(breakdown: Any) -> str:
    parts = []
    for entry in _l(breakdown):
        if isinstance(entry, list | tuple) and len(entry) == 2:
            rule, points = entry
            sign = "+" if isinstance(points, int | float) and points >= 0 else ""
            parts.append(f"{esc(rule)} {sign}{esc(points)}")
        else:
            parts.append(esc(entry))
    return ", ".join(parts)


def _more(total: int, shown: int, what: str = "entries") -> str:
    if total > shown:
        return f'<p class="muted">{total - shown:,} more {esc(what)} not listed.</p>'
    return ""


class Table:
    """An HTML table with at most ``max_rows`` rows; says how many were left out."""

    def __init__(self, headers: list[str], max_rows: int, num: set[int] | None = None):
        self.headers = headers
        self.max_rows = max_rows
        self.num = num or set()
        self.rows: list[str] = []
        self.total = 0

    def add(self, *cells: str, url_col: int | None = None) -> None:
        self.total += 1
        if len(self.rows) >= self.max_rows:
            return
        tds = []
        for i, cell in enumerate(cells):
            cls = ' class="num"' if i in self.num else ' class="url"' if i == url_col else ""
            tds.append(f"<td{cls}>{cell}</td>")
        self.rows.append("<tr>" + "".join(tds) + "</tr>")

    def html(self, empty: str = "none") -> str:
        if not self.total:
            return f'<p class="muted">{esc(empty)}</p>'
        head = "".join(
            f"<th{' class=num' if i in self.num else ''}>{esc(h)}</th>"
            for i, h in enumerate(self.headers)
        )
        body = "\n".join(self.rows)
        table = (
            f'<div class="wrap"><table><thead><tr>{head}</tr></thead><tbody>\n{body}\n'
            "</tbody></table></div>" + _more(self.total, len(self.rows), "rows")
        )
        if len(self.rows) > FOLD_ROWS:
            return f"<details><summary>{len(self.rows):,} rows</summary>{table}</details>"
        return table


def _junk_list(discovery: dict[str, Any]) -> Any:
    """The run's junk list: ``flagged_as_junk`` (``filtered_as_junk`` in older runs)."""
    return discovery.get("flagged_as_junk", discovery.get("filtered_as_junk"))


def _listed(capped: Any) -> tuple[int, list[Any]]:
    """(count, items) of a crawl-log capped list ``{"count", "listed", "items"}``."""
    capped = _d(capped)
    items = _l(capped.get("items"))
    return _int(capped.get("count")) or len(items), items


def inventory_tiles(counts: dict[str, Any], filtered: int) -> list[tuple[str, Any]]:
    """The header's first tiles, an account a reader can add up: unique URLs found −
    filtered out (− anything else left out, when the counts say so) = in the inventory."""
    unique, written = counts.get("unique"), counts.get("discovered")
    tiles: list[tuple[str, Any]] = [("unique URLs found", unique), ("− filtered out", filtered)]
    counted = isinstance(unique, int) and isinstance(written, int)
    if counted and (left_out := unique - filtered - written):  # admitted, then not written
        tiles.append(("− otherwise left out", left_out))
    return [*tiles, ("= in the inventory", written)]


# -- sections ------------------------------------------------------------------------------
def _header(run: dict[str, Any]) -> str:
    discovery = _d(run.get("discovery"))
    inp = _d(run.get("input"))
    prov = _d(run.get("provenance"))
    counts = _d(discovery.get("counts"))
    selection = _d(run.get("selection"))
    refusals = _d(run.get("refusals"))
    site = discovery.get("site") or inp.get("url") or "(unknown site)"
    status = run.get("status") or "unknown"
    filtered = sum(
        _int(_d(v).get("count"))
        for k, v in _d(discovery.get("filtered")).items()
        if k != "other_host"
    )
    if "filtered_as_junk" in discovery:  # a run from before junk was a flag: it dropped them
        filtered += _int(_d(discovery.get("filtered_as_junk")).get("count"))
    totals = [
        *inventory_tiles(counts, filtered),
        ("flagged junk (in the inventory)", _int(_d(_junk_list(discovery)).get("count"))),
        ("duplicates merged (counted once above)", counts.get("duplicates")),
        ("malformed (dropped before)", counts.get("malformed")),
        ("selected", _d(selection.get("kept")).get("count")),
        ("not selected (in the inventory)", _d(selection.get("cut")).get("count")),
        ("refusals", refusals.get("total")),
        ("seconds", prov.get("elapsed_seconds")),
    ]
    boxes = "".join(
        f'<div data-total="{esc(label)}"><b>{esc(value if value is not None else "-")}</b>'
        f'<span class="muted">{esc(label)}</span></div>'
        for label, value in totals
    )
    meta = (
        f"{esc(prov.get('started_at') or '')} → {esc(prov.get('finished_at') or '')} · "
        f"mode <b>{esc(inp.get('mode'))}</b> · input {esc(inp.get('kind'))} "
        f"{link(inp.get('url'))} · profile {esc(inp.get('profile'))} · "
        f"status <b>{esc(status)}</b> ({esc(run.get('finish_reason'))}) · "
        f"{esc(prov.get('written_by'))} {esc(prov.get('version'))}"
    )
    out = [
        f'<h1 id="site">{esc(site)}</h1>',
        f'<p class="muted" id="meta">{meta}</p>',
    ]
    if status == "failed" or run.get("failure"):
        out.append(
            f'<div class="banner failed" id="failure"><b>Run failed:</b> '
            f"{esc(run.get('failure') or 'no reason recorded')}</div>"
        )
    warnings = _l(run.get("warnings")) + _l(selection.get("warnings"))
    if warnings:
        items = "".join(f"<li>{esc(w)}</li>" for w in warnings[:MAX_ROWS])
        out.append(f'<div class="banner warn" id="warnings"><b>Warnings</b><ul>{items}</ul></div>')
    out.append(f'<div class="totals" id="totals">{boxes}</div>')
    notes = _l(discovery.get("notes"))
    if notes:
        out.append("<ul class='muted'>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    return "\n".join(out)


def _tree_node(node: dict[str, Any], depth: int, budget: list[int], out: list[str]) -> None:
    if budget[0] <= 0 or depth > MAX_TREE_DEPTH:  # a hostile log's nesting: no RecursionError
        return
    budget[0] -= 1
    count = _int(node.get("count"))
    name = readable(str(node.get("name") or "/"))
    attrs = (
        f'data-path="{esc(node.get("path"))}" data-count="{count}"'
        f"{' data-collapsed' if node.get('collapsed') else ''}"
    )
    label = (
        f'<span class="count">{count:,}</span><span class="name">{esc(name)}</span> '
        f"{_badges(node.get('kinds'))}{_badges(node.get('sources'))}"
        f"{_badges(node.get('statuses'))}"
    )
    children = [c for c in _l(node.get("children")) if isinstance(c, dict)]
    if not children:
        out.append(f'<div class="node leaf" {attrs}>{label}</div>')
        return
    opened = " open" if depth < OPEN_DEPTH else ""
    out.append(f'<details class="node" {attrs}{opened}><summary>{label}</summary>')
    for child in children:
        _tree_node(child, depth + 1, budget, out)
    out.append("</details>")


def _tree(run: dict[str, Any], max_nodes: int) -> str:
    tree = _d(run.get("tree"))
    root = _d(tree.get("root"))
    if not root:
        return '<p class="muted">No path tree (no URLs reached the groups stage).</p>'
    budget = [max_nodes]
    parts: list[str] = []
    _tree_node(root, 0, budget, parts)
    limits = _d(tree.get("limits"))
    head = (
        f'<p class="muted">{esc(tree.get("urls"))} URLs in {esc(tree.get("nodes"))} nodes; '
        f"“…” counts what got no node of its own ({esc(tree.get('collapsed'))} such entries; "
        f"limits: {esc(', '.join(f'{k} {v}' for k, v in limits.items()))}). Badges: kinds, "
        "sources, statuses (“listed” = not fetched).</p>"
        '<p class="tools"><button type="button" data-tree-action="open">expand all</button>'
        '<button type="button" data-tree-action="close">collapse all</button></p>'
    )
    tail = ""
    if budget[0] <= 0:
        tail = f'<p class="muted">Tree drawing stopped at {max_nodes:,} nodes.</p>'
    return head + '<div class="tree" id="tree">' + "\n".join(parts) + "</div>" + tail


def _groups(run: dict[str, Any], max_rows: int) -> str:
    groups = _d(run.get("groups"))
    if not groups:
        return '<p class="muted">No groups (the groups stage did not run).</p>'
    path = Table(["group", "URLs", "representative", "samples"], max_rows, {1})
    for g in _l(groups.get("path_groups")):
        g = _d(g)
        samples = _l(g.get("samples"))
        sample_html = (
            f"<details><summary>{len(samples)} samples</summary>"
            + "<br>".join(link(s) for s in samples)
            + "</details>"
            if samples
            else ""
        )
        path.add(
            esc(g.get("label") or g.get("name")),
            esc(g.get("count")),
            link(g.get("representative")),
            sample_html,
            url_col=2,
        )
    parent = Table(
        ["parent", "shape", "members", "confidence", "representative", "reason"], max_rows, {2}
    )
    for g in _l(groups.get("parent_groups")):
        g = _d(g)
        conf = g.get("confidence")
        parent.add(
            esc(g.get("label")),
            esc(g.get("shape")),
            esc(g.get("count")),
            f'<span class="badge {esc(conf)}">{esc(conf)}</span>',
            link(g.get("representative")),
            esc(g.get("reason")),
            url_col=4,
        )
    untracked = _int(groups.get("path_groups_untracked_urls")) + _int(
        groups.get("parent_groups_untracked_urls")
    )
    note = (
        f'<p class="muted">{untracked:,} URL placements had no group of their own (limits).</p>'
        if untracked
        else ""
    )
    return (
        f"<h3>Path groups (first path segment) — {esc(groups.get('urls'))} URLs</h3>"
        + path.html("no path groups")
        + f"<h3>Parent groups (exact parent path) — {esc(groups.get('parent_groups_tracked'))}"
        " tracked</h3>" + parent.html("no parent groups") + note
    )


def _page_table(capped: Any, max_rows: int, rank: bool) -> str:
    count, items = _listed(capped)
    table = Table(
        ["#", "URL", "type", "score", "breakdown", "lastmod", "priority"], max_rows, {0, 3}
    )
    for i, item in enumerate(items, 1):
        item = _d(item)
        table.add(
            str(i) if rank else "",
            link(item.get("url")),
            esc(item.get("type")),
            esc(item.get("score")),
            _breakdown(item.get("breakdown")),
            esc(item.get("lastmod")),
            esc(item.get("priority")),
            url_col=1,
        )
    table.total = max(table.total, count)
    return table.html("none")


def _selection(run: dict[str, Any], max_rows: int) -> str:
    sel = _d(run.get("selection"))
    if not sel:
        return '<p class="muted">No selection (the score stage did not run).</p>'
    kept_count, _ = _listed(sel.get("kept"))
    cut_count, cut_items = _listed(sel.get("cut"))
    templates = ", ".join(esc(t) for t in _l(sel.get("templates"))) or "none"
    out = [
        f"<p>cap <b>{esc(sel.get('cap'))}</b> ({esc(sel.get('cap_source'))}, mode "
        f"{esc(sel.get('mode'))}) · {esc(sel.get('candidates'))} candidates · "
        f"{esc(sel.get('not_pages'))} not pages · templates covered: <b>{templates}</b></p>",
        f"<p>Page types: {_badges(sel.get('type_counts'))}</p>",
    ]
    for err in _l(sel.get("errors")):
        out.append(f'<div class="banner failed">{esc(err)}</div>')
    out.append(f'<h3 id="kept">Kept ({kept_count:,})</h3>')
    out.append(_page_table(sel.get("kept"), max_rows, True))
    out.append(
        f'<h3 id="cut">Not selected, in the inventory all the same ({cut_count:,}; '
        f"{len(cut_items):,} listed, best first)</h3>"
    )
    out.append(_page_table(sel.get("cut"), max_rows, True))
    scores = _d(sel.get("scores"))
    rules = Table(["rule", "points", "means"], max_rows)
    for rule in _l(scores.get("rules")):
        rule = _d(rule)
        rules.add(esc(rule.get("rule")), esc(rule.get("points")), esc(rule.get("means")))
    out.append("<h3>Scoring rules</h3>" + rules.html("no rules recorded"))
    totals = _d(scores.get("totals"))
    if totals:
        out.append(
            "<p>Scores (URLs per total): "
            + _badges({f"{k} pts": v for k, v in totals.items()})
            + "</p>"
        )
    return "\n".join(out)


def _refusals(run: dict[str, Any], max_rows: int) -> str:
    ref = _d(run.get("refusals"))
    if not ref:
        return '<p class="muted">No refusal record (no pages were fetched as pages).</p>'
    counts = Table(["class", "pages"], max_rows, {1})
    for cls, n in _d(ref.get("counts")).items():
        counts.add(esc(cls), esc(n))
    out = [counts.html("no classes")]
    by_class: dict[str, list[dict[str, Any]]] = {}
    for rec in _l(ref.get("records")):
        rec = _d(rec)
        by_class.setdefault(str(rec.get("class")), []).append(rec)
    for cls, records in by_class.items():
        table = Table(
            ["URL", "status", "reason", "final URL", "found on", "anchor", "depth", "via"],
            max_rows,
            {1, 6},
        )
        for rec in records:
            table.add(
                link(rec.get("url")),
                esc(rec.get("status")),
                esc(rec.get("reason")),
                link(rec.get("final_url")),
                link(rec.get("found_on")),
                esc(rec.get("anchor")),
                esc(rec.get("depth")),
                esc(rec.get("via")),
                url_col=0,
            )
        out.append(f'<h3 data-refusal-class="{esc(cls)}">{esc(cls)} ({len(records):,})</h3>')
        out.append(table.html())
    out.append(
        _more(_int(ref.get("total")), _int(ref.get("listed")) or len(_l(ref.get("records"))))
    )
    for group in _l(ref.get("identical_content")):
        out.append(f'<div class="banner warn">Identical content: {esc(json.dumps(group))}</div>')
    render = _d(ref.get("render"))
    if render:
        out.append(f"<p class='muted'>Rendering: {_badges(render)}</p>")
    return "\n".join(out)


def _verify(run: dict[str, Any], max_rows: int) -> str:
    """``-a verify=1``: advertised against live, redirected, dead, refused, failed."""
    ver = _d(run.get("verify"))
    if not ver:
        return '<p class="muted">Not verified (run with <code>-a verify=1</code>).</p>'
    details = _d(ver.get("details"))
    counts = Table(["verdict", "URLs", "details"], max_rows, {1})
    for verdict, n in _d(ver.get("counts")).items():
        counts.add(esc(verdict), esc(n), _badges(details.get(verdict)))
    how = (
        "answered by the crawl's own fetches (union mode)"
        if ver.get("mode") == "crawl"
        else f"asked with {esc(ver.get('method'))} (GET where a HEAD was refused)"
    )
    out = [
        f'<p id="verify-advertised"><b>{esc(ver.get("advertised"))}</b> advertised URLs, '
        f"{how}.</p>",
        counts.html("nothing advertised"),
    ]
    requests = _d(ver.get("requests"))
    if requests:
        out.append(
            f"<p class='muted'>Requests: {_badges(requests)} GET fallbacks: "
            f"{_badges(ver.get('head_fallbacks')) or 'none'} · redirect hops "
            f"{esc(ver.get('redirect_hops'))}</p>"
        )
    for verdict in ("redirected", "dead", "refused", "failed", "unchecked"):
        count, items = _listed(ver.get(verdict))
        if not count:
            continue
        table = Table(["URL", "status", "detail", "ended at", "chain", "reason"], max_rows, {1})
        for item in items:
            item = _d(item)
            hops = [_l(hop) for hop in _l(item.get("chain"))]
            chain = " → ".join(esc(hop[1]) for hop in hops if len(hop) == 2)
            table.add(
                link(item.get("url")),
                esc(item.get("status")),
                esc(item.get("detail")),
                link(item.get("to")),
                chain,
                esc(item.get("reason")),
                url_col=0,
            )
        out.append(f'<h3 data-verdict="{esc(verdict)}">{esc(verdict)} ({count:,})</h3>')
        out.append(table.html())
        out.append(_more(count, len(items)))
    return "\n".join(out)


def _kinds(run: dict[str, Any]) -> str:
    discovery = _d(run.get("discovery"))
    kinds = _d(discovery.get("kinds"))
    total = sum(_int(v) for v in kinds.values()) or 1
    table = Table(["kind", "URLs", ""], 50, {1})
    for kind, n in kinds.items():
        table.add(esc(kind), esc(n), f'<meter min="0" max="{total}" value="{_int(n)}"></meter>')
    out = [table.html("no kinds tallied")]
    filtered = Table(["filtered because", "URLs", "examples"], MAX_ROWS, {1})
    for reason, entry in _d(discovery.get("filtered")).items():
        count, items = _listed(entry)
        filtered.add(esc(reason), esc(count), _url_list(items, count))
    junk_count, junk = _listed(_junk_list(discovery))
    if junk_count:
        rows = "".join(
            f"<tr><td class='url'>{link(_d(j).get('url'))}</td><td>{esc(_d(j).get('pattern'))}"
            "</td></tr>"
            for j in junk[:MAX_ROWS]
        )
        filtered.add(
            "flagged junk (pattern)",
            esc(junk_count),
            f"<details><summary>{min(len(junk), MAX_ROWS):,} listed</summary><table>{rows}"
            f"</table></details>",
        )
    for name in ("requires_auth", "malformed"):
        count, items = _listed(discovery.get(name))
        if count:
            filtered.add(esc(name), esc(count), _url_list(items, count))
    out.append("<h3>Filtered and flagged</h3>" + filtered.html("nothing filtered"))
    return "\n".join(out)


def _url_list(items: list[Any], count: int) -> str:
    if not items:
        return ""
    shown = items[:MAX_ROWS]
    body = "<br>".join(
        link(i) if isinstance(i, str) else esc(json.dumps(i, ensure_ascii=False)) for i in shown
    )
    return f"<details><summary>{len(shown):,} of {count:,} listed</summary>{body}</details>"


def _robots(run: dict[str, Any], max_rows: int) -> str:
    discovery = _d(run.get("discovery"))
    summary = _d(discovery.get("robots_policy"))
    out = []
    policies = _d(summary.get("policies"))
    if not policies:
        robots = _d(discovery.get("robots"))
        if robots:
            out.append(
                f"<p>{link(robots.get('url'))}: status {esc(robots.get('status'))} "
                f"{esc(robots.get('error'))}</p>"
            )
        else:
            out.append('<p class="muted">No robots.txt policy recorded.</p>')
    for origin, policy in policies.items():
        policy = _d(policy)
        rules = _l(policy.get("rules"))
        rule_text = "\n".join(str(r) for r in rules[:max_rows])
        rows = [
            ("outcome", f"<b>{esc(policy.get('outcome'))}</b>"),
            ("reason", esc(policy.get("reason"))),
            ("robots.txt", link(policy.get("url"))),
            ("final URL", link(policy.get("final_url"))),
            ("fetched", _yesno(policy.get("fetched"))),
            ("HTTP status", esc(policy.get("status"))),
            ("error", esc(policy.get("error"))),
            ("agent token", esc(policy.get("agent_token"))),
            ("group", esc(policy.get("group") if policy.get("group") is not None else "none")),
            ("crawl-delay", esc(policy.get("crawl_delay"))),
            ("redirects", esc(policy.get("redirects"))),
            ("sitemaps", "<br>".join(link(s) for s in _l(policy.get("sitemaps"))[:max_rows])),
            (
                f"rules ({len(rules):,})",
                f"<pre>{esc(rule_text)}</pre>" if rules else '<span class="muted">none</span>',
            ),
        ]
        body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
        out.append(
            f'<h3 data-origin="{esc(origin)}">{esc(origin)}</h3><table class="kv">{body}</table>'
        )
    count, items = _listed(summary.get("disallowed"))
    table = Table(["disallowed URL", "rule", "group", "origin", "found on"], max_rows)
    for item in items:
        item = _d(item)
        table.add(
            link(item.get("url")),
            f"<code>{esc(item.get('rule'))}</code>",
            esc(item.get("group")),
            esc(item.get("origin")),
            link(item.get("found_on")),
            url_col=0,
        )
    table.total = max(table.total, count)
    out.append(f"<h3>Disallowed by robots.txt ({count:,})</h3>" + table.html("none"))
    return "\n".join(out)


def _sitemaps(run: dict[str, Any], max_rows: int) -> str:
    discovery = _d(run.get("discovery"))
    table = Table(
        ["URL", "source", "status", "ok", "URLs", "index", "format", "error"], max_rows, {2, 4}
    )
    for a in _l(discovery.get("sitemap_attempts")):
        a = _d(a)
        table.add(
            link(a.get("url")),
            esc(a.get("source")),
            esc(a.get("status")),
            _yesno(a.get("ok")),
            esc(a.get("urls")),
            _yesno(a.get("index")),
            esc(a.get("format")),
            esc(a.get("error")),
            url_col=0,
        )
    out = [table.html("no sitemap was tried")]
    count, skipped = _listed(discovery.get("sitemaps_skipped"))
    if count:
        out.append(f"<h3>Sitemaps skipped ({count:,})</h3>" + _url_list(skipped, count))
    other = _d(discovery.get("other_hosts_by_sitemap"))
    if other:
        rows = Table(["sitemap", "URLs on other hosts (not this site)"], max_rows)
        for sitemap, hosts in other.items():
            rows.add(link(sitemap), _badges(hosts), url_col=0)
        out.append("<h3>Other-host URLs in sitemaps</h3>" + rows.html())
    limits = _l(discovery.get("limits"))
    if limits:
        out.append(
            "<h3>Limits that bound</h3><ul>"
            + "".join(f"<li>{esc(json.dumps(lim, ensure_ascii=False))}</li>" for lim in limits)
            + "</ul>"
        )
    return "\n".join(out)


def _kv_table(data: dict[str, Any], max_rows: int) -> str:
    table = Table(["", ""], max_rows)
    for key, value in data.items():
        if (
            isinstance(value, dict)
            and value
            and all(not isinstance(v, dict | list) for v in value.values())
        ):
            cell = _badges(value)
        elif isinstance(value, dict | list):
            text = json.dumps(value, ensure_ascii=False, indent=1)
            cell = (
                f"<details><summary>{len(value):,} entries</summary>"
                f"<pre>{esc(text[:20_000])}</pre></details>"
            )
        else:
            cell = esc(value)
        table.add(esc(key), cell)
    return table.html("nothing recorded")


def _crawl(run: dict[str, Any], max_rows: int) -> str:
    crawl = _d(_d(run.get("discovery")).get("crawl"))
    throttle = _d(run.get("throttle"))
    out = []
    if crawl:
        out.append("<h3>Link crawl</h3>" + _kv_table(crawl, max_rows))
    if throttle:
        out.append("<h3>Politeness (host throttle)</h3>" + _kv_table(throttle, max_rows))
    settings = _d(run.get("settings"))
    if settings:
        out.append("<h3>Settings</h3>" + _kv_table(settings, max_rows))
    return "\n".join(out) or '<p class="muted">No crawl or throttle record.</p>'


SECTIONS = (
    ("pictures", "Pictures"),
    ("tree-section", "Path tree"),
    ("groups", "Groups"),
    ("selection", "Selection: kept and cut"),
    ("refusals", "Refusals"),
    ("verify", "Verify: advertised against live"),
    ("kinds", "Kinds"),
    ("robots", "Robots"),
    ("sitemaps", "Sitemap attempts"),
    ("crawl", "Crawl and politeness"),
)


def render_report(
    run: dict[str, Any], max_rows: int = MAX_ROWS, max_tree_nodes: int = MAX_TREE_NODES
) -> str:
    """The report for one crawl-log run entry, as a complete HTML document."""
    run = _d(run)
    discovery = _d(run.get("discovery"))
    site = discovery.get("site") or _d(run.get("input")).get("url") or "discovery run"
    tree_figure, tree_data = report_treemap.treemap(run, max_tree_nodes)
    bodies = {
        "pictures": report_charts.pictures(run, tree_figure),
        "tree-section": _tree(run, max_tree_nodes),
        "groups": _groups(run, max_rows),
        "selection": _selection(run, max_rows),
        "refusals": _refusals(run, max_rows),
        "verify": _verify(run, max_rows),
        "kinds": _kinds(run),
        "robots": _robots(run, max_rows),
        "sitemaps": _sitemaps(run, max_rows),
        "crawl": _crawl(run, max_rows),
    }
    nav = "".join(f'<a href="#{sid}">{esc(title)}</a>' for sid, title in SECTIONS)
    sections = "\n".join(
        f'<section id="{sid}"><h2>{esc(title)}</h2>\n{bodies[sid]}\n</section>'
        for sid, title in SECTIONS
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f"<title>Discovery report: {esc(site)}</title>\n"
        f"<style>{CSS}</style>\n<script>{JS}</script>\n</head><body>\n"
        f"{_header(run)}\n<nav>{nav}</nav>\n{sections}\n"
        f"{report_treemap.json_block({'tree': tree_data})}\n"
        '<p class="muted">Written by discovery_crawler from _crawl-log.json (runs[-1]).</p>\n'
        "</body></html>\n"
    )


def write_report(path: Path, run: dict[str, Any], **kwargs: Any) -> Path:
    """Write the report for ``run`` to ``path`` atomically (temporary file + rename)."""
    text = render_report(run, **kwargs)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # a lone surrogate (a JSON "\\ud800" in a hostile log) is written as its escape
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600; a report is meant to be opened
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def main(argv: list[str] | None = None) -> int:
    """``python -m discovery_crawler.output.report _crawl-log.json [report.html]``; with
    ``--tree``, the crawl log's trees printed as text instead (``tree_text.py``)."""
    args = sys.argv[1:] if argv is None else argv
    from discovery_crawler.output import tree_text

    if tree_text.asked(args):  # the trees as text, not the HTML report
        return tree_text.main(args)
    if not args:
        print(
            "usage: python -m discovery_crawler.output.report CRAWL_LOG [REPORT]", file=sys.stderr
        )
        return 2
    log_path = Path(args[0])
    try:
        runs = json.loads(log_path.read_text(encoding="utf-8"))["runs"]
        run = runs[-1]
        if not isinstance(run, dict):
            raise TypeError("the last run is not an object")
    except (OSError, ValueError, KeyError, IndexError, TypeError, RecursionError) as exc:
        print(f"{log_path}: not a crawl log with runs ({exc})", file=sys.stderr)
        return 1
    out = Path(args[1]) if len(args) > 1 else log_path.with_name(REPORT_NAME)
    try:
        print(write_report(out, run))
    except OSError as exc:
        print(f"{out}: report not written ({exc})", file=sys.stderr)
        return 4
    return 0


if __name__ == "__main__":
    sys.exit(main())
