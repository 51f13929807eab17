"""Sitemap parsing in a worker process, so the reactor's core runs the pipelines meanwhile.

Why: on a 1M-URL walk, inflating, parsing and normalizing the locations is ~4 µs of pure
Python a URL, on the same core as the item pipelines. A worker process does it on the
second core, document by document, and streams back batches in text columns: each ``loc``
already normalized (``UrlBatch.normalized`` names the ``OriginCache.version`` it was done
with; the normalize stage redoes it if the site's origin rewrites changed since), with what
the stages would work out from the listing alone (``items.URL_FACTS``) and, on a first run,
the feed line's tail and the state.json entry they would write if the URL is kept as it is
(the main process checks those assumptions before it uses them).

Why not ``concurrent.futures.ProcessPoolExecutor``: its ``spawn``/``forkserver`` children
re-import the parent's ``__main__`` (the ``scrapy`` script, hence Scrapy: +40 MB and
0.5 s), and ``fork`` copies a running reactor. This worker runs this module's ``main``
(``_LAUNCH``), which imports the parser, the normalizer and the per-URL rules only (~20 MB
of RSS; the spider side's imports wait in its methods). Messages are pickles over two pipes
(``sitemaps/frames.py``); a writer thread sends, so a busy worker never blocks the reactor,
and a reader thread hands replies to the event loop.

Only documents of at least ``SITEMAP_WORKER_MIN_BYTES`` go to the worker; small ones
parse in-process (most sites: no worker is ever started). ``SITEMAP_PARSE_WORKER = False``
turns it off. If the worker cannot start or dies, the spider logs one line and parses
in-process from the entry where the worker stopped: nothing is lost.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import pickle
import sys
import threading
from dataclasses import dataclass
from json.encoder import encode_basestring
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from discovery_crawler.items import URL_FACTS
from discovery_crawler.output.feed_lines import listed_heads
from discovery_crawler.selection.paths import PILLAR_KEYWORDS
from discovery_crawler.selection.scoring import Rater
from discovery_crawler.sitemaps.body import SitemapBody, SitemapTooLarge
from discovery_crawler.sitemaps.frames import recv_frame, send_frame
from discovery_crawler.sitemaps.parser import ParseResult, iter_sitemap_batches, priority_value
from discovery_crawler.urls.filters import DROP, KEEP, KEEP_REQUIRES_AUTH, Decision, FilterPolicy
from discovery_crawler.urls.junk import junk_patterns_many
from discovery_crawler.urls.kinds import url_kinds_many
from discovery_crawler.urls.normalize import OriginCache, UrlError
from discovery_crawler.urls.slugs import bases_many, normalized_paths

if TYPE_CHECKING:
    import asyncio
    import queue
    import subprocess
    from collections.abc import AsyncIterator, Iterator

_PROTOCOL = pickle.HIGHEST_PROTOCOL
CHUNK_BATCHES = 2  # batches per reply message: small enough to overlap, big enough to be cheap
# Replies read but not yet taken by the spider: past this the reader stops reading, the pipe
# fills and the worker waits, so a worker faster than the pipelines cannot pile up results.
# (A batch is ~0.6 MB of text with its lines; 2 × 2 against 4 × 3 measured ~12 MB less peak
# RSS on the 1M-URL benchmark, at the same speed within this machine's noise.)
MAX_BUFFERED = 2
# The pipes' size (Linux's default is 64 KB). A reply then crosses in one or two reads
# instead of ~20: between two reads the spider's reader thread waits for the GIL (up to the
# 5 ms switch interval while the pipelines run), and the worker waits on the full pipe.
_PIPE_BYTES = 1 << 20


class WorkerFailed(Exception):
    """The worker could not finish a document (it died, or failed to start)."""


@dataclass(frozen=True)
class RunContext:
    """What the worker must know of the run to work URLs out as the stages would: the
    site's origin rewrites, the pillar keywords, and (once known) the site and its scope."""

    rewrite: tuple[tuple[str, str], ...] = ()
    keywords: tuple[str, ...] = PILLAR_KEYWORDS
    site: str | None = None
    include_paths: tuple[str, ...] = ()
    exclude_paths: tuple[str, ...] = ()
    # The run's number when it is the first in its out folder (state.json starts empty), so
    # every URL is "new": the feed line's tail and the state entry can be written here.
    first_run: int = 0


class Tools:
    """The worker's normalizer, rater and filter policy for a context (kept across
    documents while it holds: their caches are what makes them fast)."""

    def __init__(self, context: RunContext = RunContext()) -> None:
        self.context = context
        self.origins = OriginCache()
        self.origins.rewrite.update(context.rewrite)
        self.rater = Rater(context.keywords)
        self.policy = (
            FilterPolicy(context.site, context.include_paths, context.exclude_paths)
            if context.site
            else None
        )

    def fit(self, context: RunContext) -> Tools:
        """These tools if they suit ``context``, else new ones (a run's context changes
        once or twice, when the site is named: losing the caches then costs nothing)."""
        return self if context == self.context else Tools(context)


Column = str | list[str]  # values joined by NUL, or a list (few values, or one holds a NUL)


class WorkedBatch(NamedTuple):
    """One batch worked out for the spider, in columns, one value per entry ('' = none).
    A column of values of its own per URL (URL, lastmod, base, head…) is one string, its
    values joined by NUL — a character no XML value holds — so sending it is a few
    ``memcpy``s instead of pickling an object a URL (measured: pickling per-URL tuples was
    a sixth of the worker's time). A column of few distinct values (type, slot, kind, junk
    name, decision) is a list of shared strings: pickle writes each value once and a
    2-byte reference after, and the spider gets shared objects instead of splitting out
    a string per URL to make and free (measured: −0.18 s of CPU per 1M URLs in all)."""

    n: int
    urls: Column  # normalized ('' where ``errors`` has the entry)
    lastmods: Column
    changefreqs: Column
    priorities: Column  # as written
    totals: list[int]  # the score without the auth rule
    types: Column
    slots: Column
    bases: Column  # base slugs
    heads: Column  # feed lines up to ``alternates`` ('' for an entry with alternates)
    kinds: Column
    junk: Column  # junk pattern names
    decisions: Column | None  # filter decision codes; None: the site was not known yet
    tails: Column | None  # on a first run: the feed lines' tails ('' where not written)
    states: Column | None  # ... and the state.json entries
    errors: dict[int, UrlError]
    alternates: dict[int, Any]


def worked_batch(entries: list[tuple[Any, ...]], base: str, tools: Tools) -> WorkedBatch:
    """One batch worked out for the spider (``entries_of`` turns it back into entries,
    ``worked_records`` into records)."""
    locs, lastmods, changefreqs, priorities, alternates = _listing_columns(entries)
    urls = tools.origins.normalize_many(locs, base)
    # An error keeps the location as written (``UrlError.raw`` may be its origin alone).
    errors = (
        {i: UrlError(url.reason, locs[i]) for i, url in enumerate(urls) if url.__class__ is not str}
        if set(map(type, urls)) != {str}
        else {}
    )
    good_urls, good_lastmods, good_changefreqs, good_priorities = (
        (
            [v for url, v in zip(urls, column, strict=True) if url.__class__ is str]
            for column in (urls, lastmods, changefreqs, priorities)
        )
        if errors
        else (urls, lastmods, changefreqs, priorities)
    )
    totals, types, slots = tools.rater.rate_columns(
        good_urls,
        _mapped(good_priorities, lambda p: priority_value(p) if p else None),
        _mapped(good_changefreqs, lambda c: c or None),
    )
    paths = normalized_paths(good_urls)
    bases = bases_many(paths)
    heads = listed_heads(
        good_urls, good_lastmods, good_priorities, good_changefreqs, "sitemap", base
    )
    kinds = url_kinds_many(good_urls)
    patterns = junk_patterns_many(paths)
    junk = (
        [""] * len(patterns)
        if patterns.count(None) == len(patterns)
        else [p.name if p is not None else "" for p in patterns]
    )
    policy = tools.policy
    decisions = None
    if policy is not None:
        verdicts = policy.decide_many(good_urls, kinds)
        decisions = (  # nearly always all kept: one identity count instead of a code each
            [""] * len(verdicts)
            if verdicts.count(KEEP) == len(verdicts)
            else [_code(d) for d in verdicts]
        )
    columns = [types, _mapped(slots, lambda slot: slot or ""), bases, heads, kinds, junk]
    if decisions is not None:
        columns.append(decisions)
        run = tools.context.first_run
        if run:
            columns.extend(
                _speculated(good_urls, good_lastmods, totals, bases, kinds, decisions, junk, run)
            )
    if errors:  # their columns get a placeholder so every column has a value per entry
        n = len(urls)
        totals = _with_gaps(totals, errors, n, 0)
        columns = [_with_gaps(column, errors, n, "") for column in columns]
    for i in alternates:  # the normalize stage works them out, and the line's head with them
        columns[3][i] = ""
    # decisions (few-valued) as they are; a first run's tails and states joined
    optional = columns[6:7] + [_join(column) for column in columns[7:]]
    optional += [None] * (3 - len(optional))
    return WorkedBatch(
        len(entries),
        _join([url if url.__class__ is str else "" for url in urls] if errors else urls),
        _join(lastmods),
        _join(changefreqs),
        _join(priorities),
        totals,
        *(_join(c) if i in _OWN_VALUED else c for i, c in enumerate(columns[:6])),
        *optional,
        errors,
        alternates,
    )


def _listing_columns(
    entries: list[tuple[Any, ...]],
) -> tuple[list[str], list[str], list[str], list[str], dict[int, Any]]:
    """A batch's locations, lastmods, changefreqs and priorities ('' for none) and its
    hreflang alternates by index. The plain-urlset fast path's 5-tuples of text are
    transposed by one ``zip`` (C) rather than a comprehension per column."""
    if set(map(len, entries)) == {5}:
        locs, lastmods, changefreqs, priorities, pairs = (
            list(column) for column in zip(*entries, strict=True)
        )
        alternates = (
            {i: pairs[i] for i in itertools.compress(range(len(pairs)), pairs)}
            if any(pairs)
            else {}
        )
        return locs, lastmods, changefreqs, priorities, alternates
    return (
        [e[0] for e in entries],
        [e[1] or "" for e in entries],
        [e[2] or "" for e in entries],
        [e[3] or "" for e in entries],
        {i: e[4] for i, e in enumerate(entries) if len(e) > 4 and e[4]},
    )


def _mapped(values: list[Any], convert: Any) -> list[Any]:
    """``[convert(v) for v in values]`` for a column of few distinct values: each converted
    once, then looked up in C."""
    table = {value: convert(value) for value in set(values)}
    return list(map(table.__getitem__, values))


def _speculated(
    urls: list[str],
    lastmods: list[str],
    totals: list[int],
    bases: list[str],
    kinds: list[str],
    decisions: list[str],
    junk: list[str],
    run: int,
) -> tuple[list[str], list[str]]:
    """Each URL's feed-line tail and state.json entry as the main process would write them
    on a first run if nothing changes its listing's outcome: kept without flags, its base
    slug free, its score as rated here ('' where that is not so). The main process checks
    each (``feed_lines.json_lines``, ``RunState.observe``) and renders the others itself."""
    from discovery_crawler.output.state import entry_lines  # lines are off by default: lazy

    enc = encode_basestring
    states = entry_lines(urls, bases, run, run, [lastmod or None for lastmod in lastmods], "new")
    tails = []
    for i, (total, base, kind, code, name) in enumerate(
        zip(totals, bases, kinds, decisions, junk, strict=True)
    ):
        if code or name:  # flags, a drop or a junk pattern: the stages decide the rest
            tails.append("")
            states[i] = ""
            continue
        tails.append(
            f', "kind": {enc(kind)}, "flags": null, "slug": {enc(base)}, "score": {total}, '
            '"change": "new"}'
        )
    return tails, states


# A filter decision travels as a short code: "" keep, "+flag,…" keep with flags, "-reason".
_DECISION_CODES: dict[Decision, str] = {KEEP: "", KEEP_REQUIRES_AUTH: "+requires_auth"}
_DECISION_CODES.update((drop, "-" + reason) for reason, drop in DROP.items())


def _code(decision: Decision) -> str:
    code = _DECISION_CODES.get(decision)
    if code is not None:
        return code
    if decision.keep:
        return "+" + ",".join(decision.flags) if decision.flags else ""
    return "-" + (decision.reason or "filtered")


@functools.lru_cache(maxsize=256)
def decision_of(code: str) -> Decision:
    """The ``Decision`` a code stands for (the shared ones where they exist)."""
    if not code:
        return KEEP
    if code[0] == "-":
        return DROP.get(code[1:]) or Decision(False, code[1:], ())
    return Decision(True, None, tuple(code[1:].split(",")))


def entries_of(batch: WorkedBatch) -> list[tuple[Any, ...]]:
    """A ``worked_batch`` as the normalize stage's entries: ``(url, lastmod, changefreq,
    priority, alternates, facts)``, ``url`` normalized or the ``UrlError`` saying why not,
    ``facts`` as ``items.URL_FACTS`` (None for an error; an empty head when there is none;
    a None decision when the worker did not know the site yet)."""
    n = batch.n
    blank = [""] * n
    facts: list[Any] = list(
        zip(
            batch.totals,
            _split(batch.types, n),
            [slot or None for slot in _split(batch.slots, n)],
            _split(batch.bases, n),
            _split(batch.heads, n),
            _split(batch.kinds, n),
            _verdicts(batch.decisions, n),
            [name or None for name in _split(batch.junk, n)],
            _split(batch.tails, n) if batch.tails is not None else blank,
            _split(batch.states, n) if batch.states is not None else blank,
            strict=True,
        )
    )
    urls: list[Any] = _split(batch.urls, n)
    for i, error in batch.errors.items():
        urls[i] = error
        facts[i] = None
    alternates = batch.alternates
    return list(
        zip(
            urls,
            _split(batch.lastmods, n),
            _split(batch.changefreqs, n),
            _split(batch.priorities, n),
            [alternates.get(i) for i in range(n)] if alternates else [None] * n,
            facts,
            strict=True,
        )
    )


def _verdicts(decisions: Column | None, n: int) -> Any:
    """The filter ``Decision`` of each entry (None each when the worker did not decide)."""
    if decisions is None:
        return itertools.repeat(None, n)
    codes = _split(decisions, n)
    known = {c: decision_of(c) if c else KEEP for c in set(codes)}  # nearly all: KEEP
    return [known[c] for c in codes]


def worked_records(
    batch: WorkedBatch, source: str, document: str, site_prefix: str
) -> tuple[list[dict[str, Any]], tuple[list[str], list[str], list[str]] | None] | None:
    """The common ``worked_batch`` — every URL normalized, on the site (``site_prefix``:
    ``origin/``), without alternates — as feed records with their ``URL_FACTS``, straight
    from the columns (no entries in between: this is the main process's per-URL cost),
    and ``UrlBatch.worked`` when the worker wrote every URL's tail and state entry; None
    when the batch is not that common one (``entries_of`` then)."""
    n, urls = batch.n, batch.urls
    if batch.errors or batch.alternates or not n:
        return None
    if urls.__class__ is str:  # each URL follows a NUL (none holds one): count the starts
        if (_SEP + urls).count(_SEP + site_prefix) != n:  # type: ignore[operator]
            return None
    elif not all(url.startswith(site_prefix) for url in urls):
        return None
    priorities = _split(batch.priorities, n)
    heads = _split(batch.heads, n)
    tails = _split(batch.tails, n) if batch.tails is not None else None
    states = _split(batch.states, n) if batch.states is not None else None
    worked = (heads, tails, states) if tails and states and "" not in tails else None
    values: dict[str, Any] = {p: priority_value(p) for p in set(priorities) if p}
    values[""] = None
    records = [
        {
            "url": url,
            "source": source,
            "sitemap": document,
            "lastmod": lastmod or None,
            "priority": values[priority],
            "changefreq": changefreq or None,
            "alternates": None,
            URL_FACTS: (
                total,
                kind,
                slot or None,
                slug,
                head,
                url_kind,
                verdict,
                name or None,
                tail,
                state,
            ),
        }
        for (
            url,
            lastmod,
            changefreq,
            priority,
            total,
            kind,
            slot,
            slug,
            head,
            url_kind,
            verdict,
            name,
            tail,
            state,
        ) in zip(
            _split(urls, n),
            _split(batch.lastmods, n),
            _split(batch.changefreqs, n),
            priorities,
            batch.totals,
            _split(batch.types, n),
            _split(batch.slots, n),
            _split(batch.bases, n),
            heads,
            _split(batch.kinds, n),
            _verdicts(batch.decisions, n),
            _split(batch.junk, n),
            tails if tails is not None else itertools.repeat("", n),
            states if states is not None else itertools.repeat("", n),
            strict=True,
        )
    ]
    return records, worked


_SEP = "\x00"
_OWN_VALUED = (2, 3)  # of worked_batch's first six columns: bases and heads are joined


def _join(values: list[str]) -> str | list[str]:
    text = _SEP.join(values)
    # A value holding a NUL (none does, from XML) keeps its column a list.
    return text if text.count(_SEP) == len(values) - 1 else values


def _split(column: str | list[str], n: int) -> list[str]:
    if column.__class__ is not str:
        return column  # type: ignore[return-value]
    return column.split(_SEP) if n else []


def split_column(column: str | list[str], n: int) -> list[str]:
    """A ``WorkedBatch`` column's ``n`` values ('' where there is none)."""
    return _split(column, n)


def _with_gaps(column: list[Any], gaps: dict[int, Any], n: int, gap: Any) -> list[Any]:
    """``column`` (one value per entry not in ``gaps``) with ``gap`` at each gap."""
    values = iter(column)
    return [gap if i in gaps else next(values) for i in range(n)]


def parse_document(
    body: bytes,
    base: str,
    max_bytes: int,
    batch_size: int,
    tools: Tools,
    chunk: int = CHUNK_BATCHES,
) -> Iterator[tuple[str, Any]]:
    """Parse one document; yield ``("batches", [batch, ...])`` as they are ready, then
    ``("done", (result, too_large, rewritten))``. Pure: runs in the worker, and in tests."""
    result = ParseResult()
    too_large = None
    pending: list[list[tuple[Any, ...]]] = []
    tools.origins.take_repairs()  # this document's own, below
    try:
        for entries in iter_sitemap_batches(
            SitemapBody(body, max_bytes), result, batch_size, url=base
        ):
            pending.append(worked_batch(entries, base, tools))
            if len(pending) >= chunk:
                yield "batches", pending
                pending = []
    except SitemapTooLarge as exc:
        too_large = str(exc)
    if pending:
        yield "batches", pending
    # Locations the normalizer read other than as written travel with the parse's own.
    repairs, examples = tools.origins.take_repairs()
    for reason, count in repairs.items():
        result.repairs[reason] = result.repairs.get(reason, 0) + count
    result.repair_examples.extend(examples[: max(0, 100 - len(result.repair_examples))])
    yield "done", (result, too_large, dict(tools.origins.rewritten))


def serve(reader: int, writer: int) -> None:
    """The worker's loop over two pipe ends: one task at a time, replies streamed in
    chunks."""
    tools = Tools()
    for task in iter(_receiver(reader), None):
        task_id, body, base, max_bytes, batch_size, context = task
        tools = tools.fit(context)
        try:
            for kind, payload in parse_document(body, base, max_bytes, batch_size, tools):
                send_frame(writer, pickle.dumps((kind, task_id, payload), _PROTOCOL))
        except Exception as exc:  # a parser bug: the spider re-parses in-process
            send_frame(writer, pickle.dumps(("failed", task_id, repr(exc)), _PROTOCOL))


def _receiver(reader: int) -> Any:
    def receive() -> Any:
        try:
            return pickle.loads(recv_frame(reader))
        except EOFError:  # the spider closed the pipe: done
            return None

    return receive


def _widen(fd: int) -> None:
    """Give a pipe room for a whole reply where Linux allows it (``fs.pipe-max-size``)."""
    with contextlib.suppress(ImportError, AttributeError, OSError):
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)


# The worker runs ``main`` imported under this module's own name, not as ``__main__``: what
# it pickles (``WorkedBatch``) must resolve to the same class in the spider's process.
_LAUNCH = f"import sys; from {__name__} import main; sys.exit(main(sys.argv[1:]))"


class ParseWorker:
    """The spider's side: starts the worker, sends documents, streams replies."""

    def __init__(self) -> None:
        # queue, subprocess and asyncio are imported in the methods, on the spider's side
        # only: the worker process imports this module too, and needs none of them.
        import queue

        self._process: subprocess.Popen[bytes] | None = None
        self._writer = self._reader = -1  # pipe ends, once started
        self._outbox: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
        self._tasks: dict[int, asyncio.Queue[tuple[str, int, Any]]] = {}
        self._ids = itertools.count(1)
        self._loop: asyncio.AbstractEventLoop | None = None
        self.broken: str | None = None  # why the worker is unusable, once it is
        self._credits = threading.Semaphore(MAX_BUFFERED)
        self._closing = False

    def start(self) -> None:
        """Start the worker process and its two pipe threads; raise ``OSError`` if not."""
        # Imported here, on the spider's side only: the worker process never needs asyncio
        # (7 MB of its RSS with the ssl module it brings).
        import asyncio
        import subprocess

        self._loop = asyncio.get_running_loop()
        to_worker_r, to_worker_w = os.pipe()
        from_worker_r, from_worker_w = os.pipe()
        for fd in (to_worker_w, from_worker_w):
            _widen(fd)
        env = dict(os.environ)
        package_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-c", _LAUNCH, str(to_worker_r), str(from_worker_w)],
                pass_fds=(to_worker_r, from_worker_w),
                stdin=subprocess.DEVNULL,
                env=env,
            )
        except BaseException:
            os.close(to_worker_w)
            os.close(from_worker_r)
            raise
        finally:
            os.close(to_worker_r)
            os.close(from_worker_w)
        self._writer = to_worker_w
        self._reader = from_worker_r
        threading.Thread(target=self._send_loop, name="sitemap-worker-send", daemon=True).start()
        threading.Thread(target=self._read_loop, name="sitemap-worker-read", daemon=True).start()

    def _send_loop(self) -> None:
        try:
            # Pickled here, as each goes: documents waiting their turn hold their body once.
            while (task := self._outbox.get()) is not None:
                send_frame(self._writer, pickle.dumps(task, _PROTOCOL))
        except OSError:
            pass  # the worker is gone: the reader sees its end and reports it
        finally:
            os.close(self._writer)

    def _read_loop(self) -> None:
        loop = self._loop
        assert loop is not None
        why = "the worker process exited"
        try:
            while True:
                self._credits.acquire()  # given back when the spider takes the reply
                if self._closing:
                    break
                message = pickle.loads(recv_frame(self._reader))
                loop.call_soon_threadsafe(self._deliver, message)
        except (EOFError, OSError):
            pass
        except Exception as exc:  # never leave a document waiting for a reply forever
            why = f"reading its replies failed: {exc!r}"
        finally:
            os.close(self._reader)
            with contextlib.suppress(RuntimeError):  # the event loop is already closed
                loop.call_soon_threadsafe(self._fail_all, why)

    def _deliver(self, message: tuple[str, int, Any]) -> None:
        task = self._tasks.get(message[1])
        if task is not None:
            task.put_nowait(message)
        else:  # its document was abandoned (the spider closed): nobody will take it
            self._credits.release()

    def _fail_all(self, why: str) -> None:
        if self.broken is None:
            self.broken = why
        for task_id, task in self._tasks.items():
            task.put_nowait(("exited", task_id, why))

    async def parse(
        self,
        body: bytes,
        base: str,
        max_bytes: int,
        batch_size: int,
        context: RunContext,
    ) -> AsyncIterator[tuple[str, Any]]:
        """Parse a document in the worker: ``("batches", [...])`` then ``("done", ...)``;
        raises ``WorkerFailed`` if the worker cannot finish it."""
        if self.broken is not None:
            raise WorkerFailed(self.broken)
        task_id = next(self._ids)
        import asyncio

        replies: asyncio.Queue[tuple[str, int, Any]] = asyncio.Queue()
        self._tasks[task_id] = replies
        self._outbox.put((task_id, body, base, max_bytes, batch_size, context))
        try:
            while True:
                kind, _, payload = await replies.get()
                if kind == "exited":  # put here by the reader's end, not read from the pipe
                    raise WorkerFailed(payload)
                self._credits.release()
                if kind == "failed":
                    raise WorkerFailed(payload)
                yield kind, payload
                if kind == "done":
                    return
        finally:
            del self._tasks[task_id]
            while not replies.empty():  # abandoned: give back what it will never take
                if replies.get_nowait()[0] != "exited":
                    self._credits.release()

    def close(self) -> None:
        """Close the pipe (the worker exits at EOF) and reap the process; a worker still
        busy with a document nobody will read (the spider closed early) is killed."""
        self._closing = True
        self._outbox.put(None)
        self._credits.release()  # a reader waiting for the spider to take a reply stops
        process = self._process
        if process is None:
            return
        import subprocess

        if self._tasks:  # documents still in flight: nobody will read the rest
            process.kill()
        try:
            process.wait(timeout=1)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def main(argv: list[str]) -> int:
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        serve(int(argv[0]), int(argv[1]))
    return 0


if __name__ == "__main__":  # ``python -m``: run the module under its own name, as _LAUNCH does
    from discovery_crawler.sitemaps import worker

    sys.exit(worker.main(sys.argv[1:]))
