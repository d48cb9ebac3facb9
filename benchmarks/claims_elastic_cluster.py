"""Headline claims of Zhou et al. (paper 000, elastic_cluster) under every registered reading of
A_online; writes benchmarks/claims/elastic_cluster.json (issue 11).

    .venv/bin/python benchmarks/claims_elastic_cluster.py [--compare CSV ...]

Measured here (seeds fixed, a few minutes on 2 cores): Theorem 1 on the shipped counterexample per
A_mincost1 reading; Theorem 5 (ALG <= 4 alpha OPT) and ALG/OPT per reading on tiny seeds 0-7;
"alpha close to 4" (Theorem 5's alpha at paper scale, seeds 0-2, both architectures); Fig. 4
(larger F, larger objective) per reading on tiny seeds 0-3. The ">= 30 % better than the
baselines" claim (Z3) needs paper-scale runs of ``optsched compare elastic_cluster``: pass their
compare.csv files with ``--compare`` (one per run); without them that claim is left out.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import time
from pathlib import Path

import numpy as np

from claims import label, write

from optsched import generate, solve
from optsched.problems.elastic_cluster import Instance
from optsched.solvers.elastic_cluster import READINGS
from optsched.solvers.elastic_cluster.algorithm import theorem_alpha
from optsched.solvers.elastic_cluster.placement import PriceState, job_best, mincost_distributed_ps

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "elastic_cluster"
OUT = ROOT / "benchmarks" / "claims" / "elastic_cluster.json"
PAPER = "Zhou et al., Online Scheduling Algorithm for Heterogeneous Distributed ML Jobs, IEEE TCC 2022"
GUARANTEED = ("a_online", "a_online_exact_pricing", "a_online_literal_pricing",
              "a_online_paper_eft")
BASELINES = ("fifo", "drf", "antman", "tiresias")


def theorem1() -> dict:
    data = json.loads((DATA / "mincost1_counterexample.json").read_text())
    inst = Instance.from_dict(data["instance"])
    beta = np.array(data["beta"])

    def state() -> PriceState:
        return PriceState(inst, inst.cap[:, :, None] - beta,
                          inst.price_base ** (beta / inst.cap[:, :, None]) - 1)

    exact = mincost_distributed_ps(state(), 0, exact=True).cost
    readings, holds = {}, []
    for name, literal in (("a_online", False), ("a_online_literal_pricing", True)):
        got = mincost_distributed_ps(state(), 0, literal=literal).cost
        holds.append(got <= exact * (1 + 1e-9))
        step = job_best(state(), 0, "literal" if literal else "paper").cost
        readings[name] = (f"Alg. 4 cost {got:.3f} vs optimum {exact:.3f} (+{got / exact - 1:.0%}); "
                          f"per-job step {step:.3f}")
    readings["a_online_exact_pricing"] = f"exact A_mincost1 (the fix, not the paper's): {exact:.3f}"
    found = _found_mincost1()
    for i, name in enumerate(("a_online", "a_online_literal_pricing")):   # the order of holds
        readings[name] += f"; on prices Alg. 3 creates itself (refute_mincost1.json): {found[name]:.3f}x"
        holds[i] = holds[i] and found[name] <= 1 + 1e-9
    return {"paper": PAPER, "claim": "Theorem 1: A_mincost1 (Alg. 4) solves the per-job problem "
                                     "(13) optimally",
            "verdict": label(holds), "readings": readings,
            "detail": "tests/data/elastic_cluster/mincost1_counterexample.json; with and without "
                      "the digest's fix #11 (Alg. 4 line 19) the greedy is 18 % above the optimum "
                      "(errata Z1). refute_mincost1.json (2 jobs, 3 servers; shrunk by optsched "
                      "worst, issue 23): replaying Algorithm 3 from an empty cluster, Alg. 4's cost "
                      "exceeds the exact A_mincost1's (factor = greedy / exact, 1 + greedy when "
                      "the exact cost is 0)."}


def _found_mincost1() -> dict[str, float]:
    """The lemma:mincost1 factor of each greedy reading on refute_mincost1.json (issue 23)."""
    from optsched import solve
    from optsched.io import load_instance
    from optsched.registry import get_family

    inst = load_instance(DATA / "refute_mincost1.json")
    claim = get_family("elastic_cluster").worst.claim("mincost1")
    return {name: claim.check(inst, solve(inst, name))
            for name in ("a_online", "a_online_literal_pricing")}


def tiny_ratios(seeds=range(8)) -> tuple[dict, dict]:
    ratios: dict[str, list[float]] = {n: [] for n in READINGS + BASELINES[:2]}
    bound_ok = {n: True for n in GUARANTEED}
    for seed in seeds:
        inst = generate("elastic_cluster", "tiny", seed)
        opt = solve(inst, "exact", time_limit=60).objective
        alpha = theorem_alpha(inst)
        for name in ratios:
            value = solve(inst, name, time_limit=60).objective
            ratios[name].append(value / opt)
            if name in bound_ok and value > 4 * alpha * opt * (1 + 1e-9):
                bound_ok[name] = False
    return ratios, bound_ok


def theorem5(ratios: dict, bound_ok: dict) -> dict:
    readings = {n: f"ALG/OPT mean {statistics.mean(ratios[n]):.2f}, max {max(ratios[n]):.2f} "
                   f"(4 alpha >= 44); bound held: {bound_ok[n]}" for n in GUARANTEED}
    return {"paper": PAPER, "claim": "Theorem 5: A_online is 4 alpha-competitive for sum w_j c_j",
            "verdict": label(list(bound_ok.values())), "readings": readings,
            "detail": "tiny seeds 0-7 against the exact optimum (HiGHS, gap 0); the bound is loose "
                      "(ALG/OPT 4-24 against 4 alpha = 44-96); readings without Theorem 5's alpha "
                      "carry no guarantee."}


#: "Close to 4": alpha at most twice 4.
CLOSE_TO_4 = 8.0


def alpha_claim() -> dict:
    """Theorem 5's alpha (eq. (6)) at paper scale, both architectures. ``a_online_alpha4`` sets
    alpha = 4 by definition (a reading of the claim, not a measurement) and is not counted."""
    readings, holds = {}, []
    for arch in ("ps", "allreduce"):
        alphas = [theorem_alpha(generate("elastic_cluster", "paper", s, architecture=arch))
                  for s in range(3)]
        holds.append(max(alphas) <= CLOSE_TO_4)
        readings[f"a_online ({arch})"] = (f"Theorem 5's alpha = {[round(a) for a in alphas]} "
                                          f"(paper seeds 0-2)")
    return {"paper": PAPER, "claim": "Sec. 5.3: the typical value of alpha is close to 4",
            "verdict": label(holds), "readings": readings,
            "detail": f"counted as close when alpha <= {CLOSE_TO_4:g}. alpha of eq. (6) is about "
                      "gamma ln(w(J)/w_min) with gamma = 2 ln lambda; the per-round reading's alpha "
                      "(34-234 at seed 0) is in errata Z2; a_online_alpha4 sets alpha = 4 by "
                      "definition and is not counted. generate('paper', seed)."}


def f_claim(seeds=range(4), factors=(1.0, 10.0, 100.0, 1000.0)) -> dict:
    readings, grows = {}, {}
    for name in READINGS:
        trend = []
        for F in factors:
            total = 0.0
            for seed in seeds:
                inst = generate("elastic_cluster", "tiny", seed)
                inst = Instance(**{**{k: getattr(inst, k) for k in (
                    "architecture", "resources", "capacity", "worker_types", "ps_types", "jobs",
                    "horizon", "comm_factor", "name")}, "weight_ratio": inst.weight_ratio * F})
                total += solve(inst, name, time_limit=60).objective
            trend.append(total)
        grows[name] = all(b >= a for a, b in zip(trend, trend[1:])) and trend[-1] > trend[0]
        readings[name] = "sum w c for F x " + ", ".join(f"{f:g}" for f in factors) + ": " + \
            ", ".join(f"{t:.0f}" for t in trend)
    up = [n for n, g in grows.items() if g]
    verdict = label(list(grows.values()))
    return {"paper": PAPER, "claim": "Fig. 4: a larger F gives a larger total weighted completion "
                                     "time",
            "verdict": verdict, "readings": readings,
            "detail": f"tiny seeds 0-3, F scaled x1..x1000; grows under: {', '.join(up) or 'none'} "
                      "(F enters only lambda, hence alpha and the alpha tau_i windows)."}


#: "At least 30 % better": the reading's mean objective is at most this share of a baseline's.
BETTER_BY = 0.7


def e3_claim(paths: list[str]) -> dict | None:
    """Sec. 7 from paper-scale ``optsched compare elastic_cluster --out DIR`` runs (their
    compare.csv files): per reading, mean sum w c against every baseline's on the same seeds.
    Without runs the claim is left out of the JSON (it is never filled in by hand)."""
    rows = []
    for p in paths:
        with open(p) as fh:
            rows += [r for r in csv.DictReader(fh) if r.get("objective") not in ("", "None", None)]
    if not rows:
        return None
    by: dict[str, list[float]] = {}
    for r in rows:
        by.setdefault(r["method"], []).append(float(r["objective"]))
    seeds = sorted({int(r["seed"]) for r in rows})
    readings, holds = {}, []
    for name in READINGS:
        if name not in by:
            continue
        mine = statistics.mean(by[name])
        shares = {b: mine / statistics.mean(by[b]) for b in BASELINES if b in by}
        holds.append(all(v <= BETTER_BY for v in shares.values()))
        readings[name] = ", ".join(f"{b} {v:.2f}x" for b, v in shares.items()) + " (ALG / baseline)"
    return {"paper": PAPER, "claim": "Sec. 7: A_online beats FIFO, DRF, AntMan and Tiresias by "
                                     ">= 30 %",
            "verdict": label(holds), "readings": readings,
            "detail": f"errata Z3; paper preset (J = 100, H = 150), seeds {seeds}, mean sum w c; "
                      f"holds when ALG <= {BETTER_BY} x every baseline."}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--compare", nargs="*", default=[], help="compare.csv files (paper scale)")
    args = ap.parse_args()
    started = time.perf_counter()
    ratios, bound_ok = tiny_ratios()
    claims = [theorem1(), theorem5(ratios, bound_ok), alpha_claim(), f_claim()]
    e3 = e3_claim(args.compare)
    if e3 is not None:
        claims.append(e3)
    claims[1]["readings"].update({n: f"ALG/OPT mean {statistics.mean(ratios[n]):.2f}, max "
                                     f"{max(ratios[n]):.2f} (no guarantee)"
                                  for n in READINGS if n not in GUARANTEED})
    write(claims, OUT, started)


if __name__ == "__main__":
    main()
