"""Headline claims of the Grouper paper (Zhou, Yu, Sun, TNSM 2020) measured under every registered
reading (issue 11); writes benchmarks/claims/cojob_network.json for the README claims table.

Claims and what is measured (seeds fixed; ~5 min on a free core):

1. Theorem 2, PDA is a (2 - 2/(l+1))-approximation (all cojobs at t = 0): per PDA reading
   (pda, pda_literal, pda_code, pda_chain, pda_authors), ALG/OPT on the shipped counterexample
   tests/data/cojob_network/theorem2_counterexample.json and the max over tiny seeds 0-7 whose
   optimum ``exact`` proves.
2. Sec. III-D, PDA's order "can satisfy the precedence constraints of stages": per PDA reading, how
   many orders break a stage chain (G1 instance, tiny 0-7, small 0-7).
3. Testbed average SCT reduction 22.5 / 24.2 / 31.0 % vs Baraat / Sincronia / FS (Fig. 11a):
   testbed preset (23 machines, 4 cojobs x 8 jobs), seeds 0-2, per Grouper reading vs every reading
   of each baseline, at ``--iteration-scale`` (default 0.01 of the paper's 500-4000 iterations, for
   runtime; the structure and the contention pattern are the paper's).
4. Simulation "up to" 24.1 / 25.9 / 34.0 % vs Baraat / Sincronia / FS (Fig. 15a): simulation
   scenario, ``--cojobs`` (default 6) cojobs, load 1, seed 0.
5. Online Grouper at most 14.2 % worse than GrouperOffline in SCT (Figs. 17-18): on the runs of 3
   and 4, per reading pair (grouper/grouper_offline, grouper_authors/grouper_authors_offline).

Every paper-scale simulation runs under a deadline (``--sim-limit`` s); one cut short is reported
as such and left out of the verdict.

Usage:  python benchmarks/claims_cojob_network.py [--iteration-scale 0.01] [--seeds 3]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from claims import label, write
from optsched.deadline import Deadline
from optsched.io import load_instance
from optsched.registry import solve
from optsched.simulate.flows import simulate, sum_sct
from optsched.solvers import cojob_network as cs
from optsched.solvers.cojob_network import algorithm as cs_algorithm
from optsched.solvers.cojob_network import baselines as cs_baselines
from optsched.workloads.cojob_network import generate

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "claims" / "cojob_network.json"
PAPER = "Zhou, Yu, Sun: Grouper (IEEE TNSM 2020), cojob_network"
PDA = ("pda", "pda_literal", "pda_code", "pda_chain", "pda_authors")
GROUPER = ("grouper", "grouper_authors", "grouper_offline", "grouper_authors_offline")
BASELINES = {"Baraat": ("baraat", "baraat_fifo"), "Sincronia": ("sincronia", "sincronia_full"),
             "FS": ("fair_share",)}
OFFLINE = {"grouper": "grouper_offline", "grouper_authors": "grouper_authors_offline"}


#: Theorem 2's counterexamples, by name: the hand-made G1 instance, the one issue 12's worst search
#: found (chain-tail readings), and those issue 23's violation search found unaided.
THEOREM2_INSTANCES = {"G1": "theorem2_counterexample.json",
                      "worst-search": "worst_pda_authors.json",
                      "refute l=16": "refute_thm2_found_3.json",
                      "refute l=11": "refute_thm2_found_2.json",
                      "refute l=1": "refute_thm2_found.json"}


def theorem2() -> tuple[dict, dict]:
    found = {name: load_instance(ROOT / "tests/data/cojob_network" / file)
             for name, file in THEOREM2_INSTANCES.items()}
    opt = {name: solve(inst, "exact").objective for name, inst in found.items()}
    tiny = []
    for seed in range(8):
        inst = generate("tiny", seed)
        ex = solve(inst, "exact", time_limit=20)
        if ex.status.value == "optimal":
            tiny.append((inst, ex.objective))
    readings, holds = {}, []
    for name in PDA:
        parts, ok = [], True
        for label_, inst in found.items():
            res = solve(inst, name)
            ratio = res.objective / opt[label_]
            ok = ok and ratio <= res.guarantee + 1e-9
            parts.append(f"{label_} {ratio:.4f} (claim {res.guarantee:.4f})")
        r_tiny = max(solve(i, name).objective / o for i, o in tiny)
        holds.append(ok)
        readings[name] = "; ".join(parts) + f"; tiny max {r_tiny:.3f} over {len(tiny)} proven"
    claim = {"paper": PAPER, "claim": "Theorem 2: PDA + order-preserving allocation is a "
                                      "(2 - 2/(l+1))-approximation of sum SCT (all at t = 0)",
             "verdict": label(holds), "readings": readings,
             "detail": "G1 instance tests/data/cojob_network/theorem2_counterexample.json: above the "
                       "claim with every unscheduled stage a candidate and weights >= 1 (the "
                       "proof's Eq. (46) weights or the code's); the instance issue 12's worst "
                       "search found (worst_pda_authors.json) is above it under the chain-tail "
                       "readings; refute_thm2_found_3.json, found unaided by `optsched worst "
                       "--target violation` (issue 23), is above it under Alg. 1 line 10 read "
                       "literally too, and refute_thm2_found.json (l = 1, claim: optimal) under "
                       "every reading. The proof itself is invalid under every reading (errata G1)."}
    return claim, {"g1": found["G1"]}


def chains(extra: dict) -> dict:
    insts = [extra["g1"]] + [generate(p, s) for p in ("tiny", "small") for s in range(8)]
    readings, holds = {}, []
    for name in PDA:
        params = cs.SPEC.method(name).params
        broken = 0
        for inst in insts:
            order, _ = cs_algorithm.offline_order(inst, params)
            pos = {a: n for n, a in enumerate(order)}
            broken += any(pos[g, k - 1] > pos[g, k] for g, k in inst.stages if k)
        holds.append(broken == 0)
        readings[name] = f"{broken} of {len(insts)} orders break a stage chain"
    return {"paper": PAPER, "claim": "Sec. III-D: PDA's order satisfies the precedence "
                                     "constraints of stages",
            "verdict": label(holds), "readings": readings,
            "detail": "Holds by construction with chain-tail candidates (the authors' code); "
                      "Algorithm 1 as printed (every unscheduled stage a candidate) breaks the "
                      "chain on the G1 instance (digest E8)."}


def run(inst, name: str, limit: float) -> float | None:
    res = simulate(inst, cs_baselines.make_policy(inst, name), record=False, deadline=Deadline.after(limit))
    return sum_sct(inst, res) / len(inst.stages) if res.complete else None


def reductions(instances: list, limit: float) -> dict:
    names = [*GROUPER, *(b for bs in BASELINES.values() for b in bs)]
    sct: dict[str, list] = {n: [] for n in names}
    for inst in instances:
        for n in names:
            sct[n].append(run(inst, n, limit))
    return sct


def mean_red(sct: dict, a: str, b: str) -> float | None:
    pairs = [(x, y) for x, y in zip(sct[a], sct[b]) if x is not None and y is not None]
    if not pairs:
        return None
    return 100 * sum(1 - x / y for x, y in pairs) / len(pairs)


def headline(sct: dict, claim: str, paper: dict, detail: str) -> dict:
    """A Grouper reading reproduces the claim when, against every baseline, it reaches the paper's
    reduction over some reading of that baseline; a baseline whose every reading was cut short by
    the deadline is left out of the verdict (and named in the detail)."""
    readings, holds, unmeasured = {}, [], set()
    for gname in ("grouper", "grouper_authors", "grouper_offline", "grouper_authors_offline"):
        parts, ok = [], True
        for base, claimed in paper.items():
            reds = {b: mean_red(sct, gname, b) for b in BASELINES[base]}
            shown = ", ".join(f"{b} {r:+.1f}%" if r is not None else f"{b} cut short"
                              for b, r in reds.items())
            parts.append(f"vs {base} (paper {claimed}%): {shown}")
            if all(r is None for r in reds.values()):
                unmeasured.add(base)
                continue
            ok &= any(r is not None and r >= claimed for r in reds.values())
        holds.append(ok)
        readings[gname] = "; ".join(parts)
    if unmeasured:
        detail += f" Not measured (simulation cut by --sim-limit): {', '.join(sorted(unmeasured))}."
    return {"paper": PAPER, "claim": claim, "verdict": label(holds), "readings": readings,
            "detail": detail}


def online(sct_sets: list[tuple[str, dict]]) -> dict:
    readings, holds = {}, []
    for on, off in OFFLINE.items():
        parts, ok = [], True
        for where, sct in sct_sets:
            worse = mean_red(sct, off, on)          # 1 - off/on: how much worse online is
            if worse is None:
                parts.append(f"{where}: cut short")
                continue
            parts.append(f"{where}: online {worse:+.1f}% vs offline")
            ok &= worse <= 14.2
        holds.append(ok)
        readings[f"{on} / {off}"] = "; ".join(parts)
    return {"paper": PAPER, "claim": "Online Grouper is at most 14.2 % worse than GrouperOffline "
                                     "in average SCT (Figs. 17-18)",
            "verdict": label(holds), "readings": readings,
            "detail": "Reduction of the offline reading relative to the online one, mean over the "
                      "instances of the testbed and simulation claims (positive = online worse)."}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iteration-scale", type=float, default=0.01)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--sim-limit", type=float, default=120.0)
    ap.add_argument("--cojobs", type=int, default=6, help="cojobs of the simulation scenario")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--theory-only", action="store_true",
                    help="re-measure claims 1-2 only and keep the others of --out")
    args = ap.parse_args()
    t0 = time.perf_counter()
    claims = []
    c1, extra = theorem2()
    claims += [c1, chains(extra)]
    print(f"theory claims: {time.perf_counter() - t0:.0f} s", flush=True)
    if args.theory_only:  # claims 1-2 re-measured, the others kept
        write(claims + json.loads(args.out.read_text())[2:], args.out, t0)
        return
    testbed = [generate("paper", s, iteration_scale=args.iteration_scale) for s in range(args.seeds)]
    tb = reductions(testbed, args.sim_limit)
    print(f"testbed: {time.perf_counter() - t0:.0f} s", flush=True)
    claims.append(headline(
        tb, "Testbed: Grouper reduces average SCT by 22.5 / 24.2 / 31.0 % vs Baraat / Sincronia / "
            "FS (Fig. 11a)", {"Baraat": 22.5, "Sincronia": 24.2, "FS": 31.0},
        f"testbed preset (23 machines at 1 Gbps, 4 cojobs x 8 jobs, all at t = 0), seeds "
        f"0-{args.seeds - 1}, iteration scale {args.iteration_scale}; fluid big switch, strict "
        f"priority + max-min, stage barrier. A reading reproduces the claim if it reaches the "
        f"paper's reduction against some reading of every baseline. The testbed's TCP, 8 queues "
        f"and leaf-spine are not modelled (errata G3)."))
    sim = [generate("paper", 0, scenario="simulation", cojobs=args.cojobs, load=1.0)]
    sm = reductions(sim, args.sim_limit)
    print(f"simulation: {time.perf_counter() - t0:.0f} s", flush=True)
    claims.append(headline(
        sm, "Simulation: Grouper reduces average SCT by up to 24.1 / 25.9 / 34.0 % vs Baraat / "
            "Sincronia / FS (Fig. 15a)", {"Baraat": 24.1, "Sincronia": 25.9, "FS": 34.0},
        "simulation scenario (60 machines at 10 Gbps, the authors' arrival gaps and model mix), "
        f"{args.cojobs} cojobs, load 1, seed 0 (the paper: 'up to', over its comm/comp sweep)."))
    claims.append(online([("testbed", tb), ("simulation", sm)]))
    write(claims, args.out, t0)


if __name__ == "__main__":
    main()
