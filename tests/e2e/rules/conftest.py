"""The end-to-end rules of discovery (SPEC §4), one small site per rule: the ``site``
fixture and the helpers of the modules here. A rule's site is a hand-made folder from
``tests/fixtures/rules/<rule>/`` copied into the test's temp directory, the placeholder
origin ``https://example.com`` replaced with the loopback server's origin, served on
127.0.0.1."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable

    from discovery_crawler.site_server import SiteServer

RULES = Path(__file__).resolve().parents[2] / "fixtures" / "rules"
PLACEHOLDER = b"https://example.com"


def copy_fixture(name: str, dest: Path, origin: str) -> None:
    """Copy ``rules/<name>`` into ``dest``, pointing the placeholder origin at ``origin``."""
    src = RULES / name
    for path in sorted(src.rglob("*")):
        if path.is_file():
            out = dest / path.relative_to(src)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(path.read_bytes().replace(PLACEHOLDER, origin.encode()))


@pytest.fixture
def site(serve, tmp_path) -> Callable[..., SiteServer]:
    """``site(rule, origin=None)``: serve a copy of a rule's fixture folder on loopback."""

    def start(name: str, origin: Callable[[SiteServer], str] | None = None) -> SiteServer:
        root = tmp_path / "site"
        root.mkdir()
        server = serve(root)
        copy_fixture(name, root, origin(server) if origin else server.origin)
        return server

    return start


def paths(server: SiteServer) -> list[str]:
    """The paths the server answered, in order."""
    return [path for _, path, _ in server.requests]


def by_url(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["url"]: r for r in records}


def assert_completed(result: Any) -> None:
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.run["status"] == "completed", result.run["failure"]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]


def assert_bounded(result: Any) -> None:
    """A limit stopped the run early: exit 5, ``bounded``, no traceback."""
    assert result.returncode == 5, result.stderr[-3000:]
    assert result.run["status"] == "bounded", result.run["failure"]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]


def gzip_file(path: Path, data: bytes) -> None:
    path.write_bytes(gzip.compress(data, mtime=0))


WORKER = {"SITEMAP_WORKER_MIN_BYTES": 1}  # every document parsed in the sitemap worker
