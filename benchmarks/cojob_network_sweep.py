"""cojob_network sweeps (paper Fig. 14: workload scale; Fig. 15: comm/comp ratio).

For each value, generate the paper preset with that override and report every policy's average SCT
and JCT normalised to FS (the paper's normalisation).

Usage:
  python benchmarks/cojob_network_sweep.py --param comm_comp --values 0.25 0.5 1 2 inf
  python benchmarks/cojob_network_sweep.py --scenario simulation --cojobs 8 --param load \
      --values 0.25 0.5 1 2
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from optsched.simulate.flows import simulate
from optsched.solvers.cojob_network.baselines import make_policy
from optsched.workloads.cojob_network import generate


def averages(inst, res) -> tuple[float, float]:
    sct = [s - c.arrival for c, row in zip(inst.cojobs, res.S) for s in row]
    jct = [e - c.arrival for c, row in zip(inst.cojobs, res.job_end) for e in row]
    return float(np.mean(sct)), float(np.mean(jct))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenario", default="testbed")
    ap.add_argument("--param", required=True, choices=("comm_comp", "load"))
    ap.add_argument("--values", type=float, nargs="+", required=True)
    ap.add_argument("--cojobs", type=int)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--policies", nargs="*", default=("grouper", "baraat", "sincronia", "fair_share"))
    args = ap.parse_args()
    print(f"{args.scenario}, {args.param} sweep; SCT and JCT relative to fair_share")
    for value in args.values:
        over = {"scenario": args.scenario}
        if args.cojobs:
            over["cojobs"] = args.cojobs
        if not math.isinf(value):
            over[args.param] = value
        inst = generate("paper", args.seed, **over)
        t = time.perf_counter()
        out = {p: averages(inst, simulate(inst, make_policy(inst, p), record=False))
               for p in args.policies}
        ref = out["fair_share"]
        cells = "  ".join(f"{p} {v[0] / ref[0]:.3f}/{v[1] / ref[1]:.3f}" for p, v in out.items())
        print(f"{args.param}={value:g}: {cells}  ({time.perf_counter() - t:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
