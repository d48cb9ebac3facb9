"""Incremental evaluation in cojob_network's ``improve`` (issue 19 item 5): a neighbour's run
resumed from a checkpoint of the current order's run is the run a full simulation gives, bit for
bit (cost, stage completions, job ends, starts), and a neighbour that never ranks two in-flight
stages differently is the current run itself."""

from __future__ import annotations

import random

import pytest

from optsched import generate
from optsched.deadline import NEVER
from optsched.simulate.flows import Simulator, StageOrder, simulate, sum_sct
from optsched.solvers.cojob_network import search as ex
from optsched.solvers.cojob_network.exact import chain_orders

FAMILY = "cojob_network"


def _base(inst, order, every=3):
    old, ex.CHECK_EVERY = ex.CHECK_EVERY, every
    try:
        return ex._simulate_order(inst, tuple(order), NEVER, {"value": float("inf")},
                                  {"evaluated": 0})
    finally:
        ex.CHECK_EVERY = old


@pytest.mark.parametrize("preset,seed", [("tiny", s) for s in range(4)] + [("small", 0)])
def test_resume_from_every_checkpoint_is_the_same_run(preset, seed):
    inst = generate(FAMILY, preset, seed)
    order = chain_orders(inst, 10**9)[0] if len(inst.stages) < 8 else tuple(
        sorted(inst.stages, key=lambda a: (a[1], a[0])))
    full = simulate(inst, StageOrder(order), record=False)
    checkpoints: list = []
    Simulator(inst, StageOrder(order), record=False).run(None, checkpoints, 2)
    assert len(checkpoints) > 1
    for _, state in checkpoints:
        run = Simulator.resume(inst, StageOrder(order), state, record=False).run()
        assert (run.S, run.job_end, run.starts) == (full.S, full.job_end, full.starts)
        assert (run.events, run.allocations) == (full.events, full.allocations)


@pytest.mark.parametrize("preset,seed", [("tiny", s) for s in range(4)] + [("small", 0)])
def test_every_neighbour_evaluated_incrementally_is_its_full_run(preset, seed):
    inst = generate(FAMILY, preset, seed)
    rng = random.Random(seed)
    order = tuple(sorted(inst.stages, key=lambda a: (a[1], rng.random())))
    base = _base(inst, order)
    assert base is not None and len(base.checkpoints) > 1
    resumed = 0
    for cand in ex._moves(order, rng):
        info = {"evaluated": 0, "unchanged": 0}
        cost, moved = ex._evaluate(inst, base, cand, NEVER, {"value": float("inf")}, info)
        full = simulate(inst, StageOrder(cand), record=False)
        assert cost == sum_sct(inst, full)
        if moved is not None:
            assert moved.end == {(g, k): full.S[g][k] for g, k in inst.stages}
            resumed += ex.divergence(base, cand) > 0
    assert resumed > 0


@pytest.mark.slow  # ~30 s at load 8; tiny and small stay in the default run
def test_paper_neighbours_evaluated_incrementally_are_their_full_runs():
    inst = generate(FAMILY, "paper", 0)
    order = tuple(sorted(inst.stages, key=lambda a: (a[1], a[0])))
    base = _base(inst, order, every=40)
    rng = random.Random(0)
    moves = list(ex._moves(order, rng))
    for cand in moves[-2:]:          # late moves: resumed far into the run
        cost, _ = ex._evaluate(inst, base, cand, NEVER, {"value": float("inf")},
                               {"evaluated": 0, "unchanged": 0})
        assert cost == sum_sct(inst, simulate(inst, StageOrder(cand), record=False))
