"""Baselines of She et al. (seeds/001, Sec. VI): FIFO, DRF and Preemptive, as our slot-stepping
reimplementations (digest §6.2; the paper gives one sentence each and cites [31] for Preemptive,
which is missing from its bibliography). BatchSche is A_online without COST_C (see
:mod:`.a_online`, ``BATCHSCHE``).

All simulate slots t = 1, 2, ...; a job may use server s from slot ``a_j + Delta_js`` on (2i).
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from optsched.problems.edge_cloud import Instance, Run, Schedule

MAX_SLOTS = 1_000_000


class _Pool:
    """Free worker slots (servers x U) and PS slots (servers x V) with releases at run ends."""

    def __init__(self, instance: Instance):
        self.w = np.array(instance.W, dtype=np.int64)
        self.p = np.array(instance.P, dtype=np.int64)
        self.releases: list[tuple[int, int, Run, int, int]] = []

    def take(self, run: Run, u: int, v: int, key: int) -> None:
        for s, n in run.workers:
            self.w[s, u] -= n
        self.p[run.ps, v] -= 1
        heapq.heappush(self.releases, (run.end + 1, key, run, u, v))

    def release_until(self, t: int) -> None:
        while self.releases and self.releases[0][0] <= t:
            _, _, run, u, v = heapq.heappop(self.releases)
            for s, n in run.workers:
                self.w[s, u] += n
            self.p[run.ps, v] += 1


def _ready(instance: Instance) -> np.ndarray:
    """``a_j + Delta_js`` as a jobs x servers array."""
    return np.array([[job.arrival + d for d in job.delay] for job in instance.jobs], dtype=np.int64)


def fifo(instance: Instance) -> Schedule:
    """FIFO [26]: jobs in arrival order (head-of-line blocking), each started at the earliest slot on
    the eligible server with the most free type-u_j workers (ties: smaller delay, then index), all
    workers co-located with the PS (xi = 1) for ``ceil(R^1_j / N)`` slots."""
    pool, ready = _Pool(instance), _ready(instance)
    queue = sorted(range(len(instance.jobs)), key=lambda j: (instance.jobs[j].arrival, j))
    runs: dict[int, Run] = {}
    t = 0
    while queue:
        t = _tick(t)
        pool.release_until(t)
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
    return Schedule.single([runs[j] for j in range(len(instance.jobs))])


def _tick(t: int) -> int:
    """The next slot (simulations step slot by slot)."""
    if t + 1 > MAX_SLOTS:
        raise RuntimeError("baseline simulation exceeded MAX_SLOTS")
    return t + 1


def drf(instance: Instance) -> Schedule:
    """DRF [7]: at every slot, progressive filling over the waiting jobs by dominant share
    ``max(N_j / sum_s W_{s u_j}, [PS held] / sum_s P_{s v_j})`` (ties (a_j, j)); a job first reserves a
    PS on the eligible server with the most free type-u_j workers, then grows one worker at a time
    (on the PS's server while it has room, else on the eligible server with most free workers).
    Jobs with a PS and >= 1 worker start now and keep their allocation (xi from co-location)."""
    pool, ready = _Pool(instance), _ready(instance)
    tot_w = instance.W.sum(axis=0)
    tot_p = instance.P.sum(axis=0)
    waiting = set(range(len(instance.jobs)))
    runs: dict[int, Run] = {}
    t = 0
    while waiting:
        t = _tick(t)
        pool.release_until(t)
        cand = [j for j in sorted(waiting, key=lambda j: (instance.jobs[j].arrival, j))
                if instance.jobs[j].arrival <= t and (ready[j] <= t).any()]
        for j, run in _progressive_fill(instance, pool, ready, cand, t, tot_w, tot_p).items():
            job = instance.jobs[j]
            pool.take(run, job.worker_type, job.ps_type, j)
            runs[j] = run
            waiting.discard(j)
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


def preemptive(instance: Instance, *, overhead: float = 0.0, respect_delay: bool = False) -> Schedule:
    """Preemptive (our reimplementation of [31]): every slot, reallocate from scratch in SRPT order
    of ``rem_j / (p^1_j D_j)``; a job takes the server with a free PS and the most free workers
    (co-located, up to D_j), else a PS anywhere and workers spread greedily by free capacity.
    ``overhead`` slots of progress are lost in the first slot of every run after the first (placement
    change or resume), as :func:`~optsched.problems.edge_cloud.verify_preemptive` counts them.
    ``respect_delay=False`` ignores Delta (Figs. 7-8); a job is still only usable from ``a_j`` on."""
    J = len(instance.jobs)
    ready = _ready(instance) if respect_delay else np.array(
        [[job.arrival] * instance.n_servers for job in instance.jobs], dtype=np.int64)
    left = [float(job.work) for job in instance.jobs]
    runs: list[list[Run]] = [[] for _ in range(J)]
    t, active = 0, set(range(J))
    while active:
        t = _tick(t)
        w, p = np.array(instance.W), np.array(instance.P)
        order = sorted((j for j in active if instance.jobs[j].arrival <= t and (ready[j] <= t).any()),
                       key=lambda j: (left[j] * instance.jobs[j].per_batch(1) / instance.jobs[j].chunks,
                                      instance.jobs[j].arrival, j))
        for j in order:
            place = _place(instance.jobs[j], w, p, ready[j] <= t)
            if place is None:
                continue
            ps, workers = place
            _extend(runs[j], t, ps, workers)
            run = runs[j][-1]
            slots = 1.0 - (overhead if len(runs[j]) > 1 and run.start == t else 0.0)
            left[j] -= max(0.0, slots) * run.n_workers / instance.jobs[j].per_batch(int(run.colocated))
            if left[j] <= instance.jobs[j].work * 1e-9:
                active.discard(j)
    return Schedule(tuple(tuple(r) for r in runs))


def _place(job, w, p, ok) -> tuple[int, tuple] | None:
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
    for s in sorted(np.flatnonzero(wok), key=lambda s: (-w[s, u], s)):
        take = int(min(rem, w[s, u]))
        w[s, u] -= take
        workers.append((int(s), take))
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


def greedy_ect(instance: Instance) -> Schedule:
    """Earliest completion time list scheduling (ours, not in the paper; a non-preemptive reference
    upper bound on OPT(2) at scales the MILP cannot reach). Jobs in arrival order (ties: index); each
    is placed co-located (xi = 1) on the server, worker count ``N <= min(D_j, W_su)`` and start
    ``h >= a_j + Delta_js`` that give the earliest completion with the capacity left by earlier jobs."""
    horizon = 64
    used_w: dict[tuple[int, int], np.ndarray] = {}
    used_p: dict[tuple[int, int], np.ndarray] = {}
    runs: dict[int, Run] = {}
    for j in sorted(range(len(instance.jobs)), key=lambda j: (instance.jobs[j].arrival, j)):
        job = instance.jobs[j]
        while True:
            best = _ect_on_servers(instance, job, used_w, used_p, horizon)
            if best is not None:
                break
            horizon *= 2
        end, start, s, n = best
        run = Run(start, end, s, ((s, n),))
        _book(used_w, (s, job.worker_type), start, end, n, horizon)
        _book(used_p, (s, job.ps_type), start, end, 1, horizon)
        runs[j] = run
    return Schedule.single([runs[j] for j in range(len(instance.jobs))])


def _ect_on_servers(instance, job, used_w, used_p, horizon) -> tuple[int, int, int, int] | None:
    """(end, start, server, N) of the earliest-finishing co-located placement within ``horizon``."""
    u, v, best = job.worker_type, job.ps_type, None
    for s in range(instance.n_servers):
        W, P = instance.workers[s][u], instance.ps[s][v]
        if W == 0 or P == 0:
            continue
        free_w = W - _row(used_w, (s, u), horizon)
        ps_ok = (P - _row(used_p, (s, v), horizon)) >= 1
        ready = job.arrival + job.delay[s]
        for n in sorted({min(job.chunks, W), max(1, min(job.chunks, W) // 2), 1}, reverse=True):
            d = math.ceil(job.required(1) / n)
            start = _earliest_block(free_w >= n, ps_ok, ready, d)
            if start is not None and (best is None or (start + d - 1, start, s, -n) < best[:3] + (-best[3],)):
                best = (start + d - 1, start, s, n)
    return best


def _row(used: dict, key, horizon: int) -> np.ndarray:
    row = used.get(key)
    if row is None:
        return np.zeros(horizon + 2, dtype=np.int64)
    if len(row) < horizon + 2:
        row = used[key] = np.concatenate([row, np.zeros(horizon + 2 - len(row), dtype=np.int64)])
    return row[:horizon + 2]


def _earliest_block(ok_w: np.ndarray, ok_p: np.ndarray, ready: int, d: int) -> int | None:
    """Earliest slot h >= ready with ok on h..h+d-1 (index = slot) inside the arrays, else None."""
    ok = (ok_w & ok_p).astype(np.int64)
    ok[:ready] = 0
    if d > len(ok):
        return None
    csum = np.concatenate([[0], np.cumsum(ok)])
    full = np.flatnonzero(csum[d:] - csum[:-d] == d)
    full = full[full >= ready]
    return int(full[0]) if len(full) else None


def _book(used: dict, key, start: int, end: int, amount: int, horizon: int) -> None:
    size = max(horizon, end + 1) + 2
    if key not in used:
        used[key] = np.zeros(size, dtype=np.int64)
    _row(used, key, size - 2)
    used[key][start:end + 1] += amount


__all__ = ["drf", "fifo", "greedy_ect", "preemptive"]
