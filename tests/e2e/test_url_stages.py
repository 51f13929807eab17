"""The URL stages end to end: kinds, filter reasons,
auth flags, the junk filter and slugs, on a hand-made sitemap served on loopback."""

from __future__ import annotations

from tests.conftest import FIXTURES

SITE = "https://example.com"


def test_url_stages_end_to_end(serve, discover):
    server = serve(FIXTURES / "url_stages")
    result = discover(server.url("/sitemap.xml"))
    assert result.returncode == 0, result.stderr[-3000:]
    by_url = {r["url"]: r for r in result.records}
    # normalization: tracking parameter gone, escapes normalized, www twin rewritten,
    # trailing-slash twins collapsed to the slash form
    assert f"{SITE}/blog/post-one/?id=7" in by_url
    assert f"{SITE}/caf%C3%A9/menu~" in by_url
    assert f"{SITE}/pricing/" in by_url
    assert f"{SITE}/about/" in by_url and f"{SITE}/about" not in by_url  # /about came first
    assert f"{SITE}/contact/" in by_url and f"{SITE}/contact" not in by_url
    assert result.discovery["counts"]["slash_twins"] == 1  # one line rewritten to /about/
    assert by_url[f"{SITE}/about/"]["slug"] == "about"  # later-stage fields kept
    assert any("www" in note for note in result.discovery["notes"])
    # kinds: every record has one; the tally has all seven keys
    assert by_url[f"{SITE}/files/report.pdf"]["kind"] == "document"  # file kinds are kept
    assert by_url[f"{SITE}/"]["kind"] == "page"
    kinds = result.discovery["kinds"]
    assert set(kinds) == {"page", "paginated", "api", "asset", "document", "media", "archive"}
    assert kinds["asset"] == 1 and kinds["api"] == 1 and kinds["paginated"] == 1
    # filter reasons, counted and listed
    filtered = result.discovery["filtered"]
    assert filtered["asset"]["items"] == [f"{SITE}/assets/site.css"]
    assert filtered["api"]["items"] == [f"{SITE}/api/v1/items"]
    assert filtered["pagination"]["items"] == [f"{SITE}/blog/page/2/"]
    assert filtered["action"]["items"] == [f"{SITE}/logout"]
    # auth-walled: kept, flagged
    assert by_url[f"{SITE}/my-account/"]["flags"] == ["requires_auth"]
    assert result.discovery["requires_auth"]["items"] == [f"{SITE}/my-account/"]
    # junk: flagged with the pattern, kept in the feed, listed; near misses kept unflagged
    junk = {e["url"]: e["pattern"] for e in result.discovery["flagged_as_junk"]["items"]}
    assert junk == {f"{SITE}/sample-page/": "sample-page", f"{SITE}/test1/": "test"}
    assert result.discovery["flagged_as_junk"]["in_feed"] is True
    for url, pattern in junk.items():
        assert by_url[url]["flags"] == ["junk"] and by_url[url]["junk_pattern"] == pattern
        assert isinstance(by_url[url]["score"], int) and by_url[url]["slug"]
    for url in (
        f"{SITE}/testimonials/",
        f"{SITE}/experiments/ERP022128/test",  # a deep record named test
        f"{SITE}/experiments/GSE59714/gene-expression-analysis-of-influenza-vaccine-"
        "response-in-young-and-old",  # a long descriptive slug ending in -old
    ):
        assert by_url[url]["flags"] is None and "junk_pattern" not in by_url[url]
    assert "Flagged as likely junk (2): /sample-page/, /test1/" in result.stderr
    assert "junk" not in filtered
    # never selected, though scored and listed
    selection = result.run["selection"]
    kept = {c["url"] for c in (*selection["kept"]["items"], *selection["cut"]["items"])}
    assert not kept & set(junk) and selection["junk"] == 2
    # an /api/ path named like a page is a page (a Sphinx API reference)
    assert by_url[f"{SITE}/api/ktk.Player.close.html"]["kind"] == "page"
    # slugs: unique, filesystem-safe
    slugs = [r["slug"] for r in result.records]
    assert len(set(slugs)) == len(slugs)
    assert by_url[f"{SITE}/"]["slug"] == "home"
    assert by_url[f"{SITE}/CON"]["slug"] == "con-x"
    assert by_url[f"{SITE}/blog/post-one/?id=7"]["slug"] == "blog__post-one"
    # nothing vanished: every unique URL is a record or a counted drop
    counts = result.discovery["counts"]
    dropped = sum(v["count"] for k, v in filtered.items() if k != "other_host")
    assert counts["unique"] == len(result.records) + dropped


def test_junk_filter_off_and_pages_exempt(serve, discover):
    """``junk_filter=0`` flags nothing; ``pages=`` exempts a named URL from the junk flag."""
    server = serve(FIXTURES / "url_stages")
    off = discover(server.url("/sitemap.xml"), "-a", "junk_filter=0")
    by_url = {r["url"]: r for r in off.records}
    assert by_url[f"{SITE}/sample-page/"]["flags"] is None
    assert not any("junk_pattern" in r for r in off.records)
    assert off.discovery["flagged_as_junk"]["count"] == 0
    assert "likely junk" not in off.stderr
    exempt = discover(server.url("/sitemap.xml"), "-a", "pages=test1")
    by_url = {r["url"]: r for r in exempt.records}
    assert by_url[f"{SITE}/test1/"]["flags"] is None
    assert by_url[f"{SITE}/sample-page/"]["flags"] == ["junk"]
    assert [c["url"] for c in exempt.run["selection"]["kept"]["items"]] == [f"{SITE}/test1/"]
    # by path and by full URL too
    named = discover(server.url("/sitemap.xml"), "-a", f"pages=/sample-page/,{SITE.upper()}/test1/")
    assert named.discovery["flagged_as_junk"]["count"] == 0
    assert len(named.run["selection"]["kept"]["items"]) == 2


def test_junk_left_out_of_the_feed_when_junk_in_feed_is_off(serve, discover):
    """``JUNK_IN_FEED = False`` (profile sample): flagged junk is not in the feed, but it is
    counted as a drop and listed with its pattern, and the summary says where it went."""
    server = serve(FIXTURES / "url_stages")
    for args in (("-a", "profile=sample"), ("-s", "JUNK_IN_FEED=0")):
        result = discover(server.url("/sitemap.xml"), *args)
        assert result.returncode == 0, result.stderr[-3000:]
        assert f"{SITE}/sample-page/" not in result.urls and f"{SITE}/test1/" not in result.urls
        assert f"{SITE}/experiments/ERP022128/test" in result.urls
        flagged = result.discovery["flagged_as_junk"]
        assert flagged["count"] == 2 and flagged["in_feed"] is False
        assert {e["pattern"] for e in flagged["items"]} == {"sample-page", "test"}
        assert result.discovery["filtered"]["junk"]["count"] == 2
        assert "Flagged as likely junk (2): /sample-page/, /test1/; left out of the feed" in (
            result.stderr
        )
        counts = result.discovery["counts"]
        dropped = sum(
            v["count"] for k, v in result.discovery["filtered"].items() if k != "other_host"
        )
        assert counts["unique"] == len(result.records) + dropped
