"""Groups stage (SPEC §9): feeds each batch of kept URLs to the path groups, parent groups
and path tree (``selection/groups.py``, ``selection/tree.py``; pure, streaming).

Sits after slug and before the crawl log, so it sees the inventory as written. The
structures hang on the run record (``record.groups``, ``record.tree``) for the crawl log
(``runs[].groups``, ``runs[].tree``), the summary line (``Groups (7): blog 120, …``) and
the report. Counts go to stats when the spider closes: ``groups/path``, ``groups/parent``,
``groups/tree_nodes``.

The tree counts each URL under its final source, which in union mode is known only when
the crawl is over: a URL a sitemap listed may be linked later, and one a link found may
be listed later (the feed's ``sitemap_only`` / ``links_only`` flags are decided then). So
in union mode the tree's columns of each batch (URLs, kinds, statuses, sources) are held
and counted when the spider closes, each URL under ``sitemap`` (listed only), ``link``
(linked only) or ``both`` (``UnionTally``); its colours then equal the inventory's. In
every other mode a URL's source never changes after it is written, and batches are
counted as they come.
"""

from __future__ import annotations

import logging
from collections import Counter
from itertools import repeat
from operator import contains, itemgetter
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured

from discovery_crawler.items import UrlBatch
from discovery_crawler.pipelines.base import BatchStage
from discovery_crawler.selection.groups import Groups
from discovery_crawler.selection.parents import split_many
from discovery_crawler.selection.tree import BOTH, PathTree
from discovery_crawler.urls.normalize import twin_key

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

_URL = itemgetter("url")
_KIND = itemgetter("kind")
_SOURCE = itemgetter("source")


def columns(
    records: list[dict[str, Any]],
) -> tuple[list[str], list[Any], list[Any], list[Any] | None]:
    """(urls, kinds, sources, statuses) of a batch of records; a status is None for a URL
    that was not fetched (``listed`` in the tree), and statuses None when none was (a
    sitemap batch)."""
    urls = list(map(_URL, records))
    try:
        kinds = list(map(_KIND, records))
    except KeyError:  # the filter stage is off
        kinds = [rec.get("kind") for rec in records]
    try:
        sources = list(map(_SOURCE, records))
    except KeyError:
        sources = [rec.get("source") for rec in records]
    statuses = (
        [rec.get("status") for rec in records]
        if any(map(contains, records, repeat("status")))
        else None
    )
    return urls, kinds, sources, statuses


def final_source(union: Any, url: str, source: Any) -> Any:
    """A union-mode URL's source once the crawl is over: ``both`` (a sitemap listed it and
    a page linked it, or it is the seed), ``sitemap`` (listed only: the feed's
    ``sitemap_only``), ``link`` (linked only: ``links_only``); a URL neither listed nor
    linked (a canonical, a redirect's target) keeps the source it was written with."""
    listed = union.is_listed(url)
    linked = union.is_linked(twin_key(url))
    if listed and linked:
        return BOTH
    if listed:
        return "sitemap"
    if linked:
        return "link"
    return source


class GroupsPipeline(BatchStage):
    """Path groups, parent groups and the path tree of the kept URLs."""

    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        settings = crawler.settings
        if not settings.getbool("GROUPS_ENABLED", True):
            raise NotConfigured("GROUPS_ENABLED is off")
        self.groups = Groups(
            path_groups_max=settings.getint("PATH_GROUPS_MAX", 1_000),
            parent_groups_max=settings.getint("PARENT_GROUPS_MAX", 5_000),
            samples=settings.getint("GROUP_SAMPLES", 10),
            min_size=settings.getint("GROUP_MIN_SIZE", 3),
        )
        self.tree = PathTree(
            max_children=settings.getint("TREE_MAX_CHILDREN", 200),
            max_depth=settings.getint("TREE_MAX_DEPTH", 8),
            max_nodes=settings.getint("TREE_MAX_NODES", 5_000),
        )
        self.errors = 0
        self.record.groups = self.groups
        self.record.tree = self.tree
        # union mode: the tree's batches, counted once the sources are final (close_spider)
        self.held: list[tuple[list[str], list[Any], list[Any], list[Any] | None]] | None = (
            [] if self.run.mode == "union" else None
        )

    def process_item(self, item: Any) -> Any:
        if not isinstance(item, UrlBatch) or not item.records:
            return item
        try:
            urls, kinds, sources, statuses = columns(item.records)
            split = split_many(urls)
            per_parent = Counter(split.parents)
            self.groups.add_many(urls, split=split, per_parent=per_parent)
            if self.held is not None:
                self.held.append((urls, kinds, sources, statuses))
            else:
                self.tree.add_many(urls, kinds, sources, statuses, split=split, distinct=per_parent)
        except Exception as exc:  # grouping is a report: never lose the batch over it
            self._failed(item.document, exc)
        return item

    def _failed(self, document: str, exc: Exception) -> None:
        self.errors += 1
        self.stats.inc_value("groups/errors")
        if self.errors == 1:
            logger.error("groups: batch from %s not grouped: %r", document, exc)

    def _count_held(self) -> None:
        """Union mode: the held batches into the tree, each URL under its final source."""
        held, self.held = self.held or [], None
        links = self.run.links
        union = links.account.union if links is not None else None
        for urls, kinds, sources, statuses in held:
            try:
                if union is not None:
                    sources = [
                        final_source(union, url, source)
                        for url, source in zip(urls, sources, strict=True)
                    ]
                self.tree.add_many(urls, kinds, sources, statuses)
            except Exception as exc:  # grouping is a report: never lose the run over it
                self._failed("the union crawl", exc)

    def close_spider(self) -> None:
        self._count_held()
        self.stats.set_value("groups/path", len(self.groups.path_groups()))
        self.stats.set_value("groups/parent", len(self.groups.parents))
        self.stats.set_value("groups/tree_nodes", self.tree.nodes)
