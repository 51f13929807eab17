"""Removals judged only within a comparable scope, and no report lost to a kill (issue 35,
points 4 and 5): ``scrapy crawl discover`` re-run into the same folder against a site on
loopback — a child sitemap the index still lists answering 404, ``union`` then ``auto``,
``exclude_paths`` added, a kill right after the state is written, a foreign state.
"""

from __future__ import annotations

import json

import pytest

from discovery_crawler.output.kill_points import KILL_ENV
from discovery_crawler.output.state import CHANGES_NAME, STATE_NAME, iter_entries
from discovery_crawler.output.state_format import PREVIOUS_NAME
from tests.conftest import run_discover

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


class Site:
    """A site on loopback: a sitemap index (robots.txt lists it) of ``main.xml`` (pages
    /p/N/, lastmod per page), ``more.xml`` (/b/N/) and ``orphan.xml`` (/orphan/N/); a
    homepage linking to pages only links lead to (/l/N/)."""

    def __init__(self, serve, root):
        self.root = root
        root.mkdir()
        self.server = serve(root)
        self.pages = {f"/p/{i}/": "2026-11-01" for i in range(30)}
        self.more = [f"/b/{i}/" for i in range(10)]
        self.orphans = [f"/orphan/{i}/" for i in range(5)]
        self.links_only = [f"/l/{i}/" for i in range(6)]
        self.write()

    def url(self, path: str) -> str:
        return self.server.url(path)

    def _page(self, path: str, links=()) -> None:
        folder = self.root / path.strip("/")
        folder.mkdir(parents=True, exist_ok=True)
        anchors = "".join(f'<a href="{link}">{link}</a>' for link in links)
        (folder / "index.html").write_text(f"<html><body><h1>{path}</h1>{anchors}</body></html>")

    def _urlset(self, name: str, entries) -> None:
        body = "".join(
            f"<url><loc>{self.url(p)}</loc>{f'<lastmod>{lm}</lastmod>' if lm else ''}</url>"
            for p, lm in entries
        )
        (self.root / name).write_text(f"<urlset {NS}>{body}</urlset>")

    def write(self) -> None:
        (self.root / "index.html").write_text(
            "<html><body>"
            + "".join(f'<a href="{p}">{p}</a>' for p in self.links_only)
            + "</body></html>"
        )
        for path in [*self.pages, *self.more, *self.orphans, *self.links_only]:
            self._page(path)
        self._urlset("main.xml", [("/", None), *self.pages.items()])
        self._urlset("more.xml", [(p, None) for p in self.more])
        self._urlset("orphan.xml", [(p, None) for p in self.orphans])
        children = "".join(
            f"<sitemap><loc>{self.url('/' + n)}</loc></sitemap>"
            for n in ("main.xml", "more.xml", "orphan.xml")
        )
        (self.root / "sitemap_index.xml").write_text(
            f"<sitemapindex {NS}>{children}</sitemapindex>"
        )
        (self.root / "robots.txt").write_text(
            f"User-agent: *\nAllow: /\nSitemap: {self.url('/sitemap_index.xml')}\n"
        )

    def crawl(self, tmp_path, *args, **kwargs):
        return run_discover(self.url("/"), tmp_path, *args, out=tmp_path / "out", **kwargs)


def state_entries(out) -> dict[str, list]:
    return {e[0]: e for e in list(iter_entries(out / STATE_NAME))[1:]}


@pytest.fixture
def site(serve, tmp_path):
    return Site(serve, tmp_path / "site")


def test_a_listed_child_answering_404_removes_nothing(site, tmp_path):
    """The index still lists more.xml, which answers 404: a failed read, not an empty
    sitemap — its 10 URLs are kept, flagged unconfirmed, and the summary says why."""
    args = ("-a", "mode=sitemap")
    first = site.crawl(tmp_path, *args)
    assert first.returncode == 0, first.stderr[-3000:]
    (site.root / "more.xml").unlink()
    second = site.crawl(tmp_path, *args)
    changes = second.run["changes"]
    assert changes["removed"]["count"] == 0
    assert sorted(changes["unconfirmed"]["items"]) == sorted(site.url(p) for p in site.more)
    assert changes["removals_judged"] is False
    why = changes["removals_not_judged_because"]
    assert why == (
        f"sitemap {site.url('/more.xml')} not read (HTTP 404, still listed by "
        f"{site.url('/sitemap_index.xml')})"
    )
    assert f"removals not judged ({why})." in second.stderr
    assert "Not re-confirmed: 10 URL(s) listed before and not seen this time" in second.stderr
    assert "every source was read" not in second.stderr
    kept = state_entries(second.out)
    assert {kept[site.url(p)][5] for p in site.more} == {"unconfirmed"}
    assert kept[site.url("/b/0/")][2:4] == [1, 1]  # the previous record: last seen by run 1
    assert json.loads((second.out / CHANGES_NAME).read_text()) == changes


def test_union_then_auto_calls_no_links_only_page_removed(site, tmp_path):
    first = site.crawl(tmp_path, "-a", "mode=union")
    assert first.returncode == 0, first.stderr[-3000:]
    found = {r["url"] for r in first.records}
    assert {site.url(p) for p in site.links_only} <= found
    second = site.crawl(tmp_path, "-a", "mode=auto")
    assert second.returncode == 0, second.stderr[-3000:]
    changes = second.run["changes"]
    assert changes["removed"]["count"] == 0
    assert sorted(changes["unconfirmed"]["items"]) == sorted(site.url(p) for p in site.links_only)
    assert changes["removals_scope"] == "none"
    assert (
        "removals not judged (mode union→auto (the link crawl did not run: links-only URLs "
        "not judged))." in second.stderr
    )
    # Back to union: the links-only pages are known, not "new" again.
    third = site.crawl(tmp_path, "-a", "mode=union")
    assert third.returncode == 0, third.stderr[-3000:]
    changes = third.run["changes"]
    assert changes["new"]["count"] == 0 and changes["removed"]["count"] == 0
    assert changes["removals_judged"] is True and changes["unconfirmed"]["count"] == 0
    by_url = {r["url"]: r for r in third.records}
    assert {by_url[site.url(p)]["change"] for p in site.links_only} == {"known"}


def test_exclude_paths_added_judges_only_the_shared_scope(site, tmp_path):
    first = site.crawl(tmp_path, "-a", "mode=sitemap")
    assert first.returncode == 0, first.stderr[-3000:]
    del site.pages["/p/0/"]  # really gone, and inside both scopes
    site.write()
    second = site.crawl(tmp_path, "-a", "mode=sitemap", "-a", "exclude_paths=/orphan/")
    assert second.returncode == 0, second.stderr[-3000:]
    changes = second.run["changes"]
    assert changes["removed"]["items"] == [site.url("/p/0/")]
    assert sorted(changes["unconfirmed"]["items"]) == sorted(site.url(p) for p in site.orphans)
    assert changes["removals_scope"] == "in_scope"
    assert (
        "1 removed, 0 changed; removals judged only within the shared scope: paths changed "
        "(no path filter → exclude_paths=/orphan/): URLs out of this scope not judged."
    ) in second.stderr


def _edit(site):
    """10 new, 10 removed, 10 changed."""
    for i in range(10):
        del site.pages[f"/p/{i}/"]
        site.pages[f"/new/{i}/"] = "2026-11-01"
        site.pages[f"/p/{10 + i}/"] = "2026-12-01"
    site.write()


@pytest.mark.parametrize("point", ["changes_write", "state_rename"])
def test_a_kill_at_the_state_write_loses_no_report(site, tmp_path, point):
    """SIGKILL right after changes.json is written, or right after state.json is renamed
    into place (the job not yet marked finished): the resume reports the real changes."""
    job = tmp_path / "job"
    args = ("-a", "mode=sitemap")
    first = site.crawl(tmp_path, *args)
    assert first.returncode == 0, first.stderr[-3000:]
    _edit(site)
    jobdir = {"JOBDIR": str(job)}
    killed = site.crawl(tmp_path, *args, settings=jobdir, env={KILL_ENV: point})
    assert killed.returncode == -9, killed.stderr[-3000:]
    out = killed.out
    assert json.loads((out / CHANGES_NAME).read_text())["new"]["count"] == 10
    header = next(iter_entries(out / STATE_NAME))
    assert header["run"] == (2 if point == "state_rename" else 1)
    resumed = site.crawl(tmp_path, *args, settings=jobdir)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert resumed.run["job"]["resumed"] is True
    changes = resumed.run["changes"]
    assert (changes["new"]["count"], changes["removed"]["count"]) == (10, 10)
    assert changes["changed"]["count"] == 10 and changes["run"] == 2
    assert "10 new, 10 removed, 10 changed" in resumed.stderr
    assert json.loads((out / CHANGES_NAME).read_text()) == changes
    marks = {r["url"]: r["change"] for r in resumed.records}
    assert marks[site.url("/new/0/")] == "new" and marks[site.url("/p/10/")] == "changed"
    assert not (out / PREVIOUS_NAME).exists()  # the job finished: not kept any more
    assert next(iter_entries(out / STATE_NAME))["run"] == 2


def test_a_first_run_killed_after_its_state_resumes_as_a_first_run(site, tmp_path):
    jobdir = {"JOBDIR": str(tmp_path / "job")}
    killed = site.crawl(tmp_path, settings=jobdir, env={KILL_ENV: "state_rename"})
    assert killed.returncode == -9
    resumed = site.crawl(tmp_path, settings=jobdir)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert resumed.run["changes"]["previous_run"] is None
    assert "State: first run on this folder; " in resumed.stderr
    assert {r["change"] for r in resumed.records} == {"new"}


def test_a_foreign_state_is_kept_aside_and_the_run_is_a_first_run(site, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    foreign = '{"format": "someone-else/state/9", "origin": "x", "entries": [\n], "count": 0}\n'
    (out / STATE_NAME).write_text(foreign)
    result = site.crawl(tmp_path, "-a", "mode=sitemap")
    assert result.returncode == 0, result.stderr[-3000:]
    said = [ln for ln in result.stderr.splitlines() if "kept it aside" in ln]
    assert len(said) == 1 and "unknown format 'someone-else/state/9'" in said[0]
    [aside] = [p for p in out.iterdir() if p.name.startswith(f"{STATE_NAME}.corrupt-")]
    assert aside.read_text() == foreign
    assert result.run["changes"]["previous_run"] is None
    assert "State: first run on this folder (previous state unreadable" in result.stderr
