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
    # junk: dropped with the pattern; near miss kept; summary line
    junk = {e["url"]: e["pattern"] for e in result.discovery["filtered_as_junk"]["items"]}
    assert set(junk) == {f"{SITE}/sample-page/", f"{SITE}/test1/"}
    assert f"{SITE}/testimonials/" in by_url
    assert "Filtered as likely junk (2): " in result.stderr
    # slugs: unique, filesystem-safe
    slugs = [r["slug"] for r in result.records]
    assert len(set(slugs)) == len(slugs)
    assert by_url[f"{SITE}/"]["slug"] == "home"
    assert by_url[f"{SITE}/CON"]["slug"] == "con-x"
    assert by_url[f"{SITE}/blog/post-one/?id=7"]["slug"] == "blog__post-one"
    # nothing vanished: every unique URL is a record or a counted drop
    counts = result.discovery["counts"]
    dropped = sum(v["count"] for k, v in filtered.items() if k != "other_host")
    dropped += result.discovery["filtered_as_junk"]["count"]
    assert counts["unique"] == len(result.records) + dropped


def test_junk_filter_off_and_pages_exempt(serve, discover):
    """``junk_filter=0`` keeps junk; ``pages=`` exempts a named URL from the junk filter."""
    server = serve(FIXTURES / "url_stages")
    off = discover(server.url("/sitemap.xml"), "-a", "junk_filter=0")
    assert f"{SITE}/sample-page/" in off.urls
    assert off.discovery["filtered_as_junk"]["count"] == 0
    exempt = discover(server.url("/sitemap.xml"), "-a", "pages=test1")
    assert f"{SITE}/test1/" in exempt.urls
    assert f"{SITE}/sample-page/" not in exempt.urls
    # by path and by full URL too
    named = discover(server.url("/sitemap.xml"), "-a", f"pages=/sample-page/,{SITE.upper()}/test1/")
    assert {f"{SITE}/sample-page/", f"{SITE}/test1/"} <= set(named.urls)
