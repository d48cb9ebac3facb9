"""Baselines of She et al. (paper 001, Sec. VI): FIFO, DRF and Preemptive, as our slot-stepping
reimplementations (digest §6.2; the paper gives one sentence each and cites [31] for Preemptive,
which is missing from its bibliography). BatchSche is A_online without COST_C (see
:mod:`.algorithm`, ``BATCHSCHE``). ``greedy_ect`` is ours.

All simulate slots t = 1, 2, ...; a job may use server s from slot ``a_j + Delta_js`` on (2i).
A slot at which nothing starts (FIFO, DRF) or nothing runs (Preemptive) is followed directly by the
next slot at which something can change (a release, or a waiting job's data reaching a server):
the state in between is the same, so the schedule is that of the slot-by-slot simulation, and
late arrivals or long delays cost nothing (issue 15). Every method returns an
:class:`~optsched.result.Outcome` and checks the call's :class:`~optsched.deadline.Deadline` every
simulated slot (every job for ``greedy_ect``): stopped by it, it returns no schedule and status
``time_limit``; beyond :data:`MAX_SLOTS` simulated slots (or :data:`MAX_PROFILE_CELLS` for
``greedy_ect``) it returns no schedule, status ``unknown`` and ``info["reason"]``. FIFO, DRF and greedy_ect place every job with its
PS and at least one worker on one server; on an instance where some job has no such server they
return no schedule, status ``unknown`` and ``info["reason"]`` (they would never finish it).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import numpy as np

from optsched.deadline import Deadline
from optsched.method import Params, param
from optsched.problems.edge_cloud import Instance, Job, Run, Schedule
from optsched.result import Outcome, SolveStatus
from optsched.simulate.capacity import CapacityProfile, ReleasePool
from optsched.tolerance import exact

#: Not in the paper: the most slots a simulation steps through (idle stretches are skipped, so
#: only slots at which a job starts or runs count); beyond it the baseline returns ``unknown``.
MAX_SLOTS = 1_000_000
#: Not in the paper: the largest capacity profile of ``greedy_ect`` (servers x (U + V) x slots
#: up to the last reserved one, int32, stored up to the next power of two: at most 160 MB); a
#: placement ending beyond it makes the baseline return ``unknown``. The paper preset (201
#: servers, U + V <= 20) may end as late as slot 4975.
MAX_PROFILE_CELLS = 20_000_000


@dataclass(frozen=True)
class PreemptiveParams(Params):
    """The choices of the Preemptive baseline (Sec. VI, Figs. 7-10; our reimplementation of [31]).
    The defaults are Figs. 7-8 (``preemptive``); Figs. 9-10 (``preemptive_overhead``) use
    ``PreemptiveParams(overhead=0.25, respect_delay=True)``."""

    overhead: float = param(
        0.0, "Sec. VI Figs. 9-10 'with preemption cost': slots of progress lost in the first slot "
             "of every run after the first (placement change or resume); the paper gives no "
             "value (0 for Figs. 7-8; 0.25 registered, digest §6.2)")
    respect_delay: bool = param(
        False, "Figs. 7-8 ignore the upload delay Delta (False: a job may use every server from "
               "a_j on); True respects (2i) as the non-preemptive methods do")

    def __post_init__(self) -> None:
        if not 0.0 <= self.overhead < float("inf"):
            raise ValueError(f"overhead: must be a finite number >= 0, got {self.overhead}")


class Stopped(Exception):
    """A simulation stopped by the call's deadline (its message becomes ``info["stopped"]``)."""


class _Unschedulable(Exception):
    """A baseline cannot finish the instance (its reason becomes ``info["reason"]``)."""


def _outcome(build: Callable[[], Schedule]) -> Outcome:
    """Run a simulation; stopped by the deadline -> ``time_limit``, unable -> ``unknown``."""
    try:
        return Outcome(build(), SolveStatus.FEASIBLE)
    except Stopped as stop:
        return Outcome(None, SolveStatus.TIME_LIMIT, info={"stopped": str(stop)})
    except _Unschedulable as exc:
        return Outcome(None, SolveStatus.UNKNOWN, info={"reason": str(exc)})


def colocation_gap(instance: Instance, method: str) -> str | None:
    """Why ``method`` (which co-locates each job's PS with a worker) cannot schedule ``instance``:
    the first job with no server holding both a type-u_j worker and a type-v_j PS slot, or None."""
    for j, job in enumerate(instance.jobs):
        if not any(w[job.worker_type] and p[job.ps_type]
                   for w, p in zip(instance.workers, instance.ps)):
            return (f"{method} places a job's PS with a worker on one server; job {j} has no "
                    f"server with both a type-{job.worker_type} worker and a type-{job.ps_type} PS")
    return None


class _Pool:
    """Free worker slots (servers x U) and PS slots (servers x V) with releases at run ends: the
    shared :class:`~optsched.simulate.capacity.ReleasePool` over the kinds (U worker types, then
    V PS types); ``w`` and ``p`` are views of its ``free``."""

    def __init__(self, instance: Instance):
        self.n_u = instance.W.shape[1]
        self.pool = ReleasePool(np.concatenate([np.asarray(instance.W, dtype=np.int64),
                                                np.asarray(instance.P, dtype=np.int64)], axis=1))
        self.w, self.p = self.pool.free[:, :self.n_u], self.pool.free[:, self.n_u:]

    def take(self, run: Run, u: int, v: int, key: int) -> None:
        cells = [(s, u, n) for s, n in run.workers] + [(run.ps, self.n_u + v, 1)]
        self.pool.take(cells, run.end + 1, key)

    def release_until(self, t: int) -> None:
        self.pool.release_until(t)

    def next_release(self) -> int | None:
        return self.pool.next_release()


def _ready(instance: Instance) -> np.ndarray:
    """``a_j + Delta_js`` as a jobs x servers array."""
    return np.array([[job.arrival + d for d in job.delay] for job in instance.jobs], dtype=np.int64)


def fifo(instance: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """FIFO [26]: jobs in arrival order (head-of-line blocking), each started at the earliest slot on
    the eligible server with the most free type-u_j workers (ties: smaller delay, then index), all
    workers co-located with the PS (xi = 1) for ``ceil(R^1_j / N)`` slots.

    Returns a schedule (``feasible``), none with ``time_limit`` when ``deadline`` passes, or none
    with ``unknown`` and ``info["reason"]`` when some job cannot be co-located anywhere.
    ``seed`` is unused (deterministic)."""
    reason = colocation_gap(instance, "fifo")
    if reason is not None:
        return Outcome(None, SolveStatus.UNKNOWN, info={"reason": reason})
    return _outcome(lambda: _fifo(instance, deadline))


def _fifo(instance: Instance, deadline: Deadline) -> Schedule:
    pool, ready = _Pool(instance), _ready(instance)
    queue = sorted(range(len(instance.jobs)), key=lambda j: (instance.jobs[j].arrival, j))
    runs: dict[int, Run] = {}
    clock, wake = _Clock(deadline), None
    while queue:
        t = clock.advance(wake)
        pool.release_until(t)
        wake = _next_event(t, ready, queue[:1], pool.next_release())
        while queue and instance.jobs[queue[0]].arrival <= t:
            j = queue[0]
            job = instance.jobs[j]
            ok = (ready[j] <= t) & (pool.w[:, job.worker_type] >= 1) & (pool.p[:, job.ps_type] >= 1)
            if not ok.any():
                break
            n = np.minimum(job.chunks, pool.w[:, job.worker_type])
            s = min(np.flatnonzero(ok), key=lambda s: (-n[s], job.delay[s], s))
            run = Run(t, t + math.ceil(job.required(1) / int(n[s])) - 1, int(s), ((int(s), int(n[s])),))
            pool.take(run, job.worker_type, job.ps_type, j)
            runs[j] = run
            queue.pop(0)
            wake = None
    return Schedule.single([runs[j] for j in range(len(instance.jobs))])


class _Clock:
    """The simulated slot ``t``: :meth:`advance` moves to ``t + 1``, or to ``wake`` when the
    caller knows nothing can change before it (an idle stretch is skipped)."""

    def __init__(self, deadline: Deadline):
        self.t, self.steps, self.deadline = 0, 0, deadline

    def advance(self, wake: int | None = None) -> int:
        """The next slot to simulate; raises :class:`Stopped` once the deadline has passed and
        :class:`_Unschedulable` after :data:`MAX_SLOTS` simulated slots."""
        if self.deadline.expired():
            raise Stopped(f"deadline: simulation stopped at slot {self.t}")
        self.steps += 1
        if self.steps > MAX_SLOTS:
            raise _Unschedulable(f"baseline simulation exceeded MAX_SLOTS = {MAX_SLOTS} "
                                 f"simulated slots (at slot {self.t})")
        self.t = self.t + 1 if wake is None else max(self.t + 1, int(wake))
        return self.t


def _next_event(t: int, ready: np.ndarray, waiting, release) -> int | None:
    """The next slot after ``t`` at which a simulation where nothing started at ``t`` can change:
    the earliest release (``release``, None when nothing is held) or ready time
    ``a_j + Delta_js > t`` of a ``waiting`` job (its arrival is never later than its ready times).
    None when there is no such slot."""
    times = [int(release)] if release is not None else []
    rows = ready[list(waiting)] if len(waiting) else ready[:0]
    later = rows[rows > t]
    if later.size:
        times.append(int(later.min()))
    return min(times) if times else None


def drf(instance: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """DRF [7]: at every slot, progressive filling over the waiting jobs by dominant share
    ``max(N_j / sum_s W_{s u_j}, [PS held] / sum_s P_{s v_j})`` (ties (a_j, j)); a job first reserves a
    PS on the eligible server with the most free type-u_j workers, then grows one worker at a time
    (on the PS's server while it has room, else on the eligible server with most free workers).
    Jobs with a PS and >= 1 worker start now and keep their allocation (xi from co-location).

    Returns as :func:`fifo` (a job reserves its PS on a server with a free worker, so a job that
    cannot be co-located anywhere would wait forever: ``unknown`` with ``info["reason"]``)."""
    reason = colocation_gap(instance, "drf")
    if reason is not None:
        return Outcome(None, SolveStatus.UNKNOWN, info={"reason": reason})
    return _outcome(lambda: _drf(instance, deadline))


def _drf(instance: Instance, deadline: Deadline) -> Schedule:
    pool, ready = _Pool(instance), _ready(instance)
    tot_w = instance.W.sum(axis=0)
    tot_p = instance.P.sum(axis=0)
    waiting = set(range(len(instance.jobs)))
    runs: dict[int, Run] = {}
    clock, wake = _Clock(deadline), None
    while waiting:
        t = clock.advance(wake)
        pool.release_until(t)
        cand = [j for j in sorted(waiting, key=lambda j: (instance.jobs[j].arrival, j))
                if instance.jobs[j].arrival <= t and (ready[j] <= t).any()]
        started = _progressive_fill(instance, pool, ready, cand, t, tot_w, tot_p)
        for j, run in started.items():
            job = instance.jobs[j]
            pool.take(run, job.worker_type, job.ps_type, j)
            runs[j] = run
            waiting.discard(j)
        wake = None if started else _next_event(t, ready, sorted(waiting), pool.next_release())
    return Schedule.single([runs[j] for j in range(len(instance.jobs))])


def _progressive_fill(instance, pool, ready, cand, t, tot_w, tot_p) -> dict[int, Run]:
    """One DRF allocation round at slot t on copies of the free pools; returns the started runs."""
    w, p = pool.w.copy(), pool.p.copy()
    alloc: dict[int, dict[int, int]] = {j: {} for j in cand}
    ps: dict[int, int] = {}
    heap = [(0.0, instance.jobs[j].arrival, j) for j in cand]
    heapq.heapify(heap)
    while heap:
        _, _, j = heapq.heappop(heap)
        job = instance.jobs[j]
        u, v, ok = job.worker_type, job.ps_type, ready[j] <= t
        if j not in ps:
            pok = ok & (p[:, v] >= 1) & (w[:, u] >= 1)
            if not pok.any():
                continue
            s = int(max(np.flatnonzero(pok), key=lambda s: (w[s, u], -s)))
            ps[j] = s
            p[s, v] -= 1
        s = ps[j]
        if w[s, u] < 1:
            wok = ok & (w[:, u] >= 1)
            if not wok.any():
                continue
            s = int(max(np.flatnonzero(wok), key=lambda q: (w[q, u], -q)))
        w[s, u] -= 1
        alloc[j][s] = alloc[j].get(s, 0) + 1
        n = sum(alloc[j].values())
        if n < job.chunks:
            share = max(n / tot_w[u], 1.0 / tot_p[v])
            heapq.heappush(heap, (share, job.arrival, j))
    started = {}
    for j, servers in alloc.items():
        if servers:
            job = instance.jobs[j]
            n = sum(servers.values())
            xi = int(set(servers) == {ps[j]})
            started[j] = Run(t, t + math.ceil(job.required(xi) / n) - 1, ps[j], tuple(sorted(servers.items())))
    return started


def preemptive(instance: Instance, params: PreemptiveParams = PreemptiveParams(), *,
               deadline: Deadline, seed: int = 0) -> Outcome:
    """Preemptive (our reimplementation of [31]): every slot, reallocate from scratch in SRPT order
    of ``rem_j / (p^1_j D_j)``; a job takes the server with a free PS and the most free workers
    (co-located, up to D_j), else a PS anywhere and workers spread greedily by free capacity.

    ``params.overhead`` slots of progress are lost in the first slot of every run after the first
    (placement change or resume), as :func:`~optsched.problems.edge_cloud.verify_preemptive` counts
    them; ``params.respect_delay=False`` ignores Delta (Figs. 7-8), a job is still only usable from
    ``a_j`` on. A job is done when the mini-batches it trained reach ``Q_j`` in exact arithmetic
    (:func:`optsched.tolerance.exact`, as ``verify_preemptive`` checks it). The schedule breaks
    (2c)/(2d) by design: it is checked by ``verify_preemptive``. Stopped by ``deadline``: no
    schedule, ``time_limit``. ``seed`` is unused (deterministic)."""
    return _outcome(lambda: _preemptive(instance, params, deadline))


def _preemptive(instance: Instance, params: PreemptiveParams, deadline: Deadline) -> Schedule:
    J, overhead = len(instance.jobs), params.overhead
    ready = _ready(instance) if params.respect_delay else np.array(
        [[job.arrival] * instance.n_servers for job in instance.jobs], dtype=np.int64)
    left = [float(job.work) for job in instance.jobs]
    done = [Fraction(0)] * J
    lost = exact(overhead)
    runs: list[list[Run]] = [[] for _ in range(J)]
    clock, wake, active = _Clock(deadline), None, set(range(J))
    while active:
        t = clock.advance(wake)
        running = False
        w, p = np.array(instance.W), np.array(instance.P)
        order = sorted((j for j in active if instance.jobs[j].arrival <= t and (ready[j] <= t).any()),
                       key=lambda j: (left[j] * instance.jobs[j].per_batch(1) / instance.jobs[j].chunks,
                                      instance.jobs[j].arrival, j))
        for j in order:
            place = _place(instance.jobs[j], w, p, ready[j] <= t)
            if place is None:
                continue
            ps, workers = place
            running = True
            _extend(runs[j], t, ps, workers)
            run = runs[j][-1]
            slots = 1 - (lost if len(runs[j]) > 1 and run.start == t else 0)
            trained = max(0, slots) * run.n_workers / instance.jobs[j].per_batch_exact(
                int(run.colocated))
            left[j] -= float(trained)
            done[j] += trained
            if done[j] >= instance.jobs[j].work:  # (2e) exactly, as verify_preemptive
                active.discard(j)
        wake = None if running else _next_event(t, ready, sorted(active), None)
    return Schedule(tuple(tuple(r) for r in runs))


def _place(job: Job, w: np.ndarray, p: np.ndarray, ok: np.ndarray) -> tuple[int, tuple] | None:
    """Co-located on the server with a free PS and most free workers, else spread (mutates w, p)."""
    u, v = job.worker_type, job.ps_type
    both = ok & (p[:, v] >= 1) & (w[:, u] >= 1)
    if both.any():
        s = int(max(np.flatnonzero(both), key=lambda s: (w[s, u], -s)))
        n = int(min(job.chunks, w[s, u]))
        w[s, u] -= n
        p[s, v] -= 1
        return s, ((s, n),)
    pok = ok & (p[:, v] >= 1)
    wok = ok & (w[:, u] >= 1)
    if not pok.any() or not wok.any():
        return None
    ps = int(np.flatnonzero(pok)[0])
    p[ps, v] -= 1
    workers, rem = [], job.chunks
    for q in sorted(np.flatnonzero(wok), key=lambda q: (-w[q, u], q)):
        take = int(min(rem, w[q, u]))
        w[q, u] -= take
        workers.append((int(q), take))
        rem -= take
        if rem == 0:
            break
    return ps, tuple(sorted(workers))


def _extend(runs: list[Run], t: int, ps: int, workers: tuple) -> None:
    """Continue the last run if it ended at t-1 with the same placement, else open a new run."""
    if runs and runs[-1].end == t - 1 and runs[-1].ps == ps and runs[-1].workers == workers:
        last = runs[-1]
        runs[-1] = Run(last.start, t, ps, workers)
    else:
        runs.append(Run(t, t, ps, workers))


def greedy_ect(instance: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """Earliest completion time list scheduling (ours, not in the paper; a non-preemptive reference
    upper bound on OPT(2) at scales the MILP cannot reach). Jobs in arrival order (ties: index); each
    is placed co-located (xi = 1) on the server, worker count ``N <= min(D_j, W_su)`` and start
    ``h >= a_j + Delta_js`` that give the earliest completion with the capacity left by earlier jobs.

    Returns as :func:`fifo` (``deadline`` is checked before each job)."""
    reason = colocation_gap(instance, "greedy_ect")
    if reason is not None:
        return Outcome(None, SolveStatus.UNKNOWN, info={"reason": reason})
    return _outcome(lambda: _greedy_ect(instance, deadline))


def _greedy_ect(instance: Instance, deadline: Deadline) -> Schedule:
    line = CapacityLine(instance)
    runs: dict[int, Run] = {}
    for j in sorted(range(len(instance.jobs)), key=lambda j: (instance.jobs[j].arrival, j)):
        if deadline.expired():
            raise Stopped(f"deadline: stopped before job {j} ({len(runs)} of "
                          f"{len(instance.jobs)} placed)")
        job = instance.jobs[j]
        best = _ect_on_servers(instance, job, line)
        if best is None:  # (the old horizon-doubling search never returned here)
            raise _Unschedulable(f"greedy_ect: no server holds both a worker and a PS for job {j}")
        end, start, s, n = best
        if (end + 1) * line.cells > MAX_PROFILE_CELLS:
            raise _Unschedulable(f"greedy_ect: job {j} would end at slot {end}; the capacity "
                                 f"profile ({line.cells} cells per slot) would exceed "
                                 f"MAX_PROFILE_CELLS = {MAX_PROFILE_CELLS}")
        run = Run(start, end, s, ((s, n),))
        line.reserve(line.usage(s, job.worker_type, job.ps_type, n), start, end - start + 1)
        runs[j] = run
    return Schedule.single([runs[j] for j in range(len(instance.jobs))])


class CapacityLine(CapacityProfile):
    """greedy_ect's slotted capacity: the shared :class:`~optsched.simulate.capacity.CapacityProfile`
    over servers x (U worker types, then V PS types), integer (exact fit), unbounded horizon."""

    def __init__(self, instance: Instance):
        self.n_u = instance.W.shape[1]
        self.cells = instance.n_servers * (instance.n_wtypes + instance.n_ptypes)
        super().__init__(np.concatenate([np.asarray(instance.W, dtype=np.int32),
                                         np.asarray(instance.P, dtype=np.int32)], axis=1))

    def usage(self, s: int, u: int, v: int, n: int) -> dict[tuple[int, int], int]:
        """n type-u workers and one type-v PS on server s (a sparse usage)."""
        return {(s, u): n, (s, self.n_u + v): 1}


def _ect_on_servers(instance, job, line: CapacityLine) -> tuple[int, int, int, int] | None:
    """(end, start, server, N) of the earliest-finishing co-located placement; None when no
    server has both a type-u_j worker and a type-v_j PS."""
    u, v, best = job.worker_type, job.ps_type, None
    for s in range(instance.n_servers):
        W, P = instance.workers[s][u], instance.ps[s][v]
        if W == 0 or P == 0:
            continue
        ready = job.arrival + job.delay[s]
        for n in sorted({min(job.chunks, W), max(1, min(job.chunks, W) // 2), 1}, reverse=True):
            d = math.ceil(job.required(1) / n)
            start = line.earliest_fit(line.usage(s, u, v, n), d, ready)
            assert start is not None  # n <= W_su and 1 <= P_sv fit the idle server
            if best is None or (start + d - 1, start, s, -n) < best[:3] + (-best[3],):
                best = (start + d - 1, start, s, n)
    return best


__all__ = ["MAX_PROFILE_CELLS", "MAX_SLOTS", "CapacityLine", "PreemptiveParams", "Stopped",
           "colocation_gap", "drf", "fifo", "greedy_ect", "preemptive"]
