"""ring_contention solvers: SJF-BCO (Alg. 1–3), baselines, exact and bounds, through the registry.
The registered reading variants are tested in test_ring_contention_readings.py."""

from __future__ import annotations


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.deadline import NEVER, Deadline
from optsched.errors import InfeasibleSchedule
from optsched.io import load_instance
from optsched.models import ring_contention as rm
from optsched.problems.ring_contention import Schedule, completion_times
from optsched.registry import solve
from optsched.result import SolveStatus
from optsched.solvers.ring_contention import algorithm as rc_algorithm
from optsched.solvers.ring_contention import baselines as rc_baselines
from optsched.solvers.ring_contention import exact as rc_exact
from optsched.solvers.highs import solve_model
from optsched.workloads.ring_contention import PAPER_MIX, generate

from tests.solvers import brute_ring_contention as brute

HEURISTICS = ("sjf_bco", "first_fit", "list_scheduling", "random")


@pytest.fixture(scope="module")
def medium():
    """A reduced paper-style instance: 8 servers, 40 jobs of the paper's size classes."""
    rng_sizes = (1,) * 20 + (2,) * 4 + (4,) * 7 + (8,) * 7 + (16,) * 2
    return generate("paper", 3, n_servers=8, sizes=rng_sizes)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_exact_and_methods_on_tiny(seed):
    inst = generate("tiny", seed)
    opt = solve(inst, "exact")
    assert opt.status is SolveStatus.OPTIMAL
    if seed < 3:
        ub, _ = rc_exact.upper_bound_schedule(inst, NEVER)
        assert opt.objective == brute.brute_force(inst, ub)[0]
    lb = solve(inst, "lower_bound").lower_bound
    assert lb <= opt.objective + 1e-9
    for name in HEURISTICS:
        r = solve(inst, name)  # verify runs inside
        assert opt.objective <= r.objective
        if name == "sjf_bco":
            assert r.objective / opt.objective <= r.guarantee  # Theorem 5's claimed ratio


def test_pass_simulation_equals_verify(medium):
    """The passes' event-driven T_j equal verify's slot-by-slot T_j (two independent codes)."""
    res = rc_algorithm.sjf_bco_search(medium, deadline=NEVER)
    sched = res.state.schedule()
    assert completion_times(medium, sched) == [res.state.finish[j] for j in range(len(medium.jobs))]
    assert rc_exact.run_finish(medium, sched) == completion_times(medium, sched)


def test_kappa_distinct_equals_all(medium):
    a = rc_algorithm.sjf_bco_search(medium, rc_algorithm.SjfBcoParams(kappas="distinct"),
                                     deadline=NEVER)
    b = rc_algorithm.sjf_bco_search(medium, rc_algorithm.SjfBcoParams(kappas="all"),
                                     deadline=NEVER)
    assert (a.makespan, a.theta, a.kappa) == (b.makespan, b.theta, b.kappa)
    assert a.state.schedule() == b.state.schedule()
    assert a.passes < b.passes


def test_ls_is_sjf_bco_with_kappa_ng(medium):
    """Digest A1: FA-FFP's literal line 4 equals LS, so kappa = n_g reproduces LS exactly."""
    ls = solve(medium, "list_scheduling")
    only = rc_algorithm.sjf_bco(medium, rc_algorithm.SjfBcoParams(kappas=(medium.max_gpus,)), deadline=NEVER)
    assert only.schedule == ls.schedule


def test_random_is_seeded(medium):
    a, b = solve(medium, "random", seed=5), solve(medium, "random", seed=5)
    assert a.schedule == b.schedule
    others = {solve(medium, "random", seed=s).schedule for s in range(4)}
    assert len(others) > 1


def test_pass_fails_below_longest_estimate():
    inst = generate("tiny", 2)
    est = rc_algorithm.rho_hat(inst)
    assert rc_algorithm.run_pass(inst, rc_algorithm.sjf_order(inst), max(est) - 1e-3, lambda j: rc_algorithm.least_u) is None
    assert rc_algorithm.run_pass(inst, rc_algorithm.sjf_order(inst), max(est) + 1e-3, lambda j: rc_algorithm.least_u) is not None


def test_wait_for_a_job_to_exit():
    """With capacity for one job at a time, each job starts when the previous one ends."""
    inst = generate("tiny", 9)  # (3, 2) servers, G = 4, 4, 2
    out = solve(inst, "first_fit")
    t = completion_times(inst, out.schedule)
    a, b, c = rc_algorithm.sjf_order(inst)  # G = 2, 4, 4 on 5 GPUs: no two of them fit together
    assert [inst.jobs[k].gpus for k in (a, b, c)] == [2, 4, 4]
    assert out.schedule.starts[a] == 0
    assert out.schedule.starts[b] == t[a]
    assert out.schedule.starts[c] == t[b]


def test_lbsgf_respects_lambda_prefix():
    inst = generate("small", 1)
    state = rc_algorithm.Pass(inst, inst.horizon, rc_algorithm.rho_hat(inst))
    j = max(range(len(inst.jobs)), key=lambda k: inst.jobs[k].gpus)  # the 4-GPU job
    state.U[:4] = 5.0  # server 0 busier on average
    got = rc_algorithm.lbsgf(1.0)(state, j)
    assert set(state.server[got]) == {1}  # least-busy server first, lambda G = 4 fits on it
    assert list(rc_algorithm.lbsgf(1.0)(state, j)) == [4, 5, 6, 7]
    state.U[4:6] = 9.0  # server 1 average 4.5 < 5: still first, and its list is taken in order
    assert list(rc_algorithm.lbsgf(2.0)(state, j)) == [6, 7, 4, 5]  # list order (A11), not global least U
    state.U[4:6] = 12.0  # server 1 average 6 > 5: server 0 first
    assert list(rc_algorithm.lbsgf(2.0)(state, j)) == [0, 1, 2, 3]


def test_simulation_monotone_when_a_job_is_removed(medium):
    """Removing a job (fixed starts and placements) never delays another (digest §3.1)."""
    sched = rc_algorithm.sjf_bco_search(medium, deadline=NEVER).state.schedule()
    base = rc_exact.run_finish(medium, sched)
    rng = np.random.default_rng(0)
    for drop in rng.choice(len(medium.jobs), size=5, replace=False):
        keep = [j for j in range(len(medium.jobs)) if j != drop]
        fin = _finish_without(medium, sched, drop)
        assert all(fin[j] <= base[j] for j in keep)


def _finish_without(inst, sched, drop):
    rem = {j: inst.jobs[j].iterations for j in range(len(inst.jobs)) if j != drop}
    finish, t = {}, 0
    while rem:
        active = {j: rc_algorithm.servers_of(sched.placements[j]) for j in rem if sched.starts[j] <= t}
        speeds = rc_algorithm.running_speeds(inst, active)
        for j in active:
            rem[j] -= speeds[j]
            if rem[j] <= 0:
                finish[j] = t + 1
                del rem[j]
        t += 1
    return finish


def test_paper_scale_run(medium):
    r = solve(medium, "sjf_bco")
    assert r.status is SolveStatus.FEASIBLE and r.objective < medium.horizon
    assert r.info["passes"] >= 6
    lb = solve(medium, "lower_bound").lower_bound
    assert lb <= r.objective
    assert sum(PAPER_MIX.values()) == 160


# ----------------------------------------------------------------------------------------------
# Errata instances (docs/errata.md, ## ring_contention)
# ----------------------------------------------------------------------------------------------

def _load(data, name):
    return load_instance(data / "ring_contention" / name)


def test_lemma2_and_lemma3_counterexample(data):
    """Lemma 2 claims W^_max = theta~; Lemma 3 claims T <= n_g W^_max. Three 1-GPU jobs on (3, 3):
    theta~ = 20 (the first midpoint, never improved on) while W^_max = max_g U[g] < 3.2, and the
    makespan 4 exceeds n_g W^_max (n_g = 1) because floor speeds make rho_j > rho_hat_j (u/l gap)."""
    inst = _load(data, "lemma3_counterexample.json")
    res = rc_algorithm.sjf_bco_search(inst, deadline=NEVER)
    w_max = float(res.state.U.max())
    assert inst.max_gpus == 1 and res.theta == 20
    assert w_max == pytest.approx(3.13, abs=0.01)  # Lemma 2 broken: W^_max < theta~
    assert res.makespan == 4 > inst.max_gpus * w_max  # Lemma 3 broken with W^_max
    assert res.makespan <= inst.max_gpus * res.theta  # ... holds with theta~


def test_lemma4_counterexample(data):
    """Lemma 4 claims theta~ <= Phi (u/l) theta*_u. Here theta~ = 20 but Phi u/l theta* < 14."""
    inst = _load(data, "lemma4_counterexample.json")
    res = rc_algorithm.sjf_bco_search(inst, deadline=NEVER)
    theta_star = solve_model(rm.build_budget(inst, durations="estimate",
                                             rho_hat=rc_algorithm.rho_hat(inst))).objective
    c = rc_algorithm.constants(inst)
    assert res.theta == 20
    assert c["Phi"] * c["u"] / c["l"] * theta_star < 14 < res.theta
    # Theorem 5's final inequality still holds here: T / T* = 1 <= n_g Phi u / l
    assert solve(inst, "exact").objective == res.makespan == 4


# ----------------------------------------------------------------------------------------------
# Properties on random schedules of tiny instances (hypothesis)
# ----------------------------------------------------------------------------------------------

@st.composite
def tiny_schedules(draw):
    inst = generate("tiny", draw(st.integers(0, 40)))
    starts = tuple(draw(st.integers(0, 8)) for _ in inst.jobs)
    places = tuple(draw(st.sampled_from(rm.placements(inst, j))) for j in range(len(inst.jobs)))
    return inst, Schedule(starts, places)


@settings(max_examples=40, deadline=None)
@given(tiny_schedules())
def test_event_simulation_equals_slot_simulation(case):
    """The solvers' event-driven simulation and verify's slot-by-slot one agree on every feasible
    (start, placement) schedule; removing any job never delays the others (digest §3.1)."""
    inst, sched = case
    try:
        slot = completion_times(inst, sched)
    except InfeasibleSchedule:
        return
    assert rc_exact.run_finish(inst, sched) == slot
    for drop in range(len(inst.jobs)):
        fin = _finish_without(inst, sched, drop)
        assert all(fin[j] <= slot[j] for j in fin)


def test_exact_time_limit_is_a_status():
    inst = generate("small", 0)
    r = solve(inst, "exact", time_limit=0.5)
    assert r.status in (SolveStatus.TIME_LIMIT, SolveStatus.OPTIMAL)
    assert r.schedule is not None and r.lower_bound <= r.objective  # incumbent verified


# ----------------------------------------------------------------------------------------------
# Issue 10: parameters, deadline, status rule
# ----------------------------------------------------------------------------------------------

def test_variants_are_one_function_with_params():
    from optsched.registry import get_family

    spec = get_family("ring_contention")
    by_name = {m.name: m for m in spec.methods}
    assert by_name["first_fit"].func is by_name["list_scheduling"].func is by_name["random"].func
    assert by_name["first_fit"].params == rc_baselines.BaselineParams(gpus="first_fit")
    assert by_name["sjf_bco"].params == rc_algorithm.SjfBcoParams()
    r = solve(generate("tiny", 0), "list_scheduling")
    assert r.info["params"] == {"gpus": "least_u", "theta": "bisection", "order": "sjf"}


def test_expired_deadline_is_a_status(medium):
    gone = Deadline.after(1e-9)
    out = rc_algorithm.sjf_bco(medium, rc_algorithm.SjfBcoParams(), deadline=gone)
    assert out.status is SolveStatus.TIME_LIMIT and out.schedule is None
    out = rc_baselines.baseline(medium, rc_baselines.FIRST_FIT, deadline=gone)
    assert out.status is SolveStatus.TIME_LIMIT and out.schedule is None


def test_makespan_equal_to_horizon_is_feasible():
    """A pass whose makespan equals the horizon T is a feasible schedule (verify accepts T_j <= T)."""
    inst = generate("tiny", 0)
    m = solve(inst, "first_fit").objective
    tight = type(inst)(**{**{k: getattr(inst, k) for k in inst.__dataclass_fields__}, "horizon": int(m)})
    for name in ("sjf_bco", "first_fit", "list_scheduling"):
        r = solve(tight, name)
        assert r.schedule is not None and r.objective <= m, name


def test_exact_is_skipped_at_paper_scale_by_size():
    inst = generate("paper", 0)
    assert rc_exact.count_placements(inst.servers, 32) > 10**9  # counted, never enumerated
    r = solve(inst, "exact", time_limit=2)
    assert r.status is SolveStatus.TIME_LIMIT and r.schedule is not None
    assert r.info["not_built"].startswith("size cap")  # then solve goes on with certify


def test_count_placements_matches_enumeration():
    inst = generate("small", 0)
    for j, job in enumerate(inst.jobs):
        assert rc_exact.count_placements(inst.servers, job.gpus) == len(rm.placements(inst, j))


def test_lower_bound_status_rule():
    assert solve(generate("tiny", 0), "lower_bound").status is SolveStatus.OPTIMAL
