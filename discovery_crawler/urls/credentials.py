"""Credentials in a URL (``http://user:pw@host/``) a site sends: never kept. A redirect's
``Location`` (or a refresh target) is read through ``without_credentials`` before it is
resolved, recorded or followed, so no output (the feed's ``redirected_to``, the crawl
log's redirects, the state, the report) carries a user name or a password the site put
there, and the request that follows it sends none."""

from __future__ import annotations

import re

# The authority of an absolute URL or a network-path reference: what follows "//" when
# only a scheme (or nothing) comes before it, up to the path, query or fragment.
_AUTHORITY = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.\-]*:)?//([^/?#\\]*)")


def without_credentials(url: str) -> str:
    """``url`` without the userinfo of its authority (``user:pw@``), else unchanged
    (an "@" in its path or query is left alone). The rest is kept byte for byte."""
    if "@" not in url:
        return url
    found = _AUTHORITY.match(url.lstrip())
    if found is None or "@" not in found.group(1):
        return url
    lead = len(url) - len(url.lstrip())
    start, end = found.span(1)
    return url[: lead + start] + found.group(1).rpartition("@")[2] + url[lead + end :]
