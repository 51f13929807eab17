"""A prompt stop on SIGINT / SIGTERM (Ctrl-C, ``docker stop``, a service manager).

Scrapy's first signal closes the spider gracefully: the close waits for every request the
engine handed the downloader, and a polite crawl keeps up to ``CONCURRENT_REQUESTS`` of
them queued in its host's downloader slot, released one per ``HOST_INTERVAL``: the run
went on sending for ~16 s after the signal, past the grace period of ``docker stop`` (10 s)
before its SIGKILL. So, on the first signal, this extension

* sends ``run_stopping`` (``signals.py``): the host throttle drops every request waiting
  for its host's turn (never sent): its download fails with ``StopRequested``, which
  ``middlewares/stop.py`` (closest to the downloader but the chunk's) turns back into a
  request for the closing scheduler — no errback, no refusal, no failed page, nothing
  recorded of it; a resumed job asks for it again (its replay re-derives the frontier,
  ``extensions/job.py``). A request still in its download slot's queue meets the same
  end at the download handler (``handlers.py``), before it is sent;
* has that middleware hand back, unsent, every request that reaches it from then on
  (one waiting for robots.txt or a DNS answer when the signal came);
* lets Scrapy's own handler run: the spider closes with reason ``shutdown`` (outcome
  ``interrupted``, exit 3) once the requests already on the wire are answered.

A second signal does not wait for those: the requests on the wire are abandoned and the
close goes on at once, so the crawl log, feeds and job are still written (Scrapy's own
second signal stops the reactor and writes nothing). Should the close itself hang,
``STOP_FORCE_TIMEOUT`` seconds later — or at a third signal — Scrapy's unclean shutdown
ends the process.

The handlers chain to Scrapy's own (``CrawlerProcess``): they are installed only when
Scrapy's are in place (``scrapy crawl``, Scrapyd, ``api.py``'s subprocess), never in a
host application that runs a ``CrawlerRunner`` and owns its signals.

Stats: ``stop/signal`` (the first signal's name), ``stop/dropped`` (requests that waited
for their host's turn or in a slot's queue, never sent), ``stop/held`` (requests that
reached the middleware after the signal), ``stop/forced`` (a second signal came),
``stop/abandoned`` (requests on the wire then).
"""

from __future__ import annotations

import asyncio
import logging
import signal
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.crawler import CrawlerProcessBase
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.utils.asyncio import call_later
from scrapy.utils.ossignal import signal_names
from scrapy.utils.reactor import is_reactor_installed

from discovery_crawler.private_names import abandon_in_progress
from discovery_crawler.signals import run_stopping

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import FrameType
    from typing import Self

    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

# The signals Scrapy's CrawlerProcess shuts down on (scrapy.utils.ossignal).
SHUTDOWN_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGBREAK") if hasattr(signal, name)
)


class StopRequested(IgnoreRequest):
    """A request dropped unsent because the run is stopping: not a refusal, not a failure
    of the page or its host; a resumed job asks for it again."""


class PromptStop:
    """First signal: nothing more is sent. Second: the close does not wait for the wire."""

    def __init__(self, crawler: Crawler, force_timeout: float):
        self.crawler = crawler
        self.stats = crawler.stats
        self.force_timeout = force_timeout
        self.stopping = False  # the first signal came: the middleware sends nothing more
        self.forced = False  # the second one came
        self._scrapy: dict[int, Any] = {}  # signal -> Scrapy's handler we chain to
        self._call_soon: Callable[..., Any] | None = None
        crawler.signals.connect(self.engine_started, signal=signals.engine_started)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        if not settings.getbool("PROMPT_STOP_ENABLED", True):
            raise NotConfigured("PROMPT_STOP_ENABLED is off")
        return cls(crawler, max(0.0, settings.getfloat("STOP_FORCE_TIMEOUT", 10.0)))

    # -- the handlers ------------------------------------------------------------------
    def engine_started(self) -> None:
        """Chain to Scrapy's shutdown handlers (installed as the reactor started)."""
        handlers = {sig: signal.getsignal(sig) for sig in SHUTDOWN_SIGNALS}
        if not all(_is_scrapy_handler(h) for h in handlers.values()):
            logger.debug("Prompt stop: the signals are not Scrapy's to handle; left alone")
            return
        if is_reactor_installed():  # as Scrapy's handlers do: after their calls
            from twisted.internet import reactor

            self._call_soon = reactor.callFromThread  # type: ignore[attr-defined]
        else:
            self._call_soon = asyncio.get_running_loop().call_soon_threadsafe
        self._scrapy = handlers
        self._install(self._first_signal)

    def _install(self, handler: Any) -> None:
        for sig in SHUTDOWN_SIGNALS:
            signal.signal(sig, handler)

    # A signal handler runs between two bytecodes of whatever the loop was doing: it only
    # schedules work on the loop (no logging there, as Scrapy's own handlers do).
    def _first_signal(self, signum: int, frame: FrameType | None) -> None:
        assert self._call_soon is not None
        self._scrapy[signum](signum, frame)  # Scrapy's: log it, close the spider
        self._call_soon(self.stop_sending, signum)  # on the loop right after those
        # Scrapy's handler installed its second-signal one (an unclean shutdown), which
        # waits for our third; ours comes second.
        self._scrapy = {sig: signal.getsignal(sig) for sig in SHUTDOWN_SIGNALS}
        self._install(self._second_signal)

    def _second_signal(self, signum: int, frame: FrameType | None) -> None:
        assert self._call_soon is not None
        kill = self._scrapy[signum]
        for sig in SHUTDOWN_SIGNALS:  # a third one: Scrapy's unclean shutdown at once
            signal.signal(sig, self._scrapy[sig])
        self._call_soon(self.force, signum, kill)

    # -- on the loop -------------------------------------------------------------------
    def stop_sending(self, signum: int) -> None:
        """Drop the requests waiting for their host's turn: they were never sent."""
        if self.stopping:
            return
        self.stopping = True
        self.stats.set_value("stop/signal", signal_names.get(signum, str(signum)))
        answers = self.crawler.signals.send_catch_log(signal=run_stopping)
        dropped = sum(n for _, n in answers if isinstance(n, int))
        self.stats.inc_value("stop/dropped", dropped)
        engine = self.crawler.engine
        downloader = getattr(engine, "downloader", None)
        # the downloader's requests less those dropped: those on their way, and those
        # still in a slot's queue, dropped as they reach the download handler
        on_the_wire = max(0, len(getattr(downloader, "active", ())) - dropped)
        logger.info(
            "Stopping: %d request(s) waiting for their host's interval dropped unsent; "
            "the run ends when the %d on their way are answered (signal again to not wait)",
            dropped,
            on_the_wire,
        )

    def dropped(self) -> None:
        """A request reached the download handler after the signal and went back unsent."""
        self.stats.inc_value("stop/dropped")

    def held(self) -> None:
        """A request reached the middleware after the signal and went back unsent."""
        self.stats.inc_value("stop/held")

    def force(self, signum: int, kill: Callable[[int, FrameType | None], Any]) -> None:
        """The close goes on without the requests on the wire; should it still hang,
        Scrapy's unclean shutdown ends the process."""
        if self.forced:
            return
        self.forced = True
        self.stats.set_value("stop/forced", True)
        engine = self.crawler.engine
        abandoned = abandon_in_progress(engine) if engine is not None else 0
        self.stats.set_value("stop/abandoned", abandoned)
        logger.warning(
            "Received %s again: %d request(s) on their way abandoned; the run's files are "
            "written and it ends now (signal a third time to end it without them)",
            signal_names.get(signum, str(signum)),
            abandoned,
        )
        if self.force_timeout:
            call_later(self.force_timeout, kill, signum, None)


def _is_scrapy_handler(handler: Any) -> bool:
    """Whether ``handler`` is one of Scrapy's own shutdown handlers (a bound method of
    the process that runs the crawl)."""
    return isinstance(getattr(handler, "__self__", None), CrawlerProcessBase)


def prompt_stop_of(crawler: Crawler) -> PromptStop | None:
    """The crawler's prompt stop, or None (off)."""
    return crawler.get_extension(PromptStop)
