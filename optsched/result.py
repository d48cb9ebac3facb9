"""What a method returns (:class:`Outcome`) and what optsched reports (:class:`Result`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class SolveStatus(str, Enum):
    """Status of a solve. ``optimal`` is only ever set when proven (mip_rel_gap = 0)."""

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    TIME_LIMIT = "time_limit"
    INFEASIBLE = "infeasible"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Outcome:
    """Raw output of a method, before optsched verifies it.

    Attributes
    ----------
    schedule
        The family's ``Schedule`` or None (bounds, or no solution found).
    status
        Solver status; heuristics return ``FEASIBLE``.
    lower_bound
        A valid lower bound on the optimum (dual bound, LP value), or None.
    info
        Free-form details (solver name/version, nodes, gap, iterations, ...).
    model_objective
        An exact model's own objective value for ``schedule``; the registry compares it with the
        checker's and demotes ``optimal`` when they disagree.

    Status rule for bounds (``kind == "bound"``, ``schedule`` None): ``OPTIMAL`` when the
    relaxation was solved to its optimum (``lower_bound`` is its exact value); ``TIME_LIMIT`` when
    the computation stopped early (deadline, iteration or cut cap) -- ``lower_bound`` is still a
    valid, weaker bound, never an exception; ``UNKNOWN`` when there is no bound.
    """

    schedule: Any = None
    status: SolveStatus = SolveStatus.FEASIBLE
    lower_bound: float | None = None
    info: dict = field(default_factory=dict)
    model_objective: float | None = None


RESULT_KEYS = (
    "status", "objective", "lower_bound", "runtime_s", "method", "guarantee", "schedule", "info",
)


@dataclass(frozen=True)
class Result:
    """One solve, as DESIGN.md's Result contract: the keys of :data:`RESULT_KEYS`.

    ``objective`` is recomputed by the family's independent ``verify`` from the schedule alone; it is
    ``inf`` when there is no schedule.
    """

    status: SolveStatus
    objective: float
    lower_bound: float | None
    runtime_s: float
    method: str
    guarantee: float | None
    schedule: Any
    info: dict

    @property
    def gap(self) -> float | None:
        """Relative gap |obj - lb| / |obj| (HiGHS' definition), or None."""
        if self.lower_bound is None or math.isinf(self.objective):
            return None
        return abs(self.objective - self.lower_bound) / max(abs(self.objective), 1e-9)

    def to_dict(self) -> dict:
        """JSON-ready dict with exactly the Result keys (inf becomes the string "inf")."""
        return {
            "status": self.status.value,
            "objective": _json_float(self.objective),
            "lower_bound": _json_float(self.lower_bound),
            "runtime_s": self.runtime_s,
            "method": self.method,
            "guarantee": _json_float(self.guarantee),
            "schedule": None if self.schedule is None else self.schedule.to_dict(),
            "info": self.info,
        }

    def summary(self) -> str:
        """A short aligned text summary for the terminal (full precision, thousands separated).

        A bound method's Result (no schedule, a bound) says so: its status is the bound's
        (computed to its end, or stopped early and still valid), not a schedule's.
        """
        if self.schedule is None and self.lower_bound is not None and math.isinf(self.objective):
            return self._bound_summary()
        lines = [
            f"method     {self.method}",
            f"status     {self.status.value}",
            f"objective  {_shown(self.objective)}",
            f"lower bnd  {_shown(self.lower_bound)}",
            f"guarantee  {_shown(self.guarantee)}",
            f"runtime    {self.runtime_s:.3f} s",
        ]
        return "\n".join(lines + self._certificate_lines())

    def _bound_summary(self) -> str:
        what = {SolveStatus.OPTIMAL: "bound computed to its end",
                SolveStatus.TIME_LIMIT: "stopped early; the bound is still valid",
                SolveStatus.INFEASIBLE: "the bound proves no schedule exists"}
        status = f"bound {self.status.value}"
        if self.status in what:
            status += f" ({what[self.status]})"
        return "\n".join([f"method     {self.method}", f"status     {status}",
                          f"bound      {_shown(self.lower_bound)}",
                          "objective  - (a bound method returns no schedule)",
                          f"runtime    {self.runtime_s:.3f} s"])

    def _certificate_lines(self) -> list[str]:
        """What certify adds to the summary: why no model was built, the gap and its sides."""
        lines = []
        if "not_built" in self.info:
            lines.append(f"model      not built: {self.info['not_built']}")
        if "upper_by" in self.info:
            gap = self.info.get("gap")
            shown = "-" if gap is None else f"{gap:.2%}"
            lines.append(f"gap        {shown} (UB / LB - 1; UB from {self.info['upper_by']}, "
                         f"LB from {self.info.get('lower_by') or '-'})")
        return lines


def _shown(x: float | None) -> str:
    """A number for people: full precision, thousands separated; "-" for none."""
    if x is None:
        return "-"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return format(x, ",.10g")


def _json_float(x: float | None) -> float | str | None:
    if x is None:
        return None
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return float(x)
