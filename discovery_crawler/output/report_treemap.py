"""The path tree of ``report.html`` as a squarified treemap, drawn by inline script.

The tree (``runs[].tree.root``, bounded by ``TREE_MAX_NODES``) is shaped here into a
compact JSON block, ``<script type="application/json">``, which the browser does not run
and the CSP does not need to allow; its text is escaped so that no string from the run
(a URL holding ``</script>``) can end the block. The script (``JS``) reads the block with
``JSON.parse`` and draws SVG with ``textContent`` only, never ``innerHTML``: a cell's area
is its URL count, its colour where the URLs came from (sitemap only / links only / both),
their HTTP status or their kind; a click zooms into a cell, the breadcrumb zooms back out,
hovering shows the counts. No Scrapy imports.
"""

from __future__ import annotations

import json
from collections import Counter, deque
from typing import Any

from discovery_crawler.output.report_charts import (
    LINK_SOURCES,
    SITEMAP_SOURCES,
    _d,
    _l,
    count,
    esc,
    note,
    source_category,
)

MAX_NODES = 5_000  # nodes put in the JSON block; matches TREE_MAX_NODES
MAX_DEPTH = 64  # levels below the root; the groups stage stops at TREE_MAX_DEPTH (8)
DATA_ID = "report-data"

SOURCE_COLOURS = {
    "sitemap": ("sitemap only", "#3d7cc0"),
    "links": ("links only", "#e08a2e"),
    "both": ("both", "#7b5ea7"),
    "unknown": ("not recorded", "#9aa5b1"),
}
STATUS_COLOURS = {
    "listed": ("listed, not fetched", "#9aa5b1"),
    "2xx": ("2xx", "#2e8b57"),
    "3xx": ("3xx redirect", "#4aa3df"),
    "4xx": ("4xx", "#e0a030"),
    "5xx": ("5xx", "#c0392b"),
    "other": ("other", "#5b6673"),
}
KIND_PALETTE = (
    "#3d7cc0",
    "#2e8b57",
    "#e08a2e",
    "#8e44ad",
    "#c0392b",
    "#16a085",
    "#b7791f",
    "#5b6673",
    "#d35e9c",
    "#7f8c8d",
)


def status_group(status: Any) -> str:
    """``listed`` (not fetched), ``2xx`` … ``5xx`` or ``other``."""
    text = str(status)
    if text == "listed":
        return "listed"
    if len(text) == 3 and text.isdigit() and text[0] in "2345":
        return text[0] + "xx"
    return "other"


def _dominant(counts: Counter[str]) -> str:
    return max(counts.items(), key=lambda kv: kv[1])[0] if counts else ""


def _tally(value: Any) -> dict[str, int]:
    return {str(k): count(v) for k, v in _d(value).items() if count(v)}


def shape_tree(tree: Any, max_nodes: int = MAX_NODES) -> dict[str, Any] | None:
    """The crawl log's tree as the treemap's JSON: per node ``n`` name, ``p`` path,
    ``c`` count, ``k``/``s``/``t`` kinds/sources/statuses, ``g`` its colour categories
    (source, status group, kind), ``ch`` children; at most ``max_nodes`` nodes, breadth
    first (so a cut loses the deepest, smallest levels). ``None`` without a root."""
    root = _d(_d(tree).get("root"))
    if not root:
        return None
    kinds_seen: Counter[str] = Counter()
    budget = max_nodes
    out_root: dict[str, Any] = {}
    queue: deque[tuple[dict[str, Any], dict[str, Any], int]] = deque([(root, out_root, 0)])
    while queue:
        node, out, depth = queue.popleft()
        budget -= 1
        kinds = _tally(node.get("kinds"))
        statuses = _tally(node.get("statuses"))
        groups: Counter[str] = Counter()
        for status, n in statuses.items():
            groups[status_group(status)] += n
        kind = _dominant(Counter(kinds))
        kinds_seen.update(kinds)
        out.update(
            n=str(node.get("name") or "/"),
            p=str(node.get("path") or ""),
            c=count(node.get("count")),
            k=kinds,
            s=_tally(node.get("sources")),
            t=statuses,
            g=[source_category(node.get("sources")), _dominant(groups) or "other", kind],
        )
        if node.get("collapsed"):
            out["x"] = 1
        if depth >= MAX_DEPTH:
            continue
        children = []
        for child in _l(node.get("children")):
            if not isinstance(child, dict) or budget - len(queue) <= 0:
                continue
            shaped: dict[str, Any] = {}
            children.append(shaped)
            queue.append((child, shaped, depth + 1))
        if children:
            out["ch"] = children
    kind_colours = {
        kind: (kind, KIND_PALETTE[i % len(KIND_PALETTE)])
        for i, (kind, _) in enumerate(kinds_seen.most_common())
    }
    return {
        "root": out_root,
        "urls": count(_d(tree).get("urls")) or out_root["c"],
        "nodes": max_nodes - budget,
        # each source's colour class, for the legend's counts (``source_category``)
        "sides": {
            **dict.fromkeys(SITEMAP_SOURCES, "sitemap"),
            **dict.fromkeys(LINK_SOURCES, "links"),
            "both": "both",
        },
        "palette": {
            "source": SOURCE_COLOURS,
            "status": STATUS_COLOURS,
            "kind": kind_colours,
        },
    }


def json_block(data: Any, element_id: str = DATA_ID) -> str:
    """``data`` in a ``<script type="application/json">`` that no string can break out
    of: ``<``, ``>`` and ``&`` are written as JSON escapes (so ``</script>`` and ``<!--``
    cannot occur), and U+2028/U+2029 too."""
    text = (
        json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )
    return f'<script type="application/json" id="{esc(element_id)}">{text}</script>'


TITLE = "Path tree (area: URLs; click a cell to zoom in, the path above to zoom out)"


def treemap(run: dict[str, Any], max_nodes: int = MAX_NODES) -> tuple[str, Any]:
    """(the figure's HTML, the data for the JSON block) of the run's tree."""
    data = shape_tree(run.get("tree"), max_nodes)
    if data is None:
        return note("tree", TITLE, "no path tree (no URLs reached the groups stage)", True), None
    modes = "".join(
        f'<button type="button" data-mode="{m}" '
        f'aria-pressed="{"true" if m == "source" else "false"}">{label}</button>'
        for m, label in (("source", "where found"), ("status", "HTTP status"), ("kind", "kind"))
    )
    html = (
        f'<figure class="chart wide" data-chart="tree" id="treemap" data-count="{data["urls"]}" '
        f'data-nodes="{data["nodes"]}"><figcaption>{esc(TITLE)}</figcaption>'
        f'<div class="tm-bar"><span class="tm-modes">colour: {modes}</span>'
        '<span class="tm-crumbs" aria-label="zoom path"></span></div>'
        '<div class="legend tm-legend"></div>'
        '<div class="tm-box"><svg class="tm" role="img" aria-label="treemap of the path tree">'
        '</svg><div class="tm-tip" hidden></div></div>'
        '<p class="muted tm-nojs">The treemap is drawn by the page\'s script; the tree below has '
        "the same counts.</p></figure>"
    )
    return html, data


CSS = """
.tm-bar{display:flex;flex-wrap:wrap;gap:6px 18px;align-items:center;font-size:12px;margin:2px 0}
.tm-bar button{font:inherit;font-size:12px;margin:0 2px;padding:1px 8px;border:1px solid
var(--line);border-radius:10px;background:var(--bg);cursor:pointer}
.tm-bar button[aria-pressed=true]{background:var(--acc);color:#fff;border-color:var(--acc)}
.tm-crumbs button{border-radius:3px;padding:0 5px}
.tm-crumbs button:disabled{background:var(--alt);color:var(--fg);cursor:default}
.tm-box{position:relative}
svg.tm{display:block;width:100%;user-select:none}
svg.tm g.cell{cursor:pointer}
svg.tm rect{stroke:#fff;stroke-width:1}
svg.tm g.cell:hover>rect{stroke:#1d232a;stroke-width:1.5}
svg.tm g.self>rect{opacity:.55}
figure.chart svg.tm text{font:11px system-ui,sans-serif;fill:#10151a;pointer-events:none}
figure.chart svg.tm text.hd{font-weight:600}
.tm-tip{position:absolute;z-index:2;pointer-events:none;background:#1d232a;color:#fff;
font-size:12px;line-height:1.4;padding:6px 8px;border-radius:4px;max-width:420px;
word-break:break-all;box-shadow:0 2px 6px rgba(0,0,0,.25)}
.tm-tip b{display:block}
.tm-drawn .tm-nojs{display:none}
"""

JS = r"""
document.addEventListener("DOMContentLoaded", function () {
  var dataEl = document.getElementById("report-data");
  var fig = document.getElementById("treemap");
  if (!dataEl || !fig) { return; }
  var data = JSON.parse(dataEl.textContent).tree;
  if (!data || !data.root) { return; }
  var NS = "http://www.w3.org/2000/svg";
  var svg = fig.querySelector("svg.tm"), tip = fig.querySelector(".tm-tip");
  var crumbs = fig.querySelector(".tm-crumbs"), legend = fig.querySelector(".tm-legend");
  var MODES = {source: 0, status: 1, kind: 2}, HEAD = 16, LEVELS = 3;
  var mode = "source", zoom = data.root;
  var stack = [[data.root, null]];
  while (stack.length) {  // parent links, without recursion
    var item = stack.pop();
    item[0].parent = item[1];
    (item[0].ch || []).forEach(function (c) { stack.push([c, item[0]]); });
  }

  function fmt(v) { return Number(v).toLocaleString("en-US"); }
  function shown(text) {  // a percent-encoded segment (/%D8%AA…) as the reader knows it
    try { return decodeURIComponent(text); } catch (e) { return text; }
  }
  function colour(n) {
    var entry = data.palette[mode][n.g[MODES[mode]]];
    return entry ? entry[1] : "#9aa5b1";
  }
  function el(tag, attrs, parent) {
    var e = document.createElementNS(NS, tag);
    for (var k in attrs) { e.setAttribute(k, attrs[k]); }
    if (parent) { parent.appendChild(e); }
    return e;
  }
  function clear(node) { while (node.firstChild) { node.removeChild(node.firstChild); } }
  function div(parent, text) {
    var d = document.createElement("div");
    d.textContent = text;
    parent.appendChild(d);
  }

  // Squarified treemap (Bruls, Huizing, van Wijk): rows along the shorter side, a row
  // grown while it makes its worst aspect ratio better. items: [{v}], largest first.
  function worst(sum, min, max, side) {
    var s2 = sum * sum, w2 = side * side;
    return Math.max(w2 * max / s2, s2 / (w2 * min));
  }
  function squarify(items, x, y, w, h) {
    var out = [], total = 0, i;
    for (i = 0; i < items.length; i++) { total += items[i].v; }
    if (total <= 0 || w <= 0 || h <= 0) { return out; }
    var scale = w * h / total;
    var areas = items.map(function (it) { return it.v * scale; });
    i = 0;
    while (i < items.length) {
      var side = Math.min(w, h), start = i, sum = areas[i];
      var cur = worst(sum, areas[i], areas[start], side);
      i++;
      while (i < items.length) {
        var next = worst(sum + areas[i], areas[i], areas[start], side);
        if (next > cur) { break; }
        sum += areas[i];
        cur = next;
        i++;
      }
      var j, off;
      if (w >= h) {
        var cw = sum / h;
        for (j = start, off = y; j < i; j++) {
          out.push({it: items[j], x: x, y: off, w: cw, h: areas[j] / cw});
          off += areas[j] / cw;
        }
        x += cw;
        w -= cw;
      } else {
        var rh = sum / w;
        for (j = start, off = x; j < i; j++) {
          out.push({it: items[j], x: off, y: y, w: areas[j] / rh, h: rh});
          off += areas[j] / rh;
        }
        y += rh;
        h -= rh;
      }
    }
    return out;
  }

  function label(g, text, x, y, w, cls) {
    var max = Math.floor((w - 6) / 6.4);
    if (max < 2) { return; }
    if (text.length > max) { text = text.slice(0, max - 1) + "\u2026"; }
    var t = el("text", {x: x + 3, y: y + 12}, g);
    if (cls) { t.setAttribute("class", cls); }
    t.textContent = text;
  }

  // A node's children (and its own URLs, the part no child holds) in its rectangle;
  // a child big enough gets a header and its own children inside, LEVELS deep.
  function layout(node, x, y, w, h, level) {
    var kids = (node.ch || []).filter(function (c) { return c.c > 0; }), sum = 0;
    var items = kids.map(function (c) { sum += c.c; return {n: c, v: c.c}; });
    if (node.c > sum && kids.length) { items.push({n: node, v: node.c - sum, self: true}); }
    items.sort(function (a, b) { return b.v - a.v; });
    squarify(items, x, y, w, h).forEach(function (r) {
      if (r.w < 0.5 || r.h < 0.5) { return; }
      var n = r.it.n;
      var g = el("g", {"class": r.it.self ? "cell self" : "cell", "data-path": n.p,
                       "data-count": r.it.v, "data-level": level,
                       "data-category": n.g[MODES[mode]]}, svg);
      g.__node = n;
      g.__self = !!r.it.self;
      el("rect", {x: r.x.toFixed(1), y: r.y.toFixed(1), width: r.w.toFixed(1),
                  height: r.h.toFixed(1), fill: colour(n)}, g);
      var deeper = !r.it.self && n.ch && level < LEVELS && r.w > 48 && r.h > HEAD + 18;
      var name = r.it.self ? "(this path)" : shown(n.n);
      if (r.h >= 14) { label(g, name + " " + fmt(r.it.v), r.x, r.y, r.w, deeper ? "hd" : ""); }
      if (deeper) { layout(n, r.x + 2, r.y + HEAD, r.w - 4, r.h - HEAD - 2, level + 1); }
    });
  }

  function draw() {
    var W = Math.max(320, svg.parentNode.clientWidth);
    var H = Math.round(Math.max(300, Math.min(460, W * 0.42)));
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.setAttribute("height", H);
    clear(svg);
    if ((zoom.ch || []).some(function (c) { return c.c > 0; })) {
      layout(zoom, 0, 0, W, H, 1);
    } else {
      var g = el("g", {"class": "cell", "data-path": zoom.p, "data-count": zoom.c,
                       "data-level": 1, "data-category": zoom.g[MODES[mode]]}, svg);
      g.__node = zoom;
      el("rect", {x: 0, y: 0, width: W, height: H, fill: colour(zoom)}, g);
      label(g, shown(zoom.n) + " " + fmt(zoom.c), 0, 0, W, "hd");
    }
    fig.setAttribute("data-zoom", zoom.p);
    fig.setAttribute("data-zoom-count", zoom.c);
    drawCrumbs();
    drawLegend();
    fig.classList.add("tm-drawn");
  }

  function drawCrumbs() {
    clear(crumbs);
    var chain = [];
    for (var n = zoom; n; n = n.parent) { chain.unshift(n); }
    chain.forEach(function (node, i) {
      var b = document.createElement("button");
      b.type = "button";
      b.textContent = (i ? shown(node.n) : "/") + " (" + fmt(node.c) + ")";
      b.__node = node;
      b.disabled = node === zoom;
      crumbs.appendChild(b);
      if (i < chain.length - 1) { crumbs.appendChild(document.createTextNode(" \u203a ")); }
    });
  }

  function statusGroup(t) {  // report_treemap.status_group
    if (t === "listed") { return "listed"; }
    return /^[2-5][0-9][0-9]$/.test(t) ? t[0] + "xx" : "other";
  }
  // The URLs at or below the zoomed node in each colour class of the mode: the legend says
  // how many URLs each colour stands for (the inventory's counts at the root).
  function classCounts() {
    var out = {}, tally = mode === "source" ? zoom.s : mode === "status" ? zoom.t : zoom.k;
    Object.keys(tally || {}).forEach(function (k) {
      var cat = mode === "source" ? (data.sides[k] || "unknown")
        : mode === "status" ? statusGroup(k) : k;
      out[cat] = (out[cat] || 0) + tally[k];
    });
    return out;
  }

  function drawLegend() {
    clear(legend);
    var pal = data.palette[mode], used = classCounts(), todo = [zoom];
    while (todo.length) {
      var n = todo.pop();
      used[n.g[MODES[mode]]] = used[n.g[MODES[mode]]] || 0;
      (n.ch || []).forEach(function (c) { todo.push(c); });
    }
    Object.keys(pal).forEach(function (k) {
      if (used[k] === undefined) { return; }
      var s = document.createElement("span"), i = document.createElement("i");
      s.setAttribute("data-category", k);
      s.setAttribute("data-count", used[k]);
      s.appendChild(i);
      s.appendChild(document.createTextNode(pal[k][0] + " (" + fmt(used[k]) + ")"));
      i.style.background = pal[k][1];  // CSSOM: allowed by the CSP, unlike a style attribute
      legend.appendChild(s);
    });
    var hint = document.createElement("span");
    hint.className = "muted";
    hint.textContent = mode === "source"
      ? "(URLs a sitemap listed and no page linked, linked and not listed, or both; " +
        "a path's colour: both when its URLs are of more than one)"
      : "(what most of a path's URLs are)";
    legend.appendChild(hint);
  }

  function counts(obj) {
    return Object.keys(obj || {}).map(function (k) { return k + " " + fmt(obj[k]); }).join(", ");
  }

  function showTip(g, ev) {
    var n = g.__node, c = +g.getAttribute("data-count");
    clear(tip);
    var b = document.createElement("b");
    b.textContent = (g.__self ? "(this path) " : "") + shown(n.p || n.n);
    tip.appendChild(b);
    var parent = g.__self ? n : n.parent, share = "";
    if (parent && parent.c) {
      share = " (" + (100 * c / parent.c).toFixed(1) + "% of " + shown(parent.p || parent.n) + ")";
    }
    div(tip, "URLs: " + fmt(c) + share);
    [["sources", n.s], ["statuses", n.t], ["kinds", n.k]].forEach(function (row) {
      var text = counts(row[1]);
      if (text) { div(tip, row[0] + ": " + text); }
    });
    if (n.x) { div(tip, "\u201c\u2026\u201d counts what got no node of its own"); }
    tip.hidden = false;
    var box = svg.parentNode.getBoundingClientRect();
    var x = ev.clientX - box.left + 14, y = ev.clientY - box.top + 14;
    if (x + tip.offsetWidth > box.width) {
      x = Math.max(0, ev.clientX - box.left - tip.offsetWidth - 10);
    }
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  }

  function cellOf(ev) { return ev.target.closest ? ev.target.closest("g.cell") : null; }
  svg.addEventListener("mousemove", function (ev) {
    var g = cellOf(ev);
    if (g) { showTip(g, ev); } else { tip.hidden = true; }
  });
  svg.addEventListener("mouseleave", function () { tip.hidden = true; });
  svg.addEventListener("click", function (ev) {
    var g = cellOf(ev);
    if (!g || g.__self) { return; }
    var n = g.__node;
    if (n.ch && n.ch.length && n !== zoom) {
      zoom = n;  // into the cell
    } else if (n.parent && n !== zoom && n.parent !== zoom) {
      zoom = n.parent;  // a leaf drawn inside its parent's cell: into that parent
    } else {
      return;
    }
    tip.hidden = true;
    draw();
  });
  crumbs.addEventListener("click", function (ev) {
    var b = ev.target.closest("button");
    if (b && b.__node && b.__node !== zoom) { zoom = b.__node; draw(); }
  });
  document.addEventListener("keydown", function (ev) {
    if (ev.key === "Escape" && zoom.parent) { zoom = zoom.parent; draw(); }
  });
  fig.querySelectorAll(".tm-modes button").forEach(function (b) {
    b.addEventListener("click", function () {
      mode = b.getAttribute("data-mode");
      fig.querySelectorAll(".tm-modes button").forEach(function (o) {
        o.setAttribute("aria-pressed", o === b ? "true" : "false");
      });
      fig.setAttribute("data-mode", mode);
      draw();
    });
  });
  var timer = null;
  window.addEventListener("resize", function () {
    clearTimeout(timer);
    timer = setTimeout(draw, 120);
  });
  fig.setAttribute("data-mode", mode);
  draw();
});
"""
