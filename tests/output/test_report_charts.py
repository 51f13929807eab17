"""The pictures of report.html (output/report_charts.py, output/report_treemap.py): the data
they draw equals the crawl log's, hostile strings stay text, the JSON block cannot be broken
out of, and a crawl log without the newer keys still renders (with a note). In a browser:
``tests/e2e/test_report_browser.py``."""

from __future__ import annotations

import json
import math
from typing import Any

import lxml.html
from hypothesis import given, settings
from hypothesis import strategies as st

from discovery_crawler.extensions.timeline_buckets import Timeline
from discovery_crawler.output.report import render_report
from discovery_crawler.output.report_charts import (
    BAR_CAP,
    CLICK_TITLE,
    NOT_RECORDED,
    PATH_TITLE,
    TIMELINE_HOSTS,
    bar_items,
    depth_items,
    source_category,
    timeline_hosts,
)
from discovery_crawler.output.report_treemap import json_block, shape_tree, status_group
from tests.output.test_report import HOSTILE, HOSTILE_URL, hostile_run, scripts_and_handlers

CHARTS = ("tree", "sitemaps", "kinds", "refusals", "filtered", "click-depth", "path-depth")


def doc_of(run: dict[str, Any]) -> Any:
    return lxml.html.document_fromstring(render_report(run))


def chart(doc: Any, name: str) -> Any:
    found = doc.xpath(f"//*[@data-chart='{name}']")
    assert len(found) == 1, name
    return found[0]


def drawn(doc: Any, name: str, selector: str = ".//*[@data-label]") -> dict[str, int]:
    return {
        el.get("data-label"): int(el.get("data-count")) for el in chart(doc, name).xpath(selector)
    }


def depths_run() -> dict[str, Any]:
    return {
        "discovery": {
            "kinds": {"page": 40, "document": 2, "api": 0},
            "filtered": {"pagination": {"count": 7}, "other_host": {"count": 3}},
            "depths": {
                "click": {"1": 12, "3": 40},
                "click_none": 30,
                "path": {"0": 1, "1": 30, "2": 50},
            },
        },
        "refusals": {"counts": {"missing": 5, "wall": 0, "timeout": 2}, "total": 7},
    }


def timeline(hosts: dict[str, Any], events: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    n = max((len(h["requests"]) for h in hosts.values()), default=0)
    return {
        "bucket_seconds": 1.0,
        "buckets": n,
        "max_buckets": 600,
        "hosts": hosts,
        "events": events or [],
        "events_count": len(events or []),
    }


# -- bars and depths ---------------------------------------------------------------------
def test_bars_draw_the_crawl_logs_counts():
    doc = doc_of(depths_run())
    assert drawn(doc, "kinds") == {"page": 40, "document": 2}  # zero kinds are not drawn
    assert int(chart(doc, "kinds").get("data-count")) == 42
    assert drawn(doc, "refusals") == {"missing": 5, "timeout": 2}
    assert drawn(doc, "filtered") == {"pagination": 7, "other_host": 3}


def test_click_depth_and_path_depth_side_by_side_and_labelled():
    doc = doc_of(depths_run())
    click, path = chart(doc, "click-depth"), chart(doc, "path-depth")
    assert click.getparent() is path.getparent()  # one row, two charts
    assert click.xpath("string(figcaption)") == CLICK_TITLE
    assert path.xpath("string(figcaption)") == PATH_TITLE
    # gaps drawn as empty columns; the URLs with no click depth as their own column
    assert drawn(doc, "click-depth") == {"1": 12, "2": 0, "3": 40, "none": 30}
    assert drawn(doc, "path-depth") == {"0": 1, "1": 30, "2": 50}
    assert "link hops from the seed" in click.text_content()
    assert "segments in the URL path" in path.text_content()


def test_absent_keys_give_a_note_not_a_chart():
    """An old crawl log (no depths, no timeline) renders, each missing picture saying so."""
    doc = doc_of({"discovery": {"kinds": {"page": 1}}})
    for name in ("click-depth", "path-depth", "timeline"):
        fig = chart(doc, name)
        assert fig.get("data-absent") is not None
        assert NOT_RECORDED in fig.text_content()
        assert not fig.xpath(".//svg")
    assert drawn(doc, "kinds") == {"page": 1}
    # recorded but empty is not absent: a count of 0
    doc = doc_of({"discovery": {"depths": {"click": {}, "path": {}}}, "refusals": {"total": 0}})
    for name in ("click-depth", "path-depth", "refusals", "filtered", "sitemaps"):
        fig = chart(doc, name)
        assert fig.get("data-absent") is None and fig.get("data-count") == "0", name


def test_empty_and_malformed_runs_still_render_every_chart():
    runs = [
        {},
        {"discovery": {"depths": "x", "kinds": [1]}, "timeline": [], "tree": {"root": 3}},
        {
            "discovery": {"depths": {"click": {"a": 1, "-1": 4, "2": "x"}, "path": None}},
            "timeline": {"buckets": "9", "hosts": {"h": {"requests": "abc"}}},
        },
        {"timeline": {"buckets": 3, "bucket_seconds": math.nan, "hosts": {"h": {}}}},
        {  # absurd sizes: bounded, not a billion buckets nor a chart squashed to a pixel
            "timeline": {
                "buckets": 10**12,
                "bucket_seconds": 1e-300,
                "hosts": {"h": {"requests": [5] * 5}},
                "events": [{"t": 1e300, "seconds": 1e300, "kind": "pause", "host": "h"}],
            }
        },
    ]
    for run in runs:
        doc = doc_of(run)
        for name in (*CHARTS, "timeline"):
            chart(doc, name)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 10**9) | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(
    depths=JSON,
    timeline_value=JSON,
    hosts=st.dictionaries(st.text(max_size=10), JSON, max_size=3),
    events=st.lists(JSON, max_size=5),
    buckets=JSON,
    attempts=st.lists(JSON, max_size=5),
    tree=JSON,
)
def test_any_crawl_log_values_render(
    depths, timeline_value, hosts, events, buckets, attempts, tree
):
    """Whatever the newer keys and the drawn ones hold, the report renders, with our one
    script, no handler, and every chart present."""
    runs = [
        {
            "discovery": {"depths": depths, "sitemap_attempts": attempts},
            "timeline": timeline_value,
            "tree": {"root": tree},
        },
        {
            "discovery": {"depths": {"click": depths, "path": depths, "click_none": depths}},
            "timeline": {
                "buckets": buckets,
                "bucket_seconds": buckets,
                "hosts": hosts,
                "events": events,
            },
        },
    ]
    for run in runs:
        html = render_report(run)
        assert scripts_and_handlers(html) == (1, [])
        doc = lxml.html.document_fromstring(html)
        for name in (*CHARTS, "timeline"):
            chart(doc, name)


@given(st.dictionaries(st.text(max_size=12), st.integers(-5, 10**6), max_size=60))
def test_bar_items_keep_the_total(counts):
    items = bar_items(counts)
    assert len(items) <= BAR_CAP
    assert sum(n for _, n in items) == sum(v for v in counts.values() if v > 0)
    assert all(n > 0 for _, n in items)


@given(st.dictionaries(st.integers(0, 80).map(str), st.integers(0, 1000), max_size=40))
def test_depth_items_keep_the_total_and_the_order(counts):
    items = depth_items(counts)
    assert sum(n for _, n in items) == sum(counts.values())
    labels = [label.rstrip("+") for label, _ in items]
    assert labels == sorted(labels, key=int) and len(set(labels)) == len(labels)


@given(
    st.dictionaries(
        st.sampled_from(["sitemap", "alternate", "robots", "link", "seed", "unknown", "x"]),
        st.integers(0, 5),
    )
)
def test_source_category(sources):
    present = {k for k, v in sources.items() if v}
    maps, links = present & {"sitemap", "alternate", "robots"}, present & {"link", "seed"}
    expected = "both" if maps and links else "sitemap" if maps else "links" if links else "unknown"
    assert source_category(sources) == expected


# -- timeline ----------------------------------------------------------------------------
def test_timeline_draws_requests_refusals_holds_and_intervals():
    hosts = {
        "https://example.com": {
            "requests": [3, 4, 0, 2],
            "refusals": [0, 1, 0, 2],
            "interval": [[0, 1.0], [1.5, 4.0]],
        },
        "https://cdn.example.com": {"requests": [1, 0, 0, 1], "refusals": [0] * 4, "interval": []},
    }
    events = [
        {"t": 1.2, "host": "https://example.com", "kind": "backoff", "seconds": 4.0},
        {"t": 2.0, "host": "https://example.com", "kind": "retry_after", "seconds": 30},
        {"t": 3.0, "host": "https://cdn.example.com", "kind": "give_up", "seconds": 0},
        {"t": 3.0, "host": "https://cdn.example.com", "kind": "<b>bogus</b>", "seconds": 1},
    ]
    doc = doc_of({"timeline": timeline(hosts, events)})
    fig = chart(doc, "timeline")
    assert int(fig.get("data-count")) == 11 and int(fig.get("data-refusals")) == 3
    lines = {
        el.get("data-host"): int(el.get("data-count"))
        for el in fig.xpath(".//polyline[contains(@class,'tl-host')]")
    }
    assert lines == {"https://example.com": 9, "https://cdn.example.com": 2}
    assert sum(int(r.get("data-count")) for r in fig.xpath(".//*[@class='tl-ref']")) == 3
    kinds = [el.get("data-kind") for el in fig.xpath(".//*[@data-kind]")]
    assert kinds == ["backoff", "retry_after", "give_up"]  # an unknown kind is not drawn
    assert len(fig.xpath(".//polyline[contains(@class,'tl-iv')]")) == 1
    assert "seconds since the crawl started" in fig.text_content()
    assert "requests / s" in fig.text_content()


def _rates_and_ends(fig: Any) -> tuple[list[float], float, list[str]]:
    """The drawn requests/s of the first host (one per bucket, from its polyline's y and the
    y axis's labels), the x where its line ends over the plot's width, and the x labels."""
    [line] = fig.xpath(".//polyline[contains(@class,'tl-host')]")
    pts = [tuple(map(float, p.split(","))) for p in line.get("points").split()]
    labels = {  # a grid label is 4 below its line
        float(t.get("y")) - 4: t.text for t in fig.xpath(".//text[@text-anchor='end']")
    }
    top_y = min(labels)
    base_y = min(y for y, text in labels.items() if text == "0")  # the rates' zero
    y_max = float(labels[top_y].replace(",", ""))
    rates = [round(y_max * (base_y - y) / (base_y - top_y), 1) for _, y in pts[::2]]
    axis = [t.text for t in fig.xpath(".//text[@text-anchor='middle']") if t.text]
    return rates, (pts[-1][0] - 56) / (1100 - 56 - 90), axis


def test_a_short_run_spans_its_seconds_each_bucket_as_requests_per_second():
    """Issue 37.2: the demo (7 requests at one a second over 6.3 s) was drawn as a flat
    7 requests/s over a 0–1 s axis. The axis spans the run's seconds; a bucket's height is
    its requests over its width."""
    hosts = {"https://example.com": {"requests": [1, 2, 1, 1, 1, 1], "refusals": [0] * 6}}
    run = {"timeline": timeline(hosts), "provenance": {"elapsed_seconds": 6.3}}
    fig = chart(doc_of(run), "timeline")
    rates, end, axis = _rates_and_ends(fig)
    assert rates == [1, 2, 1, 1, 1, 1]
    assert abs(end - 6 / 6.3) < 0.01  # the last bucket ends at 6 s of a 6.3 s axis
    assert "6" in axis and "1" in axis


def test_a_long_run_spans_its_minutes_with_widened_buckets_as_requests_per_second():
    """Forty minutes at two requests a second: the buckets widen to stay within
    max_buckets (600 → 4 s each), and each is still drawn as 2 requests/s over 2,400 s."""
    line = Timeline(max_buckets=600)
    for k in range(2 * 2400):
        line.request("https://example.com", k / 2)
    data = line.as_dict()
    assert data["bucket_seconds"] == 4.0 and data["buckets"] == 600
    run = {"timeline": data, "provenance": {"elapsed_seconds": 2400.4}}
    rates, end, axis = _rates_and_ends(chart(doc_of(run), "timeline"))
    assert set(rates) == {2.0}
    assert abs(end - 1) < 0.01
    assert "2,000" in axis


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(0, 50), min_size=5, max_size=5), min_size=1, max_size=15))
def test_many_hosts_are_summed_into_other_hosts(per_host):
    hosts = {f"https://h{i}.example": {"requests": r} for i, r in enumerate(per_host)}
    shaped = timeline_hosts(timeline(hosts))
    assert len(shaped) == min(len(per_host), TIMELINE_HOSTS)
    assert sum(sum(h["requests"]) for h in shaped) == sum(map(sum, per_host))


def test_timeline_hostile_host_is_text():
    hosts = {HOSTILE_URL: {"requests": [1], "refusals": [1], "interval": [[0, 1]]}}
    events = [{"t": 0, "host": HOSTILE_URL, "kind": "pause", "seconds": 1}]
    html = render_report({"timeline": timeline(hosts, events)})
    assert "<img src=x" not in html and "<script>alert(1)" not in html
    assert scripts_and_handlers(html) == (1, [])


# -- sitemap tree ------------------------------------------------------------------------
def attempt(url: str, parent: str | None, source: str, **kw: Any) -> dict[str, Any]:
    return {"url": url, "parent": parent, "source": source, "status": 200, "ok": True, **kw}


def test_sitemap_tree_nests_robots_index_children():
    site = "https://example.com"
    attempts = [
        attempt(
            f"{site}/index.xml",
            f"{site}/robots.txt",
            "robots",
            index=True,
            sitemaps=2,
            format="sitemapindex",
        ),
        attempt(
            f"{site}/a.xml.gz", f"{site}/index.xml", "index", urls=10, gzipped=True, format="urlset"
        ),
        attempt(
            f"{site}/b.xml",
            f"{site}/index.xml",
            "index",
            urls=0,
            ok=False,
            status=500,
            error="HTTP 500",
        ),
        attempt(f"{site}/sitemap.xml", None, "conventional", urls=3, format="urlset"),
    ]
    run = {
        "discovery": {
            "robots": {"url": f"{site}/robots.txt", "status": 200},
            "sitemap_attempts": attempts,
        }
    }
    fig = chart(doc_of(run), "sitemaps")
    lines = fig.xpath(".//li[@data-attempt]")
    assert len(lines) == int(fig.get("data-count")) == 4
    assert int(fig.get("data-urls")) == 13
    index = fig.xpath(".//li[@data-attempt='0']")[0]
    assert [li.get("data-attempt") for li in index.xpath(".//li[@data-attempt]")] == ["1", "2"]
    robots_group = index.xpath("ancestor::li[@class='grp']")[0]
    assert "robots.txt" in robots_group.xpath("string(details/summary)")
    child = fig.xpath(".//li[@data-attempt='1']")[0].text_content()
    assert "gzip" in child and "10 URLs" in child and "urlset" in child
    assert "HTTP 500" in fig.xpath(".//li[@data-attempt='2']")[0].text_content()


def test_sitemap_tree_survives_cycles_and_hostile_urls():
    attempts = [
        attempt("https://e.com/a", "https://e.com/b", "index"),
        attempt("https://e.com/b", "https://e.com/a", "index"),
        attempt(HOSTILE_URL, HOSTILE_URL, "index", error=HOSTILE),
    ]
    html = render_report({"discovery": {"sitemap_attempts": attempts}})
    fig = chart(lxml.html.document_fromstring(html), "sitemaps")
    assert len(fig.xpath(".//li[@data-attempt]")) == 3
    assert scripts_and_handlers(html) == (1, [])


# -- the tree and its JSON block ---------------------------------------------------------
def data_of(html: str) -> Any:
    doc = lxml.html.document_fromstring(html)
    return json.loads(doc.get_element_by_id("report-data").text)


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=30))
def test_json_block_cannot_be_broken_out_of(text):
    for value in (text, f"</script>{text}", f"<!--{text}", f"</ScRiPt >{text}\u2028"):
        block = json_block({"v": value, value: [value]})
        inner = block[block.index(">") + 1 : -len("</script>")]
        assert "<" not in inner and ">" not in inner
        assert json.loads(inner) == {"v": value, value: [value]}


def test_hostile_tree_reaches_the_page_as_data_only():
    run = hostile_run()
    run["tree"]["root"]["children"][0]["name"] = "</script><script>alert(1)</script>"
    html = render_report(run)
    assert scripts_and_handlers(html) == (1, [])
    data = data_of(html)["tree"]
    assert data["root"]["ch"][0]["n"] == "</script><script>alert(1)</script>"
    assert data["root"]["ch"][0]["k"] == {HOSTILE: 1}


def synthetic_tree(nodes: int, fanout: int = 12) -> dict[str, Any]:
    """A tree of ``nodes`` nodes, each level ``fanout`` wide, counts summing up."""
    root: dict[str, Any] = {"name": "/", "path": "/", "children": []}
    made, frontier = 1, [root]
    while made < nodes:
        nxt = []
        for parent in frontier:
            for i in range(fanout):
                if made >= nodes:
                    break
                path = f"{parent['path'].rstrip('/')}/s{i}"
                child = {"name": f"s{i}", "path": path, "children": []}
                parent["children"].append(child)
                nxt.append(child)
                made += 1
        frontier = nxt

    def fill(node: dict[str, Any], depth: int) -> int:
        own = 1 + (len(node["path"]) % 3)
        total = own + sum(fill(c, depth + 1) for c in node["children"])
        node["count"] = total
        src = ("sitemap", "link", "seed")[depth % 3]
        node["sources"] = {src: total} if depth % 2 else {"sitemap": own, "link": total - own}
        node["kinds"] = {"page": total}
        node["statuses"] = {"200": total - own, "404": own} if depth else {"listed": total}
        return total

    fill(root, 0)
    return {"urls": root["count"], "nodes": nodes, "root": root}


def test_shape_tree_keeps_every_node_and_count_up_to_the_cap():
    tree = synthetic_tree(5_000)
    data = shape_tree(tree)
    assert data is not None and data["nodes"] == 5_000 and data["urls"] == tree["urls"]
    stack, seen = [data["root"]], 0
    while stack:
        node = stack.pop()
        seen += 1
        assert node["c"] >= sum(c["c"] for c in node.get("ch", []))
        assert node["g"][0] in ("sitemap", "links", "both")
        stack.extend(node.get("ch", []))
    assert seen == 5_000
    small = shape_tree(tree, max_nodes=100)
    assert small is not None and small["nodes"] == 100
    assert len(small["root"]["ch"]) == 12  # breadth first: the top levels are kept


def test_status_groups():
    assert [status_group(s) for s in ("listed", "200", "301", "404", "503", "999", None)] == [
        "listed",
        "2xx",
        "3xx",
        "4xx",
        "5xx",
        "other",
        "other",
    ]


def test_every_chart_is_marked_for_tests():
    run = depths_run()
    run["tree"] = synthetic_tree(50)
    run["discovery"]["sitemap_attempts"] = [attempt("https://e.com/s.xml", None, "input")]
    run["timeline"] = timeline({"https://e.com": {"requests": [1, 2]}})
    doc = doc_of(run)
    for name in (*CHARTS, "timeline"):
        fig = chart(doc, name)
        assert fig.get("data-absent") is None and fig.get("data-count").isdigit(), name
    assert int(chart(doc, "tree").get("data-count")) == run["tree"]["urls"]
    # the pictures come before the tables
    sections = [s.get("id") for s in doc.iter("section")]
    assert sections[0] == "pictures"
