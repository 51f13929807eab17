"""The Lua scripts of the Redis frontier: each step that touches more than one key runs
as one script, so no worker sees it half done (modelled on crawlee-python's Redis request
queue, with per-worker leases instead of a fixed lease time).

Key layout (``job.JobKeys``): ``queue`` ZSET id → score, ``requests`` HASH id → request,
``sequence`` the last id, ``seen:<bucket>`` intsets, ``workers`` SET, ``lease:<worker>``
HASH id → score, ``alive:<worker>`` a key with a TTL its worker keeps refreshing,
``claims:<worker>`` HASH ``<bucket hex>:<member>`` → depth (claimed, not yet enqueued),
``depths`` HASH depth → pages claimed, queued or leased and not yet done,
``requested`` the job's page count, ``read:<worker>`` HASH id → score (a sitemap read)
or ``<score>|<depth>`` (a page fetched), kept until the worker's records are in the job.

A score is ``-priority * 2**32 + id``: Scrapy's priority first (the link crawl's falls
with depth: breadth-first), then arrival order (FIFO within a depth). Exact in a double
while ``|priority| < 2**20``."""

from __future__ import annotations

# KEYS: queue, requests, sequence, seen bucket (or the queue again: no dedup), claims,
#       depths
# ARGV: seen member ('' = dont_filter or claimed), -priority, payload, claim field ('': none),
#       link depth, '1' when it counts at its depth now
ENQUEUE = """
if ARGV[1] ~= '' and redis.call('SADD', KEYS[4], ARGV[1]) == 0 then
  return 0
end
if ARGV[4] ~= '' then redis.call('HDEL', KEYS[5], ARGV[4]) end
-- a claimed request was counted at its depth when claimed (CLAIM, or a slash redirect's
-- follow when made); a retry or an unclaimed request counts now
if ARGV[6] == '1' then redis.call('HINCRBY', KEYS[6], ARGV[5], 1) end
local id = redis.call('INCR', KEYS[3])
redis.call('HSET', KEYS[2], id, ARGV[3])
redis.call('ZADD', KEYS[1], tonumber(ARGV[2]) * 4294967296 + (id % 4294967296), id)
return id
"""

# KEYS: queue, requests, lease, workers, alive, identity
# ARGV: worker, alive TTL (ms), optional: the job's ``again`` SET
# The first request, leased to the worker (not popped: it stays until acknowledged); -1
# when the job's identity is gone (Redis restarted without its data): the job is lost.
# The third value is 1 for a page a dead worker fetched and REAP handed back (``again``).
LEASE = """
if redis.call('EXISTS', KEYS[6]) == 0 then return -1 end
local got = redis.call('ZPOPMIN', KEYS[1])
if #got == 0 then return false end
local payload = redis.call('HGET', KEYS[2], got[1])
if not payload then return false end
redis.call('HSET', KEYS[3], got[1], got[2])
redis.call('SADD', KEYS[4], ARGV[1])
redis.call('SET', KEYS[5], '1', 'PX', ARGV[2])
local again = 0
if ARGV[3] then again = redis.call('SREM', ARGV[3], got[1]) end
return {got[1], payload, again}
"""

# KEYS: lease, requests, depths;  ARGV: id, link depth ('-': counted done already)
ACK = """
if redis.call('HDEL', KEYS[1], ARGV[1]) == 1 then
  redis.call('HDEL', KEYS[2], ARGV[1])
  if ARGV[2] ~= '-' then redis.call('HINCRBY', KEYS[3], ARGV[2], -1) end
  return 1
end
return 0
"""

_UNCLAIM = """
-- A worker's claims not yet enqueued (it stopped between the two) are given back: the
-- URL leaves the seen-set and its page the job's count, so the worker that fetches the
-- claiming page again claims them anew.
local function unclaim(prefix, claims)
  local held = redis.call('HGETALL', claims)
  for i = 1, #held, 2 do
    local bucket, member = string.match(held[i], '^(%x+):(%d+)$')
    redis.call('SREM', prefix .. 'seen:' .. bucket, member)
    redis.call('DECR', prefix .. 'requested')
    redis.call('HINCRBY', prefix .. 'depths', held[i + 1], -1)
  end
  redis.call('DEL', claims)
  return #held / 2
end
"""

# KEYS: queue, lease, claims;  ARGV: key prefix
# A worker that stops hands its leases back (in their old places in the queue), and its
# claims not yet enqueued.
RELEASE = (
    _UNCLAIM
    + """
local held = redis.call('HGETALL', KEYS[2])
for i = 1, #held, 2 do redis.call('ZADD', KEYS[1], held[i + 1], held[i]) end
redis.call('DEL', KEYS[2])
unclaim(ARGV[1], KEYS[3])
return #held / 2
"""
)

# KEYS: workers, queue;  ARGV: key prefix
# The leases of every worker whose alive key expired go back to the queue, its claims not
# yet enqueued are given back; returns how many leases. A live worker's leases are never
# touched, however slow it is.
REAP = (
    _UNCLAIM
    + """
local requeued = 0
for _, worker in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if redis.call('EXISTS', ARGV[1] .. 'alive:' .. worker) == 0 then
    local lease = ARGV[1] .. 'lease:' .. worker
    local held = redis.call('HGETALL', lease)
    for i = 1, #held, 2 do
      redis.call('ZADD', KEYS[2], held[i + 1], held[i])
      -- perhaps read, its links held for their level when it died: cited again
      redis.call('SADD', ARGV[1] .. 'again', held[i])
      requeued = requeued + 1
    end
    redis.call('DEL', lease)
    -- the sitemaps it read and the pages it fetched whose records it never handed
    -- over: read or fetched again by another (a page counts at its depth again)
    local read = ARGV[1] .. 'read:' .. worker
    held = redis.call('HGETALL', read)
    local sitemaps = 0
    for i = 1, #held, 2 do
      local score, depth = string.match(held[i + 1], '^([^|]+)|(.+)$')
      if depth then
        redis.call('HINCRBY', ARGV[1] .. 'depths', depth, 1)
        redis.call('SADD', ARGV[1] .. 'again', held[i])
      else
        score = held[i + 1]
        sitemaps = sitemaps + 1
      end
      redis.call('ZADD', KEYS[2], score, held[i])
      requeued = requeued + 1
    end
    if sitemaps > 0 then redis.call('INCRBY', ARGV[1] .. 'sitemaps_open', sitemaps) end
    redis.call('DEL', read)
    redis.call('DEL', ARGV[1] .. 'held:' .. worker)
    unclaim(ARGV[1], ARGV[1] .. 'claims:' .. worker)
    redis.call('SREM', KEYS[1], worker)
  end
end
return requeued
"""
)

# KEYS: workers, queue, identity;  ARGV: key prefix
# The job's outstanding work: {queued, leased or held (links waiting for their level) by
# any worker, 1 while the job exists}. The sitemaps read by a worker whose heartbeat
# lapsed count too (REAP hands them back: their records never came).
PENDING = """
local leased = 0
for _, worker in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  leased = leased + redis.call('HLEN', ARGV[1] .. 'lease:' .. worker)
  if redis.call('EXISTS', ARGV[1] .. 'alive:' .. worker) == 0 then
    leased = leased + redis.call('HLEN', ARGV[1] .. 'read:' .. worker)
  end
  for _, n in ipairs(redis.call('HVALS', ARGV[1] .. 'held:' .. worker)) do
    leased = leased + tonumber(n)
  end
end
return {redis.call('ZCARD', KEYS[2]), leased, redis.call('EXISTS', KEYS[3])}
"""

# KEYS: seen bucket, requested (the job's page count), claims (this worker's), citations,
#       depths
# ARGV: seen member, max_pages (0: none), claim field (bucket:member), the URL's key, its
#       citation's order ("<depth, 6 digits>\t<citing URL>"), the citation (JSON), depth
# A page claimed counts at its depth at once (``depths``), before its request is queued:
# a level is not admitted while a smaller one is still being claimed.
# Every worker's citation of the URL is weighed, the best kept (``citations``: the
# smallest depth, then the smallest citing URL), whichever worker claims it first.
# A page URL about to be requested, claimed for the job in one step: 0 when any worker
# met it before (its seen slot taken), -1 when the job's max_pages are all given out (the
# slot taken: this worker records it over the budget, no other does), else the job's
# count of page requests with this one. Dedup and budget in one script, so a page counts
# once and max_pages over any number of workers requests exactly max_pages pages. The
# claim is held in the worker's claims until its request is enqueued (ENQUEUE), so a
# worker killed in between gives it back (REAP).
_BEFORE = """
-- byte order (Lua's < follows the server's locale)
local function before(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
"""

CLAIM = (
    _BEFORE
    + """
local old = redis.call('HGET', KEYS[4], ARGV[4])
if not old or before(ARGV[5], string.match(old, '^[^\\n]*')) then
  redis.call('HSET', KEYS[4], ARGV[4], ARGV[5] .. '\\n' .. ARGV[6])
end
if redis.call('SADD', KEYS[1], ARGV[1]) == 0 then return 0 end
local budget = tonumber(ARGV[2])
if budget > 0 and tonumber(redis.call('GET', KEYS[2]) or 0) >= budget then return -1 end
redis.call('HSET', KEYS[3], ARGV[3], ARGV[7])
redis.call('HINCRBY', KEYS[5], ARGV[7], 1)
return redis.call('INCR', KEYS[2])
"""
)


# KEYS: depths, workers;  ARGV: key prefix, link depth, this worker
# 1 when any page of a smaller depth is queued or leased, or another worker holds links
# of a smaller depth for their level (``held:<worker>``), else 0: the level may go.
BELOW = """
local depth = tonumber(ARGV[2])
local counts = redis.call('HGETALL', KEYS[1])
for i = 1, #counts, 2 do
  if tonumber(counts[i]) < depth and tonumber(counts[i + 1]) > 0 then return 1 end
end
for _, worker in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  local held = {}
  if worker ~= ARGV[3] then held = redis.call('HGETALL', ARGV[1] .. 'held:' .. worker) end
  for i = 1, #held, 2 do
    if tonumber(held[i]) < depth and tonumber(held[i + 1]) > 0 then return 1 end
  end
end
return 0
"""

# KEYS: sitemaps (SET of URLs asked), documents (counter), sitemap_order, sequence,
#       requests, queue, sitemaps_open (counter)
# ARGV: URL, SITEMAP_MAX_DOCUMENTS (0: none; '-': not a document, robots.txt), its place
#       in one run's reading order, payload, -priority
# A sitemap (or robots.txt) asked by any worker, shared with the job in one step: 0 when
# the job asked for it before (a cycle, a repeated child, another worker's robots.txt),
# -1 when the job's document budget is spent (the URL kept as asked: this worker records
# it skipped, no other does), else its request's id, queued for whichever worker is free.
SHARE_SITEMAP = """
if redis.call('SADD', KEYS[1], ARGV[1]) == 0 then return 0 end
if ARGV[2] ~= '-' then
  local budget = tonumber(ARGV[2])
  if budget > 0 and tonumber(redis.call('GET', KEYS[2]) or 0) >= budget then return -1 end
  redis.call('INCR', KEYS[2])
end
if ARGV[3] ~= '' then redis.call('HSET', KEYS[3], ARGV[1], ARGV[3]) end
local id = redis.call('INCR', KEYS[4])
redis.call('HSET', KEYS[5], id, ARGV[4])
redis.call('ZADD', KEYS[6], tonumber(ARGV[5]) * 4294967296 + (id % 4294967296), id)
redis.call('INCR', KEYS[7])
return id
"""

# KEYS: lease, read, sitemaps_open;  ARGV: id
# A sitemap read: its lease becomes a read entry, kept until the worker's records are
# handed over (result.py), so a worker killed before that has it read again (REAP).
KEEP_READ = """
local score = redis.call('HGET', KEYS[1], ARGV[1])
if not score then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], score)
redis.call('DECR', KEYS[3])
return 1
"""

# KEYS: lease, read, depths;  ARGV: id, link depth, '1' when counted done already
# A page fetched: its lease becomes a read entry ("<score>|<depth>"), kept until the
# worker's records are handed over (result.py), so a worker killed before that has its
# pages fetched again by another (REAP, which counts them at their depth again); the
# page no longer counts at its depth (as ACK).
KEEP_PAGE = """
local score = redis.call('HGET', KEYS[1], ARGV[1])
if not score then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], score .. '|' .. ARGV[2])
if ARGV[3] ~= '1' then redis.call('HINCRBY', KEYS[3], ARGV[2], -1) end
return 1
"""

# KEYS: read, requests
# The worker's records are in the job: its read sitemaps and fetched pages are done for
# good.
HANDED_OVER = """
local ids = redis.call('HKEYS', KEYS[1])
for _, id in ipairs(ids) do redis.call('HDEL', KEYS[2], id) end
redis.call('DEL', KEYS[1])
return #ids
"""
