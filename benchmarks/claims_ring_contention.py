"""Headline claims of the SJF-BCO paper (Yu, Ji, Rajan, Liu, MobiHoc'22) measured under every
registered reading (issue 11); writes benchmarks/claims/ring_contention.json for the README claims
table.

Readings (docs/readings.md): ``sjf_bco`` (Alg. 1 pseudo-code: right <- theta - 1 only when the
makespan improves) and ``sjf_bco_proof`` (Lemma 2's proof: theta decreases while feasible); the
baselines FF / LS / RAND in SJF order (``first_fit``, ``list_scheduling``, ``random``) and in
instance (arrival) order (``*_arrival``); the 15% extra-time calibration as a worst-case cap or as
a share First-Fit realises (:data:`CALIBRATIONS`).

Claims and what is measured (seeds fixed; about 2 min on a free core):

1. Lemma 2 (theta~_u = W^_max): per SJF-BCO reading, on the shipped
   tests/data/ring_contention/lemma3_counterexample.json and tiny seeds 0..N-1.
2. Lemma 3 (T^total <= n_g W^_max): same instances.
3. Lemma 4 (theta~_u <= Phi (u/l) theta*_u): lemma4_counterexample.json, the instances optsched
   worst found (refute_lemma4_proof*.json) and tiny seeds.
4. Theorem 5 (SJF-BCO / OPT <= n_g Phi u/l): tiny seeds, OPT by ``exact`` (proven optimal only).
5. Fig. 4 (SJF-BCO has the lowest makespan and average JCT of FF, LS, RAND): paper preset
   (20 servers, T = 1200), seeds 0..P-1, every SJF-BCO reading vs every baseline reading (RAND: the
   mean over 5 RNG seeds), under every reading of the "15% extra time" calibration
   (:data:`CALIBRATIONS`).

Usage:  python benchmarks/claims_ring_contention.py [--tiny 20] [--paper 2]
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from pathlib import Path

from claims import label, write
from optsched.deadline import NEVER
from optsched.io import load_instance
from optsched.models import ring_contention as rm
from optsched.problems.ring_contention import average_jct, completion_times
from optsched.registry import solve
from optsched.solvers.ring_contention import algorithm as rc
from optsched.solvers.highs import solve_model
from optsched.workloads.ring_contention import generate

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "claims" / "ring_contention.json"
PAPER = "Yu, Ji, Rajan, Liu: SJF-BCO (MobiHoc 2022), ring_contention"
READINGS = {"sjf_bco": rc.SjfBcoParams(), "sjf_bco_proof": rc.SJF_BCO_PROOF}
BASELINES = ("first_fit", "list_scheduling", "random", "first_fit_arrival",
             "list_scheduling_arrival", "random_arrival")
L3 = ROOT / "tests/data/ring_contention/lemma3_counterexample.json"
L4 = ROOT / "tests/data/ring_contention/lemma4_counterexample.json"
#: Lemma 4 violations under the proof reading found unaided by ``optsched worst --target
#: lemma:lemma4`` (issue 23; errata R3).
L4_FOUND = (ROOT / "tests/data/ring_contention/refute_lemma4_proof.json",
            ROOT / "tests/data/ring_contention/refute_lemma4_proof_2.json")
TOL = 1e-6


def lemma_row(inst, params: rc.SjfBcoParams, theta_star: float | None = None) -> dict:
    """theta~, W^_max, makespan, n_g, Phi, u, l (and Lemma 4's sides) of one SJF-BCO reading."""
    s = rc.sjf_bco_search(inst, params, deadline=NEVER)
    c = rc.constants(inst)
    row = {"theta": s.theta, "w_max": float(s.state.U.max()), "makespan": s.makespan, **c}
    if theta_star is not None:
        row["l4_rhs"] = c["Phi"] * c["u"] / c["l"] * theta_star
    return row


def theta_star_of(inst) -> float:
    return solve_model(rm.build_budget(inst, durations="estimate",
                                       rho_hat=rc.rho_hat(inst))).objective


def lemmas(tiny: list) -> list[dict]:
    l3, l4 = load_instance(L3), load_instance(L4)
    found = [load_instance(p) for p in L4_FOUND]
    ts = {id(i): theta_star_of(i) for i in [l3, l4, *found, *tiny]}
    out = []
    per: dict[str, dict] = {name: {} for name in READINGS}
    for name, p in READINGS.items():
        rows = [lemma_row(i, p, ts[id(i)]) for i in tiny]
        a, b = lemma_row(l3, p, ts[id(l3)]), lemma_row(l4, p, ts[id(l4)])
        per[name] = {"tiny": rows, "l3": a, "l4": b,
                     "found": [lemma_row(i, p, ts[id(i)]) for i in found]}
    n = len(tiny)
    # Lemma 2
    readings, holds = {}, []
    for name, d in per.items():
        # theta is searched on the integers (lines 4-6, 21, 23): "equal" means theta~ = ceil(W^_max)
        bad = sum(r["theta"] - r["w_max"] >= 1 - TOL for r in d["tiny"])
        a = d["l3"]
        readings[name] = (f"shipped instance theta~ {a['theta']} vs W^_max {a['w_max']:.3f}; "
                          f"theta~ >= W^_max + 1 on {bad}/{n} tiny")
        holds.append(bad == 0 and a["theta"] - a["w_max"] < 1 - TOL)
    out.append({"paper": PAPER, "claim": "Lemma 2: Alg. 1's returned budget theta~_u equals W^_max "
                "(the bisection decreases theta until it is tight)", "verdict": label(holds),
                "readings": readings,
                "detail": "errata R1; instance tests/data/ring_contention/lemma3_counterexample.json. "
                          "theta is an integer and U continuous, so 'equal' is read as "
                          "theta~ = ceil(W^_max) (tight on the search grid). The pseudo-code "
                          "returns the first midpoint (T/2); Lemma 2's proof reading is tight."})
    # Lemma 3
    readings, holds = {}, []
    for name, d in per.items():
        bad = sum(r["makespan"] > r["n_g"] * r["w_max"] + TOL for r in d["tiny"])
        a = d["l3"]
        ok = a["makespan"] <= a["n_g"] * a["w_max"] + TOL
        readings[name] = (f"shipped instance makespan {a['makespan']} vs n_g W^_max "
                          f"{a['n_g'] * a['w_max']:.3f}; violated on {bad}/{n} tiny")
        holds.append(ok and bad == 0)
    out.append({"paper": PAPER, "claim": "Lemma 3: T^total <= n_g W^_max", "verdict": label(holds),
                "readings": readings,
                "detail": "errata R2; counterexample tests/data/ring_contention/lemma3_counterexample.json "
                          "(regression test test_lemma2_and_lemma3_counterexample). Actual floor-speed "
                          "durations exceed the estimates rho_hat (factor u/l missing)."})
    # Lemma 4
    readings, holds = {}, []
    for name, d in per.items():
        bad = sum(r["theta"] > r["l4_rhs"] + TOL for r in d["tiny"])
        a = d["l4"]
        ok = a["theta"] <= a["l4_rhs"] + TOL
        found_bad = [f"{r['theta']} > {r['l4_rhs']:.2f}" for r in d["found"]
                     if r["theta"] > r["l4_rhs"] + TOL]
        readings[name] = (f"shipped instance theta~ {a['theta']} vs Phi(u/l)theta* "
                          f"{a['l4_rhs']:.2f}; violated on {bad}/{n} tiny; found by optsched worst: "
                          f"violated on {len(found_bad)}/{len(d['found'])}"
                          + (f" (theta~ {', '.join(found_bad)})" if found_bad else ""))
        holds.append(ok and bad == 0 and not found_bad)
    out.append({"paper": PAPER, "claim": "Lemma 4: theta~_u <= Phi (u/l) theta*_u",
                "verdict": label(holds), "readings": readings,
                "detail": "errata R3; instances tests/data/ring_contention/lemma4_counterexample.json "
                          "and refute_lemma4_proof*.json (found by optsched worst --target "
                          "lemma:lemma4). Under the pseudo-code the bisection stops at the first "
                          "midpoint; under Lemma 2's proof reading theta~ is the least feasible "
                          "budget, and the found instances still exceed Phi (u/l) theta*."})
    return out


def theorem5(tiny: list) -> dict:
    readings, holds = {}, []
    opts = []
    for inst in tiny:
        r = solve(inst, "exact", time_limit=60)
        opts.append(r.objective if r.status.value == "optimal" else None)
    proven = [(i, o) for i, o in zip(tiny, opts) if o is not None]
    for name in READINGS:
        ratios, bounds = [], []
        for inst, o in proven:
            ratios.append(solve(inst, name).objective / o)
            c = rc.constants(inst)
            bounds.append(c["n_g"] * c["Phi"] * c["u"] / c["l"])
        viol = sum(x > b + TOL for x, b in zip(ratios, bounds))
        readings[name] = (f"ALG/OPT mean {statistics.mean(ratios):.3f} max {max(ratios):.3f} over "
                          f"{len(ratios)} proven tiny; bound min {min(bounds):.2f}; violated {viol}")
        holds.append(viol == 0)
    return {"paper": PAPER, "claim": "Theorem 5: SJF-BCO is an n_g Phi u/l-approximation of the "
            "makespan", "verdict": label(holds), "readings": readings,
            "detail": "errata R4: never violated although Lemmas 2-4 (the proof) fail; the bound is "
                      "loose (>= 1.28 on tiny, >= 11 on small)."}


#: Readings of Sec. 7.1 "the extra time cost brought by contention and overhead is within 15% of
#: the total actual execution time" (docs/readings.md, ring_contention row 3): ``cap`` = a
#: worst-case cap (the workload default, extra_cap 0.15); ``realised_max`` = First-Fit's largest
#: per-job realised share is 15%; ``realised_total`` = First-Fit's total extra time is 15% of its
#: total execution time. The realised readings bisect the workload's extra_cap to hit the share.
CALIBRATIONS = ("cap", "realised_max", "realised_total")
TARGET_SHARE = 0.15


def extra_shares(inst, schedule) -> tuple[float, float]:
    """(largest per-job, total) share of run time above the job's contention-free run: a job's
    extra is its duration minus ceil(F_j / best phi_j(n, 1)) over the placements it can use."""
    finish = completion_times(inst, schedule)
    extra, total, worst = 0, 0, 0.0
    for j, job in enumerate(inst.jobs):
        duration = finish[j] - schedule.starts[j]
        best = max(inst.phi(j, n, 1) for n in range(inst.min_servers(j), inst.max_servers(j) + 1))
        ideal = -(-job.iterations // best)
        extra, total = extra + duration - ideal, total + duration
        worst = max(worst, (duration - ideal) / duration)
    return worst, extra / total


def calibrated(seed: int, calibration: str, steps: int = 7):
    """The paper instance of ``seed`` under ``calibration`` (bisection on extra_cap in [0.15, 0.9]
    until First-Fit's realised share is TARGET_SHARE) and the extra_cap used."""
    if calibration == "cap":
        return generate("paper", seed), 0.15
    which = 0 if calibration == "realised_max" else 1
    lo, hi = 0.15, 0.9
    for _ in range(steps):
        mid = (lo + hi) / 2
        inst = generate("paper", seed, extra_cap=mid)
        share = extra_shares(inst, solve(inst, "first_fit").schedule)[which]
        lo, hi = (mid, hi) if share < TARGET_SHARE else (lo, mid)
    return generate("paper", seed, extra_cap=lo), lo


def fig4_runs(seeds: int, calibration: str):
    """Makespan and average JCT of every reading and baseline on the calibrated paper seeds."""
    mk: dict[str, list[float]] = {}
    jct: dict[str, list[float]] = {}
    caps = []
    for seed in range(seeds):
        inst, cap = calibrated(seed, calibration)
        caps.append(cap)
        for name in (*READINGS, *BASELINES):
            rngs = range(5) if name.startswith("random") else [0]
            rs = [solve(inst, name, seed=k) for k in rngs]
            mk.setdefault(name, []).append(statistics.mean(r.objective for r in rs))
            jct.setdefault(name, []).append(statistics.mean(_avg_jct(inst, r) for r in rs))
    return mk, jct, caps


def _avg_jct(inst, result) -> float:
    """Average JCT by the checker (inf when the method found no schedule: it loses)."""
    return math.inf if result.schedule is None else average_jct(inst, result.schedule)


def fig4(seeds: int) -> dict:
    readings, holds = {}, []
    for calibration in CALIBRATIONS:
        mk, jct, caps = fig4_runs(seeds, calibration)
        for name in READINGS:
            for order, group in (("sjf", BASELINES[:3]), ("arrival", BASELINES[3:])):
                wins = all(mk[name][s] < mk[b][s] for s in range(seeds) for b in group)
                jwins = all(jct[name][s] < jct[b][s] for s in range(seeds) for b in group)
                holds.append(wins and jwins)
                rel = ", ".join(f"{b} {statistics.mean(mk[b][s] / mk[name][s] for s in range(seeds)):.3f}x"
                                for b in group)
                readings[f"{name} vs {order}-order baselines, {calibration}"] = (
                    f"extra_cap {'/'.join(f'{c:.2f}' for c in caps)}; makespan "
                    f"{'/'.join(f'{x:.0f}' for x in mk[name])}; baselines/ALG: {rel}; "
                    f"strict win makespan {wins}, avg JCT {jwins}")
    return {"paper": PAPER, "claim": "Fig. 4: SJF-BCO has the lowest makespan and average JCT of "
            "SJF-BCO, FF, LS, RAND (20 servers, T = 1200)", "verdict": label(holds),
            "readings": readings,
            "detail": f"paper preset seeds 0-{seeds - 1} (RAND: mean of 5 RNG seeds), under three "
                      "readings of the 15% calibration (cap: worst case; realised_max / "
                      "realised_total: First-Fit realises 15% extra on its worst job / in total) "
                      "x two SJF-BCO readings x the baselines' job order (errata R6)."}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tiny", type=int, default=20, help="tiny seeds 0..N-1 (default 20)")
    ap.add_argument("--paper", type=int, default=2, help="paper-scale seeds 0..P-1 (default 2)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    tiny = [generate("tiny", s) for s in range(args.tiny)]
    claims = [*lemmas(tiny), theorem5(tiny), fig4(args.paper)]
    write(claims, OUT, t0)


if __name__ == "__main__":
    main()
