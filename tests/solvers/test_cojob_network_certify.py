"""cojob_network certify sides (issue 19): ``order_bound`` (LP*, Model F's dual bound and, with a
time limit, the order enumeration above it) never exceeds a proven optimum, ``improve`` (local search over stage orders) is never worse than its
start, verified and deadline-bound, and ``certify`` closes tiny instances."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings

from optsched import generate, solve, verify
from optsched.certificate import certify
from optsched.deadline import Deadline
from optsched.result import SolveStatus
from optsched.solvers.cojob_network.bounds import order_bound
from optsched.solvers.cojob_network.exact import exact
from optsched.solvers.cojob_network.search import completion_order, improve
from optsched.tolerance import at_most

from tests.models.test_cojob_network_metamorphic import tiny_instances

FAMILY = "cojob_network"
#: Seconds a call may exceed its deadline on a loaded 2-core machine (one simulation step or one
#: HiGHS hand-off).
MARGIN = 3.0


def _assert_bound_below_optimum(inst, limit: float = 30) -> bool:
    """The bound is <= the proven optimum; False when exact did not prove it (not counted)."""
    opt = solve(inst, "exact", time_limit=limit)
    if opt.status is not SolveStatus.OPTIMAL:
        return False
    res = solve(inst, "order_bound", time_limit=30)
    assert res.lower_bound is not None
    assert at_most(res.lower_bound, opt.objective), (res.lower_bound, opt.objective)
    return True


def test_bound_below_proven_optimum_on_tiny_presets():
    proven = sum(_assert_bound_below_optimum(generate(FAMILY, "tiny", s)) for s in range(40))
    assert proven >= 35


@pytest.mark.slow
def test_bound_below_proven_optimum_on_small_presets():
    proven = sum(_assert_bound_below_optimum(generate(FAMILY, "small", s), 20) for s in range(6))
    assert proven >= 1


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(inst=tiny_instances())
def test_bound_below_proven_optimum_off_distribution(inst):
    _assert_bound_below_optimum(inst)


def test_bound_valid_when_stopped_early():
    for seed in range(5):
        inst = generate(FAMILY, "tiny", seed)
        early = order_bound(inst, deadline=Deadline.after(1e-4))
        opt = solve(inst, "exact", time_limit=30)
        assert opt.status is SolveStatus.OPTIMAL
        assert early.lower_bound is not None and early.lower_bound > 0
        assert at_most(early.lower_bound, opt.objective)


@pytest.mark.parametrize("seed", range(4))
def test_improve_never_worse_verified_and_on_time(seed):
    inst = generate(FAMILY, "small", seed)
    start = solve(inst, "baraat_fifo")
    limit = 3.0
    began = time.process_time()
    out = improve(inst, start.schedule, deadline=Deadline.after(limit), seed=seed)
    assert time.process_time() - began <= limit + MARGIN
    value = verify(inst, out.schedule)
    assert at_most(value, start.objective)


def test_completion_order_keeps_chains():
    inst = generate(FAMILY, "small", 0)
    order = completion_order(inst, solve(inst, "grouper").schedule)
    assert sorted(order) == sorted(inst.stages)
    assert all(order.index((g, k - 1)) < order.index((g, k)) for g, k in order if k)


def test_certify_proves_tiny_optimal():
    res = certify(generate(FAMILY, "tiny", 0), time_limit=30)
    assert res.status is SolveStatus.OPTIMAL and res.info["gap"] == 0.0


@pytest.mark.slow
def test_certify_paper_beats_old_gap():
    """Old best ALG/LB on paper seed 0: grouper 42528.2 / LP* 35506.2 = 1.198."""
    inst = generate(FAMILY, "paper", 0)
    res = certify(inst, time_limit=60)
    assert verify(inst, res.schedule) == pytest.approx(res.objective)
    assert res.info["gap"] is not None and res.info["gap"] < 0.198


@pytest.mark.parametrize("cojobs", [6, 8])
def test_exact_returns_within_limit_on_many_cojobs(cojobs):
    """Issue 22 item 3: exact with a 10 s limit on 6-8 cojobs (it took 104-341 s at 60 s) returns
    within the limit + 1 s of CPU time (+ the load margin), with a schedule and ``not_built``."""
    inst = generate(FAMILY, "small", 0, cojobs=(cojobs, cojobs))
    began = time.process_time()
    out = exact(inst, deadline=Deadline.after(10.0))
    assert time.process_time() - began <= 11.0 + MARGIN
    assert out.schedule is not None and verify(inst, out.schedule) > 0


def test_order_bound_guides_improve_with_model_f_order():
    """Issue 20: no per-instance cache. order_bound returns Model F's stage order as its guide
    (every stage once, chains kept); improve started from a poor schedule with that guide starts
    from the better of the two runs, and a guide that is not a stage order is ignored."""
    inst = generate(FAMILY, "small", 1)
    bound = order_bound(inst, deadline=Deadline.after(30))
    order = bound.guide
    assert sorted(order) == sorted(inst.stages)
    assert all(order.index((g, k - 1)) < order.index((g, k)) for g, k in order if k)
    start = solve(inst, "baraat_fifo")
    guided = improve(inst, start.schedule, deadline=Deadline.after(0.5), guide=order)
    plain = improve(inst, start.schedule, deadline=Deadline.after(0.5), guide=[("x", 1)])
    assert plain.info.get("start_order", "completion") == "completion"
    assert at_most(verify(inst, guided.schedule), start.objective)
    assert at_most(bound.lower_bound, verify(inst, guided.schedule))


def test_exact_returns_model_f_order_as_guide():
    inst = generate(FAMILY, "tiny", 2, cojobs=(6, 6))
    out = exact(inst, deadline=Deadline.after(30))
    assert out.info["f_status"] == "optimal"
    assert sorted(out.guide) == sorted(inst.stages)


@pytest.mark.parametrize("cojobs", [8, 12, 20])
def test_exact_cpu_time_within_limit_plus_one_second(cojobs):
    """time_limit holds at every size of the exact-reach ladder (tiny, ``cojobs`` = (n, n)):
    exact (heuristics, Model F, local search, Model I, LP cuts, Model E) returns within the
    limit + 1 s of CPU time, with a verified schedule and a bound below it."""
    import optsched.solvers.highs  # noqa: F401 - Pyomo loads outside the call, as solve() does

    inst = generate(FAMILY, "tiny", 0, cojobs=(cojobs, cojobs))
    limit = 4.0
    began = time.process_time()
    out = exact(inst, deadline=Deadline.after(limit))
    assert time.process_time() - began <= limit + 1.0
    value = verify(inst, out.schedule)
    assert at_most(out.lower_bound, value)
