"""HiGHS against SCIP on every family's exact method (issue 21 item 1): agreement and time ratio.

    python benchmarks/solvers.py [--preset tiny] [--seeds 4] [--repeat 3] [--time-limit 60]

For each family and seed, ``optsched.solve(inst, "exact", solver=S)`` runs with S = highs and
S = scip (the optional extra ``scip``), ``--repeat`` times each; the table gives both optima,
whether they agree (both proven and equal within the tolerance), the median runtime of each and
their ratio. HiGHS is the reference; the exact methods run the same Pyomo models under either
solver (their heuristics and bounds too), so the ratio is that of the whole method.
"""

from __future__ import annotations

import argparse
import os
import statistics

import optsched
from optsched import tolerance
from optsched.result import SolveStatus

FAMILIES = ("hetero_gpu", "edge_cloud", "ring_contention", "elastic_cluster", "cojob_network")


def timed(inst, solver: str, repeat: int, time_limit: float):
    runs = [optsched.solve(inst, "exact", time_limit=time_limit, solver=solver)
            for _ in range(repeat)]
    return runs[0], statistics.median(r.runtime_s for r in runs)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="tiny")
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--time-limit", type=float, default=60.0)
    args = ap.parse_args(argv)
    print("| family | seed | OPT HiGHS | OPT SCIP | agree | HiGHS s | SCIP s | SCIP/HiGHS |")
    print("|---|---|---|---|---|---|---|---|")
    ratios, agree = [], 0
    for family in FAMILIES:
        for seed in range(args.seeds):
            inst = optsched.generate(family, args.preset, seed)
            highs, th = timed(inst, "highs", args.repeat, args.time_limit)
            scip, ts = timed(inst, "scip", args.repeat, args.time_limit)
            same = (highs.status is scip.status is SolveStatus.OPTIMAL
                    and tolerance.close(highs.objective, scip.objective))
            agree += same
            ratios.append(ts / th)
            print(f"| {family} | {seed} | {highs.objective:,.10g} | {scip.objective:,.10g} | "
                  f"{'yes' if same else 'NO'} | {th:.3f} | {ts:.3f} | {ts / th:.2f} |")
    print(f"\n{agree}/{len(ratios)} agree; SCIP/HiGHS time ratio median "
          f"{statistics.median(ratios):.2f}, min {min(ratios):.2f}, max {max(ratios):.2f} "
          f"(preset {args.preset}, {args.repeat} runs each, load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
