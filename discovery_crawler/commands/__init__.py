"""Project commands: ``crawl`` with one-line argument errors and a meaningful exit status."""
