"""``optsched compare``: the paper's algorithm(s) against its baselines at paper scale.

No exact optimum here: every ``algorithm`` and ``baseline`` method of the family runs on the same
seeded ``preset`` instances, and each objective is reported relative to the paper's algorithm (the
family's default method) on the same instance -- the normalised-objective bar chart most of the
papers use as their headline figure.

A family tunes the comparison with its :class:`~optsched.family.CompareSpec` (methods to run,
reference, figure labels).
"""

from __future__ import annotations

import csv
import math
import statistics
import sys
import time
from pathlib import Path

from optsched.errors import InfeasibleSchedule
from optsched.experiments.ratios import _exc_text, _progress, versions
from optsched.experiments.table import _align

COMPARE_FIELDS = ("family", "preset", "seed", "method", "kind", "status", "objective", "relative",
                  "runtime_s", "error")


def run_compare(family: str, preset: str = "paper", seeds=3, out=None, time_limit=None,
                progress=None):
    """Run every algorithm and baseline of ``family`` on ``seeds`` instances of ``preset``.

    Parameters
    ----------
    family, preset
        The family and the workload preset (default ``paper``: the paper's evaluation scale).
    seeds
        Number of seeds (0..N-1) or an iterable of seeds.
    out
        Folder for ``compare.csv`` (one row per instance x method) and ``compare.png``.
    time_limit
        Passed to every method (None: no limit).
    progress
        Progress bar; None = only when stderr is a terminal.

    Returns
    -------
    (rows, table_text)
        Rows with the keys of :data:`COMPARE_FIELDS`; the summary table as text.
    """
    from optsched.registry import get_family

    spec = get_family(family)
    entries, reference = spec.compare_methods()
    seed_list = list(range(seeds)) if isinstance(seeds, int) else [int(s) for s in seeds]
    rows = []
    bar = _progress(progress, total=len(seed_list) * len(entries), initial=0)
    try:
        for seed in seed_list:
            inst = spec.generate(preset, seed)    # InvalidInstance (bad preset) -> CLI exit 2
            instance_rows = []
            for entry in entries:
                instance_rows.append(_run(inst, entry, family, preset, seed, time_limit))
                bar.update(1)
            ref = next((r["objective"] for r in instance_rows if r["method"] == reference), None)
            for r in instance_rows:
                if ref is not None and r["objective"] is not None and ref > 0:
                    r["relative"] = r["objective"] / ref
            rows += instance_rows
    finally:
        bar.close()
    table = format_compare(rows, reference)
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        write_compare_csv(rows, out / "compare.csv")
        from optsched.experiments.plot import plot_compare

        n = len(seed_list)
        title = spec.compare.title or (f"{family} ({preset}, {n} seed{'s' * (n != 1)}): "
                                       f"objective relative to {reference}")
        plot_compare(rows, out / "compare.png", family, reference, title=title,
                     ylabel=spec.compare.ylabel)
    return rows, table


def _run(inst, entry, family, preset, seed, time_limit) -> dict:
    from optsched.registry import solve

    row = dict.fromkeys(COMPARE_FIELDS)
    row.update(family=family, preset=preset, seed=seed, method=entry.name, kind=entry.kind)
    start = time.perf_counter()
    try:
        result = solve(inst, entry.name, time_limit=time_limit, seed=seed)
    except InfeasibleSchedule as exc:
        row.update(status="violation", error=f"InfeasibleSchedule: {exc}",
                   runtime_s=time.perf_counter() - start)
        return row
    except Exception as exc:  # noqa: BLE001 - reported in the table, never swallowed
        row.update(status="error", error=_exc_text(exc), runtime_s=time.perf_counter() - start)
        return row
    objective = None if math.isinf(result.objective) else result.objective
    row.update(status=result.status.value, objective=objective, runtime_s=result.runtime_s)
    return row


def summarize_compare(rows: list[dict], reference: str) -> list[dict]:
    """Per method: instances, mean objective, mean/min/max relative to ``reference``, median time."""
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(r["method"], []).append(r)
    out = []
    for method, group in groups.items():
        objs = [r["objective"] for r in group if r["objective"] is not None]
        rel = [r["relative"] for r in group if r["relative"] is not None]
        times = [r["runtime_s"] for r in group if r["runtime_s"] is not None]
        out.append({
            "method": method, "kind": group[0]["kind"], "instances": len(group),
            "objective_mean": statistics.fmean(objs) if objs else None,
            "relative_mean": statistics.fmean(rel) if rel else None,
            "relative_min": min(rel) if rel else None, "relative_max": max(rel) if rel else None,
            "runtime_median_s": statistics.median(times) if times else None,
            "failures": sum(r["status"] in ("error", "violation") or r["objective"] is None
                            for r in group),
        })
    out.sort(key=lambda s: (s["method"] != reference, s["kind"] != "algorithm"))
    return out


def format_compare(rows: list[dict], reference: str) -> str:
    """The compare table plus notes on failures."""
    def f(v, spec):
        return "" if v is None else format(v, spec)

    header = ("method", "kind", "n", "mean objective", f"/ {reference}", "min", "max",
              "median time s", "fail")
    lines = [(s["method"] + (" *" if s["method"] == reference else ""), s["kind"],
              str(s["instances"]), f(s["objective_mean"], ".6g"), f(s["relative_mean"], ".3f"),
              f(s["relative_min"], ".3f"), f(s["relative_max"], ".3f"),
              f(s["runtime_median_s"], ".3f"), str(s["failures"]))
             for s in summarize_compare(rows, reference)]
    text = _align(header, lines, right_from=2)
    if rows:
        r0 = rows[0]
        n = len({r["seed"] for r in rows})
        notes = [f"{r0['family']}, preset {r0['preset']}, {n} seed(s); * = the paper's algorithm; "
                 f"relative = objective / {reference} on the same instance (> 1 is worse)."]
    else:
        notes = ["no rows"]
    for r in rows:
        if r["status"] in ("error", "violation") or (r["objective"] is None and r["error"]):
            notes.append(f"  {r['method']} seed {r['seed']}: {r['error']}")
        elif r["objective"] is None:
            notes.append(f"  {r['method']} seed {r['seed']}: no schedule (status {r['status']})")
    return text + "\n\n" + "\n".join(notes)


def write_compare_csv(rows: list[dict], path: str | Path) -> None:
    """One line per instance x method (``versions`` of the run in the file's last columns)."""
    path = Path(path)
    v = versions()
    fields = COMPARE_FIELDS + tuple(f"version_{k}" for k in v)
    tmp = path.with_suffix(".csv.tmp")
    with tmp.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        for r in rows:
            writer.writerow({**{k: ("" if r.get(k) is None else r[k]) for k in COMPARE_FIELDS},
                             **{f"version_{k}": val for k, val in v.items()}})
    tmp.replace(path)


if __name__ == "__main__":   # python -m optsched.experiments.compare FAMILY [PRESET] [SEEDS]
    args = sys.argv[1:]
    _, text = run_compare(args[0], *(args[1:2] or ["paper"]), *(map(int, args[2:3])))
    print(text)
