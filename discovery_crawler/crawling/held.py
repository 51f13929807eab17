"""The links the crawl holds for their level (deterministic admission, ``LinkCrawl``):
key -> (depth, found_on, place, url, anchor), taken a level at a time in (found_on,
place) order.

A page of 200,000 links would hold 200,000 of them at once (about 400 bytes each as
Python objects, plus the sorted copy of their level): past ``spill_at`` entries the store
moves to a private temporary SQLite database (on disk, a few MB of cache), which keeps
the lookup by key (a better citation replaces a worse one) and gives a level back sorted,
streamed ``chunk`` rows at a time. Small crawls never leave the dict."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

Held = tuple[int, str, int, str, "str | None"]  # depth, found_on, place, url, anchor
Taken = tuple[str, int, str, str, "str | None"]  # found_on, place, url, key, anchor


class HeldLinks:
    """A mapping of held links, in memory until it grows past ``spill_at`` entries."""

    def __init__(self, spill_at: int = 20_000, chunk: int = 1_000) -> None:
        self.spill_at = max(1, spill_at)
        self.chunk = max(1, chunk)
        self._dict: dict[str, Held] = {}
        self._db: sqlite3.Connection | None = None
        self._size = 0
        self._takes = 0

    def __len__(self) -> int:
        return self._size

    def __bool__(self) -> bool:
        return self._size > 0

    def get(self, key: str) -> Held | None:
        if self._db is None:
            return self._dict.get(key)
        row = self._db.execute(
            "SELECT depth, found_on, place, url, anchor FROM held WHERE key = ?", (key,)
        ).fetchone()
        return tuple(row) if row is not None else None  # type: ignore[return-value]

    def put(self, key: str, value: Held, new: bool) -> None:
        """Hold ``key`` (``new``: it was not held; else its citation is replaced)."""
        if self._db is None:
            self._dict[key] = value
            self._size += new
            if self._size > self.spill_at:
                self._spill()
            return
        self._db.execute(
            "INSERT OR REPLACE INTO held (key, depth, found_on, place, url, anchor)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (key, *value),
        )
        self._size += new

    def __delitem__(self, key: str) -> None:
        if self._db is None:
            del self._dict[key]
        else:
            self._db.execute("DELETE FROM held WHERE key = ?", (key,))
        self._size -= 1

    def _spill(self) -> None:
        db = sqlite3.connect("")  # private, on disk, deleted when closed
        db.execute("PRAGMA journal_mode = OFF")
        db.execute("PRAGMA synchronous = OFF")
        db.execute("PRAGMA temp_store = FILE")
        db.execute(
            "CREATE TABLE held (key TEXT PRIMARY KEY, depth INTEGER, found_on TEXT,"
            " place INTEGER, url TEXT, anchor TEXT)"
        )
        db.execute(
            "CREATE TABLE taken (take INTEGER, found_on TEXT, place INTEGER, url TEXT,"
            " key TEXT, anchor TEXT)"
        )
        db.execute("CREATE INDEX taken_order ON taken (take, found_on, place)")
        db.executemany(
            "INSERT INTO held VALUES (?, ?, ?, ?, ?, ?)",
            ((key, *value) for key, value in self._dict.items()),
        )
        self._dict = {}
        self._db = db

    def take(self, level: int) -> Iterator[Taken]:
        """Every link held at ``level``, removed from the store at once (a link met
        while they are admitted is met again, not held), then given in (found_on,
        place) order."""
        if self._db is None:
            chosen = sorted(
                (found_on, place, url, key, anchor)
                for key, (depth, found_on, place, url, anchor) in self._dict.items()
                if depth == level
            )
            for taken in chosen:
                del self._dict[taken[3]]
            self._size -= len(chosen)
            yield from chosen
            return
        yield from self._take_spilled(self._db, level)

    def _take_spilled(self, db: sqlite3.Connection, level: int) -> Iterator[Taken]:
        self._takes += 1
        take = self._takes
        moved = db.execute(
            "INSERT INTO taken SELECT ?, found_on, place, url, key, anchor FROM held"
            " WHERE depth = ?",
            (take, level),
        ).rowcount
        db.execute("DELETE FROM held WHERE depth = ?", (level,))
        self._size -= moved
        last: tuple[str, int] | None = None
        while True:  # keyset pages: the store may be written between them
            if last is None:
                rows = db.execute(
                    "SELECT found_on, place, url, key, anchor FROM taken WHERE take = ?"
                    " ORDER BY found_on, place LIMIT ?",
                    (take, self.chunk),
                ).fetchall()
            else:
                rows = db.execute(
                    "SELECT found_on, place, url, key, anchor FROM taken WHERE take = ?"
                    " AND (found_on, place) > (?, ?) ORDER BY found_on, place LIMIT ?",
                    (take, *last, self.chunk),
                ).fetchall()
            if not rows:
                break
            yield from rows
            last = (rows[-1][0], rows[-1][1])
        db.execute("DELETE FROM taken WHERE take = ?", (take,))
