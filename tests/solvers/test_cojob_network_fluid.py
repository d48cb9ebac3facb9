"""The order LP of a completion order and the order enumeration bound (issue 19,
:mod:`optsched.solvers.cojob_network.fluid` and :func:`.bounds.enumeration_bound`): every order LP
schedule passes verify at most at the LP's value, the relaxed LP is below it and below every proven
optimum, the enumeration lists exactly the orders brute force finds, and the bound it gives sees
the port coupling Model F misses while staying below the optimum."""

from __future__ import annotations

import dataclasses
import itertools
import time

import numpy as np
import pytest

from optsched import generate, solve, verify
from optsched.deadline import Deadline
from optsched.problems.cojob_network import Cojob, Instance, Job
from optsched.result import SolveStatus
from optsched.solvers.cojob_network import bounds, fluid
from optsched.solvers.cojob_network.search import improve
from optsched.tolerance import at_least, at_most

FAMILY = "cojob_network"
NEVER = Deadline(None)


def _arrived(inst: Instance) -> Instance:
    """``inst`` with cojob ``g`` arriving at ``3 g + 0.5``."""
    return dataclasses.replace(inst, cojobs=tuple(
        dataclasses.replace(c, arrival=3.0 * g + 0.5) for g, c in enumerate(inst.cojobs)))


def _orders(inst: Instance):
    """Every completion order of the stages that keeps the chains (brute force)."""
    for perm in itertools.permutations(inst.stages):
        where = {a: i for i, a in enumerate(perm)}
        if all(where[g, k - 1] < where[g, k] for g, k in perm if k):
            yield perm


def _f_cost(inst: Instance, order) -> float:
    """Model F's cost of a completion order, written out independently of the enumeration:
    ``S`` non-decreasing, at least the heaviest port prefix and the chain, less the arrivals."""
    prefix, ends, total, last = np.zeros(inst.n_ports), {}, 0.0, 0.0
    for g, k in order:
        load = np.asarray(inst.loads[g, k], dtype=float)
        prefix = prefix + load
        before = ends[g, k - 1] if k else inst.cojobs[g].arrival
        last = ends[g, k] = max(last, float(prefix.max()), before + float(load.max()))
        total += last - inst.cojobs[g].arrival
    return total


@pytest.mark.parametrize("preset,seed", [("tiny", s) for s in range(4)] + [("small", 0), ("small", 1)])
@pytest.mark.parametrize("arrivals", [False, True])
def test_order_lp_schedule_passes_verify_at_its_value(preset, seed, arrivals):
    inst = generate(FAMILY, preset, seed)
    inst = _arrived(inst) if arrivals else inst
    floor = bounds.order_bound(inst, deadline=NEVER).lower_bound
    for order in itertools.islice(_orders(inst), 6):
        sol = fluid.order_lp(inst, order)
        value = verify(inst, fluid.to_schedule(inst, sol))
        assert at_most(value, sol.value)      # a stage may end before its interval does
        assert at_least(value, floor)
        assert at_most(fluid.bound_lp(inst, order), sol.value)


def test_a_lone_stage_meets_its_bottleneck():
    """One stage alone: the order LP sends every flow at its bottleneck pace (3 iterations of a
    job with 1 and 2 bytes on two ports take 6), and the relaxed LP cannot go below it either
    (the chain bound)."""
    inst = Instance(machines=2, cojobs=(Cojob(0.0, (3,), (Job(1, ((0, 1, 1.0), (1, 0, 2.0))),)),))
    sol = fluid.order_lp(inst, ((0, 0),))
    assert verify(inst, fluid.to_schedule(inst, sol)) == pytest.approx(6.0)
    assert fluid.bound_lp(inst, ((0, 0),)) == pytest.approx(6.0)


@pytest.mark.parametrize("seed", range(6))
def test_relaxed_lp_of_every_order_is_below_the_proven_optimum(seed):
    """min over all orders of the relaxed LP <= OPT (proven by exact), and each relaxed LP is at
    least its order's Model F cost (it keeps the chains and the prefixes)."""
    inst = generate(FAMILY, "tiny", seed)
    opt = solve(inst, "exact", time_limit=30)
    assert opt.status is SolveStatus.OPTIMAL
    values = [fluid.bound_lp(inst, order) for order in _orders(inst)]
    assert at_most(min(values), opt.objective)
    assert all(at_least(v, _f_cost(inst, o)) for v, o in zip(values, _orders(inst)))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("arrivals", [False, True])
def test_enumeration_lists_exactly_the_orders_below_the_limit(seed, arrivals):
    inst = generate(FAMILY, "small", seed, cojobs=(3, 3))
    inst = _arrived(inst) if arrivals else inst
    brute = sorted((_f_cost(inst, o), o) for o in _orders(inst))
    costs = sorted({round(c, 6) for c, _ in brute})
    limit = (costs[len(costs) // 3] + costs[len(costs) // 3 + 1]) / 2      # away from any tie
    found = bounds.order_costs_below(inst, limit, NEVER)
    assert [o for _, o in found] == [o for c, o in brute if c < limit]
    assert [c for c, _ in found] == pytest.approx([c for c, _ in brute if c < limit])


def _triangle(iterations: int = 50) -> Instance:
    """Three one-stage cojobs, pairwise sharing one port (in0 for A and B, out1 for A and C,
    out2 for B and C), each port load 1: Model F's order A, B, C costs 1 + 2 + 2 = 5, but B
    cannot use out2 while A holds in0, so with ports moving together the optimum is about 6."""
    size = 1.0 / iterations
    a = Job(1, ((0, 1, size),))
    b = Job(1, ((0, 2, size),))
    c = Job(1, ((3, 1, size), (4, 2, size)))
    return Instance(machines=5, cojobs=tuple(Cojob(0.0, (iterations,), (job,)) for job in (a, b, c)))


def test_enumeration_sees_the_port_coupling_model_f_misses():
    inst = _triangle()
    out = bounds.order_bound(inst, deadline=Deadline.after(60))
    assert out.info["model_f"] == pytest.approx(5.0)
    upper = min(fluid.order_lp(inst, o).value for o in _orders(inst))
    assert upper == pytest.approx(6.0)
    assert 5.6 < out.lower_bound <= upper      # the relaxed LP gives up at most an iteration each
    assert out.info["enumeration"]["stopped"].startswith("converged")


def test_enumeration_bound_stops_at_its_deadline_with_a_valid_bound():
    inst = generate(FAMILY, "paper", 0)
    info: dict = {}
    began = time.perf_counter()
    value, _ = bounds.enumeration_bound(inst, 30_000.0, deadline=Deadline.after(2.0), info=info)
    assert time.perf_counter() - began < 2.0 + 3.0
    assert 30_000.0 <= value <= 39_212.6           # below a verified schedule (the order LP's)
    assert info["enumeration"]["stopped"] == "deadline"


def test_improve_takes_the_order_lp_schedule_and_stops_at_its_goal():
    inst = generate(FAMILY, "small", 2)
    start = solve(inst, "baraat_fifo")
    out = improve(inst, start.schedule, deadline=Deadline.after(5.0))
    value = verify(inst, out.schedule)
    assert at_most(value, start.objective) and out.info["fluid_lps"] > 0
    if out.info.get("source") == "fluid_lp":
        assert out.schedule.policy == "fluid_lp" and value == out.info["value"]
    met = improve(inst, start.schedule, deadline=Deadline.after(60.0), goal=start.objective)
    assert "fluid_lps" not in met.info


def test_compute_gaps_give_no_order_lp():
    inst = generate(FAMILY, "tiny", 0)
    gapped = dataclasses.replace(inst, cojobs=tuple(
        dataclasses.replace(c, jobs=tuple(dataclasses.replace(j, compute=0.5) for j in c.jobs))
        for c in inst.cojobs))
    assert fluid.order_lp(gapped, tuple(gapped.stages)) is None
    assert fluid.bound_lp(gapped, tuple(gapped.stages)) is not None    # gaps relaxed: still a bound


@pytest.mark.slow
def test_paper_seed1_enumeration_lifts_the_bound_above_model_f():
    """Paper seed 1: F* = 40,616; the 869 orders F cannot rule out below 1.0036 F* all have a
    relaxed LP above 42,800, so 240 s give a bound of at least 1.003 F*, still below the order
    LP search's schedule (42,800.6)."""
    inst = generate(FAMILY, "paper", 1)
    info: dict = {}
    value, least = bounds.enumeration_bound(inst, 40_616.0, deadline=Deadline.after(240.0),
                                            info=info)
    assert value >= 1.003 * 40_616.0
    upper, _ = fluid.search(inst, [least], deadline=Deadline.after(30.0))
    assert upper is not None and value <= verify(inst, fluid.to_schedule(inst, upper))
