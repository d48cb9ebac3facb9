"""Certified gaps at paper scale (issue 19 item 8): ``optsched.certify`` on paper seeds of every
family, with the previous best ALG/LB beside it.

For every family and seed: the certified interval [LB, UB] of ``optsched.certify(instance,
time_limit=T)``, its gap UB / LB - 1, the wall time, the methods behind each side, and the best
start heuristic (its objective / LB: what the algorithms alone reach against the new bound; the
improvement's share is the difference to UB / LB). Issue 19 measured the best ALG/LB before
certify (per family, seed 1): hetero_gpu 1.228, edge_cloud 1.612, ring_contention 1.401,
elastic_cluster 1.153, cojob_network 1.198 (:data:`BEFORE`).

Usage::

    python benchmarks/certify.py [--family F]... [--seeds 3] [--time-limit 120] [--out DIR]

Writes ``certify.jsonl`` (one row per instance, appended as each finishes, so a killed run keeps
what it had) and prints a markdown table; the load average is recorded with every row because
the 2-core machine is often shared.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path

import optsched
from optsched.registry import families

FIELDS = ("family", "seed", "lb", "ub", "gap", "seconds", "upper_by", "lower_by", "status",
          "start_alg_lb", "start_best", "load")
#: Best ALG/LB at paper scale before certify, as issue 19 measured it (``optsched compare F
#: --preset paper --seeds 1``).
BEFORE = {"hetero_gpu": 1.228, "edge_cloud": 1.612, "ring_contention": 1.401,
          "elastic_cluster": 1.153, "cojob_network": 1.198}


def run_one(family: str, seed: int, time_limit: float) -> dict:
    """One certify call on paper seed ``seed`` of ``family``."""
    inst = optsched.generate(family, "paper", seed)
    load = os.getloadavg()[0]
    start = time.perf_counter()
    res = optsched.certify(inst, time_limit=time_limit, seed=0)
    seconds = time.perf_counter() - start
    starts = [s for s in res.info["steps"] if s["side"] == "upper" and s["method"] != "improve"]
    best = min(starts, key=lambda s: _value(s.get("objective")), default=None)
    start = None
    if best is not None and res.lower_bound and math.isfinite(_value(best.get("objective"))):
        start = _value(best["objective"]) / res.lower_bound
    return {"family": family, "seed": seed, "lb": res.lower_bound, "ub": res.objective,
            "gap": res.info["gap"], "seconds": seconds, "upper_by": res.info["upper_by"],
            "lower_by": res.info["lower_by"], "status": res.status.value,
            "start_alg_lb": start, "start_best": None if best is None else best["method"],
            "load": round(load, 1)}


def _value(x) -> float:
    return math.inf if x is None or x == "inf" else float(x)


def table(rows: list[dict]) -> str:
    """The markdown table of benchmarks/README.md."""
    head = ("| family | seed | LB | UB | gap | time s | UB from | LB from | best start / LB "
            "| before: best ALG/LB | load |\n|---|---|---|---|---|---|---|---|---|---|---|")
    lines = [head]
    for r in rows:
        gap = "-" if r["gap"] is None else f"{r['gap']:.2%}"
        start = "-" if r["start_alg_lb"] is None else f"{r['start_alg_lb']:.3f} ({r['start_best']})"
        lines.append(f"| {r['family']} | {r['seed']} | {_num(r['lb'])} | {_num(r['ub'])} | {gap} "
                     f"| {r['seconds']:.0f} | {r['upper_by']} | {r['lower_by']} | {start} "
                     f"| {BEFORE.get(r['family'], '-')} | {r['load']} |")
    return "\n".join(lines)


def _num(x) -> str:
    return "-" if x is None else f"{x:,.6g}" if abs(x) < 1e6 else f"{x:,.0f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", action="append", choices=sorted(families()))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--out", default="certify_out")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    with (out / "certify.jsonl").open("a") as fh:
        for family in args.family or sorted(families()):
            for seed in range(args.seeds):
                row = run_one(family, seed, args.time_limit)
                fh.write(json.dumps(row) + "\n")
                fh.flush()
                rows.append(row)
                print(table([row]).splitlines()[-1], flush=True)
    print(table(rows))


if __name__ == "__main__":
    main()
