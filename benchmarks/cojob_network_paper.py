"""cojob_network at paper scale: Grouper vs Baraat, Sincronia, FS (paper Figs. 10-11, 14, 17-18).

Runs the event-driven flow simulator (no rate timeline recorded) on a paper preset and prints, per
policy: average SCT (S_{g,k} - r_g), average JCT, average stage slowdown (ASSD: stage duration over
the same stage simulated alone on an idle fabric), p90 slowdown, wall time, simulator events/s, and
Grouper's reductions versus each baseline (the paper's "reduction vs X" = 1 - Grouper/X).

Usage:
  python benchmarks/cojob_network_paper.py --scenario testbed [--iteration-scale 1]
  python benchmarks/cojob_network_paper.py --scenario simulation --cojobs 20 --load 1.0
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from optsched.problems.cojob_network import Cojob, Instance, Job
from optsched.simulate.flows import FairShare, simulate
from optsched.solvers.cojob_network.baselines import make_policy
from optsched.workloads.cojob_network import generate

POLICIES = ("grouper", "grouper_offline", "baraat", "sincronia", "fair_share")


def alone_duration(inst: Instance, g: int, k: int, cache: dict) -> float:
    """Duration of stage (g, k) simulated alone (same jobs, iterations and compute gaps)."""
    if (g, k) not in cache:
        c = inst.cojobs[g]
        jobs = tuple(Job(1, c.jobs[j].flows, c.jobs[j].compute) for j in c.alive(k))
        sub = Instance(inst.machines, (Cojob(0.0, (c.stage_iterations(k),), jobs),), inst.capacity)
        cache[g, k] = simulate(sub, FairShare(), record=False).S[0][0]
    return cache[g, k]


def metrics(inst: Instance, res, cache: dict) -> dict:
    sct, jct, slow = [], [], []
    for g, c in enumerate(inst.cojobs):
        for k, s in enumerate(res.S[g]):
            sct.append(s - c.arrival)
            prev = res.S[g][k - 1] if k else c.arrival
            slow.append((s - prev) / alone_duration(inst, g, k, cache))
        jct.extend(e - c.arrival for e in res.job_end[g])
    return {"sct": float(np.mean(sct)), "jct": float(np.mean(jct)), "assd": float(np.mean(slow)),
            "p90": float(np.percentile(slow, 90))}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenario", default="testbed", choices=("testbed", "simulation"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--iterations", type=int, nargs="*")
    ap.add_argument("--iteration-scale", type=float)
    ap.add_argument("--placement", choices=("random", "gpu_servers"))
    ap.add_argument("--cojobs", type=int)
    ap.add_argument("--load", type=float)
    ap.add_argument("--comm-comp", type=float)
    ap.add_argument("--policies", nargs="*", default=POLICIES)
    args = ap.parse_args()
    over = {"scenario": args.scenario}
    if args.iterations:
        over["iterations"] = tuple(args.iterations)
    if args.iteration_scale:
        over["iteration_scale"] = args.iteration_scale
    if args.placement:
        over["placement"] = args.placement
    if args.cojobs:
        over["cojobs"] = args.cojobs
    if args.load:
        over["load"] = args.load
    if args.comm_comp:
        over["comm_comp"] = args.comm_comp
    inst = generate("paper", args.seed, **over)
    n_flows = sum(len(j.flows) * c.iterations[j.stages - 1] for c in inst.cojobs for j in c.jobs)
    print(f"{inst.name}: P={inst.machines}, {len(inst.cojobs)} cojobs, {len(inst.stages)} stages, "
          f"{n_flows} flow instances; overrides {over}")
    cache: dict = {}
    out = {}
    for name in args.policies:
        t = time.perf_counter()
        policy = make_policy(inst, name)
        res = simulate(inst, policy, record=False)
        wall = time.perf_counter() - t
        out[name] = metrics(inst, res, cache)
        print(f"{name:16s} SCT {out[name]['sct']:10.2f}  JCT {out[name]['jct']:10.2f}  "
              f"ASSD {out[name]['assd']:7.3f}  p90 {out[name]['p90']:7.3f}  wall {wall:7.1f} s  "
              f"events {res.events} ({res.events / wall:.0f}/s), allocations {res.allocations} "
              f"({res.allocations / wall:.0f}/s)", flush=True)
    if "grouper" in out:
        for base in ("baraat", "sincronia", "fair_share", "grouper_offline"):
            if base in out:
                red = {m: 100 * (1 - out["grouper"][m] / out[base][m]) for m in ("sct", "jct", "assd")}
                print(f"grouper vs {base:16s}: SCT {red['sct']:+6.1f}%  JCT {red['jct']:+6.1f}%  "
                      f"ASSD {red['assd']:+6.1f}%  (reduction; negative = grouper worse)")


if __name__ == "__main__":
    main()
