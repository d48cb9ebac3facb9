"""Certified gaps at paper scale (issue 19 item 8): ``optsched.certify`` on paper seeds of every
family, with the previous best ALG/LB beside it.

For every family and seed: the certified interval [LB, UB] of ``optsched.certify(instance,
time_limit=T)``, its gap UB / LB - 1, the wall time, the methods behind each side, and the
previous best ALG/LB = the best start heuristic's objective / the registered ``lower_bound``
(run on its own with a 120 s limit), i.e. what ``optsched compare`` could say before certify.

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
          "prev_alg_lb", "prev_best", "load")


def run_one(family: str, seed: int, time_limit: float) -> dict:
    """One certify call and the previous best ALG/LB on paper seed ``seed`` of ``family``."""
    inst = optsched.generate(family, "paper", seed)
    load = os.getloadavg()[0]
    start = time.perf_counter()
    res = optsched.certify(inst, time_limit=time_limit, seed=0)
    seconds = time.perf_counter() - start
    starts = [s for s in res.info["steps"] if s["side"] == "upper" and s["method"] != "improve"]
    best = min(starts, key=lambda s: _value(s.get("objective")), default=None)
    old = optsched.solve(inst, "lower_bound", time_limit=120).lower_bound
    prev = None
    if best is not None and old and math.isfinite(_value(best.get("objective"))):
        prev = _value(best["objective"]) / old
    return {"family": family, "seed": seed, "lb": res.lower_bound, "ub": res.objective,
            "gap": res.info["gap"], "seconds": seconds, "upper_by": res.info["upper_by"],
            "lower_by": res.info["lower_by"], "status": res.status.value,
            "prev_alg_lb": prev, "prev_best": None if best is None else best["method"],
            "load": round(load, 1)}


def _value(x) -> float:
    return math.inf if x is None or x == "inf" else float(x)


def table(rows: list[dict]) -> str:
    """The markdown table of benchmarks/README.md."""
    head = ("| family | seed | LB | UB | gap | time s | UB from | LB from | before: best ALG/LB "
            "| load |\n|---|---|---|---|---|---|---|---|---|---|")
    lines = [head]
    for r in rows:
        gap = "-" if r["gap"] is None else f"{r['gap']:.2%}"
        prev = "-" if r["prev_alg_lb"] is None else f"{r['prev_alg_lb']:.3f} ({r['prev_best']})"
        lines.append(f"| {r['family']} | {r['seed']} | {_num(r['lb'])} | {_num(r['ub'])} | {gap} "
                     f"| {r['seconds']:.0f} | {r['upper_by']} | {r['lower_by']} | {prev} "
                     f"| {r['load']} |")
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
