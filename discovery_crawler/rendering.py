"""Turn the ``render`` option into settings: scrapy-playwright's download handler driving the
system's Chromium (SPEC §3 ``render``, §11 ``shell``).

``playwright install`` cannot download a browser on the machines this runs on; Debian's
``chromium`` package works (``/work/shared/STACK.md``), so the browser is found on ``PATH``
(``chromium``, ``chromium-browser``) or named by ``RENDER_BROWSER_PATH``.

- ``never``: no handler; a JavaScript shell is a ``shell`` refusal.
- ``auto``: the handler is installed, but only a response classified ``shell`` is fetched
  again through the browser (``middlewares/refusals.py``); with no browser (or no
  scrapy-playwright) it degrades to ``never`` with a note.
- ``always``: every page request goes through the browser; with no browser it is an error
  (one line, ``RenderUnavailable``), never a silent downgrade.

Only requests with ``meta["playwright"] = True`` use the browser: robots.txt and sitemaps
stay plain HTTP under every mode.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scrapy.crawler import Crawler
    from scrapy.settings import Settings

logger = logging.getLogger(__name__)

RENDER_MODES: tuple[str, ...] = ("never", "auto", "always")
PLAYWRIGHT_HANDLER = "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"
HOST_TURN_HANDLER = "discovery_crawler.handlers.HostTurnHandler"  # (settings.py)
BROWSER_NAMES: tuple[str, ...] = ("chromium", "chromium-browser")
# Headless Chromium as root in a container, quiet on the network (STACK.md).
LAUNCH_ARGS: tuple[str, ...] = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-dev-shm-usage",
)


class RenderUnavailable(Exception):
    """Rendering was required (``render=always``) and cannot happen; the message is one line."""


@dataclass
class RenderPlan:
    """What a render mode turns into on this machine."""

    requested: str
    mode: str  # the effective mode: ``requested``, or ``never`` after a downgrade
    browser: str | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    note: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "requested": self.requested,
            "mode": self.mode,
            "browser": self.browser,
            "note": self.note,
        }


def _get(settings: Mapping[str, Any] | Settings | None, name: str, default: Any = None) -> Any:
    if settings is None:
        return default
    value = settings.get(name)
    return default if value in (None, "") else value


def find_browser(settings: Mapping[str, Any] | Settings | None = None) -> str | None:
    """The Chromium executable: ``RENDER_BROWSER_PATH`` if set (and executable), else the
    first of ``BROWSER_NAMES`` on ``PATH``; None when there is none."""
    configured = _get(settings, "RENDER_BROWSER_PATH")
    if configured:
        path = str(configured)
        return path if os.path.isfile(path) and os.access(path, os.X_OK) else None
    for name in BROWSER_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def _missing(settings: Mapping[str, Any] | Settings | None) -> str | None:
    """Why rendering cannot run here, in words; None when it can."""
    if importlib.util.find_spec("scrapy_playwright") is None:
        return "scrapy-playwright is not installed (pip install 'discovery-crawler[render]')"
    configured = _get(settings, "RENDER_BROWSER_PATH")
    if configured and find_browser(settings) is None:
        return f"RENDER_BROWSER_PATH={configured} is not an executable file"
    if find_browser(settings) is None:
        return "no Chromium on PATH (apt-get install chromium) and RENDER_BROWSER_PATH is not set"
    return None


def _setting_on(value: Any) -> bool:
    """A boolean setting as Scrapy's ``getbool`` reads it (``2``, ``01`` are on too): the
    guard and this check must agree, or the browser runs under an enabled guard."""
    try:
        return bool(int(value))
    except (TypeError, ValueError):
        return str(value).strip().lower() in ("true", "yes")


def plan_render(mode: str, settings: Mapping[str, Any] | Settings | None = None) -> RenderPlan:
    """The settings overrides for ``mode`` on this machine.

    Raises ``ValueError`` for an unknown mode and ``RenderUnavailable`` when ``always`` is
    asked and no browser can run; ``auto`` without a browser becomes ``never`` with a note.
    """
    mode = str(mode or "never").strip().lower()
    if mode not in RENDER_MODES:
        raise ValueError(f"render={mode!r}; expected one of {', '.join(RENDER_MODES)}")
    if mode == "never":
        return RenderPlan(mode, "never")
    if _setting_on(_get(settings, "SSRF_GUARD_ENABLED", False)):
        # Chromium resolves and connects on its own, past the guard's checks and pins.
        why = "the SSRF guard is on (the browser would connect past its checks)"
        if mode == "always":
            raise RenderUnavailable(f"render=always is not available: {why}")
        return RenderPlan(
            mode, "never", note=f"render=auto: {why}; JavaScript shells are reported as refusals"
        )
    why = _missing(settings)
    if why is not None:
        if mode == "always":
            raise RenderUnavailable(f"render=always needs a browser: {why}")
        return RenderPlan(
            mode, "never", note=f"render=auto: {why}; JavaScript shells are reported as refusals"
        )
    browser = find_browser(settings)
    timeout_s = float(_get(settings, "DOWNLOAD_TIMEOUT", 30))
    overrides = {
        "DOWNLOAD_HANDLERS": {"http": PLAYWRIGHT_HANDLER, "https": PLAYWRIGHT_HANDLER},
        "PLAYWRIGHT_BROWSER_TYPE": "chromium",
        "PLAYWRIGHT_LAUNCH_OPTIONS": {
            "executable_path": browser,
            "headless": True,
            "args": list(LAUNCH_ARGS),
        },
        "PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT": int(timeout_s * 1000),
    }
    return RenderPlan(mode, mode, browser, overrides)


def rendering_installed(settings: Mapping[str, Any] | Settings) -> bool:
    """Whether the crawl's download handlers send ``playwright`` requests to a browser
    (themselves, or under the host turns' handler, ``handlers.py``)."""
    handlers = settings.get("DOWNLOAD_HANDLERS") or {}
    inner = settings.get("HOST_INTERVAL_HANDLER")
    return any(
        handlers.get(scheme) == PLAYWRIGHT_HANDLER
        or (handlers.get(scheme) == HOST_TURN_HANDLER and inner == PLAYWRIGHT_HANDLER)
        for scheme in ("http", "https")
    )


class OneLineBrowserFailures(logging.Filter):
    """Make scrapy-playwright's "Closing page due to failed request" one line.

    It logs each failed navigation with a traceback and Playwright's multi-line call log;
    the refusal record already says what failed (timeout, DNS, refused), so the log keeps
    one line: the request and the first line of the error.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if str(record.msg).startswith("Closing page due to failed request"):
            exc = record.exc_info[1] if record.exc_info else None
            first_line = str(exc).split("\n", 1)[0] if exc is not None else ""
            request = record.args[0] if isinstance(record.args, tuple) and record.args else "?"
            name = type(exc).__name__ if exc is not None else "error"
            record.msg = "Closing page due to failed request: %s (%s: %s)"
            record.args = (request, name, first_line)
            record.exc_info = None
            record.exc_text = None
        return True


def quiet_browser_failures() -> None:
    """Install ``OneLineBrowserFailures`` on scrapy-playwright's logger (once)."""
    browser_logger = logging.getLogger("scrapy-playwright")
    if not any(isinstance(f, OneLineBrowserFailures) for f in browser_logger.filters):
        browser_logger.addFilter(OneLineBrowserFailures())


class RenderAddon:
    """Scrapy add-on applying ``plan_render(RENDER_MODE)`` before the crawl starts.

    ``ADDONS = {"discovery_crawler.rendering.RenderAddon": 100}``; the crawl command maps
    ``-a render=`` onto ``RENDER_MODE`` (and reports ``RenderUnavailable`` as a bad argument
    before Scrapy starts). The plan is left in ``RENDER_PLAN`` for the refusal middleware.
    """

    def __init__(self, crawler: Crawler):
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RenderAddon:
        return cls(crawler)

    def update_settings(self, settings: Settings) -> None:
        plan = plan_render(settings.get("RENDER_MODE", "never"), settings)
        for name, value in plan.overrides.items():
            if name == "DOWNLOAD_HANDLERS":
                # Rendering was asked for by name, so the handler beats project and spider
                # defaults; only -s DOWNLOAD_HANDLERS=… on the command line wins over it.
                # Under the host turns' handler it is the one that connects: each host's
                # interval is kept as a rendered page is asked for too.
                handlers = settings.getwithbase("DOWNLOAD_HANDLERS")
                for scheme, handler in value.items():
                    if handlers.get(scheme) == HOST_TURN_HANDLER:
                        settings.set("HOST_INTERVAL_HANDLER", handler, priority="spider")
                    else:
                        settings["DOWNLOAD_HANDLERS"].set(scheme, handler, priority="spider")
            else:
                settings.set(name, value, priority="addon")
        settings.set("RENDER_PLAN", plan.as_dict(), priority="addon")
        if plan.mode != "never":
            quiet_browser_failures()
        if plan.note:
            logger.warning(plan.note)
