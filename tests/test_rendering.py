"""The render plan: which settings ``render=never|auto|always`` turns into on this machine."""

from __future__ import annotations

import importlib.util

import pytest
from scrapy.utils.test import get_crawler

from discovery_crawler.rendering import (
    LAUNCH_ARGS,
    PLAYWRIGHT_HANDLER,
    RenderUnavailable,
    find_browser,
    plan_render,
    rendering_installed,
)
from tests.conftest import IN_CI

ADDON = {"discovery_crawler.rendering.RenderAddon": 100}
NO_BROWSER = {"RENDER_BROWSER_PATH": "/nonexistent/chromium"}


def require_browser() -> str:
    """Chromium and scrapy-playwright, or a skip naming them (a failure in CI)."""
    browser = find_browser()
    if browser is None or importlib.util.find_spec("scrapy_playwright") is None:
        message = (
            "rendering needs Chromium on PATH (apt-get install chromium) and scrapy-playwright "
            "(pip install -e '.[render]')"
        )
        if IN_CI:
            pytest.fail(f"{message}; in CI this is a failure, not a skip")
        pytest.skip(message)  # outside CI only: with CI=true the line above fails
    return browser


def test_never_changes_nothing():
    plan = plan_render("never", {})
    assert (plan.mode, plan.overrides, plan.note) == ("never", {}, None)


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="render='sometimes'; expected one of never, auto, always"):
        plan_render("sometimes", {})


def test_auto_without_a_browser_degrades_with_a_note():
    plan = plan_render("auto", NO_BROWSER)
    assert (plan.requested, plan.mode, plan.overrides) == ("auto", "never", {})
    assert plan.note == (
        "render=auto: RENDER_BROWSER_PATH=/nonexistent/chromium is not an executable file; "
        "JavaScript shells are reported as refusals"
    )


def test_always_without_a_browser_is_a_one_line_error():
    with pytest.raises(RenderUnavailable) as info:
        plan_render("always", NO_BROWSER)
    assert "\n" not in str(info.value)
    assert str(info.value).startswith("render=always needs a browser: RENDER_BROWSER_PATH=")


def test_browser_found_installs_the_handler():
    browser = require_browser()
    plan = plan_render("auto", {"DOWNLOAD_TIMEOUT": 12})
    assert plan.mode == "auto" and plan.browser == browser
    assert plan.overrides["DOWNLOAD_HANDLERS"] == {
        "http": PLAYWRIGHT_HANDLER,
        "https": PLAYWRIGHT_HANDLER,
    }
    launch = plan.overrides["PLAYWRIGHT_LAUNCH_OPTIONS"]
    assert launch == {"executable_path": browser, "headless": True, "args": list(LAUNCH_ARGS)}
    assert plan.overrides["PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT"] == 12_000


def test_addon_applies_the_plan_to_the_crawl_settings():
    require_browser()
    crawler = get_crawler(settings_dict={"ADDONS": ADDON, "RENDER_MODE": "auto"})
    assert rendering_installed(crawler.settings)
    assert crawler.settings.getdict("PLAYWRIGHT_LAUNCH_OPTIONS")["headless"] is True
    assert crawler.settings.getdict("RENDER_PLAN")["mode"] == "auto"


def test_addon_leaves_plain_http_when_auto_has_no_browser(caplog):
    settings = {"ADDONS": ADDON, "RENDER_MODE": "auto", **NO_BROWSER}
    crawler = get_crawler(settings_dict=settings)
    assert not rendering_installed(crawler.settings)
    assert crawler.settings.getdict("RENDER_PLAN")["mode"] == "never"
    assert "render=auto: RENDER_BROWSER_PATH" in caplog.text


def test_addon_refuses_always_without_a_browser():
    with pytest.raises(RenderUnavailable):
        get_crawler(settings_dict={"ADDONS": ADDON, "RENDER_MODE": "always", **NO_BROWSER})


# "2" and "01" are on to Scrapy's getbool (the guard's switch): a check reading only "1"
# let Chromium run under an enabled guard (the guard then stopped the crawl, exit 3).
@pytest.mark.parametrize("guard", [True, "True", "1", "2", "01", " 1"])
def test_no_rendering_under_the_ssrf_guard(guard):
    """Chromium resolves and connects on its own, past the guard: auto renders nothing (a
    note says why), always is refused in one line, whatever browser there is."""
    plan = plan_render("auto", {"SSRF_GUARD_ENABLED": guard})
    assert plan.mode == "never" and "SSRF guard" in (plan.note or "")
    with pytest.raises(RenderUnavailable, match="render=always is not available: the SSRF"):
        plan_render("always", {"SSRF_GUARD_ENABLED": guard})
    assert plan_render("never", {"SSRF_GUARD_ENABLED": guard}).mode == "never"
