"""ring_contention: ALG/OPT on exact-solvable instances and the paper's lemmas measured (not a test).

For every seed: OPT by M1 (gap 0), LB by ``lower_bound``, every heuristic's makespan, and the
quantities of Lemmas 2–4 / Theorem 5 (digest §5): theta~ (Alg. 1's returned budget), W^_max (the
largest accumulated estimated time U[g] of the returned schedule), theta*_u (optimum of the paper's
(14)–(16) with rho_hat/u, model M3 "estimate"), Phi, u, l, the claimed ratio n_g Phi u/l and the
corrected n_g Phi (u/l)^2.

    python benchmarks/ring_contention_ratios.py [--preset tiny] [--seeds 30]
"""

from __future__ import annotations

import argparse
import statistics
import time

from optsched.deadline import NEVER
from optsched.models import ring_contention as rm
from optsched.registry import solve
from optsched.solvers.ring_contention import algorithm as rc_algorithm
from optsched.solvers.ring_contention import exact as rc_exact
from optsched.solvers.highs import solve_model
from optsched.workloads.ring_contention import generate

METHODS = ("sjf_bco", "first_fit", "list_scheduling", "random")


def one(preset: str, seed: int) -> dict:
    inst = generate(preset, seed)
    t0 = time.perf_counter()
    model = rm.build_exact(inst, rc_exact.upper_bound_schedule(inst, NEVER)[0])
    rep = solve_model(model)
    row = {"seed": seed, "opt": rep.objective, "status": rep.status.value,
           "m1_s": time.perf_counter() - t0, "m1_vars": model.nvariables(),
           "m1_cons": model.nconstraints(), "lb": solve(inst, "lower_bound").lower_bound}
    for m in METHODS:
        row[m] = solve(inst, m, seed=seed).objective
    search = rc_algorithm.sjf_bco_search(inst, deadline=NEVER)
    est = rc_algorithm.rho_hat(inst)
    theta_star = solve_model(rm.build_budget(inst, durations="estimate", rho_hat=est)).objective
    c = rc_algorithm.constants(inst)
    row.update(theta=search.theta, w_max=float(search.state.U.max()), theta_star=theta_star,
               n_g=c["n_g"], Phi=c["Phi"], u=c["u"], l=c["l"],
               claimed=c["n_g"] * c["Phi"] * c["u"] / c["l"],
               corrected=c["n_g"] * c["Phi"] * (c["u"] / c["l"]) ** 2)
    return row


def report(rows: list[dict]) -> None:
    print(f"{len(rows)} instances; OPT proven optimal on "
          f"{sum(r['status'] == 'optimal' for r in rows)}")
    for m in METHODS:
        ratios = [r[m] / r["opt"] for r in rows]
        print(f"  {m:16s} ALG/OPT mean {statistics.mean(ratios):.3f} max {max(ratios):.3f} "
              f"(= OPT on {sum(x == 1 for x in ratios)})")
    lbr = [r["lb"] / r["opt"] for r in rows]
    print(f"  LB/OPT mean {statistics.mean(lbr):.3f} min {min(lbr):.3f}")
    claimed = [r["claimed"] for r in rows]
    print(f"  Theorem 5 claimed ratio n_g Phi u/l: min {min(claimed):.2f} mean "
          f"{statistics.mean(claimed):.2f}; violated on "
          f"{[r['seed'] for r in rows if r['sjf_bco'] / r['opt'] > r['claimed'] + 1e-9]}")
    print(f"  Lemma 2 (W^_max = theta~) fails on "
          f"{sum(abs(r['w_max'] - r['theta']) > 1e-6 for r in rows)} (W^_max < theta~ always: "
          f"{all(r['w_max'] <= r['theta'] + 1e-9 for r in rows)})")
    l3 = [r['seed'] for r in rows if r['sjf_bco'] > r['n_g'] * r['w_max'] + 1e-9]
    print(f"  Lemma 3 with W^_max (T <= n_g W^_max) violated on seeds {l3}; with theta~ violated on "
          f"{[r['seed'] for r in rows if r['sjf_bco'] > r['n_g'] * r['theta'] + 1e-9]}")
    l4 = [r['seed'] for r in rows if r['theta'] > r['Phi'] * r['u'] / r['l'] * r['theta_star'] + 1e-6]
    print(f"  Lemma 4 (theta~ <= Phi u/l theta*) violated on seeds {l4}")
    times = [r["m1_s"] for r in rows]
    print(f"  M1 solve: mean {statistics.mean(times):.2f} s, max {max(times):.2f} s; vars "
          f"{min(r['m1_vars'] for r in rows)}-{max(r['m1_vars'] for r in rows)}, constraints "
          f"{min(r['m1_cons'] for r in rows)}-{max(r['m1_cons'] for r in rows)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="tiny")
    ap.add_argument("--seeds", type=int, default=30)
    args = ap.parse_args()
    rows = []
    for seed in range(args.seeds):
        rows.append(one(args.preset, seed))
        r = rows[-1]
        print(f"seed {seed:3d} opt {r['opt']:4.0f} lb {r['lb']:4.0f} "
              + " ".join(f"{m} {r[m]:4.0f}" for m in METHODS)
              + f" theta~ {r['theta']} W^max {r['w_max']:.2f} theta* {r['theta_star']:.2f}"
              f" bound {r['claimed']:.2f} m1 {r['m1_s']:.2f}s", flush=True)
    report(rows)


if __name__ == "__main__":
    main()
