"""What the sitemap worker works out for each listed URL, in one place.

A large sitemap is parsed in a worker process (``sitemaps/worker.py``: the process and its
pipes), and what the item pipelines would work out from a URL's listing alone travels
back with it, so the spider's process does not work it out again. This module holds all
of it:

- **defined**: ``UrlFacts``, a ``NamedTuple`` (a tuple's cost in the hot loops, names
  everywhere else) that a record carries under ``FACTS``;
- **computed**: ``worked_batch`` (in the worker) rates, slugs, kinds, junk names, filter
  decisions and feed-line heads of a batch, column by column;
- **encoded**: ``WorkedBatch``, the batch in text columns for the pipe, and its two
  decoders, ``worked_records`` (straight to feed records) and ``entries_of`` (entries for
  the normalize stage's general path);
- **validated**: a fact is used only while the record still holds the values it was worked
  out from — the very objects, checked by identity (``holding``): a stage that changes a
  record's ``url`` (or its lastmod, priority…) makes the facts computed from it stand
  aside, and the stage after it works them out again.

Which values each fact depends on (``FROM_URL``, ``FROM_RATING``, ``FROM_LISTING``,
``FROM_ENTRY``) is said once, next to the record type.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections import Counter
from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import TYPE_CHECKING, Any, NamedTuple

from discovery_crawler.compiled import extension
from discovery_crawler.output.json_text import listed_heads
from discovery_crawler.record_fields import STAGE, names
from discovery_crawler.selection.paths import PILLAR_KEYWORDS
from discovery_crawler.selection.scoring import Rater
from discovery_crawler.sitemaps.body import SitemapBody, SitemapTooLarge
from discovery_crawler.sitemaps.parser import ParseResult, iter_sitemap_batches, priority_value
from discovery_crawler.urls.filters import DROP, KEEP, KEEP_REQUIRES_AUTH, Decision, FilterPolicy
from discovery_crawler.urls.junk import junk_patterns_many
from discovery_crawler.urls.kinds import url_kinds_many
from discovery_crawler.urls.normalize import OriginCache, UrlError, resolve_location
from discovery_crawler.urls.slugs import bases_many, normalized_paths

# the identity checks in C (``output/_lines.c``); where it was not built, in Python
_lines = extension("discovery_crawler.output._lines")
# the feed records of a worked batch in C (``_records.c``); where not built, in Python
_compiled_records = extension("discovery_crawler.sitemaps._records")

if TYPE_CHECKING:
    from collections.abc import Iterator

FACTS = "_facts"
"""The record key of its ``UrlFacts`` (never exported: not a feed field)."""


class UrlFacts(NamedTuple):
    """What the stages would work out from a URL's listing alone, and what from."""

    # What they were worked out from: the record's own values, the very objects.
    url: str
    source: str
    sitemap: str
    lastmod: str | None
    priority: Any
    changefreq: str | None
    alternates: list[dict[str, Any]] | None
    # What the stages would work out.
    score: int  # without the auth rule (it needs the filter stage's flags)
    page_type: str
    slot: str | None
    base_slug: str
    head: str  # the feed line up to its alternates' value ('' where not rendered: the
    # worker renders only those with alternates, the feed renders the others)
    kind: str  # the URL kind (``urls.kinds``)
    decision: Decision | None  # the filter's; None: the site was not known yet
    junk: str | None  # the junk pattern's name
    # On a first run (``SITEMAP_WORKER_LINES``), written if the stages keep the URL as it
    # is, with its base slug: the feed line's tail and the state.json entry ('' if not).
    tail: str
    state: str


_FIELD = {name: i for i, name in enumerate(UrlFacts._fields)}
HEAD_INDEX = _FIELD["head"]  # for the C that writes the lines (``_lines.record_lines``)


def _checks(*keys: str) -> tuple[tuple[str, int], ...]:
    """(record key, facts index) of each value a fact was worked out from."""
    return tuple((key, _FIELD[key]) for key in keys)


# What each fact depends on. A fact is used while each of these record values is the very
# object it was worked out from.
FROM_URL = _checks("url")  # base_slug, kind, decision, junk
FROM_RATING = _checks("url", "priority", "changefreq")  # score, page_type, slot
FROM_LISTING = _checks(
    "url", "source", "sitemap", "lastmod", "priority", "changefreq", "alternates"
)  # head (and tail)
FROM_ENTRY = _checks("url", "lastmod")  # state (with the base slug as the slug)


def _holding(records: list[dict[str, Any]], checks: tuple[tuple[str, int], ...]) -> list[Any]:
    """``holding`` in Python: the definition ``_lines.holding`` follows."""
    out: list[Any] = []
    for rec in records:
        facts = rec.get(FACTS)
        if facts is not None:
            for key, index in checks:
                if rec.get(key) is not facts[index]:
                    facts = None
                    break
        out.append(facts)
    return out


def holding(
    records: list[dict[str, Any]], checks: tuple[tuple[str, int], ...] = FROM_LISTING
) -> list[UrlFacts | None]:
    """Each record's facts while its values named by ``checks`` are those they were worked
    out from; None for a record without facts or whose values changed since."""
    if _lines is not None and records.__class__ is list:
        return _lines.holding(records, FACTS, checks)
    return _holding(records, checks)


def all_holding(
    records: list[dict[str, Any]], checks: tuple[tuple[str, int], ...] = FROM_URL
) -> list[UrlFacts] | None:
    """``holding`` when it holds for every record (the usual batch), else None."""
    facts = holding(records, checks)
    return None if None in facts else facts  # type: ignore[return-value]


# -- computed, in the worker ------------------------------------------------------------------


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
    ``memcpy``s instead of pickling an object a URL (pickling per-URL tuples was a sixth of
    the worker's time). A column of few distinct values (type, slot, kind, junk name,
    decision) is a list of shared strings: pickle writes each value once and a 2-byte
    reference after, and the spider gets shared objects instead of splitting out a string
    per URL to make and free."""

    n: int
    urls: Column  # normalized ('' where ``errors`` has the entry)
    lastmods: Column
    changefreqs: Column
    priorities: Column  # as written
    totals: list[int]  # the score without the auth rule
    types: Column
    slots: Column
    bases: Column  # base slugs
    heads: Column  # feed lines up to ``alternates``' value, of entries with alternates only
    kinds: Column
    junk: Column  # junk pattern names
    decisions: Column | None  # filter decision codes; None: the site was not known yet
    tails: Column | None  # on a first run: the feed lines' tails ('' where not written)
    states: Column | None  # ... and the state.json entries
    errors: dict[int, UrlError]
    alternates: dict[int, Any]  # by entry: its hreflang alternates as written
    # ... and as its record lists them (``_alternate_urls``); the feed-line heads of those
    # entries are written with them
    listed: dict[int, tuple[tuple[str | None, str], ...]]
    # The URLs the batch names in hreflang alternates, worked out as records of source
    # ``alternate`` (None: there are none), and the entry each one is an alternate of.
    others: WorkedBatch | None
    owners: list[int]


def worked_batch(entries: list[tuple[Any, ...]], base: str, tools: Tools) -> WorkedBatch:
    """One batch worked out for the spider (``entries_of`` turns it back into entries,
    ``worked_records`` into records)."""
    locs, lastmods, changefreqs, priorities, alternates = _listing_columns(entries)
    return _worked(locs, lastmods, changefreqs, priorities, alternates, base, tools, "sitemap")


def _worked(
    locs: list[str],
    lastmods: list[str],
    changefreqs: list[str],
    priorities: list[str],
    alternates: dict[int, Any],
    base: str,
    tools: Tools,
    source: str,
    normalized: bool = False,
) -> WorkedBatch:
    """``worked_batch`` of a batch's columns; ``source`` the records' (``alternate`` for the
    URLs a batch names only in hreflang alternates, already ``normalized``)."""
    urls: list[Any] = locs if normalized else tools.origins.normalize_many(locs, base)
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
    policy = tools.policy
    run = tools.context.first_run if policy is not None and not normalized else 0
    # Without whole lines to write (``SITEMAP_WORKER_LINES``), a head only where the line has
    # hreflang alternates (below): the spider renders the others from the record for less
    # than it costs to send them.
    heads = (
        listed_heads(good_urls, good_lastmods, good_priorities, good_changefreqs, source, base)
        if run
        else [""] * len(good_urls)
    )
    kinds = url_kinds_many(good_urls)
    patterns = junk_patterns_many(paths)
    junk = (
        [""] * len(patterns)
        if patterns.count(None) == len(patterns)
        else [p.name if p is not None else "" for p in patterns]
    )
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
        if run:
            columns.extend(
                _speculated(good_urls, good_lastmods, totals, bases, kinds, decisions, junk, run)
            )
    if errors:  # their columns get a placeholder so every column has a value per entry
        n = len(urls)
        totals = _with_gaps(totals, errors, n, 0)
        columns = [_with_gaps(column, errors, n, "") for column in columns]
    listed: dict[int, tuple[tuple[str | None, str], ...]] = {}
    others = None
    owners: list[int] = []
    if alternates:
        listed, named, owners = _alternate_urls(alternates, locs, urls, base, tools)
        heads = columns[3]
        owned = [i for i in listed if urls[i].__class__ is str]
        unwritten = [i for i in owned if not heads[i]]
        if unwritten:
            rendered = listed_heads(
                [urls[i] for i in unwritten],
                [lastmods[i] for i in unwritten],
                [priorities[i] for i in unwritten],
                [changefreqs[i] for i in unwritten],
                source,
                base,
            )
            for i, head in zip(unwritten, rendered, strict=True):
                heads[i] = head
        for i in owned:  # the line's head with its alternates
            heads[i] = heads[i][: -len("null")] + _alternates_text(listed[i])
        if named:
            blank = [""] * len(named)
            others = _worked(named, blank, blank, blank, {}, base, tools, "alternate", True)
    # decisions (few-valued) as they are; a first run's tails and states joined
    optional = columns[6:7] + [_join(column) for column in columns[7:]]
    optional += [None] * (3 - len(optional))
    # the few-valued columns (types, slots, kinds, junk) travel as lists of shared values
    types, slots, bases, heads, kinds, junk = columns[:6]
    return WorkedBatch(
        len(urls),
        _join([url if url.__class__ is str else "" for url in urls] if errors else urls),
        _few_valued(lastmods),
        _few_valued(changefreqs),
        _few_valued(priorities),
        totals,
        types,
        slots,
        _SEP.join(bases),  # unchecked: a base slug ([a-z0-9_-]) never holds a NUL
        _few_valued(heads),  # '' but on lines with alternates
        kinds,
        junk,
        *optional,
        errors,
        alternates,
        listed,
        others,
        owners,
    )


_ABSOLUTE = ("https://", "http://")


def _alternate_urls(
    alternates: dict[int, Any], locs: list[str], urls: list[Any], base: str, tools: Tools
) -> tuple[dict[int, tuple[tuple[str | None, str], ...]], list[str], list[int]]:
    """The hreflang alternates of each entry as its record lists them (each href
    normalized as the normalize stage normalizes it, or as written where it cannot be),
    and the normalized ones other than the entry's own URL, with the entry each is of:
    the records the batch adds where they are on the site (``worked_records`` decides).
    An href written as its entry's location (``locs``), absolute and unpadded, is that
    entry's URL (``normalize_many`` then read it as ``normalize`` does)."""
    normalize = tools.origins.normalize
    absolute = _ABSOLUTE
    listed = {}
    named: list[str] = []
    owners: list[int] = []
    add_named = named.append
    add_owner = owners.append
    for i, pairs in alternates.items():
        url = urls[i]
        own = url if url.__class__ is str else None
        loc = locs[i]
        recorded = []
        record = recorded.append
        for hreflang, href in pairs:
            if (
                own is not None
                and href == loc
                and href.startswith(absolute)
                and not href[-1].isspace()
            ):
                record((hreflang, own))
                continue
            try:
                alt = normalize(href if href.startswith(absolute) else resolve_location(href, base))
            except UrlError:
                record((hreflang, href))
                continue
            record((hreflang, alt))
            if own is not None and alt != own:
                add_named(alt)
                add_owner(i)
        listed[i] = tuple(recorded)
    return listed, named, owners


def _alternate_dicts(pairs: tuple[tuple[str | None, str], ...]) -> list[dict[str, Any]]:
    """A record's ``alternates``: its hreflang alternates as the feed writes them."""
    return [{"hreflang": hreflang, "href": href} for hreflang, href in pairs]


def _alternates_text(pairs: tuple[tuple[str | None, str], ...]) -> str:
    """``dumps(_alternate_dicts(pairs))`` written by hand: the value of a feed line's
    ``alternates`` (hreflang text or None, href text)."""
    enc = encode_basestring
    return (
        "["
        + ", ".join(
            [
                f'{{"hreflang": {"null" if hreflang is None else enc(hreflang)}, '
                f'"href": {enc(href)}}}'
                for hreflang, href in pairs
            ]
        )
        + "]"
    )


_COLUMN = tuple(map(operator.itemgetter, range(5)))


def _listing_columns(
    entries: list[tuple[Any, ...]],
) -> tuple[list[str], list[str], list[str], list[str], dict[int, Any]]:
    """A batch's locations, lastmods, changefreqs and priorities ('' for none) and its
    hreflang alternates by index. The plain-urlset fast path's 5-tuples of text are
    transposed by a ``map`` of an ``itemgetter`` a column (C; ``zip(*entries)`` makes an
    iterator an entry)."""
    if set(map(len, entries)) == {5}:
        locs, lastmods, changefreqs, priorities, pairs = (
            list(map(column, entries)) for column in _COLUMN
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
    from discovery_crawler.output.state_format import entry_lines  # lines are off by default: lazy

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
        if not _TAILS_FOLLOW:
            tails.append("")
            continue
        tails.append(
            f', "kind": {enc(kind)}, "flags": null, "slug": {enc(base)}, "score": {total}, '
            '"change": "new"}'
        )
    return tails, states


# The tails above spell the stage fields out; while the declaration has others (a field
# added to record_fields), the main process renders every tail.
_TAILS_FOLLOW = names(STAGE) == ("kind", "flags", "slug", "score", "change")

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


# -- decoded, in the spider ------------------------------------------------------------------

# The facts of each record, made at tuple cost (``tuple.__new__`` in C, no Python __new__).
_new_facts = functools.partial(tuple.__new__, UrlFacts)


class Listed(NamedTuple):
    """An entry of a worked batch, for the normalize stage's general path: the URL (or the
    ``UrlError`` saying why not), the listing as written, and the facts worked out for it
    (None for an error), which the stage completes with the record's values."""

    url: Any
    lastmod: str
    changefreq: str
    priority: str
    alternates: Any
    facts: tuple[Any, ...] | None


def _fact_columns(
    batch: WorkedBatch, heads: list[str], tails: list[str] | None, states: list[str] | None
) -> list[list[Any]]:
    """The batch's ``worked_facts`` columns, decoded, in their order (``''`` for a line's
    tail and state entry the worker did not write)."""
    n = batch.n
    blank = [""] * n
    return [
        batch.totals,
        _split(batch.types, n),
        _or_none(_split(batch.slots, n)),
        _split(batch.bases, n),
        heads,
        _split(batch.kinds, n),
        _verdicts(batch.decisions, n),
        _or_none(_split(batch.junk, n)),
        tails if tails is not None else blank,
        states if states is not None else blank,
    ]


def entries_of(batch: WorkedBatch) -> list[Listed]:
    """A ``worked_batch`` as the normalize stage's entries (``Listed``): ``facts`` is what
    the worker worked out (``worked_facts``: the ``UrlFacts`` fields after the values
    they were worked out from), an empty head when there is none and a None decision
    when the worker did not know the site yet."""
    n = batch.n
    heads = _split(batch.heads, n)
    for i in batch.alternates:  # the normalize stage normalizes them here, and the head
        heads[i] = ""
    tails = _split(batch.tails, n) if batch.tails is not None else None
    states = _split(batch.states, n) if batch.states is not None else None
    facts: list[Any] = list(zip(*_fact_columns(batch, heads, tails, states), strict=True))
    urls: list[Any] = _split(batch.urls, n)
    for i, error in batch.errors.items():
        urls[i] = error
        facts[i] = None
    alternates = batch.alternates
    return list(
        map(
            _new_listed,
            zip(
                urls,
                _split(batch.lastmods, n),
                _split(batch.changefreqs, n),
                _split(batch.priorities, n),
                [alternates.get(i) for i in range(n)] if alternates else [None] * n,
                facts,
                strict=True,
            ),
        )
    )


_new_listed = functools.partial(tuple.__new__, Listed)

# A batch's listing in columns (the sitemap sections of state.json keep them so).
listing_columns = _listing_columns


def facts_for(rec: dict[str, Any], worked: tuple[Any, ...], stale: bool) -> UrlFacts:
    """The ``UrlFacts`` of a record the normalize stage built from a ``Listed`` entry
    whose facts are ``worked``. ``stale``: the site's origin rewrites changed since the
    worker normalized it, so neither the head, the decision nor what was written on their
    strength stands."""
    if stale:
        worked = (*worked[:4], "", worked[5], None, worked[7], "", "")
    return _new_facts(
        (
            rec["url"],
            rec["source"],
            rec["sitemap"],
            rec["lastmod"],
            rec["priority"],
            rec["changefreq"],
            rec["alternates"],
            *worked,
        )
    )


def _verdicts(decisions: Column | None, n: int) -> Any:
    """The filter ``Decision`` of each entry (None each when the worker did not decide)."""
    if decisions is None:
        return [None] * n
    codes = _split(decisions, n)
    known = {c: decision_of(c) if c else KEEP for c in set(codes)}  # nearly all: KEEP
    return list(map(known.__getitem__, codes))


class Worked(NamedTuple):
    """A ``worked_batch`` decoded to feed records (``worked_records``)."""

    records: list[dict[str, Any]]  # the entries on the site, then the alternates' records
    lines: tuple[list[str], list[str], list[str]] | None  # ``UrlBatch.worked``
    malformed: list[UrlError]  # the entries that did not normalize (``raw`` as written)
    other_hosts: Counter[str]  # the entries on other hosts, by origin


def worked_records(
    batch: WorkedBatch, source: str, document: str, site_prefix: str, fresh: bool = True
) -> Worked | None:
    """A ``worked_batch`` as feed records with their ``UrlFacts``, straight from the
    columns (no entries in between: this is the main process's per-URL cost): the entries
    on the site (``site_prefix``: ``origin/``), each with its hreflang alternates, then
    the records of the alternates that are on the site; and ``UrlBatch.worked`` when the
    worker wrote every URL's tail and state entry.

    ``fresh``: the spider's origin rewrites are those the worker normalized with. When they
    changed since (the first batch named the site), a URL already on the site is as it
    would be now, any other may not be: None unless every entry and every hreflang
    alternate is on the site (``entries_of`` then, and the normalize stage normalizes
    again)."""
    n, urls = batch.n, batch.urls
    if not n:
        return None
    if urls.__class__ is str:  # each URL follows a NUL (none holds one): count the starts
        on_site = (_SEP + urls).count(_SEP + site_prefix) == n  # type: ignore[operator]
    else:
        on_site = all(url.startswith(site_prefix) for url in urls)
    url_column = _split(urls, n)
    errors = batch.errors
    keep: list[int] | None = None  # None: every entry
    malformed: list[UrlError] = []
    other_hosts: Counter[str] = Counter()
    if errors or not on_site:
        if not fresh:
            return None
        keep = []
        for i, url in enumerate(url_column):
            error = errors.get(i) if errors else None
            if error is not None:
                malformed.append(error)
            elif url.startswith(site_prefix):
                keep.append(i)
            else:
                other_hosts[url[: url.find("/", 8)]] += 1
    listed = batch.listed
    if listed and not fresh and not _hrefs_on_site(listed, site_prefix):
        return None
    priorities = _split(batch.priorities, n)
    heads = _split(batch.heads, n)
    tails = _split(batch.tails, n) if batch.tails is not None else None
    states = _split(batch.states, n) if batch.states is not None else None
    lines = None
    if tails and states and "" not in tails and keep is None and not batch.owners:
        lines = (heads, tails, states)
    values: dict[str, Any] = {p: priority_value(p) for p in set(priorities) if p}
    values[""] = None
    alternates: list[Any] = [None] * n
    for i, pairs in listed.items():
        alternates[i] = _alternate_dicts(pairs)
    columns = [
        url_column,
        _or_none(_split(batch.lastmods, n)),
        list(map(values.__getitem__, priorities)),
        _or_none(_split(batch.changefreqs, n)),
        alternates,
        *_fact_columns(batch, heads, tails, states),
    ]
    if keep is not None:
        columns = [[column[i] for i in keep] for column in columns]
    records = _records(columns, source, document)
    others = batch.others
    if others is not None:
        kept = set(range(n)) if keep is None else set(keep)
        named = _records(_facts_columns(others), "alternate", document)
        records.extend(
            rec
            for rec, owner in zip(named, batch.owners, strict=True)
            if owner in kept and rec["url"].startswith(site_prefix)
        )
    return Worked(records, lines, malformed, other_hosts)


def _hrefs_on_site(listed: dict[int, tuple[tuple[str | None, str], ...]], site_prefix: str) -> bool:
    """Every hreflang alternate of the batch is on the site: as the spider's origin
    rewrites would leave it, so the heads, alternates and alternates' records that the
    worker wrote with them hold."""
    return all(href.startswith(site_prefix) for pairs in listed.values() for _, href in pairs)


def _facts_columns(batch: WorkedBatch) -> list[list[Any]]:
    """``worked_records``' columns of a batch of alternates (normalized, no listing fields
    of their own, no alternates, nothing written ahead)."""
    n = batch.n
    none = [None] * n
    blank = [""] * n
    return [
        _split(batch.urls, n),
        none,
        none,
        none,
        none,
        batch.totals,
        _split(batch.types, n),
        _or_none(_split(batch.slots, n)),
        _split(batch.bases, n),
        _split(batch.heads, n),
        _split(batch.kinds, n),
        _verdicts(batch.decisions, n),
        _or_none(_split(batch.junk, n)),
        blank,
        blank,
    ]


_RECORD_KEYS = (
    "url",
    "source",
    "sitemap",
    "lastmod",
    "priority",
    "changefreq",
    "alternates",
    FACTS,
)
# A record's keys once the stages wrote theirs (``items.STAGE_FIELDS``): made with room for
# them, a record is never grown.
_RECORD_ROOM = len(_RECORD_KEYS) + 5


def _records(columns: list[list[Any]], source: str, document: str) -> list[dict[str, Any]]:
    """Feed records with their ``UrlFacts`` from ``worked_records``' columns (URL, the four
    listing values, then the facts worked out): the record and its facts hold the very
    same value objects. In C where it was built (``_records.c``)."""
    if _compiled_records is not None:
        records = _compiled_records.records(
            _RECORD_KEYS, columns, source, document, UrlFacts, _RECORD_ROOM
        )
        if records is not None:
            return records
    return _python_records(columns, source, document)


def _python_records(columns: list[list[Any]], source: str, document: str) -> list[dict[str, Any]]:
    """``_records`` in Python: the definition ``_records.records`` follows."""
    n = len(columns[0])
    url_column, lastmods, numbers, changefreqs, alternates = columns[:5]
    facts = list(
        map(
            _new_facts,
            zip(
                url_column,
                itertools.repeat(source, n),
                itertools.repeat(document, n),
                lastmods,
                numbers,
                changefreqs,
                alternates,
                *columns[5:],
                strict=True,
            ),
        )
    )
    return [
        {
            "url": url,
            "source": source,
            "sitemap": document,
            "lastmod": lastmod,
            "priority": priority,
            "changefreq": changefreq,
            "alternates": alternate,
            FACTS: f,
        }
        for url, lastmod, priority, changefreq, alternate, f in zip(
            url_column, lastmods, numbers, changefreqs, alternates, facts, strict=True
        )
    ]


_SEP = "\x00"


def _few_valued(values: list[str]) -> str | list[str]:
    """A listing column as a list of shared strings where its values repeat (a
    changefreq, a priority, often a lastmod date): pickle writes each once and a reference
    after, and the spider splits out no string per URL to make and free. Else joined."""
    shared: dict[str, str] = {}
    column = [shared.setdefault(value, value) for value in values]
    return column if 4 * len(shared) <= len(values) else _join(values)


def _join(values: list[str]) -> str | list[str]:
    text = _SEP.join(values)
    # A value holding a NUL (none does, from XML) keeps its column a list.
    return text if text.count(_SEP) == len(values) - 1 else values


def _split(column: str | list[str], n: int) -> list[str]:
    if column.__class__ is not str:
        return column  # type: ignore[return-value]
    return column.split(_SEP) if n else []


def _or_none(values: list[str]) -> list[str | None]:
    """A column's values with None for each '' (the column itself when it has none)."""
    if "" not in values:
        return values  # type: ignore[return-value]
    if values.count("") == len(values):
        return [None] * len(values)
    return [value or None for value in values]


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
    chunk: int = 2,
    max_entries: int = 0,
    describe: bool = True,
) -> Iterator[tuple[str, Any]]:
    """Parse one document; yield ``("batches", [batch, ...])`` as they are ready (``chunk``
    at a time), then ``("done", (result, too_large, rewritten))``; ``max_entries`` and
    ``describe`` as ``iter_sitemap_batches``'. Pure: runs in the worker, and in tests."""
    result = ParseResult()
    too_large = None
    pending: list[WorkedBatch] = []
    tools.origins.take_repairs()  # this document's own, below
    try:
        for entries in iter_sitemap_batches(
            SitemapBody(body, max_bytes),
            result,
            batch_size,
            url=base,
            max_entries=max_entries,
            describe=describe,
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
