"""A distributed job: its name, its identity, its Redis keys.

Workers of one job are processes started with the same spider and the same ``-a``
arguments (``out`` aside: each worker may write its own folder). The first worker stores
the job's identity in Redis; a worker whose identity differs is refused in one line
(``JobMismatch``), before it writes anything. ``-a job=NAME`` names the job; without it
the name is ``<host>-<8 hex digits of the identity>``, so the same command started on
several machines joins one job, and a different command starts another."""

from __future__ import annotations

import json
from dataclasses import dataclass
from hashlib import sha1
from typing import Any
from urllib.parse import urlsplit

# -a arguments that do not make a worker part of another job
NOT_IDENTITY = ("out", "job")


# A finished job's mark lives this long: a worker started late (the others already done)
# is refused rather than crawling the whole job again alone.
DONE_SECONDS = 60


class JobMismatch(Exception):
    """A worker's arguments differ from those of the job it names (one line)."""


def job_identity(spider: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """What every worker of a job shares: the spider and its ``-a`` arguments (``out``,
    ``job`` and Scrapyd's ``_``-prefixed ones left out), as plain sorted data."""
    kept = {
        str(k): str(v)
        for k, v in arguments.items()
        if k not in NOT_IDENTITY and not str(k).startswith("_")
    }
    return {"spider": spider, "arguments": dict(sorted(kept.items()))}


def default_job_name(identity: dict[str, Any]) -> str:
    """``<host>-<8 hex>``: the start URL's host and a digest of the identity."""
    url = identity["arguments"].get("url", "")
    host = urlsplit(url if "//" in url else f"//{url}").hostname or "site"
    digest = sha1(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:8]
    return f"{host}-{digest}"


@dataclass(frozen=True)
class JobKeys:
    """The Redis keys of one job, all under ``dc:{<name>}:`` (one hash tag: a Redis
    Cluster keeps them in one slot, which the Lua scripts need)."""

    name: str

    @property
    def prefix(self) -> str:
        return f"dc:{{{self.name}}}:"

    @property
    def done(self) -> str:  # the mark a finished job leaves for DONE_SECONDS (JSON)
        return self.prefix + "done"

    @property
    def identity(self) -> str:  # the job's spider and arguments (JSON)
        return self.prefix + "identity"

    @property
    def queue(self) -> str:  # ZSET: request id -> score (BFS: priority, then arrival)
        return self.prefix + "queue"

    @property
    def requests(self) -> str:  # HASH: request id -> the serialized request
        return self.prefix + "requests"

    @property
    def sequence(self) -> str:  # counter: the next request id
        return self.prefix + "sequence"

    @property
    def requested(self) -> str:  # counter: page requests given out (job-wide max_pages)
        return self.prefix + "requested"

    @property
    def depths(self) -> str:  # HASH: link depth -> page requests queued or leased
        return self.prefix + "depths"

    @property
    def citations(self) -> str:  # HASH: URL key -> its best citation (CLAIM)
        return self.prefix + "citations"

    @property
    def members(self) -> str:  # SET: every worker that joined (kept to the end)
        return self.prefix + "members"

    @property
    def reported(self) -> str:  # HASH: worker -> its account, once its records are in
        return self.prefix + "reported"

    @property
    def finisher(self) -> str:  # the worker that writes the job's one result (SET NX)
        return self.prefix + "finisher"

    @property
    def workers(self) -> str:  # SET: the workers that may hold leases
        return self.prefix + "workers"

    @property
    def sitemaps(self) -> str:  # SET: every sitemap (and robots.txt) URL asked in the job
        return self.prefix + "sitemaps"

    @property
    def sitemap_order(self) -> str:  # HASH: sitemap URL -> its place in one run's reading
        return self.prefix + "sitemap_order"

    @property
    def documents(self) -> str:  # counter: sitemap documents asked (SITEMAP_MAX_DOCUMENTS)
        return self.prefix + "documents"

    @property
    def sitemaps_open(self) -> str:  # counter: sitemaps (and robots.txt) queued or leased
        return self.prefix + "sitemaps_open"

    @property
    def again(self) -> str:  # SET: ids of pages handed back by a dead worker, fetched again
        return self.prefix + "again"

    @property
    def walk(self) -> str:  # HASH: the walk's job-wide figures (pages listed, answered)
        return self.prefix + "walk"

    def sighted(self, side: str, bucket: int) -> str:  # union: "listed" or "linked"
        return f"{self.prefix}{side}:{bucket:x}"

    def seen(self, bucket: int) -> str:
        return f"{self.prefix}seen:{bucket:x}"

    def lease(self, worker: str) -> str:
        return f"{self.prefix}lease:{worker}"

    def lease_keys(self, worker: str) -> list[str]:
        """The KEYS of the LEASE script (``scripts.py``), in its order."""
        return [
            self.queue,
            self.requests,
            self.lease(worker),
            self.workers,
            self.alive(worker),
            self.identity,
        ]

    def robots(self, origin: str) -> str:  # a JSON copy of the origin's robots.txt fetch
        return f"{self.prefix}robots:{origin}"

    def read(self, worker: str) -> str:  # HASH: sitemaps read, pages fetched; not handed over
        return f"{self.prefix}read:{worker}"

    def records_of(self, worker: str) -> str:  # LIST: a worker's records (JSON lines)
        return f"{self.prefix}records:{worker}"

    def held(self, worker: str) -> str:  # HASH: link depth -> links held for that level
        return f"{self.prefix}held:{worker}"

    def claims(self, worker: str) -> str:
        return f"{self.prefix}claims:{worker}"

    def alive(self, worker: str) -> str:
        return f"{self.prefix}alive:{worker}"


def join_job(client: Any, keys: JobKeys, identity: dict[str, Any]) -> bool:
    """Store the job's identity when it is new (True), or check this worker's against it
    (False when it matches; ``JobMismatch`` naming the first difference, or the job
    finished less than ``DONE_SECONDS`` ago)."""
    done = client.get(keys.done)
    if done is not None:
        mark = json.loads(done)
        raise JobMismatch(
            f"job {keys.name} is done: it finished less than {DONE_SECONDS} s ago (its "
            f"inventory: {mark.get('inventory') or mark.get('out')}); give another "
            "-a job=NAME to crawl again"
        )
    text = json.dumps(identity, sort_keys=True)
    if client.set(keys.identity, text, nx=True):
        return True
    stored = client.get(keys.identity)
    if stored is None:  # the job ended between the two calls: start it again
        return join_job(client, keys, identity)
    theirs = json.loads(stored)
    if theirs == identity:
        return False
    raise JobMismatch(f"job {keys.name} runs {_difference(theirs, identity)}")


def _difference(theirs: dict[str, Any], mine: dict[str, Any]) -> str:
    if theirs.get("spider") != mine.get("spider"):
        return f"spider {theirs.get('spider')}, not {mine.get('spider')}"
    a, b = theirs.get("arguments", {}), mine.get("arguments", {})
    for name in sorted(set(a) | set(b)):
        if a.get(name) != b.get(name):
            job = f"{name}={a[name]}" if name in a else f"no {name}"
            worker = f"{name}={b[name]}" if name in b else f"no {name}"
            return (
                f"with {job} (this worker: {worker}); give the job's arguments "
                "or another -a job=NAME"
            )
    return "with other arguments"
