"""The only module that talks to solvers: HiGHS (through Pyomo's ``pyomo.contrib.solver`` Highs
interface, and highspy arrays for :class:`ArrayModel`), SCIP and any other solver Pyomo drives.

Which solver a call uses, its log and its threads are :class:`SolverOptions` set for a block of
code with :func:`using` (``optsched.solve(..., solver="scip")`` and the CLI's ``--solver``, ``--log``
and ``--threads`` do this); every :func:`solve_model` inside reads them, so no family code passes a
solver around. HiGHS is the default and the reference; :class:`ArrayModel` is always HiGHS.

Conventions (docs/dev/design.md):
- a fresh solver object per solve (HiGHS re-solves start from the previous state and accumulate time);
- ``mip_rel_gap`` defaults to 0, so ``OPTIMAL`` means proven optimal;
- ``threads`` defaults to 1 (one value per process: HiGHS' scheduler is global);
- hitting the time limit is a status (``TIME_LIMIT`` with the incumbent and dual bound), never an
  exception; no solution gives objective ``inf``.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pyomo.environ as pyo
from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition
from pyomo.contrib.solver.solvers.highs import Highs

from optsched.deadline import Deadline
from optsched.errors import OptschedError
from optsched.result import Outcome, SolveStatus
from optsched.solvers.guard import (MAX_MODEL_TERMS, Refusal, guard,  # noqa: F401
                                    not_built_status, refuse, too_large)
from optsched.solvers.options import SolverOptions, current


@dataclass(frozen=True)
class SolveReport:
    """What one HiGHS solve produced.

    Attributes
    ----------
    status
        ``OPTIMAL`` (proven, at the requested gap), ``TIME_LIMIT`` (limit hit; incumbent may exist),
        ``INFEASIBLE``, or ``UNKNOWN``.
    objective
        Incumbent objective (``inf`` when there is no solution).
    bound
        Dual bound (the LP value for an LP), or None.
    has_solution
        True when variable values were loaded into the model.
    runtime_s
        Wall time of the solve call (hand-off included).
    info
        Solver name/version, termination condition, gap, nodes.
    """

    status: SolveStatus
    objective: float
    bound: float | None
    has_solution: bool
    runtime_s: float
    info: dict = field(default_factory=dict)




def available() -> bool:
    return bool(Highs().available())


def solve_model(model: pyo.ConcreteModel, *, time_limit: float | None = None,
                deadline: Deadline | None = None, mip_rel_gap: float = 0.0, threads: int = 1,
                seed: int = 0, tee: bool = False, warm_start: bool = False) -> SolveReport:
    """Solve ``model`` (exactly one active objective, minimised or maximised) with a fresh HiGHS.

    The time limit is ``time_limit`` or, with ``deadline``, what is left of it after the model has
    been handed to HiGHS (the earlier of the two when both are given), so the hand-off is charged to
    the deadline. The solution, when one exists, is loaded into the model's variables.

    With ``warm_start``, the values the model's variables hold now (e.g. set from a verified
    heuristic schedule) are given to HiGHS as a (possibly partial) starting solution; HiGHS checks
    it and completes it with a sub-MIP, so a wrong start costs time but never correctness.
    """
    options = current()
    if options.write_model:
        _write_model(model, options)
    tee = tee or options.log
    threads = threads if options.threads is None else options.threads
    if deadline is not None:
        left = deadline.limit()
        time_limit = left if time_limit is None or left is None else min(time_limit, left)
    if options.name != "highs":
        from optsched.solvers.other import solve_other

        with log_on_stderr(tee):
            return solve_other(model, options.name, time_limit=time_limit,
                               mip_rel_gap=mip_rel_gap, threads=threads, seed=seed, tee=tee,
                               warm_start=warm_start)
    # fixed variables stay columns with equal bounds: as parameters, Pyomo would rewrite their
    # rows at every solve(), and HiGHS drops a start given before such a change
    opt = Highs(treat_fixed_vars_as_params=False)
    start = time.perf_counter()
    opt.set_instance(model)  # the Pyomo -> HiGHS hand-off; solve() below only checks for updates
    if warm_start:
        _set_start(opt)
    if deadline is not None:  # the hand-off above is charged to the deadline
        left = deadline.limit()
        time_limit = left if time_limit is None or left is None else min(time_limit, left)
    res = opt.solve(
        model, time_limit=time_limit, rel_gap=mip_rel_gap, threads=threads,
        tee=[sys.stderr] if tee else False,  # a log never mixes with a command's stdout
        load_solutions=False, raise_exception_on_nonoptimal_result=False,
        solver_options={"random_seed": int(seed) % 2147483647},
    )
    runtime = time.perf_counter() - start
    has_solution = res.solution_status in (SolutionStatus.feasible, SolutionStatus.optimal)
    load_error = None
    if has_solution:
        try:
            res.solution_loader.load_vars()
        except (IndexError, ValueError, RuntimeError) as exc:  # HiGHS lost the model (numerics)
            has_solution, load_error = False, f"{type(exc).__name__}: {exc}"
    objective = res.incumbent_objective if has_solution and res.incumbent_objective is not None else math.inf
    bound = res.objective_bound
    if bound is not None and not math.isfinite(bound):
        bound = None
    status = _status(res.termination_condition) if load_error is None else SolveStatus.UNKNOWN
    info = {
        "solver": "highs",
        "solver_version": ".".join(map(str, res.solver_version or ())),
        "termination": res.termination_condition.name,
        "mip_rel_gap": mip_rel_gap,
        "threads": threads,
        "time_limit": time_limit,
    }
    if load_error is not None:
        info["load_error"] = load_error
    if has_solution and bound is not None:
        info["gap"] = abs(objective - bound) / max(abs(objective), 1e-9)
    return SolveReport(status, float(objective), bound, has_solution, runtime, info)


@contextlib.contextmanager
def log_on_stderr(on: bool):
    """While ``on``, what a solver prints at C level (SCIP, solvers run by Pyomo) goes to stderr,
    so a log (``--log``) never mixes with a command's output on stdout."""
    if not on:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def write_model(model: pyo.ConcreteModel, path: str | Path) -> dict[str, Any]:
    """Write ``model`` to ``path`` (LP or MPS by its suffix, with symbolic names) and return what
    was written: path, the model's name, its numbers of variables and constraints."""
    path = Path(str(path))
    if path.suffix.lower() not in (".lp", ".mps"):
        raise OptschedError(f"--write-model: {path}: the file must end in .lp or .mps")
    model.write(str(path), io_options={"symbolic_solver_labels": True})
    return {"path": str(path), "model": model.local_name, "variables": model.nvariables(),
            "constraints": model.nconstraints()}


def _write_model(model: pyo.ConcreteModel, options: SolverOptions) -> None:
    """Write ``model`` as the next numbered file of ``options.write_model`` and list it."""
    path = Path(str(options.write_model))
    if path.suffix.lower() not in (".lp", ".mps"):
        raise OptschedError(f"--write-model: {path}: the file must end in .lp or .mps")
    target = path.with_name(f"{path.stem}.{len(options.written) + 1}{path.suffix}")
    options.written.append(write_model(model, target))


def _set_start(opt: Highs) -> None:
    """Hand the current variable values to HiGHS as a partial MIP start (``Highs.setSolution`` with
    the columns that have a value; the others are left for HiGHS to fill)."""
    index, value = [], []
    for column, var in _columns(opt):
        if var.value is not None:
            index.append(column)
            value.append(float(var.value))
    if index:
        opt._solver_model.setSolution(len(index), np.array(index, dtype=np.int32),
                                      np.array(value, dtype=np.float64))


def _columns(opt: Highs):
    """(HiGHS column index, Pyomo variable) pairs of the instance set on ``opt``. Pyomo's Highs
    interface keeps these in private maps (pyomo 6.8-6.10); there is no public accessor."""
    columns = opt._pyomo_var_to_solver_var_map
    variables = opt._vars
    for var_id, column in columns.items():
        yield column, variables[var_id][0]


def _status(tc: TerminationCondition) -> SolveStatus:
    if tc == TerminationCondition.convergenceCriteriaSatisfied:
        return SolveStatus.OPTIMAL
    if tc == TerminationCondition.maxTimeLimit:
        return SolveStatus.TIME_LIMIT
    if tc == TerminationCondition.provenInfeasible:
        return SolveStatus.INFEASIBLE
    return SolveStatus.UNKNOWN


def report_outcome(rep: SolveReport, extract: Callable[[], Any], *,
                   lower_bound: float | None = None, fallback: Any = None,
                   info: dict | None = None) -> Outcome:
    """The Outcome of an exact method from one HiGHS report (the one path for every family).

    Parameters
    ----------
    rep
        The report of the exact model's solve.
    extract
        Reads the schedule from the solved model (called only when it holds a solution).
    lower_bound
        A bound proven elsewhere (e.g. a relaxation); the Outcome's bound is the larger one.
    fallback
        A verified schedule to return when HiGHS found none (e.g. the heuristic behind the horizon);
        its status is ``TIME_LIMIT`` when the solve ran out of time, else the solver's.
    info
        Extra details, merged over the solver's.

    The model's own objective goes to ``Outcome.model_objective``, so the registry demotes
    ``optimal`` when verify disagrees with it.
    """
    bounds = [b for b in (rep.bound, lower_bound) if b is not None]
    bound = max(bounds) if bounds else None
    details = {**rep.info, **(info or {})}
    if rep.has_solution:
        return Outcome(extract(), rep.status, bound, details, model_objective=rep.objective)
    return Outcome(fallback, rep.status, bound, details)


def relax_integrality(model: pyo.ConcreteModel) -> pyo.ConcreteModel:
    """Return a copy of ``model`` with every integer/binary variable made continuous (the LP relaxation)."""
    relaxed = model.clone()
    pyo.TransformationFactory("core.relax_integer_vars").apply_to(relaxed)
    return relaxed


# ----------------------------------------------------------------------------------------------
# Array models: LPs and MILPs handed to highspy as sparse arrays (no Pyomo), with row duals and
# columns added between solves: the masters of column generation and the neighbourhood MILPs of
# any-time improvement, where Pyomo's hand-off would dominate (docs/dev/design.md, "Solver conventions").
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ArrayReport:
    """One solve of an :class:`ArrayModel`.

    ``objective`` is the incumbent (``inf`` without one); ``bound`` HiGHS' dual bound (for an LP
    solved to optimality, the objective; None when unknown); ``x`` the column values and
    ``row_dual`` the row duals (LPs only; None without a solution). Duals follow HiGHS' sign
    convention for a minimisation: a ``>=`` row that binds has a dual >= 0.
    """

    status: SolveStatus
    objective: float
    bound: float | None
    x: np.ndarray | None
    row_dual: np.ndarray | None
    runtime_s: float
    info: dict = field(default_factory=dict)


class ArrayModel:
    """A minimisation LP / MILP held by one highspy object, built from sparse arrays.

    Rows are ``row_lo <= A x <= row_hi``, columns ``col_lo <= x <= col_hi`` with cost ``c``.
    Columns (and rows) may be added between solves; each :meth:`solve` warm-starts from the last
    basis (what column generation needs). Threads 1, ``mip_rel_gap`` 0 unless given, the time
    limit taken from a :class:`~optsched.deadline.Deadline`; a time limit is a status.

    >>> import numpy as np
    >>> m = ArrayModel(n_rows=1, row_lo=[2.0], row_hi=[np.inf])
    >>> m.add_columns(cost=[1.0, 3.0], lo=[0, 0], hi=[np.inf, np.inf],
    ...               starts=[0, 1], rows=[0, 0], values=[1.0, 1.0])
    >>> rep = m.solve()
    >>> rep.status.value, rep.objective, float(rep.row_dual[0])
    ('optimal', 2.0, 1.0)
    """

    def __init__(self, n_rows: int, row_lo, row_hi, *, seed: int = 0, log: bool = False):
        import highspy

        self._hp = highspy
        self.h = highspy.Highs()
        self.h.setOptionValue("output_flag", bool(log))
        self.h.setOptionValue("threads", 1)
        self.h.setOptionValue("random_seed", int(seed) % 2147483647)
        self.n_cols = 0
        self.n_rows = 0
        self.integer = False
        self.add_rows(np.asarray(row_lo, dtype=np.float64), np.asarray(row_hi, dtype=np.float64))
        assert self.n_rows == n_rows

    def add_rows(self, lo, hi, starts=None, cols=None, values=None) -> None:
        """Append rows (CSR: ``starts`` into ``cols``/``values``; empty rows without them)."""
        lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
        k = len(lo)
        if starts is None:
            starts, cols, values = np.zeros(k, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0)
        self.h.addRows(k, lo, hi, len(values), np.asarray(starts, dtype=np.int32),
                       np.asarray(cols, dtype=np.int32), np.asarray(values, dtype=np.float64))
        self.n_rows += k

    def add_columns(self, cost, lo, hi, starts, rows, values, integer: bool = False) -> None:
        """Append columns (CSC: ``starts`` into ``rows``/``values``); ``integer`` marks them so."""
        cost = np.asarray(cost, dtype=np.float64)
        k = len(cost)
        self.h.addCols(k, cost, np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64),
                       len(values), np.asarray(starts, dtype=np.int32),
                       np.asarray(rows, dtype=np.int32), np.asarray(values, dtype=np.float64))
        if integer:
            idx = np.arange(self.n_cols, self.n_cols + k, dtype=np.int32)
            kinds = np.full(k, self._hp.HighsVarType.kInteger)
            self.h.changeColsIntegrality(k, idx, kinds)
            self.integer = True
        self.n_cols += k

    def set_start(self, x) -> None:
        """A MIP start (a full column vector; HiGHS checks it)."""
        sol = self._hp.HighsSolution()
        sol.col_value = list(map(float, x))
        sol.value_valid = True
        self.h.setSolution(sol)

    def solve(self, *, deadline: Deadline | None = None, mip_rel_gap: float = 0.0) -> ArrayReport:
        """Solve (warm from the last basis); the time limit is what is left of ``deadline``."""
        left = None if deadline is None else deadline.limit()
        self.h.setOptionValue("time_limit", float("inf") if left is None else float(left))
        self.h.setOptionValue("mip_rel_gap", float(mip_rel_gap))
        start = time.perf_counter()
        self.h.run()
        runtime = time.perf_counter() - start
        ms = self.h.getModelStatus()
        status = _array_status(self._hp, ms)
        info = self.h.getInfo()
        has = info.primal_solution_status == 2  # kSolutionStatusFeasible
        sol = self.h.getSolution() if has else None
        objective = float(info.objective_function_value) if has else math.inf
        bound: float | None
        if self.integer:
            dual = float(info.mip_dual_bound)
            bound = dual if math.isfinite(dual) else None
        else:
            bound = objective if status is SolveStatus.OPTIMAL else None
        x = np.asarray(sol.col_value) if sol is not None else None
        duals = np.asarray(sol.row_dual) if sol is not None and not self.integer else None
        return ArrayReport(status, objective, bound, x, duals, runtime,
                           {"solver": "highs", "model_status": self.h.modelStatusToString(ms)})


def _array_status(hp, ms) -> SolveStatus:
    if ms == hp.HighsModelStatus.kOptimal:
        return SolveStatus.OPTIMAL
    if ms == hp.HighsModelStatus.kTimeLimit:
        return SolveStatus.TIME_LIMIT
    if ms == hp.HighsModelStatus.kInfeasible:
        return SolveStatus.INFEASIBLE
    return SolveStatus.UNKNOWN
