"""edge_cloud methods: verified schedules through the registry, LB <= OPT <= methods, price functions
(7)/(8), exactness of COST_C + COST_D* as pricing (digest P5/P6), A_online's structure, paper scale."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from optsched.deadline import NEVER, Deadline
from optsched.io import load_instance
from optsched.models.edge_cloud import enumerate_columns
from optsched.problems.edge_cloud import Instance, Job, Run, verify
from optsched.registry import methods, solve
from optsched.result import SolveStatus
from optsched.solvers.edge_cloud import algorithm as alg
from optsched.solvers.edge_cloud.colgen import price_column
from optsched.solvers.online import UsageLedger, exponential_price
from optsched.workloads.edge_cloud import generate
from tests.timing import cpu_time

METHODS = [m.name for m in methods("edge_cloud")]


@pytest.mark.parametrize("seed", range(5))
def test_every_method_verifies_and_lb_le_opt_le_methods(seed):
    inst = generate("tiny", 100 + seed)
    res = {m: solve(inst, m) for m in METHODS}
    opt = res["exact"]
    assert opt.status is SolveStatus.OPTIMAL
    lb = res["lower_bound"].lower_bound
    assert lb <= opt.objective + 1e-6
    for m in methods("edge_cloud"):
        assert m.guarantee_on(inst) is None                      # the paper states no ratio
        if m.kind in ("algorithm", "baseline") and not m.relaxed:
            assert res[m.name].objective >= opt.objective - 1e-6, m.name
        if m.relaxed:                                          # preemptive: own checker
            assert math.isfinite(res[m.name].objective)


def test_same_seed_same_schedules():
    inst = generate("small", 1)
    for m in ("a_online", "a_online_model", "fifo", "drf", "batchsche", "preemptive_overhead"):
        assert solve(inst, m).schedule == solve(inst, m).schedule


def test_price_functions_7_8():
    inst = generate("small", 0)
    th1, th2 = alg.thetas(inst)
    assert th1 == 2 * 64 * 3 * 2 * 1.0 + 1 and th2 == 2 * 64 * 3 * 2 * 1.0 + 1
    led = UsageLedger([2.0, 0.0], range(5, 9), exponential_price(th1))
    assert led.prices[0].tolist() == [0.0] * 4 and math.isinf(led.prices[1, 0])   # lambda(0) = 0
    led.charge_block([0], 5, 6, [2.0])
    assert led.prices[0, 0] == pytest.approx(th1 - 1)            # full load: 2 T S U F_1
    led2 = UsageLedger([2.0], range(1, 2), exponential_price(th1))
    led2.charge_block([0], 1, 1, [1.0])
    assert led2.prices[0, 0] == pytest.approx(math.sqrt(th1) - 1)


def _cost(inst, col, lam, mu):
    job = inst.jobs[col.job]
    U, V = inst.n_wtypes, inst.n_ptypes
    ts = range(col.run.start - col.tau0, col.run.end - col.tau0 + 1)
    return (sum(n * lam[s * U + job.worker_type, t] for s, n in col.run.workers for t in ts)
            + sum(mu[col.run.ps * V + job.ps_type, t] for t in ts))


@pytest.mark.parametrize("seed", range(6))
def test_cost_c_and_cost_d_star_price_exactly(seed):
    """P5: min over D_u of COST_C (exact order) and COST_D* is the least-cost in-window schedule
    under arbitrary prices, equal to the minimum over all enumerated columns."""
    rng = np.random.default_rng(seed)
    inst = generate("small", seed)
    tau = 8
    lam = rng.exponential(0.3, size=(inst.n_servers * inst.n_wtypes, tau))
    mu = rng.exponential(0.3, size=(inst.n_servers * inst.n_ptypes, tau))
    for fixed in (True, False):
        for j in range(len(inst.jobs)):
            cols = enumerate_columns(inst, [j], tau, fixed_start=fixed)
            cost, col = price_column(inst, j, tau, lam, mu, fixed_start=fixed)
            if not cols:
                assert col is None
                continue
            for c in cols:
                object.__setattr__(c, "tau0", tau + 1)
            best = min(_cost(inst, c, lam, mu) for c in cols)
            assert cost == pytest.approx(best), (j, fixed)


@pytest.mark.parametrize("seed", range(6))
def test_cost_d_paper_never_beats_cost_d_star(seed):
    """COST_D (Algorithm 4, true cost) cannot undercut the separable optimum COST_D* (digest §4.6)."""
    rng = np.random.default_rng(seed)
    inst = generate("small", seed)
    S, U, tau = inst.n_servers, inst.n_wtypes, 8
    wl = UsageLedger(inst.W.reshape(-1), range(tau + 1, 2 * tau + 1), exponential_price(50.0))
    pl = UsageLedger(inst.P.reshape(-1), range(tau + 1, 2 * tau + 1), exponential_price(50.0))
    for _ in range(4):  # some random earlier load starting at tau + 1
        r = int(rng.integers(S * U))
        if wl.residual[r, 0] >= 1:
            wl.charge_block([r], tau + 1, tau + int(rng.integers(1, tau + 1)), [1.0])
    for j in range(len(inst.jobs)):
        view = alg.job_view(inst, j, wl, pl, tau, "model")
        for n in range(1, inst.jobs[j].chunks + 1):
            star, run_star = alg.cost_d_star(inst, j, n, view)
            paper, run_paper = alg.cost_d_paper(inst, j, n, view, "exact")
            assert (run_star is None) == (run_paper is None)
            if run_star is not None:
                assert star <= paper + 1e-9


def test_faithful_a_online_structure():
    inst = generate("small", 2)
    out = alg.a_online(inst, deadline=NEVER)
    sched, log = out.schedule, out.info["rounds"]
    verify(inst, sched)
    taus = {2 ** i for i in range(20)}
    for j, (run,) in enumerate(sched.runs):
        job = inst.jobs[j]
        tau = run.start - 1
        assert tau in taus and job.arrival <= tau                 # decided at tau_i, starts at tau_i + 1
        assert run.end <= 2 * tau                                 # ends inside the window
        for s in {s for s, _ in run.workers} | {run.ps}:          # rule "paper": a + Delta < tau
            assert job.arrival + job.delay[s] < tau
    assert sum(r["accepted"] for r in log) == len(inst.jobs)


def test_smallest_worker_count_wins_ties_on_empty_window():
    """Algorithm 2's strict '>' keeps the smallest D_u among equal (cost 0) utilities."""
    job = Job(arrival=1, worker_type=0, ps_type=0, epochs=1, chunks=4, minibatches=2, compute=0.5,
              update=0.0, grad_mb=0.0, bandwidth=1000.0, delay=(1,))
    inst = Instance(workers=((4,),), ps=((1,),), jobs=(job,), horizon=8)   # R = 4 worker-slots
    sched = alg.a_online(inst, deadline=NEVER).schedule
    run = sched.runs[0][0]
    assert (run.start, run.n_workers, run.end) == (5, 1, 8)     # tau = 4: window 5..8 fits 1 worker
    sched = alg.a_online(inst, alg.MODEL, deadline=NEVER).schedule   # rule "model": at tau = 1 slot 2
    assert (sched.runs[0][0].start, sched.runs[0][0].n_workers) == (2, 4)


def test_batchsche_never_uses_the_colocated_rate():
    inst = generate("small", 3)
    sched = solve(inst, "batchsche").schedule
    for j, (run,) in enumerate(sched.runs):
        assert run.length == math.ceil(inst.jobs[j].required(0) / run.n_workers)


def test_exact_time_limit_is_a_status():
    inst = generate("small", 2)
    res = solve(inst, "exact", time_limit=0.05)
    assert res.status in (SolveStatus.TIME_LIMIT, SolveStatus.OPTIMAL)
    assert math.isfinite(res.objective) and res.lower_bound <= res.objective + 1e-6


def test_paper_scale_runs_in_seconds():
    inst = generate("paper", 0, n_jobs=100)
    for m in ("a_online", "a_online_model", "fifo", "drf", "preemptive_overhead"):
        start = cpu_time()
        res = solve(inst, m)
        assert cpu_time() - start < 20, m
        assert math.isfinite(res.objective)


def test_errata_fig14_ratio_is_far_from_one(data):
    """docs/errata.md E1: A_online/OPT = 35/6 on a 4-job instance; the wait for the first usable
    round (not pricing) causes it."""
    inst = load_instance(data / "edge_cloud" / "fig14_ratio.json")
    opt = solve(inst, "exact")
    assert opt.status is SolveStatus.OPTIMAL and opt.objective == 6
    res = solve(inst, "a_online")
    assert res.objective == 35 and res.objective / opt.objective > 5
    assert res.info["priced_out"] == 0 and res.info["not_ready"] == 5
    assert solve(inst, "a_online_model").objective == 14
    assert solve(inst, "drf").objective == 6


def test_errata_fig3_drf_beats_a_online_at_paper_like_scale(data):
    """docs/errata.md E2/E3: 30 jobs on 100 edge servers + cloud (Sec. VI ranges)."""
    inst = load_instance(data / "edge_cloud" / "fig3_paper_like.json")
    tct = {m: solve(inst, m).objective for m in ("a_online", "fifo", "drf", "batchsche", "greedy_ect",
                                                  "preemptive_overhead")}
    assert tct["a_online"] < tct["fifo"] and tct["a_online"] < tct["batchsche"]
    assert tct["drf"] < tct["a_online"]
    assert tct["preemptive_overhead"] < tct["a_online"] / 5
    assert tct["greedy_ect"] < tct["a_online"] / 5            # so A_online / OPT > 5 here


def test_exact_oracle_rounds_are_feasible_and_not_below_opt():
    """Doubling rounds with the exact batch MILP (3) as oracle (reference for digest P8)."""
    from optsched.solvers.edge_cloud.bounds import a_online_exact_oracle
    for seed in (0, 1):
        inst = generate("tiny", seed)
        value = verify(inst, a_online_exact_oracle(inst, deadline=NEVER))
        opt = solve(inst, "exact").objective
        assert value >= opt - 1e-9


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), preset=st.sampled_from(["tiny", "small"]))
def test_property_heuristics_always_verify(seed, preset):
    """Every heuristic's schedule passes its checker on random tiny/small instances, and the
    non-preemptive ones respect the per-job flow bound."""
    from optsched.solvers.edge_cloud.bounds import trivial_bound
    inst = generate(preset, seed)
    lb = trivial_bound(inst)
    for m in ("a_online", "a_online_model", "fifo", "drf", "batchsche", "greedy_ect",
              "preemptive", "preemptive_overhead"):
        res = solve(inst, m)                                     # solve() runs the checker
        if m.startswith("preemptive"):
            continue
        assert res.objective >= lb - 1e-9, m


# ------------------------------------------------------------------ issue 10: one family shape
def test_variants_are_one_function_with_params():
    """Every A_online variant (and BatchSche) is the function a_online registered with its
    AOnlineParams; both preemptive baselines are preemptive with PreemptiveParams; every Result
    records the parameters."""
    from optsched.solvers.edge_cloud import SPEC
    from optsched.solvers.edge_cloud.baselines import PreemptiveParams, preemptive

    expected = {"a_online": alg.FAITHFUL, "a_online_dstar": alg.DSTAR, "a_online_model": alg.MODEL,
                "a_online_ect": alg.ECT, "batchsche": alg.BATCHSCHE}
    for name, params in expected.items():
        assert SPEC.method(name).func is alg.a_online and SPEC.method(name).params == params
    for name in ("preemptive", "preemptive_overhead"):
        assert SPEC.method(name).func is preemptive
    assert SPEC.method("preemptive_overhead").params == PreemptiveParams(0.25, True)
    for m in SPEC.methods:        # a registered function with its own name agrees with it
        if m.params is None:
            assert m.func.__name__ == m.name
    res = solve(generate("tiny", 0), "batchsche")
    assert res.info["params"] == {**alg.BATCHSCHE.to_dict()} and res.info["params"]["colocate"] is False
    with pytest.raises(ValueError, match="costd: unknown 'greedy'"):
        alg.AOnlineParams(costd="greedy")


def test_no_colocation_instance_never_hangs(data):
    """Issue 15: no server holds both a worker and a PS of the job's types. FIFO, DRF and greedy_ect
    (which co-locate) return no schedule and a reason at once instead of looping; the others
    schedule it (distributed)."""
    inst = load_instance(data / "edge_cloud" / "no_colocation.json")
    for m in METHODS:
        start = cpu_time()
        res = solve(inst, m, time_limit=10)
        assert cpu_time() - start < 5, m
        if m in ("fifo", "drf", "greedy_ect"):
            assert res.status is SolveStatus.UNKNOWN and res.schedule is None, m
            assert "job 0 has no server with both a type-0 worker and a type-0 PS" in res.info["reason"]
        elif m in ("lower_bound", "colgen_bound"):
            assert res.lower_bound == 0
        else:
            assert math.isfinite(res.objective), m
    assert solve(inst, "exact").status is SolveStatus.OPTIMAL


@pytest.fixture(scope="module")
def paper0():
    return generate("paper", 0)


def test_a_online_stops_at_its_deadline(paper0):
    """A_online at Sec. VI scale takes seconds: stopped by the deadline it returns no schedule and
    status time_limit, close to the limit."""
    start = cpu_time()
    res = solve(paper0, "a_online", time_limit=0.3)
    assert cpu_time() - start < 1.3
    assert res.status is SolveStatus.TIME_LIMIT and res.schedule is None
    assert res.info["stopped"].startswith("deadline")


def test_exact_and_lower_bound_at_paper_scale_return_valid_bounds(paper0):
    """The MILP cannot be built at Sec. VI scale: exact returns the best heuristic with status
    time_limit (its heuristics charged to the same deadline) and lower_bound the trivial bound with
    status time_limit (the LP is skipped), both within the limit plus a small slack."""
    from optsched.solvers.edge_cloud.bounds import trivial_bound

    for name in ("exact", "lower_bound"):
        start = cpu_time()
        res = solve(paper0, name, time_limit=1.0)
        assert cpu_time() - start < 2.0, name
        assert res.status is SolveStatus.TIME_LIMIT, name
        assert res.lower_bound == trivial_bound(paper0), name
    res = solve(paper0, "exact", time_limit=1.0)
    assert "skipped" in res.info and math.isfinite(res.objective)
    assert res.objective >= res.lower_bound


@pytest.mark.slow
@pytest.mark.parametrize("name", METHODS)
def test_every_method_returns_within_its_time_limit_at_paper_scale(paper0, name):
    """Issue 10 item 4: time_limit bounds the whole call (heuristics, model building, solves)."""
    start = cpu_time()
    res = solve(paper0, name, time_limit=2.0)
    assert cpu_time() - start < 3.0, name
    if name == "exact_cp" and res.status is SolveStatus.UNKNOWN:  # its size guard, said so
        assert res.info["reason"].startswith("size cap: exact_cp model")
        return
    assert res.status in (SolveStatus.FEASIBLE, SolveStatus.TIME_LIMIT, SolveStatus.OPTIMAL), name


def test_batch_lp_bound_stopped_early_is_still_an_upper_bound():
    """Column generation stopped after one round returns the Lagrangian bound at the current
    prices, which is >= the LP optimum (4) (never an exception)."""
    from optsched.solvers.edge_cloud.colgen import batch_lp_bound

    inst = generate("small", 0)
    tau = 4
    jobs = [j for j, job in enumerate(inst.jobs) if job.arrival <= tau]
    lp, _ = batch_lp_bound(inst, jobs, tau, deadline=NEVER)
    early, _ = batch_lp_bound(inst, jobs, tau, max_iter=1, deadline=NEVER)
    assert early >= lp - 1e-6
    expired, _ = batch_lp_bound(inst, jobs, tau, deadline=Deadline(0.0))
    assert expired >= lp - 1e-6


def test_preemptive_finishes_jobs_in_exact_arithmetic():
    """A job is done when its work is met exactly (issue 22; as verify_preemptive checks it): 2
    workers at 0.50000005 slots per mini-batch train 3.9999996 < 4 in one slot and need a second
    (the old relative tolerance 1e-6 counted it done after one); at 0.5 one slot is enough."""
    job = Job(arrival=1, worker_type=0, ps_type=0, epochs=1, chunks=2, minibatches=2,
              compute=0.50000005, update=0.0, grad_mb=0.0, bandwidth=1000.0, delay=(0,))
    inst = Instance(workers=((2,),), ps=((1,),), jobs=(job,))
    res = solve(inst, "preemptive")
    assert res.schedule.runs == ((Run(1, 2, 0, ((0, 2),)),),) and res.objective == 1
    inst = Instance(workers=((2,),), ps=((1,),), jobs=(replace(job, compute=0.5),))
    res = solve(inst, "preemptive")
    assert res.schedule.runs == ((Run(1, 1, 0, ((0, 2),)),),) and res.objective == 0
