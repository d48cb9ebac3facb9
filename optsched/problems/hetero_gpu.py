"""hetero_gpu — Hare (Chen et al., HPDC'22; seeds/004): tasks of PS jobs on heterogeneous GPUs.

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
or the end of the previous compute on its GPU (8) by ``slack`` of that time (``at_least``).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from optsched.problems.fields import Reader, as_float, as_int, fail, infeasible, readonly
from optsched.tolerance import at_least

FAMILY = "hetero_gpu"
FORMAT_VERSION = 1

JOB_FIELDS = ("arrival", "weight", "rounds", "tasks_per_round", "train_time", "sync_time")


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
        :class:`Instance` runs them (:func:`_validate_job`)."""
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
        """Read the JSON fields (keys and types); the values are checked by :class:`Instance`."""
        return cls(
            arrival=r.float("arrival"), weight=r.float("weight"), rounds=r.int("rounds"),
            tasks_per_round=r.int("tasks_per_round"), train_time=r.floats("train_time"),
            sync_time=r.floats("sync_time"), model=r.str("model") if r.has("model") else "",
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
        """Validate (DESIGN.md, "Instance JSON"): a wrong type, a negative or zero size or an
        inconsistent length raises InvalidInstance naming the field, e.g.
        ``instance.jobs[1].train_time: must have 2 entries, got 1``. Lists become tuples."""
        for key in ("gpus", "jobs"):
            value = getattr(self, key)
            if isinstance(value, list):
                object.__setattr__(self, key, tuple(value))
        gpus = _sequence(self.gpus, "instance.gpus")
        if not gpus:
            fail("instance.gpus", "must not be empty")
        for m, g in enumerate(gpus):
            if not isinstance(g, str):
                fail(f"instance.gpus[{m}]", f"must be a string (GPU type), got {g!r}")
        jobs = _sequence(self.jobs, "instance.jobs")
        if not jobs:
            fail("instance.jobs", "must not be empty")
        for n, job in enumerate(jobs):
            if not isinstance(job, Job):
                fail(f"instance.jobs[{n}]", f"must be a Job, got {type(job).__name__}")
            _validate_job(job, f"instance.jobs[{n}]", len(gpus))
        if not isinstance(self.name, str):
            fail("instance.name", f"must be a string, got {type(self.name).__name__}")

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
        A sync row with a zero entry counts as ratio 1 (digest §8 #11)."""
        best = 1.0
        for job in self.jobs:
            best = max(best, max(job.train_time) / min(job.train_time))
            if min(job.sync_time) > 0:
                best = max(best, max(job.sync_time) / min(job.sync_time))
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
        _check_version(data, "format_version")
        r = Reader.top(data, FAMILY, FORMAT_VERSION, ("gpus", "jobs"), ("name",))
        gpus = tuple(r.list("gpus"))
        jobs = tuple(Job.read(jr) for jr in r.objects("jobs", JOB_FIELDS, ("model",), nonempty=False))
        return cls(gpus, jobs, r.str("name") if r.has("name") else "")


def _check_version(data: Any, where: str) -> None:
    """``format_version: true`` equals 1 in Python; JSON's true is not a version number."""
    if isinstance(data, dict) and isinstance(data.get("format_version"), bool):
        fail(where, f"must be an integer, got {data['format_version']!r}")


def _sequence(value: Any, where: str) -> tuple:
    """``value`` must be a tuple: the shape check of a field built in Python."""
    if not isinstance(value, tuple):
        fail(where, f"must be a list, got {type(value).__name__}")
    return value


def _validate_job(job: Job, where: str, n_gpus: int) -> None:
    """The checks of one job (messages as ``instance.jobs[3].weight: must be > 0, got -1``)."""
    as_float(job.arrival, f"{where}.arrival", min=0.0)
    as_float(job.weight, f"{where}.weight", positive=True)
    as_int(job.rounds, f"{where}.rounds", min=1)
    as_int(job.tasks_per_round, f"{where}.tasks_per_round", min=1)
    for key, positive in (("train_time", True), ("sync_time", False)):
        row = _sequence(getattr(job, key), f"{where}.{key}")
        if len(row) != n_gpus:
            fail(f"{where}.{key}", f"must have {n_gpus} entries, got {len(row)}")
        for m, v in enumerate(row):
            as_float(v, f"{where}.{key}[{m}]", positive=positive, min=None if positive else 0.0)
    if not isinstance(job.model, str):
        fail(f"{where}.model", f"must be a string, got {type(job.model).__name__}")


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
        """Shape and type checks (a list becomes a tuple): every entry a :class:`TaskRun` with
        non-negative integer indices and a finite numeric start (NaN and ±inf are rejected), named as in the JSON
        (``schedule.tasks[i][k]``). Whether the tasks exist and fit is :func:`verify`'s job, so it
        can name the equation at fault."""
        if isinstance(self.runs, list):
            object.__setattr__(self, "runs", tuple(self.runs))
        for i, t in enumerate(_sequence(self.runs, "schedule.tasks")):
            where = f"schedule.tasks[{i}]"
            if not isinstance(t, TaskRun):
                fail(where, f"must be a TaskRun, got {type(t).__name__}")
            for k, v in enumerate((t.job, t.round, t.task, t.gpu)):
                if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 0:
                    as_int(v, f"{where}[{k}]", min=0)  # raises with the field's name
            if isinstance(t.start, bool) or not isinstance(t.start, numbers.Real):
                fail(f"{where}[4]", f"start must be a number, got {t.start!r}")
            if not _finite(t.start):  # NaN compares false: it would skip (4), (7), (8)
                fail(f"{where}[4]", f"start must be finite, got {_show(t.start)}")

    def to_dict(self) -> dict:
        return {"family": FAMILY, "format_version": FORMAT_VERSION,
                "tasks": [[t.job, t.round, t.task, t.gpu, t.start] for t in self.runs]}

    @classmethod
    def from_dict(cls, data: Any) -> "Schedule":
        """Read the JSON rows ``[job, round, task, gpu, start]`` and construct; the constructor
        checks indices and types."""
        _check_version(data, "schedule.format_version")
        r = Reader.top(data, FAMILY, FORMAT_VERSION, ("tasks",), what="schedule")
        runs = []
        for i, row in enumerate(r.list("tasks")):
            where = f"schedule.tasks[{i}]"
            if not isinstance(row, list) or len(row) != 5:
                fail(where, "must be [job, round, task, gpu, start]")
            job, rnd, task, gpu = (as_int(v, f"{where}[{k}]") for k, v in enumerate(row[:4]))
            start = row[4]
            if isinstance(start, (int, float)) and not isinstance(start, bool):
                if not _finite(start):
                    fail(f"{where}[4]", f"start must be finite, got {_show(start)}")
                start = float(start)
            runs.append(TaskRun(job, rnd, task, gpu, start))
        return cls(tuple(runs))

    def by_task(self) -> dict[tuple[int, int, int], TaskRun]:
        return {t.key: t for t in self.runs}


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

    Raises
    ------
    InfeasibleSchedule
        Naming the violated equation, e.g. ``"(8) gpu 1: tasks (0,0,1) and (2,0,0) overlap"``,
        or when ``schedule`` is not a hetero_gpu :class:`Schedule`.
    InvalidInstance
        When a run's value is malformed (non-integer index, non-finite start), naming the field
        (``schedule.tasks[3][4]: start must be finite, got nan``).
    """
    if not isinstance(schedule, Schedule):
        infeasible(f"schedule: must be a {FAMILY} Schedule, got {type(schedule).__name__}")
    if not isinstance(instance, Instance):
        fail("instance", f"must be a {FAMILY} Instance, got {type(instance).__name__}")
    Schedule.__post_init__(schedule)  # re-check: a frozen dataclass can still be patched
    runs = _runs_by_task(instance, schedule)
    finish = {}
    for (n, r, k), t in runs.items():
        job = instance.jobs[n]
        if not at_least(t.start, job.arrival):  # (4)
            infeasible(f"(4) task ({n},{r},{k}) starts at {t.start:g} before arrival {job.arrival:g}")
        finish[n, r, k] = t.start + job.train_time[t.gpu] + job.sync_time[t.gpu]
    _check_barriers(instance, runs, finish)
    _check_gpu_overlap(instance, runs)
    completion = [max(finish[n, r, k] for r in range(j.rounds) for k in range(j.tasks_per_round))
                  for n, j in enumerate(instance.jobs)]  # (6)
    return float(sum(j.weight * c for j, c in zip(instance.jobs, completion)))


def completion_times(instance: Instance, schedule: Schedule) -> list[float]:
    """C_n of every job under ``schedule`` (no feasibility check)."""
    out = [0.0] * len(instance.jobs)
    for t in schedule.runs:
        job = instance.jobs[t.job]
        out[t.job] = max(out[t.job], t.start + job.train_time[t.gpu] + job.sync_time[t.gpu])
    return out


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
    from optsched.gantt import Bar

    names = [f"gpu {m} ({g})" if g else f"gpu {m}" for m, g in enumerate(instance.gpus)]
    out = [Bar(name, 0.0, 0.0, -1) for name in names]  # every GPU gets a row, idle or not
    for t in schedule.runs:
        end = t.start + instance.jobs[t.job].train_time[t.gpu]
        out.append(Bar(names[t.gpu], t.start, end, t.job, f"r{t.round}"))
    return out


__all__ = ["FAMILY", "Instance", "Job", "Schedule", "TaskRun", "bars", "completion_times", "verify"]
