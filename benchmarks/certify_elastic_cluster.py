"""certify on elastic_cluster paper seeds (issue 19 item 6): LB, UB, gap, time, the method behind
each side and the previous best ALG/LB (the best start heuristic over the family's bound method).

Usage: python benchmarks/certify_elastic_cluster.py [TIME_LIMIT] [SEED ...]
"""

from __future__ import annotations

import os
import sys
import time

import optsched


def row(seed: int, limit: float) -> dict:
    """One certify call on paper seed ``seed`` and its table row."""
    inst = optsched.generate("elastic_cluster", "paper", seed)
    clock = time.perf_counter()
    res = optsched.certify(inst, time_limit=limit)
    wall = time.perf_counter() - clock
    steps = res.info["steps"]
    starts = [s["objective"] for s in steps if s.get("side") in ("upper", "exact")
              and s.get("method") != "improve" and isinstance(s.get("objective"), float)]
    lb = res.lower_bound
    return {"seed": seed, "LB": lb, "UB": res.objective, "gap": res.info["gap"],
            "status": res.status.value, "seconds": round(wall, 1),
            "load": os.getloadavg()[0], "lower_by": res.info["lower_by"],
            "upper_by": res.info["upper_by"],
            "old_best_alg_over_lb": min(starts) / lb if starts and lb else None}


def main(argv: list[str]) -> None:
    limit = float(argv[0]) if argv else 120.0
    seeds = [int(s) for s in argv[1:]] or [0, 1, 2]
    for seed in seeds:
        print(row(seed, limit), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
