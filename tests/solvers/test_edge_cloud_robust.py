"""edge_cloud robustness (issue 15): every registered method runs to a status on every valid
instance, degenerate ones included (one server, no server that can host both a worker and a PS,
late arrivals, zero update and gradient sizes, delays of 0 and large delays); the issue's failures
as regression tests; documented limits refused at load; schedules validated like instances; a
schedule-mutation property (verify rejects a mutated schedule or recomputes its objective, it never
crashes); the broken-schedule corpus; and the CLI on broken files (exit code 2, one line)."""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from optsched.errors import InfeasibleSchedule, InvalidInstance
from optsched.io import dumps, load_schedule
from optsched.problems import edge_cloud as ec
from optsched.problems.edge_cloud import Instance, Job, Run, Schedule, verify, verify_preemptive
from optsched.registry import methods, solve
from optsched.result import SolveStatus
from optsched.solvers.edge_cloud.baselines import colocation_gap
from optsched.workloads.edge_cloud import generate

from tests.robust import every_method
from tests.timing import cpu_time

FAMILY = "edge_cloud"
BROKEN = Path(__file__).parents[1] / "data" / FAMILY / "broken"
COMM_HALF = 0.5 * 1000 * 3600 / 16  # grad_mb giving 2k/B = 0.5 slot at 1000 Mbps
CO_LOCATING = ("fifo", "drf", "greedy_ect")  # place each job's PS with a worker on one server


@st.composite
def instances(draw):
    """Small valid instances; about a third have no server with both a worker and a PS slot."""
    S = draw(st.integers(1, 3))
    U, V = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    split = S > 1 and draw(st.booleans())  # workers only on server 0, PSs only elsewhere
    workers = tuple(tuple(0 if split and s else draw(st.sampled_from([0, 1, 2, 4]))
                          for _ in range(U)) for s in range(S))
    ps = tuple(tuple(0 if split and not s else draw(st.sampled_from([0, 1, 2]))
                     for _ in range(V)) for s in range(S))
    jobs = tuple(Job(
        arrival=draw(st.sampled_from([1, 1, 2, 5, 40, 1000])),
        worker_type=draw(st.integers(0, U - 1)), ps_type=draw(st.integers(0, V - 1)),
        epochs=draw(st.integers(1, 2)), chunks=draw(st.integers(1, 3)),
        minibatches=draw(st.integers(1, 3)), compute=draw(st.sampled_from([0.25, 0.5, 1.0])),
        update=draw(st.sampled_from([0.0, 0.0, 0.01])),
        grad_mb=draw(st.sampled_from([0.0, COMM_HALF])), bandwidth=1000.0,
        delay=tuple(draw(st.sampled_from([0, 0, 1, 3, 60])) for _ in range(S)))
        for _ in range(draw(st.integers(1, 3))))
    try:
        return Instance(workers, ps, jobs, horizon=draw(st.sampled_from([1, 8, 64])),
                        cloud=(S - 1,))
    except InvalidInstance as err:  # only "no server has a type-u worker / type-v PS" may refuse
        assert "no server has" in str(err), err
        reject()


@pytest.fixture(scope="module", autouse=True)
def _warm():
    """Import Pyomo, HiGHS and OR-Tools before timing (the first exact solves load them)."""
    for name in ("exact", "exact_cp", "lower_bound"):
        solve(generate("tiny", 0), name, time_limit=30)


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(instances())
def test_every_method_runs_to_a_status(inst):
    opt = None
    results = {}
    for m, res in every_method(FAMILY, inst):
        results[m.name] = res
        assert res.status is not SolveStatus.INFEASIBLE, m.name  # every valid instance is feasible
        if m.name in CO_LOCATING:
            gap = colocation_gap(inst, m.name)
            assert (res.status is SolveStatus.UNKNOWN) == (gap is not None), (m.name, res.info)
        elif m.kind in ("algorithm", "baseline"):
            assert res.status in (SolveStatus.FEASIBLE, SolveStatus.TIME_LIMIT), (m.name, res.info)
        if m.name == "exact" and res.status is SolveStatus.OPTIMAL:
            opt = res.objective
    if opt is not None:  # OPT(2) <= every method of model (2); the bound <= OPT
        for name, res in results.items():
            method = next(m for m in methods(FAMILY) if m.name == name)
            if res.schedule is not None and method.verify is None:
                assert res.objective >= opt - 1e-6, name
        bound = results["lower_bound"].lower_bound
        assert bound is None or bound <= opt + 1e-6


# ------------------------------------------------------------------------ the issue's failures
ISSUE = {"family": "edge_cloud", "format_version": 1, "workers": [[0], [1]], "ps": [[1], [0]],
         "horizon": 8, "jobs": [{"arrival": 1, "worker_type": 0, "ps_type": 0, "epochs": 1,
                                 "chunks": 1, "minibatches": 1, "compute": 0.5, "update": 0.0,
                                 "grad_mb": 0.0, "bandwidth": 1000.0, "delay": [0, 0]}]}


def test_issue15_no_server_hosts_worker_and_ps():
    """Issue 15: exact, fifo, drf raised 'baseline simulation exceeded MAX_SLOTS' and greedy_ect
    ran for 15 min. Now exact proves 0 (the split run verifies), the co-locating baselines say
    ``unknown`` with the reason at once, every other method schedules it."""
    inst = Instance.from_dict(ISSUE)
    for m in methods(FAMILY):
        start = cpu_time()
        res = solve(inst, m.name, time_limit=10)
        assert cpu_time() - start < 10, m.name
        if m.name in CO_LOCATING:
            assert res.status is SolveStatus.UNKNOWN and "no server with both" in res.info["reason"]
        else:
            assert res.status in (SolveStatus.FEASIBLE, SolveStatus.OPTIMAL), (m.name, res.info)
    assert solve(inst, "exact").objective == 0.0
    assert verify(inst, Schedule.single([Run(1, 1, 0, ((1, 1),))])) == 0.0


@pytest.mark.parametrize("field,value", [("arrival", ec.MAX_HORIZON), ("delay", (ec.MAX_HORIZON,) * 2)])
def test_issue15_late_arrivals_and_long_delays_are_scheduled(field, value):
    """Issue 15: huge arrivals/delays gave RuntimeError; the slot-stepping baselines also hit
    MAX_SLOTS at an arrival of 1e6. Idle stretches are now skipped: every method runs to a status
    within the limit, and the baselines finish at once."""
    base = Job(1, 0, 0, 1, 2, 2, 0.5, 0.0, COMM_HALF, 1000.0, (1, 3))
    late = dataclasses.replace(base, **{field: value})
    inst = Instance(((2,), (4,)), ((1,), (1,)), (late, base), horizon=16, cloud=(1,))
    for m in methods(FAMILY):
        start = cpu_time()
        res = solve(inst, m.name, time_limit=5)
        took = cpu_time() - start
        assert took < 20, (m.name, took)
        assert res.status is not SolveStatus.INFEASIBLE, m.name
        if m.name in CO_LOCATING + ("preemptive", "preemptive_overhead"):  # the simulations
            assert res.status is SolveStatus.FEASIBLE and took < 2, (m.name, took, res.info)
            if field == "delay" and m.name != "preemptive":  # (preemptive ignores Delta)
                assert res.objective >= ec.MAX_HORIZON, m.name       # (2i): data ready at 1e6+1


@pytest.mark.parametrize("field,value,message", [
    ("arrival", 10**9, r"arrival: must be <= 1000000 \(MAX_HORIZON\)"),
    ("delay", (1, 10**9), r"delay\[1\]: must be <= 1000000 \(MAX_HORIZON\)"),
    ("epochs", 10**10, r"epochs: must be <= 1000000000 \(MAX_WORK\)"),
    ("epochs", 10**9, r"one worker needs 6.708e\+08 slots .* \(MAX_DURATION\)"),
    ("minibatches", 10**15, r"minibatches: must be <= 1000000000 \(MAX_WORK\)"),
    ("chunks", 10**9, r"chunks: must be <= 1000 \(MAX_CHUNKS\)"),
    ("compute", 1e308, r"compute: must be <= 1e\+09 \(MAX_VALUE\)"),
    ("grad_mb", 10**400, r"grad_mb: must be <= 1e\+09 \(MAX_VALUE\), got 100000\.\.\.\(401 digits\)"),
    ("bandwidth", 1e-300, r"bandwidth: must be >= 1e-09 \(MIN_POSITIVE\)"),
    ("compute", float("nan"), "compute: must be finite"),
    ("update", float("inf"), "update: must be finite"),
    ("epochs", True, "epochs: must be an integer, got True"),
    ("compute", 1e6, r"\(MAX_DURATION\)"),
])
def test_huge_or_invalid_job_values_are_refused_at_load(field, value, message):
    """Issue 15: sizes of 1e9-1e15 hung, 1e308 and integers beyond the float range overflowed."""
    inst = generate("tiny", 0)
    jobs = (dataclasses.replace(inst.jobs[0], **{field: value}),) + inst.jobs[1:]
    start = cpu_time()
    with pytest.raises(InvalidInstance, match=r"^instance\.jobs\[0\]" + r".*" + message):
        dataclasses.replace(inst, jobs=jobs)
    assert cpu_time() - start < 1


@pytest.mark.parametrize("changes,message", [
    ({"horizon": 10**18}, r"instance.horizon: must be <= 1000000 \(MAX_HORIZON\)"),
    ({"f1": 1e308}, r"instance.f1: must be <= 1e\+09 \(MAX_VALUE\)"),
    ({"f2": float("nan")}, "instance.f2: must be finite"),
    ({"cloud": (1, 1)}, r"instance.cloud\[1\]: duplicate server 1"),
    ({"workers": ((10**12,), (2,))}, r"instance.workers\[0\]\[0\]: must be <= 1000000 \(MAX_CAPACITY\)"),
    ({"workers": ((1,) * 101,) * 2}, r"instance.workers\[0\]: must have at most 100 entries \(MAX_TYPES\)"),
])
def test_huge_or_invalid_instance_values_are_refused_at_load(changes, message):
    with pytest.raises(InvalidInstance, match=message):
        dataclasses.replace(generate("tiny", 0), **changes)


@pytest.mark.parametrize("key,value,message", [
    ("n_jobs", 10**9, r"overrides.n_jobs: must be <= 10000 \(MAX_JOBS\)"),
    ("n_edge", 10**12, r"overrides.n_edge: must be <= 9999 \(MAX_SERVERS\)"),
    ("horizon", True, "overrides.horizon: must be an integer, got True"),
    ("cloud_slots", -1, "overrides.cloud_slots: must be >= 0, got -1"),
])
def test_generator_size_overrides_are_refused_before_drawing(key, value, message):
    """``optsched worst --override n_jobs=1e9`` would loop before the instance's checks."""
    start = cpu_time()
    with pytest.raises(InvalidInstance, match=message):
        generate("paper", 0, **{key: value})
    assert cpu_time() - start < 1


def test_python_built_values_are_normalised():
    """numpy integers and integral floats become ints, so Python-built objects equal JSON ones."""
    import numpy as np
    inst = generate("tiny", 0)
    job = dataclasses.replace(inst.jobs[0], arrival=np.int64(1), epochs=1.0,
                              delay=[np.int32(2), 2])
    built = dataclasses.replace(inst, jobs=(job,) + inst.jobs[1:])
    assert built == inst and type(built.jobs[0].arrival) is int
    run = Run(np.int64(3), 3.0, np.int64(0), [[np.int64(0), 1]])
    assert Schedule([[run]]).runs == ((Run(3, 3, 0, ((0, 1),)),),)


# ------------------------------------------------------------------- schedules like instances
@pytest.mark.parametrize("run,message", [
    (Run(float("nan"), 3, 0, ((0, 1),)), r"schedule.jobs\[0\]\[0\].start: must be an integer, got nan"),
    (Run(3, float("inf"), 0, ((0, 1),)), r"schedule.jobs\[0\]\[0\].end: must be an integer, got inf"),
    (Run(3, 10**20, 0, ((0, 1),)), r"schedule.jobs\[0\]\[0\].end: must be <= 1000000000000 \(MAX_SLOT\)"),
    (Run(0, 3, 0, ((0, 1),)), r"schedule.jobs\[0\]\[0\].start: must be >= 1, got 0"),
    (Run(3, 3, -1, ((0, 1),)), r"schedule.jobs\[0\]\[0\].ps: must be >= 0, got -1"),
    (Run(3, 3, True, ((0, 1),)), r"schedule.jobs\[0\]\[0\].ps: must be an integer, got True"),
    (Run(3, 3, 0, ((-1, 1),)), r"schedule.jobs\[0\]\[0\].workers\[0\]\[0\]: must be >= 0, got -1"),
    (Run(3, 3, 0, ((0, 1.5),)), r"schedule.jobs\[0\]\[0\].workers\[0\]\[1\]: must be an integer"),
    (Run(3, 3, 0, ((0, 0),)), r"schedule.jobs\[0\]\[0\].workers\[0\]\[1\]: must be >= 1, got 0"),
    (Run(3, 3, 0, ((0, float("nan")),)), r"schedule.jobs\[0\]\[0\].workers\[0\]\[1\]: must be an integer"),
    (Run(3, 3, 0, ((0, 1), (0, 1))), r"schedule.jobs\[0\]\[0\].workers\[1\]\[0\]: duplicate server 0"),
    (Run(3, 3, 0, ()), r"schedule.jobs\[0\]\[0\].workers: must not be empty"),
])
def test_python_built_schedules_are_validated(run, message):
    """Issue 15: NaN/inf slots, negative indices and fractional worker counts in Python-built
    schedules reached verify."""
    with pytest.raises(InvalidInstance, match=message):
        Schedule.single([run])


def test_format_version_true_and_foreign_objects_are_refused():
    inst = generate("tiny", 0)
    sched = solve(inst, "greedy_ect").schedule
    for doc, cls, what in ((inst.to_dict(), Instance, "instance"),
                           (sched.to_dict(), Schedule, "schedule")):
        doc["format_version"] = True
        with pytest.raises(InvalidInstance, match=f"{what}.format_version: expected 1, got True"):
            cls.from_dict(doc)
    from optsched.workloads.cojob_network import generate as generate_cojob
    other = solve(generate_cojob("tiny", 0), "grouper").schedule
    for check in (verify, verify_preemptive):
        with pytest.raises(InfeasibleSchedule, match="must be an edge_cloud Schedule"):
            check(inst, other)
        with pytest.raises(InvalidInstance, match="must be an edge_cloud Instance"):
            check(generate_cojob("tiny", 0), sched)


def test_verify_rechecks_a_patched_schedule():
    """A frozen Schedule can still be patched with object.__setattr__; verify re-validates it."""
    inst = generate("tiny", 0)
    sched = solve(inst, "greedy_ect").schedule
    run = sched.runs[0][0]
    object.__setattr__(run, "end", float("nan"))
    with pytest.raises(InvalidInstance, match=r"schedule.jobs\[0\]\[0\].end: must be an integer"):
        verify(inst, sched)


# ------------------------------------------------------------------------ schedule mutation
NUMBERS = st.one_of(st.integers(-3, 12), st.sampled_from(
    [float("nan"), float("inf"), -float("inf"), 0.5, 2.0, 1e300, 10**30, True, False, None, "1"]))
_BASE: dict[int, tuple] = {}


def _base(seed: int) -> tuple:
    if seed not in _BASE:
        inst = generate("tiny", seed)
        _BASE[seed] = (inst, solve(inst, "a_online_model").schedule)
    return _BASE[seed]


def _mutate(runs: list[list[Run]], data) -> None:
    """One mutation of a number, an index, a worker pair or the run/job structure, in place."""
    j = data.draw(st.integers(0, len(runs) - 1))
    run = runs[j][0]
    kind = data.draw(st.sampled_from(["start", "end", "ps", "server", "count", "add_pair",
                                      "drop_pair", "drop_job", "dup_job", "add_run", "shift"]))
    if kind in ("start", "end", "ps"):
        runs[j][0] = dataclasses.replace(run, **{kind: data.draw(NUMBERS)})
    elif kind in ("server", "count"):
        pairs = [list(p) for p in run.workers]
        pairs[data.draw(st.integers(0, len(pairs) - 1))][kind == "count"] = data.draw(NUMBERS)
        runs[j][0] = dataclasses.replace(run, workers=tuple(map(tuple, pairs)))
    elif kind == "add_pair":
        runs[j][0] = dataclasses.replace(run, workers=run.workers + ((data.draw(NUMBERS),
                                                                       data.draw(NUMBERS)),))
    elif kind == "drop_pair":
        runs[j][0] = dataclasses.replace(run, workers=run.workers[1:])
    elif kind == "drop_job":
        runs.pop(j)
    elif kind == "dup_job":
        runs.append(list(runs[j]))
    elif kind == "add_run":
        runs[j].append(dataclasses.replace(run, start=run.end + 1, end=run.end + 1))
    else:
        delta = data.draw(st.integers(-3, 3))
        runs[j][0] = dataclasses.replace(run, start=run.start + delta, end=run.end + delta)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(0, 5), st.data())
def test_schedule_mutation_is_rejected_or_recomputed(seed, data):
    inst, sched = _base(seed)
    runs = [list(r) for r in sched.runs]
    _mutate(runs, data)
    try:
        mutated = Schedule(tuple(tuple(r) for r in runs))
    except InvalidInstance:
        return                                  # refused on construction, naming the field
    for check, single in ((verify, True), (verify_preemptive, False)):
        try:
            value = check(inst, mutated)
        except InfeasibleSchedule:
            continue
        assert math.isfinite(value)
        if single:
            assert all(len(r) == 1 for r in mutated.runs)
        assert value == sum(max(r.end for r in rs) - job.arrival
                            for rs, job in zip(mutated.runs, inst.jobs))


# ------------------------------------------------------------------------ broken corpora
def _expected(folder: Path) -> dict:
    return json.loads((folder / "expected.json").read_text())


@pytest.mark.parametrize("name", sorted(_expected(BROKEN / "schedules")))
def test_broken_schedules_are_refused_with_the_field(name):
    """Each hand-written broken schedule (for tiny seed 0) is refused by loading or by verify,
    in one line naming the field or the violated equation."""
    expected = _expected(BROKEN / "schedules")[name]
    with pytest.raises((InvalidInstance, InfeasibleSchedule)) as err:
        verify(generate("tiny", 0), load_schedule(BROKEN / "schedules" / name, FAMILY))
    assert expected in str(err.value) and "\n" not in str(err.value)


def test_broken_corpus_size():
    assert len(_expected(BROKEN)) >= 50
    assert len(_expected(BROKEN / "schedules")) >= 35


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "optsched.cli", *args], capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize("name", ["compute_nan.json", "arrival_1e9.json", "grad_mb_1e300_int.json",
                                  "family_list.json", "long_run.json"])
def test_cli_solve_broken_instance(name):
    start = cpu_time()
    proc = _cli("solve", str(BROKEN / name))
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert _expected(BROKEN)[name] in proc.stderr
    assert cpu_time() - start < 20  # one interpreter start-up (the child's CPU time)


@pytest.mark.parametrize("name", ["start_nan.json", "workers_duplicate_server.json",
                                  "end_1e300_int.json", "wrong_family.json", "capacity_overlap.json"])
def test_cli_verify_broken_schedule(name, tmp_path):
    inst = tmp_path / "tiny0.json"
    inst.write_text(dumps(generate("tiny", 0)))
    start = cpu_time()
    proc = _cli("verify", str(inst), str(BROKEN / "schedules" / name))
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert _expected(BROKEN / "schedules")[name] in proc.stderr
    assert cpu_time() - start < 20
