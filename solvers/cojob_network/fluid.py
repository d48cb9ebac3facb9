"""cojob_network: the fluid LP of a stage completion order and a local search over orders (issue 19,
the primal side of certify).

A toolkit addition, not in the paper. Fix a completion order ``sigma`` of the stages that keeps the
chains (paper Eq. (14)); position ``i`` of ``sigma`` ends interval ``i = [T_{i-1}, T_i]`` of
length ``ell_i >= 0`` (``T_0 = 0``), so the stage at position ``i`` completes at ``T_i``. In
interval ``i`` job ``q`` of stage ``a = (g, k)`` completes ``x_{q,i} >= 0`` iterations
(fractional) at a constant pace, every flow ``f`` of the job at rate ``D_f x_{q,i} / ell_i``: all
flows of an iteration end together and the next one starts at once (Eq. (7), no compute gap).
The *order LP* is::

    min  sum_i (l - i + 1) ell_i                     (= sum_i T_i; less sum_a r_g, Eq. (1))
    s.t. sum_i x_{q,i} = n_q                          every job q (its iterations of the stage)
         sum_q v_{q,p} x_{q,i} <= ell_i               every port p, interval i (Eqs. (10)-(11))
         x_{q,i} = 0 outside rel(q) < i <= pos(a)     barrier (8): after the predecessor's end

with ``v_{q,p}`` the job's per-iteration time at port ``p`` (bytes / capacity). Its optimum is
the best schedule with completion order ``sigma`` in which every job keeps a proportional pace
(averaging any such schedule over each interval keeps its ends and its port loads), and
:func:`to_schedule` turns it into rate segments ``verify`` accepts. It replaces the time grid
of stop 28's slot LP (removed) by the intervals between completions, so there is no slot length
to get wrong. :func:`search` looks for the order (first-improvement insertion moves, kicks at a
local optimum). Paper seed 0: Model F's order gives 40,086; 230 LPs (~6 s) descend to 39,212.5.

Arrivals (9): the first stage of cojob ``g`` may progress from interval ``rel_g`` on, and
``T_{rel_g - 1} >= r_g``. ``rel_g`` starts at the stage's own position and moves to the first
interval that starts at or after ``r_g`` in the LP's solution; the LP is then solved again (its
last solution stays feasible, so this never loses).

Instances with a compute gap are not handled (the pace would have to stop between iterations):
:func:`order_lp` returns None for them.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

import numpy as np

from optsched.deadline import Deadline
from optsched.problems.cojob_network import Instance, Schedule, Segment, stage_load
from optsched.result import SolveStatus
from optsched.solvers.cojob_network.bounds import chain_ends


@dataclass(frozen=True)
class _Job:
    stage: tuple[int, int]
    j: int
    n: int                    # iterations of the stage
    first: int                # 1-based index of its first iteration
    ports: dict               # port -> per-iteration time (bytes / capacity)


def jobs_of(instance: Instance) -> list[_Job]:
    """Every (stage, job) of ``instance``, with its iterations and per-iteration port times
    (:func:`~optsched.problems.cojob_network.stage_load` of the job alone, over its iterations)."""
    out = []
    for g, k in instance.stages:
        cj = instance.cojobs[g]
        n, before = cj.stage_iterations(k), (cj.iterations[k - 1] if k else 0)
        for j in cj.alive(k):
            load = stage_load(instance, g, k, (j,)) / n
            out.append(_Job((g, k), j, n, before + 1,
                            {int(p): float(load[p]) for p in np.flatnonzero(load)}))
    return out


def applies(instance: Instance) -> bool:
    """False for instances with a compute gap (module docstring)."""
    return not any(job.compute > 0 for c in instance.cojobs for job in c.jobs)


@dataclass(frozen=True)
class Solution:
    """An optimal solution of the order LP: interval ``i`` is ``[T[i], T[i + 1]]`` (``T[0] = 0``;
    interval 0 is the wait before the first completion, interval ``i >= 1`` ends with
    ``order[i - 1]``), ``x[q, i]`` the iterations job ``q`` completes in it, ``release[a]`` the
    index into ``T`` at which stage ``a``'s jobs start (its predecessor's end, or its cojob's
    release)."""

    order: tuple
    value: float
    T: np.ndarray
    x: np.ndarray
    release: dict


def order_lp(instance: Instance, order, jobs: list[_Job] | None = None) -> Solution | None:
    """The order LP of ``order`` (module docstring) solved by HiGHS; None for compute gaps or when
    the LP does not end optimal."""
    if not applies(instance):
        return None
    jobs = jobs_of(instance) if jobs is None else jobs
    order = tuple(order)
    pos = {a: i + 1 for i, a in enumerate(order)}
    rel = {g: pos[g, 0] for g, c in enumerate(instance.cojobs) if c.arrival > 0}
    sol = _solve(instance, order, pos, rel, jobs)
    while sol is not None and rel:
        moved = {g: min(rel[g], int(np.searchsorted(sol.T, r - 1e-9 * (1 + r))))
                 for g, r in ((g, instance.cojobs[g].arrival) for g in rel)}
        if moved == rel:
            break
        rel = moved
        again = _solve(instance, order, pos, rel, jobs)
        if again is None or again.value > sol.value:
            break
        sol = again
    return sol


def _solve(instance: Instance, order: tuple, pos: dict, rel: dict, jobs: list[_Job]):
    """One order LP with cojob release intervals ``rel`` (absent: interval 0). Interval 0 ends
    no stage: it is the wait before the first completion that an arrival may need; interval
    ``i >= 1`` ends with ``order[i - 1]``."""
    l = len(order)
    lp = _LP()
    port_row = {(p, i): lp.row(-np.inf, 0.0) for p in range(instance.n_ports) for i in range(l + 1)}
    job_row = [lp.row(job.n, job.n) for job in jobs]
    arrival_row = {g: lp.row(instance.cojobs[g].arrival, np.inf) for g in rel}
    for i in range(l + 1):              # ell_i costs the completions at or after interval i
        lp.column(float(l - max(i, 1) + 1),
                  [(port_row[p, i], -1.0) for p in range(instance.n_ports)]
                  + [(arrival_row[g], 1.0) for g in rel if i < rel[g]])   # T before rel_g
    release = {a: pos[a[0], a[1] - 1] + 1 if a[1] else rel.get(a[0], 0) for a in order}
    cells = []
    for q, job in enumerate(jobs):
        for i in range(release[job.stage], pos[job.stage] + 1):
            cells.append((q, i))
            lp.column(0.0, [(job_row[q], 1.0)] + [(port_row[p, i], v) for p, v in job.ports.items()])
    rep = lp.solve()
    if rep.status is not SolveStatus.OPTIMAL or rep.x is None:
        return None
    x = np.zeros((len(jobs), l + 1))
    for (q, i), value in zip(cells, rep.x[l + 1:]):
        x[q, i] = value
    T = np.r_[0.0, np.cumsum(np.maximum(rep.x[:l + 1], 0.0))]
    arrived = sum(instance.cojobs[g].arrival for g, _ in order)      # verify's sum (S - r_g)
    return Solution(order, float(rep.objective) - arrived, T, x, release)


def bound_lp(instance: Instance, order, jobs: list[_Job] | None = None) -> float | None:
    """A lower bound on every schedule of (O) whose stages complete in ``order``: the order LP
    with the pace relaxed to what Eq. (7) allows (None when the LP does not end optimal).

    In any schedule, by the end ``T_i`` of interval ``i`` job ``q`` has completed some ``c``
    iterations and sent at most one more iteration's bytes, so its time at port ``p`` so far is
    in ``[v_{q,p} c, v_{q,p} (c + 1)]``. The LP takes ``y_{q,p,i}`` (time at port ``p`` in
    interval ``i``) and cumulative counts ``X_{q,i} = sum x`` (relaxed to reals) with exactly
    that: ``v X <= sum y <= v (X + 1)``, ports ``sum_q y <= ell_i``, and everything else of the
    order LP. Arrivals and compute gaps are relaxed (a job may send before its cojob arrives, no
    gap between iterations); instead every stage ends no earlier than its chain bound
    ``r_g + sum_{k' <= k} Lambda`` (Eq. (14)). So the LP's optimum is at most the cost of every
    schedule with this completion order."""
    jobs = jobs_of(instance) if jobs is None else jobs
    order = tuple(order)
    l, n_ports = len(order), instance.n_ports
    pos = {a: i for i, a in enumerate(order)}
    window = {a: range(pos[a[0], a[1] - 1] + 1 if a[1] else 0, pos[a] + 1) for a in order}
    lp = _LP()
    port_row = {(p, i): lp.row(-np.inf, 0.0) for p in range(n_ports) for i in range(l)}
    chain = chain_ends(instance)
    chain_row = [lp.row(chain[a], np.inf) for a in order]    # T at pos(a) >= its chain bound
    for i in range(l):                                       # ell_i
        lp.column(float(l - i), [(port_row[p, i], -1.0) for p in range(n_ports)]
                  + [(chain_row[u], 1.0) for u in range(i, l)])
    for job in jobs:
        _job_columns(job, window[job.stage], lp, port_row)
    rep = lp.solve()
    if rep.status is not SolveStatus.OPTIMAL:
        return None
    return float(rep.objective) - sum(instance.cojobs[g].arrival for g, _ in order)


def _job_columns(job: _Job, win: range, lp: "_LP", port_row: dict) -> None:
    """Job ``job``'s part of :func:`bound_lp`, in cumulative form over its window ``win``:
    ``X_u`` iterations completed and ``Y_{p,u}`` time at port ``p`` by the end of its ``u``-th
    interval, both non-decreasing and ending at ``n`` and ``v_p n``; ``v_p X_u <= Y_{p,u} <=
    v_p (X_u + 1)``; interval ``win[u]`` carries ``Y_{p,u} - Y_{p,u-1}`` at port ``p``."""
    m = len(win)
    grow = [lp.row(0.0, np.inf) for _ in range(m - 1)]             # X_{u+1} - X_u >= 0
    lead = {p: [lp.row(0.0, v) for _ in range(m)] for p, v in job.ports.items()}
    for u in range(m):
        entries = [(lead[p][u], -v) for p, v in job.ports.items()]
        entries += [(grow[u], -1.0)] if u < m - 1 else []
        entries += [(grow[u - 1], 1.0)] if u else []
        last = float(job.n) if u == m - 1 else None
        lp.column(0.0, entries, last)
    for p, v in job.ports.items():
        grow_p = [lp.row(0.0, np.inf) for _ in range(m - 1)]
        for u, i in enumerate(win):
            entries = [(lead[p][u], 1.0), (port_row[p, i], 1.0)]
            if u < m - 1:
                entries += [(port_row[p, win[u + 1]], -1.0), (grow_p[u], -1.0)]
            if u:
                entries.append((grow_p[u - 1], 1.0))
            lp.column(0.0, entries, v * job.n if u == m - 1 else None)


class _LP:
    """An LP built entry by entry (:func:`_solve`, :func:`bound_lp`): rows with bounds, then
    columns with a cost and their ``(row, value)`` entries, non-negative or fixed at ``fixed``;
    solved by HiGHS as an :class:`~optsched.solvers.highs.ArrayModel`."""

    def __init__(self) -> None:
        self.lo: list[float] = []
        self.hi: list[float] = []
        self.cost: list[float] = []
        self.entries: list[list] = []
        self.fixed: list[float | None] = []

    def row(self, lo: float, hi: float) -> int:
        self.lo.append(lo)
        self.hi.append(hi)
        return len(self.lo) - 1

    def column(self, cost: float, entries: list, fixed: float | None = None) -> None:
        self.cost.append(cost)
        self.entries.append(entries)
        self.fixed.append(fixed)

    def solve(self):
        """HiGHS' report (:class:`~optsched.solvers.highs.ArrayReport`)."""
        from optsched.solvers.highs import ArrayModel

        starts = np.cumsum([0] + [len(e) for e in self.entries[:-1]])
        rows = [r for entries in self.entries for r, _ in entries]
        values = [v for entries in self.entries for _, v in entries]
        lo = np.array([0.0 if f is None else f for f in self.fixed])
        hi = np.array([np.inf if f is None else f for f in self.fixed])
        model = ArrayModel(n_rows=len(self.lo), row_lo=self.lo, row_hi=self.hi)
        model.add_columns(np.asarray(self.cost), lo, hi, starts, rows, values)
        return model.solve()


def to_schedule(instance: Instance, sol: Solution, jobs: list[_Job] | None = None) -> Schedule:
    """Rate segments of ``sol`` (module docstring): inside an interval each job keeps its pace;
    a segment ends at every interval end and every iteration end. Intervals shorter than 1e-9 of
    the horizon are dropped with their progress (each job's row is rescaled to its iterations,
    :func:`cleaned`; ``verify`` charges the port loads this moves, never forgives them)."""
    jobs = jobs_of(instance) if jobs is None else jobs
    T = sol.T
    ell = np.diff(T)
    x = np.where((ell > 1e-9 * max(T[-1], 1.0))[None, :], sol.x, 0.0)
    x = cleaned(x, np.array([job.n for job in jobs], dtype=float))
    return Schedule(_starts(instance, sol), paced_segments(instance, jobs, T, x), sol.order,
                    "fluid_lp")


def paced_segments(instance: Instance, jobs: list, edges: np.ndarray, x: np.ndarray) -> tuple:
    """Rate segments of jobs that complete ``x[q, i]`` iterations at a constant pace inside
    ``[edges[i], edges[i + 1]]``, every flow at its bytes times the pace; a segment ends at every
    edge and every iteration end."""
    flows = [instance.cojobs[job.stage[0]].jobs[job.j].flows for job in jobs]
    pos = np.zeros(len(jobs))                        # iterations completed so far, per job
    segments = []
    for t in range(x.shape[1]):
        active = np.flatnonzero(x[:, t] > 0)
        if not len(active):
            continue
        t0, span = float(edges[t]), float(edges[t + 1] - edges[t])
        pace = x[active, t] / span
        cuts = {0.0, span}
        for q, rho in zip(active, pace):
            m = math.floor(pos[q] + 1e-9) + 1
            while m < pos[q] + x[q, t] - 1e-9:
                cuts.add((m - pos[q]) / rho)
                m += 1
        bounds = sorted(cuts)
        for u0, u1 in zip(bounds, bounds[1:]):
            if u1 - u0 <= 1e-12 * span:
                continue
            mid = 0.5 * (u0 + u1)
            rates = []
            for q, rho in zip(active, pace):
                job = jobs[q]
                i = job.first + min(job.n - 1, math.floor(pos[q] + rho * mid + 1e-12))
                rates += [(job.stage[0], job.j, i, f, size * rho)
                          for f, (_, _, size) in enumerate(flows[q])]
            segments.append(Segment(t0 + u0, t0 + u1, tuple(sorted(rates))))
        pos[active] += x[active, t]
    return tuple(segments)


def cleaned(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Progress ``x[q, t]`` as a schedule can take it: negatives and noise (< 1e-12) dropped,
    nothing after the interval where a job's iterations are done (to 1e-9 relative: a solver's
    noise there would send bytes of the last iteration again, late), each row rescaled to
    ``n[q]``."""
    x = np.where(x < 1e-12, 0.0, x)
    reached = np.cumsum(x, axis=1) >= n[:, None] * (1 - 1e-9)
    after = np.cumsum(reached, axis=1) > 1                   # intervals after the first at n
    x[after] = 0.0
    return x * (n / x.sum(axis=1))[:, None]


def _starts(instance: Instance, sol: Solution):
    """``t*`` of each job's stages: the start of its release interval, the same for all jobs of
    a stage (barrier (8)); for a first stage never before its cojob's arrival (9)."""
    def start(g: int, k: int) -> float:
        t = float(sol.T[sol.release[g, k]])
        return max(t, instance.cojobs[g].arrival) if not k else t
    return tuple(tuple(tuple(start(g, k) for k in range(job.stages)) for job in c.jobs)
                 for g, c in enumerate(instance.cojobs))


# --------------------------------------------------------------------------- search over orders

#: Random insertion moves of one kick of :func:`search` at a local optimum.
KICK_MOVES = 3


def moves(order: tuple, rng: random.Random) -> list[tuple]:
    """Every order reached by moving one stage to another position, chains kept (Eq. (14)),
    shuffled by ``rng``."""
    out = []
    where = {a: i for i, a in enumerate(order)}
    for i, (g, k) in enumerate(order):
        lo = where[g, k - 1] + 1 if k else 0
        hi = where.get((g, k + 1), len(order))
        for j in range(lo, hi):
            if j in (i, i + 1):
                continue
            rest = order[:i] + order[i + 1:]
            at = j if j < i else j - 1
            out.append(rest[:at] + ((g, k),) + rest[at:])
    rng.shuffle(out)
    return out


def search(instance: Instance, orders, *, deadline: Deadline, goal: float | None = None,
           seed: int = 0) -> tuple[Solution | None, dict]:
    """The best order LP solution reachable from ``orders`` (stage orders that keep the chains)
    within ``deadline``: first-improvement descent from each start over :func:`moves`, then, with
    time left, iterated local search (:data:`KICK_MOVES` random moves from the best order, then
    descent). Stops once a value is at most ``goal`` (certify's lower bound). Returns the best
    solution (None: no LP solved) and counters."""
    from optsched.tolerance import at_most

    rng = random.Random(seed)
    jobs = jobs_of(instance)
    info: dict[str, Any] = {"fluid_lps": 0, "fluid_kicks": 0}
    best: Solution | None = None

    def value(order) -> Solution | None:
        nonlocal best
        info["fluid_lps"] += 1
        sol = order_lp(instance, order, jobs)
        if sol is not None and (best is None or sol.value < best.value - 1e-9):
            best = sol
        return sol

    def done() -> bool:
        return deadline.expired() or (goal is not None and best is not None
                                      and at_most(best.value, goal))

    def descend(sol: Solution) -> Solution:
        improved = True
        while improved and not done():
            improved = False
            for order in moves(sol.order, rng):
                if done():
                    break
                cand = value(order)
                if cand is not None and cand.value < sol.value * (1 - 1e-9):
                    sol, improved = cand, True
                    break
        return sol

    for order in dict.fromkeys(tuple(map(tuple, o)) for o in orders):
        if done():
            break
        start = value(order)
        if start is not None:
            descend(start)
    while best is not None and deadline.end is not None and not done():
        info["fluid_kicks"] += 1
        order = best.order
        for _ in range(KICK_MOVES):
            order = rng.choice(moves(order, rng) or [order])
        kicked = value(order)
        if kicked is not None:
            descend(kicked)
    return best, info
