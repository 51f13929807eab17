"""Distributed mode (``-s REDIS_URL=redis://host:port/db``): any number of worker
processes, on one machine or several, crawl one job together through Redis.

- ``connection``: the client (the ``redis`` extra), reconnect back-off, the one-line
  failure when the server cannot be reached;
- ``job``: the job's name and identity (its ``-a`` arguments), its key names;
- ``seen``: the job-wide seen-set's stable 64-bit hash and its compact layout;
- ``scripts``: the Lua scripts that make enqueue, lease, ack and reap atomic;
- ``scheduler``: Scrapy's scheduler backed by Redis (``RedisScheduler``).

Nothing here is imported unless ``REDIS_URL`` is set: local runs never load it.
"""
