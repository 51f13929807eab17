"""The seen-set: which normalized URLs are already in the inventory.

Memory per URL is what decides whether a 10M-URL site fits (SPEC §14: < 1 GiB). A Python
``set`` of strings, or even of 64-bit ints, costs many times the 8 bytes a fingerprint needs,
so fingerprints live in an open-addressing table inside one ``array('q')``: 8 bytes a slot,
kept between 35% and 70% full — 11 to 23 bytes per URL — or, sized ahead to an estimate with
``reserve``, up to 85% full: the tables that hold a whole large site are the ones reserved,
and a denser table costs a few more probes of adjacent slots, not another cache miss.
Written by hand because no field library offers a compact integer set. The two loops that
run per URL, ``add_many`` and the rehash of a resize, are compiled (``_seen_table.c``,
built by ``pip install``), as in Python they cost several times more. Where the extension was
not built the same loops run in Python (``COMPILED`` says which).

The fingerprint is Python's ``hash()`` of the normalized URL (cheap, and cached on the string;
salted per process, fine for an in-process set). Two distinct URLs share one with probability
~n²/2⁶⁵ (~3·10⁻⁶ for 10M URLs); such a URL would be counted as a duplicate of the other.
"""

from __future__ import annotations

from array import array
from typing import Any

from discovery_crawler.compiled import extension
from discovery_crawler.urls.normalize import twin_key

# add_many and the rehash in C (``_seen_table.c``); where not built, the Python loops below
_seen_table = extension("discovery_crawler.urls._seen_table")

COMPILED = _seen_table is not None

_EMPTY = 0
_MIN_SLOTS = 1 << 20  # 8 MB: most sites never grow it
_FILL = 0.7  # a table grows past this load
# A reserved table: sized so the estimate fills it to _RESERVE_LOAD, grown past _RESERVED_FILL
# (room for an estimate ~18% short, in fewer slots than a lower load would need).
_RESERVE_LOAD = 0.72
_RESERVED_FILL = 0.85


def fingerprint(url: str) -> int:
    """A non-zero 64-bit fingerprint of ``url`` (0 marks an empty slot)."""
    return hash(url) or 1


def slashless_form(key: str) -> str:
    """The twin of a twin key without its trailing slash (``/foo/?q`` → ``/foo?q``)."""
    query = key.find("?")
    end = len(key) if query < 0 else query
    return key[: end - 1] + key[end:]


class RecordPatch(dict):
    """An upgrade that amends a record already written instead of replacing it: its final
    ``url``, the ``aliases`` it gains, and any other fields it takes (a sitemap listing's
    metadata; ``output.exporters.patched_record``). Kept in ``SeenSet.upgrades`` beside the
    full records of the dedup stage."""


# What ``SeenSet.sighted`` did with a second form of a URL.
RENAMED = "renamed"  # the record takes the slash form, the other one in its aliases
ALIASED = "aliased"  # the record keeps its URL and notes the other form in its aliases


class SeenSet:
    """Remembers fingerprints of URLs already admitted, and extra sources of duplicates.

    ``add``/``add_many`` take the keys they are given (the dedup stage gives twin keys,
    ``urls.normalize.twin_key``); the duplicate bookkeeping (``add_source``, ``upgrade``)
    keys by the twin key itself, as the feed exporters do when they patch lines.

    A fingerprint's home slot is ``fp % size`` rather than ``fp & mask``, so ``reserve`` can
    size the table to the estimate, not to the next power of two, which can leave much of it
    empty (a ``%`` costs only a little more than an ``&`` per add).
    """

    __slots__ = (
        "_count",
        "_fill",
        "_limit",
        "_size",
        "_slots",
        "extra_sources",
        "listed_over_link",
        "resizes",
        "twins",
        "upgrades",
    )

    def __init__(self, capacity: int = 0, min_slots: int = 0) -> None:
        size = min_slots or _MIN_SLOTS
        while size * _FILL < capacity:
            size <<= 1
        self._slots = array("q", bytes(8 * size))
        self._size = size
        self._fill = _FILL
        self._limit = int(size * _FILL)
        self._count = 0
        self.resizes = 0  # a stat: each resize rehashed every fingerprint
        # fingerprint -> further sources (sitemap URLs) that listed an already-seen URL.
        # Only duplicates land here, so it grows with duplicates, not with the site.
        self.extra_sources: dict[int, list[str]] = {}
        # fingerprint -> the <loc> record of a URL first seen as an hreflang alternate, or
        # the slash form listed after the slashless one; or a ``RecordPatch``.
        self.upgrades: dict[int, dict[str, Any]] = {}
        # Union mode: keys the link crawl held for a link (so already seen) and gave up to
        # a sitemap listing it will not fetch -> the link's other spellings. The dedup
        # stage takes that listing as new (a listing beats a link at depth 1, whichever
        # came first).
        self.listed_over_link: dict[str, list[str]] = {}
        # Trailing-slash twins (SPEC §5 rule 7), shared by every writer of records.
        self.twins = Twins(self.upgrades)

    def __len__(self) -> int:
        return self._count

    @property
    def nbytes(self) -> int:
        """Bytes held by the table (not counting ``extra_sources``)."""
        return self._slots.itemsize * len(self._slots)

    def __contains__(self, url: str) -> bool:
        fp = hash(url) or 1
        slots, size = self._slots, self._size
        i = fp % size
        while True:
            value = slots[i]
            if value == fp:
                return True
            if value == _EMPTY:
                return False
            i += 1
            if i == size:
                i = 0

    def add(self, url: str) -> bool:
        """Add ``url``; return True if it was new."""
        fp = hash(url) or 1
        slots, size = self._slots, self._size
        i = fp % size
        while True:
            value = slots[i]
            if value == _EMPTY:
                slots[i] = fp
                self._count += 1
                if self._count > self._limit:
                    self._grow()
                return True
            if value == fp:
                return False
            i += 1
            if i == size:
                i = 0

    def add_many(self, urls: list[str]) -> list[bool]:
        """``add`` for a batch, True for each new one: the dedup and slug hot path."""
        if _seen_table is None or type(urls) is not list:
            return self._add_many_python(urls)
        out: list[bool] = []
        done, total = 0, len(urls)
        while True:
            self._count, done = _seen_table.add_many(
                self._slots, self._size, self._limit, self._count, urls, done, out
            )
            if done == total and self._count <= self._limit:
                return out
            self._grow()  # the add that went past the limit was the last one made

    def _add_many_python(self, urls: list[str]) -> list[bool]:
        """``add_many``'s loop in Python: where ``_seen_table`` was not built."""
        slots, size, limit = self._slots, self._size, self._limit
        count = self._count
        out = []
        append = out.append
        for url in urls:
            fp = hash(url) or 1
            i = fp % size
            while True:
                value = slots[i]
                if value == _EMPTY:
                    slots[i] = fp
                    count += 1
                    append(True)
                    if count > limit:
                        self._count = count
                        self._grow()
                        slots, size, limit = self._slots, self._size, self._limit
                    break
                if value == fp:
                    append(False)
                    break
                i += 1
                if i == size:
                    i = 0
        self._count = count
        return out

    # -- a table that keeps values beside its slots (output/state_previous.py) ----------
    @property
    def size(self) -> int:
        """Slots in the table (a value kept beside a slot needs an array this long)."""
        return self._size

    @property
    def room(self) -> int:
        """Keys that fit before the table would grow (``place_many`` never grows it)."""
        return self._limit - self._count

    def slots_of(self, keys: list[str]) -> list[int]:
        """The slot each key's fingerprint occupies, or -1 where it is absent."""
        if _seen_table is not None and type(keys) is list:
            out: list[int] = []
            _seen_table.slots_of(self._slots, self._size, keys, out)
            return out
        slots, size = self._slots, self._size
        found = []
        for key in keys:
            fp = hash(key) or 1
            i = fp % size
            while True:
                value = slots[i]
                if value == fp:
                    found.append(i)
                    break
                if value == _EMPTY:
                    found.append(-1)
                    break
                i += 1
                if i == size:
                    i = 0
        return found

    def place_many(self, keys: list[str]) -> list[int]:
        """``add_many`` that keeps slots put: the table is not grown (``room`` must hold
        ``keys``, else ``ValueError``); each key's slot, or ``-1 - slot`` where it was in
        the table already."""
        if len(keys) > self.room:
            raise ValueError(f"no room for {len(keys):,} keys ({self.room:,} left)")
        if _seen_table is not None and type(keys) is list:
            out: list[int] = []
            self._count = _seen_table.place_many(self._slots, self._size, self._count, keys, out)
            return out
        slots, size = self._slots, self._size
        placed = []
        for key in keys:
            fp = hash(key) or 1
            i = fp % size
            while True:
                value = slots[i]
                if value == _EMPTY:
                    slots[i] = fp
                    self._count += 1
                    placed.append(i)
                    break
                if value == fp:
                    placed.append(-1 - i)
                    break
                i += 1
                if i == size:
                    i = 0
        return placed

    def reserve(self, count: int) -> None:
        """Make room for ``count`` fingerprints in one resize, now, while the table is small:
        each growth rehashes every fingerprint, and holds the old and the new table at once.
        ``count`` fills 72% of the table, which grows past 85% from then on, leaving room for
        an estimate ~18% short (the estimate counts ``<loc>``s; the hreflang alternates a
        site lists add records)."""
        if count <= self._limit:
            return
        self._fill = _RESERVED_FILL
        self._resize(int(count / _RESERVE_LOAD) + 1)

    def _grow(self) -> None:
        # By half, not double: past a reserve (an estimate a little short, a sitemap's
        # hreflang alternates) doubling would leave two thirds of a large table empty.
        self._resize(self._size + self._size // 2)

    def _resize(self, size: int) -> None:
        self.resizes += 1
        old = self._slots
        slots = array("q", bytes(8 * size))
        if _seen_table is not None:
            _seen_table.rehash(old, slots, size)
        else:
            for fp in old:
                if fp:
                    i = fp % size
                    while slots[i]:
                        i += 1
                        if i == size:
                            i = 0
                    slots[i] = fp
        self._slots, self._size, self._limit = slots, size, int(size * self._fill)

    def add_source(self, url: str, source: str) -> None:
        """Record that ``source`` also listed the already-seen ``url`` (or its twin)."""
        sources = self.extra_sources.setdefault(hash(twin_key(url)) or 1, [])
        if source not in sources and len(sources) < 50:
            sources.append(source)

    def upgrade(self, url: str, record: dict[str, Any]) -> None:
        """Replace the (alternate) record of an already-seen ``url`` by ``record``."""
        self.upgrades[hash(twin_key(url)) or 1] = record

    def upgraded(self, url: str) -> bool:
        return (hash(twin_key(url)) or 1) in self.upgrades

    def sources_of(self, url: str) -> list[str]:
        return self.extra_sources.get(hash(twin_key(url)) or 1, [])


class Twins:
    """What the run knows of trailing-slash twins (SPEC §5 rule 7), shared by every writer
    of records (the dedup stage, the link crawl) as ``SeenSet.twins``, so a listing and a
    crawled page agree on one URL whichever came first.

    A record's URL is its first form, unless a fetch decided another (its canonical, a
    redirect that only added or dropped the slash: ``fixed``) or the slash form turned up
    and no fetch had decided (rule 7: the slash form wins); the other form, once met, is in
    the record's ``aliases``. A page the link crawl has requested but not yet recorded is
    ``pending``: the forms met meanwhile wait for its record (``settle``), so the outcome
    does not depend on which response lands first. Changes to records already written go
    to ``upgrades`` (a ``RecordPatch``, or the slash listing's record in the dedup stage),
    which the feed exporters apply when the run ends.

    Fingerprints of twin keys; the slashless sets are compact and allocated on first use
    (most sites have none: a slash-form link then costs the link crawl one attribute test),
    the link crawl's never-fetched files apart from the pages.
    """

    __slots__ = (
        "fixed",
        "noted",
        "pending",
        "sightings",
        "slashless",
        "slashless_files",
        "upgrades",
    )

    def __init__(self, upgrades: dict[int, dict[str, Any]]) -> None:
        self.upgrades = upgrades
        self.slashless: SeenSet | None = None  # keys first met or written without the slash
        self.slashless_files: SeenSet | None = None  # ... for files the crawl never fetches
        self.fixed: set[int] = set()  # a fetch decided the record's form
        self.noted: set[int] = set()  # the record's aliases name its twin
        self.pending: set[int] = set()  # requested by the link crawl, not yet recorded
        self.sightings: dict[int, list[str]] = {}  # forms met while pending

    def _slashless(self, key: str, file: bool = False) -> None:
        if file:
            files = self.slashless_files
            if files is None:
                files = self.slashless_files = SeenSet(min_slots=1 << 12)
            files.add(key)
        else:
            slashless = self.slashless
            if slashless is None:
                slashless = self.slashless = SeenSet(min_slots=1 << 12)
            slashless.add(key)

    def expect(self, key: str, url: str) -> None:
        """The link crawl requested ``url`` (twin key ``key``); its record comes later."""
        if url is not key and url != key:
            self._slashless(key)
        self.pending.add(hash(key) or 1)

    def settle(self, key: str) -> list[str]:
        """The record of ``key`` is being written: the forms met while it was pending."""
        fp = hash(key) or 1
        self.pending.discard(fp)
        return self.sightings.pop(fp, [])

    def wrote(
        self, key: str, url: str, fixed: bool = False, noted: bool = False, file: bool = False
    ) -> None:
        """A record was written under ``url`` (twin key ``key``); ``fixed``: a fetch decided
        its form; ``noted``: its ``aliases`` name the twin; ``file``: a URL the link crawl
        records and never fetches (a file, an asset): its slash form is not looked for."""
        if url is not key and url != key:
            self._slashless(key, file)
        if fixed or noted:
            fp = hash(key) or 1
            if fixed:
                self.fixed.add(fp)
            if noted:
                self.noted.add(fp)

    def wrote_many(self, keys: list[str]) -> None:
        """``wrote(key, url)`` for records written without the slash (a batch of twin keys
        whose URL is not the key, none fixed or noted): one ``add_many``."""
        if not keys:
            return
        slashless = self.slashless
        if slashless is None:
            slashless = self.slashless = SeenSet(min_slots=1 << 12)
        slashless.add_many(keys)

    def sighted(self, key: str, url: str, record: dict[str, Any] | None = None) -> str | None:
        """``url`` (twin key ``key``, already seen) was met again. A slashless record
        meeting its slash form takes it (``RENAMED``: replaced by ``record`` when given, the
        dedup stage's listing, else patched), unless a fetch fixed its form; otherwise a form
        the record does not have joins its ``aliases`` (``ALIASED``). None when there was
        nothing to do now: the same form, the twin already noted, or the record not yet
        written (the form waits for ``settle``)."""
        fp = hash(key) or 1
        if fp in self.noted:
            return None
        slashless = self.slashless
        record_slash = slashless is None or key not in slashless
        slash = url is key or url == key
        if slash is record_slash:
            # The form the record has, or (pending) was requested in: a record that ends in
            # the other form names this one in its aliases anyway (the redirect's source,
            # the fetched form of a canonical twin).
            return None
        if fp in self.pending:
            forms = self.sightings.setdefault(fp, [])
            if url not in forms:
                forms.append(url)
            return None
        if slash:
            other = slashless_form(key)
            if fp in self.fixed:
                self._patch(fp, other, key)
                done = ALIASED
            else:
                if record is not None:
                    self.upgrades[fp] = record
                self._patch(fp, key, other)
                done = RENAMED
        else:
            files = self.slashless_files
            if files is not None and key in files:
                return None  # a file's record, written without the slash
            self._patch(fp, key, url)
            done = ALIASED
        self.noted.add(fp)
        return done

    def _patch(self, fp: int, url: str, alias: str) -> None:
        """The record of ``fp`` ends up under ``url`` with ``alias`` among its aliases."""
        upgrade = self.upgrades.get(fp)
        if upgrade is None:
            upgrade = self.upgrades[fp] = RecordPatch(url=url, aliases=[])
        upgrade["url"] = url
        aliases = list(upgrade.get("aliases") or ())
        if alias != url and alias not in aliases:
            aliases.append(alias)
        upgrade["aliases"] = aliases


def settled_form(
    url: str, key: str, aliases: list[str], forms: list[str], fixed: bool
) -> tuple[str, list[str]]:
    """The URL and aliases of a record about to be written under ``url`` (twin key
    ``key``, aliases so far ``aliases``), given the ``forms`` met while it was pending
    (``Twins.settle``): the slash form wins unless a fetch ``fixed`` the form (rule 7)."""
    final = url
    known = list(aliases)
    for form in forms:
        if form == final or form in known:
            continue
        if form == key and not fixed:
            known.append(final)
            final = key
        else:
            known.append(form)
    return final, [form for form in known if form != final]
