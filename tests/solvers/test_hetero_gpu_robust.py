"""hetero_gpu robustness (issue 15): every registered method runs to a status on every valid
instance, degenerate ones included (one GPU, one job, every GPU of one type, weights 1..5000, zero
sync time, late arrivals, times at the MAX_TIME_RANGE resolution limit); the issue's failures as
regression tests (rounds = 1e9, 1e308 values and starts, integers beyond the float range, foreign
objects); and a schedule-mutation property on solver schedules built in Python (verify rejects the
mutated schedule or recomputes its objective; it never crashes)."""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

from optsched.cli import main
from optsched.errors import InfeasibleSchedule, InvalidInstance
from optsched.problems.hetero_gpu import (
    MAX_START, MAX_TASKS, MAX_TIME_RANGE, MAX_VALUE, Instance, Job, Schedule, TaskRun,
    completion_times, serial_horizon, verify,
)
from optsched.registry import solve
from optsched.result import SolveStatus
from optsched.workloads.hetero_gpu import generate

from tests.robust import every_method
from tests.timing import cpu_time

FAMILY = "hetero_gpu"
TIMES = st.sampled_from([0.25, 1.0, 2.0, 3.0, 7.5])
SYNCS = st.sampled_from([0.0, 0.0, 0.5, 1.0, 4.0])
ARRIVALS = st.sampled_from([0.0, 0.0, 1.0, 6.0, 50.0, 1e4])
WEIGHTS = st.sampled_from([1.0, 2.0, 5.0, 5000.0])


@st.composite
def instances(draw):
    """Small valid instances (<= 8 tasks), degenerate shapes drawn often."""
    n_gpus = draw(st.sampled_from([1, 1, 2, 3]))
    one_type = draw(st.booleans())
    speed = [1.0] * n_gpus if one_type else [draw(st.sampled_from([1.0, 2.0, 3.0]))
                                             for _ in range(n_gpus)]
    jobs, tasks = [], 0
    for _ in range(draw(st.sampled_from([1, 1, 2, 3]))):
        rounds, k = draw(st.integers(1, 2)), draw(st.integers(1, 3))
        if tasks + rounds * k > 8:
            break
        tasks += rounds * k
        base = draw(TIMES)
        sync = [draw(SYNCS)] * n_gpus if draw(st.booleans()) else [draw(SYNCS) for _ in speed]
        jobs.append(Job(draw(ARRIVALS), draw(WEIGHTS), rounds, k,
                        tuple(base / s for s in speed), tuple(sync)))
    return Instance(tuple("V100" if one_type else f"speed{s:g}" for s in speed), tuple(jobs))


@pytest.fixture(scope="module", autouse=True)
def _warm():
    """Import Pyomo, HiGHS and OR-Tools before timing (the first exact solves load them)."""
    inst = generate("tiny", 0)
    solve(inst, "exact", time_limit=30)
    solve(inst, "exact_cp", time_limit=30)


def _run_all(inst: Instance) -> dict:
    """Every method on ``inst`` with time_limit=2: a status, a finite objective for every schedule,
    each call within a few seconds (wall time is inflated up to 5x on a loaded 2-core machine)."""
    out = {}
    for m, res in every_method(FAMILY, inst):
        if res.schedule is not None:
            assert verify(inst, res.schedule) == pytest.approx(res.objective), m.name
        if m.kind in ("algorithm", "baseline"):
            assert res.status in (SolveStatus.FEASIBLE, SolveStatus.TIME_LIMIT), m.name
            assert res.schedule is not None, m.name
        out[m.name] = res
    return out


def _bounds_hold(results: dict) -> None:
    """Every bound method's lower bound <= every schedule's objective (relative 1e-6)."""
    best = min(r.objective for r in results.values() if r.schedule is not None)
    for name, res in results.items():
        if res.lower_bound is not None and math.isfinite(res.lower_bound):
            assert res.lower_bound <= best + 1e-6 * max(1.0, best), (name, res.lower_bound, best)


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck),
          phases=[Phase.explicit, Phase.generate])
@given(instances())
def test_every_method_runs_to_a_status(inst):
    _bounds_hold(_run_all(inst))


DEGENERATE = {
    "one_gpu_one_job_one_task": Instance(("V100",), (Job(0.0, 1.0, 1, 1, (1.0,), (0.0,)),)),
    "one_gpu_more_tasks_than_gpus": Instance(("K80",), (Job(0.0, 5000.0, 2, 3, (2.0,), (1.0,)),
                                                        Job(3.0, 1.0, 1, 2, (0.5,), (0.0,)))),
    "all_gpus_one_type_zero_sync": Instance(("T4",) * 3, tuple(
        Job(float(a), 1.0 + a, 2, 2, (1.0,) * 3, (0.0,) * 3) for a in range(2))),
    "late_arrivals": Instance(("V100", "K80"), (Job(1e6, 3.0, 1, 2, (1.0, 4.0), (0.5, 0.5)),
                                                 Job(2e6, 1.0, 2, 1, (2.0, 1.0), (0.0, 1.0)))),
    "weights_1_to_5000": Instance(("a", "b"), (Job(0.0, 1.0, 1, 1, (1.0, 2.0), (0.0, 0.0)),
                                               Job(0.0, 5000.0, 1, 1, (1.0, 2.0), (0.0, 0.0)))),
}


@pytest.mark.parametrize("name", sorted(DEGENERATE))
def test_degenerate_instances_run_to_a_status(name):
    _bounds_hold(_run_all(DEGENERATE[name]))


def test_resolution_limit_instance_runs_to_a_status():
    """An instance right at the MAX_TIME_RANGE limit (serial horizon = 1e8 x shortest T^c): every
    method still reports a status (the big-M models meet their worst coefficient range here)."""
    late = Job(0.0, 1.0, 1, 1, (1.0, 2.0), (0.0, 0.0))
    probe = Instance(("a", "b"), (late, Job(0.0, 2.0, 1, 1, (3.0, 1.0), (1.0, 0.0))))
    arrival = MAX_TIME_RANGE * 1.0 - serial_horizon(probe.jobs)
    inst = dataclasses.replace(probe, jobs=(dataclasses.replace(late, arrival=arrival),
                                            probe.jobs[1]))
    assert serial_horizon(inst.jobs) == pytest.approx(MAX_TIME_RANGE)
    _run_all(inst)


# ----------------------------------------------------------------------------------------------------
# The concrete failures


def _tiny_doc() -> dict:
    return generate("tiny", 0).to_dict()


@pytest.mark.parametrize("field, value, message", [
    ("rounds", 10**9, r"instance.jobs\[0\].rounds: must be <= 200000 \(MAX_TASKS\)"),
    ("tasks_per_round", 10**15, r"instance.jobs\[0\].tasks_per_round: must be <= 200000"),
    ("rounds", 1e300, r"instance.jobs\[0\].rounds: must be <= 200000 \(MAX_TASKS\), got 100000\.\.\."),
    ("weight", 1e308, r"instance.jobs\[0\].weight: must be <= 1e\+12 \(MAX_VALUE\)"),
    ("arrival", 10**400, r"instance.jobs\[0\].arrival: must be <= 1e\+12 \(MAX_VALUE\), got 100000\.\.\."),
    ("arrival", math.inf, r"instance.jobs\[0\].arrival: must be finite"),
    ("weight", math.nan, r"instance.jobs\[0\].weight: must be finite"),
    ("rounds", True, r"instance.jobs\[0\].rounds: must be an integer, got True"),
    ("weight", 1e-300, r"instance.jobs\[0\].weight: must be >= 1e-12 \(MIN_POSITIVE\)"),
])
def test_huge_or_invalid_values_are_refused_at_load(field, value, message):
    """Issue 15: rounds = 1e9 made even verify enumerate tasks; 1e308 values overflowed; integers
    beyond float range raised OverflowError. Refused at once, from a dict and from Python."""
    doc = _tiny_doc()
    doc["jobs"][0][field] = value
    start = time.process_time()
    with pytest.raises(InvalidInstance, match=message):
        Instance.from_dict(doc)
    inst = generate("tiny", 0)
    with pytest.raises(InvalidInstance, match=message):
        dataclasses.replace(inst, jobs=(dataclasses.replace(inst.jobs[0], **{field: value}),)
                            + inst.jobs[1:])
    assert time.process_time() - start < 1


def test_total_tasks_and_sizes_are_limited():
    job = Job(0.0, 1.0, MAX_TASKS // 2, 2, (1.0,), (0.0,))
    with pytest.raises(InvalidInstance, match=r"instance.jobs: 400000 tasks .* > 200000 \(MAX_TASKS\)"):
        Instance(("a",), (job, job))
    with pytest.raises(InvalidInstance, match=r"instance.gpus: at most 10000 GPUs \(MAX_GPUS\)"):
        Instance(("a",) * 10_001, (Job(0.0, 1.0, 1, 1, (1.0,) * 10_001, (0.0,) * 10_001),))
    with pytest.raises(InvalidInstance, match=r"instance.jobs: at most 10000 jobs \(MAX_JOBS\)"):
        Instance(("a",), (Job(0.0, 1.0, 1, 1, (1.0,), (0.0,)),) * 10_001)


def test_time_range_is_limited_and_names_the_shortest_time():
    """A 1e-9 s task next to 1e9 s of work: verify's tolerance (relative 1e-6 of the time) would
    exceed the task itself; exact crashed inside Pyomo's HiGHS interface on such ranges."""
    jobs = (Job(1e9, 1.0, 2, 1, (1.0, 2.0), (1.0, 1.0)), Job(0.0, 1.0, 1, 1, (3.0, 1e-9), (0.0, 0.0)))
    with pytest.raises(InvalidInstance, match=r"instance.jobs\[1\].train_time\[1\]: .*MAX_TIME_RANGE"):
        Instance(("a", "b"), jobs)


def test_python_and_numpy_numbers_are_normalised():
    np = pytest.importorskip("numpy")
    built = Instance(["a"], [Job(np.float64(0), np.int64(2), np.int64(1), 1, [np.float32(1.0)], [0])])
    assert built == Instance.from_dict(built.to_dict())
    assert type(built.jobs[0].rounds) is int and type(built.jobs[0].weight) is float
    sched = Schedule([TaskRun(np.int64(0), 0, 0, np.int32(0), np.float64(0.0))])
    assert verify(built, sched) == 2.0 and type(sched.runs[0].job) is int


@pytest.mark.parametrize("start, message", [
    (1e308, r"schedule.tasks\[0\]\[4\]: start must be <= 1e\+18 \(MAX_START\)"),
    (-1e300, r"\(MAX_START\)"),
    (1e17, r"schedule.tasks\[0\]\[4\]: start 1e\+17 is beyond this instance's time resolution"),
])
def test_huge_starts_are_an_error_never_an_infinite_objective(start, message):
    """Issue 15: '1e308 gives status feasible, objective inf'."""
    inst = Instance(("a",), (Job(0.0, 5.0, 1, 1, (1.0,), (0.0,)),))
    assert MAX_START * 5.0 * MAX_VALUE < math.inf
    with pytest.raises(InvalidInstance, match=message):
        verify(inst, Schedule((TaskRun(0, 0, 0, 0, start),)))


def test_huge_indices_are_named():
    with pytest.raises(InvalidInstance, match=r"schedule.tasks\[0\]\[1\]: must be <= 199999"):
        Schedule((TaskRun(0, 10**30, 0, 0, 0.0),))
    with pytest.raises(InvalidInstance, match=r"schedule.tasks\[0\]\[3\]: must be <= 9999"):
        Schedule.from_dict({"family": FAMILY, "format_version": 1, "tasks": [[0, 0, 0, 1e300, 0]]})


def test_verify_refuses_objects_of_another_family():
    from optsched.workloads.ring_contention import generate as ring
    inst = generate("tiny", 0)
    sched = solve(inst, "gavel_fifo").schedule
    with pytest.raises(InfeasibleSchedule, match="must be a hetero_gpu Schedule"):
        verify(inst, object())
    with pytest.raises(InvalidInstance, match="must be a hetero_gpu Instance"):
        verify(ring("tiny", 0), sched)


# ----------------------------------------------------------------------------------------------------
# Schedule mutation (Python-built): verify rejects a mutated schedule or recomputes its objective

VALUES = st.sampled_from([-1, 0, 1, 2, 3, 0.5, -0.5, 1e-9, 1e6, 1e17, 1e300, math.nan, math.inf,
                          True, 10**30, None, "1"])
METHODS = ("gavel_fifo", "hare", "srtf", "sched_allox", "exact")


def _mutate(runs: list, data) -> list:
    kind = data.draw(st.sampled_from(["shift", "value", "gpu", "swap", "drop", "dup"]))
    i = data.draw(st.integers(0, len(runs) - 1))
    t = runs[i]
    if kind == "shift":  # a feasible-looking small move: breaks (4), (7) or (8), or is harmless
        runs[i] = dataclasses.replace(t, start=t.start + data.draw(st.sampled_from(
            [-2.0, -1.0, -0.5, -1e-7, 1e-7, 0.5, 1.0, 3.0])))
    elif kind == "value":
        field = data.draw(st.sampled_from(["job", "round", "task", "gpu", "start"]))
        runs[i] = dataclasses.replace(t, **{field: data.draw(VALUES)})
    elif kind == "gpu":
        runs[i] = dataclasses.replace(t, gpu=data.draw(st.integers(0, 3)))
    elif kind == "swap":
        j = data.draw(st.integers(0, len(runs) - 1))
        runs[i], runs[j] = (dataclasses.replace(t, start=runs[j].start),
                            dataclasses.replace(runs[j], start=t.start))
    elif kind == "drop":
        runs.pop(i)
    else:
        runs.append(t)
    return runs


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(0, 5), st.sampled_from(METHODS), st.data())
def test_schedule_mutation_is_rejected_or_recomputed(seed, method, data):
    inst = generate("tiny", seed)
    runs = list(solve(inst, method, time_limit=10).schedule.runs)
    for _ in range(data.draw(st.integers(1, 2))):
        if runs:
            runs = _mutate(runs, data)
    try:
        value = verify(inst, Schedule(tuple(runs)))
    except (InvalidInstance, InfeasibleSchedule) as err:
        assert "\n" not in str(err)
        event(f"rejected: {type(err).__name__} {str(err)[:3]}")
        return
    event("accepted, objective recomputed")
    assert math.isfinite(value)
    assert value == pytest.approx(sum(j.weight * c for j, c in
                                      zip(inst.jobs, completion_times(inst, Schedule(tuple(runs))))))


# ----------------------------------------------------------------------------------------------------
# The broken corpora through the CLI: exit code 2, one line, no traceback, within a few seconds

BROKEN = Path(__file__).parents[1] / "data" / "hetero_gpu" / "broken"
EXAMPLE = BROKEN.parent / "worked_example.json"
CLI_CASES = [("solve", "rounds_1e9.json"), ("solve", "total_tasks.json"),
             ("solve", "time_range.json"), ("solve", "weight_1e308.json"),
             ("solve", "family_list.json"), ("solve", "arrival_1e20_int.json"),
             ("verify", "schedules/start_1e308.json"), ("verify", "schedules/job_1e30_int.json"),
             ("verify", "schedules/start_beyond_resolution.json"),
             ("verify", "schedules/gpu_overlap.json")]


@pytest.mark.parametrize("command, name", CLI_CASES)
def test_cli_refuses_broken_files_in_one_line(command, name, capsys):
    args = ["solve", str(BROKEN / name)] if command == "solve" else \
        ["verify", str(EXAMPLE), str(BROKEN / name)]
    start = time.process_time()
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    expected = json.loads((BROKEN / Path(name).parent / "expected.json").read_text())
    assert expected[Path(name).name] in err
    assert time.process_time() - start < 2


def test_cli_process_refuses_a_billion_rounds_at_once():
    """A real process (no in-process caches): exit 2, one line, within a few CPU seconds."""
    start = cpu_time()
    proc = subprocess.run([sys.executable, "-m", "optsched.cli", "solve",
                           str(BROKEN / "rounds_1e9.json"), "--method", "exact"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "MAX_TASKS" in proc.stderr
    assert cpu_time() - start < 20  # the child's CPU time: ~1 s, whatever the load


def test_broken_corpus_size():
    assert len(json.loads((BROKEN / "expected.json").read_text())) >= 45
    assert len(json.loads((BROKEN / "schedules" / "expected.json").read_text())) >= 30


def test_a_bound_above_a_verified_schedule_no_longer_occurs():
    """Formerly ``..._is_dropped_not_reported``, found by the property above: the big-M model's
    objective and bound on this instance (times from 1/12 to 1e4, one GPU) were 50026969.6 while a
    schedule of 50020252.9 verifies, so the registry dropped the bound and demoted "optimal". The
    cause was the objective's scaling: job 0's coefficient w_0 / s was 3.7e-8, below HiGHS's dual
    feasibility tolerance (1e-7), and C_0 sat at its deadline cap (1393.9 instead of 50.58;
    models.hetero_gpu.weight_unit). Now the big-M model proves the optimum: round 0 at 10000,
    10000.33, 10000.67, round 1 at 10002, .., C_1 = 10004, C_0 = 50 + 1/12 + 1/2 (obj. (1), (6))."""
    from optsched.problems.hetero_gpu import Instance, Job

    inst = Instance(gpus=("speed3",), jobs=(
        Job(arrival=50.0, weight=5.0, rounds=1, tasks_per_round=1, train_time=(1 / 12,),
            sync_time=(0.5,)),
        Job(arrival=10000.0, weight=5000.0, rounds=2, tasks_per_round=3, train_time=(1 / 3,),
            sync_time=(1.0,))))
    optimum = 5 * (50 + 1 / 12 + 0.5) + 5000 * 10004.0  # 50,020,252.9166..
    res = solve(inst, "exact", time_limit=10)
    assert res.info["model"] == "big_m"  # 1/12 and 1/2 have no usable common grid
    assert "bound_dropped" not in res.info and "demoted" not in res.info
    assert res.status is SolveStatus.OPTIMAL
    assert res.objective == pytest.approx(optimum, rel=1e-6, abs=0)
    assert res.lower_bound == pytest.approx(optimum, rel=1e-6, abs=0)
    assert res.info["model_objective"] == pytest.approx(optimum, rel=1e-6, abs=0)
    cp = solve(inst, "exact_cp", time_limit=10)
    assert cp.status is SolveStatus.OPTIMAL and cp.objective == pytest.approx(optimum, rel=1e-6)
