"""ring_contention — RAR-DDLS (Yu, Ji, Rajan, Liu, MobiHoc'22; seeds/002): ring-all-reduce jobs
with communication contention, minimise the makespan.

Problem (paper Sec. 4): servers ``s`` with ``O_s`` identical GPUs; jobs ``j`` released at 0 ask for
``G_j`` GPUs (one ring worker each) and ``F_j`` iterations. A schedule gives each job a start slot
``a_j`` and a placement ``y_js`` (GPUs on server ``s``) that it keeps until it ends (gang,
non-preemptive, constraints (1)–(5)). Per slot the iteration time is eq. (8)::

    tau_j[t] = 2 (m_j/G_j)(G_j-1) / B_j  +  (m_j/G_j)(G_j-1) / C  +  xi2 * n_j[t]  +  dF_j M_j + dB_j

with ``n_j`` the servers spanned, ``B_j = b^i`` when ``n_j = 1`` and ``b^e / f(alpha, k_j)`` otherwise,
``f(alpha, k) = k + alpha (k - 1)`` (the paper's example), ``k_j = xi1 p_j`` (7) clamped to >= 1
(digest E2: f < 1 would mean more than the full link), and ``p_j`` the largest number of split jobs
(``j`` included) on a server where ``j`` is split (6). Speed ``phi_j[t] = floor(1 / tau_j[t])``
iterations per slot, read within the tolerance policy (:mod:`optsched.tolerance`): the most whole
iterations ``k`` with ``at_most(k * tau, 1)`` (:func:`slot_speed`; tau = 36 * 0.001 + 0.004 is
0.04000000000000001 in floats, plain floor(1 / tau) = 24, phi = 25). ``T_j`` is the end of the slot
in which ``sum_{t >= a_j} phi_j[t]`` first reaches ``F_j`` (our reading of the garbled eq. (9)).
Objective: makespan ``max_j T_j``.

Conventions (kept in verify, the exact model and every algorithm): slot ``t`` is ``[t, t+1)``; a job
occupies slots ``a_j .. T_j - 1``; every job must end by the horizon ``T`` (``T_j <= horizon``).
Overhead is ``xi2 * n_j`` as in (8), also for single-server jobs (digest E4).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from optsched.problems.fields import Reader, as_float, as_int, fail, infeasible
from optsched.tolerance import at_most

FAMILY = "ring_contention"
FORMAT_VERSION = 1

JOB_FIELDS = ("gpus", "iterations", "grad_size", "batch", "fp_time", "bp_time")
CLUSTER_FIELDS = ("bw_inter", "bw_intra", "reduce_speed", "alpha", "xi1", "xi2")


@dataclass(frozen=True)
class Job:
    """One RAR job: ``gpus`` = G_j, ``iterations`` = F_j, ``grad_size`` = m_j, ``batch`` = M_j,
    ``fp_time`` = Δ^f_j (per sample), ``bp_time`` = Δ^b_j (per iteration); times in slots."""

    gpus: int
    iterations: int
    grad_size: float
    batch: int
    fp_time: float
    bp_time: float

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in JOB_FIELDS}

    def checked(self, where: str) -> "Job":
        """This job with its values validated (messages name ``where``, e.g.
        ``instance.jobs[3].gpus``) and normalised to the fields' types."""
        return Job(gpus=as_int(self.gpus, f"{where}.gpus", min=1),
                   iterations=as_int(self.iterations, f"{where}.iterations", min=1),
                   grad_size=as_float(self.grad_size, f"{where}.grad_size", min=0.0),
                   batch=as_int(self.batch, f"{where}.batch", min=1),
                   fp_time=as_float(self.fp_time, f"{where}.fp_time", min=0.0),
                   bp_time=as_float(self.bp_time, f"{where}.bp_time", min=0.0))


def _seq(value: Any, where: str, *, nonempty: bool = False) -> Sequence[Any]:
    """``value`` as a sequence (a tuple, or a list from JSON), with the messages of
    :func:`~optsched.problems.fields.as_list`."""
    if not isinstance(value, (tuple, list)):
        fail(where, f"must be a list, got {type(value).__name__}")
    if nonempty and not value:
        fail(where, "must not be empty")
    return value


@dataclass(frozen=True)
class Instance:
    """A RAR-DDLS instance: server capacities ``O_s``, jobs, cluster constants and the horizon T.

    ``bw_inter`` = b^e, ``bw_intra`` = b^i, ``reduce_speed`` = C, ``alpha`` = α of f(α, k),
    ``xi1`` = ξ1 (7), ``xi2`` = ξ2 (overhead per server, slots).

    Every instance, loaded from JSON or built in Python, is validated on construction
    (:meth:`__post_init__`), e.g. ``instance.jobs[2].gpus: must be >= 1``.
    """

    servers: tuple[int, ...]
    jobs: tuple[Job, ...]
    bw_inter: float
    bw_intra: float
    reduce_speed: float
    alpha: float
    xi1: float
    xi2: float
    horizon: int
    name: str = ""
    FAMILY = FAMILY

    def __post_init__(self) -> None:
        """Validate every field (DESIGN.md, "Instance JSON") and normalise it (lists become tuples,
        numbers the field's type, so a JSON-loaded and a Python-built instance compare equal)."""
        where = "instance"
        servers = tuple(as_int(v, f"{where}.servers[{i}]", min=1) for i, v in
                        enumerate(_seq(self.servers, f"{where}.servers", nonempty=True)))
        jobs = []
        for i, job in enumerate(_seq(self.jobs, f"{where}.jobs", nonempty=True)):
            if not isinstance(job, Job):
                fail(f"{where}.jobs[{i}]", f"must be a Job, got {type(job).__name__}")
            jobs.append(job.checked(f"{where}.jobs[{i}]"))
        values: dict[str, Any] = dict(
            servers=servers, jobs=tuple(jobs),
            bw_inter=as_float(self.bw_inter, f"{where}.bw_inter", positive=True),
            bw_intra=as_float(self.bw_intra, f"{where}.bw_intra", positive=True),
            reduce_speed=as_float(self.reduce_speed, f"{where}.reduce_speed", positive=True),
            alpha=as_float(self.alpha, f"{where}.alpha", min=0.0),
            xi1=as_float(self.xi1, f"{where}.xi1", positive=True),
            xi2=as_float(self.xi2, f"{where}.xi2", min=0.0))
        if values["xi1"] > 1:
            fail(f"{where}.xi1", f"must be <= 1 (eq. 7: xi1 in (0, 1]), got {values['xi1']}")
        values["horizon"] = as_int(self.horizon, f"{where}.horizon", min=1)
        if not isinstance(self.name, str):
            fail(f"{where}.name", f"must be a string, got {type(self.name).__name__}")
        for key, value in values.items():  # normalisation of the frozen fields
            object.__setattr__(self, key, value)
        _check_jobs(self)

    @property
    def n_servers(self) -> int:
        return len(self.servers)

    @property
    def n_gpus(self) -> int:
        """N = sum_s O_s."""
        return sum(self.servers)

    @property
    def max_gpus(self) -> int:
        """n_g = max_j G_j."""
        return max(j.gpus for j in self.jobs)

    def tau(self, j: int, n: int, p: int) -> float:
        """Per-iteration time (8) of job ``j`` spanning ``n`` servers with contention count ``p``."""
        job = self.jobs[j]
        g = job.gpus
        share = job.grad_size * (g - 1) / g
        if n == 1:
            bandwidth = self.bw_intra
        else:
            k = max(1.0, self.xi1 * p)  # (7), clamped (digest E2)
            bandwidth = self.bw_inter / (k + self.alpha * (k - 1))
        exchange = 2 * share / bandwidth if g > 1 else 0.0
        reduce = share / self.reduce_speed if g > 1 else 0.0
        return exchange + reduce + self.xi2 * n + job.fp_time * job.batch + job.bp_time

    def phi(self, j: int, n: int, p: int) -> int:
        """Training speed floor(1 / tau) within the tolerance (iterations per slot, :func:`slot_speed`)."""
        return slot_speed(self.tau(j, n, p))

    def min_servers(self, j: int) -> int:
        """Fewest servers that can host job ``j`` (largest servers first)."""
        need, count = self.jobs[j].gpus, 0
        for cap in sorted(self.servers, reverse=True):
            need -= cap
            count += 1
            if need <= 0:
                return count
        return count

    def max_servers(self, j: int) -> int:
        return min(self.jobs[j].gpus, self.n_servers)

    @property
    def max_contention(self) -> int:
        """Largest reachable p: split jobs (G >= 2) sharing one server, at most max_s O_s."""
        split_capable = sum(1 for job in self.jobs if job.gpus >= 2)
        return max(1, min(max(self.servers), split_capable))

    def to_dict(self) -> dict:
        d = {"family": FAMILY, "format_version": FORMAT_VERSION, "servers": list(self.servers),
             "jobs": [j.to_dict() for j in self.jobs]}
        d.update({k: getattr(self, k) for k in CLUSTER_FIELDS})
        d["horizon"] = self.horizon
        if self.name:
            d["name"] = self.name
        return d

    @classmethod
    def from_dict(cls, data: Any) -> "Instance":
        """Read the JSON document's fields (unknown or missing keys are errors) and call the
        constructor, which validates the values."""
        r = Reader.top(data, FAMILY, FORMAT_VERSION, ("servers", "jobs", *CLUSTER_FIELDS, "horizon"),
                       ("name",))
        jobs = tuple(Job(**{k: jr.data[k] for k in JOB_FIELDS})
                     for jr in r.objects("jobs", JOB_FIELDS, nonempty=False))
        return cls(servers=data["servers"], jobs=jobs,
                   **{k: data[k] for k in CLUSTER_FIELDS}, horizon=data["horizon"],
                   name=data.get("name", ""))


def slot_speed(tau: float) -> int:
    """phi = floor(1 / tau) read within the tolerance: the largest integer ``k >= 0`` with
    ``at_most(k * tau, 1.0)`` (k iterations of ``tau`` slots fit in one slot).

    The one rounding rule of (9); :meth:`Instance.phi` (used by the models and the algorithms) and
    verify's slot simulation both call it on bit-identical ``tau``, so they agree exactly.
    """
    if not tau > 0 or not math.isfinite(1.0 / tau):
        raise ValueError(f"per-iteration time must be > 0 and finite, got {tau!r}")
    k = math.floor(1.0 / tau) + 1
    while k > 0 and not at_most(k * tau, 1.0):
        k -= 1
    while at_most((k + 1) * tau, 1.0):
        k += 1
    return k


def _check_jobs(inst: Instance) -> None:
    """Every job fits the cluster and progresses (phi >= 1) at its worst reachable (n, p)."""
    for j, job in enumerate(inst.jobs):
        if job.gpus > inst.n_gpus:
            fail(f"instance.jobs[{j}].gpus", f"{job.gpus} exceeds the cluster's {inst.n_gpus} GPUs")
        for n in range(inst.min_servers(j), inst.max_servers(j) + 1):
            tau = inst.tau(j, n, 1)  # tau is least at p = 1
            if not tau > 0 or not math.isfinite(1.0 / tau):
                fail(f"instance.jobs[{j}]", f"per-iteration time {tau:.4g} at n={n} must be > 0 "
                     "(speed 1/tau would be unbounded)")
        for n in {inst.min_servers(j), inst.max_servers(j)}:  # tau grows with p, and with n >= 2
            p = inst.max_contention if n >= 2 else 1
            tau = inst.tau(j, n, p)
            if slot_speed(tau) < 1:
                fail(f"instance.jobs[{j}]", f"per-iteration time {tau:.4g} > 1 slot at n={n}, p={p} "
                     "(speed floor(1/tau) would be 0)")


@dataclass(frozen=True)
class Schedule:
    """Start slot ``a_j`` and placement ``y_j = (y_j1, ..., y_j|S|)`` of every job (held until T_j)."""

    starts: tuple[int, ...]
    placements: tuple[tuple[int, ...], ...]
    FAMILY = FAMILY

    def __post_init__(self) -> None:
        """Shape and type checks (integers, lists), normalised to tuples; the values (ranges,
        capacities, G_j) are verify's to judge, naming the paper's equations."""
        starts = tuple(as_int(a, f"schedule.jobs[{j}].start") for j, a in
                       enumerate(_seq(self.starts, "schedule.starts")))
        places = tuple(tuple(as_int(y, f"schedule.jobs[{j}].placement[{s}]") for s, y in
                             enumerate(_seq(c, f"schedule.jobs[{j}].placement")))
                       for j, c in enumerate(_seq(self.placements, "schedule.placements")))
        object.__setattr__(self, "starts", starts)  # normalisation of the frozen fields
        object.__setattr__(self, "placements", places)

    def to_dict(self) -> dict:
        return {"family": FAMILY, "format_version": FORMAT_VERSION,
                "jobs": [{"start": a, "placement": list(c)}
                         for a, c in zip(self.starts, self.placements)]}

    @classmethod
    def from_dict(cls, data: Any) -> "Schedule":
        """Read the document's fields (unknown or missing keys, negative starts and counts are
        errors) and call the constructor."""
        r = Reader.top(data, FAMILY, FORMAT_VERSION, ("jobs",), what="schedule")
        starts, placements = [], []
        for jr in r.objects("jobs", ("start", "placement")):
            starts.append(jr.int("start", min=0))
            placements.append(jr.ints("placement", min=0))
        return cls(tuple(starts), tuple(placements))


def completion_times(instance: Instance, schedule: Schedule) -> list[int]:
    """T_j of every job, simulated slot by slot with (6)–(9); checks (1), (2), (5) and the horizon.

    This is the independent checker: it recomputes p_j[t], k_j[t], B_j, tau_j[t] and phi_j[t] for
    every slot from the placements alone (shares no code with models/ or solvers/).
    """
    _check_shape(instance, schedule)
    n_jobs = len(instance.jobs)
    remaining = [job.iterations for job in instance.jobs]
    finish: list[int | None] = [None] * n_jobs
    speeds: dict[int, int] = {}
    active_prev: tuple = ()
    for t in range(instance.horizon):
        active = tuple(j for j in range(n_jobs) if schedule.starts[j] <= t and finish[j] is None)
        if not active and all(f is not None for f in finish):
            break
        if active != active_prev:
            speeds = _slot_speeds(instance, schedule, active, t)
            active_prev = active
        for j in active:
            remaining[j] -= speeds[j]
            if remaining[j] <= 0:
                finish[j] = t + 1  # (9): end of the slot in which progress reaches F_j
    for j, f in enumerate(finish):
        if f is None:
            infeasible(f"(9) job {j} does not finish by the horizon T={instance.horizon} "
                        f"({remaining[j]} of {instance.jobs[j].iterations} iterations left)")
    return [int(f) for f in finish if f is not None]  # every f is set (checked above)


def verify(instance: Instance, schedule: Schedule) -> float:
    """Check (1)–(5), simulate (6)–(9) slot by slot and return the makespan max_j T_j.

    Raises
    ------
    InfeasibleSchedule
        Naming the violated equation, e.g. ``"(2) server 1 over capacity at slot 4: 6 > 4"``.
    """
    return float(max(completion_times(instance, schedule)))


def average_jct(instance: Instance, schedule: Schedule) -> float:
    """Average job completion time (1/|J|) sum_j T_j (release times are 0)."""
    times = completion_times(instance, schedule)
    return sum(times) / len(times)


def _check_shape(instance: Instance, schedule: Schedule) -> None:
    """(1): sum_s y_js = G_j; (5): y_js integral and >= 0; starts are slots in [0, T)."""
    if len(schedule.starts) != len(instance.jobs) or len(schedule.placements) != len(instance.jobs):
        infeasible(f"(1) schedule has {len(schedule.starts)} starts and {len(schedule.placements)} "
                    f"placements for {len(instance.jobs)} jobs")
    for j, (a, c) in enumerate(zip(schedule.starts, schedule.placements)):
        if isinstance(a, bool) or not isinstance(a, int) or not 0 <= a < instance.horizon:
            infeasible(f"(4) job {j}: start {a!r} is not a slot in [0, {instance.horizon})")
        if len(c) != instance.n_servers:
            infeasible(f"(1) job {j}: placement has {len(c)} entries for {instance.n_servers} servers")
        for s, y in enumerate(c):
            if isinstance(y, bool) or not isinstance(y, int) or y < 0:
                infeasible(f"(5) job {j} server {s}: y_js = {y!r} is not a non-negative integer")
            if y > instance.servers[s]:
                infeasible(f"(2) job {j} server {s}: {y} GPUs > capacity {instance.servers[s]}")
        if sum(c) != instance.jobs[j].gpus:
            infeasible(f"(1) job {j}: placement holds {sum(c)} GPUs, G_j = {instance.jobs[j].gpus}")


def _slot_speeds(instance: Instance, schedule: Schedule, active: tuple, t: int) -> dict[int, int]:
    """phi_j[t] for the active jobs, after checking capacity (2) at slot ``t``."""
    n_srv = instance.n_servers
    used = [0] * n_srv
    split_count = [0] * n_srv
    for j in active:
        c = schedule.placements[j]
        g = instance.jobs[j].gpus
        for s in range(n_srv):
            used[s] += c[s]
            if 0 < c[s] < g:  # 1{0 < y_js < G_j}, eq. (6)
                split_count[s] += 1
    for s in range(n_srv):
        if used[s] > instance.servers[s]:
            infeasible(f"(2) server {s} over capacity at slot {t}: {used[s]} > {instance.servers[s]}")
    speeds = {}
    for j in active:
        c = schedule.placements[j]
        g = instance.jobs[j].gpus
        n = sum(1 for y in c if y > 0)
        p = max((split_count[s] for s in range(n_srv) if 0 < c[s] < g), default=0)  # (6)
        tau = _iteration_time(instance, j, n, p)
        speed = slot_speed(tau)  # floor(1 / tau) within the tolerance, as Instance.phi
        if speed < 1:
            infeasible(f"(9) job {j} makes no progress at slot {t}: tau = {tau:.4g} > 1")
        speeds[j] = speed
    return speeds


def _iteration_time(instance: Instance, j: int, n: int, p: int) -> float:
    """Eq. (8) written out independently of :meth:`Instance.tau`."""
    job = instance.jobs[j]
    w = job.gpus
    if n == 1:
        b = instance.bw_intra  # all workers on one server: NVLink, no contention
    else:
        k = max(1.0, instance.xi1 * p)  # (7)
        b = instance.bw_inter / (k + instance.alpha * (k - 1))  # b^e / f(alpha, k)
    per_worker = job.grad_size * (w - 1) / w  # (m_j / w_j)(w_j - 1), same float order as the model
    info = 2 * per_worker / b if w > 1 else 0.0
    compute = per_worker / instance.reduce_speed if w > 1 else 0.0
    return info + compute + instance.xi2 * n + job.fp_time * job.batch + job.bp_time



def bars(instance: Instance, schedule: Schedule) -> list:
    """Gantt bars for ``optsched plot``: one row per GPU (``server s gpu g``), each job's ring
    workers over ``[a_j, T_j)`` (slots ``a_j .. T_j - 1``, held until the job ends). The schedule
    says how many GPUs of each server a job holds, not which: they are numbered by interval
    partitioning in start order. T_j comes from :func:`completion_times` (so an infeasible schedule
    raises InfeasibleSchedule)."""
    from optsched.gantt import Bar

    finish = completion_times(instance, schedule)
    out = [Bar(f"server {s} gpu {g}", 0.0, 0.0, -1)
           for s, cap in enumerate(instance.servers) for g in range(cap)]
    free = [[0] * cap for cap in instance.servers]  # per GPU: slot from which it is free
    for j in sorted(range(len(instance.jobs)), key=lambda j: (schedule.starts[j], j)):
        a = schedule.starts[j]
        for s, y in enumerate(schedule.placements[j]):
            gpus = sorted(range(instance.servers[s]), key=lambda g: (free[s][g] > a, g))[:y]
            for g in gpus:
                free[s][g] = finish[j]
                out.append(Bar(f"server {s} gpu {g}", float(a), float(finish[j]), j, f"j{j}"))
    return out


__all__ = ["FAMILY", "Instance", "Job", "Schedule", "average_jct", "bars", "completion_times",
           "slot_speed", "verify"]
