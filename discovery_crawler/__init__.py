"""discovery_crawler: which pages exist on a site, where each came from, which matter.

The Python API (``api.py``, docs/api.md)::

    from discovery_crawler import discover, normalize_url, parse_sitemap, robots_policy

Its names are imported on first use (``__getattr__``): every module of the package, and
the sitemap worker process, imports this one, which stays free of Scrapy and lxml.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_API = (
    "discover",
    "parse_sitemap",
    "normalize_url",
    "robots_policy",
    "Discovery",
    "DiscoveryError",
    "BadArguments",
    "RunFailed",
    "Interrupted",
    "OutputFailed",
)
__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    if name in _API:
        from discovery_crawler import api  # on first use only (see the docstring)

        value = getattr(api, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})
