"""The Lua scripts of the Redis frontier: each step that touches more than one key runs
as one script, so no worker sees it half done (modelled on crawlee-python's Redis request
queue, with per-worker leases instead of a fixed lease time).

Key layout (``job.JobKeys``): ``queue`` ZSET id → score, ``requests`` HASH id → request,
``sequence`` the last id, ``seen:<bucket>`` intsets, ``workers`` SET, ``lease:<worker>``
HASH id → score, ``alive:<worker>`` a key with a TTL its worker keeps refreshing.

A score is ``-priority * 2**32 + id``: Scrapy's priority first (the link crawl's falls
with depth: breadth-first), then arrival order (FIFO within a depth). Exact in a double
while ``|priority| < 2**20``."""

from __future__ import annotations

# KEYS: queue, requests, sequence, seen bucket (or the queue again: no dedup)
# ARGV: seen member ('' = dont_filter), -priority, payload
ENQUEUE = """
if ARGV[1] ~= '' and redis.call('SADD', KEYS[4], ARGV[1]) == 0 then
  return 0
end
local id = redis.call('INCR', KEYS[3])
redis.call('HSET', KEYS[2], id, ARGV[3])
redis.call('ZADD', KEYS[1], tonumber(ARGV[2]) * 4294967296 + (id % 4294967296), id)
return id
"""

# KEYS: queue, requests, lease, workers, alive;  ARGV: worker, alive TTL (ms)
# The first request, leased to the worker (not popped: it stays until acknowledged).
LEASE = """
local got = redis.call('ZPOPMIN', KEYS[1])
if #got == 0 then return false end
local payload = redis.call('HGET', KEYS[2], got[1])
if not payload then return false end
redis.call('HSET', KEYS[3], got[1], got[2])
redis.call('SADD', KEYS[4], ARGV[1])
redis.call('SET', KEYS[5], '1', 'PX', ARGV[2])
return {got[1], payload}
"""

# KEYS: lease, requests;  ARGV: id
ACK = """
if redis.call('HDEL', KEYS[1], ARGV[1]) == 1 then
  redis.call('HDEL', KEYS[2], ARGV[1])
  return 1
end
return 0
"""

# KEYS: queue, lease;  ARGV: -
# A worker that stops hands its leases back (in their old places in the queue).
RELEASE = """
local held = redis.call('HGETALL', KEYS[2])
for i = 1, #held, 2 do redis.call('ZADD', KEYS[1], held[i + 1], held[i]) end
redis.call('DEL', KEYS[2])
return #held / 2
"""

# KEYS: workers, queue;  ARGV: key prefix
# The leases of every worker whose alive key expired go back to the queue; returns how
# many. A live worker's leases are never touched, however slow it is.
REAP = """
local requeued = 0
for _, worker in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if redis.call('EXISTS', ARGV[1] .. 'alive:' .. worker) == 0 then
    local lease = ARGV[1] .. 'lease:' .. worker
    local held = redis.call('HGETALL', lease)
    for i = 1, #held, 2 do
      redis.call('ZADD', KEYS[2], held[i + 1], held[i])
      requeued = requeued + 1
    end
    redis.call('DEL', lease)
    redis.call('SREM', KEYS[1], worker)
  end
end
return requeued
"""

# KEYS: workers, queue;  ARGV: key prefix
# The job's outstanding work: {queued, leased by any worker}.
PENDING = """
local leased = 0
for _, worker in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  leased = leased + redis.call('HLEN', ARGV[1] .. 'lease:' .. worker)
end
return {redis.call('ZCARD', KEYS[2]), leased}
"""
