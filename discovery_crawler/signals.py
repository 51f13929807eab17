"""The project's own signals, sent with ``crawler.signals.send_catch_log``."""

#: The sitemap walk's estimate of how many URLs its sitemaps list (``urls``: int), sent
#: whenever it grows (``sitemaps.expected.ExpectedUrls``). The stages that keep a table per
#: URL (the dedup seen-set, the slug allocator) size it once, early, instead of doubling
#: it as the site fills it: each doubling rehashes every fingerprint in a Python loop.
urls_expected = object()

#: A file of the run could not be written (``path``, ``error``: the ``OSError``): sent by
#: the feed's storage and exporters; the run's owner (``extensions/run.py``) says it in
#: one line and stops the run.
output_failed = object()
