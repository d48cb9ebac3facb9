"""The slot LP schedule of a stage order (issue 19, :mod:`optsched.solvers.cojob_network.slots`):
every schedule it builds passes verify, costs at most its slot ends and at least the proven bound,
meets a lone stage's bottleneck exactly, and improve keeps the better of it and the search."""

from __future__ import annotations

import dataclasses
import random
import time

import pytest

from optsched import generate, solve, verify
from optsched.deadline import NEVER, Deadline
from optsched.problems.cojob_network import Cojob, Instance, Job
from optsched.solvers.cojob_network import search, slots
from optsched.tolerance import at_least, at_most

FAMILY = "cojob_network"


def _order(inst, seed):
    """A random stage order that keeps the chains."""
    rng = random.Random(seed)
    return tuple(sorted(inst.stages, key=lambda a: (a[1], rng.random())))


def _lex(inst, order, count):
    lp = slots.SlotLP(inst, order, slots.slot_delta(inst, count), NEVER)
    done = lp.lex()
    return lp, done, slots.to_schedule(inst, lp, done, lp.progress())


@pytest.mark.parametrize("preset,seed,arrivals", [("tiny", s, False) for s in range(4)]
                         + [("tiny", s, True) for s in range(2)]
                         + [("small", s, False) for s in range(3)])
def test_schedules_pass_verify_between_the_bound_and_the_slot_ends(preset, seed, arrivals):
    inst = generate(FAMILY, preset, seed, **({"arrivals": True} if arrivals else {}))
    bound = solve(inst, method="order_bound", time_limit=30).lower_bound
    for count, order_seed in ((7, seed), (20, seed + 1)):
        lp, done, schedule = _lex(inst, _order(inst, order_seed), count)
        value = verify(inst, schedule)
        slot_ends = sum((done[g, k] + 1) * lp.delta - inst.cojobs[g].arrival for g, k in done)
        assert at_most(value, slot_ends)            # every stage ends inside its deadline slot
        assert at_least(value, bound)               # the bound F* <= OPT <= any schedule


def _lone_stage(n_iterations: int) -> Instance:
    """One cojob, one stage, two jobs sharing port 0: bottleneck 3 per iteration."""
    jobs = (Job(1, ((0, 1, 2.0), (1, 2, 1.0))), Job(1, ((0, 2, 1.0), (2, 0, 1.0))))
    return Instance(3, (Cojob(0.0, (n_iterations,), jobs),), name="lone")


@pytest.mark.parametrize("n", [1, 4])
def test_a_lone_stage_meets_its_bottleneck(n):
    """Proportional pacing runs every port at the bottleneck's pace: S = Lambda = 3 n exactly
    when the slot divides it (the simulator's max-min filling reaches it too; this pins the
    extraction: iterations in lockstep, flows of an iteration ending together)."""
    inst = _lone_stage(n)
    lp = slots.SlotLP(inst, ((0, 0),), 1.0, NEVER)
    done = lp.lex()
    assert done == {(0, 0): 3 * n - 1}
    assert verify(inst, slots.to_schedule(inst, lp, done, lp.progress())) == pytest.approx(3 * n)


def test_compute_gaps_and_expired_deadlines_give_nothing():
    inst = generate(FAMILY, "tiny", 0)
    order = _order(inst, 0)
    gapped = dataclasses.replace(inst, cojobs=tuple(
        dataclasses.replace(c, jobs=tuple(dataclasses.replace(j, compute=0.5) for j in c.jobs))
        for c in inst.cojobs))
    assert slots.lex_schedule(gapped, order, 1.0, NEVER) is None
    assert slots.polish(gapped, [order], deadline=NEVER) is None
    assert slots.lex_schedule(inst, order, 1.0, Deadline(time.perf_counter() - 1.0)) is None


@pytest.mark.parametrize("seed", range(3))
def test_window_milp_and_finer_slots_never_lose(seed):
    """A window round starts from the lex schedule (its MIP start) and a refined grid holds the
    same schedule: neither costs more, and both pass verify."""
    inst = generate(FAMILY, "small", seed)
    lp, done, schedule = _lex(inst, _order(inst, seed), 20)
    value = verify(inst, schedule)
    got = slots.window_milp(lp, done, lp.progress(), NEVER, width=2)
    assert got is not None
    done2, x2 = got
    value2 = verify(inst, slots.to_schedule(inst, lp, done2, x2))
    assert at_most(value2, value)
    fine = slots.refined(lp, done2, x2)
    assert fine is not None
    lp3, done3, x3 = fine
    assert lp3.delta == lp.delta / 2 and done3 == {a: 2 * c + 1 for a, c in done2.items()}
    assert verify(inst, slots.to_schedule(inst, lp3, done3, x3)) == pytest.approx(value2, rel=1e-9)


def test_polish_keeps_the_best_pass(monkeypatch):
    monkeypatch.setattr(slots, "SLOT_COUNTS", slots.SLOT_COUNTS[:2])
    monkeypatch.setattr(slots, "LEVELS", 1)
    inst = generate(FAMILY, "tiny", 1)
    orders = [_order(inst, 0), _order(inst, 1)]
    schedule, value, info = slots.polish(inst, orders, deadline=NEVER)
    assert verify(inst, schedule) == value
    singles = [verify(inst, _lex(inst, o, c)[2]) for o in orders for c in slots.SLOT_COUNTS]
    assert at_most(value, min(singles))
    assert info["slot_passes"] >= len(singles) and info["slot_levels"] <= 1


@pytest.mark.slow
def test_paper_seed0_slot_lp_beats_the_simulated_order():
    """Paper seed 0, Model F's order: the simulator's max-min order-preserving run costs 43,142;
    the slot LP schedule of the same order costs less (40,754 at 120 slots)."""
    from optsched.models import cojob_network as cm
    from optsched.simulate.flows import StageOrder, simulate, sum_sct
    from optsched.solvers.cojob_network.exact import solve_model_f

    inst = generate(FAMILY, "paper", 0)
    rep, order = solve_model_f(inst, Deadline.after(120), 0, {})
    assert rep is not None and order is not None and cm is not None
    simulated = sum_sct(inst, simulate(inst, StageOrder(order), record=False))
    schedule = slots.lex_schedule(inst, order, slots.slot_delta(inst, 120), NEVER)
    assert verify(inst, schedule) < 0.96 * simulated


def test_improve_keeps_the_slot_schedule_when_it_is_better():
    inst = generate(FAMILY, "tiny", 2)
    start = solve(inst, method="pda").schedule
    out = search.improve(inst, start, deadline=Deadline.after(3), seed=0)
    value = verify(inst, out.schedule)
    assert at_most(value, verify(inst, start))
    assert "slot_passes" in out.info
    if out.info.get("source") == "slot_lp":
        assert out.schedule.policy == "slot_lp" and value == out.info["value"]


def test_a_pass_verify_rejects_is_dropped_not_raised():
    """Found by the metamorphic scaling property (exact, no time limit then): flows of 0.5 and
    100 bytes, arrivals 2.5; a slot schedule once labelled an iteration before its release.
    polish never raises: a pass verify rejects is skipped; whatever it returns passes verify."""
    inst = Instance(2, (
        Cojob(0.0, (2,), (Job(1, ((0, 0, 0.5),)),)),
        Cojob(2.5, (2, 4), (Job(2, ((1, 0, 0.5), (0, 1, 100.0), (1, 1, 3.0))),)),
        Cojob(2.5, (1, 2), (Job(2, ((1, 1, 0.5),)), Job(1, ((0, 0, 2.0), (1, 0, 2.0),
                                                            (0, 1, 0.5)))))), name="scaled")
    for scale in (1.0, 253.9):
        scaled = dataclasses.replace(inst, capacity=inst.capacity * scale) if scale != 1 else inst
        found = slots.polish(scaled, [_order(scaled, 0), _order(scaled, 1)],
                             deadline=Deadline.after(4))
        if found is not None:
            assert verify(scaled, found[0]) == found[1]
