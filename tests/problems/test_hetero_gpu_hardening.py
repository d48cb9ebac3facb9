"""hetero_gpu schedule validation (issue 15, item 1): non-finite starts, non-integer and negative
indices, booleans, foreign schedules — from JSON and from Python — never reach verify unvalidated;
the broken-schedule corpus; a schedule-mutation property (verify rejects or recomputes, never
crashes)."""

import dataclasses
import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optsched import InfeasibleSchedule, InvalidInstance, generate, load_instance, solve
from optsched.io import load_schedule, schedule_from_dict
from optsched.problems.hetero_gpu import Instance, Job, Schedule, TaskRun, completion_times, verify

from tests.conftest import DATA

BROKEN = DATA / "hetero_gpu" / "broken" / "schedules"
ERRORS = (InvalidInstance, InfeasibleSchedule)


@pytest.fixture(scope="module")
def inst():
    return load_instance(DATA / "hetero_gpu" / "worked_example.json")


@pytest.fixture(scope="module")
def good(inst):
    return solve(inst, "exact").schedule


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


def test_verify_rejects_a_schedule_of_another_family(inst):
    other = solve(generate("ring_contention", "tiny", 0), "exact", time_limit=30).schedule
    with pytest.raises(InfeasibleSchedule, match="must be a hetero_gpu Schedule"):
        verify(inst, other)
    with pytest.raises(InfeasibleSchedule):
        verify(inst, None)


def test_instance_format_version_true_is_rejected(inst):
    data = inst.to_dict()
    data["format_version"] = True
    with pytest.raises(InvalidInstance, match="format_version: must be an integer"):
        Instance.from_dict(data)


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
