"""elastic_cluster — Zhou et al., "Online Scheduling Algorithm for Heterogeneous Distributed Machine
Learning Jobs", IEEE TCC 2022 (paper 000): PS and Ring-AllReduce jobs on heterogeneous servers.

H servers offer R resources (capacity C_h^r). A job j arrives at slot a_j with weight w_j and must
train E_j epochs of D_j chunks x K_j mini-batches (W_j = E_j D_j K_j mini-batches). Once, on its
start, it gets a start slot, a number d_j of consecutive slots, ONE worker type m (resource vector
e_m, bandwidth b_m) and, for the parameter-server architecture (``ps``), ONE PS type p (z_p, B_p),
with y_{jhm} workers and s_{jhp} PSs on server h. q_j = 1 means every worker and PS sits on one
server.

Semantics (identical in :func:`verify`, the models and every algorithm):

- time is slotted; a job with start t and duration d occupies slots t..t+d-1 and completes at
  c_j = t + d (digest Sec. 2.6); t >= a_j (2j);
- per-worker rate (1) for PS: rho = 1 / (v_jm + U_j^p + [q=0] * comm_jm) and (14) for all-reduce:
  rho = 1 / (v_jm + (Phi-1)/Phi * (U_j + [q=0] * comm_jm)), Phi = number of workers, with
  comm_jm = comm_factor * 2 pi_j / b_m slots (comm_factor converts MB / Mbps to slots);
- (2f): d * (Phi * rho) >= W_j in exact arithmetic (issue 22; every value the decimal it is written
  as, :func:`optsched.tolerance.exact`: work short by any amount is not done); rho is
  evaluated for the job's q, and q = 1 must really be co-located (q = 0 with a co-located placement
  is allowed: the rate is then conservative, digest Sec. 8 #30);
- (2h)/(15b) capacities hold in every slot: load <= C_h^r exactly; (2i) every PS-hosting
  server's PS bandwidth s B_p is at least the bandwidth (Phi - y_h) b_m of the workers on the other
  servers, exactly;
- objective sum_j w_j c_j, absolute completion slots (Figs. 2-6).

The instance also carries T (``horizon``, the system timespan in lambda) and F (``weight_ratio``),
which define the price base lambda = 2 T H R F + 1 of eq. (11).
"""

from __future__ import annotations

import functools
import math
import weakref
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any, Sequence

import numpy as np

from optsched import tolerance
from optsched.problems import fields
from optsched.problems.bars import Bar
from optsched.problems.fields import Reader, check_types, fail, infeasible, readonly, sequence


as_int = fields.as_int

FAMILY = "elastic_cluster"
FORMAT_VERSION = 1
ARCHITECTURES = ("ps", "allreduce")

#: Resource limits (issue 15), checked on construction with a message naming the field and the
#: limit; each is far above the paper preset (150 servers, R = 3, 8 worker and 10 PS types,
#: 100 jobs, D_j <= 50, W_j <= 250,000, T = 150, values <= 5e4, one-worker runs <= 1.3e4 slots).
MAX_SERVERS = 10_000
MAX_RESOURCES = 16
MAX_TYPES = 100             #: worker types, and PS types
MAX_JOBS = 10_000
MAX_CHUNKS = 1_000          #: D_j, the most workers of a job (configurations scan 1..D_j)
MAX_WORK = 10**9            #: W_j = E_j D_j K_j mini-batches (so E_j, K_j <= 1e9 too)
MAX_HORIZON = 10**6         #: arrivals a_j and T, in slots
MAX_VALUE = 1e9             #: every real number (weights, demands, capacities, bandwidths, times)
MIN_POSITIVE = 1e-9         #: every nonzero real number is >= this (ratios stay finite)
MAX_DURATION = 10**6        #: W_j x (slowest per-mini-batch time, one worker): no run is longer
MAX_CONFIG_SCAN = 5_000_000  #: sum_j (worker types x PS types x 2 x D_j), the configuration scan
MAX_SLOT = 10**12           #: a schedule's starts, durations and segment slots

#: :func:`~optsched.problems.fields.as_float` within MAX_VALUE and MIN_POSITIVE.
as_float = functools.partial(fields.as_float, max_value=MAX_VALUE, min_positive=MIN_POSITIVE)

JOB_FIELDS = ("arrival", "weight", "epochs", "chunks", "batches", "compute", "update", "grad_size")
TYPE_FIELDS = ("demand", "bandwidth")


@dataclass(frozen=True)
class NodeType:
    """A worker type (e_m, b_m) or PS type (z_p, B_p): per-unit resource demand and bandwidth."""

    demand: tuple[float, ...]
    bandwidth: float

    def to_dict(self) -> dict:
        return {"demand": list(self.demand), "bandwidth": self.bandwidth}

    def checked(self, where: str, n_res: int) -> "NodeType":
        """This type with its values validated (messages name ``where``, e.g.
        ``instance.worker_types[1].demand[0]``) and normalised (tuples of floats)."""
        demand = tuple(as_float(v, f"{where}.demand[{k}]", min=0.0)
                       for k, v in enumerate(sequence(self.demand, f"{where}.demand", length=n_res)))
        return NodeType(demand, as_float(self.bandwidth, f"{where}.bandwidth", positive=True))


@dataclass(frozen=True)
class Job:
    """One job: a_j, w_j, E_j, D_j (chunks = max workers), K_j, ``compute`` v_{jm} (slots per
    mini-batch, per worker type), ``update`` U_j^p per PS type (PS) or (U_j,) (all-reduce), in
    slots, and ``grad_size`` pi_j (comm time 2 pi_j / b_m * comm_factor)."""

    arrival: int
    weight: float
    epochs: int
    chunks: int
    batches: int
    compute: tuple[float, ...]
    update: tuple[float, ...]
    grad_size: float

    @property
    def work(self) -> int:
        """W_j = E_j D_j K_j mini-batches."""
        return self.epochs * self.chunks * self.batches

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in JOB_FIELDS}
        d["compute"], d["update"] = list(self.compute), list(self.update)
        return d

    def checked(self, where: str, n_workers: int, n_update: int) -> "Job":
        """This job with its values validated (messages name ``where``, e.g.
        ``instance.jobs[3].weight``) and normalised (ints, floats, tuples)."""
        job = Job(
            arrival=as_int(self.arrival, f"{where}.arrival", min=1, max=MAX_HORIZON),
            weight=as_float(self.weight, f"{where}.weight", positive=True),
            epochs=as_int(self.epochs, f"{where}.epochs", min=1, max=MAX_WORK),
            chunks=as_int(self.chunks, f"{where}.chunks", min=1, max=MAX_CHUNKS),
            batches=as_int(self.batches, f"{where}.batches", min=1, max=MAX_WORK),
            compute=tuple(as_float(v, f"{where}.compute[{k}]", positive=True) for k, v in
                          enumerate(sequence(self.compute, f"{where}.compute", length=n_workers))),
            update=tuple(as_float(v, f"{where}.update[{k}]", min=0.0) for k, v in
                         enumerate(sequence(self.update, f"{where}.update", length=n_update))),
            grad_size=as_float(self.grad_size, f"{where}.grad_size", min=0.0),
        )
        if job.work > MAX_WORK:
            fail(f"{where}", f"W_j = epochs x chunks x batches = {job.work} > {MAX_WORK} (MAX_WORK)")
        return job


@dataclass(frozen=True)
class Instance:
    """An elastic_cluster instance (architecture ``ps`` or ``allreduce``).

    ``capacity[h][r]`` = C_h^r; ``worker_types`` / ``ps_types`` (empty for all-reduce); jobs;
    ``horizon`` T and ``weight_ratio`` F for lambda (11); ``comm_factor`` converts pi/b to slots.

    Every instance, loaded from JSON or built in Python, is validated on construction
    (:meth:`__post_init__`): a wrong type, negative size or inconsistent dimension raises
    InvalidInstance naming the field, e.g. ``instance.jobs[3].weight: must be > 0, got -1``.
    """

    architecture: str
    resources: tuple[str, ...]
    capacity: tuple[tuple[float, ...], ...]
    worker_types: tuple[NodeType, ...]
    ps_types: tuple[NodeType, ...]
    jobs: tuple[Job, ...]
    horizon: int
    weight_ratio: float = 1.0
    comm_factor: float = 1.0
    name: str = ""
    FAMILY = FAMILY

    def __post_init__(self) -> None:
        """Validate every field (docs/dev/design.md, "Instance JSON") and normalise it: lists become tuples,
        numbers the field's type (so a JSON-loaded and a Python-built instance compare equal)."""
        where = "instance"
        arch = self.architecture
        if not isinstance(arch, str):
            fail(f"{where}.architecture", f"must be a string, got {type(arch).__name__}")
        if arch not in ARCHITECTURES:
            fail(f"{where}.architecture", f"must be one of {', '.join(ARCHITECTURES)}, got {arch!r}")
        resources = sequence(self.resources, f"{where}.resources", nonempty=True)
        for k, name in enumerate(resources):
            if not isinstance(name, str):
                fail(f"{where}.resources[{k}]", f"must be a string, got {name!r}")
        n_res = len(resources)
        if n_res > MAX_RESOURCES:
            fail(f"{where}.resources", f"at most {MAX_RESOURCES} (MAX_RESOURCES), got {n_res}")
        servers = sequence(self.capacity, f"{where}.capacity", nonempty=True)
        if len(servers) > MAX_SERVERS:
            fail(f"{where}.capacity", f"at most {MAX_SERVERS} servers (MAX_SERVERS), "
                                      f"got {len(servers)}")
        capacity = tuple(
            tuple(as_float(v, f"{where}.capacity[{i}][{k}]", min=0.0)
                  for k, v in enumerate(sequence(row, f"{where}.capacity[{i}]", length=n_res)))
            for i, row in enumerate(servers))
        workers = _nodes(self.worker_types, f"{where}.worker_types", n_res, nonempty=True)
        ps = _nodes(self.ps_types, f"{where}.ps_types", n_res, nonempty=arch == "ps")
        if arch == "allreduce" and ps:
            fail(f"{where}.ps_types", "must be empty for architecture 'allreduce'")
        n_update = len(ps) if arch == "ps" else 1
        if len(sequence(self.jobs, f"{where}.jobs")) > MAX_JOBS:
            fail(f"{where}.jobs", f"at most {MAX_JOBS} jobs (MAX_JOBS), got {len(self.jobs)}")
        jobs = tuple(_item(job, Job, f"{where}.jobs[{i}]").checked(f"{where}.jobs[{i}]",
                                                                    len(workers), n_update)
                     for i, job in enumerate(sequence(self.jobs, f"{where}.jobs", nonempty=True)))
        _check_types(workers, "worker_types")
        values = dict(
            resources=tuple(resources), capacity=capacity, worker_types=workers, ps_types=ps,
            jobs=jobs, horizon=as_int(self.horizon, f"{where}.horizon", min=1, max=MAX_HORIZON),
            weight_ratio=as_float(self.weight_ratio, f"{where}.weight_ratio", positive=True),
            comm_factor=as_float(self.comm_factor, f"{where}.comm_factor", positive=True))
        _check_sizes(values, n_update)
        if not isinstance(self.name, str):
            fail(f"{where}.name", f"must be a string, got {type(self.name).__name__}")
        for key, value in values.items():  # normalisation of the frozen fields
            object.__setattr__(self, key, value)

    # ----------------------------------------------------------------------------- sizes
    @property
    def is_ps(self) -> bool:
        return self.architecture == "ps"

    @property
    def n_servers(self) -> int:
        return len(self.capacity)

    @property
    def n_res(self) -> int:
        return len(self.resources)

    @cached_property
    def integral(self) -> tuple[bool, ...]:
        """Per resource r: every worker and PS demand of r is an integer (below 2^28), so every
        load of r is an integer, exact in floats, and ``load <= C`` iff ``load <= floor(C)``."""
        types = self.worker_types + self.ps_types
        return tuple(all(float(t.demand[r]).is_integer() and t.demand[r] < 2.0**28 for t in types)
                     for r in range(self.n_res))

    @cached_property
    def cap(self) -> np.ndarray:
        """The capacity a load can use, read-only H x R: ``floor(C_h^r)`` for an :attr:`integral`
        resource (its loads are integers), else C_h^r. Every algorithm and model bounds its float
        loads by this, so with integral demands their comparisons are exact, as :func:`verify`."""
        return readonly([[math.floor(c) if self.integral[r] else c for r, c in enumerate(row)]
                         for row in self.capacity])

    @cached_property
    def e(self) -> np.ndarray:
        """Worker demands e_m^r, M x R."""
        return readonly([t.demand for t in self.worker_types])

    @cached_property
    def z(self) -> np.ndarray:
        """PS demands z_p^r, P x R (0 x R for all-reduce)."""
        return readonly([t.demand for t in self.ps_types]).reshape(len(self.ps_types), self.n_res)

    @cached_property
    def unit(self) -> np.ndarray:
        """Normalising unit per resource: mean_h C_h^r (digest Sec. 3.7 "normalized" units)."""
        return readonly(np.maximum(self.cap.mean(axis=0), 1e-12))

    # ----------------------------------------------------------------------------- rates
    def comm(self, j: int, m: int) -> float:
        """Communication time per iteration 2 pi_j / b_m, in slots."""
        return self.comm_factor * 2.0 * self.jobs[j].grad_size / self.worker_types[m].bandwidth

    def time_per_batch(self, j: int, m: int, p: int, n: int, q: int) -> Fraction:
        """``1 / rho`` of eq. (1) (PS, type p) or (14) (all-reduce, n workers, p ignored) in exact
        arithmetic, every value the decimal it is written as (:func:`optsched.tolerance.exact`)."""
        job = self.jobs[j]
        c = (self.comm_exact(j, m) if q == 0 else 0)
        if self.is_ps:
            return tolerance.exact(job.compute[m]) + tolerance.exact(job.update[p]) + c
        return tolerance.exact(job.compute[m]) + Fraction(n - 1, n) * (
            tolerance.exact(job.update[0]) + c)

    def comm_exact(self, j: int, m: int) -> Fraction:
        """:meth:`comm` in exact arithmetic."""
        return (tolerance.exact(self.comm_factor) * 2 * tolerance.exact(self.jobs[j].grad_size)
                / tolerance.exact(self.worker_types[m].bandwidth))

    def rate(self, j: int, m: int, p: int, n: int, q: int) -> float:
        """Per-worker rate: eq. (1) (PS, type p) or eq. (14) (all-reduce, n workers, p ignored), as
        a float (heuristics' keys; durations come from :meth:`duration`, exact)."""
        job = self.jobs[j]
        c = self.comm(j, m) if q == 0 else 0.0
        if self.is_ps:
            return 1.0 / (job.compute[m] + job.update[p] + c)
        return 1.0 / (job.compute[m] + (n - 1) / n * (job.update[0] + c))

    def duration(self, j: int, m: int, p: int, n: int, q: int) -> int:
        """Minimal d that :func:`verify`'s (2f) accepts: the least d with ``d * n * rho >= W_j`` in
        exact arithmetic (:func:`optsched.tolerance.slots_needed`), so a model needs neither one
        slot more nor one less than the checker (dominance fact 1; issues 13, 22)."""
        work = self.jobs[j].work
        return tolerance.slots_needed_filtered(  # the float quotient decides unless near an integer
            work / (n * self.rate(j, m, p, n, q)),
            lambda: work * self.time_per_batch(j, m, p, n, q) / n)

    def ps_needed(self, m: int, p: int, remote: int) -> int:
        """The fewest (>= 1) type-p PSs on one server whose bandwidth s * B_p is at least
        ``remote * b_m``, as :func:`verify`'s (2i) checks it (exactly)."""
        return max(1, self.ps_raw(m, p, remote))

    def ps_raw(self, m: int, p: int, remote: int) -> int:
        """The fewest (>= 0) type-p PSs with ``s * B_p >= remote * b_m`` ((2i) alone, exact)."""
        b, big_b = self.worker_types[m].bandwidth, self.ps_types[p].bandwidth
        return tolerance.slots_needed_filtered(  # the float quotient decides unless near an integer
            remote * b / big_b, lambda: remote * tolerance.exact(b) / tolerance.exact(big_b))

    @property
    def cap_limit(self) -> np.ndarray:
        """The largest per-slot load :func:`verify` accepts on (h, r), as a linear bound for models
        and algorithms: :attr:`cap` (``floor(C)`` where loads are integers, so a solver's
        feasibility tolerance cannot let an integral load past C; issue 22)."""
        return self.cap

    def configurations(self, j: int) -> list[tuple[int, int, int, int, int]]:
        """Non-dominated configurations (m, p, q, N, d) of job j (digest Sec. 3.2 / 3.6).

        d = ceil(W_j / (N rho)); for fixed (m, p, q), N is kept only if no smaller N' has
        d' <= d (dominance fact 1; for all-reduce the throughput is not monotone in N, so this is
        the exact pruning of digest Sec. 3.6). p = -1 for all-reduce. Memoised per instance
        (:func:`memo`; the list must not be modified).
        """
        table = memo(self, "configurations")
        if j in table:
            return table[j]
        out = []
        ps_range = range(len(self.ps_types)) if self.is_ps else (-1,)
        for m in range(len(self.worker_types)):
            for p in ps_range:
                for q in (1, 0):
                    best = math.inf
                    for n in range(1, self.jobs[j].chunks + 1):
                        d = self.duration(j, m, p, n, q)
                        if d < best:
                            best = d
                            out.append((m, p, q, n, d))
        table[j] = out
        return out

    @cached_property
    def _norm_demand(self) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """(sum_r e_m^r / unit_r per m, sum_r z_p^r / unit_r per p)."""
        return (tuple(float(x) for x in (self.e / self.unit).sum(axis=1)),
                tuple(float(x) for x in (self.z / self.unit).sum(axis=1)))

    def min_resource_time(self, j: int) -> float:
        """min over configurations of d (N sum_r e_m^r/unit_r + sum_r z_p^r/unit_r): the smallest
        normalised resource-time of a schedule of j (denominator of (A1), one PS). Memoised per
        job; the same float operations, elementwise over the configurations."""
        table = memo(self, "min_resource_time")
        if j not in table:
            conf = np.array(self.configurations(j), dtype=float).reshape(-1, 5)
            m, p, n, d = conf[:, 0].astype(int), conf[:, 1].astype(int), conf[:, 3], conf[:, 4]
            per_slot = n * np.array(self._norm_demand[0])[m]
            if self.is_ps:
                per_slot = per_slot + np.array(self._norm_demand[1])[p]
            table[j] = float((d * per_slot).min(initial=math.inf))
        return table[j]

    @property
    def price_base(self) -> float:
        """lambda = 2 T H R F + 1 (eq. (11), digest Sec. 3.7)."""
        return 2.0 * self.horizon * self.n_servers * self.n_res * self.weight_ratio + 1.0

    # ----------------------------------------------------------------------------- json
    def to_dict(self) -> dict:
        d = {"family": FAMILY, "format_version": FORMAT_VERSION,
             "architecture": self.architecture, "resources": list(self.resources),
             "capacity": [list(c) for c in self.capacity],
             "worker_types": [t.to_dict() for t in self.worker_types],
             "ps_types": [t.to_dict() for t in self.ps_types],
             "jobs": [j.to_dict() for j in self.jobs], "horizon": self.horizon,
             "weight_ratio": self.weight_ratio, "comm_factor": self.comm_factor}
        if self.name:
            d["name"] = self.name
        return d

    @classmethod
    def from_dict(cls, data: Any) -> "Instance":
        """Read the JSON document's fields (unknown or missing keys are errors) and call the
        constructor, which validates the values."""
        r = Reader.top(data, FAMILY, FORMAT_VERSION,
                       ("architecture", "resources", "capacity", "worker_types", "ps_types", "jobs",
                        "horizon"), ("weight_ratio", "comm_factor", "name"))

        def nodes(key: str) -> tuple[NodeType, ...]:
            return tuple(NodeType(t.data["demand"], t.data["bandwidth"])
                         for t in r.objects(key, TYPE_FIELDS, nonempty=False))

        jobs = tuple(Job(**{k: jr.data[k] for k in JOB_FIELDS})
                     for jr in r.objects("jobs", JOB_FIELDS, nonempty=False))
        return cls(architecture=data["architecture"], resources=data["resources"],
                   capacity=data["capacity"], worker_types=nodes("worker_types"),
                   ps_types=nodes("ps_types"), jobs=jobs, horizon=data["horizon"],
                   weight_ratio=data.get("weight_ratio", 1.0),
                   comm_factor=data.get("comm_factor", 1.0), name=data.get("name", ""))


def _item(value: Any, cls: type, where: str) -> Any:
    if not isinstance(value, cls):
        fail(where, f"must be a {cls.__name__}, got {type(value).__name__}")
    return value


def _nodes(value: Any, where: str, n_res: int, nonempty: bool) -> tuple[NodeType, ...]:
    if len(sequence(value, where)) > MAX_TYPES:
        fail(where, f"at most {MAX_TYPES} types (MAX_TYPES), got {len(value)}")
    return tuple(_item(t, NodeType, f"{where}[{k}]").checked(f"{where}[{k}]", n_res)
                 for k, t in enumerate(sequence(value, where, nonempty=nonempty)))


#: Per-instance memo tables (id(instance) -> table name -> dict), outside the frozen instances;
#: an entry is dropped when its instance is garbage collected.
_MEMO: dict[int, dict[str, dict]] = {}


def memo(inst: object, table: str) -> dict:
    """The memo table ``table`` of ``inst`` (e.g. configurations per job), kept in a module-level
    dict keyed by ``id(inst)`` and removed when ``inst`` is collected, so nothing is ever written
    into a frozen instance. Entries must be pure functions of the instance's fields.

    >>> inst = Instance("allreduce", ("gpu",), ((1.0,),), (NodeType((1.0,), 1.0),), (),
    ...                 (Job(1, 1.0, 1, 1, 1, (1.0,), (0.0,), 0.0),), horizon=2)
    >>> memo(inst, "demo")["x"] = 1
    >>> memo(inst, "demo")
    {'x': 1}
    """
    key = id(inst)
    tables = _MEMO.get(key)
    if tables is None:
        tables = _MEMO[key] = {}
        weakref.finalize(inst, _MEMO.pop, key, None)
    return tables.setdefault(table, {})


def _check_sizes(values: dict, n_update: int) -> None:
    """MAX_DURATION (every job's slowest one-worker run: W_j x (max v + max U + comm with the
    slowest worker bandwidth), which bounds every configuration's d) and MAX_CONFIG_SCAN."""
    workers, jobs = values["worker_types"], values["jobs"]
    slowest_link = min(t.bandwidth for t in workers)
    scan = 0
    for i, job in enumerate(jobs):
        per_batch = (max(job.compute) + max(job.update)
                     + values["comm_factor"] * 2.0 * job.grad_size / slowest_link)
        slots = job.work * per_batch
        if not slots <= MAX_DURATION:
            fail(f"instance.jobs[{i}]", f"one worker needs {slots:.4g} slots (W_j x per-mini-batch "
                                        f"time) > {MAX_DURATION} (MAX_DURATION)")
        scan += len(workers) * max(1, len(values["ps_types"])) * 2 * job.chunks
    if scan > MAX_CONFIG_SCAN:
        fail("instance.jobs", f"the configuration scan (types x PS types x 2 x D_j summed over "
                              f"jobs) is {scan} > {MAX_CONFIG_SCAN} (MAX_CONFIG_SCAN)")


def _check_types(types: tuple[NodeType, ...], where: str) -> None:
    for k, t in enumerate(types):
        if not any(x > 0 for x in t.demand):
            fail(f"instance.{where}[{k}].demand", "must use some resource (all zero)")


# ------------------------------------------------------------------------------------ schedule


@dataclass(frozen=True)
class Plan:
    """Job j's schedule: start, duration d_j, worker type m, PS type p (-1 for all-reduce), q_j,
    workers y_{jh.} and PSs s_{jh.} per server. ``segments`` (preemptive baselines only) lists the
    run intervals [first, last] (inclusive slots); empty means one run start..start+d-1."""

    start: int
    duration: int
    worker_type: int
    ps_type: int
    colocated: int
    workers: tuple[int, ...]
    ps: tuple[int, ...]
    segments: tuple[tuple[int, int], ...] = ()

    @property
    def completion(self) -> int:
        if self.segments:
            return self.segments[-1][1] + 1
        return self.start + self.duration

    def to_dict(self) -> dict:
        d = {"start": self.start, "duration": self.duration, "worker_type": self.worker_type,
             "ps_type": self.ps_type, "colocated": self.colocated, "workers": list(self.workers),
             "ps": list(self.ps)}
        if self.segments:
            d["segments"] = [list(s) for s in self.segments]
        return d

    def checked(self, where: str) -> "Plan":
        """This plan with its shape and types validated (messages name ``where``, e.g.
        ``schedule.jobs[1].workers[0]``) and normalised (ints and tuples; numpy integers become
        ints). Feasibility is :func:`verify`'s business."""
        segments: tuple[tuple[int, int], ...] = ()
        if not (isinstance(self.segments, (tuple, list)) and len(self.segments) == 0):
            segments = tuple(
                (_int(s[0], f"{where}.segments[{i}][0]", min=1, max=MAX_SLOT),
                 _int(s[1], f"{where}.segments[{i}][1]", min=1, max=MAX_SLOT))
                for i, s in enumerate(_pairs(self.segments, f"{where}.segments")))
        return type(self)(
            start=_int(self.start, f"{where}.start", min=1, max=MAX_SLOT),
            duration=_int(self.duration, f"{where}.duration", min=1, max=MAX_SLOT),
            worker_type=_int(self.worker_type, f"{where}.worker_type", min=0, max=MAX_TYPES - 1),
            ps_type=_int(self.ps_type, f"{where}.ps_type", min=-1, max=MAX_TYPES - 1),
            colocated=_int(self.colocated, f"{where}.colocated", min=0, max=1),
            workers=_ints(self.workers, f"{where}.workers"),
            ps=_ints(self.ps, f"{where}.ps"), segments=segments)


def _int(value: Any, where: str, *, min: int | None = None, max: int | None = None) -> int:
    return as_int(value, where, min=min, max=max)


def _ints(value: Any, where: str) -> tuple[int, ...]:
    seq = sequence(value, where)
    if len(seq) > MAX_SERVERS:
        fail(where, f"at most {MAX_SERVERS} servers (MAX_SERVERS), got {len(seq)}")
    if all(type(v) is int and 0 <= v <= MAX_CHUNKS for v in seq):  # the common case, fast
        return tuple(seq)
    return tuple(_int(v, f"{where}[{k}]", min=0, max=MAX_CHUNKS) for k, v in enumerate(seq))


def _pairs(value: Any, where: str) -> Sequence[Sequence[Any]]:
    for i, pair in enumerate(sequence(value, where)):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            fail(f"{where}[{i}]", "must be [first, last]")
    return value


@dataclass(frozen=True)
class Schedule:
    """One :class:`Plan` per job, in job order. Validated on construction (shapes and types,
    e.g. ``schedule.jobs[1].workers[0]: must be >= 0, got -1``); :func:`verify` checks
    feasibility."""

    plans: tuple[Plan, ...]
    FAMILY = FAMILY

    def __post_init__(self) -> None:
        if len(sequence(self.plans, "schedule.jobs")) > MAX_JOBS:
            fail("schedule.jobs", f"at most {MAX_JOBS} jobs (MAX_JOBS), got {len(self.plans)}")
        plans = tuple(_item(p, Plan, f"schedule.jobs[{i}]").checked(f"schedule.jobs[{i}]")
                      for i, p in enumerate(sequence(self.plans, "schedule.jobs")))
        object.__setattr__(self, "plans", plans)  # normalisation of the frozen field

    def to_dict(self) -> dict:
        return {"family": FAMILY, "format_version": FORMAT_VERSION,
                "jobs": [p.to_dict() for p in self.plans]}

    @classmethod
    def from_dict(cls, data: Any) -> "Schedule":
        """Read the document's fields (unknown or missing keys are errors) and call the
        constructors, which validate the values."""
        r = Reader.top(data, FAMILY, FORMAT_VERSION, ("jobs",), what="schedule")
        fields = ("start", "duration", "worker_type", "ps_type", "colocated", "workers", "ps")
        plans = tuple(Plan(**{k: p.data[k] for k in fields}, segments=p.data.get("segments", ()))
                      for p in r.objects("jobs", fields, ("segments",), nonempty=False))
        return cls(plans)


# -------------------------------------------------------------------------------------- verify


def verify(instance: Instance, schedule: Schedule) -> float:
    """Check (2a)-(2o) (PS) or (14)-(15) (all-reduce) and return sum_j w_j c_j.

    Non-preemptive: a plan with ``segments`` is rejected (use :func:`verify_preemptive`).

    Raises
    ------
    InfeasibleSchedule
        Naming the violated equation, e.g. ``"(2h) server 1 resource gpu slot 4: 5 > 4"``, or
        when ``schedule`` is not an elastic_cluster :class:`Schedule`.
    InvalidInstance
        When ``instance`` is not an elastic_cluster :class:`Instance`, or a value of the schedule
        (re-checked here: a frozen dataclass can still be patched) is malformed, naming the field
        (``schedule.jobs[0].start: must be an integer, got 60.5``).
    """
    check_types(instance, schedule, FAMILY, Instance, Schedule)
    Schedule.__post_init__(schedule)  # re-check: a frozen dataclass can still be patched
    _check_count(instance, schedule)
    for j, plan in enumerate(schedule.plans):
        if plan.segments:
            infeasible(f"(2a) job {j}: preempted (segments given); this model is non-preemptive")
        _check_plan(instance, j, plan)
        phi = sum(plan.workers)
        per = _time_per_batch(instance, j, plan, phi)
        if plan.duration * phi < instance.jobs[j].work * per:  # (2f), exactly
            infeasible(f"(2f) job {j}: {plan.duration} slots x {phi} workers train "
                        f"{float(plan.duration * phi / per):.12g} < W_j = "
                        f"{instance.jobs[j].work} mini-batches")
    _check_capacity(instance, [(p, [(p.start, p.start + p.duration - 1)]) for p in schedule.plans])
    return _objective(instance, schedule)


def verify_preemptive(instance: Instance, schedule: Schedule, overhead: float = 0.0) -> float:
    """The checker of preemptive baselines (Tiresias, AntMan): like :func:`verify`, but a job may
    run in several segments with one fixed placement; each resume after the first segment loses
    ``overhead`` slots of progress. Returns sum_j w_j c_j with c_j = end of the last segment + 1."""
    check_types(instance, schedule, FAMILY, Instance, Schedule)
    Schedule.__post_init__(schedule)  # re-check: a frozen dataclass can still be patched
    _check_count(instance, schedule)
    runs = []
    for j, plan in enumerate(schedule.plans):
        _check_plan(instance, j, plan)
        segs = list(plan.segments) or [(plan.start, plan.start + plan.duration - 1)]
        for (f1, l1), (f2, _) in zip(segs, segs[1:]):
            if f2 <= l1:
                infeasible(f"(2a) job {j}: segments overlap or are unordered at slot {f2}")
        if segs[0][0] != plan.start or any(f > l for f, l in segs):
            infeasible(f"(2a) job {j}: segments must start at {plan.start} and be non-empty")
        phi = sum(plan.workers)
        slots = sum(l - f + 1 for f, l in segs) - tolerance.exact(overhead) * (len(segs) - 1)
        if slots * phi < instance.jobs[j].work * _time_per_batch(instance, j, plan, phi):
            infeasible(f"(2f) job {j}: its segments train fewer than W_j mini-batches")
        runs.append((plan, segs))
    _check_capacity(instance, runs)
    return _objective(instance, schedule)


def _objective(instance: Instance, schedule: Schedule) -> float:
    """sum_j w_j c_j in exact arithmetic, reported as the least float >= it."""
    return tolerance.upper_float(sum(tolerance.exact(job.weight) * p.completion
                                     for job, p in zip(instance.jobs, schedule.plans)))



def _check_count(instance: Instance, schedule: Schedule) -> None:
    if len(schedule.plans) != len(instance.jobs):
        infeasible(f"(2a) schedule has {len(schedule.plans)} jobs, instance has "
                    f"{len(instance.jobs)}: every job must start exactly once")


def _check_plan(inst: Instance, j: int, plan: Plan) -> None:
    """Per-job constraints (2a)-(2g), (2i), (2j) and the domains (2k)-(2o)."""
    job, H = inst.jobs[j], inst.n_servers
    if plan.start < job.arrival:
        infeasible(f"(2j) job {j}: starts at {plan.start} before its arrival {job.arrival}")
    if len(plan.workers) != H or len(plan.ps) != H:
        infeasible(f"(2k) job {j}: workers/ps must list {H} servers")
    if not 0 <= plan.worker_type < len(inst.worker_types):
        infeasible(f"(2b) job {j}: worker type {plan.worker_type} does not exist")
    phi = sum(plan.workers)
    if phi < 1:
        infeasible(f"(2f) job {j}: has no worker")
    if phi > job.chunks:
        infeasible(f"(2g) job {j}: {phi} workers > D_j = {job.chunks}")
    hosts = [h for h in range(H) if plan.workers[h] > 0 or plan.ps[h] > 0]
    if plan.colocated and len(hosts) != 1:
        infeasible(f"(2d) job {j}: q_j = 1 but it uses servers {hosts}")
    if inst.is_ps:
        _check_ps(inst, j, plan)
    elif plan.ps_type != -1 or any(plan.ps):
        infeasible(f"(15) job {j}: all-reduce jobs have no PS (ps_type -1, no PSs)")


def _check_ps(inst: Instance, j: int, plan: Plan) -> None:
    if not 0 <= plan.ps_type < len(inst.ps_types):
        infeasible(f"(2c) job {j}: PS type {plan.ps_type} does not exist")
    if sum(plan.ps) < 1:
        infeasible(f"(2e) job {j}: has no PS")
    b = inst.worker_types[plan.worker_type].bandwidth
    big_b = inst.ps_types[plan.ps_type].bandwidth
    total = sum(plan.workers)
    for h, s in enumerate(plan.ps):
        if s > 0 and s * tolerance.exact(big_b) < (total - plan.workers[h]) * tolerance.exact(b):
            infeasible(f"(2i) job {j} server {h}: remote worker bandwidth "
                        f"{(total - plan.workers[h]) * b:.10g} > PS bandwidth {s * big_b:.10g}")


def _time_per_batch(inst: Instance, j: int, plan: Plan, phi: int) -> Fraction:
    """``1 / rho`` of eq. (1) / (14) in exact arithmetic, recomputed here independently of
    Instance.time_per_batch."""
    x = tolerance.exact
    job, m = inst.jobs[j], plan.worker_type
    comm = 0 if plan.colocated else (
        x(inst.comm_factor) * 2 * x(job.grad_size) / x(inst.worker_types[m].bandwidth))
    if inst.is_ps:
        return x(job.compute[m]) + x(job.update[plan.ps_type]) + comm
    return x(job.compute[m]) + Fraction(phi - 1, phi) * (x(job.update[0]) + comm)


def _check_capacity(inst: Instance, runs) -> None:
    """(2h) / (15b): per server, resource and slot, the running jobs' demand is at most C_h^r, in
    exact arithmetic (issue 22). Resources whose demands are integers (:attr:`Instance.integral`,
    every generated instance) have integer loads, exact in the float sweep, and ``load <= C`` iff
    ``load <= floor(C)`` (``Instance.cap``); the others are summed as Fractions."""
    events: dict[int, list] = {}
    for plan, segs in runs:
        for f, l in segs:
            events.setdefault(f, []).append((plan, 1))
            events.setdefault(l + 1, []).append((plan, -1))
    fine = np.array(inst.integral, dtype=bool)
    load = np.zeros((inst.n_servers, inst.n_res))
    loose: dict[tuple[int, int], Fraction] = {}
    for t in sorted(events):
        touched = set()
        for plan, sign in events[t]:
            use = _usage(inst, plan)
            load += sign * use
            if not fine.all():
                for h, r in np.argwhere((use != 0) & ~fine[None, :]):
                    cell = (int(h), int(r))
                    loose[cell] = loose.get(cell, Fraction(0)) + sign * _exact_use(inst, plan, *cell)
                    touched.add(cell)
        for h, r in np.argwhere((load > inst.cap) & fine[None, :]):
            _over(inst, int(h), int(r), t, float(load[h, r]))
        for h, r in sorted(touched):
            if loose[h, r] > tolerance.exact(inst.capacity[h][r]):
                _over(inst, h, r, t, float(loose[h, r]))


def _over(inst: Instance, h: int, r: int, t: int, load: float) -> None:
    eq = "(2h)" if inst.is_ps else "(15b)"
    infeasible(f"{eq} server {h} resource {inst.resources[r]} slot {t}: "
               f"{load:.12g} > {inst.capacity[h][r]!r}")


def _exact_use(inst: Instance, plan: Plan, h: int, r: int) -> Fraction:
    """Plan's demand on (h, r) in exact arithmetic: y_h e_m^r (+ s_h z_p^r)."""
    use = plan.workers[h] * tolerance.exact(inst.worker_types[plan.worker_type].demand[r])
    if inst.is_ps:
        use += plan.ps[h] * tolerance.exact(inst.ps_types[plan.ps_type].demand[r])
    return use


def _usage(inst: Instance, plan: Plan) -> np.ndarray:
    use = np.outer(plan.workers, inst.e[plan.worker_type])
    if inst.is_ps:
        use = use + np.outer(plan.ps, inst.z[plan.ps_type])
    return use


def bars(instance: Instance, schedule: Schedule) -> list:
    """Gantt bars for ``optsched plot``: one row per server, one bar per job and server it uses over
    slots ``start .. start + d - 1`` (drawn as ``[start, c_j)``; each segment of a preemptive plan
    is its own bar), labelled with the job's workers and PSs there (``2W+1PS``). Jobs sharing a
    server are drawn in lanes. No feasibility check."""

    out = [Bar(f"server {h}", 0.0, 0.0, -1) for h in range(instance.n_servers)]
    for j, plan in enumerate(schedule.plans):
        segs = plan.segments or ((plan.start, plan.start + plan.duration - 1),)
        for h, (w, p) in enumerate(zip(plan.workers, plan.ps)):
            if w or p:
                label = "+".join(x for x in (f"{w}W" if w else "", f"{p}PS" if p else "") if x)
                out += [Bar(f"server {h}", float(f), float(l + 1), j, label) for f, l in segs]
    return out


__all__ = ["FAMILY", "Instance", "Job", "NodeType", "Plan", "Schedule", "bars", "verify",
           "verify_preemptive"]
