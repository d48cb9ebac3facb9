"""hetero_gpu algorithms: Hare's Algorithm 1, its theorem, and the errata instances; the Hare
paper's baselines (solvers/hetero_gpu/baselines.py; digest §6.4): hand-computed cases, properties
on random instances, paper scale."""

from __future__ import annotations


import numpy as np
import pytest

from optsched import generate, load_instance, solve
from optsched.deadline import NEVER, Deadline
from optsched.problems.hetero_gpu import Instance, Job, completion_times, verify
from optsched.result import SolveStatus
from optsched.solvers.hetero_gpu.algorithm import HareParams
from optsched.solvers.hetero_gpu import baselines
from optsched.solvers.hetero_gpu.baselines import (
    SchedHomoParams,
    SrtfParams,
    allox_slots,
    gang_round,
    gavel_fifo,
    sched_allox,
    sched_homo,
    srtf,
)
from optsched.solvers.hetero_gpu.algorithm import list_schedule

from tests.conftest import DATA
from tests.timing import cpu_time

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
    from optsched.solvers.hetero_gpu.algorithm import hare
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
    from optsched.solvers.hetero_gpu.algorithm import hare
    from optsched.solvers.hetero_gpu.bounds import lower_bound, rl_bound
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


@pytest.mark.slow
def test_exact_too_big_to_build_returns_the_hare_schedule():
    """Model building counts against the deadline: a model that cannot be built in the time left
    is not built; exact returns Hare's schedule (time_limit) and the completion bound."""
    inst = generate("hetero_gpu", "paper", 0, n_jobs=12, n_gpus=8)  # ~700 s to build
    res = solve(inst, "exact", time_limit=30.0)
    assert res.objective < float("inf")
    # issue 19: the model is not built (info["not_built"]) and solve goes on with certify
    assert res.info["not_built"].startswith("size cap: Hare_Sched has ~") and res.info["certified"]
    assert res.lower_bound <= res.objective
    assert res.objective <= solve(inst, "hare").objective  # never worse than Hare on the LP


# == the Hare paper's baselines (formerly test_hetero_gpu_baselines.py) ==========================

BASELINES = (gavel_fifo, srtf, sched_homo, sched_allox)
PARAMS = {srtf: SrtfParams, sched_homo: SchedHomoParams}


def call(func, inst, *, seed=0, deadline=NEVER, **kw):
    """Run a baseline as the registry does: its params (``kw`` names their fields), a deadline."""
    if func in PARAMS:
        return func(inst, PARAMS[func](**kw), deadline=deadline, seed=seed)
    assert not kw
    return func(inst, deadline=deadline, seed=seed)


def job(arrival, tc, ts=None, *, rounds=1, k=1, weight=1.0) -> Job:
    tc = tuple(float(t) for t in tc)
    ts = tuple(float(t) for t in ts) if ts is not None else (0.0,) * len(tc)
    return Job(float(arrival), float(weight), rounds, k, tc, ts)


def instance(n_gpus: int, *jobs: Job) -> Instance:
    return Instance(gpus=tuple(f"g{m}" for m in range(n_gpus)), jobs=tuple(jobs))


def starts(outcome) -> dict[tuple[int, int, int], tuple[int, float]]:
    """(job, round, task) -> (gpu, start)."""
    return {t.key: (t.gpu, t.start) for t in outcome.schedule.runs}


def run(func, inst, **kw):
    out = call(func, inst, **kw)
    assert out.status is SolveStatus.FEASIBLE
    return out, verify(inst, out.schedule), completion_times(inst, out.schedule)


# -- hand-computed cases --------------------------------------------------------------------------

HOL = instance(2, job(0, (4, 4)), job(1, (1, 1), k=2), job(2, (1, 1)))
"""Job 0 holds g0 on [0,4); job 1 needs both GPUs; job 2 needs one and g1 is idle from t=2."""


def test_gavel_fifo_head_of_line_blocking():
    out, obj, c = run(gavel_fifo, HOL)
    s = starts(out)
    assert s[0, 0, 0] == (0, 0.0)
    assert s[1, 0, 0][1] == s[1, 0, 1][1] == 4.0  # waits for both GPUs
    assert s[2, 0, 0][1] == 5.0  # blocked behind job 1 though g1 idles on [0, 5)
    assert c == [4.0, 5.0, 6.0] and obj == 15.0


def test_sched_homo_backfills_where_fifo_blocks():
    out, obj, c = run(sched_homo, HOL, gpu_choice="index")
    assert starts(out)[2, 0, 0] == (1, 2.0)  # backfilled on idle g1
    assert c == [4.0, 5.0, 3.0] and obj == 12.0


def test_gavel_fifo_takes_the_fastest_gpus_and_gang_rounds():
    # T^c + T^s = (2, 4, 3): the gang gets g0 and g2; rho = max(2, 3) = 3; g0 idles 1 per round.
    inst = instance(3, job(0, (1, 3, 1), (1, 1, 2), rounds=2, k=2))
    out, obj, c = run(gavel_fifo, inst)
    s = starts(out)
    assert {s[0, 0, 0][0], s[0, 0, 1][0]} == {0, 2}
    assert s[0, 1, 0][1] == s[0, 1, 1][1] == 3.0
    assert c == [6.0]


def test_gang_waves_when_tasks_exceed_gpus():
    # K=3 on 2 GPUs: tasks 0,1 at offset 0 on (g0, g1); task 2 on g0 at offset max T^c = 2.
    inst = instance(2, job(0, (1, 2), (1, 1), rounds=2, k=3))
    slots, rho = gang_round(inst, 0, [0, 1])
    assert slots == [(0, 0, 0.0), (1, 1, 0.0), (2, 0, 2.0)] and rho == 4.0
    for func in BASELINES:
        run(func, inst)  # verify passes
    assert run(gavel_fifo, inst)[2] == [8.0]


def test_srtf_preempts_at_a_round_boundary():
    # Job 0: 3 rounds of 2 on the only GPU; job 1 (remaining 1 < 6) arrives mid-round at t=1.
    inst = instance(1, job(0, (2,), rounds=3), job(1, (1,)))
    out, obj, c = run(srtf, inst)
    s = starts(out)
    assert [s[0, r, 0][1] for r in range(3)] == [0.0, 3.0, 5.0]  # suspended at its boundary t=2
    assert s[1, 0, 0][1] == 2.0  # the running round is never cut
    assert c == [7.0, 3.0] and out.info["preemptions"] == 1


def test_srtf_weighted_keeps_the_heavy_job():
    inst = instance(1, job(0, (2,), rounds=3, weight=10), job(1, (1,)))
    _, _, c = run(srtf, inst, weighted=True)  # rem/w: 6/10 < 1
    assert c == [6.0, 7.0]


def test_srtf_reserves_gpus_for_a_shorter_gang_job():
    # g0 and g1 run long 1-GPU jobs with staggered rounds; the short 2-GPU job 2 arrives at 0.5 and
    # claims both: g0 is released at 2 and kept idle until g1 is released at 3 (no starvation).
    inst = instance(2, job(0, (2, 2), rounds=5), job(0, (3, 3), rounds=5), job(0.5, (1, 1), k=2))
    out, _, c = run(srtf, inst)
    s = starts(out)
    assert s[2, 0, 0][1] == s[2, 0, 1][1] == 3.0 and c[2] == 4.0
    assert s[0, 1, 0][1] == 4.0  # job 0 (rem 8 < 12) resumes first, on its own g0
    assert out.info["preemptions"] == 2


def test_sched_homo_wspt_order():
    # Both arrive at 0 on one GPU: job 1 has w/p = 3/2 > 1/4.
    inst = instance(1, job(0, (4,)), job(0, (2,), weight=3))
    out, obj, c = run(sched_homo, inst)
    assert c == [6.0, 2.0] and obj == 12.0


def test_sched_homo_is_heterogeneity_oblivious():
    # g0 is 4x slower; with gpu_choice="index" the lone job still takes g0.
    inst = instance(2, job(0, (4, 1)))
    _, _, c = run(sched_homo, inst, gpu_choice="index")
    assert c == [4.0]
    assert run(gavel_fifo, inst)[2] == [1.0]


def test_sched_homo_random_choice_uses_the_seed():
    inst = instance(8, *[job(0, tuple(range(1, 9)), k=2) for _ in range(3)])
    picks = {tuple(sorted(t.gpu for t in call(sched_homo, inst, seed=s).schedule.runs)) for s in range(6)}
    assert len(picks) > 1


def test_sched_allox_back_to_back_rounds():
    # K=2, 2 rounds on one GPU: tasks at 0,1 | sync to 3 | tasks at 3,4 | sync to 6.
    inst = instance(1, job(0, (1,), (1,), rounds=2, k=2))
    out, obj, c = run(sched_allox, inst)
    s = starts(out)
    assert [s[0, r, k][1] for r in range(2) for k in range(2)] == [0.0, 1.0, 3.0, 4.0]
    assert c == [6.0]


def test_sched_allox_matching_waits_for_the_fast_gpu():
    # Both on g0 (SPT): 2·1 + 2 = 4 beats every use of the slow g1 (>= 5); so g1 stays idle.
    inst = instance(2, job(0, (1, 3)), job(0, (2, 6)))
    out, obj, c = run(sched_allox, inst)
    assert {t.gpu for t in out.schedule.runs} == {0}
    assert c == [1.0, 3.0] and obj == 4.0


def test_sched_allox_counts_backlog():
    # At t=1, g0 is busy until 10 (backlog 9): job 1 takes the slower but idle g1 (cost 4 < 9 + 1).
    inst = instance(2, job(0, (10, 40)), job(1, (1, 4)))
    _, _, c = run(sched_allox, inst)
    assert c == [10.0, 5.0]


def slot_cost(proc, backlog, slots):
    return sum(q * proc[i, m] + backlog[m] for i, m, q in slots)


def test_allox_pruned_matching_is_optimal():
    """The pruned slot matrix gives the full matrix's optimum (ties and backlogs included)."""
    rng = np.random.default_rng(1)
    for _ in range(60):
        n_wait, n_gpus = int(rng.integers(1, 25)), int(rng.integers(1, 9))
        if rng.integers(2):
            proc = rng.integers(1, 5, (n_wait, n_gpus)).astype(float)
            backlog = rng.integers(0, 4, n_gpus) * rng.integers(0, 2, n_gpus).astype(float)
        else:
            proc = rng.uniform(0.1, 10, (n_wait, n_gpus)) * rng.uniform(0.2, 5, n_gpus)
            backlog = rng.uniform(0, 20, n_gpus) * rng.integers(0, 2, n_gpus)
        full, pruned = allox_slots(proc, backlog, prune=False), allox_slots(proc, backlog)
        assert sorted(i for i, _, _ in pruned) == list(range(n_wait))
        assert len({(m, q) for _, m, q in pruned}) == n_wait
        assert slot_cost(proc, backlog, pruned) == pytest.approx(slot_cost(proc, backlog, full))


def test_allox_pruning_does_not_change_the_schedule(monkeypatch):
    inst = paper_scale_instance(seed=3, n_jobs=60, n_gpus=8, max_rounds=4)
    monkeypatch.setattr(baselines, "PRUNE_ABOVE", 10**12)
    full = call(sched_allox, inst).schedule
    monkeypatch.setattr(baselines, "PRUNE_ABOVE", 0)
    assert call(sched_allox, inst).schedule == full


def test_no_switching_overhead_and_empty_gaps_allowed():
    # A job arriving late on an idle cluster starts exactly at its arrival in every baseline.
    inst = instance(2, job(3.5, (1, 2), (0.5, 0.5), rounds=2))
    for func in BASELINES:
        first = min(t.start for t in call(func, inst).schedule.runs)
        assert first == 3.5


# -- properties on random instances ---------------------------------------------------------------

def random_instance(rng: np.random.Generator) -> Instance:
    n_gpus = int(rng.integers(1, 5))
    integer = bool(rng.integers(2))
    jobs = []
    for _ in range(int(rng.integers(1, 7))):
        tc = rng.integers(1, 7, n_gpus) if integer else rng.uniform(0.1, 5, n_gpus)
        ts = rng.integers(0, 3, n_gpus) if integer else rng.uniform(0, 2, n_gpus) * rng.integers(2)
        arrival = float(rng.integers(0, 6)) if integer else float(rng.uniform(0, 6))
        k = int(rng.integers(1, n_gpus + 2))  # K_n > |GPUs| sometimes: gang waves
        jobs.append(Job(arrival, float(rng.integers(1, 6)), int(rng.integers(1, 4)), k,
                        tuple(map(float, tc)), tuple(map(float, ts))))
    return Instance(gpus=tuple(f"g{m}" for m in range(n_gpus)), jobs=tuple(jobs))


VARIANTS = [(gavel_fifo, {}), (srtf, {}), (srtf, {"weighted": True}),
            (srtf, {"gpu_choice": "random"}), (sched_homo, {}),
            (sched_homo, {"gpu_choice": "index"}), (sched_allox, {})]


@pytest.mark.parametrize("func,kw", VARIANTS, ids=lambda v: getattr(v, "__name__", str(v)))
def test_random_instances_verify(func, kw):
    rng = np.random.default_rng(2026)
    for seed in range(150):
        inst = random_instance(rng)
        out = call(func, inst, seed=seed, **kw)
        assert verify(inst, out.schedule) == pytest.approx(
            sum(j.weight * c for j, c in zip(inst.jobs, completion_times(inst, out.schedule))))


def test_gang_structure_on_random_instances():
    """Non-preemptive gang baselines: every round starts together on distinct GPUs, rounds are back
    to back (``s_{r+1} = s_r + rho``) and no GPU runs two jobs at once."""
    rng = np.random.default_rng(7)
    for seed in range(100):
        inst = random_instance(rng)
        for func in (gavel_fifo, sched_homo):
            by_job: dict[int, dict] = {}
            for t in call(func, inst, seed=seed).schedule.runs:
                by_job.setdefault(t.job, {}).setdefault(t.round, []).append(t)
            for n, rounds in by_job.items():
                first = sorted(rounds[0], key=lambda t: t.task)
                gpus = [t.gpu for t in first[:min(len(first), inst.n_gpus)]]  # the list A
                _, rho = gang_round(inst, n, gpus)
                r0 = min(t.start for t in rounds[0])
                for r, tasks in rounds.items():
                    assert sorted({t.gpu for t in tasks}) == sorted(gpus)
                    assert min(t.start for t in tasks) == pytest.approx(r0 + r * rho)
                    if inst.jobs[n].tasks_per_round <= inst.n_gpus:
                        assert len({t.gpu for t in tasks}) == len(tasks)
                        assert len({t.start for t in tasks}) == 1


def test_allox_one_gpu_per_job_on_random_instances():
    rng = np.random.default_rng(11)
    for _ in range(100):
        inst = random_instance(rng)
        used: dict[int, set] = {}
        for t in call(sched_allox, inst).schedule.runs:
            used.setdefault(t.job, set()).add(t.gpu)
        assert all(len(g) == 1 for g in used.values())


def test_fifo_starts_in_arrival_order():
    rng = np.random.default_rng(3)
    for _ in range(100):
        inst = random_instance(rng)
        first = {}
        for t in call(gavel_fifo, inst).schedule.runs:
            first[t.job] = min(first.get(t.job, np.inf), t.start)
        order = sorted(range(len(inst.jobs)), key=lambda n: (inst.jobs[n].arrival, n))
        assert [first[n] for n in order] == sorted(first[n] for n in order)


@pytest.mark.parametrize("func,kw", VARIANTS, ids=lambda v: getattr(v, "__name__", str(v)))
def test_deterministic(func, kw):
    rng = np.random.default_rng(5)
    for seed in range(20):
        inst = random_instance(rng)
        assert call(func, inst, seed=seed, **kw).schedule == call(func, inst, seed=seed, **kw).schedule


def test_unknown_gpu_choice_is_a_value_error():
    with pytest.raises(ValueError, match="gpu_choice"):
        SchedHomoParams(gpu_choice="fastest")
    with pytest.raises(ValueError, match="gpu_choice"):
        SrtfParams(gpu_choice="fastest")


@pytest.mark.parametrize("func", BASELINES, ids=lambda f: f.__name__)
def test_an_expired_deadline_stops_the_simulation(func):
    """Deadline (issue 10): a simulation checks it at every event; once it has expired the
    baseline returns no schedule and status time_limit, never a partial schedule."""
    expired = Deadline(0.0)  # perf_counter() >= 0 always
    out = call(func, HOL, deadline=expired)
    assert out.schedule is None and out.status is SolveStatus.TIME_LIMIT
    assert out.info["stopped"].startswith("deadline")


# -- paper scale ----------------------------------------------------------------------------------

def paper_scale_instance(seed: int = 0, n_jobs: int = 200, n_gpus: int = 160,
                         max_rounds: int = 20) -> Instance:
    """A paper-sized instance (Sec. 7: 200 jobs, 160 GPUs of 4 types, K_n from {1,2,4,8}), built
    here so the test does not depend on the workload module's numbers."""
    rng = np.random.default_rng(seed)
    speed = np.repeat([1.0, 1.3, 2.5, 7.0], n_gpus // 4)
    jobs, t = [], 0.0
    for _ in range(n_jobs):
        base = rng.uniform(0.5, 30)
        tc = tuple(float(x) for x in base / speed * rng.uniform(1, 1.1, n_gpus))
        ts = tuple(float(x) for x in base / 20 * rng.uniform(1, 1.1, n_gpus))
        k = int(rng.choice([1, 2, 4, 8], p=[0.7, 0.1, 0.15, 0.05]))
        rounds = int(rng.integers(max_rounds // 2, max_rounds + 1))
        jobs.append(Job(t, float(rng.integers(1, 6)), rounds, k, tc, ts))
        t += float(rng.exponential(2.0))
    return Instance(gpus=tuple(f"t{s}" for s in speed), jobs=tuple(jobs))


@pytest.fixture(scope="module", params=["own", "preset"])
def paper_instance(request) -> Instance:
    if request.param == "own":
        return paper_scale_instance()
    from optsched.workloads.hetero_gpu import generate
    return generate("paper", seed=0)  # 200 jobs, 160 GPUs (high mix), ~7.5k tasks


@pytest.mark.parametrize("func", BASELINES, ids=lambda f: f.__name__)
def test_paper_scale_is_fast_and_feasible(func, paper_instance):
    t0 = cpu_time()
    out = call(func, paper_instance)
    assert cpu_time() - t0 < 10.0
    verify(paper_instance, out.schedule)
