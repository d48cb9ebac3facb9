"""cojob_network: empirical ratios on tiny/small instances (Theorem 2's claim, Lemma 1's bound).

For each seed: LP* (lower_bound), F* and the exact method (stage-sequencing MILP + simulation),
BF (best simulated chain-consistent order, tiny only) and every algorithm/baseline. Prints the
ratios ALG/OPT (OPT = exact when proven optimal, else BF as the best known schedule and F* as bound),
ALG/LP*, LP*/OPT, and exact solve times and model sizes.

Usage: python benchmarks/cojob_network_ratios.py [--seeds 20] [--preset tiny]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import time
from pathlib import Path

from optsched.registry import solve
from optsched.workloads.cojob_network import generate

_spec = importlib.util.spec_from_file_location(
    "brute", Path(__file__).parents[1] / "tests" / "solvers" / "brute_cojob_network.py")
brute = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(brute)

ALGS = ("pda", "grouper", "grouper_offline", "baraat", "sincronia", "fair_share")


def one(preset: str, seed: int) -> dict:
    inst = generate(preset, seed)
    row = {"l": len(inst.stages)}
    t = time.perf_counter()
    ex = solve(inst, "exact")
    row["exact_s"] = time.perf_counter() - t
    row["binaries"], row["constraints"] = ex.info["binaries"], ex.info["constraints"]
    row["proven"] = ex.status.value == "optimal"
    row["f_star"], row["lp"] = ex.lower_bound, solve(inst, "lower_bound").lower_bound
    row["opt"] = ex.objective
    if preset == "tiny":
        row["bf"] = brute.best_simulated(inst)[0]
    for name in ALGS:
        row[name] = solve(inst, name).objective
    row["claim"] = 2 - 2 / (len(inst.stages) + 1)
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--preset", default="tiny")
    args = ap.parse_args()
    rows = [one(args.preset, s) for s in range(args.seeds)]
    n_proven = sum(r["proven"] for r in rows)
    print(f"{args.preset}: {len(rows)} instances, l = {min(r['l'] for r in rows)}..{max(r['l'] for r in rows)}, "
          f"exact proven optimal on {n_proven}")
    print(f"exact: mean {statistics.mean(r['exact_s'] for r in rows):.3f} s, max "
          f"{max(r['exact_s'] for r in rows):.3f} s; binaries <= {max(r['binaries'] for r in rows)}, "
          f"constraints <= {max(r['constraints'] for r in rows)}")
    lp_opt = [r["lp"] / r["opt"] for r in rows if r["proven"]] or [float("nan")]
    f_opt = [r["f_star"] / r["opt"] for r in rows if r["proven"]] or [float("nan")]
    print(f"(proven instances) LP*/OPT mean {statistics.mean(lp_opt):.4f} min {min(lp_opt):.4f}; "
          f"F*/OPT mean {statistics.mean(f_opt):.4f} min {min(f_opt):.4f}")
    proven = [r for r in rows if r["proven"]]
    print(f"ALG/OPT over the {len(proven)} proven instances; ALG/F* over all (F* <= OPT, so an upper "
          f"bound on ALG/OPT); ALG/LP*")
    print(f"{'method':16s} {'/OPT mean':>9s} {'max':>6s} {'/F* mean':>9s} {'max':>6s} "
          f"{'/LP* mean':>9s} {'max':>6s} {'>claim':>6s}")
    for name in ALGS:
        r_opt = [r[name] / r["opt"] for r in proven] or [float("nan")]
        r_f = [r[name] / r["f_star"] for r in rows]
        r_lp = [r[name] / r["lp"] for r in rows]
        over = sum(r[name] / r["opt"] > r["claim"] + 1e-9 for r in proven)
        print(f"{name:16s} {statistics.mean(r_opt):9.4f} {max(r_opt):6.3f} {statistics.mean(r_f):9.4f} "
              f"{max(r_f):6.3f} {statistics.mean(r_lp):9.4f} {max(r_lp):6.3f} {over:6d}")
    print(f"claimed bound 2 - 2/(l+1): {min(r['claim'] for r in rows):.3f}..{max(r['claim'] for r in rows):.3f}")


if __name__ == "__main__":
    main()
