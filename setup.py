"""The C extensions: hot per-URL loops (why each: its file's header). Optional — where
they cannot be built (no C compiler or Python headers) the install still succeeds and the
same work runs in Python (urls/seen.py, urls/slugs.py, urls/normalize.py, urls/kinds.py,
urls/junk.py, output/feed_lines.py, output/state.py, selection/tree.py, selection/groups.py,
selection/scoring.py, sitemaps/formats/plain_urlset.py: its tails and its windows,
sitemaps/facts.py).
Everything else about the package is in pyproject.toml."""

from setuptools import Extension, setup

EXTENSIONS = {
    "discovery_crawler.urls._seen_table": "discovery_crawler/urls/_seen_table.c",
    "discovery_crawler.urls._plain_bases": "discovery_crawler/urls/_plain_bases.c",
    "discovery_crawler.urls._known_origins": "discovery_crawler/urls/_known_origins.c",
    "discovery_crawler.urls._screens": "discovery_crawler/urls/_screens.c",
    "discovery_crawler.output._lines": "discovery_crawler/output/_lines.c",
    "discovery_crawler.selection._paths": "discovery_crawler/selection/_paths.c",
    "discovery_crawler.selection._rater": "discovery_crawler/selection/_rater.c",
    "discovery_crawler.sitemaps._tails": "discovery_crawler/sitemaps/_tails.c",
    "discovery_crawler.sitemaps._records": "discovery_crawler/sitemaps/_records.c",
    "discovery_crawler.sitemaps._windows": "discovery_crawler/sitemaps/_windows.c",
}
# the headers each includes: rebuilt when one changes, and shipped with the sources
DEPENDS = {
    "discovery_crawler.sitemaps._tails": ["discovery_crawler/sitemaps/_tails.h"],
    "discovery_crawler.sitemaps._windows": ["discovery_crawler/sitemaps/_tails.h"],
}

setup(
    ext_modules=[
        Extension(name, [source], depends=DEPENDS.get(name, []), optional=True)
        for name, source in EXTENSIONS.items()
    ]
)
