"""edge_cloud ``exact`` (issue 14): the time-indexed configuration MILP (job x non-dominated
placement x start) against the previous compact model of (2) (``build_exact``) and against CP-SAT;
placements dominate every run; the Lagrangian bound, its heuristic and reduced-cost fixing keep the
optimum; the MIP start from the best heuristic and the never-worse-than-the-heuristic rule; the
trivial bound (single_job_flow) and the size guard (MAX_PLACEMENTS); lower_bound between the
trivial bound and the optimum."""

from __future__ import annotations


import pyomo.environ as pyo
import pytest

from optsched.models.edge_cloud import (
    build_exact, build_pattern, enumerate_columns, extract_pattern, placements, run_columns,
    set_start,
)
from optsched.deadline import NEVER
from optsched.problems.edge_cloud import Instance, deadlines, verify
from optsched.registry import solve
from optsched.result import SolveStatus
from optsched.solvers.edge_cloud.bounds import incumbent, lagrangian, trivial_bound
from optsched.solvers.highs import solve_model
from optsched.workloads.edge_cloud import generate

from tests.models.test_edge_cloud import HAND_MADE, _job
from tests.solvers import brute_edge_cloud as brute


SLOW_OLD = {9}  # the previous compact model needs ~6 s on tiny seed 9


@pytest.mark.parametrize("seed", [pytest.param(s, marks=pytest.mark.slow) if s in SLOW_OLD else s
                                  for s in range(22)])
def test_configuration_model_equals_previous_model(seed):
    """The configuration MILP over *all* columns (no reduced-cost fixing) and the previous compact
    MILP (:func:`build_exact`, an independent formulation) have the same optimum on the same
    deadlines, and the configuration model's schedule verifies with its objective."""
    inst = generate("tiny", seed)
    _, ub = incumbent(inst, NEVER)
    dl = deadlines(inst, ub)
    new = build_pattern(inst, run_columns(inst, dl))
    old = build_exact(inst, dl)
    rep_new, rep_old = solve_model(new), solve_model(old)
    assert rep_new.status is rep_old.status is SolveStatus.OPTIMAL
    assert rep_new.objective == pytest.approx(rep_old.objective)
    assert verify(inst, extract_pattern(inst, new)) == pytest.approx(rep_new.objective)


@pytest.mark.parametrize("seed", range(6))
def test_exact_equals_cp_sat_on_small(seed):
    """With reduced-cost fixing and the MIP start, ``exact`` proves the optimum CP-SAT proves
    (written from the problem module, no shared code) on 8-job instances of ``small``."""
    pytest.importorskip("ortools")
    inst = generate("small", seed)
    milp = solve(inst, "exact", time_limit=120)
    cp = solve(inst, "exact_cp", time_limit=120)
    assert milp.status is cp.status is SolveStatus.OPTIMAL
    assert milp.objective == cp.objective
    assert milp.lower_bound == pytest.approx(milp.objective)
    assert milp.info["n_kept"] < milp.info["n_columns"]  # the fixing removed columns


@pytest.mark.parametrize("name", sorted(HAND_MADE))
def test_every_run_is_dominated_by_a_placement(name):
    """Every in-window run of :func:`enumerate_columns` (all worker vectors and PS servers, least
    length, no dominance) has a placement with the same PS server, at most its workers on every
    server, ready by its start and no longer: dropping dominated placements loses no schedule."""
    inst, _ = HAND_MADE[name]
    for j in range(len(inst.jobs)):
        kept = placements(inst, j)
        for col in enumerate_columns(inst, [j], 8):
            have = dict(col.run.workers)
            assert any(p.ps == col.run.ps and p.start <= col.run.start and p.length <= col.run.length
                       and all(n <= have.get(s, 0) for s, n in p.workers) for p in kept), col


@pytest.mark.parametrize("seed", range(8))
def test_lagrangian_bound_and_fixing_keep_the_optimum(seed):
    """On tiny instances: trivial bound <= Lagrangian bound <= brute-force optimum; reduced costs
    are >= 0; every column of an optimal schedule satisfies the fixing test ``L + rc <= UB``; the
    Lagrangian heuristic's schedule, when there is one, verifies with the value it reports."""
    inst = generate("tiny", seed)
    _, ub = incumbent(inst, NEVER)
    columns = run_columns(inst, deadlines(inst, ub))
    lag = lagrangian(inst, columns, ub, deadline=NEVER)
    opt = brute.brute_force(inst, ub)
    assert trivial_bound(inst) - 1e-6 <= lag.bound <= opt + 1e-6
    assert (lag.reduced >= -1e-9).all()
    if lag.schedule is not None:
        assert verify(inst, lag.schedule) == lag.value < ub
    model = build_pattern(inst, columns)
    assert solve_model(model).objective == pytest.approx(opt)
    chosen = [k for k in range(len(columns)) if model.x[k].value > 0.5]
    assert all(lag.bound + lag.reduced[k] <= ub + 1e-6 for k in chosen)


@pytest.mark.parametrize("seed", range(3))
def test_mip_start_is_the_incumbent_and_never_worse(seed):
    """set_start sets every job from the heuristic schedule; the started columns are feasible for
    the model and cost no more than the heuristic (runs are shortened to the least length)."""
    inst = generate("small", seed, n_jobs=12)
    sched, ub = incumbent(inst, NEVER)
    model = build_pattern(inst, run_columns(inst, deadlines(inst, ub)))
    assert set_start(model, inst, sched) == len(inst.jobs)
    chosen = [model.columns[k] for k in model.x if model.x[k].value == 1]
    assert sorted(col.job for col in chosen) == list(range(len(inst.jobs)))
    started = verify(inst, extract_pattern(inst, model))
    assert started <= ub
    for con in model.component_data_objects(pyo.Constraint, active=True):
        value = pyo.value(con.body)
        assert (con.lower is None or value >= pyo.value(con.lower) - 1e-9) and \
               (con.upper is None or value <= pyo.value(con.upper) + 1e-9)


def test_exact_stopped_early_is_never_worse_than_its_heuristics():
    """A deadline too short to prove the optimum of a 24-job instance: ``exact`` returns a verified
    schedule no worse than the best heuristic's, status time_limit (or optimal if it got there),
    and a bound no higher than its objective."""
    inst = generate("small", 2, n_jobs=24)
    _, ub = incumbent(inst, NEVER)
    res = solve(inst, "exact", time_limit=2.0)
    assert res.status in (SolveStatus.TIME_LIMIT, SolveStatus.OPTIMAL)
    assert res.objective <= ub
    assert trivial_bound(inst) <= res.lower_bound <= res.objective + 1e-6


@pytest.mark.parametrize("seed", range(10))
def test_single_job_flow_is_the_optimum_of_the_job_alone(seed):
    """single_job_flow (the per-job term of the trivial bound) equals brute force on every job of
    a tiny and a small instance taken alone, and is never below min_flow."""
    from dataclasses import replace

    from optsched.problems.edge_cloud import min_flow
    from optsched.solvers.edge_cloud.bounds import single_job_flow

    for inst in (generate("tiny", seed), generate("small", seed, n_jobs=3)):
        for j, job in enumerate(inst.jobs):
            alone = replace(inst, jobs=(job,))
            _, ub = incumbent(alone, NEVER)
            assert single_job_flow(alone, 0) == brute.brute_force(alone, ub) >= min_flow(alone, 0)
            assert single_job_flow(inst, j) == single_job_flow(alone, 0)


def test_too_many_placements_are_not_enumerated():
    """One job with 20 workers allowed on each of three 20-worker servers has 21^3 x 3 worker
    vectors x PS servers: the configuration model is not built (no quadratic dominance test, no
    memory blow-up) and exact says why (``info["not_built"]``); ``solve`` then falls through to
    certify (issue 19), which may prove the optimum; lower_bound is the trivial bound."""
    from optsched.solvers.edge_cloud.bounds import MAX_PLACEMENTS

    inst = Instance(workers=((20,), (20,), (20,)), ps=((1,), (1,), (1,)),
                    jobs=(_job(chunks=20, epochs=40, delay=(0, 0, 0)),) * 2)
    res = solve(inst, "exact", time_limit=10)
    assert str(MAX_PLACEMENTS) in res.info["not_built"]
    assert res.status in (SolveStatus.TIME_LIMIT, SolveStatus.OPTIMAL)
    assert res.objective <= incumbent(inst, NEVER)[1] and res.lower_bound <= res.objective
    lb = solve(inst, "lower_bound", time_limit=10)
    assert lb.status is SolveStatus.TIME_LIMIT and lb.lower_bound == trivial_bound(inst)


@pytest.mark.parametrize("seed", range(3))
def test_lower_bound_between_trivial_and_optimum(seed):
    inst = generate("small", seed)
    lb = solve(inst, "lower_bound")
    opt = solve(inst, "exact")
    assert lb.status is opt.status is SolveStatus.OPTIMAL
    assert trivial_bound(inst) <= lb.lower_bound <= opt.objective + 1e-6
