"""The paper's baselines (Sec. 7: FIFO, DRF, AntMan, Tiresias) and Jain et al.'s greedy for the
batch problem (Fig. 8). The paper gives one sentence per baseline; these are the digest's Sec. 4.8
reimplementations, every detail ours:

- every job uses its "ideal" configuration: the worker type m* (and PS type p*) maximising
  rho(q=0) (PS: eq. (1); all-reduce: eq. (14) with Phi = D_j), and for PS the fewest PSs meeting
  (2i) (``Instance.ps_needed``, about max(1, ceil(N b/B))) on one PS server;
- placement: first fit of everything on one server (q = 1), else workers first fit over the servers
  and the PSs on the first server with room for them (q = 0);
- ``N_fix`` ~ U{1..max_workers} (30) capped at D_j (seeded), the worker count of FIFO, AntMan
  and Tiresias;
- FIFO: non-preemptive, strict arrival order (head-of-line blocking);
- DRF: non-preemptive; whenever jobs wait, their worker counts come from progressive filling on
  the free capacity (smallest dominant share first, up to D_j) and they start with those counts
  (a job keeps its allocation until it completes: the Schedule format fixes one placement);
- Tiresias / AntMan: preemptive slot simulations with a fixed placement per job (chosen at its
  first start); a resumed job loses ``preempt_overhead`` slots of progress. Tiresias ranks by
  (remaining slots at N_fix) x (GPUs of the gang); AntMan serves resource-guarantee jobs (weight
  >= the instance's median) first, opportunistic jobs on the leftovers, and demotes a guarantee job
  that queued for more than ``queue_slots`` slots.

The numbers the paper leaves open are fields of :class:`FifoParams`, :class:`TiresiasParams` and
:class:`AntmanParams` (defaults: the digest's choices). Every simulation checks the method's
:class:`~optsched.deadline.Deadline` once per job or event; a baseline stopped by it returns no
schedule (status ``time_limit``).

Capacities (issues 13, 22): an amount fits free capacity when ``tolerance.fits(amount, free)``
(the placement module's vectorised ``room``: float noise only) on ``Instance.cap`` (floor(C) for
integer demands), so no slot exceeds verify's exact C; a preemptive job is done when its work is
met exactly (verify_preemptive's (2f)).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from optsched import tolerance
from optsched.deadline import Deadline
from optsched.method import Params, param
from optsched.problems.elastic_cluster import Instance, Plan, Schedule, memo, verify_preemptive
from optsched.result import Outcome, SolveStatus
from optsched.simulate.capacity import CapacityProfile
from optsched.solvers.elastic_cluster.placement import (
    _count_fit,
    _ps_counts,
    room,
    infeasible_outcome,
)

PREEMPT_OVERHEAD = 0.1
ANTMAN_QUEUE = 5
MAX_WORKERS = 30

_WORKERS_DOC = ("Sec. 7 gives no worker counts; digest Sec. 4.8: each job runs N_fix ~ "
                "U{1..max_workers} workers (seeded), capped at D_j and at what fits the idle "
                "cluster")
_OVERHEAD_DOC = ("Sec. 7 names preemptive baselines without a cost; digest Sec. 4.8: a resumed "
                 "job loses this many slots of progress (verify_preemptive checks the same)")


@dataclass(frozen=True)
class FifoParams(Params):
    """FIFO (Sec. 7 baseline; digest Sec. 4.8 reimplementation)."""

    max_workers: int = param(MAX_WORKERS, _WORKERS_DOC)

    def __post_init__(self) -> None:
        _at_least("max_workers", self.max_workers, 1)


@dataclass(frozen=True)
class TiresiasParams(Params):
    """Tiresias (Sec. 7 baseline, 2D-LAS priority; digest Sec. 4.8 reimplementation)."""

    max_workers: int = param(MAX_WORKERS, _WORKERS_DOC)
    preempt_overhead: float = param(PREEMPT_OVERHEAD, _OVERHEAD_DOC)

    def __post_init__(self) -> None:
        _at_least("max_workers", self.max_workers, 1)
        _at_least("preempt_overhead", self.preempt_overhead, 0.0)


@dataclass(frozen=True)
class AntmanParams(Params):
    """AntMan (Sec. 7 baseline, guarantee / opportunistic jobs; digest Sec. 4.8)."""

    max_workers: int = param(MAX_WORKERS, _WORKERS_DOC)
    preempt_overhead: float = param(PREEMPT_OVERHEAD, _OVERHEAD_DOC)
    queue_slots: int = param(
        ANTMAN_QUEUE, "digest Sec. 4.8: a resource-guarantee job (weight >= the median) that has "
                      "waited more than this many slots is demoted to opportunistic")

    def __post_init__(self) -> None:
        _at_least("max_workers", self.max_workers, 1)
        _at_least("preempt_overhead", self.preempt_overhead, 0.0)
        _at_least("queue_slots", self.queue_slots, 0)


def _at_least(name: str, value: float, low: float) -> None:
    if not value >= low:
        raise ValueError(f"{name}: must be >= {low}, got {value}")


def preemptive_checker(overhead: float) -> Callable[[Instance, Schedule], float]:
    """The checker of a preemptive baseline's schedules: :func:`verify_preemptive` with the
    baseline's resume ``overhead`` (the ``verify=`` of its registered Method)."""

    def check(instance: Instance, schedule: Schedule) -> float:
        return verify_preemptive(instance, schedule, overhead)

    check.__doc__ = f"verify_preemptive with overhead {overhead} slots per resume."
    return check


def _stopped(done: int, total: int, what: str = "jobs") -> Outcome:
    """A baseline cut short by its deadline: no schedule, status ``time_limit``."""
    return Outcome(None, SolveStatus.TIME_LIMIT,
                   info={"stopped": f"deadline: time limit expired after {done} of {total} {what}"})


def ideal_types(inst: Instance, j: int) -> tuple[int, int]:
    """(m*, p*) maximising rho(q=0) among the types of which one worker (+ one PS) fits an idle
    server or the cluster; p* = -1 for all-reduce; ties to the lower index. Memoised per
    instance."""
    cache = memo(inst, "ideal_types")
    if j not in cache:
        cache[j] = _ideal_types(inst, j)
    return cache[j]


def _ideal_types(inst: Instance, j: int) -> tuple[int, int]:
    n = inst.jobs[j].chunks
    pairs = [(m, p) for m in range(len(inst.worker_types))
             for p in (range(len(inst.ps_types)) if inst.is_ps else (-1,))]
    pairs = [mp for mp in pairs if place(inst, j, mp[0], mp[1], 1, inst.cap) is not None]
    return max(pairs, key=lambda mp: (inst.rate(j, mp[0], mp[1], n, 0), -mp[0], -mp[1]))


def fixed_workers(inst: Instance, seed: int, max_workers: int = MAX_WORKERS, *,
                  deadline: Deadline) -> list[int] | None:
    """N_fix ~ U{1..max_workers} capped at D_j and at what fits the idle cluster, one per job
    (seeded); None when the ``deadline`` expired first."""
    rng = np.random.default_rng(seed)
    out = []
    for j, job in enumerate(inst.jobs):
        if deadline.expired():
            return None
        n = min(int(rng.integers(1, max_workers + 1)), job.chunks)
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
    space = room(free)
    fits = np.flatnonzero((need[None, :] <= space).all(axis=1))
    H = inst.n_servers
    if len(fits):
        h = int(fits[0])
        return (tuple(n if k == h else 0 for k in range(H)),
                tuple(1 if k == h and inst.is_ps else 0 for k in range(H)), 1)
    pos = e > 0
    caps = _count_fit(space[:, pos], e[pos]).min(axis=1)
    before = np.cumsum(caps) - caps
    y = np.clip(n - before, 0, caps).astype(int)
    if y.sum() < n:
        return None
    if not inst.is_ps:
        return tuple(int(v) for v in y), (0,) * H, 0
    s = np.maximum(1.0, _ps_counts(inst, m, p, n)[y])  # Instance.ps_needed(m, p, n - y_h)
    ok = (y[:, None] * e[None, :] + s[:, None] * z[None, :] <= space).all(axis=1)
    if not ok.any():
        return _ps_first(inst, m, p, n, space, pos)
    h = int(np.argmax(ok))
    return tuple(int(v) for v in y), tuple(int(s[h]) if k == h else 0 for k in range(H)), 0


def _ps_first(inst: Instance, m: int, p: int, n: int, space: np.ndarray, pos: np.ndarray):
    """A distributed placement that reserves the PSs first (used only when filling workers
    first leaves no server for them): for the first server h where it works, the PSs every worker
    being remote would need, then the workers greedily in what is left; fewer remote workers
    never need more PSs. None when no server works (an instance where filling workers first found
    nothing: a ps job whose PS fits only on a server the greedy fill had used).

    Every server is tried at once: reserving the PSs on h changes only row h of the worker
    capacities, so h works when its PSs fit and the other rows' capacities plus h's reduced one
    hold n workers (the greedy fill places min(n, their sum))."""
    e, z = inst.e[m], inst.z[p]
    most = max(1, int(_ps_counts(inst, m, p, n)[0]))
    after = space - most * z[None, :]
    caps = _count_fit(space[:, pos], e[pos]).min(axis=1)
    reduced = np.where((after >= 0).all(axis=1),
                       _count_fit(np.maximum(after[:, pos], 0), e[pos]).min(axis=1), -1)
    works = (reduced >= 0) & (caps.sum() - caps + reduced >= n)
    if not works.any():
        return None
    h = int(np.argmax(works))
    caps = caps.copy()
    caps[h] = reduced[h]
    y = np.clip(n - (np.cumsum(caps) - caps), 0, caps).astype(int)
    s = max(1, int(_ps_counts(inst, m, p, n)[y[h]]))
    return tuple(int(v) for v in y), tuple(s if k == h else 0 for k in range(inst.n_servers)), 0


class Timeline(CapacityProfile):
    """Free capacity per (server, resource, slot), growing on demand: the shared
    :class:`~optsched.simulate.capacity.CapacityProfile` over ``C[h, r]`` (``window`` is its
    min-free query); ``take`` reserves a plan's usage over its duration."""

    def __init__(self, inst: Instance, length: int = 64):
        super().__init__(inst.cap, length)
        self.inst = inst

    def take(self, plan: Plan) -> None:
        self.reserve(_usage(self.inst, plan), plan.start, plan.duration)


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


def fifo(inst: Instance, params: FifoParams, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """FIFO: strict arrival order, each job at the earliest slot >= max(a_j, previous start)
    where its N_fix-worker ideal placement fits for its whole duration (non-preemptive).

    Parameters
    ----------
    inst
        The instance.
    params
        :class:`FifoParams` (the range of N_fix).
    deadline
        Checked once per job; when it expires there is no schedule (status ``time_limit``).
    seed
        Seeds N_fix.

    Notes
    -----
    One of the paper's baselines (Sec. 7, Figs. 2, 5), described in one sentence; every detail is
    the digest's Sec. 4.8 reimplementation. Sec. 7 claims A_online beats it by >= 30 %: errata Z3.

    Examples
    --------
    >>> from optsched import generate, solve
    >>> solve(generate("elastic_cluster", "tiny", 0), "fifo").status.value
    'feasible'
    """
    if (bad := infeasible_outcome(inst)) is not None:
        return bad
    counts, line = fixed_workers(inst, seed, params.max_workers, deadline=deadline), Timeline(inst)
    if counts is None:
        return _stopped(0, len(inst.jobs))
    plans: list[Plan | None] = [None] * len(inst.jobs)
    prev = 1
    for k, j in enumerate(sorted(range(len(inst.jobs)), key=lambda j: (inst.jobs[j].arrival, j))):
        if deadline.expired():
            return _stopped(k, len(inst.jobs))
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
    return Outcome(Schedule(_complete(plans)), SolveStatus.FEASIBLE, info={"n_fix": counts})


def drf(inst: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """DRF by progressive filling of the waiting jobs' worker counts at every slot where jobs wait
    (non-preemptive: a started job keeps its allocation).

    Parameters
    ----------
    inst
        The instance.
    deadline
        Checked at every event and waiting job; when it expires there is no schedule (status
        ``time_limit``).
    seed
        Unused (DRF is deterministic).

    Notes
    -----
    One of the paper's baselines (Sec. 7, Figs. 2, 5; digest Sec. 4.8 reimplementation, no
    parameter). Sec. 7 claims A_online beats it by >= 30 %; measured, DRF beats A_online at paper
    scale: errata Z3.

    Examples
    --------
    >>> from optsched import generate, solve
    >>> solve(generate("elastic_cluster", "tiny", 0), "drf").status.value
    'feasible'
    """
    if (bad := infeasible_outcome(inst)) is not None:
        return bad
    line = Timeline(inst)
    plans: list[Plan | None] = [None] * len(inst.jobs)
    total = np.maximum(inst.cap.sum(axis=0), 1e-12)  # a share's denominator, not a tolerance
    t = 1
    while any(pl is None for pl in plans):
        if deadline.expired():
            return _stopped(sum(pl is not None for pl in plans), len(inst.jobs))
        waiting = [j for j, pl in enumerate(plans) if pl is None and inst.jobs[j].arrival <= t]
        free = line.window(t, 1)
        counts = _progressive_fill(inst, waiting, free, total, deadline)
        if counts is None:
            return _stopped(sum(pl is not None for pl in plans), len(inst.jobs))
        for j in sorted(waiting, key=lambda j: (inst.jobs[j].arrival, j)):
            if deadline.expired():
                return _stopped(sum(pl is not None for pl in plans), len(inst.jobs))
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
    return Outcome(Schedule(_complete(plans)), SolveStatus.FEASIBLE)


def _complete(plans: list[Plan | None]) -> tuple[Plan, ...]:
    """Every job's plan (the simulations only end when each job has one)."""
    out = tuple(p for p in plans if p is not None)
    if len(out) != len(plans):
        raise AssertionError("a baseline left a job without a plan")
    return out


def _progressive_fill(inst: Instance, jobs, free: np.ndarray, total: np.ndarray,
                      deadline: Deadline) -> dict | None:
    """Worker counts by max-min fairness on dominant shares over the aggregate free capacity
    (None when the ``deadline`` expired while the jobs' types were computed)."""
    left = free.sum(axis=0).copy()
    counts = {j: 0 for j in jobs}
    share = {j: 0.0 for j in jobs}
    per = {}
    for j in jobs:
        if deadline.expired():
            return None
        m, p = ideal_types(inst, j)
        per[j] = (inst.e[m], inst.z[p] if inst.is_ps else np.zeros(inst.n_res), m, p)
    active = set(jobs)
    while active:
        j = min(active, key=lambda k: (share[k], k))
        e, z, m, p = per[j]
        extra = e + (z if counts[j] == 0 else 0)
        if counts[j] >= inst.jobs[j].chunks or (extra > room(left)).any():
            active.discard(j)
            continue
        left -= extra
        counts[j] += 1
        share[j] = float(((counts[j] * e + z) / total).max())
    return {j: max(1, c) for j, c in counts.items()}


# -------------------------------------------------------------------------- preemptive baselines


def _simulate(inst: Instance, seed: int, order_fn, max_workers: int, overhead: float,
              deadline: Deadline) -> Outcome:
    """Slot simulation: each slot, active jobs in ``order_fn`` order run if their (fixed) placement
    fits the slot's free capacity; a resume costs ``overhead`` slots of progress. The deadline is
    checked per job while preparing and once per slot."""
    counts = fixed_workers(inst, seed, max_workers, deadline=deadline)
    J = len(inst.jobs)
    if counts is None:
        return _stopped(0, J, "jobs prepared")
    types = []
    for j in range(J):
        if deadline.expired():
            return _stopped(j, J, "jobs prepared")
        types.append(ideal_types(inst, j))
    placed: list = [None] * J
    progress = [0.0] * J
    segments: list[list[tuple[int, int]]] = [[] for _ in range(J)]
    done, waited = [False] * J, [0] * J
    t = 1
    while not all(done):
        if deadline.expired():
            return _stopped(sum(done), J)
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
            if (use > room(free)).any():
                waited[j] += 1
                continue
            free -= use
            _advance(inst, j, t, placed[j], types[j], counts[j], progress, segments, done,
                     overhead)
        t += 1
    plans = []
    for j in range(J):
        m, p = types[j]
        segs = tuple(segments[j])
        plans.append(Plan(segs[0][0], sum(b - a + 1 for a, b in segs), m, p, placed[j][2],
                          placed[j][0], placed[j][1], segs if len(segs) > 1 else ()))
    return Outcome(Schedule(tuple(plans)), SolveStatus.FEASIBLE, info={"n_fix": counts})


def _advance(inst, j, t, placed, types, n, progress, segments, done, overhead: float) -> None:
    segs = segments[j]
    resumed = bool(segs) and segs[-1][1] != t - 1
    if segs and not resumed:
        segs[-1] = (segs[-1][0], t)
    else:
        segs.append((t, t))
    rate = n * inst.rate(j, types[0], types[1], n, placed[2])
    progress[j] += rate * (1.0 - overhead if resumed else 1.0)
    # done by verify_preemptive's (2f), in exact arithmetic
    slots = sum(b - a + 1 for a, b in segs) - tolerance.exact(overhead) * (len(segs) - 1)
    if slots * n >= inst.jobs[j].work * inst.time_per_batch(j, types[0], types[1], n, placed[2]):
        done[j] = True


def tiresias(inst: Instance, params: TiresiasParams, *, deadline: Deadline,
             seed: int = 0) -> Outcome:
    """Tiresias: every slot, jobs by (remaining slots at N_fix) x (GPUs of the gang), ascending
    (preemptive, one fixed placement per job; checked by :func:`preemptive_checker`).

    Parameters
    ----------
    inst
        The instance.
    params
        :class:`TiresiasParams` (range of N_fix, resume overhead).
    deadline
        Checked once per slot; when it expires there is no schedule (status ``time_limit``).
    seed
        Seeds N_fix.

    Notes
    -----
    One of the paper's baselines (Sec. 7; digest Sec. 4.8 reimplementation of Tiresias' 2D-LAS).
    Preemptive, so its schedules follow a relaxed model and are not compared with the exact
    optimum. Sec. 7 claims A_online beats it by >= 30 %: errata Z3.

    Examples
    --------
    >>> from optsched import generate, solve
    >>> solve(generate("elastic_cluster", "tiny", 0), "tiresias").status.value
    'feasible'
    """
    if (bad := infeasible_outcome(inst)) is not None:
        return bad
    gpu = inst.resources.index("gpu") if "gpu" in inst.resources else 0

    def order(t, active, progress, counts, types, waited):
        def key(j):
            m, p = types[j]
            rate = counts[j] * inst.rate(j, m, p, counts[j], 0)
            remaining = (inst.jobs[j].work - progress[j]) / rate
            return (remaining * counts[j] * inst.e[m, gpu], j)
        return sorted(active, key=key)

    return _simulate(inst, seed, order, params.max_workers, params.preempt_overhead, deadline)


def antman(inst: Instance, params: AntmanParams, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """AntMan: guarantee jobs (weight >= median) first in arrival order, then opportunistic jobs;
    a guarantee job that waited more than ``params.queue_slots`` slots becomes opportunistic
    (preemptive, one fixed placement per job; checked by :func:`preemptive_checker`).

    Parameters
    ----------
    inst
        The instance.
    params
        :class:`AntmanParams` (range of N_fix, resume overhead, queueing limit).
    deadline
        Checked once per slot; when it expires there is no schedule (status ``time_limit``).
    seed
        Seeds N_fix.

    Notes
    -----
    One of the paper's baselines (Sec. 7; digest Sec. 4.8 reimplementation). Preemptive, so its
    schedules follow a relaxed model and are not compared with the exact optimum. Sec. 7 claims
    A_online beats it by >= 30 %: errata Z3.

    Examples
    --------
    >>> from optsched import generate, solve
    >>> solve(generate("elastic_cluster", "tiny", 0), "antman").status.value
    'feasible'
    """
    if (bad := infeasible_outcome(inst)) is not None:
        return bad
    median = float(np.median([j.weight for j in inst.jobs]))

    def order(t, active, progress, counts, types, waited):
        def key(j):
            guaranteed = inst.jobs[j].weight >= median and waited[j] <= params.queue_slots
            return (0 if guaranteed else 1, inst.jobs[j].arrival, j)
        return sorted(active, key=key)

    return _simulate(inst, seed, order, params.max_workers, params.preempt_overhead, deadline)


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


__all__ = ["AntmanParams", "FifoParams", "TiresiasParams", "antman", "drf", "fifo", "ideal_types",
           "jain_greedy", "place", "preemptive_checker", "tiresias"]
