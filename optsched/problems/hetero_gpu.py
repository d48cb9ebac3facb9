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

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from optsched.problems.fields import Reader, Validated, as_int, fail, infeasible, readonly
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

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in JOB_FIELDS}
        d["train_time"], d["sync_time"] = list(self.train_time), list(self.sync_time)
        if self.model:
            d["model"] = self.model
        return d

    @classmethod
    def read(cls, r: Reader, n_gpus: int) -> "Job":
        return cls(
            arrival=r.float("arrival", min=0.0), weight=r.float("weight", positive=True),
            rounds=r.int("rounds", min=1), tasks_per_round=r.int("tasks_per_round", min=1),
            train_time=r.floats("train_time", length=n_gpus, positive=True),
            sync_time=r.floats("sync_time", length=n_gpus, min=0.0),
            model=r.str("model", default="") if r.has("model") else "",
        )


@dataclass(frozen=True)
class Instance(Validated):
    """A Hare_Sched instance: GPU type names and jobs. Tasks are ``(n, r, k)``."""

    gpus: tuple[str, ...]
    jobs: tuple[Job, ...]
    name: str = ""
    FAMILY = FAMILY


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
    def from_dict(cls, data) -> "Instance":
        r = Reader.top(data, FAMILY, FORMAT_VERSION, ("gpus", "jobs"), ("name",))
        gpus = r.list("gpus", nonempty=True)
        for m, g in enumerate(gpus):
            if not isinstance(g, str):
                fail(f"instance.gpus[{m}]", f"must be a string (GPU type), got {g!r}")
        jobs = tuple(Job.read(jr, len(gpus))
                     for jr in r.objects("jobs", JOB_FIELDS, ("model",)))
        name = r.str("name") if r.has("name") else ""
        inst = object.__new__(cls)
        object.__setattr__(inst, "gpus", tuple(gpus))
        object.__setattr__(inst, "jobs", jobs)
        object.__setattr__(inst, "name", name)
        return inst


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

    def to_dict(self) -> dict:
        return {"family": FAMILY, "format_version": FORMAT_VERSION,
                "tasks": [[t.job, t.round, t.task, t.gpu, t.start] for t in self.runs]}

    @classmethod
    def from_dict(cls, data) -> "Schedule":
        r = Reader.top(data, FAMILY, FORMAT_VERSION, ("tasks",), what="schedule")
        runs = []
        for i, row in enumerate(r.list("tasks")):
            where = f"schedule.tasks[{i}]"
            if not isinstance(row, list) or len(row) != 5:
                fail(where, "must be [job, round, task, gpu, start]")
            ints = [as_int(v, f"{where}[{k}]", min=0) for k, v in enumerate(row[:4])]
            start = row[4]
            if isinstance(start, bool) or not isinstance(start, (int, float)):
                fail(f"{where}[4]", f"start must be a number, got {start!r}")
            runs.append(TaskRun(*ints, float(start)))
        return cls(tuple(runs))

    def by_task(self) -> dict[tuple[int, int, int], TaskRun]:
        return {t.key: t for t in self.runs}


def verify(instance: Instance, schedule: Schedule) -> float:
    """Check constraints (4)–(8) of Hare_Sched and return ``sum_n w_n C_n``.

    Raises
    ------
    InfeasibleSchedule
        Naming the violated equation, e.g. ``"(8) gpu 1: tasks (0,0,1) and (2,0,0) overlap"``.
    """
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




__all__ = ["FAMILY", "Instance", "Job", "Schedule", "TaskRun", "completion_times", "verify"]
