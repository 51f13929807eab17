"""Where a URL sits in its site's path hierarchy, a batch at a time.

Groups and the path tree both ask one question per URL — "what is its parent path?" — so
it is answered once per batch here, in list comprehensions over C-level string methods
(``str.rfind``, slicing): a Python-level loop per URL would cost more than the rest of
the grouping together. Input URLs are normalized (``scheme://host/path[?query]``, no
fragment); any other string is still placed (never an exception), at the top.
"""

from __future__ import annotations

from collections import Counter
from itertools import repeat
from typing import NamedTuple

from discovery_crawler.compiled import extension

# the per-URL splits in C (``_paths.c``); where it was not built, in Python
_paths = extension("discovery_crawler.selection._paths")


class Split(NamedTuple):
    """A batch of URLs split for grouping (lists parallel to the URLs)."""

    bare: list[str]  # the URL without query or fragment
    parents: list[str]  # the URL up to and with the "/" before its last segment


def split_many(urls: list[str]) -> Split:
    """Parents of a batch of URLs: ``https://h/blog/post/`` → ``https://h/blog/``.

    ``/foo`` and ``/foo/`` have the same parent; ``https://h/about`` → ``https://h/``.
    The origin itself (``https://h/``) gets ``https://`` — see ``is_origin``. The query
    is ignored (``/a/b?x=/y`` → ``/a/``); it is looked for once per batch.
    """
    if _paths is not None and urls.__class__ is list:
        split = _paths.split_many(urls)
        if split is not None:
            return Split(*split)
    return _split_many(urls)


def _split_many(urls: list[str]) -> Split:
    """``split_many`` in Python: the definition ``_paths.split_many`` follows."""
    joined = "".join(urls)
    if "?" in joined or "#" in joined:
        bare = [u.partition("?")[0].partition("#")[0] for u in urls]
    else:
        bare = urls
    # rfind before the last character: a trailing "/" does not make a segment.
    return Split(bare, [u[: u.rfind("/", 0, -1) + 1] for u in bare])


def is_origin(parent: str) -> bool:
    """True for the parent of a site's root URL (``https://``) or of a non-URL."""
    return not parent or parent.endswith("//")


def parent_path(parent: str) -> str:
    """``https://h/blog/`` → ``/blog/``; the origin's own parent → ``""``."""
    if is_origin(parent):
        return ""
    scheme_end = parent.find("//")
    if scheme_end < 0:  # not a URL: its path is the string itself
        return "/" + parent.lstrip("/")
    start = parent.find("/", scheme_end + 2)
    return parent[start:] if start >= 0 else "/"


def leaf_of(bare: str, parent: str) -> str:
    """The last segment of a URL below ``parent``, without trailing slash."""
    return bare[len(parent) :].rstrip("/")


def path_depth(url: str) -> int:
    """The number of non-empty path segments of a URL: ``https://h/`` 0, ``https://h/a``
    and ``https://h/a/`` 1, ``https://h/a//b?x=/y`` 2 (query and fragment ignored)."""
    url = url.partition("?")[0].partition("#")[0]
    scheme_end = url.find("//")
    start = url.find("/", scheme_end + 2) if scheme_end >= 0 else 0
    if start < 0:
        return 0
    return len([segment for segment in url[start:].split("/") if segment])


def count_path_depths(urls: list[str]) -> Counter[int]:
    """``path_depth`` of a batch of normalized URLs, counted: one C-level pass over the
    batch (queries and fragments cut first, where there are some) unless a path has an
    empty segment (``//``): then ``path_depth`` URL by URL."""
    if _paths is not None and urls.__class__ is list:
        counted = _paths.path_depths(urls)
        if counted is not None:
            return Counter(counted)
    return _count_path_depths(urls)


def _count_path_depths(urls: list[str]) -> Counter[int]:
    """``count_path_depths`` in Python: the definition ``_paths.path_depths`` follows."""
    joined = "".join(urls)
    if "?" in joined or "#" in joined:
        urls = [u.partition("?")[0].partition("#")[0] for u in urls]
        joined = "".join(urls)
    if joined.count("//") != len(urls):
        return Counter(map(path_depth, urls))
    # The slashes from index 8 (past "https://", inside "http://h": the host holds no "/")
    # to the last character, left out: a trailing "/" makes no segment, a last segment's
    # own "/" before it is counted. ``https://h/a/b/`` → "h/a/b" → 2.
    return Counter(map(str.count, urls, repeat("/"), repeat(8), repeat(-1)))
