"""The project's own signals, sent with ``crawler.signals.send_catch_log``."""

#: The sitemap walk's estimate of how many URLs its sitemaps list (``urls``: int), sent
#: whenever it grows (``sitemaps.expected.ExpectedUrls``). The stages that keep a table per
#: URL (the dedup seen-set, the slug allocator) size it once, early, instead of doubling
#: it as the site fills it: each doubling rehashes every fingerprint in a Python loop.
urls_expected = object()
