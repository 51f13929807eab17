"""The private names of other libraries this project relies on, all in one place, each
where no public name does the job. ``tests/test_private_names.py`` fails as soon as an
upgrade renames or changes one, instead of a crawl going subtly wrong.

Protego (``robots.py``): its public surface says whether a URL may be fetched
(``can_fetch``), not by which rule; naming the rule means parsing and matching exactly as
Protego does, so the explainer uses Protego's own pieces —

- ``protego._protego._extract_directive`` and the directive name sets
  (``_USER_AGENT_DIRECTIVE``, ``_ALLOW_DIRECTIVE``, ``_DISALLOW_DIRECTIVE``,
  ``_SITE_WIDE_DIRECTIVES``): how a line is read;
- ``protego._urlpattern._URLPattern`` (and its ``_pattern`` text): how a rule matches;
- ``protego._utils._hexescape``, ``_quote_path``, ``_quote_pattern``: how a path and a rule
  are quoted before they are compared.

The agreement tests (``tests/test_robots_conformance.py``: Google's test data and real
robots.txt files) hold the explainer to Protego's verdicts.

The standard library (``urls/slugs.py``): ``_sha1.sha1``, CPython's own SHA-1, for the hex
digits of a slug. ``hashlib.sha1`` is the same digest, but importing ``hashlib`` loads
OpenSSL's libcrypto into the sitemap worker, which needs nothing else of it: the worker's
resident memory counts in the run's peak (SPEC §14). Where ``_sha1`` is missing (a Python
built without it), ``hashlib``'s.

Scrapy (``extensions/throttle.py``): ``Downloader.total_concurrency``, the
``CONCURRENT_REQUESTS`` the engine checks before it hands the downloader another request
(``needs_backout``). Pacing sitemap fetches to their parser lowers it while documents wait
for a parse slot; no setting or signal changes it once the crawl runs. (A download slot's
``concurrency`` is set as it is, for that pacing only. The per-host interval steers no
slot: the download handler, ``handlers.py``, waits for the host's turn as each request is
sent — no slot's ``queue``, ``active``, ``transferring``, ``latercall``, ``delay``,
``lastseen`` or ``jitter`` is read or written, here or by the prompt stop.)

Scrapy (``extensions/stop.py``): ``ExecutionEngine._slot`` and its ``inprogress`` and
``_maybe_fire_closing``: the requests a closing spider waits for. At a second SIGINT or
SIGTERM the close stops waiting for the requests on the wire, so the run's files are still
written; Scrapy's only other way out of that wait is its unclean shutdown, which writes
nothing.

Scrapy (``distributed/scheduler.py``): ``ExecutionEngine._remove_request``, which the engine
calls once a request from the scheduler is done with — its callback's or errback's
output handed to the scheduler, or its retry or redirect scheduled. A distributed worker
acknowledges its lease on the request then; no signal fires at that moment
(``request_left_downloader`` and ``response_received`` come before the callback, and
the scraper hands a callback's output on from a queue, after the callback returned).
And ``ExecutionEngine._SLOT_HEARTBEAT_INTERVAL`` (5 s): how often an engine whose
scheduler has pending requests but gave none asks again; a worker waiting for the job's
queue (others hold leases that may yield links) asks every 0.5 s instead.
"""

from __future__ import annotations

from typing import Any

from protego._protego import (
    _ALLOW_DIRECTIVE as ALLOW_DIRECTIVES,
)
from protego._protego import (
    _DISALLOW_DIRECTIVE as DISALLOW_DIRECTIVES,
)
from protego._protego import (
    _SITE_WIDE_DIRECTIVES as SITE_WIDE_DIRECTIVES,
)
from protego._protego import (
    _USER_AGENT_DIRECTIVE as USER_AGENT_DIRECTIVES,
)
from protego._protego import (
    _extract_directive as extract_directive,
)
from protego._urlpattern import _URLPattern as URLPattern
from protego._utils import _hexescape as hexescape
from protego._utils import _quote_path as quote_path
from protego._utils import _quote_pattern as quote_pattern

try:
    from _sha1 import sha1
except ImportError:  # a Python built without its own SHA-1
    from hashlib import sha1

__all__ = [
    "ALLOW_DIRECTIVES",
    "DISALLOW_DIRECTIVES",
    "SITE_WIDE_DIRECTIVES",
    "USER_AGENT_DIRECTIVES",
    "URLPattern",
    "abandon_in_progress",
    "after_request_removed",
    "extract_directive",
    "hexescape",
    "pattern_text",
    "quote_path",
    "quote_pattern",
    "set_total_concurrency",
    "sha1",
    "total_concurrency",
]


def pattern_text(pattern: URLPattern) -> str:
    """The (quoted) rule a Protego URL pattern matches: its private ``_pattern``."""
    return pattern._pattern


def total_concurrency(downloader: Any) -> int:
    """The requests Scrapy's downloader takes at once (``CONCURRENT_REQUESTS``)."""
    return downloader.total_concurrency


def set_total_concurrency(downloader: Any, value: int) -> None:
    """Let the downloader take ``value`` requests at once from now on."""
    downloader.total_concurrency = value


def abandon_in_progress(engine: Any) -> int:
    """Let a closing engine stop waiting for the requests it handed the downloader (how
    many it was waiting for); 0 when it is not closing."""
    slot = getattr(engine, "_slot", None)
    if slot is None or slot.closing is None:
        return 0
    count = len(slot.inprogress)
    slot.inprogress.clear()
    slot._maybe_fire_closing()
    return count


def after_request_removed(engine: Any, then: Any) -> None:
    """Call ``then(request)`` each time ``engine`` is done with a request it took from
    the scheduler (after the engine's own bookkeeping, even when that raised)."""
    remove = engine._remove_request

    def remove_then(result: Any, request: Any) -> None:
        try:
            remove(result, request=request)
        finally:
            then(request)

    engine._remove_request = remove_then


def poll_scheduler_every(engine: Any, seconds: float) -> None:
    """Make ``engine`` ask its scheduler for requests every ``seconds`` while it has
    pending requests but gives none (Scrapy: every 5 s); before the spider opens."""
    engine._SLOT_HEARTBEAT_INTERVAL = seconds
