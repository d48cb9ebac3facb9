"""hetero_gpu problem data and the independent checker (constraints (4)–(8) of Hare_Sched); schedule
validation (issue 15, item 1): non-finite starts, non-integer and negative indices, booleans — from
JSON and from Python — never reach verify unvalidated (foreign schedules and format_version: true,
for every family: tests/test_contract.py); the broken-schedule corpus; a schedule-mutation property
(verify rejects or recomputes, never crashes)."""

import dataclasses
import json
import math

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from optsched import InfeasibleSchedule, InvalidInstance, load_instance
from optsched.io import instance_from_dict, load_schedule, schedule_from_dict
from optsched.problems.hetero_gpu import Instance, Job, Schedule, TaskRun, completion_times, verify
from optsched.registry import solve
from optsched.tolerance import slack
from optsched.workloads.hetero_gpu import generate

from tests.conftest import DATA
from tests.solvers.brute_hetero_gpu import brute_force

BROKEN = DATA / "hetero_gpu" / "broken" / "schedules"
ERRORS = (InvalidInstance, InfeasibleSchedule)


@pytest.fixture
def inst():
    return load_instance(DATA / "hetero_gpu" / "worked_example.json")


def feasible():
    """The digest §4.3 schedule of Algorithm 1 (objective 22)."""
    return Schedule((TaskRun(0, 0, 0, 0, 0.0), TaskRun(0, 0, 1, 1, 0.0), TaskRun(1, 0, 0, 0, 2.0),
                     TaskRun(0, 1, 0, 1, 5.0), TaskRun(0, 1, 1, 0, 5.0)))


def with_run(schedule, index, **change):
    runs = list(schedule.runs)
    runs[index] = dataclasses.replace(runs[index], **change)
    return Schedule(tuple(runs))


def test_worked_example_objective(inst):
    assert verify(inst, feasible()) == 22.0  # C_J1 = 10, C_J2 = 6 (weight 2)


@pytest.mark.parametrize("index, change, equation", [
    (2, dict(start=0.5), "(4)"),               # job 1 arrives at 1
    (0, dict(gpu=5), "(5)"),                   # no such GPU
    (3, dict(start=4.0), "(7)"),               # round 1 before round 0's barrier at 5
    (4, dict(gpu=1), "(8)"),                   # overlaps task (0,1,0) on gpu 1
    (2, dict(start=1.5), "(8)"),               # job 1 during (0,0,0)'s compute on gpu 0
])
def test_verify_names_the_violated_equation(inst, index, change, equation):
    with pytest.raises(InfeasibleSchedule, match=rf"^\{equation[:-1]}\)"):
        verify(inst, with_run(feasible(), index, **change))


def test_sync_may_overlap_next_task_on_same_gpu(inst):
    # (0,0,0) computes on gpu 0 during [0,2) and syncs during [2,3); job 1 may start at 2 (line 16)
    assert verify(inst, feasible()) == 22.0
    with pytest.raises(InfeasibleSchedule, match=r"^\(8\)"):
        verify(inst, with_run(feasible(), 2, start=1.999))


def test_missing_and_duplicate_tasks(inst):
    runs = feasible().runs
    with pytest.raises(InfeasibleSchedule, match=r"\(5\) task \(1, 0, 0\) is not scheduled"):
        verify(inst, Schedule(runs[:2] + runs[3:]))
    with pytest.raises(InfeasibleSchedule, match="more than once"):
        verify(inst, Schedule(runs + runs[:1]))
    with pytest.raises(InfeasibleSchedule, match="does not exist"):
        verify(inst, Schedule(runs + (TaskRun(0, 2, 0, 0, 50.0),)))


def test_json_round_trip(inst):
    assert instance_from_dict(inst.to_dict()) == inst
    s = feasible()
    assert schedule_from_dict(s.to_dict()) == s


def test_alpha_and_readonly_arrays(inst):
    assert inst.alpha == 2.0  # T^c ratio 4/2 and 6/3; T^s constant counts as 1
    with pytest.raises(ValueError):
        inst.tc[0, 0] = 9.0


def test_python_built_instances_are_validated():
    with pytest.raises(InvalidInstance, match=r"jobs\[0\]\.train_time: must have 2 entries"):
        Instance(("a", "b"), (Job(0, 1, 1, 1, (1.0,), (0.0, 0.0)),))


def test_bad_schedule_json_names_the_entry():
    with pytest.raises(InvalidInstance, match=r"schedule\.tasks\[0\]\[3\]"):
        schedule_from_dict({"family": "hetero_gpu", "format_version": 1, "tasks": [[0, 0, 0, "x", 1.0]]})


@pytest.mark.parametrize("scale", [1.0, 1e6])
def test_verify_tolerance_is_the_shared_relative_policy(scale):
    """(4), (7), (8) accept a start up to tolerance.slack(t) before t and reject anything earlier."""
    t = 3.0 * scale
    arrival = Instance(("g",), (Job(t, 1.0, 1, 1, (scale,), (0.0,)),))
    barrier = Instance(("g",), (Job(0.0, 1.0, 2, 1, (2.0 * scale,), (scale,)),))
    overlap = Instance(("g",), (Job(0.0, 1.0, 1, 1, (t,), (0.0,)), Job(0.0, 1.0, 1, 1, (scale,), (0.0,))))
    cases = [(arrival, lambda x: (TaskRun(0, 0, 0, 0, x),), "(4)"),
             (barrier, lambda x: (TaskRun(0, 0, 0, 0, 0.0), TaskRun(0, 1, 0, 0, x)), "(7)"),
             (overlap, lambda x: (TaskRun(0, 0, 0, 0, 0.0), TaskRun(1, 0, 0, 0, x)), "(8)")]
    for inst, runs, equation in cases:
        verify(inst, Schedule(runs(t - 0.9 * slack(t))))
        with pytest.raises(InfeasibleSchedule, match=rf"^\{equation[:-1]}\)"):
            verify(inst, Schedule(runs(t - 1.1 * slack(t))))


# -- issue 10: validation on construction, JSON reading separate ---------------------------------

@pytest.mark.parametrize("build, message", [
    (lambda: Instance((), (Job(0, 1, 1, 1, (), ()),)), r"^instance\.gpus: must not be empty"),
    (lambda: Instance(("a", 5), ()), r"^instance\.gpus\[1\]: must be a string"),
    (lambda: Instance(("a",), ()), r"^instance\.jobs: must not be empty"),
    (lambda: Instance(("a",), ((0, 1),)), r"^instance\.jobs\[0\]: must be a Job"),
    (lambda: Instance(("a",), (Job(-1, 1, 1, 1, (1.0,), (0.0,)),)), r"^instance\.jobs\[0\]\.arrival: must be >= 0"),
    (lambda: Instance(("a",), (Job(0, 0, 1, 1, (1.0,), (0.0,)),)), r"^instance\.jobs\[0\]\.weight: must be > 0"),
    (lambda: Instance(("a",), (Job(0, 1, 0, 1, (1.0,), (0.0,)),)), r"^instance\.jobs\[0\]\.rounds: must be >= 1"),
    (lambda: Instance(("a",), (Job(0, 1, 1, 1.5, (1.0,), (0.0,)),)), r"^instance\.jobs\[0\]\.tasks_per_round: must be an integer"),
    (lambda: Instance(("a",), (Job(0, 1, 1, 1, (0.0,), (0.0,)),)), r"^instance\.jobs\[0\]\.train_time\[0\]: must be > 0"),
    (lambda: Instance(("a",), (Job(0, 1, 1, 1, (1.0,), (-1.0,)),)), r"^instance\.jobs\[0\]\.sync_time\[0\]: must be >= 0"),
    (lambda: Instance(("a",), (Job(0, 1, 1, 1, (1.0,), (0.0,)),), name=3), r"^instance\.name: must be a string"),
])
def test_constructor_names_the_field(build, message):
    with pytest.raises(InvalidInstance, match=message):
        build()


def test_lists_become_tuples_and_json_builds_through_the_constructor(inst):
    built = Instance(list(inst.gpus), [Job(j.arrival, j.weight, j.rounds, j.tasks_per_round,
                                           list(j.train_time), list(j.sync_time)) for j in inst.jobs])
    assert built == inst and isinstance(built.jobs, tuple) and isinstance(built.jobs[0].train_time, tuple)
    assert hash(built.jobs[0]) == hash(inst.jobs[0])
    data = inst.to_dict()
    data["jobs"][0]["weight"] = -2
    with pytest.raises(InvalidInstance, match=r"^instance\.jobs\[0\]\.weight: must be > 0, got -2"):
        instance_from_dict(data)


@pytest.mark.parametrize("runs, message", [
    ((TaskRun(0, 0, 0, -1, 0.0),), r"^schedule\.tasks\[0\]\[3\]: must be >= 0"),
    ((TaskRun(0, 0, 0, 0, "x"),), r"^schedule\.tasks\[0\]\[4\]: start must be a number"),
    (((0, 0, 0, 0, 0.0),), r"^schedule\.tasks\[0\]: must be a TaskRun"),
])
def test_schedule_constructor_checks_shape_and_types(runs, message):
    with pytest.raises(InvalidInstance, match=message):
        Schedule(runs)
    assert Schedule(list(feasible().runs)) == feasible()


# -- tolerance decides acceptance, never the objective (issue 13 class) --------------------------

def _raw_objective(inst, schedule):
    """sum_n w_n C_n from the schedule's own starts (the formula verify used before the re-timing)."""
    done = [0.0] * len(inst.jobs)
    for t in schedule.runs:
        job = inst.jobs[t.job]
        done[t.job] = max(done[t.job], t.start + job.train_time[t.gpu] + job.sync_time[t.gpu])
    return float(sum(j.weight * c for j, c in zip(inst.jobs, done)))


def _early(inst, schedule, fractions, chain=True):
    """``schedule`` with every start moved earlier within the tolerance, in start order: by
    ``fraction * slack(floor')``, where ``floor'`` is the start's bound under (4), (7), (8) in the
    already moved schedule, plus (``chain``) as much as that bound moved, so the slack adds up along
    rounds and along each GPU. Without ``chain``: ``x - fraction * slack(x)``, independently."""
    finish, gpu_end, runs = {}, {}, []
    for t, u in zip(sorted(schedule.runs, key=lambda t: (t.start, t.key)), fractions):
        job = inst.jobs[t.job]
        bounds = [(job.arrival, job.arrival)] + [finish[t.job, t.round - 1, k] for k in
                                                 range(job.tasks_per_round) if t.round > 0]
        bounds += [gpu_end[t.gpu]] if t.gpu in gpu_end else []
        floor, moved = max(b[0] for b in bounds), max(b[1] for b in bounds)
        x = t.start - (floor - moved) - u * slack(moved) if chain else t.start - u * slack(t.start)
        runs.append(dataclasses.replace(t, start=x))
        tc, ts = job.train_time[t.gpu], job.sync_time[t.gpu]
        finish[t.key] = (t.start + tc + ts, x + tc + ts)
        gpu_end[t.gpu] = (t.start + tc, x + tc)
    return Schedule(tuple(runs))


@pytest.mark.parametrize("scale", [1.0, 1e6])
def test_chain_started_early_within_tolerance_verifies_at_the_exact_optimum(scale):
    """One GPU, one job of 3 rounds x 3 tasks (arrival 1, T^c 2, T^s 1, weight 2): OPT = 2 * 22.
    Every task starts 0.9 slack before its bound, (4), (7), (8) accept each start, and the early
    starts add up along the chain, so the schedule's own times give less than OPT; verify charges
    the exactly feasible re-timing, which is OPT to the bit."""
    inst = Instance(("g",), (Job(scale, 2.0, 3, 3, (2 * scale,), (scale,)),))
    hare = solve(inst, "hare").schedule
    early = _early(inst, hare, [0.9] * len(inst.tasks))
    assert all(e.start < h.start for e, h in zip(early.runs, sorted(hare.runs, key=lambda t: t.start)))
    opt = 44.0 * scale
    assert _raw_objective(inst, early) < opt - 3 * slack(opt)  # the tolerance, added up 9 times
    assert verify(inst, early) == opt
    assert completion_times(inst, early) == [22.0 * scale]
    assert brute_force(inst) == opt
    exact = solve(inst, "exact", time_limit=60)
    assert exact.status.value == "optimal" and exact.objective == pytest.approx(opt, rel=1e-9)


def test_round_started_before_its_previous_round_is_retimed_after_it():
    """T^c = 2e-7 < slack(10) = 1e-5: (7) accepts round 1 at 10 - 5e-6, before round 0 at 10
    (and (8) accepts them on one GPU in that order). The re-timing runs round 1 after round 0 (its
    order key lifted to round 0's), so C = 10 + 4e-7, the brute-force optimum, not 10 + 2e-7."""
    inst = Instance(("g",), (Job(10.0, 1.0, 2, 1, (2e-7,), (0.0,)),))
    sched = Schedule((TaskRun(0, 0, 0, 0, 10.0), TaskRun(0, 1, 0, 0, 10.0 - 5e-6)))
    assert _raw_objective(inst, sched) == 10.0 + 2e-7
    assert verify(inst, sched) == brute_force(inst) == 10.0 + 2e-7 + 2e-7


SHIFT_SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                          suppress_health_check=list(HealthCheck))


@SHIFT_SETTINGS
@given(st.integers(0, 10**6), st.booleans(), st.data())
def test_shifting_hare_earlier_within_tolerance_never_lowers_the_objective(seed, chain, data):
    """Hare's list schedule moved earlier within the tolerance (independently or along chains),
    when verify still accepts it, never verifies below the unshifted schedule."""
    inst = generate("tiny", seed)
    base = solve(inst, "hare").schedule
    fractions = data.draw(st.lists(st.floats(0.0, 0.999), min_size=len(inst.tasks),
                                   max_size=len(inst.tasks)))
    shifted = _early(inst, base, fractions, chain)
    try:
        value = verify(inst, shifted)
    except InfeasibleSchedule:
        assume(False)
    event(f"own times below: {_raw_objective(inst, shifted) < verify(inst, base)}")
    assert value >= verify(inst, base) * (1 - 1e-9)


@pytest.mark.parametrize("method", ["hare", "hare_eft", "hare_est", "gavel_fifo", "srtf",
                                    "sched_homo", "sched_allox", "exact"])
@pytest.mark.parametrize("seed", range(3))
def test_exactly_feasible_schedules_keep_their_objective_to_the_bit(method, seed):
    """The re-timing of an exactly feasible schedule is the schedule itself: verify returns the
    objective of its own start times, to the bit, and completion_times agrees."""
    inst = generate("tiny", seed, max_tasks=6)
    sched = solve(inst, method, time_limit=60).schedule
    value = verify(inst, sched)
    assert value == _raw_objective(inst, sched)
    assert value == float(sum(j.weight * c for j, c in zip(inst.jobs, completion_times(inst, sched))))


# -- issue 15, item 1: schedule validation (formerly test_hetero_gpu_hardening.py) ---------------

@pytest.fixture(scope="module")
def worked_example():
    """The worked example loaded once per module (``inst`` is per test), for ``good``."""
    return load_instance(DATA / "hetero_gpu" / "worked_example.json")


@pytest.fixture(scope="module")
def good(worked_example):
    return solve(worked_example, "exact").schedule


@pytest.mark.parametrize("name, expect", sorted(json.loads((BROKEN / "expected.json").read_text()).items()))
def test_broken_schedule_files_name_the_field(inst, name, expect):
    with pytest.raises(ERRORS) as err:
        verify(inst, load_schedule(BROKEN / name, "hetero_gpu"))
    assert expect in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, 10 ** 400])
def test_non_finite_start_is_rejected_in_python_and_from_dicts(good, value):
    runs = list(good.runs)
    runs[2] = dataclasses.replace(runs[2], start=value)
    with pytest.raises(InvalidInstance, match=r"schedule\.tasks\[2\]\[4\]: start must be finite"):
        Schedule(tuple(runs))
    data = good.to_dict()
    data["tasks"][2][4] = value
    with pytest.raises(InvalidInstance, match=r"schedule\.tasks\[2\]\[4\]: start must be finite"):
        schedule_from_dict(data)


def test_nan_start_no_longer_hides_a_gpu_overlap():
    """The reproduction of issue 15: two tasks on one GPU; NaN compared false, so (4), (7), (8)
    were skipped and the objective came out 'valid'. Patched past the constructor, verify
    re-validates."""
    inst = Instance(("V100",), (Job(0, 1, 1, 2, (5.0,), (0.0,)),))
    sched = Schedule((TaskRun(0, 0, 0, 0, 0.0), TaskRun(0, 0, 1, 0, 0.0)))
    with pytest.raises(InfeasibleSchedule, match=r"\(8\)"):
        verify(inst, sched)
    object.__setattr__(sched.runs[1], "start", math.nan)
    with pytest.raises(InvalidInstance, match=r"schedule\.tasks\[1\]\[4\]: start must be finite, got nan"):
        verify(inst, sched)


@pytest.mark.parametrize("field, value, message", [
    ("job", -1, r"tasks\[0\]\[0\]: must be >= 0"), ("gpu", True, r"tasks\[0\]\[3\]: must be an integer"),
    ("round", 1.5, r"tasks\[0\]\[1\]: must be an integer"), ("start", "0", r"start must be a number")])
def test_python_built_indices_are_checked(good, field, value, message):
    with pytest.raises(InvalidInstance, match=message):
        Schedule((dataclasses.replace(good.runs[0], **{field: value}),) + good.runs[1:])


NUMBERS = st.one_of(st.integers(-3, 12), st.floats(allow_nan=True, allow_infinity=True),
                    st.booleans(), st.just(10 ** 400), st.text(max_size=2))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_schedule_mutations_are_rejected_or_recomputed(inst, good, data):
    """Mutate a valid schedule's numbers and indices (as JSON rows): loading + verify either
    raises a named error or returns the objective recomputed from the mutated schedule."""
    rows = good.to_dict()["tasks"]
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(rows) - 1))
        k = data.draw(st.integers(0, 4))
        rows[i][k] = data.draw(NUMBERS)
    if data.draw(st.booleans()):
        rows.append(list(rows[data.draw(st.integers(0, len(rows) - 1))]))
    try:
        sched = schedule_from_dict({"family": "hetero_gpu", "format_version": 1, "tasks": rows})
        value = verify(inst, sched)
    except ERRORS:
        return
    assert math.isfinite(value)
    assert value == pytest.approx(sum(j.weight * c for j, c in zip(inst.jobs, completion_times(inst, sched))))
