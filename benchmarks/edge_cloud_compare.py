"""edge_cloud at paper scale (She et al., Sec. VI): total completion (flow) time of A_online vs FIFO,
DRF, BatchSche and Preemptive over the number of jobs J (Figs. 3, 7, 9) and of edge servers S
(Figs. 4, 8, 10); A_online vs F (Fig. 5) and vs the gradient size k (Fig. 11); average worker
utilisation (Figs. 12-13). One run per point and seed; the run time of every method is printed.

Usage:  python benchmarks/edge_cloud_compare.py [--seeds 1] [--parts J,S,F,k] [--csv F] [--plot DIR]
        python benchmarks/edge_cloud_compare.py --from-csv F --plot DIR     (plots only)
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

from optsched.registry import solve
from optsched.solvers.edge_cloud.bounds import trivial_bound
from optsched.workloads.edge_cloud import generate

METHODS = ("a_online", "a_online_model", "fifo", "drf", "batchsche", "greedy_ect", "preemptive",
           "preemptive_overhead")
J_VALUES = (50, 100, 150, 200, 250, 300)
S_VALUES = (100, 150, 200, 250, 300)
F_VALUES = (0.5, 1.0, 2.0, 4.0, 8.0)
K_VALUES = (100.0, 200.0, 400.0, 575.0)


def utilisation(instance, schedule) -> float:
    """Worker-slots used / (c_max * total worker slots), all servers (digest §6.3)."""
    used = sum(n * run.length for runs in schedule.runs for run in runs for _, n in run.workers)
    c_max = max(run.end for runs in schedule.runs for run in runs)
    return used / (c_max * int(instance.W.sum()))


def run_point(part: str, value, seed: int, methods) -> list[dict]:
    kw = {"J": {"n_jobs": value}, "S": {"n_edge": value}, "F": {"f1": value, "f2": value},
          "k": {"grad_mb_max": value}}[part]
    inst = generate("paper", seed, **kw)
    rows = [{"part": part, "value": value, "seed": seed, "method": "lower_bound",
             "tct": trivial_bound(inst), "runtime_s": 0.0, "util": 0.0}]
    for m in methods:
        t0 = time.perf_counter()
        res = solve(inst, m)
        rows.append({"part": part, "value": value, "seed": seed, "method": m, "tct": res.objective,
                     "runtime_s": round(time.perf_counter() - t0, 3),
                     "util": round(utilisation(inst, res.schedule), 4)})
    return rows


def plot(rows: list[dict], folder: str) -> None:
    """One PNG per sweep (Figs. 3-4 and 7-10 in one panel each): mean TCT per method vs the value."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    Path(folder).mkdir(parents=True, exist_ok=True)
    labels = {"J": "number of jobs J", "S": "number of edge servers", "F": "F = F1 = F2",
              "k": "max gradient size k (MB)"}
    for part in sorted({r["part"] for r in rows}):
        fig, ax = plt.subplots(figsize=(6, 4))
        sub = [r for r in rows if r["part"] == part]
        for method in dict.fromkeys(r["method"] for r in sub):
            pts: dict[float, list[float]] = {}
            for r in sub:
                if r["method"] == method:
                    pts.setdefault(float(r["value"]), []).append(float(r["tct"]))
            xs = sorted(pts)
            ax.plot(xs, [sum(pts[x]) / len(pts[x]) for x in xs], marker="o", label=method)
        ax.set_xlabel(labels[part])
        ax.set_ylabel("total completion (flow) time, slots")
        ax.set_yscale("log")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(Path(folder) / f"edge_cloud_{part}.png", dpi=120)
        plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--parts", default="J,S,F,k")
    ap.add_argument("--csv")
    ap.add_argument("--plot", help="folder for one PNG per sweep")
    ap.add_argument("--from-csv", help="plot an earlier run's CSV instead of running")
    args = ap.parse_args()
    if args.from_csv:
        with open(args.from_csv, newline="") as fh:
            plot(list(csv.DictReader(fh)), args.plot or ".")
        return
    plan = {"J": (J_VALUES, METHODS), "S": (S_VALUES, METHODS), "F": (F_VALUES, ("a_online",)),
            "k": (K_VALUES, ("a_online", "preemptive", "preemptive_overhead"))}
    rows = []
    for part in args.parts.split(","):
        values, methods = plan[part]
        for value in values:
            for seed in range(args.seeds):
                got = run_point(part, value, seed, methods)
                rows.extend(got)
                print(f"{part}={value:<6g} seed {seed}: " + "  ".join(
                    f"{r['method']}={r['tct']:.0f} ({r['runtime_s']:.1f}s, u={r['util']:.2f})" for r in got),
                    flush=True)
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    if args.plot:
        plot(rows, args.plot)


if __name__ == "__main__":
    main()
