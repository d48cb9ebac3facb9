"""elastic_cluster ``exact`` (issue 14): the time-indexed pattern MILP against brute force, against
the configuration MILP it replaced (``build_offline``, kept for this cross-check and for the batch
model (7)) and against CP-SAT; its patterns against the brute-force oracle's placements; the MIP
start and the never-worse-than-the-heuristic rule."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import pyomo.environ as pyo

from optsched.deadline import NEVER, Deadline
from optsched.models import elastic_cluster as em
from optsched.problems.elastic_cluster import verify
from optsched.registry import solve
from optsched.solvers.elastic_cluster import bounds
from optsched.solvers.elastic_cluster import exact as ex
from optsched.solvers.highs import solve_model
from optsched.workloads.elastic_cluster import generate
from tests.timing import cpu_time

from tests.solvers import brute_elastic_cluster as brute


def _last(inst, cost):
    return [c - 1 for c in em.latest_completions(inst, cost)]


def _serial_cost(inst):
    return verify(inst, ex.serial_schedule(inst, NEVER))


@pytest.mark.parametrize("seed", range(24))
def test_pattern_milp_equals_configuration_milp(seed):
    """Both MILPs on the same horizon (the serial schedule's), no MIP start: same optimum."""
    inst = generate("tiny", seed)
    cost = _serial_cost(inst)
    last = _last(inst, cost)
    new = em.build_exact(inst, last)
    # 600 s of wall time: a safety net, not a claim (60 s ran out at load ~16 on 2 cores)
    rep_new = solve_model(new, time_limit=600)
    rep_old = solve_model(em.build_offline(inst, em.safe_horizon(inst, cost)), time_limit=600)
    assert rep_new.status.value == rep_old.status.value == "optimal"
    assert rep_new.objective == pytest.approx(rep_old.objective, abs=1e-6)
    assert verify(inst, em.extract_exact(inst, new)) == pytest.approx(rep_new.objective, abs=1e-6)


@pytest.mark.parametrize("seed", range(10))
def test_pattern_milp_equals_brute_force_without_heuristics(seed):
    """The model alone (serial-schedule horizon, no greedy, no start) against the oracle."""
    inst = generate("tiny", seed + 40)
    rep = solve_model(em.build_exact(inst, _last(inst, _serial_cost(inst))), time_limit=60)
    assert rep.status.value == "optimal"
    assert rep.objective == pytest.approx(brute.brute_force(inst), abs=1e-6)


@pytest.mark.parametrize("seed", range(20))
def test_exact_agrees_with_exact_cp_on_small(seed):
    inst = generate("small", seed, n_jobs=(5, 5))
    milp = solve(inst, "exact", time_limit=60)
    cp = solve(inst, "exact_cp", time_limit=60)
    assert milp.status.value == cp.status.value == "optimal"
    assert milp.objective == pytest.approx(cp.objective, abs=1e-6)


@pytest.mark.parametrize("seed", range(8))
def test_patterns_dominate_every_oracle_placement(seed):
    """Every (duration, use) of the oracle's enumeration is dominated by a pattern (d' <= d, use'
    <= use), and every pattern is one of the oracle's placements: the pruning loses nothing and
    invents nothing."""
    inst = generate("tiny", seed)
    H, R = inst.n_servers, inst.n_res
    for j in range(len(inst.jobs)):
        pats = em.job_patterns(inst, j, math.inf, NEVER)
        oracle = brute.placements(inst, j)
        for d, use in oracle:
            assert any(p.duration <= d and (np.array(p.use) <= use.ravel()).all() for p in pats)
        keys = {(d, use.ravel().tobytes()) for d, use in oracle}
        for p in pats:
            assert (p.duration, np.array(p.use).reshape(H, R).ravel().tobytes()) in keys
        # non-dominated: no pattern dominates another
        for a in pats:
            for b in pats:
                if a is not b:
                    assert not (a.duration <= b.duration and
                                (np.array(a.use) <= np.array(b.use)).all())


def test_symmetry_breaking_keeps_the_optimum_on_identical_servers():
    """Three identical servers: the lead job keeps only sorted patterns, the optimum is the
    oracle's."""
    for seed in range(6):
        inst = generate("tiny", seed, n_servers=3)
        inst = dataclasses.replace(inst, capacity=(inst.capacity[0],) * 3)
        classes = em.server_classes(inst)
        assert classes == [[0, 1, 2]]
        last = _last(inst, _serial_cost(inst))
        pats = em.exact_patterns(inst, last)
        lead = min(range(len(inst.jobs)), key=lambda j: (-inst.jobs[j].weight, j))
        full = em.job_patterns(inst, lead, last[lead] - inst.jobs[lead].arrival + 1, NEVER)
        assert len(pats[lead]) < len(full)
        rep = solve_model(em.build_exact(inst, last, pats), time_limit=60)
        assert rep.objective == pytest.approx(brute.brute_force(inst), abs=1e-6)


@pytest.mark.parametrize("seed", range(6))
def test_set_start_is_feasible_and_no_worse_than_its_schedule(seed):
    """set_start maps every plan of a verified schedule (servers permuted for the symmetry
    breaking) to a pattern that dominates it: the start satisfies every row and costs no more."""
    inst = generate("small", seed, n_jobs=(6, 6), n_servers=2)
    best, upper = ex._incumbent(inst, NEVER)
    last = _last(inst, upper)
    m = em.build_exact(inst, last)
    assert em.set_start(m, inst, best) == len(inst.jobs)
    assert pyo.value(m.obj) <= upper + 1e-9
    for con in m.component_data_objects(pyo.Constraint, active=True):
        body = pyo.value(con.body)
        assert con.lower is None or body >= pyo.value(con.lower) - 1e-9
        assert con.upper is None or body <= pyo.value(con.upper) + 1e-9


def test_permuted_plans_verify_at_the_same_cost():
    inst = generate("small", 0, n_jobs=(6, 6))
    inst = dataclasses.replace(inst, capacity=(inst.capacity[0],) * 2)
    best, upper = ex._incumbent(inst, NEVER)
    plans = em._permuted(inst, best.plans)
    assert verify(inst, type(best)(tuple(plans))) == upper


@pytest.mark.parametrize("seed", range(3))
def test_greedy_patterns_verifies_and_beats_the_serial_schedule(seed):
    inst = generate("small", seed, n_jobs=(8, 8))
    schedule, cost = ex.greedy_patterns(inst, em.safe_horizon(inst, _serial_cost(inst)), NEVER)
    assert verify(inst, schedule) == cost <= _serial_cost(inst)


@pytest.mark.parametrize("limit", [1.5, 8.0])
def test_exact_never_returns_worse_than_its_warm_start(limit):
    """Time limits too short to prove (20 jobs): the schedule costs at most the best heuristic's
    (the fixed heuristics', and the MIP start's when the model was built)."""
    inst = generate("small", 2, n_jobs=(20, 20))
    best, upper = ex._incumbent(inst, NEVER)
    res = solve(inst, "exact", time_limit=limit)
    assert res.status.value in ("optimal", "time_limit")
    if "heuristics" in res.info.get("stopped", ""):
        # under load the wall-clock deadline can pass before every heuristic has run: then the
        # schedule is the best of those that ran, not of all of them
        assert math.isfinite(res.objective)
        return
    assert res.objective <= upper + 1e-9
    assert res.objective <= res.info.get("warm_start_cost", upper) + 1e-9


def test_better_prefers_the_warm_start_over_a_worse_incumbent():
    """_better's rule on a fabricated report: an unproven HiGHS incumbent that costs more than the
    start gives way to the start (status and bound kept)."""
    from optsched.result import SolveStatus
    from optsched.solvers.highs import SolveReport

    inst = generate("small", 2, n_jobs=(6, 6))
    best, upper = ex._incumbent(inst, NEVER)
    serial = ex.serial_schedule(inst, NEVER)
    worse = verify(inst, serial)
    assert worse > upper
    rep = SolveReport(SolveStatus.TIME_LIMIT, worse, upper - 5, True, 1.0, {})
    out = ex._better(inst, rep, lambda: serial, best, upper, {})
    assert out.schedule is best and out.status == SolveStatus.TIME_LIMIT
    assert out.lower_bound == upper - 5
    rep_ok = SolveReport(SolveStatus.TIME_LIMIT, upper, upper - 5, True, 1.0, {})
    assert ex._better(inst, rep_ok, lambda: best, serial, worse, {}).schedule is best


def test_exact_refuses_a_model_too_large_to_scan():
    """Paper scale: the placement count is bounded before enumerating; no model
    (``info["not_built"]``), so ``solve`` goes on with certify (issue 19 item 3), which may even
    prove the optimum; a schedule either way."""
    inst = generate("paper", 0, n_jobs=12, n_servers=20)
    assert em.pattern_bound(inst, 50) > ex.MAX_SCAN
    res = solve(inst, "exact", time_limit=20)
    assert res.info["not_built"].startswith("size cap: over MAX_SCAN") and res.info["certified"]
    assert res.status.value in ("time_limit", "optimal", "feasible") and res.schedule is not None


# ------------------------------------------------------------------------------- lower bound


def test_mean_busy_times_by_hand():
    """Preemptive WSPT on speed 2: job 0 (size 4, w 1) from 0; job 1 (size 2, w 4) arrives at 1
    and preempts it: job 0 runs [0, 1) and [2, 3), job 1 [1, 2)."""
    mean = bounds.mean_busy_times([0, 1, 5], [4.0, 2.0, 0.0], [1.0, 4.0, 3.0], 2.0)
    assert mean == pytest.approx([(0.5 + 2.5) / 2, 1.5, 5.0])


@pytest.mark.parametrize("seed", range(20))
def test_lower_bound_is_at_most_the_brute_force_optimum(seed):
    inst = generate("tiny", seed)
    res = solve(inst, "lower_bound")
    assert res.status.value == "optimal"
    assert res.lower_bound <= brute.brute_force(inst) + 1e-9
    assert res.info["busy_lp_converged"]
    assert res.lower_bound == max(res.info["alone"], res.info["resource"], res.info["busy_lp"])
    # one LP over the same M_j: at least each part alone (up to HiGHS' tolerances)
    assert res.info["busy_lp"] >= max(res.info["alone"], res.info["resource"]) * (1 - 1e-7)


def test_resource_bound_is_valid_and_stronger_on_small():
    """On small instances with 10 jobs the resource bound stays below the proven optimum and beats
    the every-job-alone bound on some of them (it is not vacuous)."""
    wins = 0
    for seed in range(4):
        inst = generate("small", seed, n_jobs=(10, 10))
        opt = solve(inst, "exact", time_limit=120)
        assert opt.status.value == "optimal"
        lb = solve(inst, "lower_bound")
        assert lb.info["resource"] <= opt.objective + 1e-9
        wins += lb.info["resource"] > lb.info["alone"] + 1e-9
    assert wins >= 1


def test_start_windows_keep_every_optimum_reachable():
    """latest_completions with the resource bound without j: the proven optimum's completions all
    fall within the windows of the best heuristic's cost."""
    for seed in range(3):
        inst = generate("small", seed, n_jobs=(8, 8))
        opt = solve(inst, "exact", time_limit=120)
        best, upper = ex._incumbent(inst, NEVER)
        latest = em.latest_completions(inst, upper, ex._others(inst, NEVER))
        assert all(p.completion <= c for p, c in zip(opt.schedule.plans, latest))
        assert latest != em.latest_completions(inst, upper)  # tighter than the default


def test_busy_time_cuts_are_valid_for_the_optimal_schedule():
    """Every Goemans cut the separation produces holds at the optimal schedule's mean busy times
    M_j = s_j + d_j / 2 (the cuts are valid inequalities, not just LP artefacts)."""
    for seed in range(4):
        inst = generate("small", seed, n_jobs=(8, 8))
        opt = solve(inst, "exact", time_limit=120).schedule
        areas = bounds.min_areas(inst, NEVER)
        arrival = np.array([job.arrival for job in inst.jobs], dtype=float)
        true_mean = np.array([p.start + p.duration / 2 for p in opt.plans])
        # separate at a point that violates many cuts (every job at its release), then check
        cuts = bounds._busy_cuts(arrival, areas, inst.cap_limit.sum(axis=0), arrival.copy())
        assert cuts
        for coef, rhs in cuts:
            assert sum(a * true_mean[j] for j, a in coef.items()) >= rhs - 1e-9


def test_shorter_max_len_filters_the_longer_list():
    """job_patterns' memo: the list for a shorter max_len (filtered) equals a fresh enumeration."""
    for seed in range(4):
        inst = generate("small", seed, n_jobs=(6, 6))
        for j in range(len(inst.jobs)):
            long = em.job_patterns(inst, j, 30, NEVER)
            short = em.job_patterns(inst, j, 3, NEVER)
            fresh = em.job_patterns(generate("small", seed, n_jobs=(6, 6)), j, 3, NEVER)
            assert {(p.duration, p.use) for p in short} == {(p.duration, p.use) for p in fresh}
            assert len(short) <= len(long)


def test_exact_refuses_a_scan_longer_than_half_the_time_left():
    """6 servers and D <= 6 (about 18,000 placements) with 2 s: not enumerated, the best
    heuristic schedule returned at once (time_limit)."""
    inst = generate("small", 0, n_jobs=(4, 4), n_servers=6, max_chunks=6)
    assert em.pattern_bound(inst, 20) * ex.SCAN_PER_PLACEMENT > 1.0
    import optsched.solvers.highs  # noqa: F401 - imports are not the method's time

    began = cpu_time()  # CPU time: a CPU hog beside the test stretches wall time only
    res = solve(inst, "exact", time_limit=2.0)
    assert res.schedule is not None and res.info["not_built"].startswith("size:")
    assert cpu_time() - began < 3.0


def test_job_patterns_stops_at_the_deadline():
    inst = generate("small", 0, n_jobs=(4, 4), n_servers=6, max_chunks=6)
    assert em.job_patterns(inst, 0, 50, Deadline(0.0)) is None
    assert em.job_patterns(inst, 0, 50, NEVER)  # nothing memoised by the stopped scan
