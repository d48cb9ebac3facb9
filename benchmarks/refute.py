"""Automatic refutation (issue 23): can ``optsched worst`` rediscover the known violations of the
papers' claims unaided, from tiny random starts, and which search strategy finds them first?

Claims (docs/errata.md):

- ``hare_thm4``       hetero_gpu ``hare`` above alpha(2+alpha) (H1 class), ``--target violation``;
- ``hare_thm4_1gpu``  the same restricted to alpha = 1 (generator override ``n_gpus=(1, 1)``, size
  <= 10 tasks, as issue 12's validation): the guarantee stays at its smallest, 3;
- ``pda_thm2``        cojob_network ``pda`` above 2 - 2/(l+1) (G1 class), ``--target violation``;
- ``ring_lemma3``     ring_contention ``sjf_bco`` breaking Lemma 3 (R2), ``--target lemma:lemma3``;
- ``ring_lemma4_proof`` ring_contention ``sjf_bco_proof`` breaking Lemma 4 (R3), on instances
  with b^i >= b^e (``intra_not_slower``: below it the constants' Phi < 1 and the allowed side
  shrinks below theta*, outside the paper's setting);
- ``mincost1_thm1``   elastic_cluster ``a_online`` with a non-optimal A_mincost1 call (Z1),
  ``--target lemma:mincost1`` on PS instances (``architecture=ps``: the claim is about PS jobs).

Every run starts from the family's ``tiny`` generator instances (no hand-made instance is seeded),
stops searching at the first violation (``stop_at`` = 1 + 1e-6) and shrinks it. A row records
whether a violation was found, the factor of the shrunk instance, the elapsed seconds at the first
violation, the evaluations and the load average.

    nice -n 10 .venv/bin/python benchmarks/refute.py --claims hare_thm4 ring_lemma3 \
        --strategies hybrid random --seeds 0 1 2 --budget 120 --out /tmp/refute

For a ``lemma:NAME`` claim every other fresh start is degenerate (zero entries) and every other
fresh restart climbs ALG / the best baseline (``--lemma-climb none``: the lemma's score instead);
the other restarts climb the lemma's factor, its ties broken by the claim's grade where it has
one (``Claim.grade``: Lemma 4's W^_max - ceil(Phi (u/l) theta*), A_mincost1's share of placement
steps that miss the exact placement).

Rows go to ``OUT/rows.jsonl`` (a run already there is not redone); ``--table`` prints the
markdown tables of benchmarks/README.md from it.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from optsched.experiments.worst import run_worst
from optsched.experiments.worst.hypotheses import (
    alpha_defined,
    intra_not_slower,
    released_at_zero,
)
from optsched.tolerance import REL

CLAIMS: dict[str, dict[str, Any]] = {
    "hare_thm4": dict(family="hetero_gpu", method="hare", target="violation", overrides={},
                      hypothesis=alpha_defined),
    "hare_thm4_1gpu": dict(family="hetero_gpu", method="hare", target="violation",
                           overrides={"n_gpus": (1, 1)}, size=10, hypothesis=alpha_defined),
    "pda_thm2": dict(family="cojob_network", method="pda", target="violation", overrides={},
                     hypothesis=released_at_zero),
    "ring_lemma3": dict(family="ring_contention", method="sjf_bco", target="lemma:lemma3",
                        overrides={}),
    "ring_lemma4_proof": dict(family="ring_contention", method="sjf_bco_proof",
                              target="lemma:lemma4", overrides={}, hypothesis=intra_not_slower),
    "mincost1_thm1": dict(family="elastic_cluster", method="a_online", target="lemma:mincost1",
                          overrides={"architecture": "ps"}),
}
STOP = 1 + 1e-6


def run_one(claim: str, strategy: str, seed: int, budget: float, out: Path,
            time_limit: float) -> dict:
    spec = CLAIMS[claim]
    folder = out / f"{claim}-{strategy}-{seed}-b{budget:g}"
    load0 = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), _cpu()
    res = run_worst(spec["family"], spec["method"], seed=seed, budget=budget,
                    time_limit=time_limit, strategy=strategy, target=spec["target"],
                    overrides=spec["overrides"], size=spec.get("size"), stop_at=STOP,
                    out=folder, plots=False, hypothesis=spec.get("hypothesis"))
    first = res.first_above(1 + REL)
    if first is None and res.exceeds_guarantee:
        first = _first_violating_row(folder)   # found while shrinking the best instance
    return {"claim": claim, "strategy": strategy, "seed": seed, "budget": budget,
            "found": first is not None, "time_to_first": first,
            "violation": res.violation, "violation_found": res.violation_found,
            "ratio": res.ratio, "guarantee": res.guarantee, "size": res.size,
            "evaluations": res.evaluations, "pruned": res.pruned, "bound": res.bound,
            "elapsed": round(time.perf_counter() - t0, 1),
            "cpu_s": round(_cpu() - c0, 1), "load_start": round(load0, 2),
            "load_end": round(os.getloadavg()[0], 2), "folder": str(folder)}


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (every evaluation runs in a
    forked child, which time.process_time alone does not count)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _first_violating_row(folder: Path) -> float | None:
    """Elapsed seconds of the first evaluation (any phase) whose claim fails, from the run's
    results.jsonl: the shrinker evaluates smaller and simpler forms of the best instance, and
    one of them can violate where the search's best did not."""
    times = []
    for line in (folder / "results.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row.get("exceeds"):
            times.append(row.get("elapsed") or 0.0)
    return min(times, default=None)


def table(rows: list[dict]) -> str:
    lines = ["| claim | strategy | budget (s) | seed | found | best factor found | factor "
             "shrunk (size) | first violation after (s) | evaluations | load avg |",
             "|---|---|---|---|---|---|---|---|---|---|"]

    def num(x):
        return "-" if x is None else f"{x:.4g}"

    for r in rows:
        t = "-" if r["time_to_first"] is None else f"{r['time_to_first']:.1f}"
        shrunk = f"{num(r['violation'])} ({r['size']})" if r["found"] else "-"
        lines.append(f"| {r['claim']} | {r['strategy']} | {r['budget']:g} | {r['seed']} | "
                     f"{'yes' if r['found'] else 'no'} | {num(r['violation_found'])} | {shrunk} | "
                     f"{t} | {r['evaluations']} | {r['load_start']}-{r['load_end']} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--claims", nargs="+", default=list(CLAIMS), choices=list(CLAIMS))
    ap.add_argument("--strategies", nargs="+", default=["hybrid"],
                    choices=["search", "continuous", "hybrid", "random"])
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--budget", type=float, default=120.0)
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--out", default="/tmp/refute")
    ap.add_argument("--table", action="store_true", help="print the table of OUT/rows.jsonl")
    ap.add_argument("--lemma-climb", choices=("proxy", "none"), default="proxy",
                    help="what every other fresh restart of a lemma target climbs (search."
                         "LEMMA_CLIMB; none: the lemma's score, for comparison; use another --out)")
    ap.add_argument("--no-grade", action="store_true",
                    help="lemma targets: ties of the factor not broken by the claim's grade "
                         "(state.GRADE; the ablation, use another --out)")
    args = ap.parse_args()
    from optsched.experiments.worst import search, state

    search.LEMMA_CLIMB = None if args.lemma_climb == "none" else args.lemma_climb
    state.GRADE = not args.no_grade
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "rows.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []
    if args.table:
        print(table(rows))
        return
    done = {(r["claim"], r["strategy"], r["seed"], r["budget"]) for r in rows}
    for claim in args.claims:
        for strategy in args.strategies:
            for seed in args.seeds:
                if (claim, strategy, seed, args.budget) in done:
                    continue
                row = run_one(claim, strategy, seed, args.budget, out, args.time_limit)
                print(json.dumps(row), flush=True)
                with path.open("a") as fh:
                    fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
