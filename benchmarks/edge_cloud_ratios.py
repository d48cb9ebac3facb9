"""edge_cloud: empirical ratios ALG/OPT on tiny/small instances (She et al., Fig. 14) and why.

For every seed: the exact optimum of (2) (time-indexed MILP, gap 0), the lower bound, every
in-ratio method and ``exact_oracle`` (the doubling rounds with the exact batch MILP (3) instead of
A_maxsche; not a paper method); for A_online also the diagnostics behind its ratio: the flow spent waiting for the
first usable round (start - a_j) versus running (c_j - h_j + 1), and the jobs *priced out* (rejected
in a round although a capacity-feasible in-window schedule existed, i.e. while capacity was free).

Usage:  python benchmarks/edge_cloud_ratios.py [--preset tiny] [--seeds 30] [--time-limit 60]
                                             [--n-jobs J] [--csv F]
"""

from __future__ import annotations

import argparse
import csv
import statistics
import time

from optsched.deadline import NEVER
from optsched.problems.edge_cloud import verify
from optsched.registry import methods, solve
from optsched.solvers.edge_cloud.bounds import a_online_exact_oracle
from optsched.workloads.edge_cloud import generate

ALGOS = [m.name for m in methods("edge_cloud") if m.kind in ("algorithm", "baseline") and not m.relaxed]
ALGOS.append("exact_oracle")  # doubling rounds + exact batch MILP (3), not a paper method (digest P8)


def wait_and_run(instance, schedule) -> tuple[int, int]:
    """(sum of h_j - a_j, sum of run lengths) of a non-preemptive schedule."""
    wait = sum(runs[0].start - job.arrival for runs, job in zip(schedule.runs, instance.jobs))
    run = sum(runs[0].length for runs in schedule.runs)
    return wait, run


def one(preset: str, seed: int, time_limit: float, **overrides) -> dict:
    inst = generate(preset, seed, **overrides)
    t0 = time.perf_counter()
    ex = solve(inst, "exact", time_limit=time_limit)
    row = {"seed": seed, "status": ex.status.value, "opt": ex.objective,
           "exact_s": round(time.perf_counter() - t0, 3), "n_vars": ex.info["n_vars"],
           "n_cons": ex.info["n_cons"], "horizon": ex.info["horizon"],
           "lb": solve(inst, "lower_bound").lower_bound, "sum_a": sum(j.arrival for j in inst.jobs)}
    row["opt_wait"], row["opt_run"] = wait_and_run(inst, ex.schedule)
    row["exact_oracle"] = verify(inst, a_online_exact_oracle(inst, deadline=NEVER))
    for name in ALGOS[:-1]:
        res = solve(inst, name)
        row[name] = res.objective
        if name.startswith("a_online") or name == "batchsche":
            row[f"{name}_priced_out"] = res.info["priced_out"]
            row[f"{name}_rejected"] = res.info["rejected"]
            row[f"{name}_not_ready"] = res.info["not_ready"]
            row[f"{name}_wait"], row[f"{name}_run"] = wait_and_run(inst, res.schedule)
    return row


def summarise(rows: list[dict]) -> None:
    opt_rows = [r for r in rows if r["status"] == "optimal" and r["opt"] > 0]
    print(f"\n{len(opt_rows)} instances solved to optimality (of {len(rows)})")
    print(f"exact time: mean {statistics.mean(r['exact_s'] for r in rows):.2f} s, max "
          f"{max(r['exact_s'] for r in rows):.2f} s; vars mean {statistics.mean(r['n_vars'] for r in rows):.0f}"
          f" max {max(r['n_vars'] for r in rows)}; horizon max {max(r['horizon'] for r in rows)}")
    lbr = [r["lb"] / r["opt"] for r in opt_rows]
    print(f"LB/OPT: mean {statistics.mean(lbr):.3f} min {min(lbr):.3f}")
    print(f"\n{'method':16s} {'flow mean':>9s} {'flow max':>9s} {'Sc mean':>8s} {'Sc max':>8s}  guarantee")
    for name in ALGOS:
        fr = [r[name] / r["opt"] for r in opt_rows]
        cr = [(r[name] + r["sum_a"]) / (r["opt"] + r["sum_a"]) for r in opt_rows]
        print(f"{name:16s} {statistics.mean(fr):9.3f} {max(fr):9.3f} {statistics.mean(cr):8.3f} "
              f"{max(cr):8.3f}  none claimed")
    print("\nA_online diagnostics (sums over instances)")
    for name in [a for a in ALGOS if a.startswith("a_online")] + ["batchsche"]:
        po = sum(r[f"{name}_priced_out"] for r in rows)
        rej = sum(r[f"{name}_rejected"] for r in rows)
        nr = sum(r[f"{name}_not_ready"] for r in rows)
        wait = sum(r[f"{name}_wait"] for r in rows)
        run = sum(r[f"{name}_run"] for r in rows)
        print(f"{name:16s} rejections {rej:4d}: data not yet uploaded {nr:4d}, priced out (a "
              f"capacity-feasible plan existed) {po:4d}, no plan fits the window {rej - nr - po:4d};"
              f" wait {wait}, run {run} slots")
    print(f"{'exact':16s} wait {sum(r['opt_wait'] for r in rows)}, run {sum(r['opt_run'] for r in rows)} slots")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="tiny")
    ap.add_argument("--seeds", type=int, default=30)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--n-jobs", type=int, help="override the preset's number of jobs (Fig. 14 vs J)")
    ap.add_argument("--csv")
    args = ap.parse_args()
    overrides = {"n_jobs": args.n_jobs} if args.n_jobs else {}
    rows = []
    for seed in range(args.seeds):
        rows.append(one(args.preset, seed, args.time_limit, **overrides))
        r = rows[-1]
        print(seed, r["status"], r["opt"], r["exact_s"], " ".join(f"{a}={r[a]:g}" for a in ALGOS), flush=True)
    summarise(rows)
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    main()
