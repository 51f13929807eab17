"""service — multi-tenant backend: bounded, fail-closed, resumable.

SSRF guard on (same origin only), robots fail-closed, max_pages ≤ 1000 (default 500), max_depth ≤ 5
(default 3), at most 20 sitemap documents and 1,000 discovered URLs, at most 1,000 links
read on one page, preview file listing up to 1,000 pages; work done in bounded chunks of
10 requests per invocation (MAX_CHUNK_PAGES), the job in <out>/_job/ unless JOBDIR says.
"""

HOST_INTERVAL = 1.0
SITEMAP_CONCURRENCY = 2
SITEMAP_MAX_DOCUMENTS = 20
SITEMAP_MAX_URLS = 1_000
BFS_MAX_PAGES = 500
BFS_MAX_PAGES_LIMIT = 1_000
BFS_MAX_DEPTH = 3
BFS_MAX_DEPTH_LIMIT = 5
LINKS_PER_PAGE_MAX = 1_000
LINKS_MAX_URLS = 1_000  # the seed's 1,000 discovered URLs, when links find them
SSRF_GUARD_ENABLED = True
SSRF_SAME_ORIGIN = True  # the seed: "same origin only, including redirects and sitemap locations"
ROBOTS_FAIL_CLOSED = True
PREVIEW_ENABLED = True
PREVIEW_MAX_PAGES = 1_000
MAX_CHUNK_PAGES = 10
