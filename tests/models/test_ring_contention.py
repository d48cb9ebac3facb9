"""ring_contention models: M1 (exact RAR-DDLS MILP) against brute force; M3 (14)–(16) bounds."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

from optsched.models import ring_contention as rm
from optsched.problems.ring_contention import verify
from optsched.result import SolveStatus
from optsched.solvers.highs import solve_model
from optsched.solvers.ring_contention import rho_hat, upper_bound_schedule
from optsched.workloads.ring_contention import generate

_spec = importlib.util.spec_from_file_location(
    "brute_ring_contention", Path(__file__).parents[1] / "solvers" / "brute_ring_contention.py")
brute = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(brute)

SEEDS = range(20)


def test_placements_enumerate_p_j():
    inst = generate("tiny", 0)  # servers (3, 3)
    assert inst.servers == (3, 3)
    got = {j: rm.placements(inst, j) for j in range(3)}
    for j, cs in got.items():
        g = inst.jobs[j].gpus
        expect = [(a, g - a) for a in range(4) if 0 <= g - a <= 3]
        assert cs == expect


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_m1_equals_brute_force(seed):
    inst = generate("tiny", seed)
    ub, _ = upper_bound_schedule(inst)
    best, _ = brute.brute_force(inst, ub)
    model = rm.build_exact(inst, ub)
    rep = solve_model(model)
    assert rep.status is SolveStatus.OPTIMAL
    assert rep.objective == pytest.approx(best)
    # the extracted (start, placement) pairs re-simulate to the MILP's makespan
    assert verify(inst, rm.extract_schedule(inst, model)) == pytest.approx(rep.objective)
    # M3 with contention-free durations and the simple bounds stay below the optimum (digest §3.5)
    m3 = solve_model(rm.build_budget(inst, durations="lower"))
    assert m3.status is SolveStatus.OPTIMAL and m3.objective <= best + 1e-6
    assert max(rm.simple_lower_bound(inst).values()) <= best


def test_m1_infeasible_below_optimum():
    inst = generate("tiny", 0)  # optimum 6 (brute force), heuristics 7
    ub, _ = upper_bound_schedule(inst)
    assert ub == 7
    assert solve_model(rm.build_exact(inst, 6)).objective == pytest.approx(6)
    assert solve_model(rm.build_exact(inst, 5)).status is SolveStatus.INFEASIBLE


def test_m1_uses_contention_levels():
    """M1 carries contention levels and is sparse: no start x[j,c,t] from which j cannot end by H."""
    inst = generate("tiny", 0)
    model = rm.build_exact(inst, 7)
    assert len(model.L) > 0
    for (j, c, t) in model.x:
        assert t + rm.duration(inst, j, rm.n_servers_used(model.P[j][c])) <= 7


def test_budget_with_fixed_theta_is_the_papers_feasibility_problem():
    inst = generate("tiny", 4)
    est = rho_hat(inst)
    free = solve_model(rm.build_budget(inst, durations="estimate", rho_hat=est))
    theta_star = free.objective
    assert theta_star >= max(est) - 1e-6  # some GPU carries the longest job
    ok = solve_model(rm.build_budget(inst, durations="estimate", rho_hat=est, theta=theta_star + 1e-6))
    assert ok.status is SolveStatus.OPTIMAL
    bad = solve_model(rm.build_budget(inst, durations="estimate", rho_hat=est, theta=theta_star - 0.01))
    assert bad.status is SolveStatus.INFEASIBLE


def test_simple_bounds_by_hand():
    inst = generate("tiny", 9)  # (3, 2) servers, jobs G = 4, 4, 2: the two 4-GPU jobs conflict
    parts = rm.simple_lower_bound(inst)
    rho = rm.min_durations(inst)
    big = [r for job, r in zip(inst.jobs, rho) if job.gpus == 4]
    assert parts["conflict"] == sum(big)
    assert parts["length"] == max(rho)
    assert parts["area"] == math.ceil(sum(j.gpus * r for j, r in zip(inst.jobs, rho)) / 5 - 1e-9)
