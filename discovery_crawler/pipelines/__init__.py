"""Item pipelines, one module per stage, each working on a whole ``UrlBatch`` at a time:
normalize → dedup → crawl-log writer (filter, junk filter, score and slug come next)."""
