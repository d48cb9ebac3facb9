"""improve's schedules outside the stage-order class (issue 19): stage orders whose neighbours
share one priority class (:class:`~optsched.solvers.cojob_network.search.Blocks`). Nothing shared is
the paper's order-preserving scheduling, bit for bit; a candidate with a class merged or split is
evaluated incrementally exactly as its full run; every schedule improve returns passes verify."""

from __future__ import annotations

import random

import pytest

from optsched import generate, solve, verify
from optsched.deadline import NEVER, Deadline
from optsched.simulate.flows import StageOrder, simulate, sum_sct
from optsched.solvers.cojob_network import search as ex
from optsched.tolerance import at_most

from tests.solvers.test_cojob_network_incremental import _base

FAMILY = "cojob_network"


def _order(inst, seed):
    rng = random.Random(seed)
    return tuple(sorted(inst.stages, key=lambda a: (a[1], rng.random())))


@pytest.mark.parametrize("seed", range(3))
def test_nothing_shared_is_the_stage_order_run(seed):
    inst = generate(FAMILY, "small", seed)
    order = _order(inst, seed)
    plain = simulate(inst, StageOrder(order), record=False)
    blocks = simulate(inst, ex.BlockOrder(ex.Blocks(order)), record=False)
    assert (plain.S, plain.job_end) == (blocks.S, blocks.job_end)


def test_classes_count_boundaries():
    plan = ex.Blocks(((0, 0), (1, 0), (2, 0), (0, 1)), frozenset({1, 3}))
    assert plan.classes() == {(0, 0): 0, (1, 0): 0, (2, 0): 1, (0, 1): 1}


@pytest.mark.parametrize("preset,seed", [("tiny", s) for s in range(3)] + [("small", 0),
                                                                        ("small", 1)])
def test_merged_and_split_neighbours_evaluated_incrementally_are_their_full_runs(preset, seed):
    inst = generate(FAMILY, preset, seed)
    base = _base(inst, _order(inst, seed))
    changed = 0
    for cand in ex._toggles(base):
        info = {"evaluated": 0, "unchanged": 0}
        cost, moved = ex._evaluate(inst, base, cand, NEVER, {"value": float("inf")}, info)
        full = simulate(inst, ex.BlockOrder(cand), record=False)
        assert cost == sum_sct(inst, full)
        if moved is not None:
            changed += 1
            assert moved.end == {(g, k): full.S[g][k] for g, k in inst.stages}
            again = [c for c in ex._toggles(moved) if c.shared == frozenset()]
            back, _ = ex._evaluate(inst, moved, again[0], NEVER, {"value": float("inf")},
                                   {"evaluated": 0, "unchanged": 0})
            assert back == base.value
    assert changed > 0 or preset == "tiny"


@pytest.mark.parametrize("seed", range(4))
def test_improve_with_blocks_is_verified_and_never_worse(seed):
    inst = generate(FAMILY, "small", seed)
    start = solve(inst, "baraat_fifo")
    out = ex.improve(inst, start.schedule, deadline=Deadline.after(2.0), seed=seed)
    value = verify(inst, out.schedule)
    assert at_most(value, start.objective)
    if out.schedule is not start.schedule:
        assert value == pytest.approx(out.info["value"])
