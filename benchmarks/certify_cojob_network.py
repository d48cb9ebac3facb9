"""cojob_network rows of the issue-19 benchmark: ``optsched.certify`` on paper seeds 0-2.

Usage: ``python benchmarks/certify_cojob_network.py [T] [seeds...]``. Prints, per seed, LB, UB,
the gap UB/LB - 1, the wall time and the process CPU time (``time.process_time``), the 1-minute
load average (the machine is shared), and the method behind each side. With
``OPTSCHED_DEADLINE_CLOCK=cpu`` the limit ``T`` is CPU seconds.
"""

from __future__ import annotations

import os
import sys
import time

from optsched import generate
from optsched.certificate import certify


def row(seed: int, limit: float) -> str:
    """One table row for paper seed ``seed`` under ``time_limit=limit``."""
    inst = generate("cojob_network", "paper", seed)
    began, cpu = time.perf_counter(), time.process_time()
    load = os.getloadavg()[0]
    res = certify(inst, time_limit=limit, seed=0)
    wall, cpu = time.perf_counter() - began, time.process_time() - cpu
    gap = res.info["gap"]
    return (f"| {seed} | {res.lower_bound:.1f} | {res.objective:.1f} | "
            f"{'-' if gap is None else f'{100 * gap:.2f} %'} | {wall:.0f} s ({cpu:.0f} CPU-s) | "
            f"{load:.1f}-{os.getloadavg()[0]:.1f} | {res.info['lower_by']} | "
            f"{res.info['upper_by']} |")


def main(argv: list[str]) -> None:
    limit = float(argv[0]) if argv else 120.0
    seeds = [int(s) for s in argv[1:]] or [0, 1, 2]
    print(f"T = {limit:.0f} s")
    print(f"clock: {os.environ.get('OPTSCHED_DEADLINE_CLOCK', 'wall')}")
    print("| seed | LB | UB | gap | time | load | LB by | UB by |")
    for seed in seeds:
        print(row(seed, limit), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
