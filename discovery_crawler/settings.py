"""Project settings: every default lives here; profiles override only what differs."""

from scrapy.settings import default_settings as _scrapy_defaults

BOT_NAME = "discovery_crawler"
SPIDER_MODULES = ["discovery_crawler.spiders"]
NEWSPIDER_MODULE = "discovery_crawler.spiders"
COMMANDS_MODULE = "discovery_crawler.commands"

# Scrapy 2.19 starts a code-executing local server per crawl by default; never here.
REMOTE_CONTROL_ENABLED = False
TELNETCONSOLE_ENABLED = False

# Rules are asked by this token (robots policy); the User-Agent names it too.
ROBOTS_AGENT_TOKEN = "discovery-crawler"
USER_AGENT = "discovery-crawler/0.1 (+https://github.com/discovery-crawler)"
ROBOTSTXT_OBEY = False  # our own robots policy reads robots.txt (RFC 9309 semantics)
ROBOTS_MAX_BYTES = 500 * 1024  # robots.txt bytes read and parsed (as Google); 0 = all

LOG_LEVEL = "INFO"
LOGSTATS_INTERVAL = 0  # our progress line replaces Scrapy's per-minute stats line
FEED_EXPORT_ENCODING = "utf-8"
# Local feed files: a failed write stops the run with one line (output/feed_storage.py).
FEED_STORAGES = {
    "": "discovery_crawler.output.feed_storage.FeedFile",
    "file": "discovery_crawler.output.feed_storage.FeedFile",
}
FEED_EXPORTERS = {
    "jsonl": "discovery_crawler.output.exporters.JsonLinesExporter",
    "jsonlines": "discovery_crawler.output.exporters.JsonLinesExporter",
    "json": "discovery_crawler.output.exporters.JsonExporter",
    "csv": "discovery_crawler.output.exporters.CsvExporter",
}

# Every stage, in order; a stage the run does not need switches itself off when it is
# built (NotConfigured): union without mode=union, the verify stages without -a verify=1.
ITEM_PIPELINES = {
    "discovery_crawler.pipelines.normalize.NormalizePipeline": 100,
    "discovery_crawler.pipelines.union.UnionPipeline": 150,
    "discovery_crawler.pipelines.dedup.DedupPipeline": 200,
    "discovery_crawler.pipelines.verify.VerifyPipeline": 250,
    "discovery_crawler.pipelines.filter.FilterPipeline": 300,
    "discovery_crawler.pipelines.robots_verdict.RobotsVerdictPipeline": 350,
    "discovery_crawler.pipelines.junk.JunkFilterPipeline": 400,
    "discovery_crawler.pipelines.score.ScorePipeline": 500,
    "discovery_crawler.pipelines.slug.SlugPipeline": 600,
    "discovery_crawler.pipelines.groups.GroupsPipeline": 700,
    "discovery_crawler.pipelines.state.StatePipeline": 800,
    "discovery_crawler.pipelines.verify.VerifyTallyPipeline": 850,
    "discovery_crawler.pipelines.indexability.IndexabilityPipeline": 870,
    "discovery_crawler.pipelines.crawl_log.CrawlLogPipeline": 900,
}
DOWNLOADER_MIDDLEWARES = {
    # First of all (SSRF_GUARD_ENABLED): a request to a non-public address, another port,
    # scheme or origin is refused before robots.txt is asked or anything is sent; it pins
    # each name's checked address in the reactor's resolver (middlewares/ssrf.py).
    "discovery_crawler.middlewares.ssrf.SSRFGuardMiddleware": 50,
    # Before retry (550) and redirect (600): a request robots.txt forbids never reaches
    # the throttle or the network. Replaces Scrapy's RobotsTxtMiddleware (RFC 9309 here:
    # 5xx fails closed, Crawl-delay kept, the blocking rule named).
    "discovery_crawler.middlewares.robots.RobotsPolicyMiddleware": 100,
    # In place of Scrapy's RetryMiddleware (550), with its settings: the retries of a host
    # wait for it (exponential back-off on its downloader slot, through the host throttle),
    # and the crawl log says what was retried and what failed after its retries.
    "scrapy.downloadermiddlewares.retry.RetryMiddleware": None,
    "discovery_crawler.middlewares.retry.BackoffRetryMiddleware": 550,
    # Below RedirectMiddleware (600), HttpCompression (590) and the retry middleware (550):
    # sees the final response with its redirect chain, decompressed, after retries are used up.
    "discovery_crawler.middlewares.refusals.RefusalMiddleware": 540,
    # Closest to the downloader: a resumed run's replayed responses pass every other
    # middleware as the originals did (JOBDIR; off otherwise).
    "discovery_crawler.middlewares.journal.ResponseJournalMiddleware": 950,
    # Once the run is stopping (the first SIGINT / SIGTERM), nothing more is sent: what
    # reaches it, or was dropped from its slot's queue, goes back unsent (extensions/stop.py).
    "discovery_crawler.middlewares.stop.StopMiddleware": 955,
    # Below the journal: what reaches it goes to the network, MAX_CHUNK_PAGES per
    # invocation (off at 0).
    "discovery_crawler.middlewares.chunk.ChunkMiddleware": 960,
}
ADDONS = {"discovery_crawler.rendering.RenderAddon": 100}  # RENDER_MODE → playwright handler
EXTENSIONS = {
    # The run's owner (options, record, shared state): what every other component reads.
    "discovery_crawler.extensions.run.DiscoveryRun": 0,
    # A resumable run (JOBDIR): its journal of responses and invocations.
    "discovery_crawler.extensions.job.ResumableJob": 1,
    "discovery_crawler.extensions.progress.ProgressReport": 500,
    # One request per host interval, measured at the server; Crawl-delay, Retry-After
    # (SPEC §6): it drives Scrapy's downloader slots on signals, as AutoThrottle does.
    "discovery_crawler.extensions.throttle.HostThrottle": 0,
    "discovery_crawler.extensions.gc_tuning.GcTuning": 0,
    "discovery_crawler.extensions.malloc_trim.MallocTrim": 0,
    # After the run (it hangs its timeline on the run's record): requests and refusals per
    # host over time, intervals and holds, for the crawl log and report.html.
    "discovery_crawler.extensions.timeline.RunTimeline": 2,
    # SIGINT / SIGTERM: the first drops what waits for its host's interval, unsent, and
    # the run ends as its requests on the wire are answered; the second does not wait.
    "discovery_crawler.extensions.stop.PromptStop": 0,
}
# Scrapy's own extensions, less the two turned off above: not even imported, as a None in
# EXTENSIONS would still import them. The remote-control module imports aiohttp's server,
# the telnet console Twisted's conch: memory and start-up time for nothing.
EXTENSIONS_BASE = {
    path: order
    for path, order in _scrapy_defaults.EXTENSIONS_BASE.items()
    if path
    not in (
        "scrapy.extensions.remote_control.RemoteControl",
        "scrapy.extensions.telnet.TelnetConsole",
    )
}
GC_GEN0_THRESHOLD = 50_000  # young objects between collections while crawling (0 = Python's)
MALLOC_TRIM_INTERVAL = 0.25  # seconds between glibc malloc_trim calls while crawling (0 = off)
# Bytes from which glibc maps a block on its own (0 = its sliding threshold), in the spider
# and the sitemap worker: above a worker reply (two batches of 1,000 URLs, ~1 MB: mapped,
# each would cost its page faults twice), below a large sitemap's gzipped body.
MALLOC_MMAP_THRESHOLD = 5 << 18

# Politeness: at most one request per HOST_INTERVAL seconds to a host (0 = off).
HOST_INTERVAL = 1.0
DOWNLOAD_DELAY_JITTER = 0  # the interval is a floor, not an average
MAX_CRAWL_DELAY = 30.0  # seconds; a robots Crawl-delay above this is capped (0 = ignore it)
MAX_RETRY_AFTER = 300.0  # seconds; a 429/503 Retry-After above this is capped (0 = ignore it)
HOST_INTERVAL_OVERRIDES: dict[str, float] = {}  # {"host": seconds} instead of HOST_INTERVAL
# The interval is kept as each request is sent: the download handler waits for its host's
# turn (handlers.py, extensions/throttle.py), then hands it to the handler that connects.
DOWNLOAD_HANDLERS = {
    "http": "discovery_crawler.handlers.HostTurnHandler",
    "https": "discovery_crawler.handlers.HostTurnHandler",
}
# The handler that connects, under the turns (the SSRF guard pins Scrapy's HTTP/1.1 one).
HOST_INTERVAL_HANDLER = "scrapy.core.downloader.handlers.http11.HTTP11DownloadHandler"
# Where the hosts' turns are kept: this process (below), or Redis for every worker of a
# distributed job (set by REDIS_URL: discovery_crawler.distributed.interval.RedisBudget).
HOST_INTERVAL_BUDGET = "discovery_crawler.extensions.host_turns.LocalBudget"
CONCURRENT_REQUESTS = 16
DOWNLOAD_TIMEOUT = 30
# Stopping (extensions/stop.py): the first SIGINT / SIGTERM sends nothing more (the requests
# waiting in a host's slot are dropped, unsent; a resumed job asks for them again) and the
# run ends once the requests on the wire are answered; a second one does not wait for them.
PROMPT_STOP_ENABLED = True
STOP_FORCE_TIMEOUT = 10.0  # seconds after a second signal before an unclean exit (0 = never)
# Transient failures — connection refused, reset or lost, timeouts, DNS, and Scrapy's
# RETRY_HTTP_CODES (500, 502, 503, 504, 522, 524, 408, 429) — are retried up to RETRY_TIMES
# times per request (middlewares/retry.py). A failing host is paused as a whole: after its
# n-th failure in a row no request goes to it for RETRY_BACKOFF_BASE·2^(n−1) seconds (at
# most RETRY_BACKOFF_MAX), then one at a time until it answers; after RETRY_TIMES + 1
# failures in a row (1+2+4+8+16 s of pauses by default: an outage of ~30 s is survived)
# it is given up and its failures are final. RETRY_BACKOFF_BASE = 0: retried at once.
RETRY_TIMES = 5
RETRY_BACKOFF_BASE = 1.0  # seconds: the first pause of a failing host
RETRY_BACKOFF_MAX = 30.0  # seconds: the longest pause (0 = no cap)
# Retries for a host that has never answered (a wrong or dead address): given up after
# these, ~3 s with the defaults, rather than after the whole back-off (0 = as RETRY_TIMES).
RETRY_UNANSWERED_TIMES = 2

# Discovery (SPEC §2, §4).
DISCOVERY_MODE = "auto"
DISCOVERY_BATCH_SIZE = 1_000  # URLs per item: the unit of work of every pipeline
# Where generators put a sitemap nobody advertised, all tried after robots.txt's (a site may
# keep more than one; each is recorded as an attempt).
SITEMAP_CONVENTIONAL_PATHS = [
    "/sitemap.xml",  # Hugo, Jekyll, Next.js, MkDocs, Docusaurus, Sphinx; WordPress redirects
    "/sitemap_index.xml",  # Yoast SEO, Rank Math
    "/sitemap-index.xml",  # Astro, sitemap.js
    "/wp-sitemap.xml",  # WordPress core (5.5+)
    "/sitemap/sitemap-index.xml",  # Gatsby (gatsby-plugin-sitemap)
    "/sitemap.txt",  # plain-text sitemaps
]
SITEMAP_CONCURRENCY = 4  # sitemap documents fetched at once from one host
SITEMAP_PARSE_CONCURRENCY = 2  # documents parsed at once (each holds a window of XML)
# Fewer sitemap fetches at once while downloaded documents wait for a parse slot, more
# again when they do not (extensions/throttle.py): what waits in memory stays small.
SITEMAP_FETCH_PACING = True
# Documents of this many bytes (as downloaded) or more are parsed and normalized in a worker
# process (sitemaps/worker.py), on another core than the pipelines; False = in-process.
SITEMAP_PARSE_WORKER = True
SITEMAP_WORKER_MIN_BYTES = 262_144
# On a first run, the worker also writes each URL's feed-line tail and state.json entry (the
# spider checks each). Pays only when the spider's process is the busier one, which on a
# plain sitemap walk it is not: off (bench/README.md).
SITEMAP_WORKER_LINES = False
# Start the worker when the spider starts rather than at the first big document (the
# massive profile: its start-up then overlaps robots.txt and the first fetches).
SITEMAP_WORKER_EARLY = False
SITEMAP_MAX_DOCUMENTS = 0  # 0 = no limit
SITEMAP_MAX_URLS = 0  # 0 = no limit
# Entries read from one sitemap file (pages and child sitemaps together): the protocol's
# 50,000; past it the file is not read further, its attempt and the crawl log say so and
# the run is bounded (exit 5). 0 = no limit.
SITEMAP_MAX_URLS_PER_FILE = 50_000
SITEMAP_MAX_DEPTH = 0  # index nesting; 0 = no limit (cycles are stopped by a visited set)
SITEMAP_MAX_BYTES = 52_428_800 + 1_048_576  # decompressed; the protocol's 50 MiB + margin
# The per-URL tables (dedup seen-set, slug allocator) are sized once for the URL count the
# sitemaps let the spider estimate, up to this many URLs (~12 bytes a URL a table); past
# it they double as URLs arrive. An index listing dead children overestimates, so the cap
# bounds what that can cost (the massive profile: 10M). 0 = never sized ahead
# (sitemaps/expected.py).
INVENTORY_RESERVE_URLS = 2_000_000
CRAWL_LOG_LIST_CAP = 1_000  # entries listed per list in _crawl-log.json (counts stay exact)
PROGRESS_INTERVAL = 5.0  # seconds between progress lines; 0 = off
# auto: one line rewritten in place when stdout is a terminal (log lines otherwise);
# always / never force either (extensions/progress_line.py)
PROGRESS_TTY = "auto"

# Defaults for options that later stages govern (BFS crawl, selection, service).
BFS_MAX_PAGES = 0
BFS_MAX_DEPTH = 0
BFS_MAX_PAGES_LIMIT = 0  # a profile's cap on -a max_pages (service: 1000); 0 = none
BFS_MAX_DEPTH_LIMIT = 0  # a profile's cap on -a max_depth (service: 5); 0 = none
# Links read on one page (document order); the rest are counted, the page flagged
# links_capped and listed (discovery.crawl.links_capped). 0 = all (service: 1,000).
LINKS_PER_PAGE_MAX = 0
LINKS_MAX_URLS = 0  # URLs a link crawl records at most (0 = no limit; service: 1,000)
# Links held for their level (deterministic admission: docs/outputs.md, "Two runs agree")
# kept in memory; past it they go to a private temporary SQLite file (a page of 200,000).
HELD_LINKS_IN_MEMORY = 20_000
SELECTION_CAP = 5
# The SSRF guard (middlewares/ssrf.py; on in profile service): requests only to http(s)
# URLs without credentials, on SSRF_ALLOWED_PORTS, whose host is (or resolves, once, to) a
# globally reachable address or one in SSRF_ALLOWED_NETWORKS (CIDR blocks, e.g.
# ["127.0.0.1/32"] for a local test server). SSRF_SAME_ORIGIN: redirects, robots.txt
# Sitemap: lines and index children on another origin than the input's are refused or
# skipped (service). SSRF_TEST_RESOLUTIONS (tests only): {"name": ["address", ...]}
# answers lookups from the table, one answer per lookup (the last repeats), never DNS.
SSRF_GUARD_ENABLED = False
SSRF_ALLOWED_PORTS = [80, 443]
SSRF_ALLOWED_NETWORKS: list[str] = []
SSRF_SAME_ORIGIN = False
SSRF_TEST_RESOLUTIONS: dict[str, list[str]] = {}
# SSRF_SITE: the input whose origin SSRF_SAME_ORIGIN holds a spider without a discovery run
# to (the estimate spider sets it to its input).
SSRF_SITE = ""
ROBOTS_FAIL_CLOSED = True  # robots.txt 5xx/429/timeout/unreachable blocks the origin

# -a verify=1 (SPEC §3, crawling/verify.py): how each sitemap-listed page is asked. HEAD
# (GET where a HEAD is refused or answered as GET would not be), or GET for every page (it
# also sees <meta http-equiv=refresh> and block pages; reads up to PAGE_MAX_BYTES).
VERIFY_METHOD = "HEAD"

# Refusals (SPEC §11) and rendering (SPEC §3 render).
REFUSALS_ENABLED = True
REFUSALS_IDENTICAL_URLS = 3  # distinct URLs with byte-identical bodies before a warning
RENDER_MODE = "never"  # never | auto | always (-a render= maps onto it)
RENDER_BROWSER_PATH = ""  # Chromium executable; empty = `chromium` on PATH
PREVIEW_ENABLED = False

# Items are batches of up to 1,000 URLs and the pipelines are synchronous, so item
# concurrency buys nothing. Scrapy buffers up to 2 × CONCURRENT_ITEMS callback outputs per
# response (an asyncio.Queue): at the default of 100, hundreds of batches of a big walk
# would wait in memory at once.
CONCURRENT_ITEMS = 1

# --- Selection (SPEC §8): scoring and selection under a cap -------------------------------
# SELECTION_CAP (above) is the default cap; 0 = keep everything. -a cap/all/pages/single win.
SELECTION_PILLAR_KEYWORDS: list[str] = []  # extra IA-pillar keywords (localized: "chi-siamo")
SELECTION_CUT_LISTED = 100  # cut URLs listed in the crawl log, best first (count is exact)
# Junk (SPEC §7, pipelines/junk.py): a likely-junk URL is flagged `junk` with its
# junk_pattern and never selected; False also leaves it out of the feed (profile sample). The
# crawl log lists it either way (discovery.flagged_as_junk).
JUNK_IN_FEED = True
# Each fetched or flagged record gets its indexability verdict (``indexability`` in the
# feed, counts in the crawl log and the summary; pipelines/indexability.py).
INDEXABILITY_ENABLED = True

# Groups and the path tree (SPEC §9, pipelines/groups.py): memory grows with the number of
# groups and nodes, never with URLs; counts stay exact (what has no entry of its own is
# counted in "other" / a "…" node / untracked_urls).
GROUPS_ENABLED = True
PATH_GROUPS_MAX = 1_000  # path groups (first path segment) kept; later ones count in "other"
PARENT_GROUPS_MAX = 5_000  # parent groups (exact parent path) kept; later ones untracked
GROUP_SAMPLES = 10  # sample URLs per path group; members sampled for a parent group's shape
GROUP_MIN_SIZE = 3  # path groups under this many URLs merge into "other"
TREE_MAX_CHILDREN = 200  # children per path-tree node; the rest counted in its "…" entry
TREE_MAX_DEPTH = 8  # path segments deep with nodes of their own
TREE_MAX_NODES = 5_000  # nodes in the whole path tree

# Scope estimate (`scrapy crawl estimate`, SPEC §9).
ESTIMATE_HOST_INTERVAL = 0.25  # pacing of the estimate's own few requests (if < HOST_INTERVAL)
ESTIMATE_URLS_PER_SECOND = 50_000  # URLs/s a discover walk processes, all stages on (bench/)

# State and incremental re-runs (SPEC §10; pipelines/state.py, output/state.py): state.json
# in the out folder keeps every URL's slug and lifecycle; a re-run reports new / removed /
# changed (also in changes.json). preview.json (PREVIEW_ENABLED, profile service) is
# rewritten after every PREVIEW_CHUNK URLs or PREVIEW_INTERVAL seconds.
STATE_ENABLED = True
# Re-runs (docs: re-runs): state.json keeps each sitemap read whole (its ETag/Last-Modified,
# the <lastmod> its index gave it, its entries). A re-run asks it with If-None-Match /
# If-Modified-Since and carries its URLs over on a 304; and does not ask a child at all
# whose index <lastmod> is the one of the last read (False: ask it, conditionally).
SITEMAP_CONDITIONAL_REQUESTS = True
SITEMAP_TRUST_INDEX_LASTMOD = True
PREVIEW_CHUNK = 500  # URLs between rewrites of preview.json
PREVIEW_INTERVAL = 5.0  # seconds between rewrites while URLs keep coming
PREVIEW_MAX_PAGES = 200  # pages listed in preview.json (truncated=true beyond)
# Bounded chunks (middlewares/chunk.py): requests sent to the network per invocation of a
# job; the job (JOBDIR, default <out>/_job/) then exits 6 (more_to_do) and the next
# invocation continues. 0 = one invocation does it all (service: 10).
MAX_CHUNK_PAGES = 0

# --- Report (SPEC §10): report.html next to _crawl-log.json at the end of every run --------
REPORT_ENABLED = True  # a self-contained HTML page of the run (output/report.py)
# The run's timeline (extensions/timeline.py; the crawl log's `timeline`, drawn by the
# report): requests and refusals per host in buckets of time, from 1 s wide; past
# TIMELINE_MAX_BUCKETS buckets the width doubles and pairs merge, so a long run costs the
# same. The first TIMELINE_MAX_HOSTS hosts have series of their own, the rest are summed.
TIMELINE_ENABLED = True
TIMELINE_MAX_BUCKETS = 600
TIMELINE_MAX_HOSTS = 20

# --- Bad input: pages too large to read whole ---------------------------------------------
# A page fetch stops reading after PAGE_MAX_BYTES (as Googlebot reads the first 15 MB of an
# HTML page); what came is parsed, the record is flagged "truncated" and the crawl log
# lists it (discovery.crawl.truncated; limits: PAGE_MAX_BYTES). 0 = read whole pages.
# DOWNLOAD_MAXSIZE (below) stays the hard cap on every response.
PAGE_MAX_BYTES = 15 * 1024 * 1024
# Any response, decompressed (Content-Encoding) included: a gzip-bomb page stops here. Large
# enough for a protocol-size sitemap (50 MiB); sitemap files have SITEMAP_MAX_BYTES too.
DOWNLOAD_MAXSIZE = 64 * 1024 * 1024

# The link crawl follows a page's redirects itself and carries the chain on the next
# request in ``redirect_urls``, as Scrapy's RedirectMiddleware does: deliberate, not a copy
# of response.meta, so Scrapy 2.19's meta-copy check is told not to warn about it.
META_COPY_WARN_SKIP_KEYS = ["redirect_urls"]

# --- Distributed mode (docs/operations.md, "Scale-out") -------------------------------------
# REDIS_URL (redis://host:port/db) makes every process started with the same arguments a
# worker of one job sharing a Redis frontier, seen-set and per-host intervals; None = one
# process, nothing of Redis imported. A worker silent for REDIS_HEARTBEAT_TIMEOUT seconds is
# gone (its leased requests go back to the queue); a dropped connection is retried with
# back-off for REDIS_RECONNECT_TIMEOUT seconds.
REDIS_URL = None
REDIS_HEARTBEAT_TIMEOUT = 30.0
REDIS_RECONNECT_TIMEOUT = 60.0
