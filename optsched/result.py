"""What a method returns (:class:`Outcome`) and what optsched reports (:class:`Result`)."""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class SolveStatus(str, Enum):
    """Status of a solve (a ``str`` enum: ``status.value`` is what JSON and the CLI show).

    Members
    -------
    OPTIMAL
        Proven optimal (an exact solve with ``mip_rel_gap = 0``, or certify's interval closed); for
        a bound method: the relaxation was solved to its end. Never set on a heuristic's schedule.
    FEASIBLE
        A verified schedule without a proof of optimality (every heuristic's status).
    TIME_LIMIT
        The time limit (or an iteration / size cap) stopped the method; the schedule and bound it
        returns are still verified and valid.
    INFEASIBLE
        Proven that no schedule exists (e.g. a horizon shorter than a valid lower bound).
    UNKNOWN
        Nothing could be established (no schedule, no bound).

    Examples
    --------
    >>> SolveStatus("optimal") is SolveStatus.OPTIMAL, SolveStatus.TIME_LIMIT.value
    (True, 'time_limit')
    """

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
    guide
        What a method learned that an improvement may start from (a bound's LP means, an order,
        column weights): :func:`optsched.certificate.certify` hands the last guide it got to the
        family's improvement as ``guide=``. Never verified, never written to a Result or to JSON.

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
    guide: Any = field(default=None, compare=False, repr=False)


RESULT_KEYS = (
    "status", "objective", "lower_bound", "runtime_s", "method", "guarantee", "schedule", "info",
)


@dataclass(frozen=True)
class Result:
    """One solve, as :func:`optsched.solve` and :func:`optsched.certify` return it (the keys of
    :data:`RESULT_KEYS`; docs/formats.md shows its JSON).

    Attributes
    ----------
    status
        :class:`SolveStatus`; ``optimal`` only when proven.
    objective
        The schedule's objective, recomputed by the family's independent ``verify`` from the
        schedule alone (never the model's value); ``inf`` when there is no schedule.
    lower_bound
        A valid lower bound on the optimum (a solver's dual bound, a relaxation's value), or None.
    runtime_s
        Seconds the method ran (imports of Pyomo and HiGHS excluded; verification included).
    method
        The registered method's name (``optsched methods FAMILY``).
    guarantee
        The paper's claimed bound on ALG/OPT for this instance (None: the method claims none).
    schedule
        The family's ``Schedule`` (``schedule.to_dict()`` is its JSON), or None.
    info
        Details: ``seed``, ``params`` (an algorithm's reading), solver statistics, and for certify
        ``gap``, ``upper_by``, ``lower_by`` and its ``steps``.

    Examples
    --------
    >>> from optsched import generate, solve
    >>> r = solve(generate("ring_contention", "tiny", 0), "exact")
    >>> r.status.value, r.objective == r.lower_bound, r.gap
    ('optimal', True, 0.0)
    >>> sorted(r.to_dict()) == sorted(RESULT_KEYS)
    True
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
        """Relative gap ``|objective - lower_bound| / |objective|`` (HiGHS' definition; certify's
        ``info["gap"]`` is ``UB / LB - 1`` instead), or None without a bound or a schedule."""
        if self.lower_bound is None or math.isinf(self.objective):
            return None
        return abs(self.objective - self.lower_bound) / max(abs(self.objective), 1e-9)

    def to_dict(self) -> dict:
        """JSON-ready dict with exactly the keys of :data:`RESULT_KEYS` (``inf`` becomes the string
        ``"inf"``); ``optsched solve --json`` prints it."""
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
            lines += textwrap.wrap(f"model      not built: {self.info['not_built']}", 100,
                                   subsequent_indent=" " * 11, break_on_hyphens=False)
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
