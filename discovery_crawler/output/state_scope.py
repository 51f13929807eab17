"""Which URLs a re-run may call ``removed`` (SPEC §10): only those it could have found again.

A URL is judged removed when this run read, successfully, every source that could list
it, under a scope that covers the one it was found under. The run-level faults (a failed
or interrupted run, a bound limit, a listed sitemap not read — a child a sitemap index
still lists answering 404 included — page fetches that failed) are the pipeline's to tell
(``pipelines/state.py``); this module compares *scopes*: what the run was set to look at.

A scope (``RunScope``) is what decides which URLs a run can find at all:

- ``sources``: the discovery sources that ran — ``sitemap`` (the sitemap walk) and
  ``link`` (the link crawl; ``auto`` runs it only when it falls back, ``union`` always);
- ``paths``: the ``include_paths`` / ``exclude_paths`` pair;
- ``profile``: a profile changes what a run may fetch (the SSRF guard, budgets, mode).

``judge(recorded, current)`` says how far a run of scope ``current`` may judge URLs found
under ``recorded``:

- ``ALL`` — ``current`` covers ``recorded``: every URL it did not see is removed;
- ``IN_SCOPE`` — the paths narrowed and only sitemaps were read (a sitemap is read whole
  whatever the paths): URLs inside ``current``'s paths are judged, the others are not;
- ``NONE`` — another profile, a source that did not run this time (``union`` → ``auto``:
  the pages only links led to were not looked for), or narrowed paths with a link crawl
  (it does not pass through pages out of scope, so what only they link to is not found).

A URL not judged keeps its previous record with status ``unconfirmed`` (``state.py``),
and the scope it was found under is kept in the state (``merge``) until a run covers it.

Pure: no Scrapy; the per-URL path test is ``urls.filters.FilterPolicy``'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from discovery_crawler.urls.filters import DROP, FilterPolicy

if TYPE_CHECKING:
    from collections.abc import Iterable

SOURCES = ("sitemap", "link")
ALL, IN_SCOPE, NONE = "all", "in_scope", "none"
_PATH_DROPS = frozenset({DROP["include_paths"], DROP["exclude_paths"]})
_MAX_PATHS = 8  # distinct path pairs kept in a merged scope; past it, only "no filter" covers

Paths = tuple[tuple[str, ...], tuple[str, ...]]  # (include_paths, exclude_paths)
_ANY: Paths = ((), ())


def _clean(paths: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted({p.strip() for p in paths if p and p.strip()}))


@dataclass(frozen=True)
class RunScope:
    """What a run (or, merged, the runs behind a state's entries) looked at."""

    sources: frozenset[str]
    paths: frozenset[Paths] = frozenset({_ANY})
    profiles: frozenset[str] = frozenset({"default"})
    modes: frozenset[str] = frozenset()

    @classmethod
    def of_run(
        cls,
        mode: str,
        sources: Iterable[str],
        include_paths: Iterable[str] = (),
        exclude_paths: Iterable[str] = (),
        profile: str = "default",
    ) -> RunScope:
        return cls(
            sources=frozenset(sources),
            paths=frozenset({(_clean(include_paths), _clean(exclude_paths))}),
            profiles=frozenset({profile}),
            modes=frozenset({mode}),
        )

    def merge(self, other: RunScope) -> RunScope:
        """The scope of the entries of both (URLs found under either)."""
        paths = self.paths | other.paths
        if len(paths) > _MAX_PATHS:
            paths = frozenset({(("*",), ())})  # many: no pair but "no filter" equals it
        return RunScope(
            self.sources | other.sources,
            paths,
            self.profiles | other.profiles,
            self.modes | other.modes,
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "modes": sorted(self.modes),
            "sources": sorted(self.sources),
            "paths": [
                {"include_paths": list(inc), "exclude_paths": list(exc)}
                for inc, exc in sorted(self.paths)
            ],
            "profiles": sorted(self.profiles),
        }

    @classmethod
    def from_dict(cls, data: Any) -> RunScope | None:
        """The scope a state recorded; None for one it did not (older) or not of this shape."""
        try:
            sources = frozenset(str(s) for s in data["sources"])
            paths = frozenset(
                (_clean(p["include_paths"]), _clean(p["exclude_paths"])) for p in data["paths"]
            )
            profiles = frozenset(str(p) for p in data["profiles"])
            modes = frozenset(str(m) for m in data.get("modes", ()))
        except (KeyError, TypeError, AttributeError):
            return None
        if not sources <= set(SOURCES) or not paths or not profiles:
            return None
        return cls(sources, paths, profiles, modes)

    @property
    def path_pair(self) -> Paths:
        """A single run's paths (the first, for a merged scope)."""
        return min(self.paths)


@dataclass(frozen=True)
class Judgement:
    """How far a run may call URLs of a recorded scope removed, and why not further."""

    level: str
    reasons: tuple[str, ...] = ()
    _policy: FilterPolicy | None = field(default=None, compare=False, repr=False)

    def judges(self, url: str) -> bool:
        """Whether ``url`` (not seen by this run) may be called removed."""
        if self.level == ALL:
            return True
        if self.level == NONE or self._policy is None:
            return False
        return self._policy.decide(url, "page") not in _PATH_DROPS


def _words(paths: Paths) -> str:
    inc, exc = paths
    said = []
    if inc:
        said.append(f"include_paths={','.join(inc)}")
    if exc:
        said.append(f"exclude_paths={','.join(exc)}")
    return " ".join(said) or "no path filter"


def _path_change(recorded: RunScope, current: Paths) -> str:
    before = " | ".join(_words(p) for p in sorted(recorded.paths))
    return f"paths changed ({before} → {_words(current)})"


def judge(recorded: RunScope | None, current: RunScope, site: str) -> Judgement:
    """How far a run of scope ``current`` on ``site`` may judge URLs found under
    ``recorded`` (None: the state recorded no scope, format 1 — judged as before scopes
    were kept, but only by a run that looked both ways: a format-1 ``union`` state's
    links-only pages are not "removed" by a sitemap-only re-run that never looked)."""
    pair = current.path_pair
    policy = FilterPolicy(site, *pair)
    if recorded is None:
        if not set(SOURCES) <= current.sources:
            why = (
                "the previous state recorded no scope (format 1): only a run that reads "
                "both sitemaps and links judges its URLs"
            )
            return Judgement(NONE, (why,), policy)
        return Judgement(IN_SCOPE if pair != _ANY else ALL, (), policy)
    reasons = []
    level = ALL
    if recorded.profiles != current.profiles:
        before = ",".join(sorted(recorded.profiles))
        reasons.append(f"profile {before}→{','.join(sorted(current.profiles))}")
        level = NONE
    missing = recorded.sources - current.sources
    if missing:
        modes = f"mode {','.join(sorted(recorded.modes)) or '?'}→{','.join(sorted(current.modes))}"
        if "link" in missing:
            reasons.append(f"{modes} (the link crawl did not run: links-only URLs not judged)")
        else:
            reasons.append(f"{modes} (sitemaps not read: sitemap-only URLs not judged)")
        level = NONE
    if pair != _ANY and recorded.paths != {pair}:
        if "link" in current.sources:
            reasons.append(
                f"{_path_change(recorded, pair)}; the link crawl does not pass through pages "
                "out of scope"
            )
            level = NONE
        else:
            reasons.append(f"{_path_change(recorded, pair)}: URLs out of this scope not judged")
            if level == ALL:
                level = IN_SCOPE
    if level == ALL and pair != _ANY:
        level = IN_SCOPE  # the same paths: a URL out of them (an older run's) is not judged
    return Judgement(level, tuple(reasons), policy)


# -- listed sitemaps not read ----------------------------------------------------------
_LISTED = frozenset({"index", "robots", "input"})


def listed_sitemap_unread(source: str, status: int | None, error: str | None) -> bool:
    """A sitemap something still lists (an index, robots.txt, the input) that this run
    could not read: whatever it listed cannot be re-confirmed. A 404 or 410 counts: the
    index names it, so its URLs are not known gone. Never asked on purpose (another host,
    which the protocol forbids; another origin under the SSRF guard, a profile's) does
    not; nor does a conventional address (``/sitemap.xml``) that is not there."""
    if source not in _LISTED or not error:
        return False
    if error.startswith("on another"):
        return False
    # (a 304 the walk could not take for "unchanged", to a request without validators
    # or for a sitemap the state does not hold: nothing was read)
    # A 3xx: the walk does not follow a sitemap's redirect, so its URLs were not read.
    return status is None or status >= 300 or error.startswith("refused")
