"""Outputs: feed exporters (one line per URL) and the ``_crawl-log.json`` file."""
