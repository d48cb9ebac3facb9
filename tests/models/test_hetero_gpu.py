"""hetero_gpu Pyomo models against brute force and the digest's worked example."""

import pytest

from optsched import generate, load_instance, solve
from optsched.models import hetero_gpu as hm
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


def test_worked_example_values():
    inst = load_instance(DATA / "hetero_gpu" / "worked_example.json")
    assert solve(inst, "exact").objective == pytest.approx(22.0)      # digest §4.3: OPT = 22
    assert solve(inst, "rl_bound").lower_bound == pytest.approx(18.5)  # RL* = 18.5


def test_exact_without_upper_bound_agrees():
    inst = generate("hetero_gpu", "tiny", 3)
    m = hm.build_exact(inst)  # horizon U only, no deadlines
    rep = solve_model(m)
    assert rep.status.value == "optimal"
    assert rep.objective == pytest.approx(solve(inst, "exact").objective, rel=1e-9)


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
