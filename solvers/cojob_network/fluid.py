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
from optsched.problems.cojob_network import Instance, Schedule, Segment


@dataclass(frozen=True)
class _Job:
    stage: tuple[int, int]
    j: int
    n: int                    # iterations of the stage
    first: int                # 1-based index of its first iteration
    ports: dict               # port -> per-iteration time (bytes / capacity)


def jobs_of(instance: Instance) -> list[_Job]:
    """Every (stage, job) of ``instance``, with its iterations and per-iteration port times."""
    P, cap = instance.machines, instance.capacity
    out = []
    for g, k in instance.stages:
        cj = instance.cojobs[g]
        before = cj.iterations[k - 1] if k else 0
        for j in cj.alive(k):
            ports: dict[int, float] = {}
            for s, d, x in cj.jobs[j].flows:
                ports[s] = ports.get(s, 0.0) + x / cap
                ports[P + d] = ports.get(P + d, 0.0) + x / cap
            out.append(_Job((g, k), j, cj.iterations[k] - before, before + 1, ports))
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
        moved = {g: int(np.searchsorted(sol.T, c.arrival - 1e-9 * (1 + c.arrival)))
                 for g, c in enumerate(instance.cojobs) if g in rel}
        moved = {g: min(moved[g], rel[g]) for g in rel}
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
    from optsched.result import SolveStatus
    from optsched.solvers.highs import ArrayModel

    l, n_ports, J = len(order), instance.n_ports, len(jobs)
    release = {a: pos[a[0], a[1] - 1] + 1 if a[1] else rel.get(a[0], 0) for a in order}
    port_row = J + np.arange(n_ports)[:, None] * (l + 1) + np.arange(l + 1)[None, :]
    arrivals = sorted(rel)
    n_rows = J + n_ports * (l + 1) + len(arrivals)
    row_lo = np.r_[[float(job.n) for job in jobs], np.full(n_ports * (l + 1), -np.inf),
                   [instance.cojobs[g].arrival for g in arrivals]]
    row_hi = np.r_[[float(job.n) for job in jobs], np.zeros(n_ports * (l + 1)),
                   np.full(len(arrivals), np.inf)]
    model = ArrayModel(n_rows=n_rows, row_lo=row_lo, row_hi=row_hi)
    starts: list[int] = []
    rows: list[int] = []
    values: list[float] = []
    for i in range(l + 1):                               # ell_i: -1 in its port rows
        starts.append(len(rows))
        rows += [int(r) for r in port_row[:, i]]
        values += [-1.0] * n_ports
        for r, g in enumerate(arrivals):                # the start of interval rel_g
            if i < rel[g]:
                rows.append(J + n_ports * (l + 1) + r)
                values.append(1.0)
    cells = []
    for q, job in enumerate(jobs):
        for i in range(release[job.stage], pos[job.stage] + 1):
            cells.append((q, i))
            starts.append(len(rows))
            rows.append(q)
            values.append(1.0)
            for p, v in job.ports.items():
                rows.append(int(port_row[p, i]))
                values.append(v)
    cost = np.r_[float(l), np.arange(l, 0, -1, dtype=float), np.zeros(len(cells))]
    model.add_columns(cost, np.zeros(len(cost)), np.full(len(cost), np.inf), starts, rows, values)
    rep = model.solve()
    if rep.status is not SolveStatus.OPTIMAL or rep.x is None:
        return None
    x = np.zeros((J, l + 1))
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
    from optsched.result import SolveStatus
    from optsched.solvers.highs import ArrayModel

    jobs = jobs_of(instance) if jobs is None else jobs
    order = tuple(order)
    l, n_ports = len(order), instance.n_ports
    pos = {a: i for i, a in enumerate(order)}
    window = {a: range(pos[a[0], a[1] - 1] + 1 if a[1] else 0, pos[a] + 1) for a in order}
    rows, cols = _Rows(), _Rows()
    port_row = {(p, i): rows.add(-np.inf, 0.0) for p in range(n_ports) for i in range(l)}
    chain = _chain_bounds(instance)
    for i in range(l):                                       # ell_i, in the chain rows below
        cols.column(float(l - i), [(port_row[p, i], -1.0) for p in range(n_ports)])
    for a in order:                                          # T at pos(a) >= chain bound
        r = rows.add(chain[a], np.inf)
        for i in range(pos[a] + 1):
            cols.entries[i].append((r, 1.0))
    for job in jobs:
        _job_columns(job, window[job.stage], rows, cols, port_row)
    model = ArrayModel(n_rows=len(rows.lo), row_lo=rows.lo, row_hi=rows.hi)
    model.add_columns(*cols.csc())
    rep = model.solve()
    if rep.status is not SolveStatus.OPTIMAL:
        return None
    return float(rep.objective) - sum(instance.cojobs[g].arrival for g, _ in order)


def _job_columns(job: _Job, win: range, rows: "_Rows", cols: "_Rows", port_row: dict) -> None:
    """Job ``job``'s part of :func:`bound_lp`, in cumulative form over its window ``win``:
    ``X_u`` iterations completed and ``Y_{p,u}`` time at port ``p`` by the end of its ``u``-th
    interval, both non-decreasing and ending at ``n`` and ``v_p n``; ``v_p X_u <= Y_{p,u} <=
    v_p (X_u + 1)``; interval ``win[u]`` carries ``Y_{p,u} - Y_{p,u-1}`` at port ``p``."""
    m = len(win)
    grow = [rows.add(0.0, np.inf) for _ in range(m - 1)]             # X_{u+1} - X_u >= 0
    lead = {p: [rows.add(0.0, v) for _ in range(m)] for p, v in job.ports.items()}
    for u in range(m):
        entries = [(lead[p][u], -v) for p, v in job.ports.items()]
        entries += [(grow[u], -1.0)] if u < m - 1 else []
        entries += [(grow[u - 1], 1.0)] if u else []
        last = float(job.n) if u == m - 1 else None
        cols.column(0.0, entries, last)
    for p, v in job.ports.items():
        grow_p = [rows.add(0.0, np.inf) for _ in range(m - 1)]
        for u, i in enumerate(win):
            entries = [(lead[p][u], 1.0), (port_row[p, i], 1.0)]
            if u < m - 1:
                entries += [(port_row[p, win[u + 1]], -1.0), (grow_p[u], -1.0)]
            if u:
                entries.append((grow_p[u - 1], 1.0))
            cols.column(0.0, entries, v * job.n if u == m - 1 else None)


class _Rows:
    """Row bounds and columns of an LP built entry by entry (:func:`bound_lp`); a column is
    non-negative, or fixed at ``fixed``."""

    def __init__(self) -> None:
        self.lo: list[float] = []
        self.hi: list[float] = []
        self.cost: list[float] = []
        self.entries: list[list] = []
        self.fixed: list[float | None] = []

    def add(self, lo: float, hi: float) -> int:
        self.lo.append(lo)
        self.hi.append(hi)
        return len(self.lo) - 1

    def column(self, cost: float, entries: list, fixed: float | None = None) -> None:
        self.cost.append(cost)
        self.entries.append(list(entries))
        self.fixed.append(fixed)

    def csc(self):
        """``(cost, lo, hi, starts, rows, values)`` of non-negative columns."""
        starts, rows, values = [], [], []
        for entries in self.entries:
            starts.append(len(rows))
            rows += [r for r, _ in entries]
            values += [v for _, v in entries]
        lo = np.array([0.0 if f is None else f for f in self.fixed])
        hi = np.array([np.inf if f is None else f for f in self.fixed])
        return np.asarray(self.cost), lo, hi, starts, rows, values


def _chain_bounds(instance: Instance) -> dict:
    """``r_g + sum_{k' <= k} Lambda_{g,k'}`` of every stage (Eq. (14), LP-Primal's chain)."""
    out: dict = {}
    for g, k in instance.stages:
        before = out[g, k - 1] if k else instance.cojobs[g].arrival
        out[g, k] = before + float(instance.loads[g, k].max())
    return out


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
    best: list[Solution | None] = [None]

    def value(order) -> Solution | None:
        info["fluid_lps"] += 1
        sol = order_lp(instance, order, jobs)
        if sol is not None and (best[0] is None or sol.value < best[0].value - 1e-9):
            best[0] = sol
        return sol

    def done() -> bool:
        return deadline.expired() or (goal is not None and best[0] is not None
                                      and at_most(best[0].value, goal))

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
    while best[0] is not None and deadline.end is not None and not done():
        info["fluid_kicks"] += 1
        order = best[0].order
        for _ in range(KICK_MOVES):
            order = rng.choice(moves(order, rng) or [order])
        kicked = value(order)
        if kicked is not None:
            descend(kicked)
    return best[0], info
