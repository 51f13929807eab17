"""Fuzz one target for a given wall time with hypothesis: the sitemap parser (fast path
against lxml), the robots policy or the URL normalizer (issue 17, point 4).

    nice -n 19 .venv/bin/python bench/fuzz.py sitemap --minutes 10
    nice -n 19 .venv/bin/python bench/fuzz.py robots --minutes 10
    nice -n 19 .venv/bin/python bench/fuzz.py normalize --minutes 10

The inputs and the properties checked are ``tests/fuzzing.py``'s (the CI tests run the same
for seconds). The run is a loop of hypothesis rounds, each of ``--round`` inputs from its
own seed (printed, so a round can be replayed with ``--seed``), until the time is up. Each
input is checked under a CPU-time bound (``--hang`` seconds, ``tests.fuzzing.cpu_bound``):
over it counts as a hang. A wall-clock watchdog (``faulthandler``) dumps the stacks and
exits 3 if one input blocks ten times longer than that without using CPU.

At the end it prints inputs tried, crashes, hangs and the slowest input (CPU time). A
failing input (shrunk by hypothesis) is written to ``--out`` (default
``bench/fuzz-failures/``) with its traceback, and the exit status is 1; by default the
run stops at the first failure (``--keep-going`` to go on).
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import random
import sys
import time
import traceback
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings  # noqa: E402

from tests.fuzzing import TARGETS, Hang, cpu_bound  # noqa: E402


class Stats:
    def __init__(self) -> None:
        self.tried = 0
        self.crashes = 0
        self.hangs = 0
        self.slowest = 0.0
        self.slowest_size = 0
        self.slowest_wall = 0.0
        self.slowest_input = ""
        self.slowest_case: object = None
        self.failure: tuple[str, object, str] | None = None  # the last failing call's


def run_round(name: str, round_seed: int, examples: int, hang: float, stats: Stats) -> bool:
    """One hypothesis run of ``examples`` inputs; False when it found a failure."""
    target = TARGETS[name]

    @seed(round_seed)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        print_blob=False,
        # no explain phase: it traces every line of a failing input's run, minutes for a
        # multi-window sitemap
        phases=(Phase.explicit, Phase.generate, Phase.target, Phase.shrink),
    )
    @given(target.strategy)
    def fuzz(case: object) -> None:
        stats.tried += 1
        cpu, wall = time.process_time(), time.perf_counter()
        faulthandler.dump_traceback_later(hang * 10, exit=True)  # blocked, not computing
        try:
            with cpu_bound(hang):
                target.check(case)
        except Hang:
            stats.failure = ("hang", case, traceback.format_exc())
            raise
        except BaseException:
            stats.failure = ("crash", case, traceback.format_exc())
            raise
        finally:
            faulthandler.cancel_dump_traceback_later()
            spent = time.process_time() - cpu
            if spent > stats.slowest:
                stats.slowest = spent
                stats.slowest_size = target.size(case)
                stats.slowest_wall = time.perf_counter() - wall
                stats.slowest_input = repr(case)[:300]
                stats.slowest_case = case

    stats.failure = None
    try:
        fuzz()
    except Exception:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", choices=sorted(TARGETS))
    parser.add_argument("--minutes", type=float, default=10.0, help="wall time (default 10)")
    parser.add_argument("--round", type=int, default=500, help="inputs per hypothesis round")
    parser.add_argument("--hang", type=float, default=5.0, help="CPU seconds an input may take")
    parser.add_argument("--seed", type=int, help="the first round's seed (default: random)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "fuzz-failures")
    parser.add_argument("--keep-going", action="store_true", help="go on after a failure")
    parser.add_argument("--json", type=Path, help="write the numbers here too")
    args = parser.parse_args(argv)
    # hypothesis warns of the repr of a multi-window sitemap (written only on a failure)
    warnings.filterwarnings("ignore", "Generating overly large repr")

    stats = Stats()
    rng = random.Random(args.seed)
    start = time.monotonic()
    stop = start + args.minutes * 60
    next_report = start + 60
    rounds = 0
    failures: list[Path] = []
    first_seed = args.seed if args.seed is not None else rng.randrange(2**32)
    round_seed = first_seed
    print(f"fuzzing {args.target} for {args.minutes:g} min (first seed {first_seed})", flush=True)
    while time.monotonic() < stop:
        ok = run_round(args.target, round_seed, args.round, args.hang, stats)
        rounds += 1
        if not ok:
            kind, case, tb = stats.failure or ("crash", None, "(no traceback recorded)")
            if kind == "hang":
                stats.hangs += 1
            else:
                stats.crashes += 1
            failures.append(_write_failure(args.out, args.target, round_seed, kind, case, tb))
            print(f"{kind} in round {rounds} (seed {round_seed}): {failures[-1]}", flush=True)
            if not args.keep_going:
                break
        round_seed = rng.randrange(2**32)
        if time.monotonic() >= next_report:
            next_report += 60
            print(f"  {time.monotonic() - start:5.0f} s: {stats.tried:,} inputs", flush=True)
    elapsed = time.monotonic() - start
    replayed = _replayed(args.target, stats.slowest_case)
    numbers = {
        "target": args.target,
        "seconds": round(elapsed, 1),
        "rounds": rounds,
        "inputs": stats.tried,
        "crashes": stats.crashes,
        "hangs": stats.hangs,
        "slowest_cpu_s": round(stats.slowest, 4),
        "slowest_wall_s": round(stats.slowest_wall, 4),
        "slowest_bytes": stats.slowest_size,
        "slowest_input": stats.slowest_input,
        "slowest_replayed_cpu_s": round(replayed, 6),
        "first_seed": first_seed,
        "hang_bound_cpu_s": args.hang,
    }
    print(
        f"{args.target}: {stats.tried:,} inputs in {elapsed:.0f} s ({rounds} rounds), "
        f"{stats.crashes} crashes, {stats.hangs} hangs; slowest input "
        f"{stats.slowest * 1000:.1f} ms CPU ({stats.slowest_wall * 1000:.1f} ms wall, "
        f"{stats.slowest_size:,} bytes; {replayed * 1000:.2f} ms replayed): "
        f"{stats.slowest_input[:120]}"
    )
    if args.json:
        args.json.write_text(json.dumps(numbers, indent=2) + "\n")
    return 1 if failures else 0


def _replayed(name: str, case: object) -> float:
    """The slowest input's CPU time when checked again (best of 3): what it costs itself,
    without the first call's imports or a garbage collection that fell on it."""
    if case is None:
        return 0.0
    best = float("inf")
    for _ in range(3):
        cpu = time.process_time()
        try:
            TARGETS[name].check(case)
        except Exception:  # it failed already, and was reported
            continue
        best = min(best, time.process_time() - cpu)
    return 0.0 if best == float("inf") else best


def _write_failure(out: Path, target: str, round_seed: int, kind: str, case, tb: str) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{target}-{kind}-{round_seed}.txt"
    path.write_text(
        f"target: {target}\nkind: {kind}\nseed: {round_seed}\n"
        f"input (repr, shrunk):\n{case!r}\n\ntraceback:\n{tb}"
    )
    return path


if __name__ == "__main__":
    sys.exit(main())
