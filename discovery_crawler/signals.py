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

#: A sitemap document was downloaded and reached the walk (``request``; ``waiting``: the
#: documents, this one included, now waiting for a parse slot, 0 when it took one at once):
#: sent by the sitemap walk (``crawling/walk.py``); the host throttle paces the host's
#: sitemap fetches on it (``extensions/throttle.py``).
sitemap_arrived = object()

#: A host's interval changed (``origin``: ``scheme://host[:port]``, ``seconds``: the time
#: now kept between two of its requests — its base, its Crawl-delay, the pause of a
#: failing host): sent by the host throttle (``extensions/throttle.py``) when a host is
#: first seen and whenever the interval in force moves.
host_interval = object()

#: A host is held back (``origin``, ``kind``: one of ``HOLD_KINDS``, ``seconds``): sent by
#: the host throttle when it backs a failing host off, honours a Retry-After, makes a job's
#: first request to a host wait out the interval since the invocation before, or gives a
#: host up (``seconds`` 0).
host_held = object()
BACKOFF = "backoff"  # failing: no request to it for ``seconds`` (exponential back-off)
RETRY_AFTER = "retry_after"  # a 429/503 Retry-After holds it ``seconds``
PAUSE = "pause"  # its first request waits ``seconds``: the interval since the job's last one
GIVE_UP = "give_up"  # failed too often in a row: its failures are no longer retried
HOLD_KINDS = (BACKOFF, RETRY_AFTER, PAUSE, GIVE_UP)

#: A page fetch was refused or failed (``request``, ``refusal``: the refusal record, a dict
#: with its ``class``): sent by the refusal middleware where it counts the refusal.
page_refused = object()

#: The run is stopping (the first SIGINT / SIGTERM): nothing more is sent. Sent by the
#: prompt stop (``extensions/stop.py``); the host throttle drops the requests waiting for
#: their host's turn, unsent, and returns how many (the receivers' results are summed).
run_stopping = object()
