"""optsched.certify (issue 19): the certified interval [LB, UB] on the optimum, its sides, the
fall-through of ``solve(..., "exact")`` when the model is not built, and compare's ALG/UB.

The toy single-machine family (tests/toy/) is registered with a certify spec whose exact model
is "never built", whose start is FIFO only, and whose improvement is Smith's rule: every side of
the driver can then be checked against a known optimum.
"""

from __future__ import annotations

import dataclasses
import math

import pytest

import optsched
from optsched import registry
from optsched.certificate import Sides, certify
from optsched.deadline import Deadline
from optsched.experiments.compare import run_compare
from optsched.family import CertifySpec
from optsched.method import Method
from optsched.result import Outcome, Result, SolveStatus
from tests.helpers import optimum

FAMILIES = ("hetero_gpu", "edge_cloud", "ring_contention", "elastic_cluster", "cojob_network")


def _not_built(inst, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """An exact method past its size cap: FIFO's schedule, the trivial bound, no model."""
    from tests.toy.solvers import ListParams, list_schedule, lower_bound

    out = list_schedule(inst, ListParams("fifo"), deadline=deadline)
    bound = lower_bound(inst, deadline=deadline).lower_bound
    return Outcome(out.schedule, SolveStatus.FEASIBLE, bound, {"not_built": "size cap (test)"})


def _smith(inst, start, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """Improvement: Smith's rule (optimal for 1 || sum w_j C_j), never worse than ``start``."""
    from tests.toy.solvers import ListParams, list_schedule

    return list_schedule(inst, ListParams("wspt"), deadline=deadline)


def _exact_bound(inst, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """A bound that equals the optimum (the exact MILP's value, no schedule)."""
    from tests.toy.solvers import exact

    return Outcome(None, SolveStatus.OPTIMAL, exact(inst, deadline=deadline).lower_bound)


@pytest.fixture
def toy():
    from tests.toy.solvers import SPEC

    methods = tuple(Method("exact", "exact", _not_built) if m.name == "exact" else m
                    for m in SPEC.methods) + (Method("strong_bound", "bound", _exact_bound),)
    spec = dataclasses.replace(SPEC, methods=methods, certify=CertifySpec(
        bound="strong_bound", improve=_smith, starts=("fifo",)))
    registry.register(spec)
    yield spec
    registry.unregister(spec.name)


@pytest.mark.parametrize("family", FAMILIES)
def test_certify_proves_tiny_optima(family):
    """On tiny instances the exact step proves the optimum: gap 0, the same value as exact."""
    inst = optsched.generate(family, "tiny", 2)
    res = certify(inst, time_limit=60)
    opt = optimum(family, "tiny", 2)
    assert opt is not None and res.status is SolveStatus.OPTIMAL and res.info["gap"] == 0.0
    assert res.objective == pytest.approx(opt.objective, rel=1e-9)
    assert optsched.verify(inst, res.schedule) == pytest.approx(res.objective)


def test_every_side_runs_when_exact_is_not_built(toy):
    inst = toy.generate("small", 3)
    opt = _exact_bound(inst, deadline=Deadline.after(60)).lower_bound
    res = certify(inst, time_limit=60)
    sides = [(s["method"], s["side"]) for s in res.info["steps"]]
    assert sides == [("exact", "exact"), ("strong_bound", "lower"), ("fifo", "upper"),
                     ("improve", "upper")]
    assert res.info["steps"][0]["not_built"] == "size cap (test)"
    assert res.status is SolveStatus.OPTIMAL and res.objective == pytest.approx(opt)
    assert (res.info["upper_by"], res.info["lower_by"]) == ("improve", "strong_bound")
    assert optsched.verify(inst, res.schedule) == pytest.approx(res.objective)


def test_solve_exact_falls_through_to_certify(toy):
    """``solve(..., "exact")`` whose model is not built returns the certified interval."""
    inst = toy.generate("small", 4)
    res = optsched.solve(inst, "exact", time_limit=60)
    assert res.method == "exact" and res.info["certified"] and res.info["not_built"]
    assert res.status is SolveStatus.OPTIMAL and res.info["gap"] == 0.0
    assert "exact" not in [s["method"] for s in res.info["steps"] if s["side"] != "known"]
    text = res.summary()
    assert "not built: size cap (test)" in text and "gap        0.00%" in text


def test_known_results_are_not_run_again(toy):
    inst = toy.generate("small", 5)
    fifo = optsched.solve(inst, "fifo")
    res = certify(inst, time_limit=60, known=[fifo])
    ran = [s["method"] for s in res.info["steps"] if s["side"] != "known"]
    assert "fifo" not in ran and res.status is SolveStatus.OPTIMAL


def test_an_improvement_that_takes_a_goal_is_given_the_bound(toy):
    """certify hands the best bound to an improvement with a ``goal`` parameter, which may stop
    as soon as its schedule meets it (the schedule is then optimal)."""
    from optsched.certificate import takes_goal

    goals = []

    def smith_to_goal(inst, start, *, deadline: Deadline, seed: int = 0, goal=None) -> Outcome:
        goals.append(goal)
        return _smith(inst, start, deadline=deadline, seed=seed)

    assert takes_goal(smith_to_goal) and not takes_goal(_smith)
    spec = dataclasses.replace(toy, certify=dataclasses.replace(toy.certify, improve=smith_to_goal))
    registry.unregister(toy.name)
    registry.register(spec)
    inst = spec.generate("small", 3)
    res = certify(inst, time_limit=60)
    bound = next(s["lower_bound"] for s in res.info["steps"] if s["method"] == "strong_bound")
    assert goals == [bound] and res.status is SolveStatus.OPTIMAL


def test_the_bound_step_hands_its_guide_to_the_improvement(toy):
    """An improvement with a ``guide`` parameter gets the last Outcome.guide a step returned
    (here the bound's), so no per-instance cache links the two steps; one without gets none."""
    from optsched.certificate import takes

    seen = []

    def guided_bound(inst, *, deadline: Deadline, seed: int = 0) -> Outcome:
        out = _exact_bound(inst, deadline=deadline)
        return dataclasses.replace(out, status=SolveStatus.TIME_LIMIT,
                                   lower_bound=out.lower_bound - 1, guide=("wspt", id(inst)))

    def guided(inst, start, *, deadline: Deadline, seed: int = 0, guide=None) -> Outcome:
        seen.append(guide)
        return _smith(inst, start, deadline=deadline, seed=seed)

    assert takes(guided, "guide") and not takes(_smith, "guide")
    methods = tuple(Method("strong_bound", "bound", guided_bound) if m.name == "strong_bound"
                    else m for m in toy.methods)
    spec = dataclasses.replace(toy, methods=methods,
                               certify=dataclasses.replace(toy.certify, improve=guided))
    registry.unregister(toy.name)
    registry.register(spec)
    inst = spec.generate("small", 3)
    res = certify(inst, time_limit=60)
    assert seen == [("wspt", id(inst))]
    assert "guide" not in res.info and "guide" not in res.to_dict()
    assert Outcome(None, guide=1) == Outcome(None, guide=2)   # not part of an Outcome's value


def test_fallback_runs_only_while_no_schedule_exists(toy):
    """A family whose only start is its exact step (cojob_network) ends with a schedule even when
    exact gives none: the fallback methods run with the time left, and only then."""
    def no_schedule(inst, *, deadline: Deadline, seed: int = 0) -> Outcome:
        return Outcome(None, SolveStatus.TIME_LIMIT, None, {"not_built": "late (test)"})

    methods = tuple(Method("exact", "exact", no_schedule) if m.name == "exact" else m
                    for m in toy.methods)
    for exact_gives, ran_fallback in ((methods, True), (toy.methods, False)):
        spec = dataclasses.replace(toy, methods=exact_gives, certify=CertifySpec(
            bound="strong_bound", improve=_smith, starts=(), fallback=("fifo", "wspt")))
        registry.unregister(toy.name)
        registry.register(spec)
        inst = spec.generate("small", 3)
        res = certify(inst, time_limit=60)
        ran = [s["method"] for s in res.info["steps"]]
        assert ("fifo" in ran) is ran_fallback and "wspt" not in ran
        assert res.schedule is not None and res.status is SolveStatus.OPTIMAL


def test_without_improvement_the_gap_is_reported(toy):
    spec = dataclasses.replace(toy, certify=CertifySpec(bound="lower_bound", starts=("fifo",)))
    registry.unregister(toy.name)
    registry.register(spec)
    inst = spec.generate("small", 1)
    res = certify(inst, time_limit=60)
    fifo = optsched.solve(inst, "fifo")
    assert res.objective == pytest.approx(fifo.objective)
    assert res.status is SolveStatus.FEASIBLE and res.info["upper_by"] in ("exact", "fifo")
    assert res.info["gap"] == pytest.approx(res.objective / res.lower_bound - 1)
    assert res.lower_bound <= res.objective


def test_a_bound_above_a_verified_schedule_is_dropped():
    sides = Sides(upper=10.0, schedule=object(), upper_by="a", lower=12.0, lower_by="b")
    from optsched.certificate import _result

    res = _result(None, sides, [], Deadline.after(10), 0.0)
    assert res.lower_bound is None and res.info["gap"] is None and "bound_dropped" in res.info
    assert res.status is SolveStatus.FEASIBLE


def test_sides_keep_the_best_of_each():
    sides = Sides()

    def result(obj, lb, schedule=True):
        return Result(SolveStatus.FEASIBLE, obj, lb, 0.0, "m", None,
                      object() if schedule else None, {})

    sides.offer(result(10.0, None), "a")
    sides.offer(result(12.0, 7.0), "b")
    sides.offer(result(math.inf, 8.0, schedule=False), "c")
    assert (sides.upper, sides.upper_by, sides.lower, sides.lower_by) == (10.0, "a", 8.0, "c")
    assert sides.gap() == pytest.approx(0.25) and not sides.closed()


def test_compare_shows_alg_over_ub_and_the_certified_gap(toy):
    rows, table = run_compare(toy.name, preset="small", seeds=2, progress=False, certify=30)
    cert = [r for r in rows if r["kind"] == "certify"]
    assert len(cert) == 2 and all(r["status"] == "optimal" for r in cert)
    for r in rows:
        if r["kind"] in ("algorithm", "baseline"):
            assert r["alg_ub"] >= 1 - 1e-9 and r["alg_lb"] >= r["alg_ub"] - 1e-9
    assert "Certified gap" in table and "gap 0.00%" in table


def _by(method: str):
    return lambda inst: optsched.solve(inst, method).schedule


def _serial(inst):
    from optsched.solvers.edge_cloud.bounds import serial_schedule

    return serial_schedule(inst)


#: Per family: the instance, a start schedule, and how its improve shows it did not search
#: (goal at the start's own cost), and whether it must return the start itself.
GOAL_CASES = {
    "cojob_network": ("small", 1, _by("baraat_fifo"), lambda info: info["evaluated"] == 1, False),
    "hetero_gpu": ("small", 2, _by("hare"), lambda info: info["evaluations"] == 0, True),
    "ring_contention": ("small", 2, _by("first_fit"),
                        lambda info: "pass" not in info and "one_server" not in info, True),
    "elastic_cluster": ("small", 2, _by("drf"), lambda info: info["moves"] == 0, False),
    # on this instance a step-1 list schedule is no worse than the start, so it meets the goal
    "edge_cloud": ("small", 1, _serial, lambda info: info["moves"] == 0, False),
}


@pytest.mark.parametrize("family", FAMILIES)
def test_every_improve_stops_once_it_meets_its_goal(family):
    """Every family's improvement takes certify's ``goal`` and, given its start's own cost (a
    bound the start already meets), does not search, however long the deadline."""
    from optsched.certificate import takes_goal

    preset, seed, start_of, did_not_search, returns_start = GOAL_CASES[family]
    inst = optsched.generate(family, preset, seed)
    start = start_of(inst)
    value = optsched.verify(inst, start)
    improve = registry.get_family(family).certify.improve
    assert takes_goal(improve)
    out = improve(inst, start, deadline=Deadline.after(600), goal=value)
    assert did_not_search(out.info)
    assert optsched.verify(inst, out.schedule) <= value
    assert not returns_start or out.schedule == start


def test_improve_leaves_time_for_the_verify_after_it():
    """Issue 22 item 3: improve searches until its deadline and its schedule is verified after
    it, so certify keeps the longest verify seen so far (x VERIFY_MARGIN) free at the end."""
    from optsched.certificate import VERIFY_MARGIN, _before_verify

    deadline = Deadline.after(100.0)
    steps = [{"method": "a", "verify_s": 2.0}, {"method": "b", "verify_s": 0.5}, {"method": "c"}]
    left = _before_verify(deadline, steps).remaining()
    assert left is not None and 100.0 - VERIFY_MARGIN * 2.0 - 1.0 < left <= 100.0 - VERIFY_MARGIN * 2.0
    assert _before_verify(deadline, [{"method": "c"}]) is deadline
    assert _before_verify(Deadline(None), steps).remaining() is None


@pytest.mark.parametrize("family", FAMILIES)
def test_certify_spec_names_registered_methods(family):
    """Every method a family's certify spec names (bound, starts, fallback) is registered, and a
    family without start methods has a fallback (else certify can end without a schedule)."""
    spec = registry.get_family(family).certify
    names = {m.name for m in registry.get_family(family).methods}
    named = [spec.bound] if spec.bound else []
    named += list(spec.starts or ()) + list(spec.fallback)
    assert set(named) <= names
    assert spec.starts != () or spec.fallback
