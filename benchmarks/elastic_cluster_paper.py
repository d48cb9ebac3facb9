"""elastic_cluster at the paper's scale (Sec. 7; Figs. 2, 5, 7, 8): total weighted completion time
of A_online against FIFO, DRF, AntMan and Tiresias for PS and all-reduce, A_online's run time, and
A_maxweight against Jain et al.'s greedy on one batch.

Also Fig. 4 (A_online's sum w c against F, which enters lambda) and Fig. 7 (run time against J).

Usage: python benchmarks/elastic_cluster_paper.py [n_jobs] [seeds]
(defaults: 100 jobs, seeds 0 1; H = 150, T = 150). One run per (architecture, seed, method); every
schedule is checked by the registry's verify (preemptive baselines by verify_preemptive).
"""

from __future__ import annotations

import dataclasses
import statistics
import sys
import time

from optsched.deadline import NEVER
from optsched.registry import solve
from optsched.solvers.elastic_cluster.algorithm import a_maxweight
from optsched.solvers.elastic_cluster.baselines import jain_greedy
from optsched.workloads.elastic_cluster import generate

METHODS = ("a_online_compact", "a_online_eft", "a_online", "fifo", "drf", "antman", "tiresias")


def compare(n_jobs: int, seeds) -> None:
    for arch in ("ps", "allreduce"):
        table = {m: [] for m in METHODS}
        times = {m: [] for m in METHODS}
        for seed in seeds:
            inst = generate("paper", seed, architecture=arch, n_jobs=n_jobs)
            for name in METHODS:
                res = solve(inst, name)
                table[name].append(res.objective)
                times[name].append(res.runtime_s)
        base = table["a_online_compact"]
        print(f"\n{arch}: J = {n_jobs}, H = 150, T = 150, seeds {list(seeds)}")
        for name in METHODS:
            rel = statistics.mean(v / b for v, b in zip(table[name], base))
            print(f"  {name:18s} sum w c mean {statistics.mean(table[name]):.4g}  "
                  f"(x{rel:.3f} of a_online_compact)  time mean {statistics.mean(times[name]):.1f}s"
                  f" max {max(times[name]):.1f}s")


def batch_vs_jain(n_jobs: int, seed: int, tau: int = 64) -> None:
    for arch in ("ps", "allreduce"):
        inst = generate("paper", seed, architecture=arch, n_jobs=n_jobs)
        jobs = list(range(len(inst.jobs)))
        start = time.perf_counter()
        alg = a_maxweight(inst, jobs, tau, deadline=NEVER).weight(inst)
        took = time.perf_counter() - start
        jain = sum(inst.jobs[j].weight for j in jain_greedy(inst, jobs, tau))
        print(f"batch {arch} tau={tau}: A_maxweight weight {alg:.0f} ({took:.1f}s), "
              f"Jain greedy {jain:.0f}, total {sum(j.weight for j in inst.jobs):.0f}")


def f_sweep(n_jobs: int, seed: int, values=(1, 10, 100, 1000, 10000)) -> None:
    """Fig. 4: F only changes lambda = 2 T H R F + 1 (the instance's own F is the (A1) ratio)."""
    for arch in ("ps", "allreduce"):
        inst = generate("paper", seed, architecture=arch, n_jobs=n_jobs)
        row = []
        for f in values:
            res = solve(dataclasses.replace(inst, weight_ratio=float(f)), "a_online_compact")
            row.append(f"F={f}: {res.objective:.4g}")
        print(f"F sweep {arch} (instance F = {inst.weight_ratio:.0f}): " + ", ".join(row))


def time_sweep(seed: int, sizes=(50, 100, 150)) -> None:
    """Fig. 7: A_online (compact) run time against the number of jobs."""
    for arch in ("ps", "allreduce"):
        row = []
        for n in sizes:
            res = solve(generate("paper", seed, architecture=arch, n_jobs=n), "a_online_compact")
            row.append(f"J={n}: {res.runtime_s:.1f}s")
        print(f"run time {arch}: " + ", ".join(row))


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    seeds = tuple(int(s) for s in sys.argv[2:]) or (0, 1)
    compare(n, seeds)
    batch_vs_jain(n, seeds[0])
    f_sweep(n, seeds[0])
    time_sweep(seeds[0])
