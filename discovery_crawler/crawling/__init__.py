"""The BFS link crawl: page scanning (``extract``), admission to Scrapy's scheduler and
page records (``links``), and its account in the crawl log (``account``)."""
