"""massive — search-index builders: uncapped streaming walk of 1M-10M URL sitemap trees.

No depth or URL cap, 8 concurrent sitemap fetches, the sitemap worker started at once.
Sitemap files are static documents a site publishes for crawlers, so the per-host interval
is off for them here.
"""

HOST_INTERVAL = 0.0
SITEMAP_CONCURRENCY = 8
SITEMAP_MAX_DOCUMENTS = 0
SITEMAP_MAX_URLS = 0
SITEMAP_MAX_DEPTH = 0
SITEMAP_WORKER_EARLY = True
PROGRESS_INTERVAL = 5.0
