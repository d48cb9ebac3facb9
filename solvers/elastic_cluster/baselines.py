"""The paper's baselines (Sec. 7: FIFO, DRF, AntMan, Tiresias) and Jain et al.'s greedy for the
batch problem (Fig. 8). The paper gives one sentence per baseline; these are the digest's Sec. 4.8
reimplementations, every detail ours:

- every job uses its "ideal" configuration: the worker type m* (and PS type p*) maximising
  rho(q=0) (PS: eq. (1); all-reduce: eq. (14) with Phi = D_j), and for PS the fewest PSs meeting
  (2i) (``Instance.ps_needed``, about max(1, ceil(N b/B))) on one PS server;
- placement: first fit of everything on one server (q = 1), else workers first fit over the servers
  and the PSs on the first server with room for them (q = 0);
- ``N_fix`` ~ U{1..30} capped at D_j (seeded), the worker count of FIFO, AntMan and Tiresias;
- FIFO: non-preemptive, strict arrival order (head-of-line blocking);
- DRF: non-preemptive; whenever jobs wait, their worker counts come from progressive filling on
  the free capacity (smallest dominant share first, up to D_j) and they start with those counts
  (a job keeps its allocation until it completes: the Schedule format fixes one placement);
- Tiresias / AntMan: preemptive slot simulations with a fixed placement per job (chosen at its
  first start); a resumed job loses ``PREEMPT_OVERHEAD`` slots of progress. Tiresias ranks by
  (remaining slots at N_fix) x (GPUs of the gang); AntMan serves resource-guarantee jobs (weight
  >= the instance's median) first, opportunistic jobs on the leftovers, and demotes a guarantee job
  that queued for more than ``ANTMAN_QUEUE`` slots.

Tolerance (issue 13): an amount fits free capacity when ``at_most(amount, free)`` (the placement
module's vectorised ``_room``), so no slot exceeds verify's C + slack(C); a preemptive job is done
when verify_preemptive's own (2f) expression ``covers`` W_j.
"""

from __future__ import annotations

import numpy as np

from optsched import tolerance
from optsched.problems.elastic_cluster import Instance, Plan, Schedule
from optsched.result import Outcome, SolveStatus
from optsched.solvers.elastic_cluster.placement import _count_fit, _room

PREEMPT_OVERHEAD = 0.1
ANTMAN_QUEUE = 5
MAX_WORKERS = 30


def ideal_types(inst: Instance, j: int) -> tuple[int, int]:
    """(m*, p*) maximising rho(q=0) among the types of which one worker (+ one PS) fits an idle
    server or the cluster; p* = -1 for all-reduce; ties to the lower index. Cached per instance."""
    cache = inst.__dict__.setdefault("_ideal_types", {})
    if j not in cache:
        cache[j] = _ideal_types(inst, j)
    return cache[j]


def _ideal_types(inst: Instance, j: int) -> tuple[int, int]:
    n = inst.jobs[j].chunks
    pairs = [(m, p) for m in range(len(inst.worker_types))
             for p in (range(len(inst.ps_types)) if inst.is_ps else (-1,))]
    pairs = [mp for mp in pairs if place(inst, j, mp[0], mp[1], 1, inst.cap) is not None]
    return max(pairs, key=lambda mp: (inst.rate(j, mp[0], mp[1], n, 0), -mp[0], -mp[1]))


def fixed_workers(inst: Instance, seed: int) -> list[int]:
    """N_fix ~ U{1..30} capped at D_j and at what fits the idle cluster, one per job (seeded)."""
    rng = np.random.default_rng(seed)
    out = []
    for j, job in enumerate(inst.jobs):
        n = min(int(rng.integers(1, MAX_WORKERS + 1)), job.chunks)
        m, p = ideal_types(inst, j)
        while n > 1 and place(inst, j, m, p, n, inst.cap) is None:
            n -= 1
        out.append(n)
    return out


def place(inst: Instance, j: int, m: int, p: int, n: int, free: np.ndarray):
    """(workers, ps, q) for n type-m workers (+ PSs of type p) within ``free`` (H x R), or None."""
    e = inst.e[m]
    z = inst.z[p] if inst.is_ps else np.zeros(inst.n_res)
    need = n * e + z
    room = _room(free)
    fits = np.flatnonzero((need[None, :] <= room).all(axis=1))
    H = inst.n_servers
    if len(fits):
        h = int(fits[0])
        return (tuple(n if k == h else 0 for k in range(H)),
                tuple(1 if k == h and inst.is_ps else 0 for k in range(H)), 1)
    pos = e > 0
    caps = _count_fit(room[:, pos], e[pos]).min(axis=1)
    before = np.cumsum(caps) - caps
    y = np.clip(n - before, 0, caps).astype(int)
    if y.sum() < n:
        return None
    if not inst.is_ps:
        return tuple(int(v) for v in y), (0,) * H, 0
    s = np.array([inst.ps_needed(m, p, n - int(v)) for v in y], dtype=float)
    ok = (y[:, None] * e[None, :] + s[:, None] * z[None, :] <= room).all(axis=1)
    if not ok.any():
        return None
    h = int(np.argmax(ok))
    return tuple(int(v) for v in y), tuple(int(s[h]) if k == h else 0 for k in range(H)), 0


class Timeline:
    """Free capacity per (server, resource, slot), growing on demand."""

    def __init__(self, inst: Instance, length: int = 64):
        self.inst = inst
        self.free = np.repeat(inst.cap[:, :, None], length, axis=2)

    def _grow(self, last: int) -> None:
        while self.free.shape[2] <= last:
            self.free = np.concatenate([self.free, np.repeat(self.inst.cap[:, :, None],
                                                             self.free.shape[2], axis=2)], axis=2)

    def window(self, start: int, length: int) -> np.ndarray:
        self._grow(start + length)
        return self.free[:, :, start:start + length].min(axis=2)

    def take(self, plan: Plan) -> None:
        self._grow(plan.start + plan.duration)
        use = _usage(self.inst, plan)
        self.free[:, :, plan.start:plan.start + plan.duration] -= use[:, :, None]


def _usage(inst: Instance, plan: Plan) -> np.ndarray:
    use = np.outer(plan.workers, inst.e[plan.worker_type])
    if inst.is_ps:
        use = use + np.outer(plan.ps, inst.z[plan.ps_type])
    return use


def _try_start(inst: Instance, line: Timeline, j: int, m: int, p: int, n: int, t: int):
    """A plan of j with n workers starting at t that fits for its whole duration, or None."""
    for q in (1, 0):
        d = inst.duration(j, m, p, n, q)
        got = place(inst, j, m, p, n, line.window(t, d))
        if got is not None and got[2] == q:
            return Plan(t, d, m, p, q, got[0], got[1])
        if got is not None and q == 0:
            return Plan(t, d, m, p, 0, got[0], got[1])
    return None


def fifo(inst: Instance, *, time_limit: float | None = None, seed: int = 0) -> Outcome:
    """FIFO: strict arrival order, each job at the earliest slot >= max(a_j, previous start)
    where its N_fix-worker ideal placement fits for its whole duration."""
    counts, line = fixed_workers(inst, seed), Timeline(inst)
    plans, prev = [None] * len(inst.jobs), 1
    for j in sorted(range(len(inst.jobs)), key=lambda j: (inst.jobs[j].arrival, j)):
        m, p = ideal_types(inst, j)
        t = max(prev, inst.jobs[j].arrival)
        # capacity only frees up when a job completes: try t, then the later completions
        ends = sorted({pl.completion for pl in plans if pl is not None and pl.completion > t})
        for t in [t] + ends:
            plan = _try_start(inst, line, j, m, p, counts[j], t)
            if plan is not None:
                break
        line.take(plan)
        plans[j], prev = plan, t
    return Outcome(Schedule(tuple(plans)), SolveStatus.FEASIBLE, info={"n_fix": counts})


def drf(inst: Instance, *, time_limit: float | None = None, seed: int = 0) -> Outcome:
    """DRF by progressive filling of the waiting jobs' worker counts at every slot where jobs wait
    (non-preemptive: a started job keeps its allocation)."""
    line, plans = Timeline(inst), [None] * len(inst.jobs)
    total = np.maximum(inst.cap.sum(axis=0), 1e-12)  # a share's denominator, not a tolerance
    t = 1
    while any(pl is None for pl in plans):
        waiting = [j for j, pl in enumerate(plans) if pl is None and inst.jobs[j].arrival <= t]
        free = line.window(t, 1)
        counts = _progressive_fill(inst, waiting, free, total)
        for j in sorted(waiting, key=lambda j: (inst.jobs[j].arrival, j)):
            m, p = ideal_types(inst, j)
            for n in range(counts[j], 0, -1):
                plan = _try_start(inst, line, j, m, p, n, t)
                if plan is not None:
                    line.take(plan)
                    plans[j] = plan
                    break
        # next event: an arrival or a completion after t
        events = [job.arrival for job in inst.jobs if job.arrival > t]
        events += [pl.completion for pl in plans if pl is not None and pl.completion > t]
        t = min(events) if events else t + 1
    return Outcome(Schedule(tuple(plans)), SolveStatus.FEASIBLE)


def _progressive_fill(inst: Instance, jobs, free: np.ndarray, total: np.ndarray) -> dict:
    """Worker counts by max-min fairness on dominant shares over the aggregate free capacity."""
    left = free.sum(axis=0).copy()
    counts = {j: 0 for j in jobs}
    share = {j: 0.0 for j in jobs}
    per = {}
    for j in jobs:
        m, p = ideal_types(inst, j)
        per[j] = (inst.e[m], inst.z[p] if inst.is_ps else np.zeros(inst.n_res), m, p)
    active = set(jobs)
    while active:
        j = min(active, key=lambda k: (share[k], k))
        e, z, m, p = per[j]
        extra = e + (z if counts[j] == 0 else 0)
        if counts[j] >= inst.jobs[j].chunks or (extra > _room(left)).any():
            active.discard(j)
            continue
        left -= extra
        counts[j] += 1
        share[j] = float(((counts[j] * e + z) / total).max())
    return {j: max(1, c) for j, c in counts.items()}


# -------------------------------------------------------------------------- preemptive baselines


def _simulate(inst: Instance, seed: int, order_fn) -> Outcome:
    """Slot simulation: each slot, active jobs in ``order_fn`` order run if their (fixed) placement
    fits the slot's free capacity; a resume costs PREEMPT_OVERHEAD slots of progress."""
    counts = fixed_workers(inst, seed)
    J = len(inst.jobs)
    types = [ideal_types(inst, j) for j in range(J)]
    placed: list = [None] * J
    progress, segments = [0.0] * J, [[] for _ in range(J)]
    done, waited = [False] * J, [0] * J
    t = 1
    while not all(done):
        free = inst.cap.copy()
        active = [j for j in range(J) if not done[j] and inst.jobs[j].arrival <= t]
        for j in order_fn(t, active, progress, counts, types, waited):
            m, p = types[j]
            if placed[j] is None:
                got = place(inst, j, m, p, counts[j], free)
                if got is None:
                    waited[j] += 1
                    continue
                placed[j] = got
            if len(placed[j]) == 3:
                use = _usage(inst, Plan(t, 1, m, p, placed[j][2], placed[j][0], placed[j][1]))
                placed[j] = placed[j] + (use,)
            use = placed[j][3]
            if (use > _room(free)).any():
                waited[j] += 1
                continue
            free -= use
            _advance(inst, j, t, placed[j], types[j], counts[j], progress, segments, done)
        t += 1
    plans = []
    for j in range(J):
        m, p = types[j]
        segs = tuple(segments[j])
        plans.append(Plan(segs[0][0], sum(b - a + 1 for a, b in segs), m, p, placed[j][2],
                          placed[j][0], placed[j][1], segs if len(segs) > 1 else ()))
    return Outcome(Schedule(tuple(plans)), SolveStatus.FEASIBLE, info={"n_fix": counts})


def _advance(inst, j, t, placed, types, n, progress, segments, done) -> None:
    segs = segments[j]
    resumed = bool(segs) and segs[-1][1] != t - 1
    if segs and not resumed:
        segs[-1] = (segs[-1][0], t)
    else:
        segs.append((t, t))
    rate = n * inst.rate(j, types[0], types[1], n, placed[2])
    progress[j] += rate * (1.0 - PREEMPT_OVERHEAD if resumed else 1.0)
    # done by verify_preemptive's own (2f) expression (the same float operations)
    slots = sum(b - a + 1 for a, b in segs) - PREEMPT_OVERHEAD * (len(segs) - 1)
    if tolerance.covers(slots * rate, inst.jobs[j].work):
        done[j] = True


def tiresias(inst: Instance, *, time_limit: float | None = None, seed: int = 0) -> Outcome:
    """Tiresias: every slot, jobs by (remaining slots at N_fix) x (GPUs of the gang), ascending."""
    gpu = inst.resources.index("gpu") if "gpu" in inst.resources else 0

    def order(t, active, progress, counts, types, waited):
        def key(j):
            m, p = types[j]
            rate = counts[j] * inst.rate(j, m, p, counts[j], 0)
            remaining = (inst.jobs[j].work - progress[j]) / rate
            return (remaining * counts[j] * inst.e[m, gpu], j)
        return sorted(active, key=key)

    return _simulate(inst, seed, order)


def antman(inst: Instance, *, time_limit: float | None = None, seed: int = 0) -> Outcome:
    """AntMan: guarantee jobs (weight >= median) first in arrival order, then opportunistic jobs;
    a guarantee job that waited more than ANTMAN_QUEUE slots becomes opportunistic."""
    median = float(np.median([j.weight for j in inst.jobs]))

    def order(t, active, progress, counts, types, waited):
        def key(j):
            guaranteed = inst.jobs[j].weight >= median and waited[j] <= ANTMAN_QUEUE
            return (0 if guaranteed else 1, inst.jobs[j].arrival, j)
        return sorted(active, key=key)

    return _simulate(inst, seed, order)


# ------------------------------------------------------------------------- batch: Jain et al.


def jain_greedy(inst: Instance, jobs, tau: int) -> dict:
    """GreedyRTL of Jain et al. [44] adapted to (7): jobs by density w_j / ideal resource-time,
    descending; each with its ideal types and the largest N <= D_j whose schedule fits, searching
    starts from tau - d down to 1. Returns job -> Plan (relative slots)."""
    line, out = Timeline(inst, tau + 1), {}

    def density(j):
        m, p = ideal_types(inst, j)
        n = inst.jobs[j].chunks
        per = n * float((inst.e[m] / inst.unit).sum())
        if inst.is_ps:
            per += inst.ps_needed(m, p, n) * float((inst.z[p] / inst.unit).sum())
        return -inst.jobs[j].weight / (per * inst.duration(j, m, p, n, 0))

    for j in sorted(jobs, key=lambda j: (density(j), j)):
        m, p = ideal_types(inst, j)
        plan = _rtl(inst, line, j, m, p, tau)
        if plan is not None:
            line.take(plan)
            out[j] = plan
    return out


def _rtl(inst: Instance, line: Timeline, j: int, m: int, p: int, tau: int):
    for n in range(inst.jobs[j].chunks, 0, -1):
        for q in (1, 0):
            d = inst.duration(j, m, p, n, q)
            for t in range(tau - d, 0, -1):
                got = place(inst, j, m, p, n, line.window(t, d))
                if got is not None and (got[2] == q or q == 0):
                    return Plan(t, d, m, p, got[2] if q == 1 else 0, got[0], got[1])
    return None


__all__ = ["antman", "drf", "fifo", "ideal_types", "jain_greedy", "place", "tiresias"]
