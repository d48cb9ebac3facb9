"""hetero_gpu Pyomo models against brute force and the digest's worked example."""

import pytest

from optsched import generate, load_instance, load_schedule, solve, verify
from optsched.models import hetero_gpu as hm
from optsched.problems.hetero_gpu import Instance, Job
from optsched.solvers.highs import solve_model

from tests.conftest import DATA
from tests.solvers.brute_hetero_gpu import brute_force


@pytest.mark.parametrize("seed", range(24))
def test_exact_equals_brute_force(seed):
    inst = generate("hetero_gpu", "tiny", seed, max_tasks=6)
    result = solve(inst, "exact", time_limit=60)
    assert result.status.value == "optimal"
    assert result.objective == pytest.approx(brute_force(inst), rel=1e-9)
    assert result.info["model_objective_agrees"]


def _job(arrival, weight, rounds, k, train, sync):
    return Job(float(arrival), float(weight), rounds, k, tuple(map(float, train)), tuple(map(float, sync)))


#: Hand-made instances outside the generator's distribution (issue 13): exact == brute force.
HAND_MADE = {
    "one_gpu_100x_faster": Instance(("slow", "fast"), (
        _job(0, 1, 1, 2, (100, 1), (0, 0)), _job(0, 3, 2, 1, (200, 2), (1, 1)),
        _job(1, 2, 1, 1, (50, 0.5), (0, 0)))),
    "exact_ties": Instance(("a", "a"), (  # three identical jobs on two identical GPUs
        _job(0, 1, 1, 1, (2, 2), (1, 1)), _job(0, 1, 1, 1, (2, 2), (1, 1)), _job(0, 1, 1, 1, (2, 2), (1, 1)))),
    "tolerance_edge_times": Instance(("a", "b"), (  # GPU choice decided by 1e-6 differences
        _job(0, 1, 1, 1, (1.0000005, 0.9999995), (0, 0)), _job(0, 1, 1, 2, (0.9999995, 1.0000005), (0, 0)),
        _job(0.9999995, 1, 1, 1, (1, 1), (0, 0)))),
    "tolerance_edge_barrier": Instance(("a", "b"), (  # sync 5e-7 at the barrier, arrival at 1.0000005
        _job(0, 2, 2, 1, (1, 1.0000005), (0.0000005, 0)), _job(1.0000005, 1, 1, 1, (0.9999995, 1), (0, 0.0000005)))),
    "single_gpu": Instance(("g",), (
        _job(0, 2, 2, 2, (1,), (0.5,)), _job(1, 1, 1, 1, (3,), (0,)), _job(0, 5, 1, 1, (0.25,), (0,)))),
    "minimal": Instance(("g",), (_job(0, 1, 1, 1, (1,), (0,)),)),
    "more_tasks_than_gpus": Instance(("a", "b"), (
        _job(0, 1, 1, 4, (1, 2), (0, 0)), _job(0, 3, 1, 1, (3, 1), (2, 2)))),
    "sync_dominated": Instance(("a", "b"), (  # T^s >> T^c (the paper assumes T^c >= T^s)
        _job(0, 1, 3, 1, (1, 1), (10, 0)), _job(0, 1, 1, 1, (1, 1), (0, 0)))),
    "sub_microsecond_times": Instance(("a", "b"), (
        _job(0, 1, 2, 2, (1e-7, 1e-7), (0, 0)), _job(0, 1, 1, 1, (1e-7, 2e-7), (0, 0)))),
    "huge_times_fractional_weights": Instance(("a", "b"), (
        _job(0, 0.5, 2, 1, (1e5, 3e5), (1e4, 1e4)), _job(5e4, 0.25, 1, 2, (2e5, 1e5), (0, 0)),
        _job(0, 0.75, 1, 1, (1e5, 1e5), (0, 0)))),
    "extreme_weights": Instance(("a", "b"), (
        _job(0, 1e4, 1, 1, (5, 6), (1, 1)), _job(0, 1e-3, 2, 1, (1, 1), (0, 0)), _job(0, 1, 1, 2, (2, 3), (0, 1)))),
}


@pytest.mark.parametrize("name", sorted(HAND_MADE))
def test_exact_equals_brute_force_hand_made(name):
    inst = HAND_MADE[name]
    result = solve(inst, "exact", time_limit=60)
    assert result.status.value == "optimal"
    assert result.objective == pytest.approx(brute_force(inst), rel=1e-9, abs=0)
    assert result.info["model_objective_agrees"]


@pytest.mark.parametrize("name", ["exact_scale_repro", "exact_micro_repro", "exact_infeasible_repro"])
def test_exact_in_extreme_units_is_optimal(name):
    """Issue 13. Tiny instances with every time x 1e7, x 1e-6 and x 1e9: the MILP built in raw units
    let HiGHS's absolute tolerances decide (big-M ~1e8, mip_abs_gap 1e-6): it reported "optimal" at
    6.7e8 and at 7.7e-5 (model 6.6e-5) and "infeasible", while the stored schedules verify at 5.7e8,
    7.4e-5 and 9e10. The model is now built in normalised units (models.hetero_gpu.time_unit)."""
    inst = load_instance(DATA / "hetero_gpu" / f"{name}.json")
    better = verify(inst, load_schedule(DATA / "hetero_gpu" / f"{name}_schedule.json"))
    result = solve(inst, "exact", time_limit=60)
    assert result.status.value == "optimal"
    assert result.objective == pytest.approx(better, rel=1e-9, abs=0)
    assert result.lower_bound == pytest.approx(better, rel=1e-6, abs=0)


def test_worked_example_values():
    inst = load_instance(DATA / "hetero_gpu" / "worked_example.json")
    assert solve(inst, "exact").objective == pytest.approx(22.0)      # digest §4.3: OPT = 22
    assert solve(inst, "rl_bound").lower_bound == pytest.approx(18.5)  # RL* = 18.5


def test_exact_without_upper_bound_agrees():
    inst = generate("hetero_gpu", "tiny", 3)
    m = hm.build_exact(inst)  # horizon U only, no deadlines
    rep = solve_model(m)
    assert rep.status.value == "optimal"
    assert rep.objective * m.objective_unit == pytest.approx(solve(inst, "exact").objective, rel=1e-9)


def test_deadlines_are_valid_bounds_on_optimal_completions():
    inst = generate("hetero_gpu", "small", 2)
    res = solve(inst, "exact", time_limit=60)
    from optsched.problems.hetero_gpu import completion_times
    done = completion_times(inst, res.schedule)
    for c, d in zip(done, hm.deadlines(inst, res.objective)):
        assert c <= d + 1e-6


@pytest.mark.parametrize("seed", range(8))
def test_relaxations_bound_the_optimum(seed):
    inst = generate("hetero_gpu", "tiny", seed)
    opt = solve(inst, "exact").objective
    for name in ("lower_bound", "rl_bound"):
        assert solve(inst, name).lower_bound <= opt + 1e-6


def test_aggregate_lp_cuts_are_needed_and_valid():
    """One GPU, six unit jobs at time 0: precedence alone gives sum C = 6; HSSW cuts give 21 = OPT."""
    from optsched.problems.hetero_gpu import Instance, Job
    inst = Instance(("g",), tuple(Job(0, 1, 1, 1, (1.0,), (0.0,)) for _ in range(6)))
    res = solve(inst, "lower_bound")
    assert res.lower_bound == pytest.approx(21.0, rel=1e-6)
    assert res.info["converged"] and res.info["cuts"] > 0


@pytest.mark.parametrize("seed", range(4))
def test_size_estimates_match_the_built_models(seed):
    """exact_size/rl_size (what a deadline is checked against before building) count the model."""
    import pyomo.environ as pyo
    inst = generate("hetero_gpu", "small", seed, max_k=3, max_rounds=3)
    assert hm.exact_size(inst)["pairs"] == len(hm.disjunctive_pairs(inst))
    m = hm.build_exact(inst)
    rows = sum(1 for _ in m.component_data_objects(pyo.Constraint, active=True))
    assert hm.exact_size(inst)["rows"] <= rows <= hm.exact_size(inst)["rows"] + len(inst.tasks)  # + symmetry rows
    for mode in ("paper_full", "subsets"):
        m = hm.build_rl(inst, mode)
        assert hm.rl_size(inst, mode)["rows"] == sum(1 for _ in m.component_data_objects(pyo.Constraint, active=True))
