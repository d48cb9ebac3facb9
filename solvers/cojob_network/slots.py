"""cojob_network: the slot LP schedule of a stage order (issue 19, the primal side of certify).

A toolkit addition, not in the paper: the time-indexed UB variant of spec Model C (Sec. 3.5.2)
written over *jobs* and *iteration progress*, solved stage by stage in a given order.

Time is cut into slots of length ``delta``. In slot ``t`` job ``(g, j)`` of stage ``a = (g, k)``
completes ``x_{a,j,t} >= 0`` iterations (fractional) at a constant pace: every flow ``f`` of the
job sends at rate ``D_f x / delta``, so all flows of an iteration end together and the next
iteration starts at once (paper Eq. (7), no compute gap). Port ``p`` carries
``sum_{a,j} v_{a,j,p} x_{a,j,t} <= delta`` (Eqs. (10)-(11); ``v`` the job's per-iteration time at
``p``). Stage ``a`` may progress only from the slot after its chain predecessor's last slot (its
release ``r_a``: barrier (8), all jobs start at ``r_a delta``), and must finish its ``n_{g,k}``
iterations by the end of its deadline slot ``c_a``. Such an x is a schedule ``verify`` accepts:
:func:`to_schedule` turns it into rate segments, iteration by iteration.

:func:`lex_schedule` fixes the deadlines *lexicographically* along the order: the first stage gets
the smallest deadline at which the LP is feasible, then the next with the first one's kept, and so
on (exponential then binary search on the slot, each step one LP warm-started by HiGHS). So the
order is a priority as in the paper's order-preserving scheduling (Sec. III-D), but the rates come
from an LP that looks at every port at once instead of per-flow max-min filling: a lower-priority
stage may take a port exactly when the stages above it do not need it to meet their deadlines.
On paper seed 0 with Model F's order, the simulator's max-min order gives 43,142 and this
schedule 40,620 (slot 60, slot ends; the verified cost is lower: stages end inside their slot).

Instances with a compute gap are not handled (the pace would have to stop between iterations):
:func:`lex_schedule` returns None for them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from optsched.deadline import Deadline
from optsched.problems.cojob_network import Instance, Schedule, Segment

#: Slot counts :func:`polish` tries, in this order: ``delta = (sum of the stages' bottleneck
#: loads) / count`` (paper seed 0: 120 slots of ~90 time units). The cost is not monotone in the
#: slot (paper seed 0, Model F's order, 100-300 slots: 40,754-41,293), so several are tried.
SLOT_COUNTS = (120, 100, 140, 160, 180, 110, 130, 150, 200, 240)

#: Re-ordered passes :func:`polish` makes per start order: the order of the last pass's deadlines.
RESORTS = 2


@dataclass(frozen=True)
class _Job:
    stage: tuple[int, int]
    j: int
    n: int                    # iterations of the stage
    first: int                # 1-based index of its first iteration
    ports: dict               # port -> per-iteration time (bytes / capacity)


def _jobs(instance: Instance, order) -> list[_Job]:
    P, cap = instance.machines, instance.capacity
    out = []
    for g, k in order:
        cj = instance.cojobs[g]
        before = cj.iterations[k - 1] if k else 0
        for j in cj.alive(k):
            ports: dict[int, float] = {}
            for s, d, x in cj.jobs[j].flows:
                ports[s] = ports.get(s, 0.0) + x / cap
                ports[P + d] = ports.get(P + d, 0.0) + x / cap
            out.append(_Job((g, k), j, cj.iterations[k] - before, before + 1, ports))
    return out


def arrival_slot(instance: Instance, g: int, delta: float) -> int:
    """The first slot cojob ``g`` may use: the one starting at or after its arrival (9)."""
    return int(math.ceil(instance.cojobs[g].arrival / delta - 1e-9))


def horizon(instance: Instance, delta: float) -> int:
    """Slots enough for any order: stage by stage, each in ``ceil(Lambda_a / delta) + 1`` slots
    after the last arrival (a serial schedule meets every deadline the search can ask for)."""
    last = max(c.arrival for c in instance.cojobs)
    return int(math.ceil(last / delta)) + sum(
        int(math.ceil(float(instance.loads[a].max()) / delta)) + 1 for a in instance.stages) + 1


class SlotLP:
    """The slot LP of a stage order: one :class:`~optsched.solvers.highs.ArrayModel` with a column
    per (job, slot), a row per job (its iterations) and per (port, slot) (capacity); deadlines and
    releases are column bounds, changed between warm-started solves."""

    def __init__(self, instance: Instance, order, delta: float, deadline: Deadline):
        from optsched.solvers.highs import ArrayModel

        self.inst, self.order, self.delta = instance, tuple(order), float(delta)
        self.deadline = deadline
        self.jobs = _jobs(instance, self.order)
        self.H = H = horizon(instance, delta)
        J, n_ports = len(self.jobs), instance.n_ports
        self.lp = ArrayModel(n_rows=J + n_ports * H,
                             row_lo=np.r_[np.zeros(J), np.full(n_ports * H, -np.inf)],
                             row_hi=np.r_[np.zeros(J), np.full(n_ports * H, delta)])
        starts: list[int] = []
        rows: list[int] = []
        values: list[float] = []
        for q, job in enumerate(self.jobs):
            for t in range(H):
                starts.append(len(rows))
                rows.append(q)
                values.append(1.0)
                for p, v in job.ports.items():
                    rows.append(J + p * H + t)
                    values.append(v)
        cost = np.tile(np.arange(H, dtype=float) * 1e-3, J)    # among feasible x: work early
        self.lp.add_columns(cost=cost, lo=np.zeros(J * H), hi=np.zeros(J * H), starts=starts,
                            rows=rows, values=values)
        self.of_stage: dict = {}
        for q, job in enumerate(self.jobs):
            self.of_stage.setdefault(job.stage, []).append(q)
        self.solves = 0

    def _window(self, a, release: int, last: int) -> None:
        """Stage ``a``'s columns open on slots ``release..last``, its rows ask for every iteration."""
        h, H = self.lp.h, self.H
        hi = np.zeros(H)
        hi[release:last + 1] = np.inf
        for q in self.of_stage[a]:
            n = float(self.jobs[q].n)
            h.changeRowBounds(q, n, n)
            h.changeColsBounds(H, np.arange(q * H, (q + 1) * H, dtype=np.int32), np.zeros(H), hi)

    def _feasible(self) -> bool | None:
        """True / False; None when the deadline stopped the LP. A solve that ends undecided
        (HiGHS ``kUnknown``: numerical trouble of a warm start) is repeated from scratch once and
        then counts as infeasible (a later deadline is tried; only an optimal LP is ever read)."""
        hp, h = self.lp._hp, self.lp.h
        for fresh in (False, True):
            left = self.deadline.remaining()
            if left is not None and left <= 0:
                return None
            if fresh:
                h.clearSolver()
            h.setOptionValue("time_limit", float(left) if left is not None else math.inf)
            self.solves += 1
            h.run()
            status = h.getModelStatus()
            if status == hp.HighsModelStatus.kOptimal:
                return True
            if status in (hp.HighsModelStatus.kInfeasible,
                          hp.HighsModelStatus.kUnboundedOrInfeasible):
                return False
            if status == hp.HighsModelStatus.kTimeLimit:
                return None
        return False

    def lex(self) -> dict | None:
        """Deadline slot of every stage, fixed lexicographically along the order (module
        docstring); the LP's last solution meets them all. None when the deadline stopped it."""
        done: dict = {}
        for a in self.order:
            g, k = a
            release = done[g, k - 1] + 1 if k else arrival_slot(self.inst, g, self.delta)
            need = float(self.inst.loads[a].max())
            lo = release + max(0, int(math.ceil(need / self.delta - 1e-9)) - 1)
            last = self._smallest(a, release, min(lo, self.H - 1))
            if last is None:
                return None
            done[a] = last
        return done

    def _smallest(self, a, release: int, lo: int) -> int | None:
        """The least deadline slot >= ``lo`` at which the LP is feasible (doubling, then bisection),
        left set in the LP with its solution."""
        step, last = 1, lo
        while True:
            self._window(a, release, last)
            ok = self._feasible()
            if ok is None:
                return None
            if ok:
                break
            if last >= self.H - 1:
                raise RuntimeError(f"slot LP: stage {a} does not fit the horizon")  # horizon()
            lo, last, step = last + 1, min(self.H - 1, last + step), 2 * step
        while lo < last:
            mid = (lo + last) // 2
            self._window(a, release, mid)
            ok = self._feasible()
            if ok is None:
                return None
            if ok:
                last = mid
            else:
                lo = mid + 1
        while True:                       # the LP must end holding a solution for ``last``
            self._window(a, release, last)
            ok = self._feasible()
            if ok or ok is None or last >= self.H - 1:
                return last if ok else None
            last += 1

    def progress(self) -> np.ndarray:
        """``x[q, t]`` of the last solve, clipped at 0 and rescaled so every job's row sums to its
        iterations exactly (HiGHS meets the rows to its tolerance; the rescale moves a port load
        by that much, which ``verify`` charges, never forgives)."""
        x = np.asarray(self.lp.h.getSolution().col_value, dtype=float).reshape(len(self.jobs), self.H)
        return cleaned(x, np.array([job.n for job in self.jobs], dtype=float))


def cleaned(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Progress ``x[q, t]`` as a schedule can take it: negatives and noise (< 1e-12) dropped,
    nothing after the slot where a job's iterations are done (to 1e-9 relative: a solver's noise
    there would send bytes of the last iteration again, late), each row rescaled to ``n[q]``."""
    x = np.where(x < 1e-12, 0.0, x)
    reached = np.cumsum(x, axis=1) >= n[:, None] * (1 - 1e-9)
    after = np.cumsum(reached, axis=1) > 1                   # slots after the first that reached n
    x[after] = 0.0
    return x * (n / x.sum(axis=1))[:, None]


def to_schedule(instance: Instance, lp: SlotLP, done: dict, x: np.ndarray) -> Schedule:
    """Rate segments of ``x`` (module docstring): inside a slot each job keeps its pace; a
    segment ends at every slot boundary and every iteration end."""
    delta, flows = lp.delta, [instance.cojobs[job.stage[0]].jobs[job.j].flows for job in lp.jobs]
    pos = np.zeros(len(lp.jobs))                     # iterations completed so far, per job
    segments = []
    for t in range(lp.H):
        active = np.flatnonzero(x[:, t] > 0)
        if not len(active):
            continue
        t0, pace = t * delta, x[active, t] / delta
        cuts = {0.0, delta}
        for q, rho in zip(active, pace):
            m = math.floor(pos[q] + 1e-9) + 1
            while m < pos[q] + x[q, t] - 1e-9:
                cuts.add((m - pos[q]) / rho)
                m += 1
        edges = sorted(cuts)
        for u0, u1 in zip(edges, edges[1:]):
            if u1 - u0 <= 1e-12 * delta:
                continue
            mid = 0.5 * (u0 + u1)
            rates = []
            for q, rho in zip(active, pace):
                job = lp.jobs[q]
                i = job.first + min(job.n - 1, math.floor(pos[q] + rho * mid + 1e-12))
                g = job.stage[0]
                rates += [(g, job.j, i, f, size * rho) for f, (_, _, size) in enumerate(flows[q])]
            segments.append(Segment(t0 + u0, t0 + u1, tuple(sorted(rates))))
        pos[active] += x[active, t]
    return Schedule(_starts(instance, lp, done), tuple(segments), lp.order, "slot_lp")


def _starts(instance: Instance, lp: SlotLP, done: dict):
    """``t*`` of each job's stages: the stage's release slot start (after the predecessor's last
    slot, not before the arrival), the same for all its jobs (barrier (8))."""
    def release(g: int, k: int) -> float:
        if k:
            return (done[g, k - 1] + 1) * lp.delta
        return arrival_slot(instance, g, lp.delta) * lp.delta
    return tuple(tuple(tuple(release(g, k) for k in range(job.stages)) for job in c.jobs)
                 for g, c in enumerate(instance.cojobs))


def applies(instance: Instance) -> bool:
    """False for instances with a compute gap (module docstring)."""
    return not any(job.compute > 0 for c in instance.cojobs for job in c.jobs)


def lex_schedule(instance: Instance, order, delta: float, deadline: Deadline) -> Schedule | None:
    """The slot LP schedule of ``order`` with slot ``delta`` (module docstring); None for an
    instance with compute gaps, over :data:`MAX_CELLS`, or when the deadline stopped it."""
    if not applies(instance) or not fits(instance, delta):
        return None
    lp = SlotLP(instance, order, delta, deadline)
    done = lp.lex()
    return None if done is None else to_schedule(instance, lp, done, lp.progress())


@dataclass
class _Best:
    """The best verified slot schedule so far and the slot LP state it came from."""

    value: float
    schedule: Schedule
    lp: SlotLP
    done: dict
    x: np.ndarray


def polish(instance: Instance, orders, *, deadline: Deadline):
    """The best verified slot schedule reachable from ``orders`` (stage orders that keep the
    chains) within ``deadline``: lex passes (:func:`lex_passes`, :data:`LEX_SHARE` of the time),
    then from the best of them :func:`window_milp` rounds, a round again while one gains at least
    :data:`GAIN`, else the slots halved (:func:`refined`, at most :data:`LEVELS` times) and the
    rounds go on there. Returns ``(schedule, value, info)`` or None (no pass finished, or compute
    gaps)."""

    if not applies(instance):
        return None
    left = deadline.remaining()
    info: dict[str, Any] = {"slot_passes": 0, "slot_rounds": 0, "slot_levels": 0}
    best = lex_passes(instance, orders, deadline if left is None
                      else deadline.within(LEX_SHARE * left), info)
    if best is None:
        return None
    lp, done, x = best.lp, best.done, best.x
    while not deadline.expired():
        left = deadline.remaining()
        got = window_milp(lp, done, x, deadline if left is None
                          else deadline.within(max(MIN_ROUND, left / 2)))
        info["slot_rounds"] += 1
        gain = 0.0
        if got is not None and got[0] != done:
            done, x = got
            schedule = to_schedule(instance, lp, done, x)
            value = _checked(instance, schedule)
            gain = 0.0 if value is None else 1.0 - value / best.value
            if value is not None and value < best.value:
                best = _Best(value, schedule, lp, done, x)
        if gain >= GAIN:
            continue
        finer = refined(lp, done, x) if info["slot_levels"] < LEVELS else None
        if finer is None:
            break
        lp, done, x = finer
        info["slot_levels"] += 1
    info.update(slot_value=best.value, slot_delta=best.lp.delta)
    return best.schedule, best.value, info


#: Share of :func:`polish`'s time for the lex passes; the rest goes to window MILP rounds.
LEX_SHARE = 0.15

#: Least time a window MILP round gets (it keeps its MIP start, so a short round loses nothing).
MIN_ROUND = 20.0

#: Relative gain of a window round below which :func:`polish` halves the slots instead.
GAIN = 1e-3

#: Times :func:`polish` halves the slots (paper seed 0 from 120 slots: 40,036 at ~90 time units,
#: 39,812 at ~45, 39,565 at ~22, with 150-s rounds).
LEVELS = 3


def _checked(instance: Instance, schedule: Schedule) -> float | None:
    """``verify``'s value, or None when it rejects the schedule (seen once, on a hypothesis
    instance with flows of 0.5 and 100 bytes: an iteration labelled 1e-3 s before its release;
    such a pass is dropped, never repaired)."""
    from optsched.errors import InfeasibleSchedule
    from optsched.problems.cojob_network import verify

    try:
        return verify(instance, schedule)
    except InfeasibleSchedule:
        return None


def lex_passes(instance: Instance, orders, deadline: Deadline, info: dict) -> _Best | None:
    """The best verified lex schedule over ``orders`` and the slot lengths of
    :data:`SLOT_COUNTS`, each order also re-sorted by the deadlines its pass got (:data:`RESORTS`
    times: a stage that met an earlier deadline than one above it moves up); passes run
    round-robin over the orders until ``deadline`` or the list ends."""

    queue = [(o, 0) for o in dict.fromkeys(tuple(map(tuple, o)) for o in orders)]
    seen = {o for o, _ in queue}
    best = None
    for count in SLOT_COUNTS:
        for order, depth in list(queue):
            if deadline.expired():
                return best
            if not fits(instance, slot_delta(instance, count)):
                continue
            lp = SlotLP(instance, order, slot_delta(instance, count), deadline)
            done = lp.lex()
            if done is None:
                continue
            x = lp.progress()
            schedule = to_schedule(instance, lp, done, x)
            value = _checked(instance, schedule)
            info["slot_passes"] += 1
            if value is not None and (best is None or value < best.value):
                best = _Best(value, schedule, lp, done, x)
            again = tuple(sorted(order, key=lambda a: (done[a], order.index(a))))
            if depth < RESORTS and again not in seen:
                seen.add(again)
                queue.append((again, depth + 1))
    return best


def slot_delta(instance: Instance, count: int) -> float:
    """The slot length that cuts the last arrival plus the stages' summed bottleneck loads into
    ``count`` slots (so :func:`horizon` is at most ``count`` plus twice the stages plus 2)."""
    span = max(c.arrival for c in instance.cojobs) + sum(
        float(instance.loads[a].max()) for a in instance.stages)
    return span / count


#: Most (job, slot) columns a slot LP may have: paper seed 0 has 60 jobs and ~140 slots at 120
#: (8,400), ~1,000 after three halvings; the simulation scenario (600 jobs) stops earlier.
MAX_CELLS = 250_000


def fits(instance: Instance, delta: float) -> bool:
    """Whether the slot LP of ``instance`` with slot ``delta`` stays within :data:`MAX_CELLS`."""
    jobs = sum(len(c.alive(k)) for c in instance.cojobs for k in range(c.n_stages))
    return jobs * horizon(instance, delta) <= MAX_CELLS


# --------------------------------------------------------------------------- window MILP

#: Slots each stage's deadline may move either way in one :func:`window_milp` (paper seed 0,
#: 120 slots, from the lex schedule of Model F's order: 40,754 -> 40,036 in one round of ~50 s;
#: a width of 6 converged to the same schedule).
WIDTH = 3


class _Triplets:
    """Sparse rows built as (row, column, value) triplets, handed over column-wise."""

    def __init__(self) -> None:
        self.lo: list[float] = []
        self.hi: list[float] = []
        self.r: list[int] = []
        self.c: list[int] = []
        self.v: list[float] = []

    def row(self, lo: float, hi: float, cols, vals) -> None:
        n = len(self.lo)
        self.lo.append(lo)
        self.hi.append(hi)
        self.r += [n] * len(cols)
        self.c += list(cols)
        self.v += list(vals)

    def columns(self, first: int, stop: int):
        """CSC ``(starts, rows, values)`` of columns ``first..stop-1``."""
        c, r, v = np.asarray(self.c), np.asarray(self.r, dtype=np.int32), np.asarray(self.v)
        keep = (c >= first) & (c < stop)
        c, r, v = c[keep], r[keep], v[keep]
        order = np.lexsort((r, c))
        starts = np.searchsorted(c[order], np.arange(first, stop)).astype(np.int32)
        return starts, r[order], v[order]


def window_milp(lp: SlotLP, done: dict, x: np.ndarray, deadline: Deadline,
                width: int = WIDTH):
    """Re-optimise every stage's deadline slot within ``width`` slots of ``done`` at once.

    The time-indexed UB variant of spec Model C (Sec. 3.5.2) over the slot LP's jobs: binary
    ``z_{a,t}`` (stage a done by the end of slot t) for t in its window, monotone, 1 at the
    window's end; ``sum_{u <= t} x_{q,u} >= n_q z_{a,t}`` for each job q of a; a successor's
    job may progress in slot t only if ``z_{pred,t-1}`` (``x_{q,t} <= n_q z_{pred,t-1}``, the
    barrier (8)); capacities and iteration counts as in :class:`SlotLP`. Minimises the sum of
    the deadline-slot ends; ``(done, x)`` is its MIP start, so the answer is never worse.
    Returns the new ``(done, x)``, or None when HiGHS ends without a solution."""
    from optsched.solvers.highs import ArrayModel

    inst, H, delta, jobs = lp.inst, lp.H, lp.delta, lp.jobs
    J = len(jobs)
    win = {a: range(max(0, c - width), min(H - 1, c + width) + 1) for a, c in done.items()}
    zcol, n_z = {}, 0
    for a in lp.order:
        for t in win[a]:
            zcol[a, t] = J * H + n_z
            n_z += 1
    rows, x_hi = _Triplets(), np.zeros(J * H)
    for q, job in enumerate(jobs):
        _job_rows(rows, x_hi, q, job, lp, win, zcol)
    for p in range(inst.n_ports):
        for t in range(H):
            cols = [q * H + t for q, job in enumerate(jobs) if p in job.ports and x_hi[q * H + t]]
            if cols:
                rows.row(-np.inf, delta, cols, [jobs[c // H].ports[p] for c in cols])
    for a in lp.order:
        for t0, t1 in zip(win[a], list(win[a])[1:]):
            rows.row(0.0, np.inf, [zcol[a, t1], zcol[a, t0]], [1.0, -1.0])
    model = ArrayModel(n_rows=len(rows.lo), row_lo=rows.lo, row_hi=rows.hi)
    model.add_columns(np.tile(np.arange(H) * 1e-6, J), np.zeros(J * H), x_hi,
                      *rows.columns(0, J * H))
    z_lo = np.zeros(n_z)
    for a in lp.order:
        z_lo[zcol[a, win[a][-1]] - J * H] = 1.0
    model.add_columns(np.full(n_z, -delta), z_lo, np.ones(n_z), *rows.columns(J * H, J * H + n_z),
                      integer=True)
    start = np.r_[x.reshape(-1), np.zeros(n_z)]
    for (a, t), col in zcol.items():
        start[col] = float(t >= done[a])
    model.set_start(start)
    rep = model.solve(deadline=deadline)
    if rep.x is None:
        return None
    z = rep.x[J * H:]
    new = {a: min(t for t in win[a] if z[zcol[a, t] - J * H] > 0.5) for a in lp.order}
    return new, cleaned(rep.x[:J * H].reshape(J, H), np.array([job.n for job in jobs], float))


def _job_rows(rows: _Triplets, x_hi: np.ndarray, q: int, job: _Job, lp: SlotLP, win: dict,
              zcol: dict) -> None:
    """Job q's rows of :func:`window_milp` (its iterations, completion, release) and the slots
    its columns may use (``x_hi``)."""
    H, (g, k) = lp.H, job.stage
    a = job.stage
    first = win[g, k - 1][0] + 1 if k else arrival_slot(lp.inst, g, lp.delta)
    last = win[a][-1]
    x_hi[q * H + first:q * H + last + 1] = np.inf
    rows.row(job.n, job.n, range(q * H, q * H + H), [1.0] * H)
    for t in win[a]:
        if t >= first:
            cols = [q * H + u for u in range(first, t + 1)]
            rows.row(0.0, np.inf, cols + [zcol[a, t]], [1.0] * len(cols) + [-float(job.n)])
        else:
            rows.row(0.0, 0.0, [zcol[a, t]], [1.0])     # cannot be done before it may start
    if k:
        for t in range(first, last + 1):
            before = zcol.get(((g, k - 1), t - 1))
            if before is not None:                         # after the window: z = 1, free
                rows.row(-np.inf, 0.0, [q * H + t, before], [1.0, -float(job.n)])


def refined(lp: SlotLP, done: dict, x: np.ndarray):
    """The same schedule on slots half as long: ``(lp, done, x)`` with every slot split in two
    (half the progress in each, so every capacity still holds), or None when it would not fit
    the finer horizon. :func:`window_milp` then moves deadlines by half a slot."""
    if not fits(lp.inst, lp.delta / 2):
        return None
    fine = SlotLP(lp.inst, lp.order, lp.delta / 2, lp.deadline)
    m = min(lp.H, fine.H // 2)
    if 2 * max(done.values()) + 1 >= fine.H or x[:, m:].any():
        return None
    y = np.zeros((len(lp.jobs), fine.H))
    y[:, 0:2 * m:2] = x[:, :m] / 2
    y[:, 1:2 * m:2] = x[:, :m] / 2
    return fine, {a: 2 * c + 1 for a, c in done.items()}, y
