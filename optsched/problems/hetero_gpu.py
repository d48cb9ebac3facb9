"""hetero_gpu — Hare (Chen et al., HPDC'22; paper 004): tasks of PS jobs on heterogeneous GPUs.

Problem Hare_Sched (paper Sec. 5.1): job ``n`` arrives at ``a_n`` with weight ``w_n`` and has ``R_n``
training rounds of ``K_n`` tasks each (relaxed fixed-scale synchronisation). Task ``i`` of job ``n``
computes for ``T^c_{n,m}`` on GPU ``m`` and then synchronises for ``T^s_{n,m}``. Times depend on (job,
GPU) only, as in the paper's setting (every task of a job inherits the job's rows).

Semantics (kept identical in :func:`verify`, the exact model and every algorithm):

- a task on GPU ``m`` starting at ``x`` occupies ``m`` during ``[x, x + T^c)`` only (constraint (8));
  its synchronisation ``[x + T^c, x + T^c + T^s)`` uses the network and may overlap the next task on
  ``m`` (Algorithm 1 line 16);
- the task finishes at ``f = x + T^c + T^s``; round ``r+1`` of a job starts only after every task of
  round ``r`` finished (barrier (7)); ``C_n`` is the latest finish of a task of job ``n`` ((6));
- objective: ``sum_n w_n C_n`` (absolute completion times, as the paper optimises).

Tolerance (:mod:`optsched.tolerance`): a start may precede its arrival (4), its round's barrier (7)
or the end of the previous compute on its GPU (8) by ``slack`` of that time (``at_least``). The
tolerance decides acceptance only: :func:`verify` charges ``C_n`` of the exactly feasible re-timing
(:func:`completion_times`), so slack added up along a chain never lowers the objective.

Limits (issue 15): every instance and schedule is checked against the ``MAX_*`` constants below on
construction, with a message naming the field and the constant, so no input makes verify or a method
enumerate billions of tasks, overflow to ``inf`` or lose the time resolution of (4)/(7)/(8).
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from optsched.problems.bars import Bar
from optsched.problems.fields import (Reader, as_float, as_int, check_types, fail, infeasible,
                                      readonly, sequence)
from optsched.tolerance import at_least

FAMILY = "hetero_gpu"
FORMAT_VERSION = 1

JOB_FIELDS = ("arrival", "weight", "rounds", "tasks_per_round", "train_time", "sync_time")

# Resource limits (issue 15), checked when an Instance or Schedule is constructed (from JSON or in
# Python). The paper preset (Sec. 7; workloads.hetero_gpu.paper) is far below them: 160 GPUs,
# 100-300 jobs, K_n <= 8, rounds <= 20 (<= 12,300 tasks; 41,220 with max_rounds=100), times
# 5e-4..1e3 s, arrivals <= 5,400 s, serial horizon / shortest T^c <= 2.3e6 (7.3e6 at max_rounds=100).
#: GPUs M (the length of every T^c / T^s row).
MAX_GPUS = 10_000
#: Jobs N.
MAX_JOBS = 10_000
#: Tasks sum_n R_n K_n, and so R_n and K_n of one job: verify, the instance's task list and every
#: method enumerate them (1e6 tasks: ~0.5 GB for the task list, its set and verify's dicts).
MAX_TASKS = 200_000
#: Every real number: a_n, w_n, T^c, T^s (seconds in the paper preset).
MAX_VALUE = 1e12
#: Every nonzero real number is >= this (ratios such as Lemma 3's alpha stay finite).
MIN_POSITIVE = 1e-12
#: The serial horizon (latest arrival + every task's slowest compute + sync, run one after the
#: other, which bounds every start a list schedule makes) over the shortest T^c. Beyond it a time
#: of the schedule loses the resolution (4), (7), (8) need, and big-M models lose feasibility.
MAX_TIME_RANGE = 1e8
#: A schedule's start times, in magnitude (so ``x + T^c + T^s`` and ``sum_n w_n C_n`` stay finite);
#: verify also refuses starts beyond the instance's own resolution (MAX_TIME_RANGE x shortest T^c).
MAX_START = 1e18


@dataclass(frozen=True)
class Job:
    """One training job: arrival ``a_n``, weight ``w_n``, ``rounds`` = |R_n|, ``tasks_per_round`` = K_n,
    per-GPU compute ``train_time`` = T^c_{n,.} (> 0) and ``sync_time`` = T^s_{n,.} (>= 0)."""

    arrival: float
    weight: float
    rounds: int
    tasks_per_round: int
    train_time: tuple[float, ...]
    sync_time: tuple[float, ...]
    model: str = ""

    def __post_init__(self) -> None:
        """Normalisation only (lists become tuples). The checks need the GPU count, so
        :class:`Instance` runs them (:func:`_checked_job`)."""
        for key in ("train_time", "sync_time"):
            value = getattr(self, key)
            if isinstance(value, list):
                object.__setattr__(self, key, tuple(value))

    def to_dict(self) -> dict:
        d: dict[str, Any] = {k: getattr(self, k) for k in JOB_FIELDS}
        d["train_time"], d["sync_time"] = list(self.train_time), list(self.sync_time)
        if self.model:
            d["model"] = self.model
        return d

    @classmethod
    def read(cls, r: Reader) -> "Job":
        """Read the JSON fields (keys, list shapes); the values are checked by :class:`Instance`
        (so a JSON-loaded and a Python-built job meet the same checks and limits)."""
        return cls(
            arrival=r.data["arrival"], weight=r.data["weight"], rounds=r.data["rounds"],
            tasks_per_round=r.data["tasks_per_round"], train_time=tuple(r.list("train_time")),
            sync_time=tuple(r.list("sync_time")), model=r.str("model") if r.has("model") else "",
        )


@dataclass(frozen=True)
class Instance:
    """A Hare_Sched instance: GPU type names and jobs. Tasks are ``(n, r, k)``.

    Every instance, loaded from JSON or built in Python, is validated on construction
    (:meth:`__post_init__`).
    """

    gpus: tuple[str, ...]
    jobs: tuple[Job, ...]
    name: str = ""
    FAMILY = FAMILY

    def __post_init__(self) -> None:
        """Validate (docs/dev/design.md, "Instance JSON") and normalise: a wrong type, a negative or zero size,
        an inconsistent length or a value beyond a ``MAX_*`` limit raises InvalidInstance naming the
        field, e.g. ``instance.jobs[1].train_time: must have 2 entries, got 1``. Lists become tuples,
        numbers the field's type (int sizes, float times), so JSON-loaded and Python-built
        instances compare equal."""
        gpus = tuple(sequence(self.gpus, "instance.gpus"))
        if not gpus:
            fail("instance.gpus", "must not be empty")
        if len(gpus) > MAX_GPUS:
            fail("instance.gpus", f"at most {MAX_GPUS} GPUs (MAX_GPUS), got {len(gpus)}")
        for m, g in enumerate(gpus):
            if not isinstance(g, str):
                fail(f"instance.gpus[{m}]", f"must be a string (GPU type), got {g!r}")
        jobs = tuple(sequence(self.jobs, "instance.jobs"))
        if not jobs:
            fail("instance.jobs", "must not be empty")
        if len(jobs) > MAX_JOBS:
            fail("instance.jobs", f"at most {MAX_JOBS} jobs (MAX_JOBS), got {len(jobs)}")
        checked = []
        for n, job in enumerate(jobs):
            if not isinstance(job, Job):
                fail(f"instance.jobs[{n}]", f"must be a Job, got {type(job).__name__}")
            checked.append(_checked_job(job, f"instance.jobs[{n}]", len(gpus)))
        _check_totals(checked)
        if not isinstance(self.name, str):
            fail("instance.name", f"must be a string, got {type(self.name).__name__}")
        object.__setattr__(self, "gpus", tuple(gpus))
        object.__setattr__(self, "jobs", tuple(checked))

    @property
    def n_gpus(self) -> int:
        return len(self.gpus)

    @cached_property
    def tasks(self) -> tuple[tuple[int, int, int], ...]:
        """All tasks ``(n, r, k)`` in lexicographic order."""
        return tuple((n, r, k) for n, job in enumerate(self.jobs)
                     for r in range(job.rounds) for k in range(job.tasks_per_round))

    @cached_property
    def task_set(self) -> frozenset:
        return frozenset(self.tasks)

    @cached_property
    def tc(self) -> np.ndarray:
        """T^c as a read-only jobs x GPUs array."""
        return readonly([j.train_time for j in self.jobs])

    @cached_property
    def ts(self) -> np.ndarray:
        """T^s as a read-only jobs x GPUs array."""
        return readonly([j.sync_time for j in self.jobs])

    @cached_property
    def alpha(self) -> float:
        """Heterogeneity ratio of Lemma 3: max over jobs of max(T^c ratio, T^s ratio) across GPUs.

        A sync row of zeros counts as ratio 1 (digest §8 #11); a row mixing zero and positive
        entries has no finite ratio, so alpha is inf there and Theorem 4 claims nothing (reading
        it as 1 made a one-job instance with sync [0, 37, 0] "violate" alpha(2+alpha) = 3 by 12.7x,
        an artefact of the convention: errata H1, issue 23).

        >>> Instance(("a", "b"), (Job(0.0, 1.0, 1, 1, (2.0, 4.0), (0.0, 0.0)),)).alpha
        2.0
        >>> Instance(("a", "b"), (Job(0.0, 1.0, 1, 1, (2.0, 2.0), (0.0, 3.0)),)).alpha
        inf
        """
        best = 1.0
        for job in self.jobs:
            best = max(best, max(job.train_time) / min(job.train_time))
            if min(job.sync_time) > 0:
                best = max(best, max(job.sync_time) / min(job.sync_time))
            elif max(job.sync_time) > 0:
                return math.inf
        return best

    def to_dict(self) -> dict:
        d = {"family": FAMILY, "format_version": FORMAT_VERSION, "gpus": list(self.gpus),
             "jobs": [j.to_dict() for j in self.jobs]}
        if self.name:
            d["name"] = self.name
        return d

    @classmethod
    def from_dict(cls, data: Any) -> "Instance":
        """Read the JSON fields (unknown/missing keys, types, list shapes) and construct; the values
        are checked by the constructor."""
        r = Reader.top(data, FAMILY, FORMAT_VERSION, ("gpus", "jobs"), ("name",))
        gpus = tuple(r.list("gpus"))
        jobs = tuple(Job.read(jr) for jr in r.objects("jobs", JOB_FIELDS, ("model",), nonempty=False))
        return cls(gpus, jobs, r.str("name") if r.has("name") else "")


#: :func:`~optsched.problems.fields.as_float` within MAX_VALUE and MIN_POSITIVE.
real = functools.partial(as_float, max_value=MAX_VALUE, min_positive=MIN_POSITIVE)


def _count(value: Any, where: str, limit: int, name: str) -> int:
    """A positive integer (not bool; numpy integers are) of at most ``limit`` (the constant ``name``)."""
    return as_int(value, where, min=1, max=limit, limit=name)


def _checked_job(job: Job, where: str, n_gpus: int) -> Job:
    """One job validated and normalised (messages as ``instance.jobs[3].weight: must be > 0, got -1``)."""
    rows = {}
    for key, positive in (("train_time", True), ("sync_time", False)):
        row = tuple(sequence(getattr(job, key), f"{where}.{key}"))
        if len(row) != n_gpus:
            fail(f"{where}.{key}", f"must have {n_gpus} entries, got {len(row)}")
        rows[key] = tuple(real(v, f"{where}.{key}[{m}]", positive=positive,
                                min=None if positive else 0.0) for m, v in enumerate(row))
    if not isinstance(job.model, str):
        fail(f"{where}.model", f"must be a string, got {type(job.model).__name__}")
    return Job(arrival=real(job.arrival, f"{where}.arrival", min=0.0),
               weight=real(job.weight, f"{where}.weight", positive=True),
               rounds=_count(job.rounds, f"{where}.rounds", MAX_TASKS, "MAX_TASKS"),
               tasks_per_round=_count(job.tasks_per_round, f"{where}.tasks_per_round", MAX_TASKS,
                                      "MAX_TASKS"),
               model=job.model, **rows)


def _check_totals(jobs: list[Job]) -> None:
    """The instance-wide limits: MAX_TASKS tasks in all, and the serial horizon within
    MAX_TIME_RANGE shortest compute times."""
    tasks = sum(j.rounds * j.tasks_per_round for j in jobs)
    if tasks > MAX_TASKS:
        fail("instance.jobs", f"{tasks} tasks (rounds x tasks_per_round, summed) > {MAX_TASKS} "
                              f"(MAX_TASKS)")
    horizon = serial_horizon(jobs)
    n, m = min(((n, m) for n, j in enumerate(jobs) for m in range(len(j.train_time))),
               key=lambda nm: jobs[nm[0]].train_time[nm[1]])
    shortest = jobs[n].train_time[m]
    if horizon > MAX_TIME_RANGE * shortest:
        fail(f"instance.jobs[{n}].train_time[{m}]",
             f"{shortest:g} is less than the serial horizon {horizon:g} / {MAX_TIME_RANGE:g} "
             f"(MAX_TIME_RANGE): times would lose the resolution verify needs")


def serial_horizon(jobs) -> float:
    """Latest arrival + every task's slowest ``T^c + T^s``: no list schedule starts a task later."""
    return max(j.arrival for j in jobs) + sum(
        j.rounds * j.tasks_per_round * (max(j.train_time) + max(j.sync_time)) for j in jobs)


@dataclass(frozen=True)
class TaskRun:
    """Where and when task ``(job, round, task)`` runs: GPU index and start time ``x_i``."""

    job: int
    round: int
    task: int
    gpu: int
    start: float

    @property
    def key(self) -> tuple[int, int, int]:
        return (self.job, self.round, self.task)


@dataclass(frozen=True)
class Schedule:
    """Start time and GPU of every task (``x_i``, ``y_{i,m}`` of Hare_Sched)."""

    runs: tuple[TaskRun, ...]
    FAMILY = FAMILY

    def __post_init__(self) -> None:
        """Shape, type and limit checks, named as in the JSON (``schedule.tasks[i][k]``): at most
        MAX_TASKS entries, each a :class:`TaskRun` with integer indices (not bool; numpy integers
        are) in 0..MAX_JOBS-1 / MAX_TASKS-1 / MAX_GPUS-1 and a finite numeric start (NaN and ±inf
        are rejected) of at most MAX_START in magnitude. Runs are normalised (int indices, float
        start). Whether the tasks exist and fit is :func:`verify`'s job, so it can name the
        equation at fault."""
        runs = tuple(sequence(self.runs, "schedule.tasks"))
        if len(runs) > MAX_TASKS:
            fail("schedule.tasks", f"at most {MAX_TASKS} tasks (MAX_TASKS), got {len(runs)}")
        object.__setattr__(self, "runs", tuple(_checked_run(t, f"schedule.tasks[{i}]")
                                               for i, t in enumerate(runs)))

    def to_dict(self) -> dict:
        return {"family": FAMILY, "format_version": FORMAT_VERSION,
                "tasks": [[t.job, t.round, t.task, t.gpu, t.start] for t in self.runs]}

    @classmethod
    def from_dict(cls, data: Any) -> "Schedule":
        """Read the JSON rows ``[job, round, task, gpu, start]`` and construct; the constructor
        checks indices and types."""
        r = Reader.top(data, FAMILY, FORMAT_VERSION, ("tasks",), what="schedule")
        runs = []
        for i, row in enumerate(r.list("tasks")):
            if not isinstance(row, list) or len(row) != 5:
                fail(f"schedule.tasks[{i}]", "must be [job, round, task, gpu, start]")
            runs.append(TaskRun(*row))
        return cls(tuple(runs))

    def by_task(self) -> dict[tuple[int, int, int], TaskRun]:
        return {t.key: t for t in self.runs}


#: The largest index of each TaskRun field (job, round, task, gpu), from the instance limits.
INDEX_LIMITS = (MAX_JOBS - 1, MAX_TASKS - 1, MAX_TASKS - 1, MAX_GPUS - 1)


def _checked_run(t: Any, where: str) -> TaskRun:
    """One run validated and normalised (see :class:`Schedule`)."""
    if not isinstance(t, TaskRun):
        fail(where, f"must be a TaskRun, got {type(t).__name__}")
    index = []
    for k, (v, top) in enumerate(zip((t.job, t.round, t.task, t.gpu), INDEX_LIMITS)):
        if isinstance(v, numbers.Integral) and not isinstance(v, bool):
            v = int(v)  # numpy integers
        v = as_int(v, f"{where}[{k}]", min=0)
        if v > top:
            fail(f"{where}[{k}]", f"must be <= {top} (from the MAX_* limits), got {_show(v)}")
        index.append(v)
    start = t.start
    if isinstance(start, bool) or not isinstance(start, numbers.Real):
        fail(f"{where}[4]", f"start must be a number, got {start!r}")
    if not _finite(start):  # NaN compares false: it would skip (4), (7), (8)
        fail(f"{where}[4]", f"start must be finite, got {_show(start)}")
    if abs(start) > MAX_START:
        fail(f"{where}[4]", f"start must be <= {MAX_START:g} (MAX_START) in magnitude, "
                            f"got {_show(start)}")
    job, rnd, task, gpu = index
    return TaskRun(job, rnd, task, gpu, float(start))


def _finite(value: Any) -> bool:
    """Whether a real number is finite as a float (an int beyond float range is not)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _show(value: Any) -> str:
    """A number for a message, kept short (an int beyond float range by its digit count)."""
    text = repr(value)
    return text if len(text) <= 24 else f"an integer of {len(text.lstrip('-'))} digits"


def verify(instance: Instance, schedule: Schedule) -> float:
    """Check constraints (4)–(8) of Hare_Sched and return ``sum_n w_n C_n``.

    Tolerance decides acceptance, never the objective (docs/dev/family_contract.md, "Tolerance"):
    (4), (7) and (8) accept a start up to ``slack`` early, and that slack would add up along a chain
    of rounds or of tasks on one GPU (a schedule starting every task just early verified below the
    proven optimum: 21.99992 against 22). So ``C_n`` (6) is taken from the earliest exactly feasible
    re-timing of the schedule's decisions (:func:`completion_times`, :func:`_exact_starts`): equal
    bit for bit to the schedule's own times when it is exactly feasible, never below them otherwise,
    so the objective returned is always one an exactly feasible schedule achieves.

    Raises
    ------
    InfeasibleSchedule
        Naming the violated equation, e.g. ``"(8) gpu 1: tasks (0,0,1) and (2,0,0) overlap"``,
        or when ``schedule`` is not a hetero_gpu :class:`Schedule`.
    InvalidInstance
        When a run's value is malformed (non-integer index, non-finite start) or a start lies
        beyond the instance's time resolution (MAX_TIME_RANGE x its shortest T^c, where the
        tolerance of (4)/(7)/(8) would exceed a compute time), naming the field
        (``schedule.tasks[3][4]: start must be finite, got nan``).
    """
    check_types(instance, schedule, FAMILY, Instance, Schedule, schedule_first=True,
                qualified=False)
    Schedule.__post_init__(schedule)  # re-check: a frozen dataclass can still be patched
    _check_resolution(instance, schedule)
    runs = _runs_by_task(instance, schedule)
    finish = {}
    for (n, r, k), t in runs.items():
        job = instance.jobs[n]
        if not at_least(t.start, job.arrival):  # (4)
            infeasible(f"(4) task ({n},{r},{k}) starts at {t.start:g} before arrival {job.arrival:g}")
        finish[n, r, k] = t.start + job.train_time[t.gpu] + job.sync_time[t.gpu]
    _check_barriers(instance, runs, finish)
    _check_gpu_overlap(instance, runs)
    completion = completion_times(instance, schedule)  # (6) on the exactly feasible re-timing
    return float(sum(j.weight * c for j, c in zip(instance.jobs, completion)))


def _check_resolution(instance: Instance, schedule: Schedule) -> None:
    """Every start within MAX_TIME_RANGE shortest compute times (the instance's serial horizon is,
    so a list schedule never starts later)."""
    limit = MAX_TIME_RANGE * float(instance.tc.min())
    for i, t in enumerate(schedule.runs):
        if abs(t.start) > limit:
            fail(f"schedule.tasks[{i}][4]", f"start {t.start:g} is beyond this instance's time "
                                            f"resolution {limit:g} (MAX_TIME_RANGE x shortest "
                                            f"train_time)")


def completion_times(instance: Instance, schedule: Schedule) -> list[float]:
    """C_n (6) of every job, as :func:`verify` charges it: the latest finish ``x + T^c + T^s`` of
    the job's tasks under the exactly feasible re-timing :func:`_exact_starts` (equal to the
    schedule's own start times when it is exactly feasible). No feasibility check: a job without
    runs gets 0.0, missing or duplicated tasks are re-timed as given."""
    out = [0.0] * len(instance.jobs)
    for t, x in zip(schedule.runs, _exact_starts(instance, schedule.runs)):
        job = instance.jobs[t.job]
        out[t.job] = max(out[t.job], x + job.train_time[t.gpu] + job.sync_time[t.gpu])
    return out


def _exact_starts(instance: Instance, runs: tuple[TaskRun, ...]) -> list[float]:
    """The earliest exactly feasible re-timing of ``runs`` (same GPUs, same order), one start per run.

    Runs are taken in the order of their start, ties by task (the order (8) is checked in), and
    each starts at the max of its given start, its job's arrival (4), the latest repaired finish
    ``x + T^c + T^s`` (6) of the previous round of its job (7) and the repaired compute end
    ``x + T^c`` of the previous run on its GPU (8). Only ``max`` touches a start, so an exactly
    feasible schedule keeps its times bit for bit, and no start moves earlier. Where the tolerance
    let a task of round r+1 start before one of round r (only when T^c + T^s < slack), its order key
    is lifted to the latest key of round r (:func:`_order_keys`), so the order respects (7).
    O(tasks log tasks).
    """
    keys = _order_keys(runs)
    round_end: dict[tuple[int, int], float] = {}
    gpu_free: dict[int, float] = {}
    out = [0.0] * len(runs)
    for i in sorted(range(len(runs)), key=keys.__getitem__):
        t = runs[i]
        job = instance.jobs[t.job]
        x = max(t.start, job.arrival, round_end.get((t.job, t.round - 1), job.arrival),
                gpu_free.get(t.gpu, job.arrival))
        out[i] = x
        gpu_free[t.gpu] = x + job.train_time[t.gpu]
        f = x + job.train_time[t.gpu] + job.sync_time[t.gpu]
        round_end[t.job, t.round] = max(round_end.get((t.job, t.round), f), f)
    return out


def _order_keys(runs: tuple[TaskRun, ...]) -> list[tuple]:
    """``(start, task)`` per run, the start lifted to the latest lifted start of the previous round
    of its job: a linear extension of (7) that is the plain start order whenever every round starts
    no earlier than its previous round (always, for a schedule within tolerance with T^c + T^s >
    slack)."""
    by_round: dict[tuple[int, int], list[int]] = {}
    for i, t in enumerate(runs):
        by_round.setdefault((t.job, t.round), []).append(i)
    lifted = [t.start for t in runs]
    for n, r in sorted(by_round):
        floor = max((lifted[i] for i in by_round.get((n, r - 1), ())), default=None)
        if floor is not None:
            for i in by_round[n, r]:
                lifted[i] = max(lifted[i], floor)
    return [(x, t.key) for x, t in zip(lifted, runs)]


def _runs_by_task(instance: Instance, schedule: Schedule) -> dict:
    """Index the runs by task and check (5): every task exactly once, on one existing GPU."""
    runs = {}
    for t in schedule.runs:
        if t.key not in instance.task_set:
            infeasible(f"(5) task {t.key} does not exist in the instance")
        if t.key in runs:
            infeasible(f"(5) task {t.key} is scheduled more than once")
        if not 0 <= t.gpu < instance.n_gpus:
            infeasible(f"(5) task {t.key} on gpu {t.gpu}, which does not exist")
        runs[t.key] = t
    missing = [i for i in instance.tasks if i not in runs]
    if missing:
        infeasible(f"(5) task {missing[0]} is not scheduled")
    return runs


def _check_barriers(instance: Instance, runs: dict, finish: dict) -> None:
    """(7): every task of round r+1 starts after every task of round r finished (compute + sync)."""
    for n, job in enumerate(instance.jobs):
        for r in range(1, job.rounds):
            barrier = max(finish[n, r - 1, k] for k in range(job.tasks_per_round))
            for k in range(job.tasks_per_round):
                if not at_least(runs[n, r, k].start, barrier):
                    infeasible(f"(7) task ({n},{r},{k}) starts at {runs[n, r, k].start:g} before "
                                f"round {r - 1} of job {n} finished at {barrier:g}")


def _check_gpu_overlap(instance: Instance, runs: dict) -> None:
    """(8): compute intervals [x, x + T^c) on one GPU do not overlap (sync does not occupy the GPU)."""
    by_gpu: dict[int, list] = {}
    for key, t in runs.items():
        by_gpu.setdefault(t.gpu, []).append((t.start, key))
    for m, items in by_gpu.items():
        items.sort()
        for (s1, i), (s2, j) in zip(items, items[1:]):
            end = s1 + instance.jobs[i[0]].train_time[m]
            if not at_least(s2, end):
                infeasible(f"(8) gpu {m}: task {j} starts at {s2:g} while task {i} computes "
                            f"until {end:g}")




def bars(instance: Instance, schedule: Schedule) -> list:
    """Gantt bars for ``optsched plot``: one row per GPU, one bar per task over its compute interval
    ``[x, x + T^c)`` (the time it holds the GPU, (8)), labelled ``r<round>``; the synchronisation
    after it uses the network, not the GPU, and is not drawn. No feasibility check."""

    names = [f"gpu {m} ({g})" if g else f"gpu {m}" for m, g in enumerate(instance.gpus)]
    out = [Bar(name, 0.0, 0.0, -1) for name in names]  # every GPU gets a row, idle or not
    for t in schedule.runs:
        end = t.start + instance.jobs[t.job].train_time[t.gpu]
        out.append(Bar(names[t.gpu], t.start, end, t.job, f"r{t.round}"))
    return out


__all__ = ["FAMILY", "MAX_GPUS", "MAX_JOBS", "MAX_START", "MAX_TASKS", "MAX_TIME_RANGE", "MAX_VALUE",
           "MIN_POSITIVE", "Instance", "Job", "Schedule", "TaskRun", "bars", "completion_times",
           "serial_horizon", "verify"]
