"""elastic_cluster solvers: subroutine optimality (Theorems 1, 6), A_maxweight (Theorem 3),
A_online (Theorem 5, Lemma 2), baselines, and the Theorem 1 counterexample."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np
import pytest

from optsched.deadline import NEVER
from optsched.models import elastic_cluster as em
from optsched.problems.elastic_cluster import Instance, Schedule, verify
from optsched.registry import solve
from optsched.solvers.elastic_cluster import baselines as bl
from optsched.solvers.elastic_cluster.algorithm import (
    COMPACT,
    AOnlineParams,
    a_maxweight,
    a_online_plans,
    alpha_for,
    gamma,
    theorem_alpha,
)
from optsched.solvers.elastic_cluster.placement import (
    PriceState,
    _caps,
    _faithful_ps_server,
    job_best,
    mincost_colocated,
    mincost_distributed_ps,
    mincost_distributed_ra,
)
from optsched.solvers.highs import solve_model
from optsched.tolerance import slots_needed
from optsched.workloads.elastic_cluster import generate

DATA = Path(__file__).parents[1] / "data" / "elastic_cluster"
from tests.solvers import brute_elastic_cluster as brute


def random_state(inst: Instance, tau: int, rng: np.random.Generator) -> PriceState:
    """Random integer usage beta <= C and the prices (11) it implies."""
    beta = np.floor(rng.uniform(0, 1, (inst.n_servers, inst.n_res, tau)) * (inst.cap[:, :, None] + 1))
    beta = np.minimum(beta, inst.cap[:, :, None])
    return PriceState(inst, inst.cap[:, :, None] - beta,
                      inst.price_base ** (beta / inst.cap[:, :, None]) - 1)


def column_min(state: PriceState, j: int, q: int) -> float:
    """Brute force over Gamma_j (explicit columns) under the state's residual capacity."""
    inst, best = state.inst, math.inf
    for col in em.enumerate_columns(inst, j, state.tau):
        if col.plan.colocated != q:
            continue
        use = np.zeros((inst.n_servers, inst.n_res))
        for h, r, a in col.usage:
            use[h, r] = a
        window = slice(col.start - 1, col.start - 1 + col.duration)
        if (state.omega[:, :, window] < use[:, :, None] - 1e-9).any():
            continue
        best = min(best, float((state.delta[:, :, window] / inst.unit[None, :, None]
                                * use[:, :, None]).sum()))
    return best


def fresh(state: PriceState) -> PriceState:
    return PriceState(state.inst, state.omega, state.delta)


@pytest.mark.parametrize("seed", range(12))
def test_subroutines_are_optimal_except_faithful_mincost1(seed):
    """Theorems 1 (A_mincost2; exact A_mincost1) and 6 (A_RAmincost1/2) against brute force."""
    rng = np.random.default_rng(seed)
    inst = generate("tiny", seed)
    state = random_state(inst, int(rng.integers(4, 9)), rng)
    for j in range(len(inst.jobs)):
        assert mincost_colocated(fresh(state), j).cost == pytest.approx(column_min(state, j, 1))
        want = column_min(state, j, 0)
        if inst.is_ps:
            exact = mincost_distributed_ps(fresh(state), j, exact=True).cost
            faithful = mincost_distributed_ps(fresh(state), j).cost
            assert exact == pytest.approx(want)
            assert faithful >= exact - 1e-9
        else:
            assert mincost_distributed_ra(fresh(state), j).cost == pytest.approx(want)


def reference_alg4(wm, omega, psi, caps, e, z, n_workers, ratio):
    """Alg. 4 lines 6-22 transcribed loop by loop (with fixes #10, #11)."""
    order = sorted(range(len(caps)), key=lambda h: omega[h])
    best = None
    for n in order:
        y, s, left = [0] * len(caps), [0] * len(caps), n_workers
        for k in order:
            y_hat = int(min(caps[k], left))
            y[k] = y_hat
            if k == n:
                for g in range(y_hat + 1):
                    s_hat = min(math.floor((wm[n][r] - g * e[r] + 1e-9) / z[r])
                                for r in range(len(z)) if z[r] > 0)
                    need = max(1, math.ceil((n_workers - g) * ratio - 1e-9))
                    if s_hat >= need:
                        y[n], s[n] = g, need
            left -= y[k]
        if left > 0 or s[n] < 1:
            continue
        cost = sum(omega[h] * y[h] + psi[h] * s[h] for h in range(len(caps)))
        if best is None or cost < best:
            best = cost
    return best


def ps_counts(n_workers: int, ratio: float) -> np.ndarray:
    """raw[g]: the fewest PSs of bandwidth 1 covering (n_workers - g) workers of bandwidth ratio."""
    return np.array([slots_needed((n_workers - g) * ratio, 1.0) for g in range(n_workers + 1)],
                    dtype=float)


def test_vectorised_alg4_equals_its_loop_transcription():
    rng = np.random.default_rng(7)
    for _ in range(300):
        H = int(rng.integers(1, 5))
        wm = rng.integers(0, 7, (H, 2)).astype(float)
        e = np.array([1.0, float(rng.integers(0, 3))])
        z = np.array([0.0, 1.0])
        omega = rng.integers(0, 4, H).astype(float)
        psi = rng.integers(0, 4, H).astype(float)
        n_workers = int(rng.integers(1, 7))
        ratio = float(rng.choice([0.25, 0.5, 1.0, 2.0]))
        got = _faithful_ps_server(wm, omega, psi, _caps(wm, e), e, z, n_workers,
                                  ps_counts(n_workers, ratio), False)
        want = reference_alg4(wm, omega, psi, _caps(wm, e), e, z, n_workers, ratio)
        assert (got is None) == (want is None)
        if got is not None:
            assert got[0] == pytest.approx(want)
            assert got[1].sum() == n_workers and got[2].sum() >= 1


def test_theorem1_counterexample_for_faithful_mincost1():
    data = json.loads((DATA / "mincost1_counterexample.json").read_text())
    inst = Instance.from_dict(data["instance"])
    beta = np.array(data["beta"])
    state = PriceState(inst, inst.cap[:, :, None] - beta,
                       inst.price_base ** (beta / inst.cap[:, :, None]) - 1)
    faithful = mincost_distributed_ps(fresh(state), 0)
    exact = mincost_distributed_ps(fresh(state), 0, exact=True)
    assert faithful.plan.workers == (2, 1) and faithful.plan.ps == (0, 2)
    assert exact.plan.workers == (1, 2) and exact.plan.ps == (0, 1)
    assert faithful.cost == pytest.approx(data["faithful_cost"])
    assert exact.cost == pytest.approx(data["exact_cost"]) == pytest.approx(column_min(state, 0, 0))
    assert faithful.cost > exact.cost * 1.15
    # the whole per-job step (q = 1 first, then q = 0) is suboptimal too
    assert job_best(fresh(state), 0).cost > job_best(fresh(state), 0, "exact").cost + 0.1


@pytest.mark.parametrize("seed", range(8))
def test_a_maxweight_theorem3_and_prices(seed):
    inst = generate("tiny", seed)
    jobs, tau = list(range(len(inst.jobs))), 6
    out = a_maxweight(inst, jobs, tau, deadline=NEVER)
    opt7 = solve_model(em.build_batch(inst, jobs, tau)).objective
    alg = out.weight(inst)
    assert alg <= opt7 + 1e-6
    assert opt7 <= gamma(inst) * alg + 1e-6  # Theorem 3 (also when (A1), (A2) fail here)
    usage = np.zeros((inst.n_servers, inst.n_res, tau))
    for j, sub in out.plans.items():
        assert 1 <= sub.start and sub.start + sub.duration <= tau  # (7b)
        usage[:, :, sub.start - 1:sub.start - 1 + sub.duration] += sub.usage(inst)[:, :, None]
        assert out.utility[j] > 0
    assert (usage <= inst.cap[:, :, None] + 1e-9).all()
    ledger = out.ledger
    assert np.allclose(ledger.used.reshape(usage.shape), usage)
    want = inst.price_base ** (usage / inst.cap[:, :, None]) - 1  # eq. (11)
    assert np.allclose(ledger.prices.reshape(usage.shape), want)
    jain = bl.jain_greedy(inst, jobs, tau)
    assert sum(inst.jobs[j].weight for j in jain) <= opt7 + 1e-6


@pytest.mark.parametrize("seed", range(20))
def test_theorem5_and_windows_on_tiny(seed):
    inst = generate("tiny", seed)
    opt = brute.brute_force(inst)
    alpha = theorem_alpha(inst)
    for pricing in ("paper", "exact"):
        plans, out = a_online_plans(inst, AOnlineParams(pricing=pricing), deadline=NEVER)
        value = verify(inst, Schedule(tuple(plans)))
        assert opt - 1e-6 <= value <= 4 * alpha * opt  # Theorem 5
        for rec in out.rounds:  # windows start at alpha tau_i and never overlap earlier rounds
            if rec.admitted:
                first = rec.info["first"]
                assert first == max(alpha * rec.round.tau, rec.round.busy_until + 1)
                assert all(plans[j].start >= first for j in rec.admitted)
                assert all(plans[j].start + plans[j].duration <= first + alpha * rec.round.tau
                           for j in rec.admitted)
    compact, _ = a_online_plans(inst, COMPACT, deadline=NEVER)
    assert verify(inst, Schedule(tuple(compact))) >= opt - 1e-6


@pytest.mark.parametrize("seed", range(6))
def test_lemma2_round_weight_reaches_opt7(seed):
    """Lemma 2 (ii): with alpha from (6), each round's admitted weight >= OPT_7(J_i, tau_i)."""
    inst = generate("tiny", seed)
    _, out = a_online_plans(inst, deadline=NEVER)
    for rec in out.rounds:
        opt7 = solve_model(em.build_batch(inst, list(rec.batch), rec.round.tau)).objective \
            if rec.round.tau > 1 else 0.0
        got = sum(inst.jobs[j].weight for j in rec.admitted)
        assert got >= (opt7 or 0.0) - 1e-6


def test_alpha_formula():
    inst = generate("tiny", 0)
    g = 2 * math.log(inst.price_base)
    w = [j.weight for j in inst.jobs]
    assert theorem_alpha(inst) == math.floor(math.log(sum(w) / min(w)) / math.log(g / (g - 1))) + 1
    assert alpha_for(inst, [5.0]) == 1


def test_fifo_on_the_toy_runs_both_jobs_on_b():
    from tests.problems import test_elastic_cluster as mod

    inst = mod.toy("ps")
    assert bl.ideal_types(inst, 0) == (1, 0)  # B is faster
    res = solve(inst, "fifo")
    assert res.objective == 8.0  # B for 1-2, then B for 3-4: 3 + 5
    assert solve(inst, "a_online_compact").objective >= 7.0


def test_preemptive_baselines_record_segments():
    inst = generate("small", 0)
    for name in ("tiresias", "antman"):
        res = solve(inst, name)
        assert res.schedule is not None and res.objective > 0
    # a congested one-server case forces Tiresias to preempt the long job for the short one
    long_job = inst.jobs[0].__class__(arrival=1, weight=1.0, epochs=1, chunks=1, batches=6,
                                      compute=(1.0,), update=(0.0,), grad_size=0.0)
    short = long_job.__class__(**{**long_job.__dict__, "arrival": 2, "batches": 1})
    one = Instance("allreduce", ("gpu",), ((1.0,),), (inst.worker_types[0].__class__((1.0,), 1.0),),
                   (), (long_job, short), horizon=4)
    res = solve(one, "tiresias")
    plans = res.schedule.plans
    assert plans[1].start == 2 and plans[0].segments  # preempted at slot 2, resumed later
    assert res.objective == pytest.approx(1.0 * plans[0].completion + 1.0 * 3)


@pytest.mark.slow
def test_paper_scale_runs_in_seconds():
    inst = generate("paper", 0, n_jobs=40)
    for name in ("a_online_compact", "drf", "fifo"):
        res = solve(inst, name)
        assert res.schedule is not None
        assert res.runtime_s < 60


@pytest.mark.parametrize("seed", range(4))
def test_earliest_finish_tie_break_on_idle_cluster(seed):
    """On an idle window every candidate costs 0: the paper's order keeps the first one (smallest
    L / fewest workers), the earliest-finish variant the one that ends first (t^- = 1, min d)."""
    from optsched.solvers.elastic_cluster.placement import empty_state, fastest_alone

    inst = generate("small", seed)
    for j in range(len(inst.jobs)):
        paper = job_best(empty_state(inst, 16), j)
        eft = job_best(empty_state(inst, 16), j, tie_break="earliest_finish")
        assert paper.cost == eft.cost == 0.0
        fastest = fastest_alone(inst, j, NEVER).duration
        assert eft.plan.start == 1 and eft.plan.duration == fastest
        assert eft.plan.start + eft.plan.duration <= paper.plan.start + paper.plan.duration


def test_literal_alg4_rejects_all_workers_on_the_ps_server():
    """Digest Sec. 8 #11: the literal s = min(s_hat, ceil((N-g) b/B)) is 0 for g = N, so the only
    (co-located) placement on a single server is rejected; fix #11 keeps it with one PS."""
    wm = np.array([[4.0, 4.0]])
    e, z = np.array([1.0, 1.0]), np.array([0.0, 1.0])
    raw = ps_counts(2, 1.0)
    fixed = _faithful_ps_server(wm, np.zeros(1), np.zeros(1), _caps(wm, e), e, z, 2, raw, False)
    literal = _faithful_ps_server(wm, np.zeros(1), np.zeros(1), _caps(wm, e), e, z, 2, raw, True)
    assert fixed is not None and fixed[1].tolist() == [2.0] and fixed[2].tolist() == [1.0]
    assert literal is None


# ------------------------------------------------------------------ issue 10: params and deadline


def _expired():
    from optsched.deadline import Deadline

    return Deadline(time.perf_counter() - 1.0)


def test_variants_are_one_function_with_params():
    from optsched.registry import get_family
    from optsched.solvers.elastic_cluster import algorithm as aonline

    spec = get_family("elastic_cluster")
    online = {m.name: m for m in spec.methods if m.name.startswith("a_online")}
    assert {m.func for m in online.values()} == {aonline.a_online}
    assert online["a_online"].params == AOnlineParams()
    assert online["a_online_exact_pricing"].params == AOnlineParams(pricing="exact")
    assert online["a_online_eft"].params == AOnlineParams(
        alpha="per_round", window="compact", tie_break="earliest_finish")
    res = solve(generate("tiny", 0), "a_online_compact")
    assert res.info["params"] == {"alpha": "per_round", "window": "compact", "pricing": "paper",
                                  "tie_break": "paper", "max_rounds": 40}
    assert solve(generate("tiny", 0), "antman").info["params"]["queue_slots"] == 5
    with pytest.raises(ValueError, match="window"):
        AOnlineParams(window="later")
    with pytest.raises(ValueError, match="alpha"):
        AOnlineParams(alpha=0)


@pytest.mark.parametrize("name", ["a_online", "a_online_eft", "fifo", "drf", "antman",
                                  "tiresias"])
def test_an_expired_deadline_gives_time_limit_and_no_schedule(name):
    from optsched.registry import get_method
    from optsched.result import SolveStatus

    entry = get_method("elastic_cluster", name)
    out = entry.run(generate("small", 0), _expired(), 0)
    assert out.status is SolveStatus.TIME_LIMIT and out.schedule is None
    assert out.info["stopped"].startswith("deadline")


def test_lower_bound_stopped_early_is_still_a_valid_bound():
    from optsched.solvers.elastic_cluster.bounds import lower_bound

    inst = generate("small", 1)
    full = solve(inst, "lower_bound")
    cut = lower_bound(inst, deadline=_expired())
    assert full.status.value == "optimal" and cut.status.value == "time_limit"
    assert cut.lower_bound == sum(j.weight * (j.arrival + 1) for j in inst.jobs)
    assert cut.lower_bound <= full.lower_bound <= solve(inst, "exact", time_limit=60).objective


def test_a_online_within_a_generous_deadline_is_unchanged():
    from optsched.deadline import Deadline

    inst = generate("small", 0)
    for params in (AOnlineParams(), COMPACT):
        plans, out = a_online_plans(inst, params, deadline=NEVER)
        again, out2 = a_online_plans(inst, params, deadline=Deadline.after(60.0))
        assert plans == again and not out.stopped and not out2.stopped


def test_exact_skips_a_model_it_cannot_build_in_time(monkeypatch):
    from optsched.deadline import Deadline
    from optsched.solvers.elastic_cluster import exact as ex

    inst = generate("tiny", 0)
    monkeypatch.setattr(ex, "BUILD_PER_TERM", 1e6)
    out = ex.exact(inst, deadline=Deadline.after(30.0))
    assert out.status.value == "time_limit" and "cannot be built" in out.info["stopped"]
    assert out.schedule is not None and out.info["binaries"] > 0  # the best heuristic's
    assert verify(inst, out.schedule) >= solve(inst, "exact", time_limit=60).objective
    stopped = ex.exact(inst, deadline=_expired())
    assert stopped.status.value == "time_limit" and stopped.info["stopped"].startswith("deadline")


def test_exact_reports_its_model_objective_through_report_outcome():
    from optsched.deadline import Deadline
    from optsched.solvers.elastic_cluster.exact import exact

    out = exact(generate("tiny", 1), deadline=Deadline.after(60.0))
    assert out.status.value == "optimal" and "model_objective" not in out.info
    assert out.model_objective == pytest.approx(verify(generate("tiny", 1), out.schedule))


def test_caches_live_outside_the_frozen_instance():
    inst = generate("small", 0)
    solve(inst, "fifo")
    solve(inst, "a_online_compact")
    assert not {"_configs", "_ideal_types", "_ps_counts"} & set(vars(inst))
    from optsched.problems.elastic_cluster import memo

    assert memo(inst, "configurations") and memo(inst, "ideal_types")
