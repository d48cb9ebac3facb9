"""hetero_gpu problem data and the independent checker (constraints (4)–(8) of Hare_Sched)."""

import dataclasses

import pytest

from optsched import InfeasibleSchedule, InvalidInstance, load_instance
from optsched.io import instance_from_dict, schedule_from_dict
from optsched.problems.hetero_gpu import Instance, Job, Schedule, TaskRun, verify
from optsched.tolerance import slack

from tests.conftest import DATA


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
