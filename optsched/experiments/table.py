"""Summaries of ratio rows: one line per (family, method), as a text table and as ``summary.csv``."""

from __future__ import annotations

import csv
import statistics
import textwrap
from pathlib import Path

SUMMARY_FIELDS = (
    "family", "method", "kind", "instances", "measured", "proven", "alg_opt_mean", "alg_opt_max",
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
            "proven": sum(r.get("opt") is not None for r in group),
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


#: Kinds as the narrow table prints them.
SHORT_KIND = {"algorithm": "alg", "baseline": "base"}
#: Width of the notes under a table (the table itself fits 100 columns unless ``wide``).
WIDTH = 100


def format_table(rows: list[dict], max_notes: int = 12, wide: bool = False) -> str:
    """The ratios table, then notes on findings and failures.

    Default (fits 100 columns): one block per family headed by its instances and how many optima
    were proven, then per method: kind, ``on`` (instances the ratio was measured on / instances;
    for ``exact``, proven / instances), ``ratio mean`` and ``worst`` (ALG/OPT mean and max, or
    LB/OPT mean and min for bounds, over instances with a proven optimum), the claimed guarantee
    (max over instances; ``!k``: the measured ratio exceeds its instance's guarantee on k),
    violations, failures, time-outs (status ``time_limit``: the result depends on the time
    limit) and the median runtime per call. ``wide=True``: one table with a family column and
    separate ALG/OPT and LB/OPT columns (``optsched ratios --wide``).

    Examples
    --------
    >>> rows = [{"family": "f", "preset": "tiny", "seed": 0, "method": "exact", "kind": "exact",
    ...          "status": "optimal", "objective": 10.0, "opt": 10.0, "runtime_s": 0.5},
    ...         {"family": "f", "preset": "tiny", "seed": 0, "method": "alg", "kind": "algorithm",
    ...          "status": "feasible", "objective": 12.0, "opt": 10.0, "ratio": 1.2,
    ...          "guarantee": 2.0, "runtime_s": 0.1}]
    >>> print(format_table(rows).splitlines()[4])
    alg     alg    1/1      1.2000  1.2000          2     0     0    0     0.100
    """
    summary = summarize(rows)
    text = _wide(summary, rows) if wide else _by_family(summary, rows)
    return text + "\n\n" + "\n".join(wrapped(_notes(rows, max_notes)))


def _counted(s: dict) -> str:
    """``measured/instances`` (for exact: proven/instances)."""
    return f"{s['measured'] if s['kind'] != 'exact' else s['proven']}/{s['instances']}"


def _guarantee_cell(s: dict) -> str:
    cell = _f(s["guarantee"], ".3g")
    return cell + (f" !{s['over_guarantee']}" if s["over_guarantee"] else "")


def _by_family(summary: list[dict], rows: list[dict]) -> str:
    header = ("method", "kind", "on", "ratio mean", "worst", "guarantee", "viol", "fail", "t/o",
              "median s")
    blocks = []
    for family in dict.fromkeys(s["family"] for s in summary) or dict.fromkeys(
            r["family"] for r in rows):
        lines = []
        for s in (s for s in summary if s["family"] == family):
            bound = s["kind"] == "bound"
            lines.append((s["method"], _kind(s["kind"]), _counted(s),
                          _f(s["lb_opt_mean"] if bound else s["alg_opt_mean"], ".4f"),
                          _f(s["lb_opt_min"] if bound else s["alg_opt_max"], ".4f"),
                          _guarantee_cell(s), str(s["violations"]), str(s["failures"]),
                          str(s["timeouts"]), _f(s["runtime_median_s"], ".3f")))
        lines += [(r["method"], _kind(r.get("kind")), "-",
                   NOT_COMPARABLE, "", "", "", "", "", "") for r in rows
                  if r.get("status") == NOT_COMPARABLE and r["family"] == family]
        blocks.append(_family_heading(family, rows) + "\n" + align(header, lines, right_from=2))
    return "\n\n".join(blocks)


def _kind(kind: str | None) -> str:
    return SHORT_KIND.get(kind or "-", kind or "-")


def _family_heading(family: str, rows: list[dict]) -> str:
    mine = [r for r in rows if r["family"] == family and r.get("status") != NOT_COMPARABLE]
    instances = {(r["preset"], r["seed"]) for r in mine}
    presets = ", ".join(sorted({p for p, _ in instances})) or "-"
    proven = len({(r["preset"], r["seed"]) for r in mine if r.get("opt") is not None})
    return (f"{family}: {len(instances)} instance(s) ({presets}), exact optimum proven on "
            f"{proven}/{len(instances)}")


def _wide(summary: list[dict], rows: list[dict]) -> str:
    header = ("family", "method", "kind", "n", "ALG/OPT mean", "max", "guarantee",
              "LB/OPT mean", "min", "viol", "fail", "t/o", "median s")
    lines = []
    for s in summary:
        n = str(s["instances"])
        if s["kind"] != "exact" and s["measured"] != s["instances"]:
            n = f"{s['measured']}/{n}"          # ratios measured on fewer instances (no OPT, ...)
        lines.append((s["family"], s["method"], s["kind"] or "-", n,
                      _f(s["alg_opt_mean"], ".4f"), _f(s["alg_opt_max"], ".4f"),
                      _guarantee_cell(s), _f(s["lb_opt_mean"], ".4f"), _f(s["lb_opt_min"], ".4f"),
                      str(s["violations"]), str(s["failures"]), str(s["timeouts"]),
                      _f(s["runtime_median_s"], ".3f")))
    lines += [(r["family"], r["method"], r.get("kind") or "-", "-", NOT_COMPARABLE, "", "", "", "",
               "", "", "", "") for r in rows if r.get("status") == NOT_COMPARABLE]
    return align(header, lines, right_from=3)


def _notes(rows: list[dict], max_notes: int) -> list[str]:
    instances = {(r["family"], r["preset"], r["seed"]) for r in rows
                 if r.get("status") != NOT_COMPARABLE}
    n_rows = sum(r.get("status") != NOT_COMPARABLE for r in rows)
    notes = [f"{n_rows} rows, {len(instances)} instances. Ratios (ALG/OPT; LB/OPT for bounds, whose "
             f"worst is the min) only over instances whose exact optimum was proven; on: instances "
             f"measured / instances (for exact: proven / instances); guarantee: the paper's claimed "
             f"bound, max over instances; t/o: status time_limit (the result depends on the time "
             f"limit); median s: median runtime per call."]
    timeouts = [r for r in rows if r.get("kind") == "exact" and r.get("status") == "time_limit"]
    if timeouts:
        notes.append(f"time-outs: exact hit its time limit on {len(timeouts)} instance(s); their rows "
                     f"are excluded from the ratios: " + _where(timeouts, max_notes))
    limited = [r for r in rows if r.get("kind") != "exact" and r.get("status") == "time_limit"]
    if limited:  # a ratio measured on a run cut by its deadline changes with the time limit and load
        notes.append(f"time-limited: {len(limited)} row(s) of other methods hit the time limit; their "
                     f"results depend on it (and on the machine's load): "
                     + ", ".join(f"{r['family']}/{r['method']} {r['preset']} seed {r['seed']}"
                                 for r in limited[:max_notes])
                     + (f", ... ({len(limited) - max_notes} more)" if len(limited) > max_notes else ""))
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
    return notes


def wrapped(notes: list[str]) -> list[str]:
    """Notes wrapped at :data:`WIDTH` columns (continuation lines indented)."""
    out = []
    for note in notes:
        indent = " " * (len(note) - len(note.lstrip()) + 2)
        out += textwrap.wrap(note, WIDTH, subsequent_indent=indent, break_on_hyphens=False) or [""]
    return out


def _portfolio_note(rows: list[dict]) -> list[str]:
    """How the ``portfolio`` rows (``ratios --exact portfolio``) were proven, per family."""
    counts: dict[str, dict[str, int]] = {}
    for r in rows:
        if r.get("method") == "portfolio":
            by = " + ".join((r.get("params") or {}).get("proven_by") or []) or "not proven"
            fam = counts.setdefault(r["family"], {})
            fam[by] = fam.get(by, 0) + 1
    return [f"portfolio {family} (which engine proved OPT): "
            + ", ".join(f"{by} on {n}" for by, n in sorted(c.items()))
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
