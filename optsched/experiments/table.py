"""Summaries of ratio rows: one line per (family, method), as a text table and as ``summary.csv``."""

from __future__ import annotations

import csv
import statistics
from pathlib import Path

SUMMARY_FIELDS = (
    "family", "method", "kind", "instances", "measured", "alg_opt_mean", "alg_opt_max",
    "guarantee", "over_guarantee", "lb_opt_mean", "lb_opt_min", "violations", "failures",
    "timeouts", "runtime_median_s",
)
#: Summary columns that do not depend on timing (equal across re-runs of the same study).
DETERMINISTIC_FIELDS = tuple(f for f in SUMMARY_FIELDS if f != "runtime_median_s")

#: Status of the row standing for a relaxed-model method in a ratio study.
NOT_COMPARABLE = "not comparable"


def is_violation(row: dict) -> bool:
    """The schedule failed verify, or LB <= OPT <= ALG or the model cross-check failed."""
    if row.get("status") == "violation":
        return True
    checks = row.get("checks") or {}
    return any(checks.get(k) is False for k in ("verified", "lb_le_opt", "opt_le_alg",
                                                 "model_agrees"))


def is_over_guarantee(row: dict) -> bool:
    return (row.get("checks") or {}).get("within_guarantee") is False


def is_failure(row: dict) -> bool:
    """An exception, or a method that gave no answer (no schedule / no bound, not a time-out)."""
    status = row.get("status")
    if status == "error":
        return True
    if status in ("violation", "time_limit", NOT_COMPARABLE):
        return False
    if row.get("kind") == "bound":
        return row.get("lower_bound") is None
    return row.get("objective") is None or (row.get("kind") == "exact" and status != "optimal")


def summarize(rows: list[dict]) -> list[dict]:
    """One dict per (family, method) in first-seen order, with the fields of :data:`SUMMARY_FIELDS`."""
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        if row.get("status") == NOT_COMPARABLE:
            continue
        groups.setdefault((row["family"], row["method"]), []).append(row)
    out = []
    for (family, method), group in groups.items():
        kind = next((r["kind"] for r in group if r.get("kind")), None)
        ratios = [r["ratio"] for r in group if r.get("ratio") is not None]
        guarantees = [r["guarantee"] for r in group if r.get("guarantee") is not None]
        times = [r["runtime_s"] for r in group if r.get("runtime_s") is not None]
        bound = kind == "bound"
        out.append({
            "family": family, "method": method, "kind": kind, "instances": len(group),
            "measured": len(ratios),
            "alg_opt_mean": None if bound or not ratios else statistics.fmean(ratios),
            "alg_opt_max": None if bound or not ratios else max(ratios),
            "guarantee": max(guarantees) if guarantees else None,
            "over_guarantee": sum(map(is_over_guarantee, group)),
            "lb_opt_mean": statistics.fmean(ratios) if bound and ratios else None,
            "lb_opt_min": min(ratios) if bound and ratios else None,
            "violations": sum(map(is_violation, group)),
            "failures": sum(map(is_failure, group)),
            "timeouts": sum(r.get("status") == "time_limit" for r in group),
            "runtime_median_s": statistics.median(times) if times else None,
        })
    return out


def write_summary_csv(rows: list[dict], path: str | Path) -> None:
    """Write :func:`summarize` of ``rows`` to ``path`` (floats with 6 significant digits)."""
    path = Path(path)
    tmp = path.with_suffix(".csv.tmp")
    with tmp.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=SUMMARY_FIELDS)
        writer.writeheader()
        for s in summarize(rows):
            writer.writerow({k: _csv(v) for k, v in s.items()})
    tmp.replace(path)


def _csv(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    return v


def _f(v, spec=".3f") -> str:
    return "" if v is None else format(v, spec)


def format_table(rows: list[dict], max_notes: int = 12) -> str:
    """The ratios table: one line per (family, method), then notes on findings and failures.

    Columns: family, method, kind, instances (``n``; ``m/n`` when only m had a proven optimum),
    ALG/OPT mean and max over instances with a
    proven optimum, the claimed guarantee (max over instances; ``!`` marks a method whose measured
    ratio exceeds its instance's guarantee somewhere), LB/OPT mean and min for bounds, violations,
    failures, time-outs, and the median runtime.
    """
    summary = summarize(rows)
    header = ("family", "method", "kind", "n", "ALG/OPT mean", "max", "guarantee",
              "LB/OPT mean", "min", "viol", "fail", "t/o", "time s")
    lines = []
    for s in summary:
        guarantee = _f(s["guarantee"], ".3g")
        if s["over_guarantee"]:
            guarantee += f" !{s['over_guarantee']}"
        n = str(s["instances"])
        if s["kind"] != "exact" and s["measured"] != s["instances"]:
            n = f"{s['measured']}/{n}"          # ratios measured on fewer instances (no OPT, ...)
        lines.append((s["family"], s["method"], s["kind"] or "-", n,
                      _f(s["alg_opt_mean"], ".4f"), _f(s["alg_opt_max"], ".4f"), guarantee,
                      _f(s["lb_opt_mean"], ".4f"), _f(s["lb_opt_min"], ".4f"),
                      str(s["violations"]), str(s["failures"]), str(s["timeouts"]),
                      _f(s["runtime_median_s"], ".3f")))
    lines += [(r["family"], r["method"], r.get("kind") or "-", "-", NOT_COMPARABLE, "", "", "", "",
               "", "", "", "") for r in rows if r.get("status") == NOT_COMPARABLE]
    text = align(header, lines, right_from=3)
    instances = {(r["family"], r["preset"], r["seed"]) for r in rows
                 if r.get("status") != NOT_COMPARABLE}
    n_rows = sum(r.get("status") != NOT_COMPARABLE for r in rows)
    notes = [f"{n_rows} rows, {len(instances)} instances. ALG/OPT and LB/OPT only over instances whose "
             f"exact optimum was proven."]
    timeouts = [r for r in rows if r.get("kind") == "exact" and r.get("status") == "time_limit"]
    if timeouts:
        notes.append(f"time-outs: exact hit its time limit on {len(timeouts)} instance(s); their rows "
                     f"are excluded from the ratios: " + _where(timeouts, max_notes))
    notes += _portfolio_note(rows)
    over = [r for r in rows if is_over_guarantee(r)]
    if over:
        notes.append("! measured ratio above the claimed guarantee (a finding, see docs/errata.md):")
        notes += [f"  {r['family']}/{r['method']} {r['preset']} seed {r['seed']}: "
                  f"ratio {r['ratio']:.4f} > {r['guarantee']:.4g}" for r in over[:max_notes]]
        notes += _more(over, max_notes)
    notes += _listing("VIOLATIONS (invariant failed):", [r for r in rows if is_violation(r)], _why, max_notes)
    notes += _listing("failures:", [r for r in rows if is_failure(r)], _failure, max_notes)
    if any(r.get("status") == NOT_COMPARABLE for r in rows):
        notes.append(f"{NOT_COMPARABLE}: the method solves a relaxed model (e.g. preemptive) and is "
                     "checked by its own verifier; it is not run against the exact optimum.")
    return text + "\n\n" + "\n".join(notes)


def _portfolio_note(rows: list[dict]) -> list[str]:
    """How the ``portfolio`` rows (``ratios --exact portfolio``) were proven, per family."""
    counts: dict[str, dict[str, int]] = {}
    for r in rows:
        if r.get("method") == "portfolio":
            by = " + ".join((r.get("params") or {}).get("proven_by") or []) or "not proven"
            fam = counts.setdefault(r["family"], {})
            fam[by] = fam.get(by, 0) + 1
    return [f"portfolio {family}: " + ", ".join(f"{by} {n}" for by, n in sorted(c.items()))
            for family, c in counts.items()]


def _failure(row: dict) -> str:
    if row.get("error"):
        return row["error"]
    if row.get("kind") == "exact":
        return (f"status {row.get('status')}: optimality not proven (objective "
                f"{row.get('objective')}, bound {row.get('lower_bound')}); instance excluded from "
                f"the ratios")
    return f"status {row.get('status')}: no schedule" if row.get("kind") != "bound" else \
        f"status {row.get('status')}: no bound"


def _why(row: dict) -> str:
    if row.get("error"):
        return row["error"]
    failed = [k for k, v in (row.get("checks") or {}).items() if v is False]
    detail = f"lb {row.get('lower_bound')}, opt {row.get('opt')}, objective {row.get('objective')}"
    return f"{', '.join(failed)} false ({detail})"


def _where(rows, limit) -> str:
    text = ", ".join(f"{r['family']} {r['preset']} seed {r['seed']}" for r in rows[:limit])
    return text + (f", ... ({len(rows) - limit} more)" if len(rows) > limit else "")


def _more(items, limit) -> list[str]:
    return [f"  ... and {len(items) - limit} more"] if len(items) > limit else []


def align(header, lines, right_from: int) -> str:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *lines)]

    def fmt(cells):
        return "  ".join(c.ljust(w) if i < right_from else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    out = [fmt(header), "  ".join("-" * w for w in widths)]
    out += [fmt(line) for line in lines]
    return "\n".join(out)


def _listing(title: str, rows: list[dict], why, max_notes: int) -> list[str]:
    """A titled note listing up to ``max_notes`` rows with ``why(row)``; empty when no rows."""
    if not rows:
        return []
    lines = [title] + [f"  {r['family']}/{r['method']} {r['preset']} seed {r['seed']}: {why(r)}"
                       for r in rows[:max_notes]]
    return lines + _more(rows, max_notes)
