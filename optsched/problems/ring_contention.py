"""ring_contention — RAR-DDLS (Yu, Ji, Rajan, Liu, MobiHoc'22; paper 002): ring-all-reduce jobs
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
iterations per slot in exact arithmetic (:mod:`optsched.tolerance`, issue 22): the most whole
iterations ``k`` with ``k * tau <= 1``, every value the decimal it is written as (:func:`slot_speed`;
tau = 36 * 0.001 + 0.004 is 0.04 exactly, phi = 25, where the float sum 0.04000000000000001 gives
plain floor(1 / tau) = 24; a tau above 1/4 by any amount gives 3). ``T_j`` is the end of the slot
in which ``sum_{t >= a_j} phi_j[t]`` first reaches ``F_j`` (our reading of the garbled eq. (9)).
Objective: makespan ``max_j T_j``.

Conventions (kept in verify, the exact model and every algorithm): slot ``t`` is ``[t, t+1)``; a job
occupies slots ``a_j .. T_j - 1``; every job must end by the horizon ``T`` (``T_j <= horizon``).
Overhead is ``xi2 * n_j`` as in (8), also for single-server jobs (digest E4).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from itertools import accumulate
from typing import Any


from optsched.problems import fields
from optsched.problems.bars import Bar
from optsched.problems.fields import Reader, check_types, fail, infeasible, sequence
from optsched.tolerance import count_within, count_within_filtered, exact

FAMILY = "ring_contention"
FORMAT_VERSION = 1

#: Resource limits (issue 15), checked on construction (JSON or Python) with a message naming the
#: field and the limit. Each is far above the paper's Sec. 7 setting (20 servers of 4-32 GPUs,
#: N <= 640, 160 jobs, F_j <= 6000, T = 1200-1500, phi_j = 1/tau_j of 20-100 iterations per slot).
#: With them verify simulates at most 2 |J| events of O(N + |S|) each, and no pass, model size
#: estimate or JSON document grows without bound.
MAX_SERVERS = 1_000          #: |S|, the servers (and the length of every placement y_j)
MAX_SERVER_GPUS = 1_024      #: O_s, the GPUs of one server (and every y_js of a schedule)
MAX_GPUS = 10_000            #: N = sum_s O_s (every pass holds arrays of N GPUs; also G_j <= N)
MAX_JOBS = 1_000             #: |J|
MAX_ITERATIONS = 10**9       #: F_j
MAX_BATCH = 10**9            #: M_j (samples per iteration; Delta^f_j M_j must stay a float)
MAX_HORIZON = 10**6          #: T in slots; every start a_j is a slot in [0, T)
MAX_VALUE = 1e9              #: every real number (m_j, Delta^f_j, Delta^b_j, b^e, b^i, C, alpha, xi2)
MIN_POSITIVE = 1e-9          #: the divisors of (8), b^e, b^i and C, are >= this (tiny other
#:                              values are harmless: tau is a sum and MAX_SPEED bounds 1/tau)
MAX_SPEED = 10**6            #: phi_j at the job's fastest placement (so tau_j >= ~1e-6 slot):
#:                              keeps slot_speed's tolerance scan and the MILP's coefficients small


#: :func:`~optsched.problems.fields.as_float` within MAX_VALUE (the divisors b^e, b^i, C pass
#: ``min_positive=MIN_POSITIVE``).
as_float = functools.partial(fields.as_float, max_value=MAX_VALUE)


as_int = fields.as_int

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
        return Job(gpus=as_int(self.gpus, f"{where}.gpus", min=1, max=MAX_GPUS, limit="MAX_GPUS"),
                   iterations=as_int(self.iterations, f"{where}.iterations", min=1,
                                     max=MAX_ITERATIONS, limit="MAX_ITERATIONS"),
                   grad_size=as_float(self.grad_size, f"{where}.grad_size", min=0.0),
                   batch=as_int(self.batch, f"{where}.batch", min=1, max=MAX_BATCH,
                                limit="MAX_BATCH"),
                   fp_time=as_float(self.fp_time, f"{where}.fp_time", min=0.0),
                   bp_time=as_float(self.bp_time, f"{where}.bp_time", min=0.0))


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
        """Validate every field (docs/dev/design.md, "Instance JSON") and normalise it (lists become tuples,
        numbers the field's type, so a JSON-loaded and a Python-built instance compare equal)."""
        where = "instance"
        servers = tuple(as_int(v, f"{where}.servers[{i}]", min=1, max=MAX_SERVER_GPUS,
                               limit="MAX_SERVER_GPUS") for i, v in
                        enumerate(sequence(self.servers, f"{where}.servers", nonempty=True,
                                       most=MAX_SERVERS, limit="MAX_SERVERS", must_have=False)))
        if sum(servers) > MAX_GPUS:
            fail(f"{where}.servers", f"N = {sum(servers)} GPUs > {MAX_GPUS} (MAX_GPUS)")
        jobs = []
        for i, job in enumerate(sequence(self.jobs, f"{where}.jobs", nonempty=True, most=MAX_JOBS,
                                     limit="MAX_JOBS", must_have=False)):
            if not isinstance(job, Job):
                fail(f"{where}.jobs[{i}]", f"must be a Job, got {type(job).__name__}")
            jobs.append(job.checked(f"{where}.jobs[{i}]"))
        values: dict[str, Any] = dict(
            servers=servers, jobs=tuple(jobs),
            bw_inter=as_float(self.bw_inter, f"{where}.bw_inter", positive=True,
                              min_positive=MIN_POSITIVE),
            bw_intra=as_float(self.bw_intra, f"{where}.bw_intra", positive=True,
                              min_positive=MIN_POSITIVE),
            reduce_speed=as_float(self.reduce_speed, f"{where}.reduce_speed", positive=True,
                                  min_positive=MIN_POSITIVE),
            alpha=as_float(self.alpha, f"{where}.alpha", min=0.0),
            xi1=as_float(self.xi1, f"{where}.xi1", positive=True),
            xi2=as_float(self.xi2, f"{where}.xi2", min=0.0))
        if values["xi1"] > 1:
            fail(f"{where}.xi1", f"must be <= 1 (eq. 7: xi1 in (0, 1]), got {values['xi1']}")
        values["horizon"] = as_int(self.horizon, f"{where}.horizon", min=1, max=MAX_HORIZON,
                                   limit="MAX_HORIZON")
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

    def tau_exact(self, j: int, n: int, p: int) -> Fraction:
        """:meth:`tau` in exact arithmetic, every value the decimal it is written as
        (:func:`optsched.tolerance.exact`; issue 22)."""
        job = self.jobs[j]
        g = job.gpus
        share = exact(job.grad_size) * (g - 1) / g
        if n == 1:
            bandwidth = exact(self.bw_intra)
        else:
            k = max(Fraction(1), exact(self.xi1) * p)  # (7), clamped (digest E2)
            bandwidth = exact(self.bw_inter) / (k + exact(self.alpha) * (k - 1))
        exchange = 2 * share / bandwidth if g > 1 else 0
        reduce = share / exact(self.reduce_speed) if g > 1 else 0
        return (exchange + reduce + exact(self.xi2) * n + exact(job.fp_time) * job.batch
                + exact(job.bp_time))

    def phi(self, j: int, n: int, p: int) -> int:
        """Training speed floor(1 / tau) in exact arithmetic (iterations per slot,
        :func:`slot_speed`), memoised per instance."""
        memo = self.__dict__.setdefault("_phi", {})
        key = (j, n, p)
        if key not in memo:  # the float tau decides unless 1/tau is within 1e-9 of an integer
            memo[key] = count_within_filtered(1.0, self.tau(j, n, p),
                                              lambda: self.tau_exact(j, n, p))
        return memo[key]

    def min_servers(self, j: int) -> int:
        """Fewest servers that can host job ``j`` (largest servers first)."""
        need = self.jobs[j].gpus
        return next(k + 1 for k, total in enumerate(self._largest_first) if total >= need)

    @cached_property
    def _largest_first(self) -> tuple[int, ...]:
        """Prefix sums of the capacities, largest server first (for :meth:`min_servers`)."""
        return tuple(accumulate(sorted(self.servers, reverse=True)))

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


def slot_speed(tau: Fraction | float) -> int:
    """phi = floor(1 / tau): the largest integer ``k >= 0`` with ``k * tau <= 1`` in exact
    arithmetic (:func:`optsched.tolerance.count_within`; ``tau`` a Fraction, or a float read as
    the decimal it is written as).

    The one rounding rule of (9); :meth:`Instance.phi` (used by the models and the algorithms) and
    verify's slot simulation both call it on the exact ``tau`` of (8), so they agree exactly. With
    the data 36 * 0.001 + 0.004 = 0.04 it gives 25, where the float sum 0.04000000000000001 and
    plain floor(1 / tau) give 24; a tau above 1/k by any amount (1.0000005 / 4) gives k - 1.
    """
    return count_within(1, tau)


def _check_jobs(inst: Instance) -> None:
    """Every job fits the cluster, progresses (phi >= 1) at its worst reachable (n, p) and is no
    faster than MAX_SPEED at its best. For n >= 2, tau grows with n (xi2 n) and with p, so the
    extremes are at n in {min, max(2, min), max} servers."""
    for j, job in enumerate(inst.jobs):
        if job.gpus > inst.n_gpus:
            fail(f"instance.jobs[{j}].gpus", f"{job.gpus} exceeds the cluster's {inst.n_gpus} GPUs")
        low, high = inst.min_servers(j), inst.max_servers(j)
        for n in sorted({low, min(max(2, low), high)}):  # the fastest n: least tau at p = 1
            tau = inst.tau(j, n, 1)
            if not tau > 0:
                fail(f"instance.jobs[{j}]", f"per-iteration time {tau:.4g} at n={n} must be > 0 "
                     "(speed 1/tau would be unbounded)")
            if tau * MAX_SPEED < 1:
                fail(f"instance.jobs[{j}]", f"per-iteration time {tau:.4g} at n={n} gives "
                     f"{1 / tau:.4g} iterations per slot > {MAX_SPEED} (MAX_SPEED)")
        for n in {low, high}:  # the slowest n (tau grows with p, and with n >= 2)
            p = inst.max_contention if n >= 2 else 1
            tau = inst.tau(j, n, p)
            if inst.phi(j, n, p) < 1:
                fail(f"instance.jobs[{j}]", f"per-iteration time {tau:.4g} > 1 slot at n={n}, p={p} "
                     "(speed floor(1/tau) would be 0)")


@dataclass(frozen=True)
class Schedule:
    """Start slot ``a_j`` and placement ``y_j = (y_j1, ..., y_j|S|)`` of every job (held until T_j).

    Validated on construction, from JSON or built in Python (:meth:`__post_init__`): starts are
    integers in [0, MAX_HORIZON), every y_js an integer in [0, MAX_SERVER_GPUS], one placement per
    start, at most MAX_JOBS jobs and MAX_SERVERS entries per placement, e.g.
    ``schedule.jobs[1].placement[0]: must be >= 0, got -1``. What depends on the instance (T, |S|,
    O_s, G_j) is :func:`verify`'s to judge, naming the paper's equations.
    """

    starts: tuple[int, ...]
    placements: tuple[tuple[int, ...], ...]
    FAMILY = FAMILY

    def __post_init__(self) -> None:
        """Check the values and normalise them to tuples of ints (numpy integers become ints)."""
        starts = tuple(as_int(a, f"schedule.jobs[{j}].start", min=0, max=MAX_HORIZON - 1,
                              limit="MAX_HORIZON")
                       for j, a in enumerate(sequence(self.starts, "schedule.starts", most=MAX_JOBS,
                                                  limit="MAX_JOBS", must_have=False)))
        rows = sequence(self.placements, "schedule.placements", most=MAX_JOBS, limit="MAX_JOBS", must_have=False)
        if len(rows) != len(starts):
            fail("schedule.placements", f"must have one placement per start ({len(starts)}), "
                                        f"got {len(rows)}")
        places = tuple(_placement(c, f"schedule.jobs[{j}].placement") for j, c in enumerate(rows))
        object.__setattr__(self, "starts", starts)  # normalisation of the frozen fields
        object.__setattr__(self, "placements", places)

    def to_dict(self) -> dict:
        return {"family": FAMILY, "format_version": FORMAT_VERSION,
                "jobs": [{"start": a, "placement": list(c)}
                         for a, c in zip(self.starts, self.placements)]}

    @classmethod
    def from_dict(cls, data: Any) -> "Schedule":
        """Read the document's fields (unknown or missing keys are errors) and call the
        constructor, which validates the values."""
        r = Reader.top(data, FAMILY, FORMAT_VERSION, ("jobs",), what="schedule")
        jobs = r.objects("jobs", ("start", "placement"), nonempty=False)
        return cls(tuple(jr.data["start"] for jr in jobs), tuple(jr.data["placement"] for jr in jobs))


def _placement(value: Any, where: str) -> tuple[int, ...]:
    """One placement y_j: a list of at most MAX_SERVERS integers in [0, MAX_SERVER_GPUS]."""
    seq = sequence(value, where, most=MAX_SERVERS, limit="MAX_SERVERS", must_have=False)
    if all(type(y) is int and 0 <= y <= MAX_SERVER_GPUS for y in seq):  # the common case, fast
        return tuple(seq)
    return tuple(as_int(y, f"{where}[{s}]", min=0, max=MAX_SERVER_GPUS, limit="MAX_SERVER_GPUS")
                 for s, y in enumerate(seq))


def completion_times(instance: Instance, schedule: Schedule) -> list[int]:
    """T_j of every job, simulated with (6)–(9); checks (1), (2), (5) and the horizon.

    This is the independent checker: it recomputes p_j[t], k_j[t], B_j, tau_j[t] and phi_j[t] from
    the placements alone (shares no code with models/ or solvers/). Speeds only change when a job
    starts or ends, so the simulation steps from one such event to the next (at most 2 |J| steps)
    instead of slot by slot; within a step every job gains phi_j iterations per slot, and the step
    ends at the first slot in which some job's progress reaches F_j.
    """
    check_types(instance, schedule, FAMILY, Instance, Schedule, schedule_first=True)
    Schedule.__post_init__(schedule)
    _check_shape(instance, schedule)
    jobs = instance.jobs
    remaining = [job.iterations for job in jobs]
    finish: list[int | None] = [None] * len(jobs)
    waiting = sorted(range(len(jobs)), key=lambda j: (schedule.starts[j], j))
    load = _Load(instance, schedule)
    t = 0
    while t < instance.horizon and (waiting or load.active):
        started = []
        while waiting and schedule.starts[waiting[0]] <= t:
            started.append(waiting.pop(0))
            load.add(started[-1])
        load.check(started, t)
        if not load.active:
            t = schedule.starts[waiting[0]]
            continue
        speeds = load.speeds(t)
        step = min(-(-remaining[j] // speeds[j]) for j in load.active)
        if waiting:
            step = min(step, schedule.starts[waiting[0]] - t)
        step = min(step, instance.horizon - t)
        t += step
        for j in list(load.active):
            remaining[j] -= speeds[j] * step
            if remaining[j] <= 0:
                finish[j] = t  # (9): end of the slot in which progress reaches F_j
                load.remove(j)
    for j, f in enumerate(finish):
        if f is None:
            infeasible(f"(9) job {j} does not finish by the horizon T={instance.horizon} "
                        f"({remaining[j]} of {jobs[j].iterations} iterations left)")
    return [int(f) for f in finish if f is not None]  # every f is set (checked above)


def verify(instance: Instance, schedule: Schedule) -> float:
    """Check (1)–(5), simulate (6)–(9) and return the makespan max_j T_j.

    Raises
    ------
    InfeasibleSchedule
        Naming the violated equation, e.g. ``"(2) server 1 over capacity at slot 4: 6 > 4"``, or
        when ``schedule`` is not a ring_contention :class:`Schedule`.
    InvalidInstance
        When ``instance`` is not a ring_contention :class:`Instance`, or a value of the schedule
        is malformed (it is validated again: a frozen dataclass can still be patched), naming the
        field.
    """
    return float(max(completion_times(instance, schedule)))


def average_jct(instance: Instance, schedule: Schedule) -> float:
    """Average job completion time (1/|J|) sum_j T_j (release times are 0)."""
    times = completion_times(instance, schedule)
    return sum(times) / len(times)


def _check_shape(instance: Instance, schedule: Schedule) -> None:
    """(1): sum_s y_js = G_j; (2): y_js <= O_s; starts are slots in [0, T). The constructor has
    already made every value a non-negative integer ((5))."""
    if len(schedule.starts) != len(instance.jobs):
        infeasible(f"(1) schedule has {len(schedule.starts)} starts and {len(schedule.placements)} "
                    f"placements for {len(instance.jobs)} jobs")
    for j, (a, c) in enumerate(zip(schedule.starts, schedule.placements)):
        if not a < instance.horizon:
            infeasible(f"(4) job {j}: start {a!r} is not a slot in [0, {instance.horizon})")
        if len(c) != instance.n_servers:
            infeasible(f"(1) job {j}: placement has {len(c)} entries for {instance.n_servers} servers")
        for s, y in enumerate(c):
            if y > instance.servers[s]:
                infeasible(f"(2) job {j} server {s}: {y} GPUs > capacity {instance.servers[s]}")
        if sum(c) != instance.jobs[j].gpus:
            infeasible(f"(1) job {j}: placement holds {sum(c)} GPUs, G_j = {instance.jobs[j].gpus}")


class _Load:
    """GPUs in use and split jobs (1{0 < y_js < G_j}, eq. (6)) per server, kept up to date as jobs
    start and end; each job's servers are listed once (sparse), so a step costs O(N + |S|)."""

    def __init__(self, instance: Instance, schedule: Schedule) -> None:
        self.inst = instance
        self.used = [0] * instance.n_servers
        self.split = [0] * instance.n_servers
        self.hosts = [[(s, y) for s, y in enumerate(c) if y > 0] for c in schedule.placements]
        self.active: set[int] = set()
        self.cache: dict[tuple[int, int, int], int] = {}

    def add(self, j: int) -> None:
        self.active.add(j)
        for s, y in self.hosts[j]:
            self.used[s] += y
            if y < self.inst.jobs[j].gpus:
                self.split[s] += 1

    def check(self, started: list[int], t: int) -> None:
        """(2) at slot t on the servers of the jobs that start at t (load only grows when a job
        starts), the lowest over-full server first."""
        for s in sorted({s for j in started for s, _ in self.hosts[j]}):
            if self.used[s] > self.inst.servers[s]:
                infeasible(f"(2) server {s} over capacity at slot {t}: {self.used[s]} > "
                            f"{self.inst.servers[s]}")

    def remove(self, j: int) -> None:
        self.active.discard(j)
        for s, y in self.hosts[j]:
            self.used[s] -= y
            if y < self.inst.jobs[j].gpus:
                self.split[s] -= 1

    def speeds(self, t: int) -> dict[int, int]:
        """phi_j[t] of the active jobs: n_j servers spanned, p_j = max split count over the servers
        j is split on ((6); 0 when j is on one server), tau by (8), floor(1/tau) by slot_speed."""
        out = {}
        for j in self.active:
            hosts = self.hosts[j]
            g = self.inst.jobs[j].gpus
            p = max((self.split[s] for s, y in hosts if y < g), default=0)
            key = (j, len(hosts), p)
            if key not in self.cache:
                # floor(1 / tau) in exact arithmetic, as Instance.phi (the float tau decides
                # unless 1 / tau lies within 1e-9 of an integer)
                tau = _float_iteration_time(self.inst, *key)
                speed = count_within_filtered(1.0, tau, lambda: _iteration_time(self.inst, *key))
                if speed < 1:
                    infeasible(f"(9) job {j} makes no progress at slot {t}: tau = {tau:.4g} > 1")
                self.cache[key] = speed
            out[j] = self.cache[key]
        return out


def _float_iteration_time(instance: Instance, j: int, n: int, p: int) -> float:
    """Eq. (8) in floats, written out independently of :meth:`Instance.tau` (a filter for the
    exact :func:`_iteration_time`: every term is a positive sum, product or quotient of data)."""
    job = instance.jobs[j]
    w = job.gpus
    if n == 1:
        b = instance.bw_intra
    else:
        k = max(1.0, instance.xi1 * p)  # (7)
        b = instance.bw_inter / (k + instance.alpha * (k - 1))  # b^e / f(alpha, k)
    per_worker = job.grad_size * (w - 1) / w
    exchange = 2 * per_worker / b + per_worker / instance.reduce_speed if w > 1 else 0.0
    return exchange + instance.xi2 * n + job.fp_time * job.batch + job.bp_time


def _iteration_time(instance: Instance, j: int, n: int, p: int) -> Fraction:
    """Eq. (8) written out independently of :meth:`Instance.tau_exact`, in exact arithmetic (every
    value the decimal it is written as, :func:`optsched.tolerance.exact`); the per-job and
    per-contention parts are memoised on the instance (verify's own, ``_verify_parts``)."""
    parts = instance.__dict__.setdefault("_verify_parts", {})
    if j not in parts:
        job = instance.jobs[j]
        w = job.gpus
        per_worker = exact(job.grad_size) * (w - 1) / w  # (m_j / w_j)(w_j - 1)
        parts[j] = (per_worker, exact(job.fp_time) * job.batch + exact(job.bp_time))
    per_worker, local = parts[j]
    if n == 1:
        b = exact(instance.bw_intra)  # all workers on one server: NVLink, no contention
    else:
        if ("b", p) not in parts:
            k = max(Fraction(1), exact(instance.xi1) * p)  # (7)
            parts["b", p] = exact(instance.bw_inter) / (k + exact(instance.alpha) * (k - 1))
        b = parts["b", p]  # b^e / f(alpha, k)
    exchange = (2 * per_worker / b + per_worker / exact(instance.reduce_speed)
                if per_worker else Fraction(0))  # info + compute, 0 for a one-GPU ring
    return exchange + exact(instance.xi2) * n + local



def bars(instance: Instance, schedule: Schedule) -> list:
    """Gantt bars for ``optsched plot``: one row per GPU (``server s gpu g``), each job's ring
    workers over ``[a_j, T_j)`` (slots ``a_j .. T_j - 1``, held until the job ends). The schedule
    says how many GPUs of each server a job holds, not which: they are numbered by interval
    partitioning in start order. T_j comes from :func:`completion_times` (so an infeasible schedule
    raises InfeasibleSchedule)."""

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


# --------------------------------------------------------------------------- derived quantities
# Placements and contention-free durations of the model (digest §3.3, §3.5), shared by the
# algorithms, the bounds and the Pyomo models (models/ring_contention.py re-exports them); here so
# that evaluating a guarantee or a bound never imports Pyomo.


def placements(inst: Instance, j: int) -> list[tuple[int, ...]]:
    """P_j: every vector c in Z_+^S with sum_s c_s = G_j and c_s <= O_s (constraints (1), (2), (5))."""
    return _placements(inst.servers, inst.jobs[j].gpus)


@functools.lru_cache(maxsize=4096)
def _placements(servers: tuple[int, ...], need: int) -> list[tuple[int, ...]]:
    if not servers:
        return [()] if need == 0 else []
    rest_cap = sum(servers[1:])
    out: list[tuple[int, ...]] = []
    for k in range(max(0, need - rest_cap), min(servers[0], need) + 1):
        out.extend((k,) + tail for tail in _placements(servers[1:], need - k))
    return out


def n_servers_used(c: tuple[int, ...]) -> int:
    return sum(1 for y in c if y > 0)


def duration(inst: Instance, j: int, n: int, p: int = 1) -> int:
    """Slots job ``j`` needs at constant speed phi_j(n, p): ceil(F_j / phi_j(n, p)).

    Integer arithmetic, exactly as verify counts (remaining F_j drops by the integral phi each slot).
    """
    return -(-inst.jobs[j].iterations // inst.phi(j, n, p))


def min_durations(inst: Instance) -> list[int]:
    """rho^LB_j = min_n ceil(F_j / phi_j(n, 1)): no schedule runs job j faster (digest §3.5)."""
    return [min(duration(inst, j, n) for n in range(inst.min_servers(j), inst.max_servers(j) + 1))
            for j in range(len(inst.jobs))]


def simple_lower_bound(inst: Instance) -> dict[str, int]:
    """LB_len, LB_area and LB_conf of digest §3.5 (valid for every instance size)."""
    rho = min_durations(inst)
    n = inst.n_gpus
    area = -(-sum(job.gpus * r for job, r in zip(inst.jobs, rho)) // n)  # integers: exact ceil
    conflict = sum(r for job, r in zip(inst.jobs, rho) if 2 * job.gpus > n)
    return {"length": max(rho), "area": area, "conflict": conflict}


__all__ = ["FAMILY", "Instance", "Job", "Schedule", "average_jct", "bars", "completion_times",
           "duration", "min_durations", "n_servers_used", "placements", "simple_lower_bound",
           "slot_speed", "verify"]
