"""ring_contention certify (issue 19): the bound never exceeds the proven optimum, the improvement
never worsens its start and respects its deadline, and certify proves / bounds."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings

from optsched import certify, generate, solve
from optsched.deadline import Deadline
from optsched.problems.ring_contention import verify
from optsched.result import SolveStatus
from optsched.solvers.ring_contention.bounds import lower_bound
from optsched.solvers.ring_contention.search import improve
from optsched.tolerance import at_most
from tests.helpers import proven
from tests.models.test_ring_contention_metamorphic import tiny_instances
from tests.solvers.test_ring_contention_robust import instances

FAMILY = "ring_contention"
#: Best ALG/LB at paper scale before issue 19 (sjf_bco against lower_bound).
OLD_RATIO = 1.401
#: Bound-validity checks run (tiny/small presets and both hypothesis strategies); counted at the end.
CHECKED = {"count": 0}


def bound_below_optimum(inst) -> None:
    """lower_bound <= the optimum ``exact`` proves (skipped when it proves none, e.g. infeasible)."""
    opt = proven(inst)
    if opt is None:
        return
    out = lower_bound(inst, deadline=Deadline.after(60))
    assert at_most(out.lower_bound, opt.objective), (out.lower_bound, opt.objective)
    CHECKED["count"] += 1


@pytest.mark.parametrize("preset,seed", [("tiny", s) for s in range(20)] +
                         [pytest.param("small", s, marks=pytest.mark.slow) for s in range(6)])
def test_bound_below_optimum_on_presets(preset, seed):
    bound_below_optimum(generate(FAMILY, preset, seed))


@pytest.mark.slow
@settings(max_examples=20, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(inst=instances())
def test_bound_below_optimum_off_distribution(inst):
    bound_below_optimum(inst)


@pytest.mark.slow
@settings(max_examples=20, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(inst=tiny_instances())
def test_bound_below_optimum_metamorphic_strategy(inst):
    bound_below_optimum(inst)


@pytest.mark.slow
def test_enough_bound_checks():
    """Runs after the tests above (file order, with the slow ones): >= 50 instances compared."""
    assert CHECKED["count"] >= 50, CHECKED


def test_bound_valid_when_stopped_early():
    """A deadline that has already expired still gives a valid bound (the closed-form ones)."""
    inst = generate(FAMILY, "tiny", 3)
    opt = solve(inst, "exact", time_limit=60)
    assert opt.status is SolveStatus.OPTIMAL
    out = lower_bound(inst, deadline=Deadline.after(1e-9))
    assert out.status is SolveStatus.TIME_LIMIT
    assert out.lower_bound > 0 and at_most(out.lower_bound, opt.objective)


@pytest.mark.parametrize("preset,seed", [("tiny", 0), ("tiny", 5), ("small", 1), ("small", 4)])
def test_improve_never_worse_verified_within_deadline(preset, seed):
    inst = generate(FAMILY, preset, seed)
    start = solve(inst, "random", seed=seed)
    began = time.process_time()  # CPU time: a CPU hog beside the test stretches wall time only
    out = improve(inst, start.schedule, deadline=Deadline.after(1.0), seed=seed)
    assert time.process_time() - began < 1.0 + 5.0  # one evaluation past the deadline
    assert verify(inst, out.schedule) <= start.objective


def test_improve_paper_scale_within_deadline():
    """At paper scale one evaluation takes 10-100 ms: the call ends near its deadline and the
    longest-first starts alone beat SJF-BCO's schedule."""
    inst = generate(FAMILY, "paper", 0)
    start = solve(inst, "sjf_bco")
    began = time.process_time()
    out = improve(inst, start.schedule, deadline=Deadline.after(2.0))
    assert time.process_time() - began < 2.0 + 3.0
    assert verify(inst, out.schedule) < start.objective


def test_improve_expired_deadline_returns_start():
    inst = generate(FAMILY, "small", 0)
    start = solve(inst, "sjf_bco")
    out = improve(inst, start.schedule, deadline=Deadline.after(1e-9))
    assert out.schedule == start.schedule and out.status is SolveStatus.TIME_LIMIT


def test_certify_proves_tiny():
    res = certify(generate(FAMILY, "tiny", 0), time_limit=60)
    assert res.status is SolveStatus.OPTIMAL and res.info["gap"] == 0.0


@pytest.mark.slow
def test_certify_paper_beats_old_ratio():
    inst = generate(FAMILY, "paper", 1)
    res = certify(inst, time_limit=20)
    assert res.schedule is not None and verify(inst, res.schedule) == res.objective
    assert res.lower_bound is not None and res.objective / res.lower_bound < OLD_RATIO
