"""ring_contention robustness (issue 15): every registered method runs to a status on every valid
instance, degenerate ones included (one server, a job needing every GPU, GPU counts no single
server holds, a horizon just long enough or too short, zero gradients and overheads); the issue's
failures as regression tests (tau = 0, a horizon too short, 1e308-scale and huge-integer values,
foreign schedules); the documented limits; a schedule-mutation property (verify rejects a mutated
schedule or recomputes its makespan, never crashes); and the broken instance and schedule corpora
under tests/data/ring_contention/broken/."""

from __future__ import annotations

import dataclasses
import json
import math
import time

import pytest
from hypothesis import HealthCheck, Phase, event, given, reject, settings
from hypothesis import strategies as st

from optsched.errors import InfeasibleSchedule, InvalidInstance
from optsched.io import load_instance, load_schedule, schedule_from_dict
from optsched.problems.ring_contention import simple_lower_bound
from optsched.problems import ring_contention as rc
from optsched.problems.ring_contention import Instance, Job, Schedule, slot_speed, verify
from optsched.registry import methods, solve
from optsched.result import SolveStatus
from optsched.solvers.ring_contention.exact import run_finish
from optsched.tolerance import exact
from optsched.workloads.ring_contention import generate

from tests.conftest import DATA
from tests.robust import every_method
from tests.timing import cpu_time

FAMILY = "ring_contention"
BROKEN = DATA / FAMILY / "broken"
ERRORS = (InvalidInstance, InfeasibleSchedule)
HEURISTIC = ("algorithm", "baseline")


@st.composite
def instances(draw):
    """1-3 servers of 1-4 GPUs, 1-3 jobs; G_j may be every GPU or more than any one server holds;
    zero gradients, overheads and FP times; the horizon just below, at or above a valid lower
    bound on the makespan (LB_len/LB_area/LB_conf), so both infeasible and tight instances occur."""
    servers = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    n_gpus = sum(servers)
    gpus = st.sampled_from(sorted({1, n_gpus, min(n_gpus, max(servers) + 1)})) | st.integers(1, n_gpus)
    jobs = tuple(Job(gpus=draw(gpus), iterations=draw(st.sampled_from([1, 3, 20, 60])),
                     grad_size=draw(st.sampled_from([0.0, 0.0, 0.01, 0.05])),
                     batch=draw(st.sampled_from([1, 16])),
                     fp_time=draw(st.sampled_from([0.0, 0.001])),
                     bp_time=draw(st.sampled_from([0.01, 0.05, 0.2])))
                 for _ in range(draw(st.integers(1, 3))))
    consts = dict(bw_inter=draw(st.sampled_from([0.5, 1.0])), bw_intra=10.0, reduce_speed=50.0,
                  alpha=draw(st.sampled_from([0.0, 0.1, 1.0])),
                  xi1=draw(st.sampled_from([1.0, 0.5])), xi2=draw(st.sampled_from([0.0, 0.01])))
    try:
        inst = Instance(servers=servers, jobs=jobs, horizon=rc.MAX_HORIZON, **consts)
    except InvalidInstance as err:  # only a job too slow at its worst contention may be refused
        assert "> 1 slot" in str(err), err
        reject()
    bound = max(simple_lower_bound(inst).values())
    horizon = draw(st.sampled_from([1, max(1, bound - 1), bound, bound + 1, 2 * bound + 5]))
    return dataclasses.replace(inst, horizon=horizon)


@pytest.fixture(scope="module", autouse=True)
def _warm():
    """Import Pyomo, HiGHS and OR-Tools before timing (the first exact solves load them)."""
    inst = generate("tiny", 0)
    solve(inst, "exact", time_limit=30)
    solve(inst, "exact_cp", time_limit=30)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck),
          phases=[Phase.explicit, Phase.generate])
@given(instances())
def test_every_method_runs_to_a_status(inst):
    """time_limit = 2 s; a few seconds each (the machine is shared, so 15 s wall are allowed).
    A method that says ``infeasible`` is never contradicted by a method that finds a schedule."""
    results = {}
    for m, res in every_method(FAMILY, inst):
        if res.schedule is not None:
            assert res.objective <= inst.horizon, m.name
        if m.kind in HEURISTIC:
            assert res.status is not SolveStatus.OPTIMAL, m.name
        results[m.name] = res
    event(f"exact: {results['exact'].status.value}")
    found = [n for n, r in results.items() if r.schedule is not None]
    said_infeasible = [n for n, r in results.items() if r.status is SolveStatus.INFEASIBLE]
    assert not (found and said_infeasible), (found, said_infeasible)


# ----------------------------------------------------------------------------------------------
# The concrete failures


def test_zero_iteration_time_is_an_invalid_instance_never_a_zero_division():
    """Issue 15: tau = 0 (no gradient, FP, BP or overhead) raised ZeroDivisionError, even in
    verify. It is refused on construction, from Python and from JSON alike."""
    inst = generate("tiny", 0)
    zero = dataclasses.replace(inst.jobs[0], gpus=1, grad_size=0.0, fp_time=0.0, bp_time=0.0)
    with pytest.raises(InvalidInstance, match=r"^instance.jobs\[1\]: per-iteration time 0 at n=1 "
                                              r"must be > 0"):
        dataclasses.replace(inst, jobs=(inst.jobs[1], zero), xi2=0.0)
    doc = inst.to_dict()
    doc["xi2"] = 0.0
    doc["jobs"][2].update(gpus=1, grad_size=0.0, fp_time=0.0, bp_time=0.0)
    with pytest.raises(InvalidInstance, match=r"^instance.jobs\[2\]: per-iteration time 0"):
        Instance.from_dict(doc)


@pytest.mark.parametrize("horizon", [1, 2])
def test_a_horizon_too_short_is_infeasible_for_every_method(horizon):
    """Issue 15: 'ring horizon too short -> a Pyomo error instead of status infeasible'. The
    heuristics used to say ``unknown``; a lower bound above T now proves ``infeasible``."""
    inst = dataclasses.replace(generate("tiny", 0), horizon=horizon)
    assert max(simple_lower_bound(inst).values()) > horizon
    for m in methods(FAMILY):
        if m.kind == "bound":
            continue
        start = cpu_time()
        res = solve(inst, m.name, time_limit=5)
        assert res.status is SolveStatus.INFEASIBLE, m.name
        assert res.schedule is None and cpu_time() - start < 15, m.name


def test_a_horizon_just_long_enough_is_feasible():
    """T = the optimal makespan: exact proves it, and no heuristic calls the instance infeasible."""
    base = generate("tiny", 1)
    opt = solve(base, "exact", time_limit=60)
    assert opt.status is SolveStatus.OPTIMAL
    inst = dataclasses.replace(base, horizon=int(opt.objective))
    again = solve(inst, "exact", time_limit=60)
    assert again.status is SolveStatus.OPTIMAL and again.objective == opt.objective
    for m in methods(FAMILY):
        if m.kind in HEURISTIC:
            res = solve(inst, m.name, time_limit=5)
            assert res.status in (SolveStatus.FEASIBLE, SolveStatus.UNKNOWN,
                                  SolveStatus.TIME_LIMIT), m.name


@pytest.mark.parametrize("field, value, message", [
    ("grad_size", 1e308, r"jobs\[0\].grad_size: must be <= 1e\+09 \(MAX_VALUE\), got 1e\+308"),
    ("grad_size", 10**400, r"jobs\[0\].grad_size: must be <= 1e\+09 \(MAX_VALUE\), got 100000\.\.\."
                           r"\(401 digits\)"),
    ("fp_time", math.nan, r"jobs\[0\].fp_time: must be finite, got nan"),
    ("bp_time", math.inf, r"jobs\[0\].bp_time: must be finite, got inf"),
    ("iterations", 10**15, r"jobs\[0\].iterations: must be <= 1000000000 \(MAX_ITERATIONS\)"),
    ("iterations", 1e15, r"jobs\[0\].iterations: must be <= 1000000000 \(MAX_ITERATIONS\)"),
    ("gpus", 10**400, r"jobs\[0\].gpus: must be <= 10000 \(MAX_GPUS\), got 100000\.\.\."),
    ("gpus", True, r"jobs\[0\].gpus: must be an integer, got True"),
    ("batch", 10**12, r"jobs\[0\].batch: must be <= 1000000000 \(MAX_BATCH\)"),
])
def test_python_built_jobs_meet_the_limits(field, value, message):
    """Issue 15: 1e308-scale values overflowed, integer literals beyond the float range raised
    OverflowError, sizes of 1e9-1e15 hung: each is refused on construction, naming the field."""
    inst = generate("tiny", 0)
    jobs = (dataclasses.replace(inst.jobs[0], **{field: value}),) + inst.jobs[1:]
    with pytest.raises(InvalidInstance, match="^instance." + message):
        dataclasses.replace(inst, jobs=jobs)


@pytest.mark.parametrize("field, value, message", [
    ("horizon", 10**9, r"horizon: must be <= 1000000 \(MAX_HORIZON\)"),
    ("horizon", math.inf, r"horizon: must be an integer, got inf"),
    ("servers", (10**9, 2), r"servers\[0\]: must be <= 1024 \(MAX_SERVER_GPUS\)"),
    ("servers", (1,) * 1001, r"servers: at most 1000 entries \(MAX_SERVERS\), got 1001"),
    ("servers", (1000,) * 11, r"servers: N = 11000 GPUs > 10000 \(MAX_GPUS\)"),
    ("bw_inter", 1e-300, r"bw_inter: must be >= 1e-09 \(MIN_POSITIVE\)"),
    ("alpha", -math.inf, r"alpha: must be finite"),
    ("xi2", 10**400, r"xi2: must be <= 1e\+09 \(MAX_VALUE\)"),
    ("xi1", True, r"xi1: must be a number, got True"),
    ("name", 5, r"name: must be a string, got int"),
])
def test_python_built_instances_meet_the_limits(field, value, message):
    inst = generate("tiny", 0)
    with pytest.raises(InvalidInstance, match="^instance." + message):
        dataclasses.replace(inst, **{field: value})


def test_too_many_jobs_and_speeds_beyond_max_speed_are_refused():
    inst = generate("tiny", 0)
    with pytest.raises(InvalidInstance, match=r"^instance.jobs: at most 1000 entries \(MAX_JOBS\)"):
        dataclasses.replace(inst, jobs=inst.jobs[:1] * 1001)
    fast = Job(gpus=1, iterations=10, grad_size=0.0, batch=1, fp_time=0.0, bp_time=1e-9)
    with pytest.raises(InvalidInstance, match=r"^instance.jobs\[0\]: per-iteration time 1e-09 at "
                                              r"n=1 gives 1e\+09 iterations per slot > 1000000"):
        dataclasses.replace(inst, jobs=(fast,), xi2=0.0)
    assert rc.MAX_SPEED * 0.01 >= 100  # the paper's tau (0.01-0.05 slot) is far inside


@pytest.mark.parametrize("overrides, message", [
    (dict(n_servers=10**9), r"^n_servers: must be an integer in \[1, 1000\] \(MAX_SERVERS\)"),
    (dict(sizes=(1,) * 5000), r"^sizes: must be a list of 1 to 1000 GPU counts \(MAX_JOBS\)"),
    (dict(rho_range=(1e9, 2e9)), r"^rho_range: no F x tau0 in .* after 10000 draws"),
    (dict(horizon=10**9), r"^instance.horizon: must be <= 1000000 \(MAX_HORIZON\)"),
    (dict(colour=1), r"^override colour: unknown"),
    (dict(f_range=("a", 1)), r"^overrides f_range: "),
])
def test_generator_overrides_are_checked_before_allocating(overrides, message):
    """``optsched worst --override`` reaches the generator: n_servers = 1e9 would draw 1e9
    capacities (8 GB) before the instance is validated, an unreachable rho_range would redraw
    forever, an unknown key raised TypeError. Each is now an InvalidInstance at once."""
    start = time.process_time()
    with pytest.raises(InvalidInstance, match=message):
        generate("paper", 0, **overrides)
    assert time.process_time() - start < 2


def test_limits_are_far_above_the_paper_setting():
    """Sec. 7: 20 servers of 4-32 GPUs, 160 jobs, F <= 6000, T = 1200 (Fig. 6: 1500)."""
    paper = generate("paper", 0, horizon=1500)
    assert paper.n_servers * 10 <= rc.MAX_SERVERS and max(paper.servers) * 10 <= rc.MAX_SERVER_GPUS
    assert len(paper.jobs) * 5 <= rc.MAX_JOBS and paper.n_gpus * 10 <= rc.MAX_GPUS
    assert paper.horizon * 100 <= rc.MAX_HORIZON
    assert max(j.iterations for j in paper.jobs) * 1000 <= rc.MAX_ITERATIONS


def test_verify_at_the_limits_is_event_driven():
    """Issue 15: 'even verify enumerates' a huge horizon. verify steps from event to event: a
    job started at slot T - 2 of T = MAX_HORIZON, and |J| = MAX_JOBS jobs spread one GPU per server
    over MAX_SERVERS servers, are checked in well under a second of CPU each."""
    one = Job(gpus=1, iterations=10, grad_size=0.0, batch=1, fp_time=0.0, bp_time=0.1)
    late = Instance(servers=(1,), jobs=(one,), bw_inter=1.0, bw_intra=10.0, reduce_speed=50.0,
                    alpha=0.1, xi1=1.0, xi2=0.0, horizon=rc.MAX_HORIZON)
    cpu = time.process_time()
    assert verify(late, Schedule((rc.MAX_HORIZON - 1,), ((1,),))) == rc.MAX_HORIZON
    with pytest.raises(InfeasibleSchedule, match=r"^\(9\) job 0 does not finish"):
        verify(dataclasses.replace(late, jobs=(dataclasses.replace(one, iterations=11),)),
               Schedule((rc.MAX_HORIZON - 1,), ((1,),)))
    S, J = rc.MAX_SERVERS, rc.MAX_JOBS
    wide = Job(gpus=10, iterations=1000, grad_size=0.01, batch=1, fp_time=0.001, bp_time=0.001)
    big = Instance(servers=(10,) * S, jobs=(wide,) * J, bw_inter=1.0, bw_intra=10.0,
                   reduce_speed=50.0, alpha=0.1, xi1=0.01, xi2=0.0001, horizon=rc.MAX_HORIZON)
    places = tuple(tuple(1 if (s - 10 * j) % S < 10 else 0 for s in range(S)) for j in range(J))
    sched = Schedule(tuple(range(0, 10 * J, 10)), places)
    value = verify(big, sched)
    assert value == max(run_finish(big, sched))
    assert time.process_time() - cpu < 10


def test_slot_speed_is_constant_time_for_tiny_tau():
    """phi = the largest k with k tau <= 1 in exact arithmetic (issue 22; tau read as the decimal
    it is written as): one exact floor division, whatever tau is."""
    for tau in (1e-12, 3.3e-9, 1e-6, 0.04000000000000001):
        start = time.process_time()
        k = slot_speed(tau)
        assert time.process_time() - start < 0.1
        assert k * exact(tau) <= 1 < (k + 1) * exact(tau)


def test_verify_refuses_objects_of_another_family_and_patched_values():
    """Issue 15: verify(inst, schedule of another family) raised AttributeError."""
    inst = generate("tiny", 0)
    sched = solve(inst, "sjf_bco").schedule
    from optsched.workloads.hetero_gpu import generate as generate_hetero
    other_inst = generate_hetero("tiny", 0)
    other = solve(other_inst, "hare").schedule
    with pytest.raises(InfeasibleSchedule, match="^schedule: must be a ring_contention Schedule"):
        verify(inst, other)
    with pytest.raises(InvalidInstance, match="^instance: must be a ring_contention Instance"):
        verify(other_inst, sched)
    patched = Schedule(sched.starts, sched.placements)
    object.__setattr__(patched, "starts", (math.nan,) + sched.starts[1:])
    with pytest.raises(InvalidInstance, match=r"^schedule.jobs\[0\].start: must be an integer, got nan"):
        verify(inst, patched)


@pytest.mark.parametrize("starts, placements, message", [
    ((math.nan, 0, 0), ((2, 0), (0, 2), (1, 0)), r"jobs\[0\].start: must be an integer, got nan"),
    ((0, math.inf, 0), ((2, 0), (0, 2), (1, 0)), r"jobs\[1\].start: must be an integer, got inf"),
    ((0, 0, -1), ((2, 0), (0, 2), (1, 0)), r"jobs\[2\].start: must be >= 0, got -1"),
    ((0, 0, 10**400), ((2, 0), (0, 2), (1, 0)), r"jobs\[2\].start: must be <= 999999 "
                                                r"\(MAX_HORIZON\), got 100000\.\.\."),
    ((0, 0, 2), ((2, 0), (0, 2.5), (1, 0)), r"jobs\[1\].placement\[1\]: must be an integer"),
    ((0, 0, 2), ((2, 0), (0, 2), (True, 0)), r"jobs\[2\].placement\[0\]: must be an integer, got True"),
    ((0, 0, 2), ((2, 0), (0, 2)), r"placements: must have one placement per start \(3\), got 2"),
    ((0, 0, 2), ((2, 0), (0, 2), 1), r"jobs\[2\].placement: must be a list, got int"),
])
def test_python_built_schedules_are_validated(starts, placements, message):
    """Issue 15: schedules built in Python were never validated (NaN/inf times, fractional or
    negative counts)."""
    with pytest.raises(InvalidInstance, match="^schedule." + message):
        Schedule(starts, placements)


@pytest.fixture(scope="module")
def two():
    return load_instance(DATA / FAMILY / "two_jobs.json")


def test_numpy_integers_are_accepted_and_normalised(two):
    import numpy as np
    sched = Schedule(tuple(np.int64(a) for a in (0, 0, 2)),
                     tuple(tuple(np.int64(y) for y in c) for c in ((2, 0), (0, 2), (1, 0))))
    assert all(type(a) is int for a in sched.starts) and verify(two, sched) == 4.0


# ----------------------------------------------------------------------------------------------
# Schedule mutation: verify rejects a mutated schedule or recomputes its makespan, never crashes

NUMBERS = st.one_of(st.integers(-2, 8), st.sampled_from(
    [math.nan, math.inf, -math.inf, 0.5, 2.0, 1e300, 10**30, 10**400, True, False, None, "1",
     (1,), 39, 40, 10**6]))

_BASE: dict[int, tuple] = {}


def _base(seed: int):
    if seed not in _BASE:
        inst = generate("tiny", seed)
        _BASE[seed] = (inst, solve(inst, "sjf_bco").schedule)
    return _BASE[seed]


def _mutate(sched: Schedule, data) -> tuple[list, list]:
    starts, places = list(sched.starts), [list(c) for c in sched.placements]
    j = data.draw(st.integers(0, len(starts) - 1), "job")
    kind = data.draw(st.sampled_from(["start", "entry", "shift", "drop_entry", "add_entry",
                                      "drop_job", "dup_job", "swap"]), "kind")
    if kind == "start":
        starts[j] = data.draw(NUMBERS, "start")
    elif kind == "entry":
        places[j][data.draw(st.integers(0, len(places[j]) - 1))] = data.draw(NUMBERS, "y")
    elif kind == "shift":  # one GPU moved to another server: (1) still holds, (2)/(6) may not
        s, t = data.draw(st.permutations(range(len(places[j]))))[:2]
        if places[j][s] > 0 and s != t:
            places[j][s] -= 1
            places[j][t] += 1
    elif kind == "drop_entry":
        places[j].pop()
    elif kind == "add_entry":
        places[j].append(data.draw(NUMBERS, "y"))
    elif kind == "drop_job":
        del starts[j], places[j]
    elif kind == "dup_job":
        starts.append(starts[j])
        places.append(places[j])
    else:
        k = data.draw(st.integers(0, len(starts) - 1), "other")
        places[j], places[k] = places[k], places[j]
    return starts, places


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(0, 7), st.data())
def test_schedule_mutation_is_rejected_or_recomputed(seed, data):
    """The mutated schedule is refused on construction (InvalidInstance naming the field), or by
    verify (InfeasibleSchedule naming the equation), or verify's makespan equals the solvers'
    independent event simulation (run_finish) and lies within the horizon."""
    inst, sched = _base(seed)
    starts, places = _mutate(sched, data)
    try:
        mutated = Schedule(tuple(starts), tuple(places))
    except InvalidInstance as err:
        assert str(err).startswith("schedule.") and "\n" not in str(err)
        event("refused on construction")
        return
    try:
        value = verify(inst, mutated)
    except InfeasibleSchedule as err:
        assert str(err).startswith("(") and "\n" not in str(err)
        event(f"verify: {str(err)[:3]}")
        return
    event("recomputed")
    assert math.isfinite(value) and 1 <= value <= inst.horizon
    assert value == max(run_finish(inst, mutated))


# ----------------------------------------------------------------------------------------------
# Hand-written corpora: broken/ (instances, also checked by tests/test_contract.py) and
# broken/schedules/ (schedules of two_jobs.json; good.json is the valid one they each break)


def _expected(folder):
    return json.loads((folder / "expected.json").read_text())


def test_broken_instance_corpus():
    expected = _expected(BROKEN)
    assert len(expected) >= 45
    for name, message in expected.items():
        start = cpu_time()
        with pytest.raises(InvalidInstance) as err:
            load_instance(BROKEN / name)
        assert message in str(err.value), (name, str(err.value))
        assert "\n" not in str(err.value) and cpu_time() - start < 2.0, name


def test_the_schedule_corpus_breaks_a_valid_schedule(two):
    assert verify(two, load_schedule(BROKEN / "schedules" / "good.json", FAMILY)) == 4.0


@pytest.mark.parametrize("name, expect", sorted(_expected(BROKEN / "schedules").items()))
def test_broken_schedule_files_name_the_field(two, name, expect):
    with pytest.raises(ERRORS) as err:
        verify(two, load_schedule(BROKEN / "schedules" / name, FAMILY))
    assert expect in str(err.value) and "\n" not in str(err.value)


def test_broken_schedule_corpus_size():
    assert len(_expected(BROKEN / "schedules")) >= 30


def test_schedule_json_round_trip_keeps_validation(two):
    sched = solve(two, "sjf_bco").schedule
    doc = json.loads(json.dumps(sched.to_dict()))
    assert schedule_from_dict(doc, FAMILY) == sched
    doc["jobs"][0]["start"] = 2.5
    with pytest.raises(InvalidInstance, match=r"^schedule.jobs\[0\].start: must be an integer"):
        schedule_from_dict(doc, FAMILY)


def test_exact_and_lower_bound_say_infeasible_when_the_bound_exceeds_the_horizon():
    """Found by the property above: with T = 1, exact's stage 1 built the model at H = the lower
    bound (> T) and returned a schedule past the horizon; lower_bound said optimal."""
    from optsched.problems.ring_contention import Instance, Job

    inst = Instance(servers=(1, 3), jobs=(Job(2, 60, 0.05, 1, 0.0, 0.01), Job(2, 3, 0.0, 1, 0.0, 0.05),
                                          Job(1, 60, 0.01, 1, 0.0, 0.05)),
                    bw_inter=1.0, bw_intra=10.0, reduce_speed=50.0, alpha=0.0, xi1=0.5, xi2=0.01,
                    horizon=1)
    for name in ("exact", "lower_bound"):
        res = solve(inst, name, time_limit=2)
        assert res.status is SolveStatus.INFEASIBLE and res.schedule is None, name
    assert solve(inst, "lower_bound").lower_bound > inst.horizon
