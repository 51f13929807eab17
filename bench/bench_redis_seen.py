"""Redis memory per URL of the distributed seen-set (``distributed/seen.py``): N URLs
added to a fresh ``redis-server`` (started here on a free loopback port, no persistence)
as the Redis scheduler adds them, ``used_memory`` before and after; and, for comparison,
the same URLs as a plain SET of 40-character hex strings (scrapy-redis' dupefilter).

    .venv/bin/python bench/bench_redis_seen.py 1000000 10000000
"""

from __future__ import annotations

import hashlib
import socket
import subprocess
import sys
import tempfile
import time

import redis

from discovery_crawler.distributed.job import JobKeys
from discovery_crawler.distributed.seen import seen_slot


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def used(client: redis.Redis) -> int:
    return int(client.info("memory")["used_memory"])


def fill(client: redis.Redis, count: int, hexset: bool) -> None:
    keys = JobKeys("bench")
    pipe = client.pipeline(transaction=False)
    for i in range(count):
        url = f"https://www.example.com/section-{i % 97}/article/{i}.html"
        if hexset:
            pipe.sadd("dupefilter", hashlib.sha1(url.encode()).hexdigest())
        else:
            bucket, member = seen_slot(url)
            pipe.sadd(keys.seen(bucket), member)
        if i % 10000 == 9999:
            pipe.execute()
    pipe.execute()


def measure(count: int, hexset: bool) -> tuple[float, str]:
    with tempfile.TemporaryDirectory() as folder:
        port = free_port()
        server = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--dir", folder,
             "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            client = redis.Redis(port=port)
            for _ in range(100):
                try:
                    client.ping()
                    break
                except redis.ConnectionError:
                    time.sleep(0.05)
            before = used(client)
            fill(client, count, hexset)
            per_url = (used(client) - before) / count
            encodings = {}
            for key in client.scan_iter(count=1000):
                encodings[client.object("encoding", key).decode()] = 1
                if len(encodings) > 1:
                    break
            return per_url, ",".join(encodings)
        finally:
            server.terminate()
            server.wait()


def main(argv: list[str]) -> None:
    for count in [int(a) for a in argv] or [1_000_000]:
        per_url, encoding = measure(count, hexset=False)
        print(f"seen-set, {count:,} URLs: {per_url:.1f} bytes per URL ({encoding})")
        if count <= 1_000_000:
            per_url, encoding = measure(count, hexset=True)
            print(f"SET of 40-char hex, {count:,} URLs: {per_url:.1f} bytes per URL ({encoding})")


if __name__ == "__main__":
    main(sys.argv[1:])
