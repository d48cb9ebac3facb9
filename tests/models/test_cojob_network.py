"""cojob_network models: LP-Primal (cutting planes vs enumeration), its dual, and the ordering MILP
against an enumerative oracle. Model E (the event MILP of issue 14, the ``exact`` method) is tested
in test_cojob_network_exact.py."""

from __future__ import annotations


import pytest

from optsched.deadline import NEVER
from optsched.io import load_instance
from optsched.models import cojob_network as cm
from optsched.result import SolveStatus
from optsched.solvers.cojob_network.bounds import solve_lp_primal
from optsched.solvers.highs import solve_model
from optsched.workloads.cojob_network import generate

from tests.solvers import brute_cojob_network as brute

SEEDS = range(20)


@pytest.mark.parametrize("seed", SEEDS)
def test_lp_cutting_planes_equal_enumeration_and_bound_f(seed):
    inst = generate("tiny", seed)
    cut = solve_lp_primal(inst, "sort", deadline=NEVER)
    full = solve_lp_primal(inst, "enumerate", deadline=NEVER)
    assert cut.status is SolveStatus.OPTIMAL and full.status is SolveStatus.OPTIMAL
    assert cut.value == pytest.approx(full.value, rel=1e-6)
    assert cut.value <= brute.best_sequencing(inst) + 1e-6      # LP* <= F*


@pytest.mark.parametrize("seed", SEEDS)
def test_ordering_milp_equals_enumeration(seed):
    inst = generate("tiny", seed)
    model = cm.build_ordering_milp(inst)
    rep = solve_model(model)
    assert rep.status is SolveStatus.OPTIMAL
    assert rep.objective == pytest.approx(brute.best_sequencing(inst), rel=1e-6)
    order = cm.extract_order(inst, model)
    assert brute.sequencing_cost(inst, order) == pytest.approx(rep.objective, rel=1e-6)


@pytest.mark.parametrize("seed", range(8))
def test_dual_equals_primal(seed):
    inst = generate("tiny", seed, cojobs=(3, 3))
    dual = solve_model(cm.build_dual(inst))
    assert dual.status is SolveStatus.OPTIMAL
    assert dual.objective == pytest.approx(solve_lp_primal(inst, deadline=NEVER).value, rel=1e-6)


def test_release_dates_in_lp_and_dual():
    inst = generate("tiny", 4, arrivals=True)
    assert any(c.arrival > 0 for c in inst.cojobs)
    lp = solve_lp_primal(inst, deadline=NEVER).value
    assert solve_model(cm.build_dual(inst)).objective == pytest.approx(lp, rel=1e-6)
    assert lp <= brute.best_sequencing(inst) + 1e-6


def test_separation_finds_violated_prefix_and_fig3_is_tight(data):
    inst = load_instance(data / "cojob_network" / "fig3.json")
    # without cuts the LP only knows the chains: S = (2, 4) and (4, 8)
    values = {(0, 0): 2.0, (0, 1): 4.0, (1, 0): 4.0, (1, 1): 8.0}
    cuts = cm.separate(inst, values)
    assert cuts and all(p in (0, 1) for p, _ in cuts)
    res = solve_lp_primal(inst, deadline=NEVER)
    assert res.value == pytest.approx(26.0)                        # LP* = OPT = 26 (spec A.1)
    assert res.rounds >= 2


def test_counterexample_lp_value(data):
    inst = load_instance(data / "cojob_network" / "theorem2_counterexample.json")
    assert solve_lp_primal(inst, deadline=NEVER).value == pytest.approx(29.48, rel=1e-9)
