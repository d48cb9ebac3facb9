"""Run time of every method at paper scale (issue 19 item 7: "every method at paper scale returns in
<= 10 s on 2 cores").

Protocol (benchmarks/README.md, "Method times at paper scale"):

* instance: ``optsched.generate(family, "paper", seed)`` (default seed 0), built once per family;
* every ``algorithm`` and ``baseline`` method of the family runs through ``optsched.solve(inst,
  method)`` with no time limit (they have none to respect: the claim is about their own run
  time); ``exact`` and ``bound`` methods take a time limit by design, so they run with
  ``time_limit = --limit`` (10 s) and the row records how far past it they returned;
* the time is the process CPU time (``time.process_time``) of the ``solve`` call, verify included,
  so a busy machine stretches wall time but not the figure; wall time is recorded too;
* a method is repeated ``--repeats`` times (median reported) only while its first run is cheap
  (< ``--cheap`` CPU-s), so slow methods run once;
* the 1-minute load average at the start of each method is recorded beside it.

Usage::

    python benchmarks/method_times.py [--family F]... [--method M]... [--seed 0] [--repeats 3]
                                      [--kinds algorithm baseline] [--limit 10] [--out FILE.jsonl]

Prints a markdown table (family, method, kind, median CPU-s, wall s, runs, objective, load) and
lists the methods over the limit.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

import optsched
from optsched.registry import families, methods

LIMIT = 10.0


def time_method(inst: Any, name: str, kind: str, repeats: int, cheap: float,
                limit: float) -> dict[str, Any]:
    """CPU and wall seconds of ``optsched.solve(inst, name)`` (median over the runs made)."""
    time_limit = limit if kind in ("exact", "bound") else None
    cpu, wall, objective, status = [], [], None, None
    load = os.getloadavg()[0]
    for i in range(max(repeats, 1)):
        c0, w0 = time.process_time(), time.perf_counter()
        res = optsched.solve(inst, name, time_limit=time_limit)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
        objective = res.objective if res.objective != float("inf") else res.lower_bound
        status = res.status.value
        if cpu[0] >= cheap:
            break
    return {"method": name, "kind": kind, "cpu_s": statistics.median(cpu),
            "wall_s": statistics.median(wall), "runs": len(cpu), "objective": objective, "status": status,
            "time_limit": time_limit, "load": round(load, 2)}


def run_family(family: str, seed: int, names: list[str] | None, kinds: list[str],
               repeats: int, cheap: float, limit: float) -> list[dict[str, Any]]:
    """Every selected method of ``family`` on its paper instance ``seed``."""
    inst = optsched.generate(family, "paper", seed)
    rows = []
    for m in methods(family):
        if m.kind not in kinds or (names and m.name not in names):
            continue
        row = {"family": family, "seed": seed,
               **time_method(inst, m.name, m.kind, repeats, cheap, limit)}
        print(line(row, limit), flush=True)
        rows.append(row)
    return rows


def line(r: dict[str, Any], limit: float) -> str:
    flag = " **over**" if r["cpu_s"] > limit + (r["time_limit"] or 0) * 0.5 else ""
    obj = "-" if r["objective"] is None else f"{r['objective']:.6g}"
    return (f"| {r['family']} | {r['method']} | {r['kind']} | {r['cpu_s']:.2f}{flag} "
            f"| {r['wall_s']:.2f} | {r['runs']} | {obj} | {r.get('status')} | {r['load']} |")


HEAD = ("| family | method | kind | CPU s (median) | wall s | runs | objective | status | load |\n"
        "|---|---|---|---|---|---|---|---|---|")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", action="append", choices=sorted(families()))
    ap.add_argument("--method", action="append")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cheap", type=float, default=2.0,
                    help="repeat a method only when its first run took less CPU-s than this")
    ap.add_argument("--kinds", nargs="+", default=["algorithm", "baseline"],
                    choices=["exact", "bound", "algorithm", "baseline"])
    ap.add_argument("--limit", type=float, default=LIMIT)
    ap.add_argument("--out", help="append one JSON row per method to this file")
    args = ap.parse_args()
    print(HEAD, flush=True)
    rows = []
    for family in args.family or list(families()):
        got = run_family(family, args.seed, args.method, args.kinds, args.repeats, args.cheap,
                         args.limit)
        rows += got
        if args.out:
            with Path(args.out).open("a") as fh:
                for r in got:
                    fh.write(json.dumps(r) + "\n")
    slow = [f"{r['family']}.{r['method']} {r['cpu_s']:.1f}" for r in rows
            if r["time_limit"] is None and r["cpu_s"] > args.limit]
    print(f"\nover {args.limit:g} CPU-s: {', '.join(slow) or 'none'}")


if __name__ == "__main__":
    main()
