"""cojob_network Model E (issue 14 item 4): the event-indexed MILP of (O) against the former exact
(best simulated chain order meeting F*) and the enumerative oracle, with release dates and Queyranne
cuts, on Fig. 3 (OPT = 26); its start from a verified schedule (proof (i)) and the warm start
reaching HiGHS; its size; a flow lost in the solver tolerance is still extracted."""

from __future__ import annotations


import pytest
from hypothesis import HealthCheck, given, settings

from optsched.io import load_instance
from optsched.models import cojob_network as cm
from optsched.result import SolveStatus
from optsched.solvers.highs import solve_model
from optsched.workloads.cojob_network import generate

from tests.solvers import brute_cojob_network as brute


def _solve_event(inst, cuts=()):
    """Model E with the horizon of the grouper schedule (proof (i): nothing better is cut off),
    its report and its extracted, verified schedule's cost."""
    from optsched.problems.cojob_network import verify
    from optsched.registry import solve

    upper = solve(inst, "grouper").objective
    horizon = (upper + max(c.arrival for c in inst.cojobs)) * (1 + 1e-6) + 1e-6
    model = cm.build_event_milp(inst, horizon, cuts)
    rep = solve_model(model)
    assert rep.status is SolveStatus.OPTIMAL
    return rep, verify(inst, cm.extract_event_schedule(inst, model)), upper


def _old_exact_proves(inst) -> bool:
    """The former exact's proof: the best simulated chain order meets F* (Model F = enumeration)."""
    from optsched.tolerance import at_most
    return at_most(brute.best_simulated(inst)[0], brute.best_sequencing(inst))


def test_old_exact_proves_at_least_20_of_the_tiny_seeds_used_below():
    assert sum(_old_exact_proves(generate("tiny", s)) for s in range(24)) >= 20


@pytest.mark.parametrize("seed", range(24))
def test_event_milp_agrees_with_the_old_exact_and_its_schedule_verifies(seed):
    """E* is below every simulated order (BF) and above F*; where the old exact proved, they agree;
    the extracted schedule verifies at E* (no cuts here: the model alone is exact)."""
    from optsched.tolerance import close
    inst = generate("tiny", seed)
    rep, value, upper = _solve_event(inst)
    bf_value, _ = brute.best_simulated(inst)
    assert close(value, rep.objective)
    assert brute.best_sequencing(inst) - 1e-6 <= rep.objective <= min(bf_value, upper) + 1e-6
    if _old_exact_proves(inst):
        assert close(rep.objective, bf_value)


@pytest.mark.parametrize("seed", range(6))
def test_event_milp_with_release_dates(seed):
    """Arrival markers (9): E* with and without Queyranne cuts agree, lie between F* and the best
    simulated order, and the schedule (first stages start at r_g) verifies."""
    from optsched.tolerance import close
    inst = generate("tiny", seed, arrivals=True)
    rep, value, _ = _solve_event(inst)
    cut, _, _ = _solve_event(inst, cm.all_cuts(inst))
    assert close(value, rep.objective) and close(cut.objective, rep.objective)
    assert brute.best_sequencing(inst) - 1e-6 <= rep.objective
    assert rep.objective <= brute.best_simulated(inst)[0] + 1e-6


def test_event_milp_fig3_optimum(data):
    """Spec A.1: OPT = 26 on the paper's Fig. 3 (single link, successive halving)."""
    inst = load_instance(data / "cojob_network" / "fig3.json")
    rep, value, _ = _solve_event(inst)
    assert rep.objective == pytest.approx(26.0, rel=1e-6) and value == pytest.approx(26.0, rel=1e-6)


@pytest.mark.parametrize("seed", [1, 4, 7])
def test_event_start_from_a_schedule_is_feasible(seed):
    """Proof (i): the completion ranks of a verified schedule, with the continuous variables left to
    an LP, give a solution no worse than the schedule; its extraction verifies."""
    from optsched.problems.cojob_network import verify
    from optsched.registry import solve
    inst = generate("tiny", seed)
    res = solve(inst, "fair_share")
    model = cm.build_event_milp(inst, res.objective * (1 + 1e-6) + 1e-6)
    cm.set_event_start(inst, model, res.schedule)
    for (u, e), var in model.y.items():
        if 0 < e < model.index.n_events:
            var.fix()
    rep = solve_model(model)
    assert rep.status is SolveStatus.OPTIMAL and rep.objective <= res.objective + 1e-6
    assert verify(inst, cm.extract_event_schedule(inst, model)) <= rep.objective + 1e-6


def test_event_milp_size_matches_the_model():
    inst = generate("tiny", 7, arrivals=True)
    size = cm.event_milp_size(inst)
    idx = cm.EventIndex(inst)
    assert size["events"] == idx.n_events and size["flows"] == len(idx.flows)
    assert idx.n_events == len(idx.items) == sum(
        c.iterations[j.stages - 1] for c in inst.cojobs for j in c.jobs) + len(
        {c.arrival for c in inst.cojobs if c.arrival > 0})


@pytest.mark.parametrize("seed", [4, 7])
def test_event_warm_start_reaches_highs(seed):
    """A start set on Model E reaches HiGHS and is kept before any search (a fixed variable inside
    a constraint made solve_model drop a start silently; the model uses bounds instead). The
    start: a verified schedule's completion order (set_event_start) completed by the LP with y
    fixed, handed over whole, so HiGHS needs no sub-MIP within the 1e-6 s limit."""
    from optsched.registry import solve
    inst = generate("tiny", seed)
    res = solve(inst, "fair_share")
    model = cm.build_event_milp(inst, res.objective * (1 + 1e-6) + 1e-6)
    cm.set_event_start(inst, model, res.schedule)
    free = [v for (u, e), v in model.y.items() if 0 < e < model.index.n_events]
    for var in free:
        var.fix()
    lp = solve_model(model)
    for var in free:
        var.unfix()
    rep = solve_model(model, warm_start=True, time_limit=1e-6)
    assert rep.has_solution and rep.objective == pytest.approx(lp.objective, rel=1e-6)
    assert lp.objective <= res.objective + 1e-6


def test_event_milp_extracts_a_flow_lost_in_the_solver_tolerance():
    """Found by the robust property: flows of 1e-6 bytes came back with no bytes in any interval
    (solver noise) and the extraction raised; they are now sent in their own completion interval."""
    from optsched.problems.cojob_network import Cojob, Instance, Job
    from optsched.registry import solve

    tiny = ((0, 0, 1e-06), (1, 0, 0.5))
    inst = Instance(machines=2, cojobs=(
        Cojob(2.0, (1, 3, 4), (Job(3, ((0, 1, 0.001), (1, 0, 0.5), (1, 1, 0.5)), 0.0),
                              Job(3, tiny + ((1, 1, 3.0),), 0.0))),
        Cojob(7.5, (3,), (Job(1, tiny + ((1, 1, 1.0),), 0.0),))), capacity=1.0)
    res = solve(inst, "exact", time_limit=20)
    assert res.status.value == "optimal" and res.objective == pytest.approx(49.5)


# ----------------------------------------------------------------------------------------------------
# Model I: item-level ordering MILP (issue 19 item 6)


def _model_i(inst, limit=60.0):
    """Model I's report and stage order as exact solves it (no start)."""
    from optsched.deadline import Deadline
    from optsched.solvers.cojob_network import exact as cs_exact

    info: dict = {}
    rep, order = cs_exact._model_i(inst, cs_exact._Incumbent(), Deadline.after(limit), 0, info)
    assert rep is not None and rep.status is SolveStatus.OPTIMAL, info
    return rep, order


@pytest.mark.parametrize("seed", range(12))
def test_item_order_between_f_star_and_the_proven_optimum(seed):
    """F* <= I* (a stage completes after all its items) and I* <= OPT(O) (Model I relaxes only the
    coupling of a flow's two ports), against the enumerative F* and Model E's optimum."""
    from optsched.tolerance import at_most

    inst = generate("tiny", seed)
    rep, order = _model_i(inst)
    _, opt, _ = _solve_event(inst, cm.all_cuts(inst))
    assert brute.best_sequencing(inst) <= rep.objective + 1e-6
    assert at_most(rep.objective, opt), (rep.objective, opt)
    assert sorted(order) == sorted(inst.stages)
    assert all(order.index((g, k - 1)) < order.index((g, k)) for g, k in order if k)


def test_item_order_closes_a_gap_model_f_leaves():
    """tiny with 6 cojobs, seed 2: F* = 210 but every schedule costs 211 (Model E did not prove it
    in 60 s); Model I proves 211, which the order of Model F simulates to."""
    from optsched.simulate.flows import StageOrder, simulate, sum_sct

    inst = generate("tiny", 2, cojobs=(6, 6))
    assert brute_f_star_milp(inst) == pytest.approx(210.0)
    rep, order = _model_i(inst, limit=600.0)  # ~10 CPU-s; HiGHS counts wall time, so room for load
    assert rep.objective == pytest.approx(211.0)
    assert sum_sct(inst, simulate(inst, StageOrder(order))) >= 211.0 - 1e-6


def brute_f_star_milp(inst) -> float:
    """F* by Model F (the enumeration has too many orders at 12 stages)."""
    rep = solve_model(cm.build_ordering_milp(inst))
    assert rep.status is SolveStatus.OPTIMAL
    return rep.objective


@pytest.mark.parametrize("seed", range(6))
def test_item_order_start_is_feasible_and_below_the_schedule(seed):
    """The start from a verified schedule's completion order meets every row (within 1e-9) and
    costs at most the schedule (its C are the least the rows allow, at most the true times)."""
    import numpy as np

    from optsched.registry import solve

    inst = generate("tiny", seed, cojobs=(4, 4), arrivals=True)
    res = solve(inst, "baraat_fifo")
    model = cm.ItemOrder(inst, floor=0.0)
    x = model.start(model.ranks_of(inst, res.schedule))
    lo, hi, starts, cols, vals = model.rows()
    ends = list(starts[1:]) + [len(cols)]
    act = np.array([float(np.dot(vals[a:b], x[cols[a:b]])) for a, b in zip(starts, ends)])
    assert np.all(act >= lo - 1e-9) and np.all(act <= hi + 1e-9)
    cost, clo, chi = model.columns()
    assert np.all(x >= clo - 1e-9) and np.all(x <= chi + 1e-9)
    arrivals = sum(c.arrival * c.n_stages for c in inst.cojobs)
    assert float(cost @ x) - arrivals <= res.objective + 1e-6


def test_item_order_size_is_an_upper_estimate():
    inst = generate("tiny", 0, cojobs=(8, 8))
    size = cm.ItemOrder.size(inst)
    model = cm.ItemOrder(inst)
    assert size["items"] == len(model.items)
    assert len(model.rows()[3]) <= size["terms"]
    assert len(model.col) <= size["binaries"]


def _instances():
    from tests.models.test_cojob_network_metamorphic import tiny_instances
    return tiny_instances()


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(inst=_instances())
def test_item_order_below_every_schedule_off_distribution(inst):
    """I* <= OPT(O) on drawn instances (one machine, capacities != 1, killed jobs, arrivals,
    compute gaps): below every heuristic's verified cost and, without compute gaps, Model E's."""
    from optsched.registry import solve
    from optsched.tolerance import at_most

    rep, _ = _model_i(inst)
    best = min(solve(inst, m).objective for m in ("grouper", "baraat", "fair_share"))
    assert at_most(rep.objective, best), (rep.objective, best)
    if cm.event_milp_applies(inst):
        _, opt, _ = _solve_event(inst, cm.all_cuts(inst))
        assert at_most(rep.objective, opt), (rep.objective, opt)


def test_event_schedule_never_starts_before_an_arrival():
    """Regression (a hypothesis case of the test above, CI of stop 29): HiGHS met an event's
    ``t_e >= r_g`` only to its tolerance, and the extracted schedule sent 5e-7 of a flow's 0.25
    bytes before its cojob arrived at 1.0; verify rejected it. Each interval now starts no
    earlier than the arrival of any cojob sending in it."""
    from optsched.problems.cojob_network import Cojob, Instance, Job

    inst = Instance(machines=1, cojobs=(
        Cojob(1.0, (1,), (Job(1, ((0, 0, 1.0),)), Job(1, ((0, 0, 0.25),)))),
        Cojob(2.5, (1,), (Job(1, ((0, 0, 1.0),)),)),
        Cojob(0.0, (2,), (Job(1, ((0, 0, 1.0),)), Job(1, ((0, 0, 0.9999995),))))))
    _, value, _ = _solve_event(inst, cm.all_cuts(inst))
    assert value == pytest.approx(8.5, abs=1e-5)
