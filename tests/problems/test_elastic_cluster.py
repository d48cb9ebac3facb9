"""elastic_cluster problem layer: JSON, validation, and verify against hand-made violations."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.errors import InfeasibleSchedule, InvalidInstance
from optsched.problems.elastic_cluster import (
    Instance, Job, NodeType, Plan, Schedule, verify, verify_preemptive,
)
from optsched.workloads.elastic_cluster import generate


def toy(architecture: str = "ps") -> Instance:
    """Digest Sec. 5.2 item 7 (paper Sec. 1): one server with 3 GPUs, worker types A (1 GPU,
    v = 3 slots) and B (2 GPUs, v = 2), U = pi = 0, two unit jobs with W = 1 arriving at slot 1.
    A second resource (cpu, ample) carries the PS."""
    ps = (NodeType((0.0, 1.0), 10.0),) if architecture == "ps" else ()
    update = (0.0,)
    job = Job(arrival=1, weight=1.0, epochs=1, chunks=1, batches=1, compute=(3.0, 2.0),
              update=update, grad_size=0.0)
    return Instance(architecture, ("gpu", "cpu"), ((3.0, 10.0),),
                    (NodeType((1.0, 1.0), 1.0), NodeType((2.0, 1.0), 1.0)), ps, (job, job),
                    horizon=4)


def toy_opt(inst: Instance) -> Schedule:
    p = 0 if inst.is_ps else -1
    s = (1,) if inst.is_ps else (0,)
    return Schedule((Plan(1, 2, 1, p, 1, (1,), s), Plan(1, 3, 0, p, 1, (1,), s)))


@pytest.mark.parametrize("arch", ["ps", "allreduce"])
def test_toy_optimum_value_is_7(arch):
    inst = toy(arch)
    assert verify(inst, toy_opt(inst)) == 7.0
    p = 0 if inst.is_ps else -1
    s = (1,) if inst.is_ps else (0,)
    both_b = Schedule((Plan(1, 2, 1, p, 1, (1,), s), Plan(3, 2, 1, p, 1, (1,), s)))
    assert verify(inst, both_b) == 8.0  # sequentially on B: 3 + 5
    clash = Schedule((Plan(1, 2, 1, p, 1, (1,), s), Plan(1, 2, 1, p, 1, (1,), s)))
    with pytest.raises(InfeasibleSchedule, match=r"server 0 resource gpu slot 1: 4 > 3"):
        verify(inst, clash)


def test_schedule_json_round_trip():
    sched = toy_opt(toy())
    assert Schedule.from_dict(json.loads(json.dumps(sched.to_dict()))) == sched


def test_python_built_instances_are_validated():
    inst = toy()
    with pytest.raises(InvalidInstance, match=r"jobs\[0\].weight"):
        dataclasses.replace(inst, jobs=(dataclasses.replace(inst.jobs[0], weight=-1.0),))
    with pytest.raises(InvalidInstance, match="ps_types: must be empty"):
        dataclasses.replace(inst, architecture="allreduce")


def test_schedule_validation_names_field():
    bad = toy_opt(toy()).to_dict()
    bad["jobs"][1]["workers"] = [-1]
    with pytest.raises(InvalidInstance, match=r"schedule.jobs\[1\].workers\[0\]"):
        Schedule.from_dict(bad)


def two_server_ps() -> Instance:
    job = Job(arrival=2, weight=2.0, epochs=1, chunks=3, batches=2, compute=(0.5, 0.5),
              update=(0.1,), grad_size=0.2)
    return Instance("ps", ("gpu", "cpu"), ((2.0, 4.0), (2.0, 4.0)),
                    (NodeType((1.0, 1.0), 2.0), NodeType((2.0, 1.0), 1.0)),
                    (NodeType((0.0, 1.0), 2.0),), (job,), horizon=4)


GOOD = Plan(2, 3, 0, 0, 0, (2, 1), (1, 0))  # 3 workers, rho(q=0) = 1/(0.5+0.1+0.2): 3*3/0.8 >= 6


@pytest.mark.parametrize("plan, message", [
    (dataclasses.replace(GOOD, start=1), r"\(2j\) job 0: starts at 1 before its arrival 2"),
    (dataclasses.replace(GOOD, workers=(2, 2)), r"\(2g\) job 0: 4 workers > D_j = 3"),
    (dataclasses.replace(GOOD, colocated=1), r"\(2d\) job 0: q_j = 1 but it uses servers \[0, 1\]"),
    (dataclasses.replace(GOOD, ps=(0, 0)), r"\(2e\) job 0: has no PS"),
    (dataclasses.replace(GOOD, ps=(0, 1), workers=(2, 1)), r"\(2i\) job 0 server 1"),
    (dataclasses.replace(GOOD, duration=1), r"\(2f\) job 0: 1 slots x 3 workers"),
    (dataclasses.replace(GOOD, worker_type=5), r"\(2b\) job 0: worker type 5"),
    (dataclasses.replace(GOOD, ps_type=3), r"\(2c\) job 0: PS type 3"),
    (dataclasses.replace(GOOD, workers=(0, 0)), r"\(2f\) job 0: has no worker"),
    (dataclasses.replace(GOOD, worker_type=1, workers=(2, 1), duration=4),
     r"\(2h\) server 0 resource gpu slot 2: 4 > 2"),
    (dataclasses.replace(GOOD, segments=((2, 2), (4, 5))), r"\(2a\) job 0: preempted"),
])
def test_verify_names_the_violated_equation(plan, message):
    inst = two_server_ps()
    assert verify(inst, Schedule((GOOD,))) == 2.0 * 5
    with pytest.raises(InfeasibleSchedule, match=message):
        verify(inst, Schedule((plan,)))


def test_verify_job_count_and_allreduce_rules():
    inst = toy("allreduce")
    with pytest.raises(InfeasibleSchedule, match=r"\(2a\) schedule has 1 jobs"):
        verify(inst, Schedule(toy_opt(inst).plans[:1]))
    with pytest.raises(InfeasibleSchedule, match=r"\(15\) job 0: all-reduce jobs have no PS"):
        verify(inst, Schedule((Plan(1, 2, 1, 0, 1, (1,), (1,)), toy_opt(inst).plans[1])))


def test_allreduce_rate_depends_on_worker_count():
    # (14): Phi workers each at 1/(v + (Phi-1)/Phi * c); with c = 2v two workers are no faster
    job = Job(arrival=1, weight=1.0, epochs=1, chunks=2, batches=4, compute=(1.0,), update=(2.0,),
              grad_size=0.0)
    inst = Instance("allreduce", ("gpu",), ((4.0,),), (NodeType((1.0,), 1.0),), (), (job,),
                    horizon=2)
    assert verify(inst, Schedule((Plan(1, 8, 0, -1, 1, (1,), (0,)),))) == 9.0  # 1 worker: 8 slots
    with pytest.raises(InfeasibleSchedule, match=r"\(2f\)"):
        verify(inst, Schedule((Plan(1, 7, 0, -1, 1, (2,), (0,)),)))  # 2 workers: rate 2/2 = 1
    assert verify(inst, Schedule((Plan(1, 8, 0, -1, 1, (2,), (0,)),))) == 9.0


def test_verify_preemptive_counts_overhead():
    inst = two_server_ps()
    # 3 workers x 1.25 per slot = 3.75 per slot; segments 2-2 and 4-4 give (2 - 0.5) * 3.75 < 6
    short = dataclasses.replace(GOOD, duration=2, segments=((2, 2), (4, 4)))
    with pytest.raises(InfeasibleSchedule, match=r"\(2f\)"):
        verify_preemptive(inst, Schedule((short,)), overhead=0.5)
    ok = dataclasses.replace(GOOD, duration=3, segments=((2, 2), (4, 5)))
    assert verify_preemptive(inst, Schedule((ok,)), overhead=0.5) == 2.0 * 6


# ------------------------------------------------------------- derived quantities agree with verify


def _roomy(inst: Instance, servers: int = 2) -> Instance:
    """``inst`` with ``servers`` servers of 100x its largest capacity (so placements always fit)."""
    big = tuple(100.0 * max(row[r] for row in inst.capacity) + 100.0 for r in range(inst.n_res))
    return dataclasses.replace(inst, capacity=(big,) * servers)


EDGE_JOBS = [dict(compute=(0.6000005, 1.0000015), update=(0.4, 0.0), batches=1, epochs=2),
             dict(compute=(0.9999995, 0.3333334), update=(0.0, 0.2500001), batches=3, epochs=1)]


@pytest.mark.parametrize("seed", range(6))
def test_duration_is_the_least_verify_accepts(seed):
    """Instance.duration (every configuration) is accepted by verify's (2f) and one slot less is
    not, bit for bit (issue 13: the model's durations used to be one slot longer at the edge)."""
    inst = _roomy(generate("tiny", seed))
    jobs = list(inst.jobs) + [dataclasses.replace(
        inst.jobs[0], compute=e["compute"], update=e["update"][:len(inst.jobs[0].update)],
        batches=e["batches"], epochs=e["epochs"]) for e in EDGE_JOBS]
    inst = dataclasses.replace(inst, jobs=tuple(jobs))
    for j, job in enumerate(inst.jobs):
        single = dataclasses.replace(inst, jobs=(job,))
        for m, p, q, n, d in inst.configurations(j):
            plan = Plan(job.arrival, d, m, p, q, (n, 0), (1, 0) if inst.is_ps else (0, 0))
            verify(single, Schedule((plan,)))
            if d > 1:
                with pytest.raises(InfeasibleSchedule, match=r"\(2f\)"):
                    verify(single, Schedule((dataclasses.replace(plan, duration=d - 1),)))


@pytest.mark.parametrize("bandwidth", [1.0, 1.0000005, 3.0000025, 0.9999995, 2.5])
def test_ps_needed_is_the_least_verify_accepts(bandwidth):
    """Instance.ps_needed(m, p, k) PSs on server 1 pass verify's (2i) with k workers on server 0,
    one PS less does not."""
    base = _roomy(generate("tiny", 0))
    inst = dataclasses.replace(base, worker_types=tuple(
        dataclasses.replace(t, bandwidth=bandwidth * (i + 1))
        for i, t in enumerate(base.worker_types)))
    job = dataclasses.replace(inst.jobs[0], chunks=5)
    single = dataclasses.replace(inst, jobs=(job,))
    for m in range(len(inst.worker_types)):
        for p in range(len(inst.ps_types)):
            for k in range(1, 6):
                s = inst.ps_needed(m, p, k)
                d = single.duration(0, m, p, k, 0)
                plan = Plan(job.arrival, d, m, p, 0, (k, 0), (0, s))
                verify(single, Schedule((plan,)))
                if s > 1:
                    with pytest.raises(InfeasibleSchedule, match=r"\(2i\)"):
                        verify(single, Schedule((dataclasses.replace(plan, ps=(0, s - 1)),)))


def test_python_built_schedules_are_validated_and_normalised():
    import numpy as np

    plan = Plan(np.int64(1), 2, 1, 0, 1, [np.int64(1)], (1,))
    sched = Schedule([plan])
    assert sched.plans == (Plan(1, 2, 1, 0, 1, (1,), (1,)),)
    assert type(sched.plans[0].start) is int and type(sched.plans[0].workers) is tuple
    with pytest.raises(InvalidInstance, match=r"schedule.jobs\[0\].workers\[0\]: must be >= 0"):
        Schedule((dataclasses.replace(GOOD, workers=(-1, 1)),))
    with pytest.raises(InvalidInstance, match=r"schedule.jobs\[0\].segments\[0\]: must be"):
        Schedule((dataclasses.replace(GOOD, segments=((2, 3, 4),)),))
    with pytest.raises(InvalidInstance, match=r"schedule.jobs\[1\]: must be a Plan"):
        Schedule((GOOD, None))


def test_json_and_python_instances_are_the_same_object():
    """from_dict only reads the fields; the constructor validates and normalises them (ints in
    float fields become floats, lists tuples), so both paths give equal instances."""
    inst = toy()
    d = inst.to_dict()
    d["capacity"] = [[3, 10]]
    d["jobs"][0]["weight"] = 1
    again = Instance.from_dict(d)
    assert again == inst and type(again.jobs[0].weight) is float
    assert type(again.capacity[0][0]) is float and type(again.jobs[0].compute) is tuple
    with pytest.raises(InvalidInstance, match=r"instance.jobs\[1\].chunks: must be >= 1, got 0"):
        dataclasses.replace(inst, jobs=(inst.jobs[0], dataclasses.replace(inst.jobs[1], chunks=0)))


# ------------------------------------------------ issue 22 item 2: verify re-checks patched plans


@pytest.mark.parametrize("check", [verify, verify_preemptive])
@pytest.mark.parametrize("field, value, message", [
    ("start", math.nan, r"start: must be an integer, got nan"),
    ("start", math.inf, r"start: must be an integer, got inf"),
    ("start", 60.5, r"start: must be an integer, got 60.5"),
    ("start", "1", r"start: must be an integer, got '1'"),
    ("start", True, r"start: must be an integer, got True"),
    ("start", 10 ** 400, r"start: must be <= "),
    ("duration", 0, r"duration: must be >= 1, got 0"),
    ("worker_type", -1, r"worker_type: must be >= 0"),
    ("ps_type", -2, r"ps_type: must be >= -1"),
    ("colocated", 2, r"colocated: must be <= 1"),
    ("workers", (1.5,), r"workers\[0\]: must be an integer, got 1.5"),
    ("ps", (math.nan,), r"ps\[0\]: must be an integer, got nan"),
    ("segments", ((1,),), r"segments\[0\]: must be \[first, last\]"),
], ids=lambda v: repr(v)[:12])
def test_verify_rechecks_a_plan_patched_after_construction(check, field, value, message):
    """A plan's start set to nan, inf or 60.5 after construction gave objective nan, inf or 468.0
    (1,517 of 11,490 mutants); now every value is validated again, as in the other families."""
    inst = toy("ps")
    sched = toy_opt(inst)
    assert check(inst, sched) == 7.0
    object.__setattr__(sched.plans[0], field, value)
    with pytest.raises(InvalidInstance, match=r"^schedule\.jobs\[0\]\." + message):
        check(inst, sched)


def test_verify_rechecks_patched_plans_tuple():
    inst = toy("ps")
    sched = toy_opt(inst)
    object.__setattr__(sched, "plans", (sched.plans[0], "plan"))
    with pytest.raises(InvalidInstance, match=r"^schedule\.jobs\[1\]: must be a Plan, got str"):
        verify(inst, sched)


PATCHES = st.one_of(st.integers(-3, 12), st.floats(allow_nan=True, allow_infinity=True),
                    st.booleans(), st.just(10 ** 400), st.text(max_size=2))
PLAN_FIELDS = ("start", "duration", "worker_type", "ps_type", "colocated")


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_patched_schedules_are_rejected_or_recomputed(data):
    """Fuzz (issue 22 item 6): patch the plans of a verified schedule in place; verify raises a
    named error or returns the objective of the plans as they now are (finite, integral slots)."""
    inst = generate("small", data.draw(st.integers(0, 3)))
    from optsched import solve

    sched = solve(inst, "fifo").schedule
    for _ in range(data.draw(st.integers(1, 3))):
        plan = sched.plans[data.draw(st.integers(0, len(sched.plans) - 1))]
        object.__setattr__(plan, data.draw(st.sampled_from(PLAN_FIELDS)), data.draw(PATCHES))
    try:
        value = verify(inst, sched)
    except (InvalidInstance, InfeasibleSchedule) as exc:
        assert "\n" not in str(exc)
        return
    assert math.isfinite(value)
    assert all(type(p.start) is int and type(p.duration) is int for p in sched.plans)
    assert value == pytest.approx(sum(j.weight * p.completion for j, p in zip(inst.jobs, sched.plans)),
                                  rel=1e-15)  # verify sums exactly, then rounds up (issue 22)
