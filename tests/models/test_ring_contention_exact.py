"""ring_contention pulse MILP (issue 14 item 2): the model itself against CP-SAT and brute force,
its valid inequalities and symmetry breaking, and the warm start (set_start, never worse).

The previous M1 (x[j,c,t] starts, activity/completion binaries, per-job v with the issue-13 big-M)
is not kept: the independent cross-check is ``exact_cp`` (CP-SAT, written from the problem
module), plus brute force on tiny instances (tests/solvers/brute_ring_contention.py).
"""

from __future__ import annotations

import dataclasses

import pytest

from optsched import solve
from optsched.deadline import NEVER, Deadline
from optsched.models import ring_contention as rm
from optsched.problems.ring_contention import Schedule, completion_times, verify
from optsched.result import Outcome, SolveStatus
from optsched.solvers.ring_contention import exact as rc
from optsched.solvers.highs import solve_model
from optsched.workloads.ring_contention import generate

from tests.solvers import brute_ring_contention as brute

MIX = (1, 2, 4, 2, 1)  # every placement kind on (4, 4): one-server and split rings of 2 and 4


def _small(seed: int, n: int = 5):
    return generate("small", seed, sizes=MIX[:n])


def _model_optimum(inst, horizon: int, lower_bound: int = 0):
    model = rm.build_exact(inst, horizon, lower_bound=lower_bound)
    rep = solve_model(model)
    assert rep.status is SolveStatus.OPTIMAL
    sched = rm.extract_schedule(inst, model)
    assert verify(inst, sched) == pytest.approx(rep.objective)  # never stricter, never looser
    return rep.objective


@pytest.mark.parametrize("seed", range(22))
def test_model_equals_cp_sat(seed):
    """The model alone (no lower bound: no shortcut of ``exact``) at H = heuristic makespan has
    the optimum CP-SAT proves, on 22 five-job instances with split rings and contention."""
    pytest.importorskip("ortools")
    from optsched.solvers.ring_contention.cp import exact_cp

    inst = _small(seed)
    ub, _ = rc.upper_bound_schedule(inst, NEVER)
    cp = exact_cp(inst, deadline=Deadline.after(60))
    assert cp.status is SolveStatus.OPTIMAL
    assert _model_optimum(inst, ub) == pytest.approx(verify(inst, cp.schedule))


@pytest.mark.parametrize("seed", range(6))
def test_model_equals_brute_force_with_lower_bound_and_loose_horizon(seed):
    """Tail-energy cuts are written for u <= lower_bound only (for u > C they would cut every
    schedule: N (C - u) < 0): with lower_bound = OPT and H = OPT + 6 the optimum survives."""
    inst = generate("tiny", seed)
    ub, _ = rc.upper_bound_schedule(inst, NEVER)
    best, _ = brute.brute_force(inst, ub)
    assert _model_optimum(inst, best + 6, lower_bound=best) == pytest.approx(best)
    # one slot less than the optimum is infeasible, with or without the bound
    assert solve_model(rm.build_exact(inst, best - 1)).status is SolveStatus.INFEASIBLE


def test_pulses_are_exact_durations():
    """One-server pulses last exactly ceil(F / phi(1, 1)); split pulses between the
    contention-free and the worst-contention duration; every pulse ends by H."""
    inst = _small(3)
    H = 30
    model = rm.build_exact(inst, H)
    assert len(model.L) > 0
    for (j, c, t, e) in model.x:
        n = rm.n_servers_used(model.P[j][c])
        assert e <= H
        if n == 1:
            assert e - t == rm.duration(inst, j, 1)
        else:
            assert rm.duration(inst, j, n, 1) <= e - t <= rm.duration(inst, j, n, inst.max_contention)


def test_server_symmetry_keeps_one_orientation():
    """(4, 4) servers are interchangeable: the job with the most placements keeps only those
    non-increasing over the two servers; the others keep all of theirs."""
    inst = _small(0)
    model = rm.build_exact(inst, 20)
    full = {j: rm.placements(inst, j) for j in range(len(inst.jobs))}
    cut = [j for j in full if model.P[j] != full[j]]
    assert len(cut) == 1 and inst.jobs[cut[0]].gpus == 4
    assert model.P[cut[0]] == [c for c in full[cut[0]] if c[0] >= c[1]]


def _mirror(s: Schedule) -> Schedule:
    return Schedule(s.starts, tuple(c[::-1] for c in s.placements))


@pytest.mark.parametrize("seed", range(4))
def test_set_start_is_a_solution_of_the_model(seed):
    """The heuristic schedule and its mirror image (servers swapped) are set as starts; fixing
    x to them, the model is feasible with C = their verified makespan."""
    inst = _small(seed)
    ub, sched = rc.upper_bound_schedule(inst, NEVER)
    for s in (sched, _mirror(sched)):
        assert verify(inst, s) == ub
        model = rm.build_exact(inst, ub)
        rm.set_start(model, inst, s)
        for var in model.x.values():
            var.fix()
        rep = solve_model(model)
        assert rep.status is SolveStatus.OPTIMAL and rep.objective == pytest.approx(ub)


def test_set_start_rejects_a_schedule_beyond_the_horizon():
    inst = _small(1)
    ub, sched = rc.upper_bound_schedule(inst, NEVER)
    with pytest.raises(ValueError, match="not in the model"):
        rm.set_start(rm.build_exact(inst, ub - 1), inst, sched)


def test_not_worse_returns_the_heuristic_when_the_milp_incumbent_is_worse():
    inst = _small(2)
    ub, sched = rc.upper_bound_schedule(inst, NEVER)
    late = Schedule(tuple(a + 3 for a in sched.starts), sched.placements)
    inst_late = dataclasses.replace(inst, horizon=ub + 10)
    assert verify(inst_late, late) > ub
    out = rc._not_worse(inst_late, Outcome(late, SolveStatus.TIME_LIMIT, 5.0), sched, ub)
    assert out.schedule is sched and out.status is SolveStatus.TIME_LIMIT and out.lower_bound == 5.0
    kept = rc._not_worse(inst_late, Outcome(sched, SolveStatus.OPTIMAL, float(ub)), late, ub + 3)
    assert kept.status is SolveStatus.OPTIMAL


@pytest.mark.parametrize("limit", [2.0, 6.0])
def test_exact_is_never_worse_than_its_heuristic(limit):
    """Short deadlines on a 20-job instance: whatever the status, the verified makespan is at
    most the heuristic makespan exact started from (info["horizon"])."""
    inst = generate("small", 2, sizes=(1, 1, 1, 2, 2, 4) * 3 + (1, 1))
    r = solve(inst, "exact", time_limit=limit)
    if "not_built" in r.info:  # solve went on with certify: its first step is exact's heuristic
        assert r.objective <= r.info["steps"][0]["objective"]
    else:
        assert r.objective <= r.info["horizon"]
    if r.status is SolveStatus.OPTIMAL:
        assert r.lower_bound == pytest.approx(r.objective)


def test_exact_proves_twenty_jobs():
    """The reach target: a 20-job ``small`` mix instance is proven (the old M1 proved <= 10)."""
    inst = generate("small", 1, sizes=(1, 1, 1, 2, 2, 4) * 3 + (1, 1))
    r = solve(inst, "exact", time_limit=120)
    assert r.status is SolveStatus.OPTIMAL
    assert r.objective == max(completion_times(inst, Schedule(r.schedule.starts,
                                                              r.schedule.placements)))


def test_stage_one_at_the_lower_bound():
    """_at_bound: where OPT = LB_area (12-job seed 0: 20) it returns the optimum; where OPT > LB
    (seed 1: LB 19, OPT 20 by exact_reach's run) it proves infeasibility and raises the bound."""
    mix = (1, 1, 1, 2, 2, 4) * 2
    found = generate("small", 0, sizes=mix)
    lb = max(rm.simple_lower_bound(found).values())
    out, bound = rc._at_bound(found, lb, Deadline.after(120), 0, {})
    assert out is not None and out.status is SolveStatus.OPTIMAL and bound == lb
    assert verify(found, out.schedule) == lb
    none = generate("small", 1, sizes=mix)
    lb = max(rm.simple_lower_bound(none).values())
    out, bound = rc._at_bound(none, lb, Deadline.after(120), 0, {})
    assert out is None and bound == lb + 1
    assert solve(none, "exact", time_limit=120).objective >= bound
