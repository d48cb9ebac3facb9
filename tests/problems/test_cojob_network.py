"""cojob_network problem layer: JSON round trip, validation, and verify against hand-made violations."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from optsched.errors import InfeasibleSchedule, InvalidInstance
from optsched.io import load_instance
from optsched.problems.cojob_network import Instance, Schedule, Segment, verify
from optsched.simulate.flows import FairShare, StageOrder, schedule_of, simulate
from optsched.workloads.cojob_network import generate

DIR = "cojob_network"


def _fig3(data):
    return load_instance(data / DIR / "fig3.json")


def _mixed(data):
    return load_instance(data / DIR / "valid_mixed.json")


def test_round_trip_and_loads(data):
    inst = _mixed(data)
    again = Instance.from_dict(json.loads(json.dumps(inst.to_dict())))
    assert again == inst
    # Eq. (27): stage 1 of cojob 0 = 1 iteration of both jobs; stage 2 = 2 iterations of job 0 only
    assert list(inst.loads[0, 0]) == [2.0, 2.0, 1.0, 3.0]
    assert list(inst.loads[0, 1]) == [4.0, 2.0, 2.0, 4.0]
    assert list(inst.loads[1, 0]) == [6.0, 0.0, 6.0, 0.0]
    assert inst.stages == ((0, 0), (0, 1), (1, 0))


def test_broken_instances(data):
    expected = json.loads((data / DIR / "broken" / "expected.json").read_text())
    assert len(expected) >= 10
    for name, message in expected.items():
        with pytest.raises(InvalidInstance, match=None) as err:
            load_instance(data / DIR / "broken" / name)
        assert message in str(err.value), (name, str(err.value))


def test_python_built_instances_are_validated():
    inst = generate("tiny", 0)
    with pytest.raises(InvalidInstance, match="machines: must be >= 1"):
        replace(inst, machines=0)


def test_constructor_validates_with_json_messages_and_normalises_lists():
    """Validation runs in __post_init__ (issue 10): a Python-built instance gets the message a JSON
    document gets; lists become tuples (hashable, equal to the loaded instance)."""
    from optsched.problems.cojob_network import Cojob, Job
    built = Instance(2, [Cojob(0.0, [1], [Job(1, [[0, 1, 2.0]])])])
    assert isinstance(built.cojobs[0].jobs[0].flows[0], tuple) and hash(built)
    assert Instance.from_dict(built.to_dict()) == built
    with pytest.raises(InvalidInstance, match=r"^instance.cojobs\[0\].jobs\[0\].flows\[0\]\[1\]: "
                                              r"must be <= 1, got 2$"):
        Instance(2, (Cojob(0.0, (1,), (Job(1, ((0, 2, 1.0),)),)),))
    with pytest.raises(InvalidInstance, match=r"^instance.cojobs\[0\].jobs\[0\]: must be a Job"):
        Instance(2, (Cojob(0.0, (1,), ({"stages": 1},)),))
    with pytest.raises(InvalidInstance, match=r"^instance.capacity: must be > 0"):
        Instance(2, built.cojobs, capacity=0.0)


def test_schedule_shape_checked_on_construction():
    with pytest.raises(InvalidInstance, match=r"^schedule.segments\[0\]\[2\]\[0\]: must have 5"):
        Schedule((((0.0,),),), (Segment(0.0, 1.0, ((0, 0, 1),)),))
    with pytest.raises(InvalidInstance, match=r"^schedule.starts\[0\]\[0\]\[0\]: must be a number"):
        Schedule(((("0",),),), ())
    with pytest.raises(InvalidInstance, match=r"^schedule.order\[0\]: must have 2 entries"):
        Schedule((), (), ((0, 1, 2),))
    listed = Schedule([[[0.0]]], [Segment(0.0, 1.0, [[0, 0, 1, 0, 1.0]])], [[0, 0]])
    assert listed == Schedule((((0.0,),),), (Segment(0.0, 1.0, ((0, 0, 1, 0, 1.0),)),), ((0, 0),))


def test_schedule_round_trip(data):
    inst = _mixed(data)
    sched = schedule_of(simulate(inst, FairShare()), (), "fair_share")
    again = Schedule.from_dict(json.loads(json.dumps(sched.to_dict())))
    assert again == sched
    assert verify(inst, again) == pytest.approx(verify(inst, sched))
    with pytest.raises(InvalidInstance, match=r"schedule.segments\[0\]\[2\]\[0\]: must have 5 entries"):
        bad = sched.to_dict()
        bad["segments"][0][2][0] = [0, 0, 1]
        Schedule.from_dict(bad)


def test_verify_fig3_values(data):
    inst = _fig3(data)
    assert verify(inst, schedule_of(simulate(inst, FairShare()))) == pytest.approx(32.0)
    order = [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert verify(inst, schedule_of(simulate(inst, StageOrder(order)))) == pytest.approx(26.0)


def _base(data):
    inst = _fig3(data)
    return inst, schedule_of(simulate(inst, StageOrder([(0, 0), (0, 1), (1, 0), (1, 1)])))


def _with_segments(sched, segments):
    return Schedule(sched.starts, tuple(segments), sched.order, sched.policy)


def test_verify_rejects_port_overload(data):
    inst, sched = _base(data)
    seg = sched.segments[0]
    doubled = Segment(seg.t0, seg.t1, tuple((*r[:4], 2 * r[4]) for r in seg.rates))
    with pytest.raises(InfeasibleSchedule, match=r"^\(11\) ingress port 0"):
        verify(inst, _with_segments(sched, [doubled, *sched.segments[1:]]))


def test_verify_rejects_egress_overload():
    inst = Instance.from_dict({"family": "cojob_network", "format_version": 1, "machines": 2,
                               "cojobs": [{"arrival": 0, "iterations": [1], "jobs": [
                                   {"stages": 1, "flows": [[0, 1, 1.0]]},
                                   {"stages": 1, "flows": [[1, 1, 1.0]]}]}]})
    both = Schedule((((0.0,), (0.0,)),), (Segment(0.0, 1.0, ((0, 0, 1, 0, 1.0), (0, 1, 1, 0, 1.0))),))
    with pytest.raises(InfeasibleSchedule, match=r"^\(10\) egress port 3"):
        verify(inst, both)
    ok = Schedule((((0.0,), (0.0,)),), (Segment(0.0, 2.0, ((0, 0, 1, 0, 0.5), (0, 1, 1, 0, 0.5))),))
    assert verify(inst, ok) == pytest.approx(2.0)


def test_verify_rejects_missing_bytes(data):
    inst, sched = _base(data)
    with pytest.raises(InfeasibleSchedule, match=r"^\(5\)"):
        verify(inst, _with_segments(sched, sched.segments[:-1]))


def test_verify_rejects_iteration_overlap():
    """(7): job (0,0)'s iteration 2 may not send before iteration 1 has completed."""
    inst = Instance.from_dict({"family": "cojob_network", "format_version": 1, "machines": 2,
                               "cojobs": [{"arrival": 0, "iterations": [2], "jobs": [
                                   {"stages": 1, "flows": [[0, 0, 1.0], [1, 1, 1.0]]}]}]})
    # iteration 2's flow on 0->0 starts while iteration 1's flow 1->1 is still running
    segs = (Segment(0.0, 1.0, ((0, 0, 1, 0, 1.0), (0, 0, 1, 1, 0.5))),
            Segment(1.0, 2.0, ((0, 0, 1, 1, 0.5), (0, 0, 2, 0, 1.0))),
            Segment(2.0, 3.0, ((0, 0, 2, 1, 1.0),)))
    with pytest.raises(InfeasibleSchedule, match=r"^\(6\)-\(7\) flow 0 of iteration 2"):
        verify(inst, Schedule((((0.0,),),), segs))


def test_verify_rejects_unequal_stage_starts(data):
    inst, sched = _base(data)
    starts = [list(map(list, job)) for job in sched.starts]
    starts[0][1][0] = 0.5
    bad = Schedule(tuple(tuple(tuple(s) for s in job) for job in starts), sched.segments)
    with pytest.raises(InfeasibleSchedule, match=r"^\(8\) cojob 0 stage 1: job 1 starts at 0.5"):
        verify(inst, bad)


def test_verify_rejects_start_before_previous_stage(data):
    inst, sched = _base(data)
    starts = [list(map(list, job)) for job in sched.starts]
    starts[0][0][1] = 1.0     # stage 2 of cojob A before S_{A,1} = 2
    bad = Schedule(tuple(tuple(tuple(s) for s in job) for job in starts), sched.segments)
    with pytest.raises(InfeasibleSchedule, match=r"^\(8\) cojob 0 stage 2: job 0 starts at 1"):
        verify(inst, bad)


def test_verify_rejects_negative_rate_and_compute_gap(data):
    inst, sched = _base(data)
    seg = sched.segments[0]
    neg = Segment(seg.t0, seg.t1, ((*seg.rates[0][:4], -0.1),))
    with pytest.raises(InfeasibleSchedule, match=r"^\(12\)"):
        verify(inst, _with_segments(sched, [neg, *sched.segments[1:]]))
    mixed = generate("tiny", 3, max_jobs=1)
    gap = Instance.from_dict({**mixed.to_dict(), "cojobs": [
        {**c.to_dict(), "jobs": [{**j.to_dict(), "compute": 0.25} for j in c.jobs]} for c in mixed.cojobs]})
    with pytest.raises(InfeasibleSchedule, match=r"before its release"):
        verify(gap, schedule_of(simulate(mixed, FairShare())))   # no compute gaps left
    assert verify(gap, schedule_of(simulate(gap, FairShare()))) > verify(mixed, schedule_of(
        simulate(mixed, FairShare())))
