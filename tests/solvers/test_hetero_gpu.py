"""hetero_gpu algorithms: Hare's Algorithm 1, its theorem, and the errata instances."""

import pytest

from optsched import generate, load_instance, solve
from optsched.problems.hetero_gpu import verify
from optsched.solvers.hetero_gpu import HareParams
from optsched.solvers.hetero_gpu.hare import list_schedule

from tests.conftest import DATA

WORKED_XHAT = {(0, 0, 0): 0, (0, 0, 1): 0, (0, 1, 0): 5, (0, 1, 1): 5, (1, 0, 0): 1}


def load(name):
    return load_instance(DATA / "hetero_gpu" / f"{name}.json")


@pytest.mark.parametrize("tie", ["fastest", "index"])
def test_algorithm1_worked_example(tie):
    """Digest §4.3: with the given x̂, Algorithm 1 gives 22 under either tie rule."""
    inst = load("worked_example")
    schedule = list_schedule(inst, WORKED_XHAT, HareParams(tie=tie))
    assert verify(inst, schedule) == 22.0
    starts = {r.key: (r.gpu, r.start) for r in schedule.runs}
    assert starts[1, 0, 0] == (0, 2.0) and starts[0, 1, 0] == (1, 5.0)


def test_earliest_finish_variant_is_not_uniformly_better():
    inst = load("worked_example")
    assert verify(inst, list_schedule(inst, WORKED_XHAT, HareParams(gpu_choice="earliest_finish"))) == 26.0


def test_initial_availability_relaxed_vs_strict():
    """Digest §7.4-4 (Fig. 4): φ0 = (1, 1, 3); a 3-task job with T^c = 1, T^s = 0 ends at 3, not 4."""
    from optsched.problems.hetero_gpu import Instance, Job
    inst = Instance(("a", "b", "c"), (Job(0, 1, 1, 3, (1.0, 1.0, 1.0), (0.0, 0.0, 0.0)),))
    schedule = list_schedule(inst, {(0, 0, k): 0.0 for k in range(3)}, phi0=(1, 1, 3))
    assert max(r.start + 1 for r in schedule.runs) == 3.0


def test_theorem4_fails_with_the_papers_relaxation():
    """Errata: one GPU, α = 1, so Theorem 4 claims ratio <= 3; the paper's RL gives 8129 / 2141."""
    inst = load("theorem4_counterexample")
    opt, hare = solve(inst, "exact"), solve(inst, "hare")
    assert opt.status.value == "optimal" and opt.objective == pytest.approx(2141)
    assert hare.info["rl_objective"] == pytest.approx(2114.27, abs=1e-6)
    assert hare.objective == pytest.approx(8129)
    assert hare.guarantee == 3.0 and hare.objective / opt.objective > hare.guarantee
    assert hare.info["lemma2_violations"] > 0  # the six B's load 6 > 2 H_B = 1 on the one GPU
    subsets = solve(inst, "hare_subsets")
    assert subsets.objective == pytest.approx(2141)  # (9S) repairs it here
    assert subsets.info["lemma2_violations"] == 0


def test_lemma2_counterexample_values():
    inst = load("lemma2_counterexample")
    assert solve(inst, "exact").objective == pytest.approx(281)
    assert solve(inst, "rl_bound").lower_bound == pytest.approx(211.5)
    assert solve(inst, "hare").guarantee == 8.0


@pytest.mark.parametrize("preset, seed", [("tiny", s) for s in range(20)]
                         + [pytest.param("small", s, marks=pytest.mark.slow) for s in (0, 2, 7, 9)])
def test_hare_within_theorem(preset, seed):
    """LB <= OPT <= hare, and hare/OPT against α(2+α) (holds on these; see the errata for a failure)."""
    inst = generate("hetero_gpu", preset, seed)
    opt = solve(inst, "exact", time_limit=60)
    assert opt.status.value == "optimal"
    for name in ("hare", "hare_subsets"):
        res = solve(inst, name)
        assert opt.objective <= res.objective + 1e-6
        assert res.objective <= res.guarantee * opt.objective + 1e-6
    assert solve(inst, "lower_bound").lower_bound <= opt.objective + 1e-6


def test_time_limit_is_a_status():
    inst = generate("hetero_gpu", "small", 18, max_tasks=14, n_jobs=(5, 5))
    res = solve(inst, "exact", time_limit=0.5)
    assert res.status.value == "time_limit"
    assert res.lower_bound is None or res.lower_bound <= res.objective


def test_paper_scale_hare_runs_and_verifies():
    inst = generate("hetero_gpu", "paper", 0, n_jobs=60)
    res = solve(inst, "hare")
    assert res.info["relaxation"] == "aggregate_lp" and res.objective < float("inf")


def test_same_seed_same_schedule():
    inst = generate("hetero_gpu", "tiny", 7)
    assert solve(inst, "hare", seed=3).schedule == solve(inst, "hare", seed=3).schedule


# -- issue 10: one function, parameters, deadline --------------------------------------------------

def test_registered_readings_are_one_function_with_params():
    from optsched.registry import get_family
    from optsched.solvers.hetero_gpu import hare
    spec = get_family("hetero_gpu")
    params = {m.name: m.params for m in spec.methods if m.func is hare}
    assert params == {"hare": HareParams(), "hare_subsets": HareParams(relaxation="subsets"),
                      "hare_eft": HareParams(gpu_choice="earliest_finish", tie="index"),
                      "hare_est": HareParams(gpu_choice="earliest_start", tie="fastest"),
                      "hare_est_index": HareParams(gpu_choice="earliest_start", tie="index")}
    res = solve(generate("hetero_gpu", "tiny", 1), "hare_eft")
    assert res.info["params"] == {"relaxation": "paper_full", "gpu_choice": "earliest_finish",
                                  "tie": "index", "rl_max_tasks": 30}


def test_line12_readings_differ_where_the_gpu_would_idle():
    """φ = (0, 1), the task is ready at 2 with T^c = (5, 1): argmin φ takes GPU 0 (as printed);
    earliest start ties at 2 and takes the fastest, GPU 1, or GPU 0 with index ties; earliest
    finish takes GPU 1."""
    from optsched.problems.hetero_gpu import Instance, Job
    inst = Instance(("slow", "fast"), (Job(2.0, 1.0, 1, 1, (5.0, 1.0), (0.0, 0.0)),))
    xhat = {(0, 0, 0): 2.0}

    def gpu(**kw):
        return list_schedule(inst, xhat, HareParams(**kw), phi0=(0.0, 1.0)).runs[0].gpu

    assert gpu() == 0
    assert gpu(gpu_choice="earliest_start") == 1
    assert gpu(gpu_choice="earliest_start", tie="index") == 0
    assert gpu(gpu_choice="earliest_finish") == 1


@pytest.mark.parametrize("field, value", [("relaxation", "ti_lp"), ("gpu_choice", "fastest"),
                                          ("tie", "random")])
def test_unknown_params_are_value_errors(field, value):
    with pytest.raises(ValueError, match=field):
        HareParams(**{field: value})


def test_expired_deadline_hare_still_schedules_and_bounds_stay_valid():
    """A deadline that has passed: hare list-schedules on the arrivals (status time_limit), the
    bounds fall back to the completion bound sum w_n LBC_n (valid, time_limit), nothing raises."""
    from optsched.deadline import Deadline
    from optsched.models.hetero_gpu import completion_lower_bounds
    from optsched.solvers.hetero_gpu import hare, lower_bound, rl_bound
    inst = generate("hetero_gpu", "tiny", 4)
    expired = Deadline(0.0)
    out = hare(inst, HareParams(), deadline=expired)
    assert out.status.value == "time_limit" and "stopped" in out.info
    verify(inst, out.schedule)
    trivial = sum(j.weight * c for j, c in zip(inst.jobs, completion_lower_bounds(inst)))
    opt = solve(inst, "exact").objective
    for func in (lower_bound, rl_bound):
        res = func(inst, deadline=expired)
        assert res.status.value == "time_limit" and res.lower_bound <= opt + 1e-9
    assert lower_bound(inst, deadline=expired).lower_bound == pytest.approx(trivial)


def test_exact_too_big_to_build_returns_the_hare_schedule():
    """Model building counts against the deadline: a model that cannot be built in the time left
    is not built; exact returns Hare's schedule (time_limit) and the completion bound."""
    inst = generate("hetero_gpu", "paper", 0, n_jobs=12, n_gpus=8)  # ~700 s to build
    res = solve(inst, "exact", time_limit=30.0)
    assert res.status.value == "time_limit" and res.objective < float("inf")
    assert res.info["stopped"].startswith("Hare_Sched not built: size guard")
    assert res.lower_bound <= res.objective
    assert res.objective == solve(inst, "hare").objective  # the fallback is Hare on the LP
