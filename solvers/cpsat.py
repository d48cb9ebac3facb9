"""What every CP-SAT model of the families' ``cp.py`` modules shares: the optional import, exact
integer scaling of float data, the solver parameters and the status / bound mapping.

CP-SAT works on integers. Where a family's data are integral by the problem's semantics (slots)
nothing is scaled. Where times are continuous, every time value ``x`` is written as a rational
``p / q`` (:func:`common_denominator`) and the model works in units of ``1 / D`` with ``D`` the
least common multiple of the ``q``; when no small exact rational exists the model says so
(``SolveStatus.UNKNOWN`` with ``info["reason"]``) instead of rounding and claiming optimality.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable, Iterable

from optsched.deadline import Deadline
from optsched.errors import OptschedError
from optsched.method import Method
from optsched.result import Outcome, SolveStatus
from optsched.solvers.guard import Refusal

#: Largest common denominator accepted when scaling float data to integers.
MAX_DENOMINATOR = 10**6
#: A float ``x`` is read as the rational ``p / q`` (``q <= MAX_DENOMINATOR``) only when ``p / q``
#: rounds to ``x`` itself (within one ulp): decimals such as 0.1234 and fractions such as 1/3 are
#: recovered exactly, while a float with no such rational (pi) is refused rather than rounded.
ULPS = 1
#: Largest magnitude of any scaled quantity (objective included): well inside CP-SAT's int64 and
#: exactly representable as a double, so scaling back is exact.
MAX_SCALED = 2**53

INSTALL_HINT = "exact_cp needs the optional extra: pip install 'optsched[cp]'"
#: Largest model (a family's count of its main variables, estimated before anything is built)
#: that ``exact_cp`` builds; beyond it the method returns ``unknown`` at once (paper-scale
#: instances are far beyond exact reach, and building them would overrun any deadline).
MAX_MODEL_SIZE = 200_000


def cp_model():
    """``ortools.sat.python.cp_model``, or :class:`OptschedError` naming the extra to install.

    OR-Tools >= 9.12 wheels ship HiGHS 1.12 as ``ortools/.libs/libhighs.so.1``, the SONAME of
    highspy's own HiGHS 1.15: in one process the second to load gets the first's library and fails
    with an undefined symbol (google/or-tools#5246), which would break every MILP after the first
    CP-SAT solve. Such a wheel is refused *before* it is loaded; 9.10 and 9.11 link HiGHS
    statically and coexist with highspy (the extra ``cp`` pins ``ortools>=9.10,<9.12``).
    """
    clash = _bundled_highs()
    if clash:
        raise OptschedError(f"exact_cp: the installed ortools bundles {clash}, which clashes with "
                            "highspy in one process (google/or-tools#5246); "
                            "pip install 'ortools>=9.10,<9.12' (the optional extra cp)")
    try:
        from ortools.sat.python import cp_model
    except ImportError as exc:  # the extra is optional
        raise OptschedError(INSTALL_HINT) from exc
    return cp_model


def _bundled_highs() -> str | None:
    """The path of a HiGHS shared library shipped inside the installed ortools wheel, if any
    (found without importing ortools)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("ortools")
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        libs = Path(root) / ".libs"
        if libs.is_dir():
            for path in sorted(libs.glob("libhighs*")):
                return str(path)
    return None


def ortools_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ortools")
    except PackageNotFoundError:  # pragma: no cover - version string only
        return "?"


class NotIntegral(Exception):
    """Some data have no exact small rational form; the message says which."""


def as_fraction(x: float, what: str) -> Fraction:
    """``x`` as an exact rational with denominator <= :data:`MAX_DENOMINATOR`, else NotIntegral."""
    if not math.isfinite(x):
        raise NotIntegral(f"{what} = {x!r} is not finite")
    f = Fraction(x).limit_denominator(MAX_DENOMINATOR)
    if abs(float(f) - x) > ULPS * math.ulp(x):
        raise NotIntegral(f"{what} = {x!r} is not a rational with denominator <= {MAX_DENOMINATOR}")
    return f


def common_denominator(values: Iterable[tuple[float, str]]) -> tuple[int, dict[str, Fraction]]:
    """The least common denominator ``D`` of the rationals of ``values`` (pairs value, name) and
    the rationals themselves; NotIntegral when some value has none or ``D`` is too large."""
    den = 1
    fracs = {}
    for x, what in values:
        f = as_fraction(float(x), what)
        fracs[what] = f
        den = den * f.denominator // math.gcd(den, f.denominator)
        if den > MAX_DENOMINATOR:
            raise NotIntegral(f"the data's common denominator exceeds {MAX_DENOMINATOR} "
                              f"(at {what} = {x!r})")
    return den, fracs


def scaled(f: Fraction, den: int) -> int:
    """``f * den`` as an int (exact: ``den`` is a multiple of ``f``'s denominator)."""
    v = f * den
    assert v.denominator == 1, (f, den)
    return int(v)


def check_magnitude(value: int, what: str) -> None:
    if abs(value) > MAX_SCALED:
        raise NotIntegral(f"{what} = {value} in scaled units exceeds 2^53")


def unknown(reason: str, **info: Any) -> Outcome:
    """No exact integer model for this instance: UNKNOWN, never a wrong "optimal"."""
    return Outcome(None, SolveStatus.UNKNOWN, None,
                   {"solver": "cp-sat", "solver_version": ortools_version(), "reason": reason,
                    **info})


class DeadlineReached(Exception):
    """The deadline expired while the model was being built."""


def check(deadline: Deadline) -> None:
    """Raise :class:`DeadlineReached` once ``deadline`` has expired (called while building)."""
    if deadline.expired():
        raise DeadlineReached


def too_large(size: int, what: str) -> Refusal | None:
    """The size guard of every CP model, the same :class:`~optsched.solvers.highs.Refusal` the
    MILP guards give: a cap when the estimated model ``size`` exceeds :data:`MAX_MODEL_SIZE`
    (whatever the deadline), else None (build it).

    >>> str(too_large(MAX_MODEL_SIZE + 1, "intervals")).startswith("size cap: exact_cp")
    True
    """
    if size > MAX_MODEL_SIZE:
        return Refusal(cap=f"size cap: exact_cp model of {size} {what} > MAX_MODEL_SIZE = "
                           f"{MAX_MODEL_SIZE}")
    return None


def stopped(fallback: Any = None, **info: Any) -> Outcome:
    """The deadline expired before CP-SAT ran: ``time_limit`` with the heuristic schedule that
    bounds the model (``fallback``, feasible), or none."""
    return Outcome(fallback, SolveStatus.TIME_LIMIT, None,
                   {"solver": "cp-sat", "solver_version": ortools_version(),
                    "reason": "deadline reached while building the CP model", **info})


def solve_guarded(size: int, what: str, solve: Callable[..., Outcome], instance: Any,
                  deadline: Deadline, seed: int) -> Outcome:
    """The shared frame of every ``exact_cp``: ``unknown`` when the estimated model ``size`` is
    too large (:func:`too_large`), else ``solve(instance, deadline, seed, keep)``; when the
    deadline expires while the model is built (:class:`DeadlineReached`), ``time_limit`` with the
    heuristic schedule ``solve`` left in ``keep["fallback"]``."""
    big = too_large(size, what)
    if big is not None:
        return unknown(str(big))
    keep: dict = {}
    try:
        return solve(instance, deadline, seed, keep)
    except DeadlineReached:
        return stopped(keep.get("fallback"))


def make_solver(deadline: Deadline, seed: int):
    """A fresh CP-SAT solver: one worker (threads = 1), ``random_seed = seed``, the time left."""
    cp = cp_model()
    solver = cp.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = int(seed) % 2**31
    limit = deadline.limit()
    if limit is not None:
        solver.parameters.max_time_in_seconds = float(limit)
    return solver


def run(model, deadline: Deadline, seed: int):
    """Solve ``model``; returns ``(solver, status, has_solution, info)``.

    Status mapping: OPTIMAL -> optimal (CP-SAT proved it), FEASIBLE -> time_limit (incumbent kept),
    INFEASIBLE -> infeasible, anything else (UNKNOWN, MODEL_INVALID) -> unknown.
    """
    cp = cp_model()
    solver = make_solver(deadline, seed)
    code = solver.solve(model)
    status = {cp.OPTIMAL: SolveStatus.OPTIMAL, cp.FEASIBLE: SolveStatus.TIME_LIMIT,
              cp.INFEASIBLE: SolveStatus.INFEASIBLE}.get(code, SolveStatus.UNKNOWN)
    has_solution = code in (cp.OPTIMAL, cp.FEASIBLE)
    info = {"solver": "cp-sat", "solver_version": ortools_version(),
            "termination": solver.status_name(code), "threads": 1,
            "time_limit": solver.parameters.max_time_in_seconds if deadline.end is not None else None,
            "wall_time": solver.wall_time, "branches": solver.num_branches,
            "conflicts": solver.num_conflicts}
    if code == cp.MODEL_INVALID:
        info["reason"] = "CP-SAT rejected the model: " + model.validate()
    return solver, status, has_solution, info


def bound_of(solver, has_solution: bool, scale: float) -> float | None:
    """CP-SAT's best objective bound in the instance's units (None when it has none)."""
    b = solver.best_objective_bound
    if not math.isfinite(b):
        return None
    return b / scale


def finish(solver, status: SolveStatus, has_solution: bool, info: dict, scale: float,
           extract) -> Outcome:
    """The Outcome: the extracted schedule, the bound and the CP objective, both divided by
    ``scale`` (the objective's integer scaling)."""
    lb = None if info.get("termination") == "MODEL_INVALID" else bound_of(solver, has_solution, scale)
    if not has_solution:
        return Outcome(None, status, lb if status is not SolveStatus.INFEASIBLE else None, info)
    obj = solver.objective_value / scale
    if lb is not None:
        info["gap"] = abs(obj - lb) / max(abs(obj), 1e-9)
    return Outcome(extract(), status, lb, info, model_objective=obj)


def cp_method(func: Callable[..., Outcome], model: str) -> Method:
    """The registry entry ``exact_cp`` (kind ``exact``) of a family: ``func`` is its
    ``solvers/<family>/cp.py`` ``exact_cp``; ``model`` says in a few words what it models."""
    return Method("exact_cp", "exact", func, description=f"CP-SAT: {model}, gap 0 (optional extra cp)")
