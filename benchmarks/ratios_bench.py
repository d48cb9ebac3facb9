"""Wall time of the default ``optsched ratios`` run, and the speed-up of 2 local workers over 1.

Usage::

    python benchmarks/ratios_bench.py [--repeats 3] [--workers 1 2] [--family F ...] [--seeds N]

Each configuration runs ``repeats`` times in a fresh subprocess (so imports and the process-pool
start-up are counted, as a user would see them) with no ``--out`` folder (nothing is resumed); the
script prints the median wall time per worker count, the speed-up, the row count, and the table of
the last run. See benchmarks/README.md for the protocol.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

CHILD = """
import json, sys, time
from optsched.experiments.ratios import format_table, run_ratios
args = json.loads(sys.argv[1])
t = time.perf_counter()
rows = run_ratios(families=args["families"], seeds=args["seeds"], workers=args["workers"],
                  progress=False)
wall = time.perf_counter() - t
print(json.dumps({"inner_s": wall, "rows": sum(r["status"] != "skipped" for r in rows),
                  "table": format_table(rows)}))
"""


def run_once(families, seeds, workers) -> dict:
    arg = json.dumps({"families": families, "seeds": seeds, "workers": workers})
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", CHILD, arg], check=True, capture_output=True,
                         text=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    result["wall_s"] = time.perf_counter() - start
    return result


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    p.add_argument("--family", action="append", default=None)
    p.add_argument("--seeds", type=int, default=None)
    args = p.parse_args(argv)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, load average {os.getloadavg()[0]:.2f}")
    medians, last = {}, None
    for workers in args.workers:
        walls = []
        for i in range(args.repeats):
            last = run_once(args.family, args.seeds, workers)
            walls.append(last["wall_s"])
            print(f"workers={workers} run {i + 1}: {last['wall_s']:.1f} s wall "
                  f"({last['inner_s']:.1f} s in run_ratios), {last['rows']} rows", flush=True)
        medians[workers] = statistics.median(walls)
        print(f"workers={workers}: median {medians[workers]:.1f} s over {args.repeats} runs")
    if 1 in medians:
        for workers, m in medians.items():
            if workers != 1:
                print(f"speed-up of {workers} workers over 1: {medians[1] / m:.2f}x")
    print()
    print(last["table"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
