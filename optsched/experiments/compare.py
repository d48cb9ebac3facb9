"""``optsched compare``: the paper's algorithm(s) against its baselines at paper scale.

No exact optimum here: every ``algorithm`` and ``baseline`` method of the family runs on the same
seeded ``preset`` instances, and each objective is reported relative to the paper's algorithm (the
family's default method) on the same instance -- the normalised-objective bar chart most of the
papers use as their headline figure.

A family tunes the comparison with its :class:`~optsched.family.CompareSpec` (methods to run,
reference, bound, figure labels). The family's bound method (``CompareSpec.bound``, else
``lower_bound``) runs on every instance too (issue 14 item 6): its value LB gives every method an
``alg_lb`` = objective / LB, an upper bound on its distance from the unknown optimum. Methods that
solve a relaxed model (``Method.relaxed``, e.g. preemptive baselines) get no ALG/LB: LB bounds the
family's model, not theirs.

With ``certify`` seconds (issue 19 item 4), :func:`optsched.certificate.certify` then runs on
every instance, starting from the verified schedules and the bound just computed: its row
(kind ``certify``) holds the certified interval [LB, UB], and every method gets ``alg_ub`` =
objective / UB beside ``alg_lb`` = objective / LB, with LB the best bound of the instance. The
certified gap UB / LB - 1 says how much of ALG/LB can be the bound's and how much is the
algorithm's.
"""

from __future__ import annotations

import csv
import math
import statistics
import sys
import time
from pathlib import Path

from optsched.errors import InfeasibleSchedule
from optsched.experiments.ratios import exc_text, progress_bar, versions
from optsched.experiments.table import align, wrapped

COMPARE_FIELDS = ("family", "preset", "seed", "method", "kind", "status", "objective", "relative",
                  "lower_bound", "alg_lb", "alg_ub", "runtime_s", "error")
#: Time limit (s) of the bound method when the call has none (bounds at paper scale are LPs or
#: cut loops that may not converge; what they have when stopped is still a valid bound).
BOUND_TIME_LIMIT = 120.0


def run_compare(family: str, preset: str = "paper", seeds=3, out=None, time_limit=None,
                progress=None, certify: float | None = None):
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
        As :func:`~optsched.experiments.ratios.run_ratios` (``"verbose"``: a line per method call).
    certify
        Seconds of :func:`optsched.certificate.certify` per instance (None: not run).

    Returns
    -------
    (rows, table_text)
        Rows with the keys of :data:`COMPARE_FIELDS` (``relative``: objective / the paper
        algorithm's; ``alg_lb``: objective / the best lower bound); the summary table as text.

    Examples
    --------
    >>> rows, table = run_compare("ring_contention", preset="tiny", seeds=1, progress=False)
    >>> ref = next(r for r in rows if r["method"] == "sjf_bco")
    >>> ref["relative"], ref["alg_lb"] >= 1
    (1.0, True)
    """
    from optsched.registry import get_family

    spec = get_family(family)
    entries, reference = spec.compare_methods()
    bound = spec.bound_method()
    relaxed = {e.name for e in entries if e.relaxed}
    seed_list = list(range(seeds)) if isinstance(seeds, int) else [int(s) for s in seeds]
    rows = []
    runs = entries + ([bound] if bound is not None else [])
    bar = progress_bar(progress, total=len(seed_list) * len(runs), initial=0, desc="compare")
    try:
        for seed in seed_list:
            inst = spec.generate(preset, seed)    # InvalidInstance (bad preset) -> CLI exit 2
            instance_rows, results = [], []
            for entry in runs:
                limit = time_limit
                if entry is bound and limit is None:
                    limit = BOUND_TIME_LIMIT
                row, result = _run(inst, entry, family, preset, seed, limit)
                bar.note(_row_line(row))
                instance_rows.append(row)
                if result is not None and entry.name not in relaxed:
                    results.append(result)
                bar.update(1)
            if certify is not None:
                instance_rows.append(_certify(inst, results, family, preset, seed, certify))
            _normalise(instance_rows, reference, relaxed)
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


def _normalise(rows: list[dict], reference: str, relaxed: set[str]) -> None:
    """Set ``relative`` (objective / the reference's, LB / it for the bound row), ``alg_lb``
    (objective / the instance's best LB) and ``alg_ub`` (objective / certify's UB) on one
    instance's rows."""
    ref = next((r["objective"] for r in rows if r["method"] == reference), None)
    lb = max((r["lower_bound"] for r in rows if r["kind"] in ("bound", "certify")
              and r["lower_bound"] is not None), default=None)
    ub = next((r["objective"] for r in rows if r["kind"] == "certify"), None)
    for r in rows:
        value = r["lower_bound"] if r["kind"] == "bound" else r["objective"]
        if ref is not None and value is not None and ref > 0:
            r["relative"] = value / ref
        if r["objective"] is None or r["method"] in relaxed or r["kind"] == "bound":
            continue
        if lb is not None and lb > 0:
            r["alg_lb"] = r["objective"] / lb
        if ub is not None and ub > 0:
            r["alg_ub"] = r["objective"] / ub


def _row_line(row: dict) -> str:
    """One line on a finished method call (``--verbose``)."""
    value = row.get("objective") if row.get("kind") != "bound" else row.get("lower_bound")
    shown = f"{value:,.10g}" if isinstance(value, float) else (row.get("error") or "no result")
    time_s = f" ({row['runtime_s']:.1f} s)" if row.get("runtime_s") is not None else ""
    return (f"{row['family']} {row['preset']} seed {row['seed']} {row['method']}: "
            f"{row.get('status')} {shown}{time_s}")


def _run(inst, entry, family, preset, seed, time_limit):
    """One method on one instance: its row and its Result (None when it failed)."""
    from optsched.registry import solve

    return _row_of(lambda: solve(inst, entry.name, time_limit=time_limit, seed=seed),
                   family, preset, seed, entry.name, entry.kind)


def _certify(inst, known, family, preset, seed, time_limit) -> dict:
    """certify's row: objective = the certified UB, lower_bound = its LB."""
    from optsched.certificate import certify

    row, _ = _row_of(lambda: certify(inst, time_limit=time_limit, seed=seed, known=known),
                     family, preset, seed, "certify", "certify")
    return row


def _row_of(call, family, preset, seed, method, kind):
    row = dict.fromkeys(COMPARE_FIELDS)
    row.update(family=family, preset=preset, seed=seed, method=method, kind=kind)
    start = time.perf_counter()
    try:
        result = call()
    except InfeasibleSchedule as exc:
        row.update(status="violation", error=f"InfeasibleSchedule: {exc}",
                   runtime_s=time.perf_counter() - start)
        return row, None
    except Exception as exc:  # noqa: BLE001 - reported in the table, never swallowed
        row.update(status="error", error=exc_text(exc), runtime_s=time.perf_counter() - start)
        return row, None
    objective = None if math.isinf(result.objective) else result.objective
    lb = result.lower_bound
    row.update(status=result.status.value, objective=objective, runtime_s=result.runtime_s,
               lower_bound=lb if lb is not None and math.isfinite(lb) else None)
    return row, result


def summarize_compare(rows: list[dict], reference: str) -> list[dict]:
    """Per method: instances, mean objective, mean/min/max relative to ``reference``, median time."""
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(r["method"], []).append(r)
    out = []
    for method, group in groups.items():
        bound = group[0]["kind"] == "bound"
        objs = [r["lower_bound" if bound else "objective"] for r in group]
        objs = [v for v in objs if v is not None]
        rel = [r["relative"] for r in group if r["relative"] is not None]
        alg_lb = [r["alg_lb"] for r in group if r.get("alg_lb") is not None]
        alg_ub = [r["alg_ub"] for r in group if r.get("alg_ub") is not None]
        times = [r["runtime_s"] for r in group if r["runtime_s"] is not None]
        out.append({
            "method": method, "kind": group[0]["kind"], "instances": len(group),
            "objective_mean": statistics.fmean(objs) if objs else None,
            "relative_mean": statistics.fmean(rel) if rel else None,
            "relative_min": min(rel) if rel else None, "relative_max": max(rel) if rel else None,
            "alg_lb_mean": statistics.fmean(alg_lb) if alg_lb else None,
            "alg_lb_max": max(alg_lb) if alg_lb else None,
            "alg_ub_mean": statistics.fmean(alg_ub) if alg_ub else None,
            "runtime_median_s": statistics.median(times) if times else None,
            "failures": sum(r["status"] in ("error", "violation")
                            or r["lower_bound" if bound else "objective"] is None for r in group),
        })
    kinds = ("algorithm", "baseline", "bound", "certify")
    out.sort(key=lambda s: (s["method"] != reference, kinds.index(s["kind"])
                            if s["kind"] in kinds else 3))
    return out


def format_compare(rows: list[dict], reference: str) -> str:
    """The compare table plus notes on failures."""
    def f(v, spec):
        return "" if v is None else format(v, spec)

    header = ("method", "kind", "n", "mean obj", "/ref", "max",
              "ALG/UB", "ALG/LB", "max", "med. s", "fail")
    summary = summarize_compare(rows, reference)
    lines = [(s["method"] + (" *" if s["method"] == reference else ""), SHORT_KIND.get(s["kind"],
                                                                               s["kind"]),
              str(s["instances"]), f(s["objective_mean"], ",.0f"), f(s["relative_mean"], ".3f"),
              f(s["relative_max"], ".3f"),
              f(s["alg_ub_mean"], ".3f"), f(s["alg_lb_mean"], ".3f"), f(s["alg_lb_max"], ".3f"),
              f(s["runtime_median_s"], ".2f"), str(s["failures"]))
             for s in summary]
    text = align(header, lines, right_from=2)
    if rows:
        r0 = rows[0]
        n = len({r["seed"] for r in rows})
        notes = [f"{r0['family']}, preset {r0['preset']}, {n} seed(s); * = the paper's algorithm; "
                 f"relative = objective / {reference} on the same instance (> 1 is worse); the "
                 f"bound row shows LB / {reference}."]
        notes += _bound_notes(rows, summary) + _certify_notes(rows)
    else:
        notes = ["no rows"]
    for r in rows:
        what = "lower_bound" if r["kind"] == "bound" else "objective"
        if r["status"] in ("error", "violation") or (r[what] is None and r["error"]):
            notes.append(f"  {r['method']} seed {r['seed']}: {r['error']}")
        elif r[what] is None:
            missing = "bound" if r["kind"] == "bound" else "schedule"
            notes.append(f"  {r['method']} seed {r['seed']}: no {missing} (status {r['status']})")
    return text + "\n\n" + "\n".join(wrapped(notes))


#: The kind column as the ratios table prints it.
SHORT_KIND = {"algorithm": "alg", "baseline": "base", "certify": "cert"}


def _bound_notes(rows: list[dict], summary: list[dict]) -> list[str]:
    """Which bound gave ALG/LB, and the best method's gap (issue 14 item 6)."""
    bounds = [r for r in rows if r["kind"] == "bound"]
    if not bounds:
        return ["ALG/LB: the family registers no bound method."]
    statuses = sorted({r["status"] for r in bounds})
    ranked = [s for s in summary if s["alg_lb_mean"] is not None and s["kind"] != "certify"]
    names = ", ".join(dict.fromkeys(r["method"] for r in bounds))
    notes = [f"ALG/LB = objective / the best lower bound of the instance (the best of {names}, "
             f"status {', '.join(statuses)}; certify's LB when higher); an upper bound on "
             f"ALG/OPT. Relaxed-model methods get none."]
    if ranked:
        best = min(ranked, key=lambda s: s["alg_lb_mean"])
        notes.append(f"best ALG/LB: {best['method']} {best['alg_lb_mean']:.3f} (mean), "
                     f"{best['alg_lb_max']:.3f} (max).")
    return notes


def _certify_notes(rows: list[dict]) -> list[str]:
    """The certified interval of every instance (issue 19 item 4)."""
    certified = [r for r in rows if r["kind"] == "certify"]
    if not certified:
        return []
    notes = ["ALG/UB = objective / certify's UB (the best verified schedule found); ALG/LB and "
             "ALG/UB are means over instances. Certified gap UB/LB - 1 per seed:"]
    for r in certified:
        ub, lb = r["objective"], r["lower_bound"]
        gap = "-" if ub is None or not lb else f"{ub / lb - 1:.2%}"
        notes.append(f"  seed {r['seed']}: LB {_num(lb)}, UB {_num(ub)}, gap {gap} "
                     f"({r['status']}, {r['runtime_s']:.0f} s)")
    return notes


def _num(x) -> str:
    return "-" if x is None else f"{x:,.6g}" if abs(x) < 1e6 else f"{x:,.0f}"


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
    _, text = run_compare(args[0], args[1] if len(args) > 1 else "paper",
                          int(args[2]) if len(args) > 2 else 3)
    print(text)
