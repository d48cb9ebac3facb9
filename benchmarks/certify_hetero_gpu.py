"""hetero_gpu rows of the certify table (issue 19): ``optsched.certify`` on paper seeds.

Usage: ``python benchmarks/certify_hetero_gpu.py [--seeds 0 1 2] [--time-limit 120]``. Prints one
JSON line per seed (LB, UB, gap, wall and CPU time, 1-minute load average before and after, the
method behind each side) and the steps of the certify call. The machine load inflates every time: report
the load beside the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import optsched


def row(seed: int, time_limit: float) -> dict:
    """One certify call on ``generate("hetero_gpu", "paper", seed)``."""
    inst = optsched.generate("hetero_gpu", "paper", seed)
    load0 = os.getloadavg()[0]
    began, cpu = time.perf_counter(), time.process_time()
    res = optsched.certify(inst, time_limit=time_limit, seed=0)
    return {"seed": seed, "time_limit": time_limit, "LB": res.lower_bound, "UB": res.objective,
            "gap": res.info["gap"], "seconds": round(time.perf_counter() - began, 1),
            "cpu_s": round(time.process_time() - cpu, 1),
            "clock": os.environ.get("OPTSCHED_DEADLINE_CLOCK", "wall"),
            "load": f"{load0:.1f}->{os.getloadavg()[0]:.1f}", "upper_by": res.info["upper_by"],
            "lower_by": res.info["lower_by"], "status": res.status.value,
            "steps": res.info["steps"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--time-limit", type=float, default=120.0)
    args = parser.parse_args()
    for seed in args.seeds:
        print(json.dumps(row(seed, args.time_limit), default=str), flush=True)


if __name__ == "__main__":
    main()
