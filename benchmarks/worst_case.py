"""Worst instances of every paper algorithm: search vs random sampling vs the ratio suite.

Usage::

    python benchmarks/worst_case.py [--budget S] [--time-limit 10] [--workers 1]
                                    [--family F ...] [--out /tmp/worst_case]
                                    [--ratios /tmp/ratios_now] [--readme] [--save-data]
    python benchmarks/worst_case.py --validate [--budget 600]     # item 5 of issue 12

For every family and every method of kind ``algorithm`` (each reading is its own method), at the
family's tiny preset and size bound:

- ``search``: ``optsched worst FAMILY --method M --budget B --seed 0`` (one run per method);
- ``random``: generator instances for the same budget B (one run per family; each instance's exact
  optimum is shared by all the family's algorithms, so each gets the full budget B);
- ``suite``: the max ALG/OPT of the default ``optsched ratios`` run (read from ``--ratios DIR``'s
  ``summary.csv``; the run is made there first if the folder has none);
- ``bound``: the paper's claimed guarantee evaluated on the instance the search found.

Both strategies use the per-solve limit ``--time-limit`` and count only proven optima. With
``--readme`` the table replaces the section between the worst-case markers of
benchmarks/README.md (appended the first time); with ``--save-data`` every instance above its
claimed bound is written to tests/data/<family>/worst_<method>.json.

``--validate`` runs the two checks of the search itself: hetero_gpu on one GPU (generator override
``n_gpus=(1, 1)``, so alpha = 1 and Theorem 4 claims 3), size 10 tasks, Hare, random starts (never
the shipped counterexample), until a ratio > 3 or the budget; and ring_contention sjf_bco against
the ratio suite's max. It prints the time to the first ratio above 3.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path

from optsched.experiments.worst import run_worst
from optsched.registry import families

ROOT = Path(__file__).resolve().parent.parent
#: Search seconds of the whole table (about 20 min of wall time with start-up and shrinking),
#: and the largest budget per run.
TOTAL, MAX_BUDGET = 900.0, 45.0
BEGIN, END = "<!-- worst_case:begin -->", "<!-- worst_case:end -->"


def suite_max(ratios_dir: Path) -> dict:
    """(family, method) -> max ALG/OPT of the default ratio suite (run it if missing)."""
    summary = ratios_dir / "summary.csv"
    if not summary.exists():
        from optsched.experiments.ratios import run_ratios

        run_ratios(out=ratios_dir, progress=False)
    out = {}
    with summary.open() as fh:
        for row in csv.DictReader(fh):
            if row.get("alg_opt_max"):
                out[(row["family"], row["method"])] = float(row["alg_opt_max"])
    return out


def algorithms(family) -> list[str]:
    return [m.name for m in family.methods if m.kind == "algorithm" and not m.relaxed]


def run_table(args) -> list[dict]:
    suite = suite_max(Path(args.ratios))
    rows = []
    for name, fam in families().items():
        if args.family and name not in args.family:
            continue
        methods = algorithms(fam)
        t = time.perf_counter()
        rnd = finished(Path(args.out) / name / "random") or run_worst(
            name, methods, strategy="random", budget=args.budget, time_limit=args.time_limit,
            seed=args.seed, workers=args.workers, out=Path(args.out) / name / "random",
            plots=False)
        print(f"{name}: random {rnd.evaluations} instances in {time.perf_counter() - t:.0f} s",
              flush=True)
        for method in methods:
            t = time.perf_counter()
            res = finished(Path(args.out) / name / method) or run_worst(
                name, method, budget=args.budget, time_limit=args.time_limit, seed=args.seed,
                workers=args.workers, out=Path(args.out) / name / method)
            r = rnd.per_method.get(method) or {}
            row = {"family": name, "method": method, "search": res.ratio,
                   "found": res.ratio_found, "size": res.size, "size_bound": res.size_bound,
                   "evals": res.evaluations, "time_to_best": res.time_to_best,
                   "random": r.get("ratio"), "random_evals": rnd.evaluations,
                   "suite": suite.get((name, method)), "bound": res.guarantee,
                   "exceeds": bool(res.exceeds_guarantee), "instance": res.instance,
                   "violations": len(res.violations), "wall_s": time.perf_counter() - t,
                   "budget": args.budget}
            rows.append(row)
            print(f"  {method}: search {_f(res.ratio)} (found {_f(res.ratio_found)}, "
                  f"{res.evaluations} evals) random {_f(r.get('ratio'))} suite "
                  f"{_f(row['suite'])} bound {_f(res.guarantee)}"
                  + ("  EXCEEDED" if row["exceeds"] else ""), flush=True)
            if row["exceeds"] and args.save_data:
                save_instance(name, method, res)
    return rows


def finished(out: Path):
    """The result of a run that already finished in ``out`` (a killed table resumes there)."""
    from optsched.experiments.worst import WorstResult

    path = out / "result.json"
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    return WorstResult(**{**data, "schedules": {}})


def save_instance(family: str, method: str, res) -> Path:
    """tests/data/<family>/worst_<method>.json (the shrunk instance, named by what it shows)."""
    from optsched.io import dump
    from optsched.registry import get_family

    inst = get_family(family).problem.Instance.from_dict(
        {**res.instance, "name": f"worst-{method}-ratio-{res.ratio:.4g}-bound-{res.guarantee:.4g}"})
    path = ROOT / "tests" / "data" / family / f"worst_{method}.json"
    dump(inst, path)
    print(f"  wrote {path.relative_to(ROOT)}")
    return path


def _f(x, digits=4) -> str:
    return "-" if x is None else f"{x:.{digits}g}"


def markdown(rows: list[dict], args, load) -> str:
    import textwrap

    lines = [
        BEGIN,
        "## `optsched worst`: worst instances of the paper algorithms "
        "(`benchmarks/worst_case.py`)",
        "",
    ]
    lines += textwrap.wrap(
        f"Tiny preset and size bound of each family, budget {args.budget:g} s per search and "
        f"{args.budget:g} s of random sampling per family (each sampled instance serves all its "
        f"algorithms), {args.time_limit:g} s per solve, seed {args.seed}, `--workers "
        f"{args.workers}`, load average {load}. Ratios are ALG/OPT with OPT proven optimal. "
        "*search*: (1+λ) mutation search, then shrinking (the ratio of the shrunk instance; the "
        "ratio found before shrinking in brackets when different) and the instance's size / bound; "
        "*random*: max over generator instances at the same budget; *suite*: max of the default "
        "`optsched ratios` run; *bound*: the paper's claimed guarantee on the searched instance "
        "(`!` = exceeded).", width=100)
    lines += [
        "",
        "| family | algorithm | search (size) | evals | best after s | random (evals) | suite max "
        "| claimed bound |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        found = "" if r["found"] is None or r["search"] is None or \
            abs(r["found"] - r["search"]) < 1e-9 else f" [{_f(r['found'])}]"
        size = "" if r["size"] is None else f" ({r['size']}/{r['size_bound']})"
        bound = _f(r["bound"]) + (" !" if r["exceeds"] else "")
        lines.append(f"| {r['family']} | {r['method']} | {_f(r['search'])}{found}{size} | "
                     f"{r['evals']} | {_f(r['time_to_best'], 3)} | {_f(r['random'])} "
                     f"({r['random_evals']}) | {_f(r['suite'])} | {bound} |")
    wins = sum(1 for r in rows if r["search"] is not None and
               (r["random"] is None or r["search"] > r["random"] + 1e-9))
    ties = sum(1 for r in rows if r["search"] is not None and r["random"] is not None and
               abs(r["search"] - r["random"]) <= 1e-9)
    lines += [""] + textwrap.wrap(
        f"Search beats random sampling on {wins} of {len(rows)} algorithms ({ties} ties). "
        f"Re-run: `python benchmarks/worst_case.py --budget {args.budget:g} --readme`.",
        width=100) + [END]
    return "\n".join(lines) + "\n"


def write_readme(text: str) -> None:
    path = ROOT / "benchmarks" / "README.md"
    old = path.read_text()
    if BEGIN in old and END in old:
        head, rest = old.split(BEGIN, 1)
        tail = rest.split(END, 1)[1].lstrip("\n")
        new = head + text + ("\n" + tail if tail else "")
    else:
        new = old.rstrip("\n") + "\n\n" + text
    path.write_text(new)


def validate(args) -> None:
    """Item 5 of issue 12: rediscover a Theorem-4 violation; beat the suite on ring_contention."""
    out = Path(args.out)
    t = time.perf_counter()
    res = run_worst("hetero_gpu", "hare", size=10, overrides={"n_gpus": (1, 1)},
                    budget=args.budget, time_limit=args.time_limit, seed=args.seed,
                    workers=args.workers, out=out / "validate_hetero_gpu", stop_at=3.0 + 1e-3)
    print(f"hetero_gpu hare, one GPU (alpha = 1, claimed bound 3), size <= 10 tasks, seed "
          f"{args.seed}: best ratio {_f(res.ratio_found)} after {_f(res.time_to_best, 3)} s; "
          f"first ratio > 3 after {_f(res.first_above(3.0), 3)} s "
          f"({res.evaluations} evaluations, wall {time.perf_counter() - t:.0f} s); shrunk "
          f"instance: ratio {_f(res.ratio)}, size {res.size}, bound {_f(res.guarantee)}")
    if res.exceeds_guarantee and args.save_data:
        save_instance("hetero_gpu", "hare", res)
    suite = suite_max(Path(args.ratios)).get(("ring_contention", "sjf_bco"))
    ring = run_worst("ring_contention", "sjf_bco", budget=min(args.budget, 120),
                     time_limit=args.time_limit, seed=args.seed, workers=args.workers,
                     out=out / "validate_ring_contention")
    print(f"ring_contention sjf_bco: search {_f(ring.ratio)} (found {_f(ring.ratio_found)} "
          f"after {_f(ring.time_to_best, 3)} s) vs ratio-suite max {_f(suite)}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--budget", type=float, default=None,
                   help=f"seconds per run (default: {TOTAL:g} s / number of runs, at most "
                        f"{MAX_BUDGET:g})")
    p.add_argument("--time-limit", type=float, default=10.0, help="seconds per solve")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--family", action="append")
    p.add_argument("--out", default="/tmp/worst_case")
    p.add_argument("--ratios", default="/tmp/ratios_now", help="folder of a default ratios run")
    p.add_argument("--readme", action="store_true", help="write the table to benchmarks/README.md")
    p.add_argument("--save-data", action="store_true",
                   help="write instances above their claimed bound to tests/data/")
    p.add_argument("--validate", action="store_true", help="the two checks of the search")
    p.add_argument("--from-json", metavar="FILE",
                   help="no runs: re-tabulate OUT/worst_case.json of an earlier run")
    args = p.parse_args(argv)
    if args.validate:
        args.budget = args.budget or 600.0
        validate(args)
        return 0
    if args.budget is None:
        runs = sum(len(algorithms(f)) + 1 for n, f in families().items()
                   if not args.family or n in args.family)
        args.budget = min(MAX_BUDGET, TOTAL / max(runs, 1))
    start = time.perf_counter()
    if args.from_json:                  # re-tabulate a finished run (e.g. against a newer suite)
        rows = json.loads(Path(args.from_json).read_text())
        args.budget = rows[0].get("budget", args.budget) if rows else args.budget
        suite = suite_max(Path(args.ratios))
        for row in rows:
            row["suite"] = suite.get((row["family"], row["method"]))
    else:
        rows = run_table(args)
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    if args.from_json and rows:
        load = rows[0].get("load", load)
    for row in rows:
        row["load"] = load
    text = markdown(rows, args, load)
    print(text)
    if not args.from_json:
        (Path(args.out) / "worst_case.json").write_text(json.dumps(rows, indent=1) + "\n")
    if args.readme:
        write_readme(text)
    print(f"total {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
