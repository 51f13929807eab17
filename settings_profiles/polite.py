"""polite — link-graph crawls: sitemap URLs seed the link crawl, citations on every page.

At most 20 sitemap documents and 50,000 sitemap URLs; one request per second per host.
"""

HOST_INTERVAL = 1.0
SITEMAP_CONCURRENCY = 2
SITEMAP_MAX_DOCUMENTS = 20
SITEMAP_MAX_URLS = 50_000
DISCOVERY_MODE = "union"
