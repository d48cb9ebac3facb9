"""elastic_cluster on tiny instances: the guarantees of Theorems 5 and 3 against exact optima.

Prints, over seeds 0..N-1 of the ``tiny`` preset (even seeds PS, odd seeds all-reduce):
- ALG/OPT of a_online (Theorem 5: <= 4 alpha), a_online_exact_pricing and a_online_compact,
  beside 4 alpha, and LB/OPT for lower_bound; the exact solve's time and size;
- for the batch problem (7) of every instance (all jobs, tau in {4, 8}): a_maxweight's admitted
  weight against OPT_7 and Jain et al.'s greedy, beside gamma = 2 ln lambda (Theorem 3), with
  whether (A1) / (A2) hold;
- how often the faithful A_mincost1 is not optimal on random price states (Theorem 1).

Usage: python benchmarks/elastic_cluster_ratios.py [N]
"""

from __future__ import annotations

import math
import statistics
import sys

import numpy as np

from optsched.deadline import NEVER
from optsched.models import elastic_cluster as em
from optsched.registry import solve
from optsched.solvers.elastic_cluster.algorithm import (
    a_maxweight,
    assumptions,
    gamma,
    theorem_alpha,
)
from optsched.solvers.elastic_cluster.baselines import jain_greedy
from optsched.solvers.elastic_cluster.placement import PriceState, mincost_distributed_ps
from optsched.solvers.highs import solve_model
from optsched.workloads.elastic_cluster import generate


def online_ratios(n: int) -> None:
    rows = {k: [] for k in ("a_online", "a_online_exact_pricing", "a_online_compact", "a_online_eft",
                            "lb")}
    times, sizes, alphas = [], [], []
    for seed in range(n):
        inst = generate("tiny", seed)
        opt = solve(inst, "exact", time_limit=120)
        times.append(opt.runtime_s)
        sizes.append(opt.info["binaries"])
        alphas.append(4 * theorem_alpha(inst))
        for name in ("a_online", "a_online_exact_pricing", "a_online_compact", "a_online_eft"):
            rows[name].append(solve(inst, name).objective / opt.objective)
        rows["lb"].append(solve(inst, "lower_bound").lower_bound / opt.objective)
    print(f"tiny x {n}: exact time mean {statistics.mean(times):.2f}s max {max(times):.2f}s, "
          f"binaries mean {statistics.mean(sizes):.0f} max {max(sizes)}")
    print(f"4 alpha: min {min(alphas)} mean {statistics.mean(alphas):.1f} max {max(alphas)}")
    for name, vals in rows.items():
        print(f"{name:24s} ratio mean {statistics.mean(vals):.3f} max {max(vals):.3f} "
              f"min {min(vals):.3f}")


def batch_ratios(n: int) -> None:
    out = []
    for seed in range(n):
        inst = generate("tiny", seed)
        jobs = list(range(len(inst.jobs)))
        for tau in (4, 8):
            rep = solve_model(em.build_batch(inst, jobs, tau))
            alg = a_maxweight(inst, jobs, tau, deadline=NEVER).weight(inst)
            jain = sum(inst.jobs[j].weight for j in jain_greedy(inst, jobs, tau))
            if rep.objective > 0:
                out.append((rep.objective / max(alg, 1e-12), rep.objective / max(jain, 1e-12),
                            gamma(inst), assumptions(inst)["A1"], assumptions(inst)["A2"]))
    ratios = [o[0] for o in out]
    print(f"batch (7): {len(out)} batches, OPT7/ALG mean {statistics.mean(ratios):.3f} "
          f"max {max(ratios):.3f}; OPT7/Jain mean {statistics.mean(o[1] for o in out):.3f} "
          f"max {max(o[1] for o in out):.3f}; gamma = 2 ln lambda in "
          f"[{min(o[2] for o in out):.1f}, {max(o[2] for o in out):.1f}]; "
          f"ALG >= OPT7/gamma in {sum(o[0] <= o[2] for o in out)}/{len(out)}; "
          f"(A1) holds {sum(o[3] for o in out)}/{len(out)}, (A2) holds {sum(o[4] for o in out)}/{len(out)}")


def mincost1_failures(n: int, seed: int = 1) -> None:
    """Random PS instances (small preset, H = 4, D <= 8) and random usage beta ~ 0.7 U[0, C]."""
    rng = np.random.default_rng(seed)
    worse = total = missed = 0
    worst = 1.0
    for k in range(n):
        inst = generate("small", 2 * k, n_servers=4, max_chunks=8)
        tau = int(rng.integers(4, 12))
        beta = np.floor(rng.uniform(0, 1, (inst.n_servers, inst.n_res, tau))
                        * (inst.cap[:, :, None] + 1) * 0.7)
        beta = np.minimum(beta, inst.cap[:, :, None])
        omega = inst.cap[:, :, None] - beta
        delta = inst.price_base ** (beta / np.maximum(inst.cap[:, :, None], 1e-12)) - 1
        for j in range(len(inst.jobs)):
            fa = mincost_distributed_ps(PriceState(inst, omega, delta), j).cost
            ex = mincost_distributed_ps(PriceState(inst, omega, delta), j, exact=True).cost
            if math.isinf(ex):
                continue
            total += 1
            if math.isinf(fa):
                missed += 1
            elif fa > ex * (1 + 1e-9):
                worse += 1
                worst = max(worst, fa / ex if ex > 0 else math.inf)
    print(f"A_mincost1 (faithful) on {total} feasible random price states (H = 4, D <= 8): "
          f"costlier in {worse} (worst ratio {worst:.3f}), no placement found in {missed}")


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    online_ratios(n)
    batch_ratios(n)
    mincost1_failures(15 * n)
