"""hetero_gpu exact models (issue 14): the time-indexed MILP and the big-M MILP each against brute
force, against each other and against CP-SAT; their MIP starts; the never-worse-than-the-start rule."""

import math

import pyomo.environ as pyo
import pytest

from optsched import generate, solve, verify
from optsched.deadline import Deadline
from optsched.models import hetero_gpu as hm
from optsched.problems.hetero_gpu import Instance, Job
from optsched.solvers.hetero_gpu import algorithm as hs_algorithm
from optsched.solvers.hetero_gpu import exact as hs_exact
from optsched.solvers.hetero_gpu import search as hs_search
from optsched.solvers.highs import solve_model

from tests.models.test_hetero_gpu import HAND_MADE
from tests.solvers.brute_hetero_gpu import brute_force


def _solve_time_indexed(inst, upper_bound=None):
    windows = hm.time_indexed_windows(inst, upper_bound)
    m = hm.build_time_indexed(inst, windows)
    rep = solve_model(m)
    assert rep.status.value == "optimal"
    sched = hm.extract_time_indexed(inst, m)
    return rep.objective * m.objective_unit, verify(inst, sched)


def _solve_big_m(inst, upper_bound=None):
    m = hm.build_exact(inst, upper_bound=upper_bound)
    rep = solve_model(m)
    assert rep.status.value == "optimal"
    return rep.objective * m.objective_unit, verify(inst, hm.extract_schedule(inst, m))


def _start(inst):
    return hs_exact._best_start(inst, Deadline.after(30), 0)


@pytest.mark.parametrize("seed", range(24))
def test_both_models_equal_brute_force(seed):
    """24 tiny instances: each model, without and with deadlines from the heuristic start, proves
    the brute-force optimum, and the extracted schedule verifies at it."""
    inst = generate("hetero_gpu", "tiny", seed, max_tasks=6)
    opt = brute_force(inst)
    _, cost, _ = _start(inst)
    for build in (_solve_time_indexed, _solve_big_m):
        for ub in (None, cost):
            model_value, verified = build(inst, ub)
            assert verified == pytest.approx(opt, rel=1e-9, abs=0)
            assert model_value == pytest.approx(opt, rel=1e-9)


@pytest.mark.parametrize("seed", range(20))
def test_models_agree_with_cp_sat_on_small(seed):
    """20 small instances (up to 8 tasks): time-indexed == big-M == CP-SAT (an independent engine)."""
    inst = generate("hetero_gpu", "small", seed, max_tasks=8)
    cp = solve(inst, "exact_cp", time_limit=60)
    assert cp.status.value == "optimal"
    _, cost, _ = _start(inst)
    assert _solve_time_indexed(inst, cost)[1] == pytest.approx(cp.objective, rel=1e-9)
    assert _solve_big_m(inst, cost)[1] == pytest.approx(cp.objective, rel=1e-9)


def test_hand_made_instances_exercise_both_models():
    """The hand-made edge instances (tests/models/test_hetero_gpu.py, exact == brute force there)
    go through both models: grid data to the time-indexed one (1e-7 and 2e-7 are on the grid
    1e-7: 2e-7 is exactly twice the float 1e-7), off-grid data (1.0000005 with 0.9999995) to
    the big-M one."""
    used = {name: solve(inst, "exact", time_limit=60).info["model"] for name, inst in HAND_MADE.items()}
    assert used["exact_ties"] == "time_indexed"
    assert used["tolerance_edge_times"] == "big_m"
    assert used["sub_microsecond_times"] == "time_indexed"
    assert used["tolerance_edge_barrier"] == "big_m"


def test_time_grid():
    inst = generate("hetero_gpu", "small", 0)
    assert hm.time_grid(inst) == 1.0  # integer data with an odd value
    halves = Instance(("a",), (Job(0.5, 1, 1, 1, (1.5,), (0.0,)),))
    assert hm.time_grid(halves) == 0.5
    assert hm.time_indexed_windows(Instance(("a",), (Job(0, 1, 1, 1, (0.1,), (0.3,)),)), None) is None


@pytest.mark.parametrize("seed", range(6))
def test_starts_satisfy_every_row(seed):
    """set_start / set_time_indexed_start put a verified heuristic schedule into the models: every
    row holds at those values and the objective equals the schedule's verified cost."""
    inst = generate("hetero_gpu", "small", seed, max_tasks=12)
    sched, cost, _ = _start(inst)
    canon = hm.canonical(inst, sched)
    assert verify(inst, canon) == pytest.approx(cost, rel=1e-12)
    windows = hm.time_indexed_windows(inst, cost)
    ti = hm.build_time_indexed(inst, windows)
    assert hm.set_time_indexed_start(ti, inst, sched)
    bm = hm.build_exact(inst, upper_bound=cost)
    hm.set_start(bm, inst, sched)
    for m in (ti, bm):
        for con in m.component_data_objects(pyo.Constraint, active=True):
            body = pyo.value(con.body)
            assert con.lower is None or body >= pyo.value(con.lower) - 1e-6, con.name
            assert con.upper is None or body <= pyo.value(con.upper) + 1e-6, con.name
        assert pyo.value(m.obj) * m.objective_unit == pytest.approx(cost, rel=1e-9)


def test_canonical_meets_the_symmetry_breaking():
    inst = generate("hetero_gpu", "small", 4, max_tasks=12)
    canon = hm.canonical(inst, _start(inst)[0])
    start = {t.key: t.start for t in canon.runs}
    gpu = {t.key: t.gpu for t in canon.runs}
    for n, r, k in inst.tasks:
        if k:
            assert start[n, r, k - 1] <= start[n, r, k]
    for gpus in hm.gpu_classes(inst):
        firsts = [min((t for t, i in enumerate(inst.tasks) if gpu[i] == g), default=math.inf) for g in gpus]
        assert firsts == sorted(firsts)


@pytest.mark.parametrize("seed", range(3))
def test_exact_is_never_worse_than_its_start(seed):
    """With too little time to prove anything (a 20-task instance, 2 s), ``exact`` returns a
    verified schedule no worse than the start it used, and a valid bound."""
    inst = generate("hetero_gpu", "small", seed, max_tasks=20, n_jobs=(12, 12))
    result = solve(inst, "exact", time_limit=2)
    assert math.isfinite(result.objective) and result.schedule is not None
    if "not_built" in result.info:
        # under load the starts may leave too little of the 2 s (wall) to build the model: then
        # the start was the fallback (or certify continued from it) and no MILP incumbent exists
        assert result.status.value in ("time_limit", "feasible", "optimal")
        assert result.lower_bound is None or result.lower_bound <= result.objective * (1 + 1e-9)
        return
    # the start actually used: the best of the heuristics that fitted in the start share
    assert result.objective <= result.info["start_cost"] * (1 + 1e-9)
    if result.info.get("returned") == "warm start":
        assert result.objective == pytest.approx(result.info["start_cost"], rel=1e-12)
    # HiGHS may stop (its wall-time limit, under load) before it has a bound: None is valid
    assert result.lower_bound is None or result.lower_bound <= result.objective * (1 + 1e-9)
    if result.status.value == "optimal":
        assert result.lower_bound == pytest.approx(result.objective, rel=1e-6)


def test_warm_start_never_worse_than_cold():
    """The MIP start only adds an incumbent: with the same short limit, the warm-started model's
    incumbent is at most the start's cost, and neither run's incumbent is below the other's proven
    bound. (How far each run gets in 3 s of wall time depends on the machine's load, so the
    incumbents themselves are not compared: a cold run given more CPU may find a better one.)"""
    inst = generate("hetero_gpu", "small", 2, max_tasks=20, n_jobs=(12, 12))
    sched, cost, _ = _start(inst)
    windows = hm.time_indexed_windows(inst, cost)
    values, bounds = {}, {}
    for warm in (False, True):
        m = hm.build_time_indexed(inst, windows)
        if warm:
            assert hm.set_time_indexed_start(m, inst, sched)
        rep = solve_model(m, time_limit=3, warm_start=warm)
        values[warm] = rep.objective * m.objective_unit
        bounds[warm] = -math.inf if rep.bound is None else rep.bound * m.objective_unit
    assert values[True] <= cost * (1 + 1e-9)
    assert values[True] >= bounds[False] * (1 - 1e-9) and values[False] >= bounds[True] * (1 - 1e-9)


@pytest.mark.parametrize("seed", [10, 22, 24, 27])
def test_three_round_jobs_equal_brute_force(seed):
    """Jobs with 3 rounds: a middle round's first task has both a 'started' and a 'finished'
    running count. When both shared one key (first version of build_time_indexed), these seeds
    came out infeasible (10, 24, 27) or 70 > 69 = OPT (22)."""
    inst = generate("hetero_gpu", "tiny", seed, max_tasks=6, max_rounds=3)
    assert max(j.rounds for j in inst.jobs) >= 3
    opt = brute_force(inst)
    for build in (_solve_time_indexed, _solve_big_m):
        model_value, verified = build(inst)
        assert verified == pytest.approx(opt, rel=1e-9, abs=0)
        assert model_value == pytest.approx(opt, rel=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_list_rescheduling_never_worsens_the_start(seed):
    """reschedule keeps the best verified cost: never above the heuristic it starts from."""
    inst = generate("hetero_gpu", "small", seed, max_tasks=16, n_jobs=(10, 10))
    first = hs_algorithm.hare(inst, hs_exact.EXACT_START, deadline=Deadline.after(30)).schedule
    cost = verify(inst, first)
    sched, better, _ = hs_search.reschedule(inst, first, cost, "hare", Deadline.after(30))
    assert verify(inst, sched) == pytest.approx(better, rel=1e-12)
    assert better <= cost


#: Hand-made instances with times from 1e-2 to 1e4, mostly sync-dominated (T^s >> T^c), arrivals
#: far apart and weights from 0.01 to 5000; none lies on a usable grid, so ``exact`` takes the
#: big-M model. Before the fix, the big-M model proved a wrong "optimum" on issue_case,
#: light_early_heavy_late, sync_dominated and thirds_and_tens (relative error 2.5e-6 to 3.5e-3):
#: objective coefficients below HiGHS's dual tolerance (models.hetero_gpu.weight_unit) and, on
#: sync_dominated without deadlines, a horizon of 1.15e9 model units (models.hetero_gpu.time_unit).
WIDE_RANGE = {
    "issue_case": Instance(("s3",), (
        Job(50.0, 5.0, 1, 1, (1 / 12,), (0.5,)),
        Job(10000.0, 5000.0, 2, 3, (1 / 3,), (1.0,)))),
    "light_early_heavy_late": Instance(("a", "b"), (
        Job(0.0, 1.0, 2, 1, (0.01, 0.03), (40.0, 35.0)),
        Job(9000.0, 4000.0, 2, 2, (3.0, 0.7), (700.0, 1200.0)))),
    "sync_dominated": Instance(("a",), (
        Job(0.0, 3.0, 1, 2, (0.02,), (5000.0,)),
        Job(1.0, 1.0, 2, 1, (0.05,), (0.5,)),
        Job(7000.0, 2500.0, 1, 2, (0.011,), (9000.0,)))),
    "tiny_weight_long_wait": Instance(("a", "b"), (
        Job(0.0, 0.01, 1, 2, (0.04, 0.013), (2.0, 9.0)),
        Job(0.5, 5000.0, 1, 3, (1 / 3, 1 / 7), (1.0, 1.5)),
        Job(8000.0, 10.0, 1, 1, (10000.0, 9000.0), (0.01, 0.02)))),
    "thirds_and_tens": Instance(("a",), (
        Job(3.0, 7.0, 2, 2, (1 / 3,), (100.0,)),
        Job(10000.0, 0.2, 1, 2, (0.1,), (1 / 30,)),
        Job(20.0, 1000.0, 1, 1, (1 / 9,), (3000.0,)))),
    "equal_gpus_wide": Instance(("a", "a"), (
        Job(0.0, 2.0, 1, 3, (0.01, 0.01), (100.0, 100.0)),
        Job(5000.0, 900.0, 2, 2, (0.3, 0.3), (0.03, 0.03)),
        Job(60.0, 1.0, 1, 1, (1000.0, 1000.0), (0.0, 0.0)))),
}


@pytest.mark.parametrize("name", sorted(WIDE_RANGE))
def test_big_m_equals_brute_force_on_wide_ranges(name):
    """The big-M model (4)-(8), built directly (no grid, no time-indexed model), without deadlines
    and with the deadlines of the brute-force optimum itself (the tightest valid windows) and of
    1.001 x it: HiGHS proves the optimum, its bound is the optimum (never above it: objective (1)),
    and the extracted schedule verifies at it."""
    inst = WIDE_RANGE[name]
    opt = brute_force(inst)
    for ub in (None, opt * 1.001, opt):
        m = hm.build_exact(inst, upper_bound=ub)
        rep = solve_model(m, time_limit=60)
        assert rep.status.value == "optimal", ub
        assert rep.objective * m.objective_unit == pytest.approx(opt, rel=1e-9, abs=0), ub
        assert rep.bound * m.objective_unit == pytest.approx(opt, rel=1e-9, abs=0), ub
        assert verify(inst, hm.extract_schedule(inst, m)) == pytest.approx(opt, rel=1e-9, abs=0), ub


@pytest.mark.parametrize("name", sorted(WIDE_RANGE))
def test_exact_on_wide_ranges_takes_big_m_and_proves_brute_force(name):
    """Through the registry: ``exact`` uses the big-M model (no usable grid) and reports the
    brute-force optimum as optimal, with its bound, nothing dropped or demoted."""
    inst = WIDE_RANGE[name]
    opt = brute_force(inst)
    res = solve(inst, "exact", time_limit=60)
    assert res.info["model"] == "big_m"
    assert "bound_dropped" not in res.info and "demoted" not in res.info
    assert res.status.value == "optimal"
    assert res.objective == pytest.approx(opt, rel=1e-9, abs=0)
    assert res.lower_bound == pytest.approx(opt, rel=1e-6, abs=0)


@pytest.mark.parametrize("name", sorted(WIDE_RANGE))
def test_big_m_scaling_keeps_highs_tolerances_negligible(name):
    """The scaling the fix relies on: every objective coefficient w_n / s >= 1 (above HiGHS's dual
    tolerance 1e-7), the objective at the completion bound >= 1024 (above its absolute gap 1e-6),
    and the horizon below 2^23 time units (an ulp below 1e-9 there)."""
    inst = WIDE_RANGE[name]
    m = hm.build_exact(inst)
    coefficients = [inst.jobs[n].weight * m.time_unit / m.objective_unit for n in range(len(inst.jobs))]
    assert min(coefficients) >= 1
    floor = sum(j.weight * c for j, c in zip(inst.jobs, hm.completion_lower_bounds(inst)))
    assert floor / m.objective_unit >= 1024
    assert hm.trivial_horizon(inst) / m.time_unit < 2 ** 23
    assert max(m.x[i].ub for i in inst.tasks) < 2 ** 23
