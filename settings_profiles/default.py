"""default — anyone: sitemap first, BFS fallback, full inventory, polite (1 request/s per host)."""

HOST_INTERVAL = 1.0
SITEMAP_CONCURRENCY = 4
SITEMAP_MAX_DOCUMENTS = 0  # 0 = no limit
SITEMAP_MAX_URLS = 0
SITEMAP_MAX_DEPTH = 0
