"""Exact reach: the largest instance size at which each exact engine proves optimality (issue 14).

Usage::

    python benchmarks/exact_reach.py [--family F ...] [--engine milp|cp ...] [--time-limit 60]
                                     [--seeds 3] [--budget 1500] [--sizes 4 6 8 ...]
                                     [--out benchmarks/results/exact_reach.csv]

Protocol (benchmarks/README.md, "Exact reach"):

* per family a size ladder; at each size ``--seeds`` instances (seeds ``0..N-1``) from the
  family's ``small`` distribution with the generator's size override set to the size
  (:data:`LADDERS`: hetero_gpu ``max_tasks`` = size and ``n_jobs`` = ceil(0.6 size), so the task
  count is the size; edge_cloud ``n_jobs`` = size; elastic_cluster ``n_jobs`` = (size, size)
  (architecture ``ps`` for even seeds, ``allreduce`` for odd ones, as the preset); ring_contention ``sizes`` = the small mix of
  GPUs per job {1:3, 2:2, 4:1} repeated to ``size`` jobs); cojob_network from ``tiny`` (2 machines,
  1-2 jobs and 1-2 stages per cojob) with ``cojobs`` = (size, size);
* engines: ``milp`` = the registry's ``exact`` (``optsched.solve(inst, "exact", time_limit=...)``,
  HiGHS, threads = 1, gap 0) and ``cp`` = each family's registered ``exact_cp`` (CP-SAT, one
  worker), each with the same time limit, seed 0, one instance at a time in this process;
* "proven" = status ``optimal`` after ``verify`` (the registry's ``make_result`` path for both
  engines, so a model objective that disagrees with ``verify`` is demoted and not proven);
* an engine's ladder stops after the first size where it proves fewer than all instances (the
  remaining instances of that size are skipped once one is unproven), and the whole run stops
  starting new solves after ``--budget`` seconds (a family after ``--family-budget``);
* where both engines prove an instance, their optima must agree (``optsched.tolerance.close``);
  a disagreement is printed and recorded in the CSV, never averaged away.

Output: one CSV row per (family, engine, size, seed) with status, objective, bound, wall time, the
process CPU time of the solve (on a shared machine the CPU share a solve got is cpu_s / runtime_s)
and the 1-minute load average at its start; then a markdown table per family (size, mean instance
size, proven per engine, median time per engine, time ratio MILP/CP-SAT) and a summary (largest
size with every instance proven). The median at a size where some instance was not proven counts
the unproven ones at the time limit (printed with ``>=``).
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import optsched
from optsched import tolerance
from optsched.deadline import Deadline
from optsched.registry import get_method, make_result
from optsched.result import Result, SolveStatus


@dataclass(frozen=True)
class Ladder:
    """A family's size ladder: ``overrides(size)`` for ``generate(family, "small", seed, ...)`` and
    ``measure(instance)``, the actual size of an instance (tasks or jobs)."""

    sizes: tuple[int, ...]
    overrides: Callable[[int], dict]
    measure: Callable[[Any], int]
    unit: str
    preset: str = "small"


LADDERS: dict[str, Ladder] = {
    "hetero_gpu": Ladder((4, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40),
                         lambda n: {"max_tasks": n, "n_jobs": (max(2, math.ceil(0.6 * n)),) * 2},
                         lambda inst: len(inst.tasks), "tasks"),
    "edge_cloud": Ladder((4, 6, 8, 10, 12, 16, 20, 24, 28, 32, 40),
                         lambda n: {"n_jobs": n}, lambda inst: len(inst.jobs), "jobs"),
    "elastic_cluster": Ladder((4, 6, 8, 10, 12, 16, 20, 24, 32),
                              lambda n: {"n_jobs": (n, n)}, lambda inst: len(inst.jobs), "jobs"),
    "ring_contention": Ladder((4, 6, 8, 10, 12, 16, 20, 24, 32),
                              lambda n: {"sizes": _ring_sizes(n)}, lambda inst: len(inst.jobs),
                              "jobs"),
    "cojob_network": Ladder((2, 3, 4, 5, 6, 7, 8, 10, 12),
                            lambda n: {"cojobs": (n, n)}, lambda inst: len(inst.cojobs), "cojobs",
                            "tiny"),
}

ENGINES = ("milp", "cp")


def _ring_sizes(n: int) -> tuple[int, ...]:
    """ring_contention's ``small`` job mix {1:3, 2:2, 4:1} (GPUs per job) repeated to ``n`` jobs
    (2 servers x 4 GPUs and the horizon T = 60 stay as in ``small``)."""
    base = (1, 1, 1, 2, 2, 4)
    return tuple(base[i % len(base)] for i in range(n))
FIELDS = ("family", "engine", "size", "seed", "instance_size", "status", "proven", "objective",
          "lower_bound", "runtime_s", "cpu_s", "load1", "note")


def run_engine(engine: str, inst, time_limit: float) -> Result:
    """One solve of ``inst`` by ``engine``, verified through the registry's ``make_result``."""
    if engine == "milp":
        return optsched.solve(inst, "exact", time_limit=time_limit, seed=0)
    entry = get_method(inst.FAMILY, "exact_cp")
    start = time.perf_counter()
    outcome = entry.run(inst, Deadline.after(time_limit), 0)
    return make_result(inst, entry, outcome, time.perf_counter() - start, 0)


def ladder(family: str, engines: list[str], *, sizes: tuple[int, ...], seeds: int,
           time_limit: float, stop_at: float, writer, log) -> list[dict]:
    """Run the ladder of ``family``; returns the rows (also written to ``writer``)."""
    spec = LADDERS[family]
    rows: list[dict] = []
    active = list(engines)
    for size in sizes:
        if not active:
            break
        instances = [optsched.generate(family, spec.preset, seed, **spec.overrides(size))
                     for seed in range(seeds)]
        for engine in list(active):
            failed = False
            objectives: dict[int, float] = {}
            for seed, inst in enumerate(instances):
                row = {"family": family, "engine": engine, "size": size, "seed": seed,
                       "instance_size": spec.measure(inst), "load1": round(os.getloadavg()[0], 2),
                       "note": ""}
                if failed or time.perf_counter() > stop_at:
                    row.update(status="skipped", proven=False, objective="", lower_bound="",
                               runtime_s="", cpu_s="", note="budget" if not failed else "size already failed")
                else:
                    cpu = time.process_time()
                    res = run_engine(engine, inst, time_limit)
                    row["cpu_s"] = round(time.process_time() - cpu, 4)
                    proven = res.status is SolveStatus.OPTIMAL
                    row.update(status=res.status.value, proven=proven,
                               objective=res.objective if math.isfinite(res.objective) else "",
                               lower_bound="" if res.lower_bound is None else res.lower_bound,
                               runtime_s=round(res.runtime_s, 4))
                    if proven:
                        objectives[seed] = res.objective
                    failed = failed or not proven
                rows.append(row)
                writer.writerow(row)
                log(f"{family:16s} {engine:4s} size {size:3d} seed {seed} "
                    f"({row['instance_size']} {spec.unit}) {row['status']:10s} "
                    f"{row['runtime_s']!s:>8s} s (cpu {row['cpu_s']!s:>8s})  obj {row['objective']!s:>10s}  load {row['load1']}")
            if failed:
                active.remove(engine)
        _check_agreement(rows, family, size, log)
    return rows


def _check_agreement(rows: list[dict], family: str, size: int, log) -> None:
    """Flag instances where both engines proved different optima."""
    proven: dict[int, dict[str, float]] = {}
    for r in rows:
        if r["family"] == family and r["size"] == size and _true(r["proven"]):
            proven.setdefault(r["seed"], {})[r["engine"]] = float(r["objective"])
    for seed, objs in proven.items():
        if len(objs) == 2 and not tolerance.close(objs["milp"], objs["cp"]):
            log(f"DISAGREEMENT {family} size {size} seed {seed}: {objs}")
            for r in rows:
                if r["family"] == family and r["size"] == size and r["seed"] == seed:
                    r["note"] = f"DISAGREEMENT milp {objs['milp']} cp {objs['cp']}"


def summarise(rows: list[dict], family: str, engines: list[str], seeds: int,
              time_limit: float) -> str:
    """The markdown table of one family's ladder."""
    spec = LADDERS[family]
    sizes = sorted({r["size"] for r in rows if r["family"] == family})
    name = {"milp": "MILP", "cp": "CP-SAT"}
    head = ["size", f"mean {spec.unit}"]
    for e in engines:
        head += [f"{name[e]} proven", f"{name[e]} median s"]
    if len(engines) == 2:
        head.append("MILP/CP-SAT")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for size in sizes:
        sel = [r for r in rows if r["family"] == family and r["size"] == size]
        inst_sizes = {r["seed"]: r["instance_size"] for r in sel}
        cells = [str(size), f"{statistics.mean(inst_sizes.values()):.1f}"]
        medians = {}
        for e in engines:
            er = [r for r in sel if r["engine"] == e]
            if not er:
                cells += ["-", "-"]
                continue
            n_proven = sum(_true(r["proven"]) for r in er)
            ran = [r for r in er if r["status"] != "skipped"]
            skipped = len(er) - len(ran)
            cells.append(f"{n_proven}/{len(ran)}" + (f" ({skipped} not run)" if skipped else ""))
            if n_proven == len(er):
                medians[e] = statistics.median(float(r["runtime_s"]) for r in er)
                cells.append(f"{medians[e]:.2f}")
            else:  # unproven and skipped instances count at the time limit
                times = [float(r["runtime_s"]) if _true(r["proven"]) else time_limit for r in er]
                cells.append(f">= {statistics.median(times):.1f}" if ran else "-")
        if len(engines) == 2:
            ratio = (medians["milp"] / max(medians["cp"], 1e-3)
                     if "milp" in medians and "cp" in medians else None)
            cells.append("-" if ratio is None else f"{ratio:.0f}x" if ratio >= 10 else f"{ratio:.1f}x")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _true(value: Any) -> bool:
    """A CSV or in-memory ``proven`` value as a bool."""
    return value is True or value == "True"


def reach(rows: list[dict], family: str, engine: str) -> int | None:
    """Largest size of the ladder up to which every instance was proven (None: not even the first)."""
    best = None
    for size in sorted({r["size"] for r in rows if r["family"] == family}):
        er = [r for r in rows if r["family"] == family and r["size"] == size and r["engine"] == engine]
        if not er or not all(_true(r["proven"]) for r in er):
            break
        best = size
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--family", action="append", choices=sorted(LADDERS))
    ap.add_argument("--engine", action="append", choices=ENGINES)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--budget", type=float, default=1500.0,
                    help="seconds after which no new solve starts (whole run)")
    ap.add_argument("--family-budget", type=float, default=None,
                    help="seconds per family after which its ladder starts no new solve")
    ap.add_argument("--sizes", type=int, nargs="+", help="override every family's ladder")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/exact_reach.csv"))
    ap.add_argument("--from-csv", type=Path, nargs="+",
                    help="print the tables of earlier runs' CSVs (nothing is solved)")
    args = ap.parse_args(argv)
    if args.from_csv:
        return report_csv(args.from_csv, args.time_limit)
    families = args.family or list(LADDERS)
    engines = [e for e in ENGINES if e in (args.engine or ENGINES)]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    stop_at = start + args.budget
    load0 = os.getloadavg()

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    for family in families:  # warm-up: imports and first-call costs stay out of the timings
        warm = optsched.generate(family, "tiny", 0)
        for engine in engines:
            run_engine(engine, warm, args.time_limit)
    rows: list[dict] = []
    with args.out.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, FIELDS)
        writer.writeheader()

        class Flushing:
            def writerow(self, row):
                writer.writerow(row)
                fh.flush()

        for family in families:
            sizes = tuple(args.sizes) if args.sizes else LADDERS[family].sizes
            family_stop = stop_at if args.family_budget is None else min(
                stop_at, time.perf_counter() + args.family_budget)
            rows += ladder(family, engines, sizes=sizes, seeds=args.seeds,
                           time_limit=args.time_limit, stop_at=family_stop, writer=Flushing(),
                           log=log)
    wall = time.perf_counter() - start
    load1 = os.getloadavg()
    print(f"# Exact reach ({args.seeds} instances per size, {args.time_limit:g} s limit, "
          f"threads = 1; wall {wall / 60:.1f} min; load average {load0[0]:.1f} at start, "
          f"{load1[0]:.1f} at end, {os.cpu_count()} cores)\n")
    _print_tables(rows, families, engines, args.seeds, args.time_limit)
    bad = [r for r in rows if r["note"].startswith("DISAGREEMENT")]
    if bad:
        print(f"\n{len(bad)} rows with DISAGREEING optima (see the CSV)")
    print(f"\nCSV: {args.out}")
    return 1 if bad else 0


def report_csv(paths: list[Path], time_limit: float) -> int:
    """The summary and per-family tables of the rows in ``paths``."""
    rows: list[dict] = []
    for path in paths:
        with path.open() as fh:
            for r in csv.DictReader(fh):
                r["size"], r["seed"] = int(r["size"]), int(r["seed"])
                r["instance_size"] = int(r["instance_size"])
                rows.append(r)
    families = list(dict.fromkeys(r["family"] for r in rows))
    engines = [e for e in ENGINES if any(r["engine"] == e for r in rows)]
    seeds = max(r["seed"] for r in rows) + 1
    _print_tables(rows, families, engines, seeds, time_limit)
    return 0


def _print_tables(rows: list[dict], families: list[str], engines: list[str], seeds: int,
                  time_limit: float) -> None:
    name = {"milp": "MILP (exact)", "cp": "CP-SAT (exact_cp)"}
    print("| family | " + " | ".join(f"{name[e]}: all proven up to" for e in engines) + " |")
    print("|---|" + "---|" * len(engines))
    for family in families:
        cells = []
        for e in engines:
            r = reach(rows, family, e)
            cells.append("none" if r is None else f"{r} {LADDERS[family].unit}")
        print(f"| {family} | " + " | ".join(cells) + " |")
    for family in families:
        print(f"\n### {family}\n")
        print(summarise(rows, family, engines, seeds, time_limit))


if __name__ == "__main__":
    raise SystemExit(main())
