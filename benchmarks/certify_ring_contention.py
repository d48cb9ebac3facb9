"""ring_contention rows of the certify table (issue 19): ``optsched.certify`` on paper seeds,
with LB, UB, gap, time, the machine load and the method behind each side.

Usage: ``python benchmarks/certify_ring_contention.py [TIME_LIMIT] [SEEDS...]`` (default 120 s,
seeds 0 1 2). The previous best ALG/LB (sjf_bco against lower_bound, issue 19's table) is
computed here too, from the same instance.
"""

from __future__ import annotations

import os
import sys

from optsched import certify, generate, solve


def row(seed: int, time_limit: float) -> str:
    """One table row: seed, LB, UB, gap, seconds, load, sides, old ALG/LB."""
    inst = generate("ring_contention", "paper", seed)
    old = solve(inst, "sjf_bco").objective / solve(inst, "lower_bound").lower_bound
    res = certify(inst, time_limit=time_limit)
    load = os.getloadavg()[0]
    return (f"| {seed} | {res.lower_bound:g} | {res.objective:g} | {res.info['gap']:.4f} | "
            f"{res.runtime_s:.0f} | {load:.1f} | {res.info['lower_by']} | {res.info['upper_by']} | {old:.3f} |")


def main(argv: list[str]) -> None:
    time_limit = float(argv[0]) if argv else 120.0
    seeds = [int(s) for s in argv[1:]] or [0, 1, 2]
    print("| seed | LB | UB | gap | s | load | LB by | UB by | old ALG/LB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for seed in seeds:
        print(row(seed, time_limit), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
