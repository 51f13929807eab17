"""A real Redis for the distributed-mode tests: ``redis-server`` (the Debian package;
``.ci/run`` installs it) started on 127.0.0.1 at a free port, its files in a temp folder,
no persistence; stopped after the test. Without ``redis-server`` the tests skip, naming
it — in CI (``CI=true``) that is a failure."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import IN_CI, free_port

try:
    import redis
except ImportError:  # the redis extra is missing: same rule as a missing server
    redis = None


def _missing(what: str) -> None:
    message = f"{what} is missing (Debian: apt-get install redis-server; pip: the redis extra)"
    if IN_CI:
        pytest.fail(f"{message}; in CI this is a failure, not a skip")
    pytest.skip(message)


@dataclass
class RedisServer:
    """One ``redis-server`` process on 127.0.0.1:``port``; ``restart()`` stops and starts
    it on the same port, its data kept or lost (the fault tests)."""

    port: int
    folder: Path
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        options = {"bind": "127.0.0.1", "port": self.port, "dir": self.folder, "save": ""}
        options.update({"appendonly": "no", "protected-mode": "no"})
        command = ["redis-server"]
        for name, value in options.items():
            command += [f"--{name}", str(value)]
        self.process = subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                self.client().ping()
                return self
            except redis.ConnectionError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RuntimeError(f"redis-server did not start on port {self.port}") from None
                time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)
        self.process = None

    def restart(self, keep_data: bool, down: float = 0.0) -> None:
        """Stop the server and start it again on the same port after ``down`` seconds:
        with its data (saved to ``dump.rdb`` first, loaded at start) or without."""
        dump = self.folder / "dump.rdb"
        if keep_data:  # SHUTDOWN SAVE: saved and stopped in one step, no write between
            with contextlib.suppress(redis.ConnectionError):  # it closes as it exits
                self.client().shutdown(save=True)
            self.process.wait(10)
        self.stop()
        if not keep_data:
            dump.unlink(missing_ok=True)
        time.sleep(down)
        self.start()

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, db=0)


@pytest.fixture
def redis_server(tmp_path):
    """A started ``RedisServer``, stopped after the test."""
    if redis is None:
        _missing("the redis client (pip install -e '.[redis]')")
    if shutil.which("redis-server") is None:
        _missing("redis-server")
    folder = tmp_path / "redis"
    folder.mkdir()
    server = RedisServer(free_port(), folder).start()
    yield server
    server.stop()
