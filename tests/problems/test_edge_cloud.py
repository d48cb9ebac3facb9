"""edge_cloud problem layer: validation, JSON round trip, verify (2a)-(2l) and verify_preemptive."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.errors import InfeasibleSchedule, InvalidInstance
from optsched.io import dumps, instance_from_dict, schedule_from_dict
from optsched.problems.edge_cloud import Instance, Job, Run, Schedule, verify, verify_preemptive

COMM_HALF = 0.5 * 1000 * 3600 / 16  # grad_mb giving 2k/B = 0.5 slot at 1000 Mbps


def job(arrival, delay):
    """Q = 4 mini-batches, 0.5 slot each co-located (R1 = 2), 1.0 distributed (R0 = 4), D = 2."""
    return Job(arrival=arrival, worker_type=0, ps_type=0, epochs=1, chunks=2, minibatches=2,
               compute=0.5, update=0.0, grad_mb=COMM_HALF, bandwidth=1000.0, delay=delay)


@pytest.fixture
def inst():
    """Edge server 0 (2 workers, 1 PS) and a cloud 1 (4 workers, 1 PS); two jobs."""
    return Instance(workers=((2,), (4,)), ps=((1,), (1,)), jobs=(job(1, (1, 3)), job(2, (1, 1))),
                    horizon=16, cloud=(1,), name="worked")


def sched(*runs):
    return Schedule.single(list(runs))


def test_required_worker_slots(inst):
    assert inst.jobs[0].work == 4
    assert (inst.jobs[0].required(1), inst.jobs[0].required(0)) == (2, 4)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(epochs=st.integers(1, 60), chunks=st.integers(1, 4), minibatches=st.integers(1, 60),
       compute=st.one_of(st.floats(1e-4, 3.0), st.sampled_from([1.0000005, 0.9999995, 0.50000005,
                                                                  1 / 3, 0.1])),
       comm=st.sampled_from([0.0, 0.25, 1 / 3, 0.2500011]), xi=st.integers(0, 1))
def test_required_is_the_least_worker_slot_count_verify_accepts(epochs, chunks, minibatches,
                                                                 compute, comm, xi):
    """Issue 13: R^xi (what the model and the algorithms use) is exactly the fewest worker-slots
    verify's (2e) accepts: one worker for R slots verifies, for R - 1 slots it does not."""
    j = Job(arrival=1, worker_type=0, ps_type=0, epochs=epochs, chunks=chunks,
            minibatches=minibatches, compute=compute, update=0.0, grad_mb=comm * COMM_HALF * 2,
            bandwidth=1000.0, delay=(0, 0))
    one = Instance(workers=((1,), (1,)), ps=((1,), (1,)), jobs=(j,))
    R = j.required(xi)
    ps = 0 if xi else 1

    def run(length):
        return Schedule.single([Run(1, length, ps, ((0, 1),))])

    assert verify(one, run(R)) == R - 1
    if R > 1:
        with pytest.raises(InfeasibleSchedule, match=r"\(2e\) job 0"):
            verify(one, run(R - 1))


def test_verify_2e_exact_edge(inst):
    """(2e) is decided in exact arithmetic (issue 22): work short by 1e-8 relative is not done
    (it was accepted within the old relative tolerance 1e-6), exactly enough work is."""
    near = replace(inst.jobs[0], compute=0.50000005, grad_mb=0.0)      # 2 / 0.50000005 < 4
    exact = replace(inst.jobs[0], compute=0.5, grad_mb=0.0)            # 2 / 0.5 = 4
    s = sched(Run(2, 2, 0, ((0, 2),)), Run(3, 3, 0, ((0, 2),)))
    for check in (verify, verify_preemptive):
        assert check(replace(inst, jobs=(exact, inst.jobs[1])), s) == 1 + 1
        with pytest.raises(InfeasibleSchedule, match=r"\(2e\) job 0"):
            check(replace(inst, jobs=(near, inst.jobs[1])), s)
    assert near.required(1) == 3 and exact.required(1) == 2
    longer = sched(Run(2, 3, 0, ((0, 2),)), Run(4, 4, 0, ((0, 2),)))
    assert verify(replace(inst, jobs=(near, inst.jobs[1])), longer) == 2 + 2


def test_worked_example_objective(inst):
    s = sched(Run(2, 2, 0, ((0, 2),)), Run(3, 3, 0, ((0, 2),)))
    assert verify(inst, s) == 2.0
    # distributed: 2 edge workers + PS on the cloud need R0 = 4 worker-slots -> 2 slots
    s = sched(Run(4, 5, 1, ((0, 2),)), Run(3, 3, 0, ((0, 2),)))
    assert verify(inst, s) == 4 + 1


@pytest.mark.parametrize("runs, eq", [
    ((Run(2, 2, 0, ((0, 2), (1, 1))), Run(3, 3, 0, ((0, 2),))), "(2a)"),
    ((Run(2, 2, 5, ((0, 2),)), Run(3, 3, 0, ((0, 2),))), "(2b)"),
    ((Run(2, 2, 0, ((0, 1),)), Run(3, 3, 0, ((0, 2),))), "(2e)"),
    ((Run(4, 4, 1, ((0, 2),)), Run(3, 3, 0, ((0, 2),))), "(2e) job 0"),
    ((Run(2, 3, 0, ((0, 2),)), Run(3, 6, 1, ((0, 1),))), "(2g) server 0 worker type 0 at slot 3: 3 > 2"),
    ((Run(2, 3, 0, ((0, 1),)), Run(3, 4, 0, ((1, 2),))), "(2h) server 0 PS type 0 at slot 3: 2 > 1"),
    ((Run(1, 1, 0, ((0, 2),)), Run(3, 3, 0, ((0, 2),))), "(2i) job 0: uses server 0"),
    ((Run(2, 3, 1, ((0, 2),)), Run(4, 4, 0, ((0, 2),))), "(2i) job 0: uses server 1"),
    ((Run(3, 2, 0, ((0, 2),)), Run(4, 4, 0, ((0, 2),))), "(2k)"),
])
def test_verify_rejects(inst, runs, eq):
    with pytest.raises(InfeasibleSchedule, match=eq.replace("(", r"\(").replace(")", r"\)")):
        verify(inst, sched(*runs))


def test_verify_rejects_preemption_and_wrong_count(inst):
    two = Schedule(((Run(2, 2, 0, ((0, 1),)), Run(4, 4, 0, ((0, 1),))), (Run(3, 3, 0, ((0, 2),)),)))
    with pytest.raises(InfeasibleSchedule, match=r"\(2c\)/\(2d\) job 0: 2 runs"):
        verify(inst, two)
    with pytest.raises(InfeasibleSchedule, match="1 jobs scheduled"):
        verify(inst, sched(Run(2, 2, 0, ((0, 2),))))


def test_verify_preemptive(inst):
    # job 0: one worker in slot 2 and one in slot 4: 2 worker-slots co-located = R1; no overhead
    two = Schedule(((Run(2, 2, 0, ((0, 1),)), Run(4, 4, 0, ((0, 1),))), (Run(3, 3, 0, ((0, 2),)),)))
    assert verify_preemptive(inst, two) == 3 + 1
    with pytest.raises(InfeasibleSchedule, match=r"\(2e\) job 0"):
        verify_preemptive(inst, two, overhead=0.25)
    early = Schedule(((Run(1, 1, 0, ((0, 2),)),), (Run(3, 3, 0, ((0, 2),)),)))
    assert verify_preemptive(inst, early) == 0 + 1          # delay ignored
    with pytest.raises(InfeasibleSchedule, match=r"\(2i\)"):
        verify_preemptive(inst, early, respect_delay=True)
    overlap = Schedule(((Run(2, 3, 0, ((0, 1),)), Run(3, 4, 0, ((0, 1),))), (Run(5, 5, 0, ((0, 2),)),)))
    with pytest.raises(InfeasibleSchedule, match=r"\(2c\) job 0: runs 0 and 1 overlap"):
        verify_preemptive(inst, overlap)


def test_schedule_round_trip(inst):
    s = Schedule(((Run(2, 2, 0, ((0, 1), (1, 1))), Run(4, 4, 0, ((0, 1),))), (Run(3, 3, 0, ((0, 2),)),)))
    assert schedule_from_dict(json.loads(dumps(s))) == s


def test_schedule_from_dict_errors():
    bad = {"family": "edge_cloud", "format_version": 1, "jobs": [[{"start": 1, "end": 1, "ps": 0,
                                                                    "workers": [[0, 0]]}]]}
    with pytest.raises(InvalidInstance, match=r"schedule.jobs\[0\]\[0\].workers\[0\]\[1\]: must be >= 1"):
        schedule_from_dict(bad)


def test_python_built_instances_are_validated(inst):
    with pytest.raises(InvalidInstance, match=r"jobs\[0\].delay: must have 2 entries"):
        Instance(workers=((2,), (4,)), ps=((1,), (1,)), jobs=(job(1, (1,)),))
    with pytest.raises(InvalidInstance, match=r"instance.workers\[1\]: must have 1 entries"):
        Instance(workers=((2,), (4, 1)), ps=((1,), (1,)), jobs=(job(1, (1, 1)),))
    with pytest.raises(InvalidInstance, match=r"jobs\[0\].worker_type: no server has a type-0 worker"):
        Instance(workers=((0,), (0,)), ps=((1,), (1,)), jobs=(job(1, (1, 1)),))


def test_python_built_instances_are_normalised_and_validated_like_json(inst):
    """Issue 10: validation runs in Instance.__post_init__ (no second path through JSON); lists
    become tuples, so a Python-built instance equals its JSON round trip and is hashable."""
    built = Instance(workers=[[2], [4]], ps=[[1], [1]],
                     jobs=[replace(job(1, (1, 3)), delay=[1, 3]), job(2, (1, 1))],
                     horizon=16, cloud=[1], name="worked")
    assert built == inst and hash(built) == hash(inst)
    assert instance_from_dict(json.loads(dumps(built))) == built
    with pytest.raises(InvalidInstance, match=r"instance.jobs\[1\].chunks: must be >= 1, got 0"):
        replace(inst, jobs=(inst.jobs[0], replace(inst.jobs[1], chunks=0)))
    with pytest.raises(InvalidInstance, match=r"instance.cloud\[0\]: must be <= 1, got 2"):
        replace(inst, cloud=(2,))
    with pytest.raises(InvalidInstance, match=r"instance.jobs\[0\].compute: must be > 0"):
        replace(inst, jobs=(replace(inst.jobs[0], compute=0.0), inst.jobs[1]))
    with pytest.raises(InvalidInstance, match=r"instance.jobs\[1\]: must be a Job, got dict"):
        replace(inst, jobs=(inst.jobs[0], {"arrival": 1}))


def test_schedule_shape_checks_and_normalisation():
    """Schedule.__post_init__ checks shapes, types and domains (feasibility is verify's job) and
    turns lists into tuples, also inside Runs."""
    s = Schedule([[Run(2, 2, 0, [[0, 1], [1, 1]])]])
    assert s == Schedule(((Run(2, 2, 0, ((0, 1), (1, 1))),),)) and hash(s)
    with pytest.raises(InvalidInstance, match=r"schedule.jobs\[0\]: must not be empty"):
        Schedule(((),))
    with pytest.raises(InvalidInstance, match=r"schedule.jobs\[0\]\[0\].start: must be an integer"):
        Schedule.single([Run(1.5, 2, 0, ((0, 1),))])
    with pytest.raises(InvalidInstance, match=r"schedule.jobs\[0\]\[0\].workers\[0\]: must have 2"):
        Schedule.single([Run(1, 2, 0, ((0, 1, 2),))])
    with pytest.raises(InvalidInstance, match=r"schedule.jobs\[1\]\[0\]: must be a Run, got tuple"):
        Schedule(((Run(1, 1, 0, ((0, 1),)),), ((1, 1, 0, ((0, 1),)),)))
