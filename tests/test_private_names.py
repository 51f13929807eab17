"""``private_names.py``: every private name of another library the project relies on
still exists and still does what the project uses it for. A failure here after an upgrade
names the name that changed (see the module for why each is needed)."""

from __future__ import annotations

import ast
from pathlib import Path

from discovery_crawler import private_names


def test_protego_reads_a_line_as_the_explainer_expects():
    assert private_names.extract_directive("Disallow: /private/") == ("disallow", "/private/")
    assert private_names.extract_directive("User-Agent: *") == ("user-agent", "*")
    assert private_names.extract_directive("no colon here") is None
    assert {"user-agent", "useragent"} <= private_names.USER_AGENT_DIRECTIVES
    assert "allow" in private_names.ALLOW_DIRECTIVES
    assert "disallow" in private_names.DISALLOW_DIRECTIVES
    assert "sitemap" in private_names.SITE_WIDE_DIRECTIVES


def test_protego_matches_and_quotes_as_the_explainer_expects():
    pattern = private_names.URLPattern(private_names.quote_pattern("/a b*"))
    assert private_names.pattern_text(pattern) == "/a%20b*"
    assert pattern.match(private_names.quote_path("https://example.com/a%20bc?q=1"))
    assert not pattern.match(private_names.quote_path("https://example.com/x"))
    end = private_names.URLPattern("/x$")
    assert end.match("/x") and not end.match("/xy")
    assert private_names.hexescape("$") == "%24"


def test_the_builtin_sha1_is_hashlibs_digest():
    """Slugs' hex digits (``urls/slugs.py``) come from CPython's own SHA-1: the same digest
    as ``hashlib.sha1``, without loading OpenSSL's libcrypto into the sitemap worker."""
    import hashlib

    for data in (b"", b"/blog/post/", "/日本語/".encode()):
        assert private_names.sha1(data, usedforsecurity=False).hexdigest() == (
            hashlib.sha1(data, usedforsecurity=False).hexdigest()
        )
    assert private_names.sha1.__module__ != "_hashlib"


def test_the_sitemap_worker_does_not_load_openssl():
    """The worker process imports only what it parses with: not ``hashlib``, whose
    libcrypto would count in every run's peak memory."""
    import subprocess
    import sys

    code = (
        "import sys, discovery_crawler.sitemaps.worker, discovery_crawler.sitemaps.facts;"
        "print(sorted(m for m in ('hashlib', '_hashlib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def runtime_imports(tree: ast.Module) -> list[ast.ImportFrom]:
    """The ``from … import`` statements of a module, less those under ``TYPE_CHECKING``
    (type names, such as lxml's ``_Element``, are not relied on at run time)."""
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"
        for inner in ast.walk(node)
    }
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and id(node) not in typing_only
    ]


def test_the_project_reaches_them_only_through_this_module():
    """Nothing else in the package imports a library's private name at run time."""
    package = Path(private_names.__file__).parent
    found = []
    for path in package.rglob("*.py"):
        if path.name == "private_names.py":
            continue
        for node in runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                not node.level
                and node.module
                and not node.module.startswith(("discovery_crawler", "__future__"))
                and (
                    any(part.startswith("_") for part in node.module.split("."))
                    or any(a.name.startswith("_") for a in node.names)
                )
            ):
                found.append(f"{path.relative_to(package)}: {node.module}")
    assert found == []


def test_scrapys_downloader_takes_total_concurrency_requests():
    """Sitemap pacing (``extensions/throttle.py``) lowers ``Downloader.total_concurrency``:
    the engine hands the downloader no more requests once that many are active."""
    from scrapy import Request
    from scrapy.core.downloader import Downloader
    from scrapy.utils.test import get_crawler

    crawler = get_crawler(settings_dict={"CONCURRENT_REQUESTS": 5})
    downloader = Downloader(crawler)
    assert private_names.total_concurrency(downloader) == 5
    downloader.active.add(Request("http://127.0.0.1/a"))
    assert not downloader.needs_backout()
    private_names.set_total_concurrency(downloader, 1)
    assert private_names.total_concurrency(downloader) == 1
    assert downloader.needs_backout()


def test_a_closing_engine_slot_stops_waiting_for_the_requests_abandoned():
    """The second signal (``extensions/stop.py``) lets Scrapy's close go on without the
    requests on the wire: its engine slot's ``inprogress``, ``closing`` and
    ``_maybe_fire_closing``."""
    import asyncio
    from types import SimpleNamespace

    from scrapy import Request
    from scrapy.core.engine import _Slot
    from scrapy.utils.reactor import CallLaterOnce
    from twisted.internet.defer import Deferred

    async def check() -> None:  # Scrapy's slot wants a running loop (or a reactor)
        slot = _Slot(close_if_idle=True, nextcall=CallLaterOnce(lambda: None), scheduler=None)
        engine = SimpleNamespace(_slot=slot)
        slot.add_request(Request("http://127.0.0.1/on-the-wire"))
        assert private_names.abandon_in_progress(engine) == 0  # not closing: left alone
        assert slot.inprogress
        slot.closing = Deferred()  # what _Slot.close() awaits
        closed: list[object] = []
        slot.closing.addCallback(closed.append)
        assert private_names.abandon_in_progress(engine) == 1
        assert not slot.inprogress
        assert closed == [None]

    asyncio.run(check())


def test_the_engine_removes_each_scheduled_request_through_remove_request():
    """A distributed worker acknowledges a lease when the engine is done with the request
    (``distributed/scheduler.py``): Scrapy's engine chains ``self._remove_request`` (looked
    up on the instance) after the request's downloader output is handled."""
    import inspect
    from types import SimpleNamespace

    from scrapy.core.engine import ExecutionEngine

    source = inspect.getsource(ExecutionEngine._start_scheduled_request)
    assert "partial(self._remove_request, request=request)" in source
    assert source.index("_handle_downloader_output") < source.index("_remove_request")
    removed: list[object] = []
    engine = SimpleNamespace(_remove_request=lambda _, request: removed.append(request))
    then: list[object] = []
    private_names.after_request_removed(engine, then.append)
    engine._remove_request(None, request="r")
    assert removed == ["r"]
    assert then == ["r"]


def test_the_engine_polls_its_scheduler_at_slot_heartbeat_interval():
    """A distributed worker polls the job's queue every 0.5 s (``distributed/scheduler.py``):
    Scrapy's engine starts its slot heartbeat at ``self._SLOT_HEARTBEAT_INTERVAL``."""
    import inspect
    from types import SimpleNamespace

    from scrapy.core.engine import ExecutionEngine

    assert ExecutionEngine._SLOT_HEARTBEAT_INTERVAL == 5.0
    source = inspect.getsource(ExecutionEngine._start_request_processing)
    assert "heartbeat.start(self._SLOT_HEARTBEAT_INTERVAL)" in source
    engine = SimpleNamespace()
    private_names.poll_scheduler_every(engine, 0.5)
    assert engine._SLOT_HEARTBEAT_INTERVAL == 0.5
