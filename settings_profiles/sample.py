"""sample — design / IA review: a few pages that cover distinct templates.

Cap 5, BFS depth 3 / 200 pages, sitemap sanity limit 10,000 URLs (content-like sitemaps
first), nested indexes deeper than 3 levels dropped with a warning. Likely junk (drafts,
samples, test pages) is left out of the feed, as the IA-extraction note filters it before
selecting; the crawl log lists each with its pattern and the summary names them.
"""

HOST_INTERVAL = 1.0
SITEMAP_CONCURRENCY = 4
SITEMAP_MAX_URLS = 10_000
SITEMAP_MAX_DEPTH = 3
BFS_MAX_DEPTH = 3
BFS_MAX_PAGES = 200
SELECTION_CAP = 5
JUNK_IN_FEED = False
