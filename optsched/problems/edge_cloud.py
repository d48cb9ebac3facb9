"""edge_cloud — She et al., online scheduling of ML jobs in edge-cloud networks (paper 001).

Problem (2) of the paper: servers ``s`` (edge servers and the cloud, the cloud is just a server with
large capacity and large upload delays) hold ``W_su`` type-``u`` worker slots and ``P_sv`` type-``v``
PS slots. Job ``j`` arrives at slot ``a_j`` and needs ``Q_j = E_j D_j M_j`` mini-batches; one worker
trains ``p_j`` mini-batches per slot, eq. (1):

    p_j = 1 / (n_j + H_j + 2 k_j / B_j)   when its workers and PS are not all on one server (xi_j = 0)
    p_j = 1 / (n_j + H_j)                 when they are (xi_j = 1).

Units: one slot is one hour; ``n_j`` and ``H_j`` are in hours, ``k_j`` in MB, ``B_j`` in Mbps, so the
communication term is ``2 * 8 k_j / B_j`` seconds.

Semantics (kept identical in :func:`verify`, the exact model and every algorithm):

- slots are integers ``t >= 1``; a job runs in the contiguous slots ``h_j..c_j`` (inclusive) with a
  constant worker count ``n_js`` on every server and one PS on one server ((2b)-(2d), (2j), (2k));
- (2e) holds iff the mini-batches trained, ``N_j (c_j - h_j + 1) p^xi_j``, are at least ``Q_j`` in
  exact arithmetic (:mod:`optsched.tolerance`, issue 22: ``n_j, H_j, k_j, B_j`` are the decimals
  the instance writes, :func:`optsched.tolerance.exact`), with ``xi_j = 1`` exactly when all
  workers sit on the PS's server; equivalently (worker-slots are integers) ``N_j (c_j - h_j + 1) >=
  R^xi_j = ceil(Q_j / p^xi_j)`` (:func:`optsched.tolerance.slots_needed`), no tolerance: a run one
  worker-slot short by any fraction is not done;
- (2i) server ``s`` (workers or PS) is usable only from slot ``a_j + Delta_js`` on;
- objective (2): total flow time ``sum_j (c_j - a_j)`` (the paper calls it completion time).

A schedule is a list of *runs* per job. The model (2) needs exactly one run per job; preemptive
baselines (which break (2c)/(2d) by design) use several and are checked by
:func:`verify_preemptive` instead.

Every :class:`Instance` and every :class:`Schedule`, loaded from JSON or built in Python, is
validated on construction (``__post_init__``), with messages naming the field, e.g.
``instance.jobs[3].chunks: must be >= 1, got 0``, and within the documented resource limits
(``MAX_*`` below; issue 15); ``from_dict`` only reads the JSON fields. :func:`verify` re-checks the
schedule and refuses objects of another family.
:func:`earliest_start`, :func:`min_flow` and :func:`deadlines` are per-job bounds of problem (2)
shared by the exact model and the solvers.
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from optsched.problems import fields
from optsched.problems.bars import Bar
from optsched.problems.fields import (Reader, as_list, check_types, fail, infeasible, readonly,
                                      sequence)
from fractions import Fraction

from optsched.tolerance import exact, slack, slots_needed

FAMILY = "edge_cloud"
FORMAT_VERSION = 1
SLOT_SECONDS = 3600.0

#: Resource limits (issue 15), checked on construction with a message naming the field and the
#: limit. Each is far above the paper preset (Sec. VI: 201 servers, U, V <= 10, 200 jobs,
#: D_j <= 50, Q_j <= 250,000, T = 1024, arrivals <= 683, delays <= 40, one-worker runs
#: below 2e4 slots, bandwidths <= 20480 Mbps, gradients <= 575 MB).
MAX_SERVERS = 10_000        #: S, rows of W and P
MAX_TYPES = 100             #: U worker types and V PS types (columns of W and P)
MAX_CAPACITY = 1_000_000    #: every W_su and P_sv (slots of one type on one server)
MAX_JOBS = 10_000
MAX_CHUNKS = 1_000          #: D_j, the most workers of a job (A_maxsche scans D_u = 1..D_j)
MAX_WORK = 10**9            #: Q_j = E_j D_j M_j mini-batches (so E_j, M_j <= 1e9 too)
MAX_HORIZON = 10**6         #: T, every arrival a_j and every upload delay Delta_js, in slots
MAX_VALUE = 1e9             #: every real number (n_j, H_j, k_j, B_j, F_1, F_2)
MIN_POSITIVE = 1e-9         #: every nonzero real number is >= this (ratios such as k/B stay finite)
MAX_DURATION = 10**6        #: R^0_j, the slots one worker needs distributed: no run is longer
MAX_SLOT = 10**12           #: a schedule's run starts and ends
MAX_RUNS = 1_000_000        #: runs in one schedule (preemptive schedules have several per job)


as_int = fields.as_int


#: :func:`~optsched.problems.fields.as_float` within MAX_VALUE and MIN_POSITIVE.
as_float = functools.partial(fields.as_float, max_value=MAX_VALUE, min_positive=MIN_POSITIVE)

JOB_FIELDS = ("arrival", "worker_type", "ps_type", "epochs", "chunks", "minibatches",
              "compute", "update", "grad_mb", "bandwidth", "delay")


def required_worker_slots(work: int, per_batch: Fraction | float) -> int:
    """``R = ceil(work * per_batch)`` in exact arithmetic (``per_batch`` a Fraction, or a float
    read as the decimal it is written as; :func:`optsched.tolerance.slots_needed`): exactly the
    fewest worker-slots that :func:`verify`'s (2e) accepts."""
    return slots_needed(exact(work) * exact(per_batch), 1)


def time_per_batch(compute: float, update: float, grad_mb: float, bandwidth: float,
                   xi: int) -> Fraction:
    """``1 / p^xi_j`` of eq. (1) in exact arithmetic: ``n_j + H_j (+ 2 * 8 k_j / B_j / 3600`` when
    ``xi = 0``) slots per mini-batch of one worker, every value the decimal it is written as."""
    t = exact(compute) + exact(update)
    if not xi:
        t += 16 * exact(grad_mb) / (exact(bandwidth) * 3600)
    return t


@dataclass(frozen=True)
class Job:
    """One job of (2): arrival ``a_j``, types ``u_j``/``v_j``, workload ``E_j, D_j, M_j``, per
    mini-batch times ``n_j``, ``H_j`` (hours), gradient size ``k_j`` (MB), bandwidth ``B_j`` (Mbps)
    and per-server upload delays ``Delta_js`` (slots)."""

    arrival: int
    worker_type: int
    ps_type: int
    epochs: int
    chunks: int
    minibatches: int
    compute: float
    update: float
    grad_mb: float
    bandwidth: float
    delay: tuple[int, ...]

    def __post_init__(self) -> None:
        """Normalisation only (a list of delays becomes a tuple, so a Job is hashable); the checks
        need the server and type counts, so :class:`Instance` runs them."""
        if isinstance(self.delay, list):
            object.__setattr__(self, "delay", tuple(self.delay))

    @property
    def work(self) -> int:
        """``Q_j = E_j D_j M_j`` mini-batches."""
        return self.epochs * self.chunks * self.minibatches

    @property
    def comm(self) -> float:
        """``2 k_j / B_j`` in slots (hours)."""
        return 2.0 * 8.0 * self.grad_mb / self.bandwidth / SLOT_SECONDS

    def per_batch(self, xi: int) -> float:
        """Slots per mini-batch of one worker, ``1 / p^xi_j`` (eq. (1)), as a float (for
        heuristics' keys; durations come from :meth:`required`, exact)."""
        return self.compute + self.update + (0.0 if xi else self.comm)

    def per_batch_exact(self, xi: int) -> Fraction:
        """``1 / p^xi_j`` in exact arithmetic (:func:`time_per_batch`), memoised per job."""
        memo = self.__dict__.setdefault("_per_batch_exact", {})
        if xi not in memo:
            memo[xi] = time_per_batch(self.compute, self.update, self.grad_mb, self.bandwidth, xi)
        return memo[xi]

    def rate(self, xi: int) -> float:
        """``p^xi_j = 1 / per_batch(xi)``: mini-batches one worker trains per slot (eq. (1))."""
        return 1.0 / self.per_batch(xi)

    def required(self, xi: int) -> int:
        """``R^xi_j = ceil(Q_j / p^xi_j)``: worker-slots needed to finish, the exact integer form
        of (2e) (the least ``d`` with ``d * p^xi_j >= Q_j`` in exact arithmetic), memoised."""
        memo = self.__dict__.setdefault("_required", {})
        if xi not in memo:
            memo[xi] = required_worker_slots(self.work, self.per_batch_exact(xi))
        return memo[xi]

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in JOB_FIELDS}
        d["delay"] = list(self.delay)
        return d

    @classmethod
    def read(cls, r: Reader) -> "Job":
        """The JSON object's fields as they are (unknown and missing keys were refused by ``r``);
        :class:`Instance` checks the values."""
        return cls(**{k: r.data[k] for k in JOB_FIELDS})

    def checked(self, where: str, n_servers: int, n_wtypes: int, n_ptypes: int) -> "Job":
        """This job with its values validated (InvalidInstance naming ``where.field``) and
        normalised (ints, floats, a tuple of delays), within the limits MAX_HORIZON, MAX_CHUNKS,
        MAX_WORK, MAX_VALUE / MIN_POSITIVE and MAX_DURATION."""
        delay = sequence(self.delay, f"{where}.delay", length=n_servers, tuple_only=True)
        job = Job(
            arrival=as_int(self.arrival, f"{where}.arrival", min=1, max=MAX_HORIZON,
                           limit="MAX_HORIZON"),
            worker_type=as_int(self.worker_type, f"{where}.worker_type", min=0, max=n_wtypes - 1),
            ps_type=as_int(self.ps_type, f"{where}.ps_type", min=0, max=n_ptypes - 1),
            epochs=as_int(self.epochs, f"{where}.epochs", min=1, max=MAX_WORK, limit="MAX_WORK"),
            chunks=as_int(self.chunks, f"{where}.chunks", min=1, max=MAX_CHUNKS,
                          limit="MAX_CHUNKS"),
            minibatches=as_int(self.minibatches, f"{where}.minibatches", min=1, max=MAX_WORK,
                               limit="MAX_WORK"),
            compute=as_float(self.compute, f"{where}.compute", positive=True),
            update=as_float(self.update, f"{where}.update", min=0.0),
            grad_mb=as_float(self.grad_mb, f"{where}.grad_mb", min=0.0),
            bandwidth=as_float(self.bandwidth, f"{where}.bandwidth", positive=True),
            delay=tuple(as_int(d, f"{where}.delay[{s}]", min=0, max=MAX_HORIZON,
                               limit="MAX_HORIZON") for s, d in enumerate(delay)))
        if job.work > MAX_WORK:
            fail(where, f"Q_j = epochs x chunks x minibatches = {job.work} > {MAX_WORK} (MAX_WORK)")
        slots = job.work * job.per_batch(0)
        if not slots <= MAX_DURATION:
            fail(where, f"one worker needs {slots:.4g} slots (Q_j x (n_j + H_j + 2 k_j / B_j)) "
                        f"> {MAX_DURATION} (MAX_DURATION)")
        return job


@dataclass(frozen=True)
class Instance:
    """Servers (``workers[s][u] = W_su``, ``ps[s][v] = P_sv``) and jobs; ``horizon`` (T), ``f1``,
    ``f2`` parametrise the price functions (7), (8) of A_online (the paper's algorithm is
    semi-online: it must know T). ``cloud`` lists the indices of cloud servers (informational).

    Validated on construction (docs/dev/design.md, "Instance JSON"): a wrong type, a negative size, an
    index out of range, inconsistent dimensions or a job no server can serve raise
    InvalidInstance naming the field; lists are normalised to tuples.

    >>> Instance(workers=((2,), (4, 1)), ps=((1,), (1,)), jobs=())
    Traceback (most recent call last):
    ...
    optsched.errors.InvalidInstance: instance.workers[1]: must have 1 entries, got 2
    """

    workers: tuple[tuple[int, ...], ...]
    ps: tuple[tuple[int, ...], ...]
    jobs: tuple[Job, ...]
    horizon: int = 64
    f1: float = 1.0
    f2: float = 1.0
    cloud: tuple[int, ...] = ()
    name: str = ""
    FAMILY = FAMILY

    def __post_init__(self) -> None:
        for key, depth in (("workers", 2), ("ps", 2), ("jobs", 1), ("cloud", 1)):
            value = getattr(self, key)
            normal = _tuples(value, depth)
            if normal is not value:
                object.__setattr__(self, key, normal)
        workers = _int_rows(self.workers, "instance.workers")
        object.__setattr__(self, "workers", workers)
        object.__setattr__(self, "ps", _int_rows(self.ps, "instance.ps", rows=len(workers)))
        object.__setattr__(self, "cloud", _indices(self.cloud, "instance.cloud", len(workers)))
        jobs = sequence(self.jobs, "instance.jobs", nonempty=True, most=MAX_JOBS,
                         limit="MAX_JOBS", tuple_only=True)
        S, U, V = len(workers), len(workers[0]), len(self.ps[0])
        checked = []
        for j, job in enumerate(jobs):
            if not isinstance(job, Job):
                fail(f"instance.jobs[{j}]", f"must be a Job, got {type(job).__name__}")
            checked.append(job.checked(f"instance.jobs[{j}]", S, U, V))
        object.__setattr__(self, "jobs", tuple(checked))
        object.__setattr__(self, "horizon", as_int(self.horizon, "instance.horizon", min=1,
                                                   max=MAX_HORIZON, limit="MAX_HORIZON"))
        object.__setattr__(self, "f1", as_float(self.f1, "instance.f1", positive=True))
        object.__setattr__(self, "f2", as_float(self.f2, "instance.f2", positive=True))
        if not isinstance(self.name, str):
            fail("instance.name", f"must be a string, got {type(self.name).__name__}")
        _check_servable(self)

    @property
    def n_servers(self) -> int:
        return len(self.workers)

    @property
    def n_wtypes(self) -> int:
        return len(self.workers[0])

    @property
    def n_ptypes(self) -> int:
        return len(self.ps[0])

    @cached_property
    def W(self) -> np.ndarray:
        """``W_su`` as a read-only servers x worker-types int array."""
        return readonly(self.workers, dtype=np.int64)

    @cached_property
    def P(self) -> np.ndarray:
        """``P_sv`` as a read-only servers x PS-types int array."""
        return readonly(self.ps, dtype=np.int64)

    def to_dict(self) -> dict:
        d = {"family": FAMILY, "format_version": FORMAT_VERSION,
             "workers": [list(r) for r in self.workers], "ps": [list(r) for r in self.ps],
             "horizon": self.horizon, "f1": self.f1, "f2": self.f2,
             "jobs": [j.to_dict() for j in self.jobs]}
        if self.cloud:
            d["cloud"] = list(self.cloud)
        if self.name:
            d["name"] = self.name
        return d

    @classmethod
    def from_dict(cls, data: Any) -> "Instance":
        """Read the JSON fields (unknown/missing keys, types, list shapes) and construct; the values
        are checked by the constructor."""
        r = Reader.top(data, FAMILY, FORMAT_VERSION, ("workers", "ps", "jobs"),
                       ("horizon", "f1", "f2", "cloud", "name"))
        jobs = tuple(Job.read(jr) for jr in r.objects("jobs", JOB_FIELDS, nonempty=False))
        return cls(workers=data["workers"], ps=data["ps"], jobs=jobs,
                   horizon=data.get("horizon", 64), f1=data.get("f1", 1.0),
                   f2=data.get("f2", 1.0), cloud=data.get("cloud", ()),
                   name=r.str("name") if r.has("name") else "")


def _tuples(value: Any, depth: int = 1) -> Any:
    """``value`` with lists turned into tuples down to ``depth`` levels (the same object when it
    already is; anything else is left for the checks to name)."""
    if not isinstance(value, (list, tuple)):
        return value
    items = [_tuples(v, depth - 1) for v in value] if depth > 1 else list(value)
    if type(value) is tuple and all(a is b for a, b in zip(items, value)):
        return value
    return tuple(items)


def _int_rows(value: Any, where: str, rows: int | None = None) -> tuple[tuple[int, ...], ...]:
    """A non-empty matrix of integers 0..MAX_CAPACITY with ``rows`` (<= MAX_SERVERS) rows of
    equal, non-zero length (<= MAX_TYPES), normalised to ints."""
    data = sequence(value, where, length=rows, nonempty=True, most=MAX_SERVERS,
                     limit="MAX_SERVERS", tuple_only=True)
    out = []
    for s, row in enumerate(data):
        sequence(row, f"{where}[{s}]", nonempty=True, length=len(data[0]) if s else None,
                  most=MAX_TYPES, limit="MAX_TYPES", tuple_only=True)
        out.append(tuple(as_int(v, f"{where}[{s}][{k}]", min=0, max=MAX_CAPACITY,
                                limit="MAX_CAPACITY") for k, v in enumerate(row)))
    return tuple(out)


def _indices(value: Any, where: str, size: int) -> tuple[int, ...]:
    """Distinct integers in ``0..size-1`` (server indices), normalised to ints."""
    seen: set[int] = set()
    for i, v in enumerate(sequence(value, where, most=size, limit="one per server", tuple_only=True)):
        k = as_int(v, f"{where}[{i}]", min=0, max=size - 1)
        if k in seen:
            fail(f"{where}[{i}]", f"duplicate server {k}")
        seen.add(k)
    return tuple(int(v) for v in value)


def _check_servable(inst: Instance) -> None:
    """Every job needs some server with a type-u_j worker slot and some with a type-v_j PS slot."""
    for j, job in enumerate(inst.jobs):
        if not any(row[job.worker_type] for row in inst.workers):
            fail(f"instance.jobs[{j}].worker_type", f"no server has a type-{job.worker_type} worker")
        if not any(row[job.ps_type] for row in inst.ps):
            fail(f"instance.jobs[{j}].ps_type", f"no server has a type-{job.ps_type} PS")


@dataclass(frozen=True)
class Run:
    """One contiguous run of a job: slots ``start..end`` (inclusive), PS server ``ps`` and the
    constant worker counts ``workers = ((s, n_js), ...)`` with ``n_js >= 1``."""

    start: int
    end: int
    ps: int
    workers: tuple[tuple[int, int], ...]

    @property
    def n_workers(self) -> int:
        return sum(n for _, n in self.workers)

    @property
    def colocated(self) -> bool:
        """``xi = 1``: every worker sits on the PS's server."""
        return all(s == self.ps for s, _ in self.workers)

    @property
    def length(self) -> int:
        return self.end - self.start + 1

    def to_dict(self) -> dict:
        return {"start": self.start, "end": self.end, "ps": self.ps,
                "workers": [[s, n] for s, n in self.workers]}

    @classmethod
    def read(cls, r: Reader) -> "Run":
        """The JSON object's fields as they are; :class:`Schedule` checks the values."""
        return cls(**{k: r.data[k] for k in RUN_FIELDS})

    def checked(self, where: str) -> "Run":
        """This run with its shape, types and domains validated (InvalidInstance naming the
        field, e.g. ``schedule.jobs[1][0].workers[0][1]: must be >= 1, got 0``) and normalised
        (ints, tuples): start and end in 1..MAX_SLOT, servers in 0..MAX_SERVERS-1, worker counts
        in 1..MAX_CHUNKS, at least one worker pair, no server twice. Whether the servers exist
        and the run is feasible is :func:`verify`'s job, so it can name the equation at fault."""
        pairs = _tuples(self.workers, 2)
        workers, seen = [], set()
        for i, pair in enumerate(sequence(pairs, f"{where}.workers", nonempty=True,
                                           most=MAX_SERVERS, limit="MAX_SERVERS", tuple_only=True)):
            pair = sequence(pair, f"{where}.workers[{i}]", length=2, tuple_only=True)
            s = as_int(pair[0], f"{where}.workers[{i}][0]", min=0, max=MAX_SERVERS - 1,
                       limit="MAX_SERVERS")
            if s in seen:
                fail(f"{where}.workers[{i}][0]", f"duplicate server {s} (one pair per server)")
            seen.add(s)
            workers.append((s, as_int(pair[1], f"{where}.workers[{i}][1]", min=1,
                                      max=MAX_CHUNKS, limit="MAX_CHUNKS")))
        return Run(start=as_int(self.start, f"{where}.start", min=1, max=MAX_SLOT, limit="MAX_SLOT"),
                   end=as_int(self.end, f"{where}.end", min=1, max=MAX_SLOT, limit="MAX_SLOT"),
                   ps=as_int(self.ps, f"{where}.ps", min=0, max=MAX_SERVERS - 1,
                             limit="MAX_SERVERS"),
                   workers=tuple(workers))


RUN_FIELDS = ("start", "end", "ps", "workers")


@dataclass(frozen=True)
class Schedule:
    """``runs[j]``: the runs of job ``j`` (exactly one for model (2)).

    Validated on construction, from JSON and from Python alike (lists become tuples, numpy
    integers ints): at most MAX_JOBS jobs and MAX_RUNS runs, one non-empty tuple of :class:`Run`
    per job, each checked by :meth:`Run.checked`. Feasibility (servers that exist, capacities,
    work) is :func:`verify`'s job, so it can name the equation at fault.

    >>> Schedule(((Run(1, 2, 0, ((0, "2"),)),),))
    Traceback (most recent call last):
    ...
    optsched.errors.InvalidInstance: schedule.jobs[0][0].workers[0][1]: must be an integer, got '2'
    """

    runs: tuple[tuple[Run, ...], ...]
    FAMILY = FAMILY

    def __post_init__(self) -> None:
        jobs = sequence(_tuples(self.runs, 2), "schedule.jobs", most=MAX_JOBS, limit="MAX_JOBS", tuple_only=True)
        if sum(len(r) if isinstance(r, tuple) else 0 for r in jobs) > MAX_RUNS:
            fail("schedule.jobs", f"must hold at most {MAX_RUNS} runs (MAX_RUNS)")
        runs = []
        for j, job_runs in enumerate(jobs):
            row = []
            for k, run in enumerate(sequence(job_runs, f"schedule.jobs[{j}]", nonempty=True, tuple_only=True)):
                if not isinstance(run, Run):
                    fail(f"schedule.jobs[{j}][{k}]", f"must be a Run, got {type(run).__name__}")
                row.append(run.checked(f"schedule.jobs[{j}][{k}]"))
            runs.append(tuple(row))
        object.__setattr__(self, "runs", tuple(runs))  # normalisation of the frozen field

    def to_dict(self) -> dict:
        return {"family": FAMILY, "format_version": FORMAT_VERSION,
                "jobs": [[run.to_dict() for run in runs] for runs in self.runs]}

    @classmethod
    def from_dict(cls, data: Any) -> "Schedule":
        """Read the document's fields (unknown or missing keys are errors) and construct; the
        constructor checks the values."""
        r = Reader.top(data, FAMILY, FORMAT_VERSION, ("jobs",), what="schedule")
        runs = []
        for j, item in enumerate(r.list("jobs")):
            items = as_list(item, f"schedule.jobs[{j}]", nonempty=True)
            runs.append(tuple(Run.read(Reader(x, f"schedule.jobs[{j}][{k}]", RUN_FIELDS))
                              for k, x in enumerate(items)))
        return cls(tuple(runs))

    @classmethod
    def single(cls, runs: list[Run]) -> "Schedule":
        """A non-preemptive schedule: one run per job."""
        return cls(tuple((run,) for run in runs))

    def completions(self) -> list[int]:
        return [max(run.end for run in runs) for runs in self.runs]


# ---------------------------------------------------------------- per-job bounds of problem (2)
def earliest_start(instance: Instance, j: int) -> int:
    """First slot job ``j`` can use: some worker server and some PS server must be ready (2i)."""
    job = instance.jobs[j]
    w = min(job.delay[s] for s in range(instance.n_servers) if instance.workers[s][job.worker_type])
    p = min(job.delay[s] for s in range(instance.n_servers) if instance.ps[s][job.ps_type])
    return job.arrival + max(w, p)


def min_flow(instance: Instance, j: int) -> int:
    """A lower bound on ``c_j - a_j`` on empty servers (the run occupies slots ``h..c``): the best of
    co-located on one server ``s`` (start ``a_j + Delta_js``, ``min(D_j, W_su)`` workers, ``R^1``)
    and distributed (earliest start, ``min(D_j, sum_s W_su)`` workers, ``R^0``)."""
    job = instance.jobs[j]
    u, v = job.worker_type, job.ps_type
    best = earliest_start(instance, j) + math.ceil(
        job.required(0) / min(job.chunks, int(instance.W[:, u].sum()))) - 1
    for s in range(instance.n_servers):
        if instance.workers[s][u] and instance.ps[s][v]:
            n = min(job.chunks, instance.workers[s][u])
            best = min(best, job.arrival + job.delay[s] + math.ceil(job.required(1) / n) - 1)
    return best - job.arrival


def deadlines(instance: Instance, upper_bound: float) -> list[int]:
    """Latest completion of each job in some optimal schedule, given any feasible total flow
    ``upper_bound``: ``c_j <= a_j + UB - sum_{k != j} LB_k`` with ``LB_k`` = :func:`min_flow`
    (digest §3.3, valid tightening); the horizon of the exact model
    (:func:`optsched.models.edge_cloud.build_exact`)."""
    lbs = [min_flow(instance, j) for j in range(len(instance.jobs))]
    total = sum(lbs)
    ub = math.floor(upper_bound + slack(upper_bound))  # flows are integers; never round UB down
    return [job.arrival + ub - (total - lbs[j])
            for j, job in enumerate(instance.jobs)]


def verify(instance: Instance, schedule: Schedule) -> float:
    """Check (2a)-(2l) of problem (2) and return the total flow time ``sum_j (c_j - a_j)``.

    Raises
    ------
    InfeasibleSchedule
        Naming the violated equation, e.g. ``"(2g) server 3 worker type 1 at slot 7: 9 > 8"``,
        or when ``schedule`` is not an edge_cloud :class:`Schedule`.
    InvalidInstance
        When ``instance`` is not an edge_cloud :class:`Instance`, or a value of the schedule
        (re-checked here: a frozen dataclass can still be patched) is malformed, naming the field.
    """
    _check_job_count(instance, schedule)
    for j, runs in enumerate(schedule.runs):
        if len(runs) != 1:
            infeasible(f"(2c)/(2d) job {j}: {len(runs)} runs; workers and PS must stay fixed "
                        "over one contiguous run")
        run = runs[0]
        _check_run(instance, j, run, respect_delay=True)
        job = instance.jobs[j]
        xi = int(run.colocated)
        # (2e) with xi = actual co-location (2f): (worker-slots) * p^xi >= Q_j, exactly
        slots = run.n_workers * run.length
        per = time_per_batch(job.compute, job.update, job.grad_mb, job.bandwidth, xi)
        if slots < job.work * per:
            infeasible(f"(2e) job {j}: {run.n_workers} workers x {run.length} slots = {slots} "
                       f"worker-slots train {float(slots / per):.12g} mini-batches < {job.work} "
                       f"needed (xi={xi}; {math.ceil(job.work * per)} worker-slots)")
    _check_capacity(instance, schedule)
    return float(sum(runs[0].end - job.arrival for runs, job in zip(schedule.runs, instance.jobs)))


def verify_preemptive(instance: Instance, schedule: Schedule, *, overhead: float = 0.0,
                      respect_delay: bool = False) -> float:
    """Checker for preemptive schedules (baseline ``preemptive``; breaks (2c)/(2d) by design).

    Every run must satisfy (2a), (2b), (2i) (when ``respect_delay``), the capacities (2g), (2h) and
    runs of one job must not overlap; the work (2e) is ``sum_runs N (len - o) p^xi >= Q_j`` (exact arithmetic) where every
    run after the first loses ``overhead`` slots of progress (preemption/migration cost). Returns
    ``sum_j (c_j - a_j)`` with ``c_j`` the end of the job's last run.
    """
    _check_job_count(instance, schedule)
    lost = exact(overhead)
    for j, runs in enumerate(schedule.runs):
        job = instance.jobs[j]
        done = Fraction(0)
        for k, run in enumerate(runs):
            _check_run(instance, j, run, respect_delay=respect_delay)
            if k and run.start <= runs[k - 1].end:
                infeasible(f"(2c) job {j}: runs {k - 1} and {k} overlap or are out of order")
            slots = max(Fraction(0), run.length - (lost if k else 0))
            done += run.n_workers * slots / time_per_batch(
                job.compute, job.update, job.grad_mb, job.bandwidth, int(run.colocated))
        if done < job.work:  # (2e) in exact arithmetic
            infeasible(f"(2e) job {j}: trains {float(done):.12g} mini-batches < {job.work} needed")
    _check_capacity(instance, schedule)
    return float(sum(max(r.end for r in runs) - job.arrival
                     for runs, job in zip(schedule.runs, instance.jobs)))


def _check_job_count(instance: Instance, schedule: Schedule) -> None:
    """verify's arguments must be this family's Instance and Schedule (a schedule of another
    family is InfeasibleSchedule, not an AttributeError); the schedule's values are re-checked
    (a frozen dataclass can still be patched), then the job count."""
    check_types(instance, schedule, FAMILY, Instance, Schedule)
    Schedule.__post_init__(schedule)
    if len(schedule.runs) != len(instance.jobs):
        infeasible(f"schedule: {len(schedule.runs)} jobs scheduled, instance has {len(instance.jobs)}")


def _check_run(instance: Instance, j: int, run: Run, *, respect_delay: bool) -> None:
    """(2a), (2b), (2i), (2j)/(2k) for one run of job ``j``."""
    job = instance.jobs[j]
    S = instance.n_servers
    if run.end < run.start:
        infeasible(f"(2k) job {j}: ends at slot {run.end} before it starts at {run.start}")
    if not 0 <= run.ps < S:
        infeasible(f"(2b) job {j}: PS on server {run.ps}, which does not exist")
    seen = set()
    for s, _ in run.workers:  # (distinct servers and n_js >= 1: checked by Run.checked)
        if not 0 <= s < S:
            infeasible(f"(2g) job {j}: workers on server {s}, which does not exist")
        seen.add(s)
    if not 1 <= run.n_workers <= job.chunks:
        infeasible(f"(2a) job {j}: {run.n_workers} workers, allowed 1..{job.chunks}")
    if not respect_delay and run.start < job.arrival:
        infeasible(f"(2i) job {j}: starts at slot {run.start} before its arrival {job.arrival}")
    if respect_delay:
        for s in sorted(seen | {run.ps}):
            ready = job.arrival + job.delay[s]
            if run.start < ready:
                infeasible(f"(2i) job {j}: uses server {s} from slot {run.start}, data ready at {ready}")


def _check_capacity(instance: Instance, schedule: Schedule) -> None:
    """(2g) per (server, worker type, slot) and (2h) per (server, PS type, slot), by event sweep."""
    events: dict[tuple, list] = defaultdict(list)
    for j, runs in enumerate(schedule.runs):
        job = instance.jobs[j]
        for run in runs:
            for s, n in run.workers:
                events["(2g)", s, job.worker_type].extend(((run.start, n), (run.end + 1, -n)))
            events["(2h)", run.ps, job.ps_type].extend(((run.start, 1), (run.end + 1, -1)))
    for (eq, s, typ), evs in events.items():
        cap = instance.workers[s][typ] if eq == "(2g)" else instance.ps[s][typ]
        load = 0
        for t, delta in sorted(evs, key=lambda e: (e[0], e[1])):
            load += delta
            if load > cap:
                what = "worker" if eq == "(2g)" else "PS"
                infeasible(f"{eq} server {s} {what} type {typ} at slot {t}: {load} > {cap}")




def bars(instance: Instance, schedule: Schedule) -> list:
    """Gantt bars for ``optsched plot``: one row per server (``edge s`` / ``cloud s``), one bar per
    run and server it uses over slots ``start .. end``, drawn as ``[start - 1, end)`` so that a bar
    ends at the job's completion c_j; labelled with the job's workers and PS there (``2W+PS``).
    Jobs sharing a server are drawn in lanes. No feasibility check."""

    def name(s: int) -> str:
        return f"{'cloud' if s in instance.cloud else 'edge'} {s}"

    out = [Bar(name(s), 0.0, 0.0, -1) for s in range(instance.n_servers)]
    for j, runs in enumerate(schedule.runs):
        for run in runs:
            count: dict[int, int] = {}
            for s, n in run.workers:
                count[s] = count.get(s, 0) + n
            for s in sorted(set(count) | {run.ps}):
                label = "+".join(x for x in (f"{count[s]}W" if s in count else "",
                                             "PS" if s == run.ps else "") if x)
                out.append(Bar(name(s), float(run.start - 1), float(run.end), j, label))
    return out


__all__ = ["FAMILY", "MAX_CAPACITY", "MAX_CHUNKS", "MAX_DURATION", "MAX_HORIZON", "MAX_JOBS",
           "MAX_RUNS", "MAX_SERVERS", "MAX_SLOT", "MAX_TYPES", "MAX_VALUE", "MAX_WORK",
           "MIN_POSITIVE", "Instance", "Job", "Run", "Schedule", "bars", "deadlines",
           "earliest_start", "min_flow", "required_worker_slots", "time_per_batch", "verify",
           "verify_preemptive"]
