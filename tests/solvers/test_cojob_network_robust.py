"""cojob_network robustness (issue 15): every registered method runs to a status on every valid
instance, degenerate ones included (one machine, one port pair for everyone, late and far-apart
arrivals, tiny and huge sizes, compute gaps, small capacity); the issue's sincronia crash; and a
schedule-mutation property (verify rejects a mutated schedule or recomputes its objective; it never
crashes)."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from optsched.errors import InfeasibleSchedule, InvalidInstance
from optsched.problems.cojob_network import Cojob, Instance, Job, Schedule, Segment, verify
from optsched.registry import solve
from optsched.result import SolveStatus
from optsched.workloads.cojob_network import generate

from tests.robust import every_method
from tests.timing import cpu_time

FAMILY = "cojob_network"
SIZES = st.sampled_from([1e-6, 1e-3, 0.5, 1.0, 3.0, 1e3])
ARRIVALS = st.sampled_from([0.0, 0.0, 2.0, 7.5, 1e3, 1e6])


@st.composite
def instances(draw):
    machines = draw(st.integers(1, 3))
    port = st.integers(0, machines - 1)
    cojobs = []
    for _ in range(draw(st.integers(1, 3))):
        K = draw(st.integers(1, 3))
        iterations = tuple(sorted(draw(st.sets(st.integers(1, 4), min_size=K, max_size=K))))
        jobs = []
        n = draw(st.integers(1, 3))
        for j in range(n):
            stages = K if j == 0 else draw(st.integers(1, K))
            pairs = draw(st.sets(st.tuples(port, port), min_size=1, max_size=3))
            flows = tuple((s, d, draw(SIZES)) for s, d in sorted(pairs))
            compute = draw(st.sampled_from([0.0, 0.0, 0.25]))
            jobs.append(Job(stages, flows, compute))
        cojobs.append(Cojob(draw(ARRIVALS), iterations, tuple(jobs)))
    capacity = draw(st.sampled_from([1.0, 1.0, 1e-3, 10.0]))
    try:
        return Instance(machines, tuple(cojobs), capacity)
    except InvalidInstance as err:      # only the documented resolution limit may refuse one
        assert "MAX_TIME_RANGE" in str(err), err
        reject()


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(instances())
def test_every_method_runs_to_a_status(inst):
    for m, res in every_method(FAMILY, inst, wall=8):
        if m.kind in ("algorithm", "baseline"):
            assert res.status in (SolveStatus.FEASIBLE, SolveStatus.TIME_LIMIT), m.name


def test_issue15_sincronia_late_arrival_on_one_link():
    """'cannot reshape array of size 0': one cojob arriving at time 2 on a single link."""
    inst = Instance(1, (Cojob(2.0, (1,), (Job(1, ((0, 0, 1.0),)),)),))
    for name in ("sincronia", "sincronia_full"):
        res = solve(inst, name)
        assert res.status is SolveStatus.FEASIBLE and res.objective == pytest.approx(1.0)


@pytest.mark.parametrize("seed", range(22))
def test_issue15_sincronia_small_with_late_arrivals(seed):
    inst = generate("small", seed, arrivals=True)
    assert solve(inst, "sincronia").status is SolveStatus.FEASIBLE


def test_verify_refuses_objects_of_another_family():
    inst = generate("tiny", 0)
    sched = solve(inst, "grouper").schedule
    with pytest.raises(InfeasibleSchedule, match="must be a cojob_network Schedule"):
        verify(inst, object())
    with pytest.raises(InvalidInstance, match="must be a cojob_network Instance"):
        verify(object(), sched)


# ----------------------------------------------------------------------------------------------------
# Schedule mutation: verify rejects a mutated schedule or recomputes an objective; never crashes


def _mutate(sched: Schedule, data) -> Schedule:
    """One mutation of a number or an index of ``sched`` (may raise InvalidInstance when the
    mutated value is invalid in itself)."""
    kind = data.draw(st.sampled_from(["start", "t0", "t1", "rate", "index", "order", "drop",
                                      "dup"]))
    value = data.draw(st.sampled_from([-1, -1.0, 0, 0.5, 1e-9, 2, 3, 1e300, math.nan, math.inf,
                                       True, 10**30]))
    segs = list(sched.segments)
    if kind == "start":
        g = data.draw(st.integers(0, len(sched.starts) - 1))
        j = data.draw(st.integers(0, len(sched.starts[g]) - 1))
        row = list(sched.starts[g][j])
        row[data.draw(st.integers(0, len(row) - 1))] = value
        starts = [list(map(list, job)) for job in sched.starts]
        starts[g][j] = row
        return Schedule(starts, segs, sched.order, sched.policy)
    if not segs:
        return sched
    n = data.draw(st.integers(0, len(segs) - 1))
    seg = segs[n]
    if kind in ("t0", "t1"):
        segs[n] = Segment(value if kind == "t0" else seg.t0, value if kind == "t1" else seg.t1,
                          seg.rates)
    elif kind in ("rate", "index") and seg.rates:
        q = data.draw(st.integers(0, len(seg.rates) - 1))
        row = list(seg.rates[q])
        row[4 if kind == "rate" else data.draw(st.integers(0, 3))] = value
        rates = list(seg.rates)
        rates[q] = tuple(row)
        segs[n] = Segment(seg.t0, seg.t1, rates)
    elif kind == "order":
        order = list(sched.order) + [(data.draw(st.integers(-1, 5)), data.draw(st.integers(-1, 5)))]
        return Schedule(sched.starts, segs, order, sched.policy)
    elif kind == "drop":
        del segs[n]
    elif kind == "dup" and seg.rates:
        segs[n] = Segment(seg.t0, seg.t1, seg.rates + seg.rates[:1])
    return Schedule(sched.starts, segs, sched.order, sched.policy)


_BASE = {}


def _base(seed):
    if seed not in _BASE:
        inst = generate("tiny", seed)
        _BASE[seed] = (inst, solve(inst, "pda").schedule, solve(inst, "pda").objective)
    return _BASE[seed]


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(0, 5), st.data())
def test_schedule_mutation_never_crashes_verify(seed, data):
    inst, sched, _ = _base(seed)
    try:
        mutated = _mutate(sched, data)
    except InvalidInstance:
        return                                  # rejected on construction, naming the field
    try:
        value = verify(inst, mutated)
    except (InfeasibleSchedule, InvalidInstance):
        return
    assert math.isfinite(value) and value >= 0


# ----------------------------------------------------------------------------------------------------
# Hand-written corpus: tests/data/cojob_network/broken/ (instances) and broken/schedules/ (schedules
# of the Fig. 3 instance); each file fails with one line naming the field, within a second


def _corpus(folder):
    import json
    return json.loads((folder / "expected.json").read_text())


def test_broken_instance_corpus(data):
    from optsched.io import load_instance
    folder = data / FAMILY / "broken"
    expected = _corpus(folder)
    assert len(expected) >= 30
    for name, message in expected.items():
        start = cpu_time()
        with pytest.raises(InvalidInstance) as err:
            load_instance(folder / name)
        assert message in str(err.value), (name, str(err.value))
        assert "\n" not in str(err.value) and cpu_time() - start < 1.0, name


def test_broken_schedule_corpus(data):
    from optsched.io import load_instance, load_schedule
    inst = load_instance(data / FAMILY / "fig3.json")
    folder = data / FAMILY / "broken" / "schedules"
    expected = _corpus(folder)
    assert len(expected) >= 20
    for name, message in expected.items():
        with pytest.raises((InvalidInstance, InfeasibleSchedule)) as err:
            verify(inst, load_schedule(folder / name, FAMILY))
        assert message in str(err.value), (name, str(err.value))
        assert "\n" not in str(err.value), name


def test_python_built_values_are_validated_like_json():
    """Instances and schedules built in Python get the limits and value checks of JSON files."""
    from optsched.problems import cojob_network as cp
    job = Job(1, ((0, 0, 1.0),))
    with pytest.raises(InvalidInstance, match=r"^instance.cojobs\[0\].iterations\[0\]: must be <= "):
        Instance(1, (Cojob(0.0, (10**9,), (job,)),))
    with pytest.raises(InvalidInstance, match=r"MAX_VALUE"):
        Instance(1, (Cojob(1e300, (1,), (job,)),))
    with pytest.raises(InvalidInstance, match=r"MAX_VALUE|beyond the float range"):
        Instance(1, (Cojob(10**400, (1,), (job,)),))
    with pytest.raises(InvalidInstance, match=r"MAX_HORIZON"):
        Instance(1, (Cojob(0.0, (1,), (job,)),), capacity=1e-300)
    with pytest.raises(InvalidInstance, match=r"machines: must be an integer, got True"):
        Instance(True, (Cojob(0.0, (1,), (job,)),))
    assert cp.MAX_FLOW_INSTANCES >= 9 * 512_000           # well above the paper testbed
    with pytest.raises(InvalidInstance, match=r"^schedule.segments\[0\]\[2\]\[0\]\[3\]: must be >= 0"):
        Schedule((((0.0,),),), (Segment(0.0, 1.0, ((0, 0, 1, -1, 1.0),)),))
    with pytest.raises(InvalidInstance, match=r"^schedule.segments\[0\]\[2\]\[0\]\[4\]: must be fin"):
        Schedule((((0.0,),),), (Segment(0.0, 1.0, ((0, 0, 1, 0, math.nan),)),))
    with pytest.raises(InvalidInstance, match=r"^schedule.order\[1\]: duplicate stage"):
        Schedule((((0.0,),),), (), ((0, 0), (0, 0)))
    with pytest.raises(InvalidInstance, match=r"^schedule.starts\[0\]\[0\]\[0\]: must be finite"):
        Schedule((((math.inf,),),), ())
