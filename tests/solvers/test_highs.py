"""solvers/highs.py: statuses, bounds, time limits and versions of the one HiGHS wrapper."""

import math

import numpy as np
import pyomo.environ as pyo
import pytest

from optsched.result import SolveStatus
from optsched.solvers.highs import relax_integrality, solve_model
from tests.timing import cpu_time


def knapsack(n=3, rows=1, seed=0):
    rng = np.random.default_rng(seed)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n), domain=pyo.Binary)
    value, weight = rng.integers(10, 100, n), rng.integers(10, 100, (rows, n))
    m.obj = pyo.Objective(expr=sum(int(value[i]) * m.x[i] for i in range(n)), sense=pyo.maximize)
    m.cap = pyo.Constraint(range(rows), rule=lambda m, r: sum(
        int(weight[r, i]) * m.x[i] for i in range(n)) <= int(weight[r].sum()) // 2)
    return m


def test_optimal_with_zero_gap_and_version():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Binary)
    m.obj = pyo.Objective(expr=-sum((i + 1) * m.x[i] for i in range(3)))
    m.c = pyo.Constraint(expr=sum(m.x[i] for i in range(3)) <= 2)
    rep = solve_model(m)
    assert rep.status is SolveStatus.OPTIMAL and rep.objective == pytest.approx(-5)
    assert rep.bound == pytest.approx(-5) and rep.has_solution
    assert rep.info["mip_rel_gap"] == 0.0 and rep.info["threads"] == 1
    assert rep.info["solver_version"].count(".") == 2
    assert pyo.value(m.x[2]) == pytest.approx(1)


def test_infeasible_has_no_solution_and_infinite_objective():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Binary)
    m.obj = pyo.Objective(expr=m.x)
    m.c = pyo.Constraint(expr=m.x >= 2)
    rep = solve_model(m)
    assert rep.status is SolveStatus.INFEASIBLE and math.isinf(rep.objective) and not rep.has_solution


def test_time_limit_returns_incumbent_and_bound():
    m = knapsack(n=300, rows=60, seed=1)
    rep = solve_model(m, time_limit=0.3)
    assert rep.status is SolveStatus.TIME_LIMIT
    if rep.has_solution:  # maximisation: the dual bound is above the incumbent
        assert rep.bound is None or rep.bound >= rep.objective - 1e-6


def test_lp_relaxation_bounds_the_mip():
    m = knapsack(n=12, rows=2, seed=3)
    mip = solve_model(m).objective
    lp = solve_model(relax_integrality(m)).objective
    assert lp >= mip - 1e-9


def test_deadline_bounds_the_solve():
    from optsched.deadline import Deadline

    m = knapsack(n=300, rows=60, seed=1)
    start = cpu_time()
    rep = solve_model(m, deadline=Deadline.after(0.3), time_limit=100)
    assert rep.status is SolveStatus.TIME_LIMIT and rep.info["time_limit"] <= 0.3
    assert cpu_time() - start < 5


def test_report_outcome_carries_model_objective_and_best_bound():
    from optsched.solvers.highs import report_outcome

    m = knapsack(n=5, seed=2)
    m.obj.sense = pyo.minimize
    rep = solve_model(m)
    out = report_outcome(rep, lambda: "schedule", lower_bound=-1.0, info={"extra": 1})
    assert out.schedule == "schedule" and out.status is SolveStatus.OPTIMAL
    assert out.model_objective == rep.objective and out.lower_bound == max(rep.bound, -1.0)
    assert out.info["extra"] == 1 and out.info["solver"] == "highs"
    m.c = pyo.Constraint(expr=m.x[0] >= 2)
    none = report_outcome(solve_model(m), lambda: pytest.fail("no solution"), fallback="heur")
    assert none.schedule == "heur" and none.status is SolveStatus.INFEASIBLE
    assert none.model_objective is None


def _optimum(model):
    rep = solve_model(model)
    return rep.objective, {i: pyo.value(model.x[i]) for i in model.x}


def test_warm_start_is_used_before_any_search():
    m = knapsack(n=40, rows=3, seed=4)
    best, values = _optimum(m)
    for i, v in values.items():
        m.x[i].value = v
    rep = solve_model(m, warm_start=True, time_limit=1e-6)
    assert rep.has_solution and rep.objective == pytest.approx(best)
    for i in m.x:
        m.x[i].value = None
    assert not solve_model(m, time_limit=1e-6).has_solution


def test_wrong_or_partial_warm_start_does_not_change_the_optimum():
    m = knapsack(n=25, rows=2, seed=7)
    best, _ = _optimum(m)
    for i in m.x:
        m.x[i].value = 1  # infeasible: every item packed
    assert solve_model(m, warm_start=True).objective == pytest.approx(best)
    for i in m.x:
        m.x[i].value = None if i % 2 else 0
    assert solve_model(m, warm_start=True).objective == pytest.approx(best)


def test_a_solution_that_cannot_be_loaded_is_unknown_not_an_exception(monkeypatch):
    """HiGHS reported a solution that Pyomo could not load (seen with times spanning 1e18): the
    report says ``unknown`` with the error, and no value is trusted."""
    from optsched.solvers import highs

    real = highs.Highs.solve

    def broken(self, *args, **kw):
        res = real(self, *args, **kw)

        def fail():
            raise IndexError("index 3 is out of bounds")

        res.solution_loader.load_vars = fail
        return res

    monkeypatch.setattr(highs.Highs, "solve", broken)
    rep = solve_model(knapsack())
    assert rep.status is SolveStatus.UNKNOWN and not rep.has_solution
    assert math.isinf(rep.objective) and "IndexError" in rep.info["load_error"]


def test_warm_start_survives_a_fixed_variable_in_a_constraint():
    """A fixed variable inside a row made Pyomo rewrite the row at solve() and HiGHS drop the
    start (found by the cojob_network exact work)."""
    m = knapsack(n=40, rows=3, seed=4)
    m.z = pyo.Var(domain=pyo.Binary)
    m.zc = pyo.Constraint(expr=m.x[0] + m.z <= 1)
    m.z.fix(0)
    best, values = _optimum(m)
    for i, v in values.items():
        m.x[i].value = v
    rep = solve_model(m, warm_start=True, time_limit=1e-6)
    assert rep.has_solution and rep.objective == pytest.approx(best)


def test_size_cap_helper_refuses_only_above_the_cap_and_names_it():
    """too_large: None up to MAX_MODEL_TERMS inclusive, a reason naming the cap and the model
    above it; not_built_status says time_limit only when the time left ruled the model out."""
    from optsched.solvers import highs

    cap = highs.MAX_MODEL_TERMS
    assert 10**5 <= cap <= 10**8                       # "a few minutes, a couple of GB"
    assert highs.too_large(0, "M") is None and highs.too_large(cap, "M") is None
    why = highs.too_large(cap + 1, "Model E")
    assert why is not None and "Model E" in why and "MAX_MODEL_TERMS" in why and str(cap) in why
    assert highs.too_large(3.1e9, "Model E") is not None
    assert highs.not_built_status(True, late=False) is SolveStatus.FEASIBLE
    assert highs.not_built_status(False, late=False) is SolveStatus.UNKNOWN
    assert highs.not_built_status(True, late=True) is SolveStatus.TIME_LIMIT
    assert highs.not_built_status(False, late=True) is SolveStatus.TIME_LIMIT
