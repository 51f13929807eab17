"""The pictures of ``report.html`` that need no script: the sitemap tree as the crawler
walked it (like ``usp ls``), bar charts (kinds, refusal classes, filter reasons, click
depth beside path depth) and the crawl's timeline, drawn here as inline SVG.

Everything comes from the run's crawl-log entry and is hostile input: every string goes
through ``html.escape`` (SVG inside HTML is parsed as HTML), numbers are checked to be
numbers. Each drawn element that shows a count carries it in ``data-count`` and each
chart's root names it in ``data-chart``, so a test can compare what is drawn with the
crawl log. Missing data (an old crawl log) gives a one-line note instead of a chart.
The path tree's treemap is drawn by script (``report_treemap.py``). No Scrapy imports.
"""

from __future__ import annotations

import math
from html import escape
from typing import Any

from discovery_crawler.output.log_values import as_dict as _d
from discovery_crawler.output.log_values import as_list as _l

BAR_CAP = 24  # categorical bars drawn; the rest are summed into one "others" bar
DEPTH_CAP = 30  # depth columns; deeper ones are summed into the last ("30+")
TIMELINE_HOSTS = 6  # hosts drawn on their own; the rest are summed ("other hosts")
TIMELINE_EVENTS = 2_000  # hold markers drawn
MAX_BUCKETS = 2_000  # buckets drawn (the timeline keeps at most max_buckets, 600 by default)
SITEMAP_LINES = 1_000  # lines of the sitemap tree
FOLD_CHILDREN = 40  # a sitemap index with more children than this starts folded
NOT_RECORDED = "not recorded in this crawl log"

# Where a URL came from: the sitemap side (a <loc>, an hreflang alternate, robots.txt) or
# the link side (a link on a fetched page, the seed).
SITEMAP_SOURCES = frozenset(("sitemap", "alternate", "robots"))
LINK_SOURCES = frozenset(("link", "seed"))

HOST_COLOURS = ("#0b5cad", "#e08a2e", "#2e8b57", "#8e44ad", "#16a085", "#7f8c8d", "#b35900")
EVENT_COLOURS = {
    "backoff": "#f0b429",
    "retry_after": "#8e44ad",
    "pause": "#9aa5b1",
    "give_up": "#c0392b",
}
EVENT_NAMES = {
    "backoff": "back-off",
    "retry_after": "Retry-After hold",
    "pause": "pause",
    "give_up": "gave up",
}


CSS = (
    """
.pics{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:14px 22px}
.pics .wide{grid-column:1/-1}
figure.chart{margin:0;min-width:0}
figure.chart figcaption{font-weight:600;margin:4px 0}
figure.chart svg{display:block;max-width:100%;height:auto;overflow:visible}
.pair{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:14px 22px}
figure.chart svg text{font:11px system-ui,sans-serif;fill:#1d232a}
figure.chart svg .axis{stroke:#8c96a0;stroke-width:1}
figure.chart svg .grid{stroke:#e3e7eb;stroke-width:1}
figure.chart svg .lbl{fill:#5b6673}
.bar rect{fill:#3d7cc0}.bar.none rect{fill:#9aa5b1}.bar.ref rect{fill:#c0392b}
.bar.flt rect{fill:#b7791f}.bar.path rect{fill:#2e8b57}
.bar:hover rect{opacity:.8}
.legend{font-size:12px;margin:2px 0 4px}
.legend span{display:inline-block;margin-right:12px;white-space:nowrap}
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:-1px;
border-radius:2px}
.smtree{font:12px/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;
max-height:360px;overflow:auto;border:1px solid var(--line);border-radius:4px;padding:6px 8px}
.smtree ul{list-style:none;margin:0;padding-left:18px;border-left:1px dotted #b8c0c8}
.smtree>ul{padding-left:0;border-left:0}
.smtree li{margin:0;white-space:nowrap}
.smtree details>summary{list-style:none}
.smtree details>summary::-webkit-details-marker{display:none}
.smtree details>summary::before{content:"▾ ";color:var(--muted)}
.smtree details:not([open])>summary::before{content:"▸ "}
.smtree .u{color:var(--fg)}.smtree .f{color:var(--muted)}
.smtree .n{color:var(--ok);font-weight:600}.smtree .e{color:var(--bad)}
.smtree .g{color:var(--warn)}
.tl-host,.tl-iv{fill:none;stroke-width:1.6}.tl-iv{stroke-width:1.4}
.tl-ref,.lg-ref{fill:#c0392b;background:#c0392b;opacity:.55}
.tl-lane{fill:#f5f7f9}
text.tl-ev.give_up{fill:#c0392b;font-weight:700;font-size:13px}
"""
    + "".join(f".h{i}{{stroke:{c};background:{c}}}" for i, c in enumerate(HOST_COLOURS))
    + "".join(
        f".tl-ev.{k}{{fill:{c};opacity:.75}}.lg-{k}{{background:{c}}}"
        for k, c in EVENT_COLOURS.items()
    )
)


# -- small helpers ------------------------------------------------------------------------
def esc(value: Any) -> str:
    return "" if value is None else escape(str(value), quote=True)


def y_grid(left: float, right: float, base: float, height: float, top: float, step: float) -> str:
    """Horizontal grid lines with their values, every ``step`` from 0 to ``top``, for a
    plot whose 0 is at ``base`` and whose ``top`` is ``height`` above it."""
    lines = []
    for k in range(round(top / step) + 1):
        v = k * step
        y = base - height * v / top
        lines.append(
            f'<line class="grid" x1="{left}" x2="{right}" y1="{y:.1f}" y2="{y:.1f}"></line>'
            f'<text class="lbl" x="{left - 4}" y="{y + 4:.1f}" text-anchor="end">{_fmt(v)}</text>'
        )
    return "".join(lines)


def count(value: Any) -> int:
    """A count from the crawl log: a non-negative int, anything else 0."""
    if isinstance(value, bool) or not isinstance(value, int):
        return 0
    return max(value, 0)


def number(value: Any) -> float:
    """A finite non-negative number, anything else 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    return float(value) if math.isfinite(value) and value > 0 else 0.0


def _fmt(n: float) -> str:
    return f"{n:,.0f}" if float(n).is_integer() else f"{n:,.2f}".rstrip("0").rstrip(".")


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def note(chart: str, title: str, text: str, wide: bool = False) -> str:
    """A chart with nothing to draw: ``data-absent`` when the crawl log does not record its
    data (an older run), ``data-count="0"`` when it records none."""
    cls = "chart wide" if wide else "chart"
    mark = "data-absent" if text == NOT_RECORDED else 'data-count="0"'
    return (
        f'<figure class="{cls}" data-chart="{chart}" {mark}><figcaption>{esc(title)}'
        f'</figcaption><p class="muted">{esc(text)}</p></figure>'
    )


def source_category(sources: Any) -> str:
    """``sitemap`` (only sitemap-side sources), ``links`` (only link-side), ``both``, or
    ``unknown`` (no source recorded)."""
    names = {str(k) for k, v in _d(sources).items() if count(v)}
    if "both" in names:  # union mode: URLs listed and linked (``selection.tree.BOTH``)
        return "both"
    side_map = bool(names & SITEMAP_SOURCES)
    side_links = bool(names & LINK_SOURCES)
    if side_map and side_links:
        return "both"
    if side_map:
        return "sitemap"
    if side_links:
        return "links"
    return "unknown"


def nice_step(top: float, ticks: int = 4) -> float:
    """A round tick step (1, 2 or 5 × 10^k) so ``ticks`` steps cover ``top``."""
    if top <= 0:
        return 1.0
    raw = top / ticks
    power = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if raw <= m * power:
            return m * power
    return 10 * power  # pragma: no cover - the loop always returns


# -- bars ---------------------------------------------------------------------------------
def bar_items(counts: Any, cap: int = BAR_CAP) -> list[tuple[str, int]]:
    """Non-zero ``{label: count}`` entries, largest first, the tail summed as ``others``."""
    items = [(str(k), count(v)) for k, v in _d(counts).items() if count(v)]
    items.sort(key=lambda kv: -kv[1])
    if len(items) > cap:
        rest = items[cap - 1 :]
        items = [*items[: cap - 1], (f"{len(rest)} others", sum(n for _, n in rest))]
    return items


def hbars(chart: str, title: str, items: list[tuple[str, int]], cls: str, empty: str) -> str:
    """A horizontal bar chart: one labelled bar per (label, count)."""
    if not items:
        return note(chart, title, empty)
    width, label_w, row = 520, 150, 20
    bar_w = width - label_w - 70
    top = max(n for _, n in items) or 1
    height = row * len(items) + 6
    out = [
        f'<figure class="chart" data-chart="{chart}" data-count="{sum(n for _, n in items)}">'
        f"<figcaption>{esc(title)}</figcaption>"
        f'<svg viewBox="0 0 {width} {height}" width="{width}" role="img" aria-label="{esc(title)}">'
    ]
    for i, (label, n) in enumerate(items):
        y = 3 + i * row
        w = max(1.0, bar_w * n / top)
        out.append(
            f'<g class="bar {cls}" data-label="{esc(label)}" data-count="{n}">'
            f"<title>{esc(label)}: {n:,}</title>"
            f'<text x="{label_w - 6}" y="{y + 13}" text-anchor="end">{esc(_short(label, 24))}'
            f'</text><rect x="{label_w}" y="{y + 2}" width="{w:.1f}" height="{row - 6}"></rect>'
            f'<text x="{label_w + w + 5:.1f}" y="{y + 13}">{n:,}</text></g>'
        )
    out.append("</svg></figure>")
    return "".join(out)


def depth_items(counts: Any, cap: int = DEPTH_CAP) -> list[tuple[str, int]]:
    """``{"0": n, "3": n}`` as columns 0…max (gaps as 0), depths past ``cap`` summed into
    ``cap+``; keys that are not depths are left out."""
    by_depth: dict[int, int] = {}
    for key, value in _d(counts).items():
        try:
            depth = int(key)
        except (TypeError, ValueError):
            continue
        if depth >= 0 and count(value):
            depth = min(depth, cap)
            by_depth[depth] = by_depth.get(depth, 0) + count(value)
    if not by_depth:
        return []
    last = max(by_depth)
    return [
        (f"{d}+" if d == cap else str(d), by_depth.get(d, 0))
        for d in range(min(by_depth), last + 1)
    ]


def columns(
    chart: str,
    title: str,
    items: list[tuple[str, int]],
    x_label: str,
    cls: str,
    extra: tuple[str, int] | None = None,
) -> str:
    """A vertical column chart of a distribution (depths), with axis labels; ``extra`` is a
    column set apart after the others (URLs with no click depth)."""
    cols = [(label, n, cls) for label, n in items]
    if extra is not None and extra[1]:
        cols.append((extra[0], extra[1], "none"))
    if not cols:
        return note(chart, title, "no URLs")
    width, height, left, bottom, top_pad = 520, 210, 46, 40, 16
    plot_w, plot_h = width - left - 10, height - bottom - top_pad
    top = max(n for _, n, _ in cols) or 1
    step = nice_step(top)
    y_max = step * math.ceil(top / step)
    slot = plot_w / len(cols)
    bw = max(2.0, min(40.0, slot * 0.75))
    total = sum(n for _, n, _ in cols)
    out = [
        f'<figure class="chart" data-chart="{chart}" data-count="{total}">'
        f"<figcaption>{esc(title)}</figcaption>"
        f'<svg viewBox="0 0 {width} {height}" width="{width}" role="img" aria-label="{esc(title)}">'
    ]
    out.append(y_grid(left, width - 10, top_pad + plot_h, plot_h, y_max, step))
    every = max(1, math.ceil(len(cols) / 24))  # x labels that fit
    for i, (label, n, c) in enumerate(cols):
        h = plot_h * n / y_max
        x = left + i * slot + (slot - bw) / 2
        y = top_pad + plot_h - h
        shown = i % every == 0 or c == "none"
        out.append(
            f'<g class="bar {c}" data-label="{esc(label)}" data-count="{n}">'
            f"<title>{esc(label)}: {n:,} URLs</title>"
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{bw:.1f}" height="{max(h, 0.5):.1f}"></rect>'
            + (
                f'<text class="lbl" x="{x + bw / 2:.1f}" y="{y - 3:.1f}" text-anchor="middle">'
                f"{n:,}</text>"
                if shown and bw >= 14
                else ""
            )
            + (
                f'<text x="{x + bw / 2:.1f}" y="{top_pad + plot_h + 13}" text-anchor="middle">'
                f"{esc(label)}</text>"
                if shown
                else ""
            )
            + "</g>"
        )
    out.append(
        f'<line class="axis" x1="{left}" x2="{width - 10}" y1="{top_pad + plot_h}" '
        f'y2="{top_pad + plot_h}"></line>'
        f'<text class="lbl" x="{left + plot_w / 2:.0f}" y="{height - 6}" text-anchor="middle">'
        f"{esc(x_label)}</text>"
        f'<text class="lbl" x="12" y="{top_pad + plot_h / 2:.0f}" text-anchor="middle" '
        f'transform="rotate(-90 12 {top_pad + plot_h / 2:.0f})">URLs</text>'
        "</svg></figure>"
    )
    return "".join(out)


CLICK_TITLE = "Click depth (link hops from the seed)"
PATH_TITLE = "Path depth (segments in the URL path)"


def depth_charts(run: dict[str, Any]) -> str:
    depths = _d(run.get("discovery")).get("depths")
    if not isinstance(depths, dict):
        return note("click-depth", CLICK_TITLE, NOT_RECORDED) + note(
            "path-depth", PATH_TITLE, NOT_RECORDED
        )
    none = count(depths.get("click_none"))
    click = depth_items(depths.get("click"))
    click_html = columns(
        "click-depth",
        CLICK_TITLE,
        click,
        "link hops from the seed (none: found only in sitemaps)",
        "",
        ("none", none),
    )
    path_html = columns(
        "path-depth",
        PATH_TITLE,
        depth_items(depths.get("path")),
        "segments in the URL path (0: the site root)",
        "path",
    )
    return click_html + path_html


def filter_counts(discovery: dict[str, Any]) -> dict[str, int]:
    """URLs per filter reason (``discovery.filtered``), plus the junk flag and the
    ``requires_auth`` / ``malformed`` drops the report's table lists beside them."""
    out = {str(k): count(_d(v).get("count")) for k, v in _d(discovery.get("filtered")).items()}
    junk = discovery.get("flagged_as_junk", discovery.get("filtered_as_junk"))
    for name, entry in (
        ("flagged junk", junk),
        ("requires_auth", discovery.get("requires_auth")),
        ("malformed", discovery.get("malformed")),
    ):
        n = count(_d(entry).get("count"))
        if n:
            out[name] = out.get(name, 0) + n
    return out


def bar_charts(run: dict[str, Any]) -> str:
    discovery = _d(run.get("discovery"))
    refusals = _d(run.get("refusals"))
    kinds = (
        hbars("kinds", "Kinds (URLs per kind)", bar_items(discovery.get("kinds")), "", "no URLs")
        if "kinds" in discovery
        else note("kinds", "Kinds (URLs per kind)", NOT_RECORDED)
    )
    refused = (
        hbars(
            "refusals",
            "Refusal classes (pages refused)",
            bar_items(refusals.get("counts")),
            "ref",
            "no page was refused",
        )
        if refusals
        else note("refusals", "Refusal classes (pages refused)", "no page was fetched as a page")
    )
    filtered = hbars(
        "filtered",
        "Filter reasons (URLs filtered or flagged)",
        bar_items(filter_counts(discovery)),
        "flt",
        "nothing filtered",
    )
    return kinds + refused + filtered


# -- sitemap tree ------------------------------------------------------------------------
def sitemap_tree(run: dict[str, Any], max_lines: int = SITEMAP_LINES) -> str:
    """The sitemaps as the crawler walked them: robots.txt → its sitemaps → an index's
    children, then the conventional paths it probed and the input; one line each (URL,
    HTTP status, format, gzip, sitemaps named, URLs found, error), like ``usp ls``."""
    discovery = _d(run.get("discovery"))
    attempts = [_d(a) for a in _l(discovery.get("sitemap_attempts"))]
    title = "Sitemap tree (as the crawler walked it)"
    if not attempts:
        return note("sitemaps", title, "no sitemap was tried", wide=True)
    first_by_url: dict[str, int] = {}
    for i, a in enumerate(attempts):
        first_by_url.setdefault(str(a.get("url")), i)
    children: dict[int, list[int]] = {}
    robots = _d(discovery.get("robots"))
    robots_url = str(robots.get("url") or "")
    under_robots: list[int] = []
    top: dict[str, list[int]] = {}
    for i, a in enumerate(attempts):
        parent = a.get("parent")
        p = first_by_url.get(str(parent)) if parent is not None else None
        if p is not None and p < i:  # only an earlier attempt: no cycle can form
            children.setdefault(p, []).append(i)
        elif parent is not None and (str(parent) == robots_url or a.get("source") == "robots"):
            under_robots.append(i)
        else:
            top.setdefault(str(a.get("source") or "other"), []).append(i)
    budget = [max_lines]
    out: list[str] = []

    def line(a: dict[str, Any]) -> str:
        urls = count(a.get("urls"))
        bits = [f'<span class="u">{esc(a.get("url"))}</span>']
        status = a.get("status")
        if status is not None:
            bits.append(f'<span class="f">{esc(status)}</span>')
        if a.get("format"):
            bits.append(f'<span class="f">{esc(a.get("format"))}</span>')
        if a.get("gzipped"):
            bits.append('<span class="g">gzip</span>')
        if a.get("index") or count(a.get("sitemaps")):
            bits.append(f'<span class="f">→ {count(a.get("sitemaps")):,} sitemaps</span>')
        if urls or (a.get("ok") and not a.get("index")):
            bits.append(f'<span class="n">{urls:,} URLs</span>')
        if count(a.get("malformed")):
            bits.append(f'<span class="e">{count(a.get("malformed")):,} malformed</span>')
        if a.get("error"):
            bits.append(f'<span class="e">{esc(a.get("error"))}</span>')
        return " ".join(bits)

    def walk(i: int, depth: int) -> None:
        if budget[0] <= 0:
            return
        budget[0] -= 1
        a = attempts[i]
        attrs = (
            f'data-attempt="{i}" data-count="{count(a.get("urls"))}" '
            f'data-source="{esc(a.get("source"))}"'
        )
        kids = children.get(i, [])
        if not kids or depth > 50:
            out.append(f"<li {attrs}>{line(a)}</li>")
            return
        opened = "" if len(kids) > FOLD_CHILDREN else " open"
        out.append(f"<li {attrs}><details{opened}><summary>{line(a)}</summary><ul>")
        for k in kids:
            walk(k, depth + 1)
        out.append("</ul></details></li>")

    def group(label: str, indices: list[int]) -> None:
        out.append(f'<li class="grp"><details open><summary>{label}</summary><ul>')
        for i in indices:
            walk(i, 1)
        out.append("</ul></details></li>")

    if robots_url or under_robots:
        status = robots.get("status")
        extra = f" {esc(robots.get('error'))}" if robots.get("error") else ""
        group(
            f'<span class="u">{esc(robots_url or "robots.txt")}</span> '
            f'<span class="f">robots.txt {esc(status)}</span><span class="e">{extra}</span>',
            under_robots,
        )
    labels = {
        "conventional": "conventional paths (probed)",
        "input": "the input URL",
        "index": "named by an index not walked",
    }
    for source, indices in top.items():
        group(f'<span class="f">{esc(labels.get(source, source))}</span>', indices)
    drawn = max_lines - budget[0]
    more = (
        f'<p class="muted">{len(attempts) - drawn:,} more attempts not drawn.</p>'
        if drawn < len(attempts)
        else ""
    )
    total_urls = sum(count(a.get("urls")) for a in attempts)
    return (
        f'<figure class="chart wide" data-chart="sitemaps" data-count="{len(attempts)}" '
        f'data-urls="{total_urls}"><figcaption>{esc(title)} — {len(attempts):,} fetched or '
        f"tried, {total_urls:,} URLs</figcaption>"
        f'<div class="smtree"><ul>{"".join(out)}</ul></div>{more}</figure>'
    )


# -- timeline -----------------------------------------------------------------------------
def _series(values: Any, n: int) -> list[int]:
    seq = [count(v) for v in _l(values)[:n]]
    return seq + [0] * (n - len(seq))


def timeline_hosts(timeline: dict[str, Any], cap: int = TIMELINE_HOSTS) -> list[dict[str, Any]]:
    """The hosts drawn: ``cap - 1`` busiest on their own, the rest summed (``other hosts``);
    each with requests and refusals per bucket and its interval steps."""
    n = min(count(timeline.get("buckets")), MAX_BUCKETS)
    hosts = []
    for name, data in _d(timeline.get("hosts")).items():
        data = _d(data)
        steps = []
        for step in _l(data.get("interval")):
            if isinstance(step, list | tuple) and len(step) == 2:
                steps.append((number(step[0]), number(step[1])))
        hosts.append(
            {
                "host": str(name),
                "requests": _series(data.get("requests"), n),
                "refusals": _series(data.get("refusals"), n),
                "interval": steps,
            }
        )
    hosts.sort(key=lambda h: -sum(h["requests"]))
    if len(hosts) > cap:
        rest = hosts[cap - 1 :]
        merged = {
            "host": f"{len(rest)} other hosts",
            "requests": [sum(col) for col in zip(*(h["requests"] for h in rest), strict=True)],
            "refusals": [sum(col) for col in zip(*(h["refusals"] for h in rest), strict=True)],
            "interval": [],
            "merged": True,
        }
        hosts = [*hosts[: cap - 1], merged]
    return hosts


def timeline_chart(run: dict[str, Any]) -> str:
    """Requests per second per host, refusals, back-off / Retry-After holds as shaded spans
    per host, and each host's interval as a step line, over the crawl's seconds."""
    title = "Timeline (requests per second per host, refusals, holds, host interval)"
    timeline = run.get("timeline")
    if not isinstance(timeline, dict):
        return note("timeline", title, NOT_RECORDED, wide=True)
    n = min(count(timeline.get("buckets")), MAX_BUCKETS)
    # bounded, so that a hostile 5e-324 or 1e308 cannot make a rate or the span infinite
    width = min(max(number(timeline.get("bucket_seconds")) or 1.0, 0.001), 86_400.0)
    hosts = timeline_hosts(timeline)
    if not n or not hosts:
        return note("timeline", title, "no request was made", wide=True)
    # The axis spans the run (its buckets are as wide as they had to be, and a run shorter
    # than one bucket is still the seconds it took), a bucket's height its requests / width.
    elapsed = number(_d(run.get("provenance")).get("elapsed_seconds"))
    span = max(n * width, min(elapsed, n * width + 86_400.0))
    events = [_d(e) for e in _l(timeline.get("events"))][:TIMELINE_EVENTS]
    # A hold may run past the last bucket (a Retry-After at the end); one that claims more
    # than an hour past it is cut there, not allowed to squash the chart.
    for e in events:
        span = max(span, min(number(e.get("t")) + number(e.get("seconds")), span + 3600))
    W, left, right = 1100, 56, 90
    plot_w = W - left - right
    rate_h, lane_h, iv_h = 150, 14, 60
    y0 = 24
    rate_base = y0 + rate_h
    lanes_top = rate_base + 30
    iv_top = lanes_top + lane_h * len(hosts) + 26
    H = iv_top + iv_h + 34

    def x(t: float) -> float:
        return left + plot_w * min(t, span) / span

    rates = [[v / width for v in h["requests"]] for h in hosts]
    ref_total = [sum(col) / width for col in zip(*(h["refusals"] for h in hosts), strict=True)]
    top = max([max(r) for r in rates] + ref_total) or 1.0
    step = nice_step(top)
    y_max = step * math.ceil(top / step)
    total_requests = sum(sum(h["requests"]) for h in hosts)
    total_refusals = sum(sum(h["refusals"]) for h in hosts)
    out = [
        f'<figure class="chart wide" data-chart="timeline" data-count="{total_requests}" '
        f'data-refusals="{total_refusals}"><figcaption>{esc(title)}</figcaption>'
    ]
    legend = [
        f'<span data-host="{esc(h["host"])}"><i class="h{i % 7}"></i>'
        f"{esc(_short(h['host'], 48))} ({sum(h['requests']):,} requests)</span>"
        for i, h in enumerate(hosts)
    ]
    legend.append('<span><i class="lg-ref"></i>refusals</span>')
    for kind, name in EVENT_NAMES.items():
        legend.append(f'<span><i class="lg-{kind}"></i>{name}</span>')
    out.append(f'<div class="legend">{"".join(legend)}</div>')
    out.append(f'<svg viewBox="0 0 {W} {H}" width="{W}" role="img" aria-label="{esc(title)}">')
    # requests per second
    out.append(y_grid(left, W - right, rate_base, rate_h, y_max, step))
    out.append(
        f'<text class="lbl" x="14" y="{y0 + rate_h / 2:.0f}" text-anchor="middle" '
        f'transform="rotate(-90 14 {y0 + rate_h / 2:.0f})">requests / s</text>'
    )
    bw = plot_w / n
    for b, v in enumerate(ref_total):
        if v:
            h = rate_h * v / y_max
            refs = round(v * width)
            out.append(
                f'<rect class="tl-ref" data-count="{refs}" x="{x(b * width):.1f}" '
                f'y="{rate_base - h:.1f}" width="{max(bw, 1.5):.1f}" height="{h:.1f}">'
                f"<title>{refs:,} refused at {b * width:g} s</title></rect>"
            )
    for i, (h, r) in enumerate(zip(hosts, rates, strict=True)):
        pts = []
        for b, v in enumerate(r):
            yv = rate_base - rate_h * v / y_max
            pts.append(f"{x(b * width):.1f},{yv:.1f} {x((b + 1) * width):.1f},{yv:.1f}")
        out.append(
            f'<polyline data-host="{esc(h["host"])}" '
            f'data-count="{sum(h["requests"])}" data-refusals="{sum(h["refusals"])}" '
            f'class="tl-host h{i % 7}" points="{" ".join(pts)}">'
            f"<title>{esc(h['host'])}: {sum(h['requests']):,} requests</title></polyline>"
        )
    out.append(
        f'<line class="axis" x1="{left}" x2="{W - right}" y1="{rate_base}" y2="{rate_base}"></line>'
    )
    # holds: one lane per host
    out.append(
        f'<text class="lbl" x="{left}" y="{lanes_top - 6}">holds per host (back-off, '
        "Retry-After, pause; × gave up)</text>"
    )
    lane_of = {h["host"]: i for i, h in enumerate(hosts)}
    other_lane = len(hosts) - 1 if hosts[-1].get("merged") else None
    for i, h in enumerate(hosts):
        y = lanes_top + i * lane_h
        out.append(
            f'<rect class="tl-lane" x="{left}" y="{y}" width="{plot_w}" height="{lane_h - 2}">'
            f'</rect><text class="lbl" x="{W - right + 4}" y="{y + 10}">'
            f"{esc(_short(h['host'].split('//')[-1], 15))}</text>"
        )
    drawn = 0
    for e in events:
        kind = str(e.get("kind"))
        lane = lane_of.get(str(e.get("host")), other_lane)
        if lane is None or kind not in EVENT_COLOURS:
            continue
        t, secs = number(e.get("t")), number(e.get("seconds"))
        y = lanes_top + lane * lane_h
        label = f"{EVENT_NAMES[kind]} {secs:g} s at {t:g} s: {esc(e.get('host'))}"
        drawn += 1
        if kind == "give_up":
            out.append(
                f'<text class="tl-ev give_up" data-kind="give_up" x="{x(t):.1f}" '
                f'y="{y + 10}" text-anchor="middle">×<title>{label}</title></text>'
            )
        else:
            out.append(
                f'<rect class="tl-ev {kind}" data-kind="{kind}" x="{x(t):.1f}" y="{y}" '
                f'width="{max(x(t + secs) - x(t), 1.5):.1f}" height="{lane_h - 2}">'
                f"<title>{label}</title></rect>"
            )
    # host interval (seconds), as steps
    iv_max = max([s for h in hosts for _, s in h["interval"]] + [0.0]) or 1.0
    iv_step = nice_step(iv_max, 2)
    iv_top_value = iv_step * math.ceil(iv_max / iv_step)
    iv_base = iv_top + iv_h
    out.append(y_grid(left, W - right, iv_base, iv_h, iv_top_value, iv_step))
    out.append(
        f'<text class="lbl" x="{left}" y="{iv_top - 6}">host interval (seconds between '
        "requests to one host)</text>"
    )
    for i, h in enumerate(hosts):
        if not h["interval"]:
            continue
        pts, last = [], None
        for t, s in sorted(h["interval"]):
            y = iv_base - iv_h * s / iv_top_value
            if last is not None:
                pts.append(f"{x(t):.1f},{last:.1f}")
            pts.append(f"{x(t):.1f},{y:.1f}")
            last = y
        pts.append(f"{x(span):.1f},{last:.1f}")
        out.append(
            f'<polyline data-host="{esc(h["host"])}" '
            f'class="tl-iv h{i % 7}" points="{" ".join(pts)}"></polyline>'
        )
    # x axis: seconds since the crawl started
    t_step = nice_step(span, 8)
    k = 0
    while k * t_step <= span + 1e-9:
        xv = x(k * t_step)
        out.append(
            f'<line class="axis" x1="{xv:.1f}" x2="{xv:.1f}" y1="{iv_base}" '
            f'y2="{iv_base + 4}"></line><text class="lbl" x="{xv:.1f}" y="{iv_base + 16}" '
            f'text-anchor="middle">{_fmt(k * t_step)}</text>'
        )
        k += 1
    out.append(
        f'<line class="axis" x1="{left}" x2="{W - right}" y1="{iv_base}" y2="{iv_base}"></line>'
        f'<text class="lbl" x="{left + plot_w / 2:.0f}" y="{H - 4}" text-anchor="middle">'
        f"seconds since the crawl started (buckets of {width:g} s)</text></svg>"
    )
    events_count = count(timeline.get("events_count")) or len(events)
    out.append(
        f'<p class="muted" data-events="{drawn}">{drawn:,} holds drawn'
        + (f" of {events_count:,} recorded" if events_count > drawn else "")
        + ".</p></figure>"
    )
    return "".join(out)


def pictures(run: dict[str, Any], tree_figure: str) -> str:
    """Every picture, in reading order: the tree, the two depths side by side, the bars,
    the sitemap tree, the timeline."""
    return (
        f'<div class="pics">{tree_figure}'
        f'<div class="wide pair">{depth_charts(run)}</div>'
        f"{bar_charts(run)}{sitemap_tree(run)}{timeline_chart(run)}</div>"
    )
