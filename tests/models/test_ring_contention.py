"""ring_contention models: M1 (exact RAR-DDLS MILP) against brute force; M3 (14)–(16) bounds."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from optsched import solve
from optsched.deadline import NEVER
from optsched.io import load_instance, load_schedule
from optsched.models import ring_contention as rm
from optsched.problems.ring_contention import Instance, Schedule, completion_times, verify
from optsched.result import SolveStatus
from optsched.solvers.highs import solve_model
from optsched.solvers.ring_contention.algorithm import rho_hat
from optsched.solvers.ring_contention.exact import upper_bound_schedule
from optsched.workloads.ring_contention import generate

from tests.solvers import brute_ring_contention as brute

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
    ub, _ = upper_bound_schedule(inst, NEVER)
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
    inst = generate("tiny", 0)  # optimum 6 (brute force); SJF-BCO, FF and LS give 7
    ub, _ = upper_bound_schedule(inst, NEVER)
    assert ub >= 6
    assert solve_model(rm.build_exact(inst, 6)).objective == pytest.approx(6)
    assert solve_model(rm.build_exact(inst, 5)).status is SolveStatus.INFEASIBLE


def test_m1_uses_contention_levels():
    """The pulse model carries contention levels and is sparse: every pulse x[j,c,t,e] ends by H
    and lasts at least the contention-free duration of its placement."""
    inst = generate("tiny", 0)
    model = rm.build_exact(inst, 7)
    assert len(model.L) > 0
    for (j, c, t, e) in model.x:
        assert t + rm.duration(inst, j, rm.n_servers_used(model.P[j][c])) <= e <= 7


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


# ----------------------------------------------------------------------------------------------
# Issue 13: the exact model is never stricter than verify
# ----------------------------------------------------------------------------------------------

DATA = Path(__file__).parents[1] / "data" / "ring_contention"


def test_bigm_repro_exact_finds_the_verified_better_schedule():
    """Issue 13: M1 said 5 (optimal) while a schedule of makespan 4 verifies. The split placement
    (1, 2) of job 1 capped v[1,t] at 2 phi_1(2, 1) = 24 - drops even while job 1 ran elsewhere;
    here job 2's cap phi_2(2, 1) = 10 became <= 20 for its one-server placement (2, 0), whose speed
    phi_2(1, 1) = 27 is 2.7x faster (b^i = 10 b^e), so (2, 0) could not run at full speed."""
    inst = load_instance(DATA / "exact_bigm_repro.json")
    better = load_schedule(DATA / "exact_bigm_repro_schedule.json")
    assert verify(inst, better) == 4.0
    assert inst.phi(2, 1, 1) == 27 > 2 * inst.phi(2, 2, 1) == 20
    r = solve(inst, "exact")
    assert r.status is SolveStatus.OPTIMAL and r.objective == 4.0
    assert r.info["model_objective"] == pytest.approx(4.0)
    ub, _ = upper_bound_schedule(inst, NEVER)
    assert brute.brute_force(inst, ub)[0] == 4
    # the model alone (no lower bound) at H = 4 holds the better schedule, at H = 3 nothing
    model = rm.build_exact(inst, 4)
    assert solve_model(model).objective == pytest.approx(4.0)
    assert verify(inst, rm.extract_schedule(inst, model)) == 4.0
    assert solve_model(rm.build_exact(inst, 3)).status is SolveStatus.INFEASIBLE


def _job(g, f, grad=0.0, batch=1, fp=0.0, bp=0.05) -> dict:
    return dict(gpus=g, iterations=f, grad_size=grad, batch=batch, fp_time=fp, bp_time=bp)


def _inst(servers, jobs, horizon=12, **consts) -> Instance:
    c = dict(bw_inter=1.0, bw_intra=10.0, reduce_speed=50.0, alpha=0.5, xi1=1.0, xi2=0.01)
    c.update(consts)
    return Instance.from_dict({"family": "ring_contention", "format_version": 1,
                               "servers": list(servers), "jobs": jobs, **c, "horizon": horizon})


# Outside the generator's distribution (its tiny preset: b^i = 10 b^e, alpha = 0.1, tau in
# [0.02, 0.05], F in [60, 120], 3 jobs on (4, 4) / (3, 2) / (3, 3)).
HAND_MADE = {
    # b^i = 100 b^e: one-server placements ~10-30x faster than split ones (the issue-13 big-M case)
    "intra_100x": lambda: _inst((3, 2), [_job(3, 200, grad=0.1, bp=0.01), _job(2, 160, grad=0.1, bp=0.01),
                                         _job(2, 160, grad=0.1, bp=0.01)],
                                bw_intra=100.0, alpha=0.0, xi2=0.0),
    # a 66-iterations-per-slot job beside jobs of speed 1-4
    "fast_and_slow_job": lambda: _inst((2, 2), [_job(1, 200, bp=0.005), _job(2, 3, grad=0.2, bp=0.3),
                                                _job(3, 4, bp=0.2)], alpha=1.0),
    # three identical jobs on two identical servers: every optimum has symmetric twins
    "exact_ties": lambda: _inst((2, 2), [_job(2, 20, grad=0.04, batch=30, fp=0.001, bp=0.005)] * 3),
    # k tau = 1.0000005 (speed 3 in exact arithmetic), 0.9999995 (4), 1.0000015 (3), exactly 1 (4)
    "tolerance_edge": lambda: _inst((2, 1), [_job(1, 8, bp=1.0000005 / 4), _job(1, 8, bp=0.9999995 / 4),
                                             _job(2, 8, bp=1.0000015 / 4), _job(3, 4, bp=0.25)],
                                    xi2=0.0),
    # one server: nothing is ever split, no contention
    "single_server": lambda: _inst((4,), [_job(4, 30, grad=0.05), _job(2, 30, grad=0.05), _job(1, 25),
                                          _job(3, 10, grad=0.01)]),
    # one-GPU servers, F = 1, batch 1, no gradient, no overhead, alpha = 0, tau = 1 slot exactly
    "minimal_fields": lambda: _inst((1, 1, 1), [_job(3, 1, bp=0.5), _job(1, 1, bp=1.0),
                                                _job(2, 1, bp=0.1)], alpha=0.0, xi2=0.0, horizon=4),
    # b^i < b^e: splitting a ring is faster than packing it (until contention)
    "intra_slower_than_inter": lambda: _inst((2, 2), [_job(2, 30, grad=0.1), _job(2, 30, grad=0.1),
                                                      _job(1, 20)], bw_intra=0.5, bw_inter=2.0,
                                             alpha=0.0),
    # a job asking for every GPU of the cluster runs alone
    "whole_cluster_job": lambda: _inst((2, 3), [_job(5, 30, grad=0.02), _job(2, 30, grad=0.05),
                                                _job(3, 20, grad=0.05)], alpha=2.0),
}


@pytest.mark.parametrize("name", sorted(HAND_MADE))
def test_exact_equals_brute_force_on_hand_made(name):
    """exact (registry, verify inside) == brute force == M1 alone at H = heuristic makespan."""
    inst = HAND_MADE[name]()
    ub, _ = upper_bound_schedule(inst, NEVER)
    best, best_schedule = brute.brute_force(inst, ub)
    assert best_schedule is not None and verify(inst, best_schedule) == best
    r = solve(inst, "exact")
    assert r.status is SolveStatus.OPTIMAL
    assert r.objective == best, f"{name}: exact {r.objective} != brute force {best}"
    model = rm.build_exact(inst, ub)  # the model itself, without exact's lower-bound shortcut
    rep = solve_model(model)
    assert rep.status is SolveStatus.OPTIMAL and rep.objective == pytest.approx(best)
    assert verify(inst, rm.extract_schedule(inst, model)) == best


def test_tolerance_edge_speeds():
    """phi = floor(1 / tau) in exact arithmetic (issue 22): k tau = 1.0000005 is more than one slot,
    so only k - 1 iterations fit (the old tolerance 1e-6 counted k)."""
    inst = HAND_MADE["tolerance_edge"]()
    assert [inst.phi(j, 1, 1) for j in range(4)] == [3, 4, 3, 4]
    assert rm.duration(inst, 0, 1) == 3  # 8 iterations at 3 per slot
    # job 3 (all 3 GPUs) in slot 0; then jobs 0 and 2 together; job 1 after job 0 on server 1
    one = Schedule((1, 4, 1, 0), ((0, 1), (0, 1), (2, 0), (2, 1)))
    assert completion_times(inst, one) == [4, 6, 4, 1]
