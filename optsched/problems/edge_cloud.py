"""edge_cloud — She et al., online scheduling of ML jobs in edge-cloud networks (seeds/001).

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
- (2e) holds iff the mini-batches trained, ``float(N_j (c_j - h_j + 1)) * p^xi_j``, cover ``Q_j`` within
  the one tolerance policy (:func:`optsched.tolerance.covers`), with ``xi_j = 1`` exactly when all
  workers sit on the PS's server; equivalently (worker-slots are integers) ``N_j (c_j - h_j + 1) >=
  R^xi_j = slots_needed(Q_j, p^xi_j)``, the least integer that covers ``Q_j`` with that very product;
- (2i) server ``s`` (workers or PS) is usable only from slot ``a_j + Delta_js`` on;
- objective (2): total flow time ``sum_j (c_j - a_j)`` (the paper calls it completion time).

A schedule is a list of *runs* per job. The model (2) needs exactly one run per job; preemptive
baselines (which break (2c)/(2d) by design) use several and are checked by
:func:`verify_preemptive` instead.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from optsched.problems.fields import Reader, Validated, as_int, as_list, fail, infeasible, readonly
from optsched.tolerance import covers, slots_needed

FAMILY = "edge_cloud"
FORMAT_VERSION = 1
SLOT_SECONDS = 3600.0

JOB_FIELDS = ("arrival", "worker_type", "ps_type", "epochs", "chunks", "minibatches",
              "compute", "update", "grad_mb", "bandwidth", "delay")


def required_worker_slots(work: float, per_batch: float) -> int:
    """``R = ceil(work * per_batch)`` under the tolerance policy: the least integer number of
    worker-slots ``d`` with ``covers(d * (1 / per_batch), work)``
    (:func:`optsched.tolerance.slots_needed`), i.e. exactly the fewest worker-slots that
    :func:`verify`'s (2e) accepts (it forms the same product ``d * (1.0 / per_batch)``)."""
    return slots_needed(work, 1.0 / per_batch)


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

    @property
    def work(self) -> int:
        """``Q_j = E_j D_j M_j`` mini-batches."""
        return self.epochs * self.chunks * self.minibatches

    @property
    def comm(self) -> float:
        """``2 k_j / B_j`` in slots (hours)."""
        return 2.0 * 8.0 * self.grad_mb / self.bandwidth / SLOT_SECONDS

    def per_batch(self, xi: int) -> float:
        """Slots per mini-batch of one worker, ``1 / p^xi_j`` (eq. (1))."""
        return self.compute + self.update + (0.0 if xi else self.comm)

    def rate(self, xi: int) -> float:
        """``p^xi_j = 1 / per_batch(xi)``: mini-batches one worker trains per slot (eq. (1))."""
        return 1.0 / self.per_batch(xi)

    def required(self, xi: int) -> int:
        """``R^xi_j``: worker-slots needed to finish (exact integer form of (2e)): the least ``d``
        with ``covers(d * p^xi_j, Q_j)``."""
        return required_worker_slots(self.work, self.per_batch(xi))

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in JOB_FIELDS}
        d["delay"] = list(self.delay)
        return d

    @classmethod
    def read(cls, r: Reader, n_servers: int, n_wtypes: int, n_ptypes: int) -> "Job":
        return cls(
            arrival=r.int("arrival", min=1),
            worker_type=r.int("worker_type", min=0, max=n_wtypes - 1),
            ps_type=r.int("ps_type", min=0, max=n_ptypes - 1),
            epochs=r.int("epochs", min=1), chunks=r.int("chunks", min=1),
            minibatches=r.int("minibatches", min=1),
            compute=r.float("compute", positive=True), update=r.float("update", min=0.0),
            grad_mb=r.float("grad_mb", min=0.0), bandwidth=r.float("bandwidth", positive=True),
            delay=r.ints("delay", length=n_servers, min=0),
        )


@dataclass(frozen=True)
class Instance(Validated):
    """Servers (``workers[s][u] = W_su``, ``ps[s][v] = P_sv``) and jobs; ``horizon`` (T), ``f1``,
    ``f2`` parametrise the price functions (7), (8) of A_online (the paper's algorithm is
    semi-online: it must know T). ``cloud`` lists the indices of cloud servers (informational)."""

    workers: tuple[tuple[int, ...], ...]
    ps: tuple[tuple[int, ...], ...]
    jobs: tuple[Job, ...]
    horizon: int = 64
    f1: float = 1.0
    f2: float = 1.0
    cloud: tuple[int, ...] = ()
    name: str = ""
    FAMILY = FAMILY


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
    def from_dict(cls, data) -> "Instance":
        r = Reader.top(data, FAMILY, FORMAT_VERSION, ("workers", "ps", "jobs"),
                       ("horizon", "f1", "f2", "cloud", "name"))
        workers = _int_matrix(r, "workers")
        ps = _int_matrix(r, "ps", rows=len(workers))
        cloud = r.ints("cloud", min=0, max=len(workers) - 1) if r.has("cloud") else ()
        jobs = tuple(Job.read(jr, len(workers), len(workers[0]), len(ps[0]))
                     for jr in r.objects("jobs", JOB_FIELDS))
        inst = object.__new__(cls)
        values = dict(workers=workers, ps=ps, jobs=jobs, horizon=r.int("horizon", min=1, default=64),
                      f1=r.float("f1", positive=True, default=1.0),
                      f2=r.float("f2", positive=True, default=1.0),
                      cloud=tuple(cloud), name=r.str("name") if r.has("name") else "")
        for key, value in values.items():
            object.__setattr__(inst, key, value)
        _check_servable(inst)
        return inst


def _int_matrix(r: Reader, key: str, rows: int | None = None) -> tuple[tuple[int, ...], ...]:
    data = as_list(r.data[key], r.path(key), length=rows, nonempty=True)
    out = []
    for s, row in enumerate(data):
        row = as_list(row, f"{r.path(key)}[{s}]", nonempty=True,
                      length=len(out[0]) if out else None)
        out.append(tuple(as_int(v, f"{r.path(key)}[{s}][{k}]", min=0) for k, v in enumerate(row)))
    return tuple(out)


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
        pairs = []
        for i, pair in enumerate(r.list("workers", nonempty=True)):
            where = f"{r.path('workers')}[{i}]"
            pair = as_list(pair, where, length=2)
            pairs.append((as_int(pair[0], f"{where}[0]", min=0), as_int(pair[1], f"{where}[1]", min=1)))
        return cls(start=r.int("start", min=1), end=r.int("end", min=1), ps=r.int("ps", min=0),
                   workers=tuple(pairs))


@dataclass(frozen=True)
class Schedule:
    """``runs[j]``: the runs of job ``j`` (exactly one for model (2))."""

    runs: tuple[tuple[Run, ...], ...]
    FAMILY = FAMILY

    def to_dict(self) -> dict:
        return {"family": FAMILY, "format_version": FORMAT_VERSION,
                "jobs": [[run.to_dict() for run in runs] for runs in self.runs]}

    @classmethod
    def from_dict(cls, data) -> "Schedule":
        r = Reader.top(data, FAMILY, FORMAT_VERSION, ("jobs",), what="schedule")
        runs = []
        for j, item in enumerate(r.list("jobs")):
            items = as_list(item, f"schedule.jobs[{j}]", nonempty=True)
            runs.append(tuple(Run.read(Reader(x, f"schedule.jobs[{j}][{k}]",
                                              ("start", "end", "ps", "workers")))
                              for k, x in enumerate(items)))
        return cls(tuple(runs))

    @classmethod
    def single(cls, runs: list[Run]) -> "Schedule":
        """A non-preemptive schedule: one run per job."""
        return cls(tuple((run,) for run in runs))

    def completions(self) -> list[int]:
        return [max(run.end for run in runs) for runs in self.runs]


def verify(instance: Instance, schedule: Schedule) -> float:
    """Check (2a)-(2l) of problem (2) and return the total flow time ``sum_j (c_j - a_j)``.

    Raises
    ------
    InfeasibleSchedule
        Naming the violated equation, e.g. ``"(2g) server 3 worker type 1 at slot 7: 9 > 8"``.
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
        # (2e) with xi = actual co-location (2f): (worker-slots) * p^xi covers Q_j; the product is
        # formed as int * float, exactly as tolerance.slots_needed forms d * per_slot
        slots = run.n_workers * run.length
        rate = 1.0 / (job.compute + job.update + (0.0 if xi else job.comm))
        done = slots * rate
        if not covers(done, job.work):
            infeasible(f"(2e) job {j}: {run.n_workers} workers x {run.length} slots = {slots} "
                       f"worker-slots train {done:.9g} mini-batches < {job.work} needed (xi={xi})")
    _check_capacity(instance, schedule)
    return float(sum(runs[0].end - job.arrival for runs, job in zip(schedule.runs, instance.jobs)))


def verify_preemptive(instance: Instance, schedule: Schedule, *, overhead: float = 0.0,
                      respect_delay: bool = False) -> float:
    """Checker for preemptive schedules (baseline ``preemptive``; breaks (2c)/(2d) by design).

    Every run must satisfy (2a), (2b), (2i) (when ``respect_delay``), the capacities (2g), (2h) and
    runs of one job must not overlap; the work (2e) is ``sum_runs N (len - o) p^xi`` where every run
    after the first loses ``overhead`` slots of progress (preemption/migration cost). Returns
    ``sum_j (c_j - a_j)`` with ``c_j`` the end of the job's last run.
    """
    _check_job_count(instance, schedule)
    for j, runs in enumerate(schedule.runs):
        job = instance.jobs[j]
        done = 0.0
        for k, run in enumerate(runs):
            _check_run(instance, j, run, respect_delay=respect_delay)
            if k and run.start <= runs[k - 1].end:
                infeasible(f"(2c) job {j}: runs {k - 1} and {k} overlap or are out of order")
            slots = max(0.0, run.length - (overhead if k else 0.0))
            done += run.n_workers * slots * job.rate(int(run.colocated))
        if not covers(done, job.work):
            infeasible(f"(2e) job {j}: trains {done:.6g} mini-batches < {job.work} needed")
    _check_capacity(instance, schedule)
    return float(sum(max(r.end for r in runs) - job.arrival
                     for runs, job in zip(schedule.runs, instance.jobs)))


def _check_job_count(instance: Instance, schedule: Schedule) -> None:
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
    for s, n in run.workers:
        if not 0 <= s < S:
            infeasible(f"(2g) job {j}: workers on server {s}, which does not exist")
        if s in seen:
            infeasible(f"(2c) job {j}: server {s} listed twice in one run")
        seen.add(s)
        if n < 1:
            infeasible(f"(2a) job {j}: {n} workers on server {s}")
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




__all__ = ["FAMILY", "Instance", "Job", "Run", "Schedule", "required_worker_slots", "verify",
           "verify_preemptive"]
