"""Solvers other than HiGHS for the Pyomo models (issue 21 item 1), reached only through
:func:`optsched.solvers.highs.solve_model` under :func:`optsched.solvers.options.using`.

- ``scip``: the model is written by Pyomo's LP writer and read by pyscipopt (the optional extra
  ``scip``); Pyomo's own ``scip_direct`` cannot translate every model (it raised
  ``NotImplementedError: TrivialRelationalExpression`` on hetero_gpu's aggregate LP).
- any other name: Pyomo's ``SolverFactory(name)`` (Gurobi, CPLEX, CBC, GLPK, ... when installed),
  with the time limit, gap, threads and seed under each solver's own option names.

Status, incumbent and dual bound map to the same :class:`~optsched.solvers.highs.SolveReport` as
HiGHS: ``optimal`` only when the solver proves it with the requested gap (0 by default).
"""

from __future__ import annotations

import math
import os
import tempfile
import time

import pyomo.environ as pyo

from optsched.result import SolveStatus
from optsched.solvers.highs import SolveReport

#: Option names of Pyomo's shell/direct interfaces: time limit, relative gap, threads, seed.
OPTION_NAMES = {
    "gurobi": ("TimeLimit", "MIPGap", "Threads", "Seed"),
    "gurobi_direct": ("TimeLimit", "MIPGap", "Threads", "Seed"),
    "cplex": ("timelimit", "mip_tolerances_mipgap", "threads", "randomseed"),
    "cplex_direct": ("timelimit", "mip_tolerances_mipgap", "threads", "randomseed"),
    "cbc": ("sec", "ratioGap", "threads", "randomSeed"),
    "glpk": ("tmlim", "mipgap", None, None),
}
_SCIP_STATUS = {"optimal": SolveStatus.OPTIMAL, "timelimit": SolveStatus.TIME_LIMIT,
                "infeasible": SolveStatus.INFEASIBLE}


def solve_other(model: pyo.ConcreteModel, name: str, *, time_limit: float | None,
                mip_rel_gap: float, threads: int, seed: int, tee: bool,
                warm_start: bool) -> SolveReport:
    """Solve ``model`` with the solver ``name`` (see the module docstring); the solution, when
    there is one, is loaded into the model's variables."""
    if name == "scip":
        return _scip(model, time_limit, mip_rel_gap, threads, seed, tee)
    return _pyomo(model, name, time_limit, mip_rel_gap, threads, seed, tee, warm_start)


def _scip(model, time_limit, gap, threads, seed, tee) -> SolveReport:
    from pyscipopt import Model

    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.lp")
        _, smap_id = model.write(path, io_options={"symbolic_solver_labels": False})
        symbols = model.solutions.symbol_map[smap_id]
        scip = Model()
        scip.hideOutput(not tee)
        scip.readProblem(path)
    scip.setParam("limits/gap", gap)
    scip.setParam("randomization/randomseedshift", int(seed) % 2147483647)
    scip.setParam("parallel/maxnthreads", max(1, int(threads)))
    if time_limit is not None:
        scip.setParam("limits/time", max(0.01, time_limit - (time.perf_counter() - start)))
    scip.optimize()
    status = _SCIP_STATUS.get(scip.getStatus(), SolveStatus.UNKNOWN)
    has = scip.getNSols() > 0
    objective = math.inf
    if has:
        best = scip.getBestSol()
        values = {v.name: scip.getSolVal(best, v) for v in scip.getVars()}
        for label, var in symbols.bySymbol.items():
            if label in values:
                var.set_value(values[label], skip_validation=True)
        objective = _objective_value(model)
    bound = scip.getDualbound() if scip.getStatus() != "infeasible" else None
    bound = _oriented(model, bound)
    info = {"solver": "scip", "solver_version": str(scip.version()),
            "termination": scip.getStatus(), "mip_rel_gap": gap, "threads": threads,
            "time_limit": time_limit}
    return SolveReport(status, objective, bound, has, time.perf_counter() - start, info)


def _pyomo(model, name, time_limit, gap, threads, seed, tee, warm_start) -> SolveReport:
    from pyomo.opt import SolverFactory, TerminationCondition

    opt = SolverFactory(name)
    keys = OPTION_NAMES.get(name, (None, None, None, None))
    for key, value in zip(keys, (time_limit, gap, threads, seed)):
        if key is not None and value is not None:
            opt.options[key] = value
    start = time.perf_counter()
    kwargs = {"warmstart": True} if warm_start and getattr(opt, "warm_start_capable",
                                                            lambda: False)() else {}
    res = opt.solve(model, tee=tee, load_solutions=False, **kwargs)
    tc = res.solver.termination_condition
    status = {TerminationCondition.optimal: SolveStatus.OPTIMAL,
              TerminationCondition.maxTimeLimit: SolveStatus.TIME_LIMIT,
              TerminationCondition.infeasible: SolveStatus.INFEASIBLE}.get(tc, SolveStatus.UNKNOWN)
    has = len(res.solution) > 0
    objective = math.inf
    if has:
        model.solutions.load_from(res)
        objective = _objective_value(model)
    sense = _objective(model).sense
    raw = res.problem.lower_bound if sense == pyo.minimize else res.problem.upper_bound
    bound = float(raw) if raw is not None and math.isfinite(float(raw)) else None
    info = {"solver": name, "termination": str(tc), "mip_rel_gap": gap, "threads": threads,
            "time_limit": time_limit}
    return SolveReport(status, objective, bound, has, time.perf_counter() - start, info)


def _objective(model):
    return next(model.component_data_objects(pyo.Objective, active=True))


def _objective_value(model) -> float:
    return float(pyo.value(_objective(model)))


def _oriented(model, bound: float | None) -> float | None:
    """SCIP's dual bound in the model's own sense (it reads the LP file's sense)."""
    if bound is None or not math.isfinite(bound):
        return None
    return float(bound)


__all__ = ["OPTION_NAMES", "solve_other"]
