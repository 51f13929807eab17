"""Path groups and parent groups (SPEC §9), streaming, a batch at a time.

**Path groups** gather URLs by the first non-empty segment of their path (``/blog/…`` →
``blog``; the home page ``/`` is its own group). Counts are exact; each group keeps its
first ``samples`` URLs (10); groups under ``min_size`` URLs (3) are merged into ``other``,
listed last.

**Parent groups** gather URLs by their exact parent path (``/blog/2024/post/`` →
``/blog/2024/``): the siblings a template usually serves. Each has an ``id``
(``parent:/blog/2024/``), a ``label`` (the path), a representative URL (the first one
seen), a member count, the dominant ``shape`` of its members' last segment, a
``confidence`` and the ``reason`` for it:

- ``high`` — at least ``min_size`` members and at least 80 % of the sampled members share
  one URL shape (``/blog/2024/{slug}/``): very likely one template;
- ``medium`` — at least ``min_size`` members whose shapes differ (a section of mixed
  pages, e.g. the top level);
- ``low`` — fewer than ``min_size`` members: too few to call it a group.

A shape is the last segment with its text replaced by a class: ``{n}`` (digits),
``{date}`` (``2024-05-01``, ``20240501``), ``{id}`` (hex or UUID, 8+ characters),
``{slug}`` (words and digits, percent-encoded UTF-8 included, joined by ``-``, ``_``,
``.``, ``+``, ``~``), ``{other}``; a file extension
and a trailing slash are kept (``{slug}.html``, ``{n}/``). It is taken from the first
``samples`` members only.

Memory grows with the number of groups, never with URLs: at most ``path_groups_max``
path groups and ``parent_groups_max`` parent groups are kept, the first ones seen; URLs
of groups past a cap are counted as ``untracked_urls`` (in ``other`` for path groups).
Per batch the work is a ``Counter`` over the parents (C speed) and a loop per distinct
parent; URLs are looked at one by one only for top-level URLs (their group is their own
segment) and while a group still lacks samples. No Scrapy imports.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import compress, repeat
from typing import Any

from discovery_crawler.compiled import extension
from discovery_crawler.selection.parents import Split, is_origin, parent_path, split_many

# the per-parent group names in C (``_paths.c``); where it was not built, in Python
_paths = extension("discovery_crawler.selection._paths")

OTHER = "other"
HOME = ""  # the path group of the site's root URL
HIGH_SHARE = 0.8  # share of sampled members with one shape for "high" confidence

_DATE = re.compile(r"\d{4}-\d{2}(?:-\d{2})?|(?:19|20)\d{6}")
_ID = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|(?=[a-f]*\d)[0-9a-f]{8,}"
)
_SLUG = re.compile(r"(?:[a-z0-9]|%[0-9a-f]{2})+(?:[-_.+~](?:[a-z0-9]|%[0-9a-f]{2})+)*")
_EXTENSION = re.compile(r"(.+)(\.[A-Za-z0-9]{1,5})")


_HEX_START = frozenset("0123456789abcdef")


def _is_slug(text: str) -> bool:
    """``_SLUG.fullmatch(text)``: lowercase ASCII words joined by single hyphens, the
    usual slug, told by string methods first (the pattern walks it a character a time)."""
    if text.isascii() and "--" not in f"-{text}-" and text.replace("-", "").isalnum():
        return True
    return _SLUG.fullmatch(text) is not None


def segment_shape(segment: str) -> str:
    """The shape of a URL's last segment (``post-12/`` → ``{slug}/``), see the module doc.
    Each pattern is tried only where its first character could match."""
    slash = "/" if segment.endswith("/") else ""
    text = segment.rstrip("/")
    ext = ""
    found = _EXTENSION.fullmatch(text) if "." in text else None
    if found is not None and not found.group(2)[1:].isdigit():
        text, ext = found.group(1), found.group(2).lower()
    if not text:
        shape = "{empty}"
    elif text[0].isdigit() and _DATE.fullmatch(text):
        shape = "{date}"
    elif text.isdigit():
        shape = "{n}"
    else:
        lowered = text.lower()
        if lowered[0] in _HEX_START and _ID.fullmatch(lowered):
            shape = "{id}"
        elif _is_slug(lowered):
            shape = "{slug}"
        else:
            shape = "{other}"
    return shape + ext + slash


def group_of_parent(parent: str) -> str | None:
    """The path group of URLs under ``parent``: its first segment; ``HOME`` for the root
    URL itself; None for top-level URLs (each is grouped by its own segment)."""
    if is_origin(parent):
        return HOME
    path = parent_path(parent)
    if path == "/":
        return None
    return path[1:].partition("/")[0]


class ParentGroup:
    """One parent path: member count, first member, shapes of the first members."""

    __slots__ = ("count", "representative", "sampled", "shapes")

    def __init__(self) -> None:
        self.count = 0
        self.representative: str | None = None
        self.sampled = 0
        self.shapes: dict[str, int] = {}

    def judge(self, path: str, min_size: int) -> tuple[str, str, str | None]:
        """(confidence, reason, dominant shape) — see the module doc."""
        if not self.shapes:
            return "low", f"no member of {path} sampled", None
        shape, top = max(self.shapes.items(), key=lambda kv: (kv[1], kv[0]))
        full_shape = path + shape
        count = self.count
        if count < min_size:
            noun = "URL" if count == 1 else "URLs"
            return "low", f"only {count} {noun} under {path}", full_shape
        if top >= HIGH_SHARE * self.sampled:
            return (
                "high",
                f"{count:,} siblings under {path} share the shape {full_shape}"
                f" ({top} of {self.sampled} sampled)",
                full_shape,
            )
        mix = ", ".join(f"{s} {n}" for s, n in Counter(self.shapes).most_common(3))
        return (
            "medium",
            f"{count:,} siblings under {path} with mixed shapes ({mix} of {self.sampled} sampled)",
            full_shape,
        )


class Groups:
    """Path groups and parent groups of a site, filled a batch at a time (``add_many``)."""

    def __init__(
        self,
        path_groups_max: int = 1_000,
        parent_groups_max: int = 5_000,
        samples: int = 10,
        min_size: int = 3,
    ):
        self.path_groups_max = max(1, path_groups_max)
        self.parent_groups_max = max(1, parent_groups_max)
        self.samples = max(1, samples)
        self.min_size = min_size
        self.urls = 0
        self.path_counts: dict[str, int] = {}  # first segment → URLs (insertion = first seen)
        self.path_samples: dict[str, list[str]] = {}
        self.path_untracked = 0  # URLs of path groups past the cap
        self.parents: dict[str, ParentGroup] = {}  # parent URL → group
        self.parent_untracked = 0  # URLs of parent groups past the cap

    def add_many(
        self, urls: list[str], split: Split | None = None, per_parent: Counter[str] | None = None
    ) -> None:
        """Count a batch of URLs. ``split`` is ``paths.split_many(urls)`` and ``per_parent``
        ``Counter(split.parents)`` when the caller already has them."""
        if not urls:
            return
        bare, parents = split if split is not None else split_many(urls)
        self.urls += len(urls)
        if per_parent is None:
            per_parent = Counter(parents)
        self._add_path_groups(urls, bare, parents, per_parent)
        self._add_parent_groups(urls, bare, parents, per_parent)

    # -- path groups ----------------------------------------------------------------------
    @staticmethod
    def _groups_of(
        per_parent: Counter[str], parents: list[str]
    ) -> tuple[dict[str, str | None], Counter[Any]]:
        """``group_of_parent`` for each distinct parent of a batch, and the batch's URLs per
        group (each group where its first URL is: the order of ``per_parent``, whose
        parents come in the order each first occurs). This runs once per distinct parent,
        which on some sites is once per URL, so in C where it was built
        (``_paths.top_groups``, each group's name made once), else in Python
        (``_python_groups_of``, then a count over ``parents``)."""
        if _paths is not None and per_parent.__class__ is Counter:
            batch: Counter[Any] = Counter()
            groups = _paths.top_groups(per_parent, HOME, batch)
            if groups is not None:
                return groups, batch
        groups = Groups._python_groups_of(per_parent)
        return groups, Counter(map(groups.__getitem__, parents))

    @staticmethod
    def _python_groups_of(per_parent: Counter[str]) -> dict[str, str | None]:
        """``_groups_of`` in Python: the definition ``_paths.top_groups`` follows."""
        return {
            parent: HOME
            if not parent or parent.endswith("//")
            else (
                rest[: rest.find("/")]
                if (rest := parent[parent.find("/", parent.find("//") + 2) + 1 :])
                else None
            )
            for parent in per_parent
        }

    def _add_path_groups(
        self, urls: list[str], bare: list[str], parents: list[str], per_parent: Counter[str]
    ) -> None:
        # URLs per group, each group where its first URL is; top-level URLs (no group of
        # their parent's) are grouped by their own segment, after the others
        groups_of, batch = self._groups_of(per_parent, parents)
        top: list[str] = []  # parents of top-level URLs
        if None in batch:
            del batch[None]
            top = [parent for parent, group in groups_of.items() if group is None]
        if len(top) == 1 and per_parent[top[0]] == len(bare):  # a batch of top-level URLs
            cut = len(top[0])
            batch.update([b[cut:].partition("/")[0] for b in bare])
        elif len(top) == 1:
            only = top[0]
            cut = len(only)
            batch.update(
                [b[cut:].partition("/")[0] for b, p in zip(bare, parents, strict=True) if p == only]
            )
        elif top:
            tops = set(top)
            batch.update(
                [
                    b[len(p) :].partition("/")[0]
                    for b, p in zip(bare, parents, strict=True)
                    if p in tops
                ]
            )
        counts = self.path_counts
        samples = self.path_samples
        room = self.path_groups_max - len(counts)
        wanted: dict[str, int] = {}  # group → samples still to take from this batch
        limit = self.samples
        for group, count in batch.items():
            if group in counts:
                counts[group] += count
            elif room > 0:
                counts[group] = count
                samples[group] = []
                room -= 1
            else:
                self.path_untracked += count
                continue
            missing = limit - len(samples[group])
            if missing > 0:
                wanted[group] = min(missing, count)
        if wanted:
            self._sample_paths(wanted, urls, bare, parents, groups_of)

    def _sample_paths(
        self,
        wanted: dict[str, int],
        urls: list[str],
        bare: list[str],
        parents: list[str],
        groups_of: dict[str, str | None],
    ) -> None:
        samples = self.path_samples
        for url, b, p in zip(urls, bare, parents, strict=True):
            group = groups_of[p]
            if group is None:
                group = b[len(p) :].partition("/")[0]
            left = wanted.get(group)
            if left is None:
                continue
            samples[group].append(url)
            if left > 1:
                wanted[group] = left - 1
            else:
                del wanted[group]
                if not wanted:
                    return

    # -- parent groups --------------------------------------------------------------------
    def _add_parent_groups(
        self, urls: list[str], bare: list[str], parents: list[str], per_parent: Counter[str]
    ) -> None:
        known = self.parents
        limit = self.samples
        wanted: dict[str, int] = {}
        if len(known) >= self.parent_groups_max:
            # Full: no group is made, so only the parents it has are looked at one by one
            # (a site with very many distinct parents has a few of those in a batch).
            got = list(map(known.get, per_parent))
            counted = 0
            for (parent, count), group in compress(zip(per_parent.items(), got, strict=True), got):
                counted += count
                group.count += count
                if group.sampled < limit:
                    wanted[parent] = min(limit - group.sampled, count)
            # the root URL's (``is_origin``), which has no parent group
            self.parent_untracked += len(parents) - counted - self._origin_urls(per_parent)
            if wanted:
                self._sample_parents(wanted, urls, bare, parents)
            return
        for parent, count in per_parent.items():
            group = known.get(parent)
            if group is None:
                if len(known) >= self.parent_groups_max:
                    if not is_origin(parent):
                        self.parent_untracked += count
                    continue
                if is_origin(parent):
                    continue  # the root URL has no parent
                group = known[parent] = ParentGroup()
            group.count += count
            if group.sampled < limit:
                wanted[parent] = min(limit - group.sampled, count)
        if wanted:
            self._sample_parents(wanted, urls, bare, parents)

    @staticmethod
    def _origin_urls(per_parent: Counter[str]) -> int:
        """The batch's URLs under an origin parent (``is_origin``: its root URL), counted
        over the distinct parents: in C where it was built (``_paths.origin_urls``)."""
        if _paths is not None:
            home = _paths.origin_urls(per_parent)
            if home is not None:
                return home  # type: ignore[no-any-return]
        return per_parent.get("", 0) + sum(
            compress(per_parent.values(), map(str.endswith, per_parent, repeat("//")))
        )

    def _sample_parents(
        self, wanted: dict[str, int], urls: list[str], bare: list[str], parents: list[str]
    ) -> None:
        known = self.parents
        if len(wanted) <= 8:  # a few (a full table's usual batch): found by ``list.index``
            for p, left in wanted.items():
                group = known[p]
                at = -1
                for _ in range(left):
                    at = parents.index(p, at + 1)
                    if group.representative is None:
                        group.representative = urls[at]
                    shape = segment_shape(bare[at][len(p) :])
                    group.shapes[shape] = group.shapes.get(shape, 0) + 1
                    group.sampled += 1
            return
        # The URLs of the parents still wanted, in order (``wanted`` is read as they come).
        for at in compress(range(len(parents)), map(wanted.__contains__, parents)):
            p = parents[at]
            left = wanted[p]
            group = known[p]
            if group.representative is None:
                group.representative = urls[at]
            shape = segment_shape(bare[at][len(p) :])
            group.shapes[shape] = group.shapes.get(shape, 0) + 1
            group.sampled += 1
            if left > 1:
                wanted[p] = left - 1
            else:
                del wanted[p]
                if not wanted:
                    return

    # -- reporting ------------------------------------------------------------------------
    def path_groups(self) -> list[dict[str, Any]]:
        """Groups of ``min_size`` URLs or more, biggest first, then ``other`` (if any)."""
        big = []
        small_count = 0
        small_groups = 0
        other_samples: list[str] = []
        # Biggest first, then by name: the same whatever the batches were.
        for name, count in sorted(self.path_counts.items(), key=lambda nc: (-nc[1], nc[0])):
            if count >= self.min_size:
                big.append((name, count))
                continue
            small_count += count
            small_groups += 1
            room = self.samples - len(other_samples)
            if room > 0:
                other_samples.extend(self.path_samples[name][:room])
        out = []
        for name, count in big:
            label = f"/{name}/" if name else "/"
            samples = self.path_samples[name]
            out.append(
                {
                    "id": f"path:{label}",
                    "name": name or "/",
                    "label": label,
                    "count": count,
                    "representative": samples[0] if samples else None,
                    "samples": samples,
                }
            )
        other = small_count + self.path_untracked
        if other:
            out.append(
                {
                    "id": OTHER,
                    "name": OTHER,
                    "label": OTHER,
                    "count": other,
                    "representative": other_samples[0] if other_samples else None,
                    "samples": other_samples,
                    "merged_groups": small_groups,
                    "untracked_urls": self.path_untracked,
                }
            )
        return out

    def parent_groups(self, limit: int | None = None) -> list[dict[str, Any]]:
        """Parent groups, biggest first (the first ``limit`` of them)."""
        ranked = sorted(self.parents.items(), key=lambda pg: (-pg[1].count, pg[0]))
        out = []
        for parent, group in ranked[:limit]:
            path = parent_path(parent)
            confidence, reason, shape = group.judge(path, self.min_size)
            out.append(
                {
                    "id": f"parent:{path}",
                    "label": path,
                    "representative": group.representative,
                    "count": group.count,
                    "shape": shape,
                    "confidence": confidence,
                    "reason": reason,
                }
            )
        return out

    def as_dict(self, limit: int | None = None) -> dict[str, Any]:
        """Both kinds of groups for the crawl log; parent groups capped at ``limit``."""
        listed = self.parent_groups(limit)
        return {
            "urls": self.urls,
            "path_groups": self.path_groups(),
            "path_groups_tracked": len(self.path_counts),
            "path_groups_untracked_urls": self.path_untracked,
            "parent_groups": listed,
            "parent_groups_tracked": len(self.parents),
            "parent_groups_listed": len(listed),
            "parent_groups_untracked_urls": self.parent_untracked,
            "limits": {
                "path_groups_max": self.path_groups_max,
                "parent_groups_max": self.parent_groups_max,
                "samples": self.samples,
                "min_size": self.min_size,
            },
        }

    def summary_line(self, shown: int = 5) -> str:
        """``Groups (7): blog 120, docs 45, … other 4`` (path groups, ``other`` last)."""
        groups = self.path_groups()
        named = [g for g in groups if g["id"] != OTHER]
        text = ", ".join(f"{g['name']} {g['count']:,}" for g in named[:shown])
        if len(named) > shown:
            text += ", …"
        if len(groups) > len(named):
            other = f"{OTHER} {groups[-1]['count']:,}"
            text = (
                f"{text} {other}" if text.endswith("…") else ", ".join(filter(None, [text, other]))
            )
        return f"Groups ({len(groups)}): {text}"


def groups_lines(record: Any) -> list[str]:
    """The summary's groups line for a run record that has ``groups`` (else none)."""
    groups = getattr(record, "groups", None)
    if groups is None or not groups.urls:
        return []
    return [groups.summary_line()]
