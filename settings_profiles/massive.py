"""massive — search-index builders: uncapped streaming walk of 1M-10M URL sitemap trees.

No depth or URL cap, 8 concurrent sitemap fetches (SPEC §1), the sitemap worker started at
once. Sitemap files are static documents a site publishes for crawlers, so the per-host interval
is off for them here.

Downloaded sitemaps wait for a parse slot, so what waits is bounded: Scrapy's downloader
takes up to CONCURRENT_REQUESTS requests whatever the scraper's backlog, and the scraper
holds back more only past SCRAPER_SLOT_MAX_ACTIVE_SIZE bytes of waiting bodies. Scrapy's
16 requests and 5 MB let a whole index's children wait at once; 8 and 2 MB hold about
what the worker is about to parse, at the same speed (bench/README.md).
"""

HOST_INTERVAL = 0.0
SITEMAP_CONCURRENCY = 8
CONCURRENT_REQUESTS = 8
SCRAPER_SLOT_MAX_ACTIVE_SIZE = 2_000_000
SITEMAP_MAX_DOCUMENTS = 0
SITEMAP_MAX_URLS = 0
SITEMAP_MAX_DEPTH = 0
SITEMAP_WORKER_EARLY = True
# Tables sized once up to SPEC §14's largest walk: from the default 2M cap they would
# double as URLs arrive, to more slots than 10M URLs need.
INVENTORY_RESERVE_URLS = 10_000_000
PROGRESS_INTERVAL = 5.0
