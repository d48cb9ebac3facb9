"""How far past ``time_limit`` every registered method returns (issue 10, item 4).

For every family and every registered method, on the family's largest preset (``paper``, seed 0),
``solve(instance, method, time_limit=LIMIT)`` is timed REPEATS times. Reported per method: the median
wall time minus the registry's verify time (``Result.info["verify_s"]``, the checker's time, not the
method's), the median CPU time of this process over the same span, and the status. The slack of a
family is its largest median overrun ``max(0, wall - LIMIT)``; ``tests/test_deadline.py`` holds every
method to ``LIMIT + SLACK``.

Run: ``python benchmarks/deadline_slack.py [--limit 2] [--repeats 3] [--family F ...]``.
Prints a Markdown table, one row per method, and one summary row per family.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from optsched import generate, solve
from optsched.registry import families


def measure(instance, method: str, limit: float, repeats: int) -> tuple[float, float, str]:
    """Median (wall - verify) and median CPU seconds of ``repeats`` calls, and the last status."""
    walls, cpus, status = [], [], ""
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        result = solve(instance, method, time_limit=limit)
        verify_s = result.info.get("verify_s", 0.0)
        walls.append(time.perf_counter() - w0 - verify_s)
        cpus.append(time.process_time() - c0 - verify_s)
        status = result.status.value
    return statistics.median(walls), statistics.median(cpus), status


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, default=2.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--family", action="append")
    args = parser.parse_args(argv)
    import scipy.optimize  # noqa: F401  (one-time imports are the process's cost, not a method's)

    from optsched.solvers.highs import available

    available()
    print(f"time_limit={args.limit} s, median of {args.repeats}, load {os.getloadavg()[0]:.1f}\n")
    print("| family | method | wall - verify (s) | CPU (s) | overrun (s) | status |")
    print("|---|---|---|---|---|---|")
    for name, spec in families().items():
        if args.family and name not in args.family:
            continue
        instance = generate(name, "paper", 0)
        worst = 0.0
        for m in spec.methods:
            wall, cpu, status = measure(instance, m.name, args.limit, args.repeats)
            worst = max(worst, wall - args.limit)
            print(f"| {name} | {m.name} | {wall:.2f} | {cpu:.2f} | {max(0.0, wall - args.limit):.2f}"
                  f" | {status} |", flush=True)
        print(f"| **{name}** | **slack (largest median overrun)** | | | **{worst:.2f}** | |", flush=True)
    print(f"\nload at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
