"""Exact solve of (2), lower bounds, and the batch bound of (3)/(4)/(5) by column generation
(She et al., paper 001).

Pyomo, HiGHS (:mod:`optsched.solvers.highs`) and the models (:mod:`optsched.models.edge_cloud`)
are imported inside the functions that build or solve a model, so importing the family is cheap.
Every function takes the call's :class:`~optsched.deadline.Deadline`: the heuristics behind the
exact model's horizon are charged to it, a model that cannot be built and handed to HiGHS in the
time left is not built (:data:`SECONDS_PER_COLUMN`), and the subgradient and column-generation
loops stop with a valid bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from optsched.deadline import NEVER, Deadline
from optsched.problems.edge_cloud import (
    Instance,
    Run,
    Schedule,
    deadlines,
    earliest_start,
    min_flow,
    verify,
)
from optsched.result import Outcome, SolveStatus
from optsched.solvers.edge_cloud import algorithm as alg
from optsched.solvers.edge_cloud.baselines import drf, fifo, greedy_ect
from optsched.solvers.online import BatchResult, Round, doubling_rounds, next_window
from optsched.tolerance import at_most, slack

if TYPE_CHECKING:
    from optsched.models.edge_cloud import Column
    from optsched.solvers.highs import Refusal


#: Columns (job x placement x start) above which the configuration model is not enumerated (the
#: estimate :func:`column_estimate` is checked first; paper scale is far above it).
MAX_COLUMNS = 400_000
#: Placements of one job (before dominance) above which the model is not enumerated.
MAX_PLACEMENTS = 5_000
#: Seconds per kept column to build :func:`~optsched.models.edge_cloud.build_pattern` with Pyomo
#: and hand it to HiGHS (measured on the project's 2-core machine at load 5: 6.5e-5 s build +
#: 9e-5 s hand-off wall per column, 7e-5 s CPU; x2.5 for heavier load); a model whose estimate
#: exceeds the time left is not built.
SECONDS_PER_COLUMN = 4e-4
#: Subgradient iterations of :func:`lagrangian` (it stops earlier once the bound proves the
#: incumbent optimal, the step has vanished or the deadline has passed).
LAGRANGE_ITERATIONS = 400
#: Every this many subgradient steps the Lagrangian heuristic also tries pair moves
#: (:func:`_improve`; they cost ~10x single moves, and found the optimum of the 24-job ``small``
#: seed 2 where single moves stopped 2 above it).
PAIR_EVERY = 100


def incumbent(instance: Instance, deadline: Deadline) -> tuple[Schedule, float]:
    """The best of a one-job-at-a-time schedule, greedy ECT, FIFO, DRF and A_online (rule "model")
    by verified total flow: the UB for deadlines and the exact method's MIP start.
    :func:`serial_schedule` always exists (O(J S)), so every valid instance gets an upper bound;
    the others run under ``deadline`` (charged to the caller) and are left out when they stop early
    or cannot schedule the instance (greedy ECT, FIFO and DRF need a server with both slot types for
    every job; A_online may leave a job unscheduled after its round cap)."""
    candidates = [serial_schedule(instance)]
    for out in (greedy_ect(instance, deadline=deadline), fifo(instance, deadline=deadline),
                drf(instance, deadline=deadline), alg.a_online(instance, alg.MODEL, deadline=deadline)):
        if out.schedule is not None:
            candidates.append(out.schedule)
    best: tuple[Schedule, float] | None = None
    for sched in candidates:
        value = verify(instance, sched)
        if best is None or value < best[1]:
            best = (sched, value)
    assert best is not None
    return best


def serial_schedule(instance: Instance) -> Schedule:
    """A trivially feasible schedule: jobs in arrival order, one at a time, each with one worker and
    its PS, run for the minimal length, on the placement that ends first among: co-located on a
    server with both slot types, or worker and PS each on its earliest-ready server. Never two jobs
    in one slot, so (2g)/(2h) hold whenever a capacity is >= 1. O(J S)."""
    runs: dict[int, Run] = {}
    free = 1  # first slot no job occupies
    S = range(instance.n_servers)
    for j in sorted(range(len(instance.jobs)), key=lambda j: (instance.jobs[j].arrival, j)):
        job = instance.jobs[j]
        ws = min((s for s in S if instance.workers[s][job.worker_type]), key=lambda s: job.delay[s])
        ps = min((s for s in S if instance.ps[s][job.ps_type]), key=lambda s: job.delay[s])
        start = max(free, job.arrival + max(job.delay[ws], job.delay[ps]))
        best = Run(start, start + job.required(int(ws == ps)) - 1, ps, ((ws, 1),))
        for s in S:
            if instance.workers[s][job.worker_type] and instance.ps[s][job.ps_type]:
                start = max(free, job.arrival + job.delay[s])
                end = start + job.required(1) - 1
                if end < best.end:
                    best = Run(start, end, s, ((s, 1),))
        runs[j] = best
        free = best.end + 1
    return Schedule.single([runs[j] for j in range(len(instance.jobs))])


def trivial_bound(instance: Instance) -> float:
    """``sum_j LB_j`` with ``LB_j`` = :func:`single_job_flow` (each job alone on empty servers)."""
    return float(sum(single_job_flow(instance, j) for j in range(len(instance.jobs))))


def single_job_flow(instance: Instance, j: int) -> int:
    """The least flow ``c_j - a_j`` of job ``j`` alone on empty servers (exact for one job, so
    ``>=`` :func:`optsched.problems.edge_cloud.min_flow`, which lets every worker start at the
    earliest slot). A run starting at ``a_j + d`` may use, by (2i), only the servers with
    ``Delta_js <= d``, its PS among them; with all their type-``u_j`` workers (at most ``D_j``) at
    the distributed rate, or co-located on one of them at rate ``p^1`` ((2e), ``R^xi_j``), it lasts
    ``ceil(R / N)`` slots; more workers never lengthen a run, so the minimum over ``d`` in the
    job's delays is exact. Servers sorted by delay, prefix sums: O(S log S) per job."""
    job = instance.jobs[j]
    order = np.argsort(np.asarray(job.delay), kind="stable")
    delay = np.asarray(job.delay)[order]
    w = instance.W[order, job.worker_type]
    p = instance.P[order, job.ps_type]
    last = np.r_[delay[1:] != delay[:-1], True]          # the last server of each delay value
    n = np.minimum(job.chunks, np.cumsum(w))
    has_ps = np.cumsum(p > 0) > 0
    ok = (n > 0) & has_ps & last
    length = -(-job.required(0) // np.maximum(n, 1))
    co = np.where((p > 0) & (w > 0), -(-job.required(1) // np.maximum(np.minimum(job.chunks, w), 1)),
                  np.iinfo(np.int64).max)
    length = np.minimum(length, np.minimum.accumulate(co))
    exact = int((delay + length - 1)[ok].min())
    return max(min_flow(instance, j), exact)


def column_estimate(instance: Instance, deadline: list[int], cap: float = MAX_COLUMNS) -> float:
    """An upper bound on ``len(run_columns(instance, deadline))`` (placements before dominance x
    admissible starts), computed without enumerating; stops once it exceeds ``cap``. O(J S)."""
    from optsched.models.edge_cloud import placement_count

    total = 0.0
    for j in range(len(instance.jobs)):
        starts = max(0, deadline[j] - earliest_start(instance, j) + 1)
        count = placement_count(instance, j, cap)
        if count > MAX_PLACEMENTS:   # the dominance test is quadratic in a job's placements
            return math.inf
        total += starts * count
        if total > cap:
            break
    return total


def _placements_exceed(instance: Instance, cap: float) -> bool:
    """True when the jobs' placements alone (one start each) number more than ``cap``."""
    from optsched.models.edge_cloud import placement_count

    total = 0.0
    for j in range(len(instance.jobs)):
        total += placement_count(instance, j, cap)
        if total > cap:
            return True
    return False


def _too_big(size: float, per_unit: float, deadline: Deadline, what: str = "columns",
             terms: float | None = None) -> Refusal | None:
    """Why a model of ``size`` columns (``terms`` non-zeros; ``size`` when not given) is not built
    (None: build it): above :data:`~optsched.solvers.highs.MAX_MODEL_TERMS` non-zeros
    (:func:`optsched.solvers.highs.too_large`) no model is built, with or without a time limit;
    and not when it cannot be built in the time left."""
    from optsched.solvers.highs import refuse

    return refuse(size if terms is None else terms, f"the model of ~{size:.0f} {what}",
                  _late(size, per_unit, deadline))


def _late(size: float, per_unit: float, deadline: Deadline, what: str = "columns") -> str | None:
    """Why a model of ``size`` columns cannot be built in the time left (None: it can)."""
    left = deadline.remaining()
    need = size * per_unit
    if left is None or need <= left:
        return None
    return f"model of ~{size:.0f} {what} needs ~{need:.3g} s to build and hand to HiGHS, {left:.3g} s left"


def _terms(columns: list["Column"]) -> int:
    """Non-zeros of :func:`~optsched.models.edge_cloud.build_pattern` over ``columns``, at most:
    per column its assignment row and, per slot of its run, one worker row per server it uses
    and its PS row."""
    return sum(1 + (col.run.end - col.run.start + 1) * (len(col.run.workers) + 1) for col in columns)


def _skip(info: dict[str, Any], refusal: Refusal) -> None:
    """Record why no model is built (``info["skipped"]``); a refusal by a size cap alone is also
    ``info["size_cap"]``, so exact says ``feasible``, not ``time_limit``."""
    info["skipped"] = str(refusal)
    if refusal.late is None:
        info["size_cap"] = info["skipped"]


@dataclass(frozen=True)
class Lagrangian:
    """What :func:`lagrangian` found: a lower bound on (2), each column's reduced cost at the
    multipliers that gave it, and the best schedule its heuristic built (None when none beat the
    upper bound it was given) with that schedule's total flow."""

    bound: float
    reduced: np.ndarray
    schedule: Schedule | None
    value: float


def lagrangian(instance: Instance, columns: list["Column"], upper_bound: float, *,
               deadline: Deadline, iterations: int = LAGRANGE_ITERATIONS) -> Lagrangian:
    """Lagrangian relaxation of the capacities (2g)/(2h) of the configuration model
    (:func:`~optsched.models.edge_cloud.build_pattern`), by subgradient ascent (Polyak steps towards
    the best known total flow), with a Lagrangian heuristic.

    For multipliers ``lam >= 0`` on the capacity rows, ``L(lam) = sum_j min_{k of j} (c_k + lam
    A_k) - lam b`` is a lower bound on (2), and every schedule that runs column ``k`` has total flow
    ``>= L(lam) + rc_k`` with ``rc_k = c_k + lam A_k - min_{k' of j} (c_k' + lam A_k') >= 0``: a
    column with ``L + rc_k > UB - 1`` is in no schedule better than one of flow ``UB`` (flows are
    integers; reduced-cost fixing,
    valid for any ``lam``, so for an early stop too). Every tenth step, jobs are placed one at a
    time (in the order of the start, then of the flow time, of their Lagrangian columns) on the column
    of least ``c_k + lam A_k`` that fits the capacity left, improved by single-job moves (every
    :data:`PAIR_EVERY` steps also by pair moves, :func:`_improve`); the best of these schedules is
    finally improved by pair moves and checked by :func:`verify`. Stops when ``UB - L < 1``
    (the incumbent is optimal), after ``iterations`` steps, or at ``deadline``."""
    inc = _incidence(instance, columns)
    lam = np.zeros(len(inc.b))
    best, best_lam, step, stall = -math.inf, lam, 2.0, 0
    found, ub = None, float(upper_bound)
    for it in range(iterations):
        red = inc.cost + inc.At @ lam
        pick = np.array([s + int(np.argmin(red[s:e])) for s, e in zip(inc.starts, inc.ends)])
        value = float(red[pick].sum() - lam @ inc.b)
        if value > best + 1e-9:
            best, best_lam, stall = value, lam, 0
        else:
            stall += 1
            if stall >= 20:
                step, stall = step / 2, 0
        if it % 10 == 0:
            for key in (inc.first[pick], inc.cost[pick]):
                picks = _greedy(inc, red, np.argsort(key, kind="stable"), pairs=it % PAIR_EVERY == 0)
                if picks is not None and inc.cost[list(picks.values())].sum() < ub:
                    found, ub = picks, float(inc.cost[list(picks.values())].sum())
        if ub - best < 1 - slack(ub) or step < 1e-4 or deadline.expired():
            break
        x = np.zeros(len(inc.cost))
        x[pick] = 1.0
        grad = inc.A @ x - inc.b
        grad[(lam <= 0) & (grad < 0)] = 0.0
        norm = float(grad @ grad)
        if norm == 0.0:     # the relaxed optimum is feasible: L = its flow is optimal
            break
        lam = np.maximum(0.0, lam + step * (ub - value) / norm * grad)
    schedule = None
    if found is not None:
        _improve(inc, found, _left(inc, found), pairs=True, deadline=deadline)
        schedule = Schedule.single([columns[found[j]].run for j in range(len(instance.jobs))])
        ub = verify(instance, schedule)
    red = inc.cost + inc.At @ best_lam
    least = np.array([red[s:e].min() for s, e in zip(inc.starts, inc.ends)])
    return Lagrangian(best, red - np.repeat(least, inc.ends - inc.starts), schedule, ub)


@dataclass(frozen=True)
class _Incidence:
    """The configuration model as arrays: capacity rows x columns ``A`` (also as ``At``, ``Ac``),
    capacities ``b``, column costs (flow times) ``cost`` and start slots ``first``, and each job's
    column range ``starts[j]:ends[j]``."""

    A: Any
    At: Any
    Ac: Any
    b: np.ndarray
    cost: np.ndarray
    first: np.ndarray
    starts: np.ndarray
    ends: np.ndarray


def _incidence(instance: Instance, columns: list["Column"]) -> _Incidence:
    from scipy import sparse

    from optsched.models.edge_cloud import capacity_cells

    wc, pc = capacity_cells(instance, columns)
    rows, cols, vals, caps = [], [], [], []
    for r, (cell, entries) in enumerate(wc.items()):
        caps.append(instance.workers[cell[0]][cell[1]])
        for k, n in entries:
            rows.append(r)
            cols.append(k)
            vals.append(n)
    for r, (cell, entries) in enumerate(pc.items(), start=len(wc)):
        caps.append(instance.ps[cell[0]][cell[1]])
        for k in entries:
            rows.append(r)
            cols.append(k)
            vals.append(1)
    A = sparse.csr_matrix((vals, (rows, cols)), shape=(len(caps), len(columns)), dtype=float)
    jobs = np.array([col.job for col in columns])
    starts = np.searchsorted(jobs, np.arange(len(instance.jobs)))
    ends = np.r_[starts[1:], len(columns)]
    cost = np.array([col.run.end - instance.jobs[col.job].arrival for col in columns], dtype=float)
    first = np.array([col.run.start for col in columns], dtype=float)
    return _Incidence(A, A.T.tocsr(), A.tocsc(), np.array(caps, dtype=float), cost, first, starts, ends)


def _greedy(inc: _Incidence, price: np.ndarray, order: np.ndarray,
            pairs: bool = False) -> dict[int, int] | None:
    """Jobs in ``order``, each on its cheapest (by ``price``) column that fits the capacity left,
    then :func:`_improve` by single-job moves: ``{job: column}``, or None when some job has no
    column that fits."""
    left, picks = inc.b.copy(), {}
    for j in order:
        fits = _fitting(inc, j, left)
        if not len(fits):
            return None
        picks[j] = fits[np.argmin(price[fits])]
        _use(inc, picks[j], left, -1.0)
    # no limit of its own (as before): :func:`lagrangian` checks its deadline after every step
    _improve(inc, picks, left, pairs=pairs, deadline=NEVER)
    return picks


def _left(inc: _Incidence, picks: dict[int, int]) -> np.ndarray:
    """The capacity the columns ``picks`` leave."""
    left = inc.b.copy()
    for k in picks.values():
        _use(inc, k, left, -1.0)
    return left


def _improve(inc: _Incidence, picks: dict[int, int], left: np.ndarray, *, deadline: Deadline,
             pairs: bool = False) -> None:
    """Local search: take one job (with ``pairs``, then a pair of jobs) out and put it back on its
    least-flow column that fits (a pair in either order); keep the move when the total flow drops;
    repeat until no move improves or ``deadline`` passes."""
    jobs = sorted(picks)
    better = True
    while better and not deadline.expired():
        better = any(_move(inc, picks, left, (j,)) for j in jobs)
        if pairs and not better:
            better = any(_move(inc, picks, left, pair) for pair in _blocking_pairs(inc, picks))


def _blocking_pairs(inc: _Incidence, picks: dict[int, int]):
    """Pairs ``(j, i)`` where job ``j`` has a column of less flow than its own that shares a
    capacity row with ``i``'s column: the only pair moves (``j`` first) that can lower the flow."""
    Ac = inc.Ac
    for j, k in picks.items():
        s, e = inc.starts[j], inc.ends[j]
        cheaper = s + np.flatnonzero(inc.cost[s:e] < inc.cost[k])
        if not len(cheaper):
            continue
        blocked = np.zeros(len(inc.b), dtype=bool)
        blocked[Ac[:, cheaper].indices] = True
        for i, q in picks.items():
            if i != j and blocked[Ac.indices[Ac.indptr[q]:Ac.indptr[q + 1]]].any():
                yield j, i


def _move(inc: _Incidence, picks: dict[int, int], left: np.ndarray, jobs: tuple[int, ...]) -> bool:
    """Re-place ``jobs`` in this order, each on its least-flow column that fits; keep it (True)
    when the flow drops, else restore the previous columns."""
    old = [picks[j] for j in jobs]
    for k in old:
        _use(inc, k, left, 1.0)
    new = []
    for j in jobs:
        fits = _fitting(inc, j, left)
        if not len(fits):
            break
        new.append(fits[np.argmin(inc.cost[fits])])
        _use(inc, new[-1], left, -1.0)
    if len(new) == len(jobs) and inc.cost[new].sum() < inc.cost[old].sum():
        picks.update(zip(jobs, new))
        return True
    for k in new:
        _use(inc, k, left, 1.0)
    for k in old:
        _use(inc, k, left, -1.0)
    return False


def _fitting(inc: _Incidence, j: int, left: np.ndarray) -> np.ndarray:
    """Indices of job ``j``'s columns whose every capacity row fits in ``left``."""
    Ac, s, e = inc.Ac, inc.starts[j], inc.ends[j]
    lo, hi = Ac.indptr[s], Ac.indptr[e]
    over = (Ac.data[lo:hi] > left[Ac.indices[lo:hi]]).astype(np.int64)  # integers
    return s + np.flatnonzero(np.add.reduceat(over, Ac.indptr[s:e] - lo) == 0)


def _use(inc: _Incidence, k: int, left: np.ndarray, sign: float) -> None:
    """Give back (``sign`` 1) or take (-1) column ``k``'s capacity in ``left``."""
    lo, hi = inc.Ac.indptr[k], inc.Ac.indptr[k + 1]
    left[inc.Ac.indices[lo:hi]] += sign * inc.Ac.data[lo:hi]


def reduced_columns(instance: Instance, deadline: Deadline, info: dict[str, Any]):
    """The heuristic incumbent, the Lagrangian and the columns kept by reduced-cost fixing, or the
    reason the configuration model is not built (``info`` records the sizes). Returns ``(schedule,
    UB, lower bound, kept columns or None)``."""
    from optsched.models.edge_cloud import run_columns, start_columns
    from optsched.solvers.highs import Refusal

    sched, ub = incumbent(instance, deadline)
    bound = trivial_bound(instance)
    info.update(upper_bound_heuristic=ub, incumbent="heuristic", trivial=bound)
    dl = deadlines(instance, ub)
    info["horizon"] = max(dl)
    estimate = column_estimate(instance, dl)
    if estimate > MAX_COLUMNS:
        _skip(info, Refusal(f"size cap: more than MAX_COLUMNS = {MAX_COLUMNS} columns (job x "
                            f"placement x start) or MAX_PLACEMENTS = {MAX_PLACEMENTS} placements "
                            f"of one job", _late(estimate, SECONDS_PER_COLUMN, deadline)))
        return sched, ub, bound, None
    columns = run_columns(instance, dl)
    lag = lagrangian(instance, columns, ub, deadline=deadline)
    if lag.schedule is not None and lag.value < ub:
        sched, ub = lag.schedule, lag.value
        info["incumbent"] = "lagrangian"
    bound = max(bound, lag.bound)
    # flows are integers: a better schedule has flow <= UB - 1, so its columns have L + rc <= UB - 1
    forced = set(start_columns(columns, sched).values())
    kept = [col for k, col in enumerate(columns)
            if k in forced or at_most(lag.bound + lag.reduced[k], ub - 1)]
    info.update(n_columns=len(columns), n_kept=len(kept), lagrangian=lag.bound)
    skipped = (Refusal(late="deadline passed") if deadline.expired() else
               _too_big(len(kept), SECONDS_PER_COLUMN, deadline, terms=_terms(kept)))
    if skipped is not None:
        _skip(info, skipped)
        return sched, ub, bound, None
    return sched, ub, bound, kept


def lower_bound(instance: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """The largest of :func:`trivial_bound`, the Lagrangian bound and the LP relaxation of the
    configuration model over the columns that survive reduced-cost fixing (a valid bound on (2):
    the kept columns hold the incumbent and every schedule better than it, so some optimum).

    Status ``optimal`` when that LP was solved to its optimum; ``time_limit`` with the best bound
    found so far (still valid) when it was not: skipped above :data:`MAX_COLUMNS` columns (paper
    scale), not built in the time left, or stopped by ``deadline``; ``info["lp"]`` holds the LP
    value or the reason. The heuristics and the Lagrangian are charged to ``deadline``.
    """
    info: dict[str, Any] = {}
    if _placements_exceed(instance, MAX_COLUMNS):   # paper scale: no heuristics run for nothing
        bound = trivial_bound(instance)
        info.update(trivial=bound,
                    lp=f"skipped: size cap: more than MAX_COLUMNS = {MAX_COLUMNS} placements")
        return Outcome(None, SolveStatus.TIME_LIMIT, bound, info)
    _, _, bound, kept = reduced_columns(instance, deadline, info)
    if kept is None:
        info["lp"] = f"skipped: {info['skipped']}"
        return Outcome(None, SolveStatus.TIME_LIMIT, bound, info)
    from optsched.models.edge_cloud import build_pattern
    from optsched.solvers.highs import solve_model

    rep = solve_model(build_pattern(instance, kept, relax=True), deadline=deadline, seed=seed)
    if rep.status is not SolveStatus.OPTIMAL:
        info["lp"] = f"not solved: {rep.status.value}"
        return Outcome(None, SolveStatus.TIME_LIMIT, bound, info)
    info["lp"] = rep.objective
    return Outcome(None, SolveStatus.OPTIMAL, max(bound, rep.objective), info)


# ------------------------------------------------------------------ batch bound: column generation
def price_column(instance: Instance, j: int, tau: int, lam: np.ndarray, mu: np.ndarray,
                 fixed_start: bool = False) -> tuple[float, Column | None]:
    """Exact pricing for (5a): the in-window schedule of job ``j`` of least cost under the prices
    ``lam`` (rows s*U+u, window slots) and ``mu`` (rows s*V+v). For a fixed start, min over ``D_u``
    of COST_C (exact order) and COST_D* is the exact minimum of (9) (digest §4.6); every start
    ``tau+1..2tau`` is tried unless ``fixed_start``."""
    from optsched.models.edge_cloud import Column

    L = lam.shape[1]
    best: tuple[float, Column | None] = (math.inf, None)
    for off in ([0] if fixed_start else range(L)):
        view = _view(instance, j, lam[:, off:], mu[:, off:], tau + off)
        cost, run = alg.best_placement(instance, j, view, alg.MODEL)
        if run is not None and cost < best[0]:
            best = (cost, Column(j, Run(run.start + tau + off + 1, run.end + tau + off + 1,
                                        run.ps, run.workers)))
    return best


def _view(instance: Instance, j: int, lam: np.ndarray, mu: np.ndarray, start_minus_one: int) -> alg.JobView:
    job = instance.jobs[j]
    S, U, V = instance.n_servers, instance.n_wtypes, instance.n_ptypes
    lw = lam[np.arange(S) * U + job.worker_type]
    lp = mu[np.arange(S) * V + job.ps_type]
    lw = np.where(instance.W[:, [job.worker_type]] > 0, lw, math.inf)
    lp = np.where(instance.P[:, [job.ps_type]] > 0, lp, math.inf)
    wres = np.repeat(instance.W[:, [job.worker_type]], lam.shape[1], axis=1)
    pres = np.repeat(instance.P[:, [job.ps_type]], lam.shape[1], axis=1)
    elig = job.arrival + np.asarray(job.delay) <= start_minus_one + 1
    return alg.JobView(lw, lp, np.cumsum(lw, axis=1), np.cumsum(lp, axis=1), wres, pres, elig)


def batch_lp_bound(instance: Instance, jobs: list[int], tau: int, *, fixed_start: bool = False,
                   max_iter: int = 200, deadline: Deadline) -> tuple[float, list[Column]]:
    """LP optimum of the packing program (4) over *all* in-window columns, by column generation:
    solve the restricted dual (5) (cutting planes on (5a)), price every job exactly with
    :func:`price_column`, add the columns whose utility exceeds eta_j, repeat until none does.
    Returns (value, generated columns). The value bounds OPT(3) from above.

    Stopped early (``deadline`` passed or ``max_iter`` rounds), the value is the least Lagrangian
    bound met so far, ``sum_j max(0, 1 - min cost_j) + sum lambda W + sum mu P`` at the current
    prices (exact pricing makes it dual feasible for (5), so it is still a valid upper bound on
    LP(4)), never an exception."""
    from optsched.models.edge_cloud import build_dual
    from optsched.solvers.highs import solve_model

    S, U, V, L = instance.n_servers, instance.n_wtypes, instance.n_ptypes, tau
    cols: list[Column] = []
    lam, mu, eta = np.zeros((S * U, L)), np.zeros((S * V, L)), dict.fromkeys(jobs, 0.0)
    best = math.inf
    for _ in range(max_iter):
        new, lagrangian = [], _capacity_value(instance, lam, mu, L)
        for j in jobs:
            cost, col = price_column(instance, j, tau, lam, mu, fixed_start)
            lagrangian += max(0.0, 1.0 - cost)
            if col is not None and 1.0 - cost > eta[j] + 1e-7:
                new.append(col)
        best = min(best, lagrangian)
        if not new:
            break
        if deadline.expired():
            return best, cols
        cols.extend(new)
        model = build_dual(instance, cols, jobs)
        solve_model(model, deadline=deadline)
        lam, mu = np.zeros((S * U, L)), np.zeros((S * V, L))
        for (s, u, t), var in model.lam.items():
            lam[s * U + u, t - tau - 1] = var.value or 0.0
        for (s, v, t), var in model.mu.items():
            mu[s * V + v, t - tau - 1] = var.value or 0.0
        eta = {j: model.eta[j].value or 0.0 for j in jobs}
    else:
        return best, cols
    value = sum(eta.values()) + _capacity_value(instance, lam, mu, L)
    return value, cols


def _capacity_value(instance: Instance, lam: np.ndarray, mu: np.ndarray, L: int) -> float:
    """``sum lambda W + sum mu P`` over the window (the capacity part of the dual objective (5))."""
    return float((lam * _caps(instance.W, L)).sum() + (mu * _caps(instance.P, L)).sum())


def round_dual(instance: Instance, jobs: list[int], tau: int,
               params: alg.AOnlineParams = alg.MODEL) -> dict:
    """Weak-duality diagnostic of one A_maxsche round (digest P7, ours): the algorithm's final
    ``(eta, lambda, mu)`` and the dual objective (5) ``D_alg = sum eta + sum lambda W + sum mu P`` over
    the window. When (5a) holds for every column, ``D_alg >= OPT_LP(4)``; with ``rule="model"`` and
    exact costs it does for every fixed-start column (prices only grow during a round)."""
    state: dict = {}
    alg.a_maxsche(instance, jobs, tau, 2 * tau, params, state)
    W, P = _caps(instance.W, tau), _caps(instance.P, tau)
    state["value"] = (sum(state["eta"].values()) + float(np.where(W > 0, state["lam"] * W, 0).sum())
                      + float(np.where(P > 0, state["mu"] * P, 0).sum()))
    return state


def column_cost(instance: Instance, col: Column, tau: int, lam: np.ndarray, mu: np.ndarray) -> float:
    """Price of column ``col`` (the sums in (5a)) under window prices ``lam``, ``mu``."""
    job = instance.jobs[col.job]
    ts = range(col.run.start - tau - 1, col.run.end - tau)
    return (sum(n * lam[s * instance.n_wtypes + job.worker_type, t] for s, n in col.run.workers for t in ts)
            + sum(mu[col.run.ps * instance.n_ptypes + job.ps_type, t] for t in ts))


def a_online_exact_oracle(instance: Instance, *, fixed_start: bool = False,
                          max_rounds: int = alg.MAX_ROUNDS,
                          deadline: Deadline) -> Schedule | None:
    """Algorithm 1's doubling rounds with A_maxsche replaced by an *exact* oracle for the batch
    problem (3) (time-indexed MILP, HiGHS): a reference that separates the loss of the doubling
    framework from that of the greedy pricing (digest P8). Not a method of the paper; tiny/small
    only. Returns None when ``deadline`` passes before every round is solved to optimality.

    Raises
    ------
    RuntimeError
        If a batch MILP is not solved to optimality without the deadline passing, or a job is
        still unscheduled after ``max_rounds`` rounds.
    """
    from optsched.models.edge_cloud import build_batch, extract_batch
    from optsched.solvers.highs import solve_model

    def batch(rnd: Round, jobs: list) -> BatchResult:
        model = build_batch(instance, jobs, rnd.tau, fixed_start=fixed_start)
        if not len(model.J):                  # no job can use any slot of the window
            return BatchResult({}, None)
        rep = solve_model(model, deadline=deadline)
        if rep.status is not SolveStatus.OPTIMAL:
            if deadline.expired():            # doubling_rounds stops after this round
                return BatchResult({}, None, {"stopped": True})
            raise RuntimeError(f"batch MILP of round {rnd.index}: {rep.status.value}")
        runs = extract_batch(instance, model)
        return BatchResult(runs, max((r.end for r in runs.values()), default=None))

    out = doubling_rounds(list(range(len(instance.jobs))), arrival=lambda j: instance.jobs[j].arrival,
                          schedule_batch=batch, window=next_window, max_rounds=max_rounds,
                          deadline=deadline)
    if out.stopped:
        return None
    if out.unscheduled:
        raise RuntimeError(f"exact oracle: job {out.unscheduled[0]} unscheduled")
    return Schedule.single([out.plans[j] for j in range(len(instance.jobs))])


def _caps(cap: np.ndarray, L: int) -> np.ndarray:
    return np.repeat(cap.reshape(-1, 1), L, axis=1)


__all__ = ["LAGRANGE_ITERATIONS", "MAX_COLUMNS", "MAX_PLACEMENTS", "PAIR_EVERY",
           "SECONDS_PER_COLUMN", "Lagrangian", "a_online_exact_oracle", "batch_lp_bound",
           "column_cost", "column_estimate", "incumbent", "lagrangian", "lower_bound",
           "single_job_flow", "price_column", "round_dual", "serial_schedule", "trivial_bound"]


# --------------------------------------------- paper-scale bound: column generation on server pools
#: Column-generation iterations of :func:`colgen_bound` (it stops earlier at the LP optimum or the
#: deadline; a stop is still a valid bound, the best Lagrangian value met).
COLGEN_ITERATIONS = 10_000
#: Columns added per job and pricing round (the cheapest of distinct worker counts).
COLGEN_PER_JOB = 2
#: Not in the paper: the largest pool relaxation :func:`colgen_bound` builds, in jobs x pools x
#: horizon slots (each job's limits take ~17 bytes a cell, the master's row maps 16 per type, pool
#: and slot). The paper preset needs 200 x 2 x ~2,200 from a complete list-schedule start; from
#: the serial schedule (the start when the list schedule is cut short by the deadline) the
#: horizon is ~40 million slots, GBs that no deadline check would stop (issue 22 item 3).
MAX_POOL_CELLS = 5_000_000
#: Wentges smoothing: prices are ``SMOOTH * best + (1 - SMOOTH) * current`` duals (a mispricing
#: round falls back to the current duals).
SMOOTH = 0.5


@dataclass(frozen=True)
class PoolColumn:
    """One column of the pool relaxation: job ``job`` runs slots ``start..end`` with ``n[g]``
    type-``u_j`` workers in server pool ``g`` and its PS in pool ``ps``."""

    job: int
    start: int
    end: int
    n: tuple[int, ...]
    ps: int


class _Pools:
    """Server pools (the edge servers, the cloud servers) and each job's per-start limits.

    Every run of (2) maps to a pool column (workers and PS summed per pool); the column's pool
    usage is the run's usage summed over the pool's servers, so (2g)/(2h) summed per pool hold.
    The column keeps what the run satisfies: ``n_g <= sum W_su`` over the pool's servers ready at
    the start ((2i)), a PS pool with a ready PS server, and ``N (c - h + 1) >= R^xi`` with
    ``xi = 1`` only when some ready server of the pool holds all ``N`` workers and a PS ((2e),
    (2f))."""

    def __init__(self, instance: Instance, deadline: list[int], stop: Deadline):
        S = instance.n_servers
        cloud = set(instance.cloud)
        groups = [[s for s in range(S) if s not in cloud], sorted(cloud)]
        self.groups = [g for g in groups if g]
        self.G = len(self.groups)
        self.T = max(deadline) + 1
        self.deadline = deadline
        self.cap_w = np.array([[instance.W[g, u].sum() for g in self.groups]
                               for u in range(instance.n_wtypes)], dtype=float)
        self.cap_p = np.array([[instance.P[g, v].sum() for g in self.groups]
                               for v in range(instance.n_ptypes)], dtype=float)
        self.limits: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        for j in range(len(instance.jobs)):  # ``stopped``: ``stop`` expired before the end
            if stop.expired():
                break
            self.limits.append(self._limits(instance, j))
        self.stopped = len(self.limits) < len(instance.jobs)
        self.req = [(job.required(0), job.required(1)) for job in instance.jobs]
        self.h0 = [earliest_start(instance, j) for j in range(len(instance.jobs))]

    def _limits(self, instance: Instance, j: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``avail[g, h]`` (workers of pool g ready at h, at most D_j), ``ps_ok[g, h]`` and
        ``co[g, h]`` (the most workers one ready server with a PS holds), for h in 0..T-1."""
        job = instance.jobs[j]
        u, v = job.worker_type, job.ps_type
        hs = np.arange(self.T)
        avail = np.zeros((self.G, self.T), dtype=np.int64)
        ps_ok = np.zeros((self.G, self.T), dtype=bool)
        co = np.zeros((self.G, self.T), dtype=np.int64)
        for g, servers in enumerate(self.groups):
            for s in servers:
                ready = hs >= job.arrival + job.delay[s]
                w, p = int(instance.W[s, u]), int(instance.P[s, v])
                avail[g] += ready * w
                ps_ok[g] |= ready & (p > 0)
                if p > 0:
                    co[g] = np.maximum(co[g], ready * min(w, job.chunks))
        return np.minimum(avail, job.chunks), ps_ok, co


def _prefix(prices: np.ndarray) -> np.ndarray:
    """Prefix sums over slots of prices ``[type, pool, slot]`` (a leading zero column)."""
    return np.concatenate([np.zeros(prices.shape[:2] + (1,)), np.cumsum(prices, axis=2)], axis=2)


def price_pool(instance: Instance, pools: _Pools, j: int, cw: np.ndarray, cp: np.ndarray,
               bound: float = math.inf, keep: int = 1) -> list[tuple[float, PoolColumn]]:
    """Exact pricing of job ``j`` in the pool relaxation: the columns of least ``flow + prices x
    usage`` (the dual constraint (5a) of the paper's packing program, with the flow c_j - a_j as
    the column cost), given the price prefix sums ``cw`` (worker, ``[u, pool, slot]``) and ``cp``
    (PS) of :func:`_prefix`. Every worker count ``N`` and mode (co-located: ``R^1``, one pool;
    distributed: ``R^0``, workers filled into the cheaper pool first, PS in the cheapest ready
    pool) is scanned over all starts at once; starts whose flow alone reaches ``bound`` (or the
    best cost of the first 64 starts) are skipped: prices are >= 0, so they cannot be cheaper.
    Returns up to ``keep`` columns of distinct ``(N, mode)``, cheapest first."""
    first = _price_span(instance, pools, j, cw, cp, bound, keep, span=64)
    if first:
        bound = min(bound, first[0][0] + 1e-9)
    rest = _price_span(instance, pools, j, cw, cp, bound, keep, span=None)
    return sorted(first + rest, key=lambda x: x[0])[:keep]


def _price_span(instance: Instance, pools: _Pools, j: int, cw: np.ndarray, cp: np.ndarray,
                bound: float, keep: int, span: int | None) -> list[tuple[float, PoolColumn]]:
    """:func:`price_pool` over the starts ``h0 .. h0 + span - 1`` (all when ``span`` is None)."""
    job = instance.jobs[j]
    avail, ps_ok, co = pools.limits[j]
    cw, cp = cw[job.worker_type], cp[job.ps_type]
    h0, a = pools.h0[j], job.arrival
    out = []
    for xi in (1, 0):
        N = np.arange(1, job.chunks + 1)
        d = -(-pools.req[j][xi] // N)
        last = pools.deadline[j] - d + 1
        if bound < math.inf:     # flow h + d - 1 - a_j must stay below bound
            last = np.minimum(last, a + math.ceil(bound) - d)
        if span is not None:
            last = np.minimum(last, h0 + span - 1)
        ok = last >= h0
        if not ok.any():
            continue
        N, d, last = N[ok], d[ok], last[ok]
        hs = np.arange(h0, int(last.max()) + 1)
        valid = hs[None, :] <= last[:, None]
        e = np.minimum(hs[None, :] + d[:, None], pools.T)
        ww = cw[:, e] - cw[:, hs][:, None, :]                 # (pool, N, start)
        pp = cp[:, e] - cp[:, hs][:, None, :]
        pp = np.where(ps_ok[:, hs][:, None, :], pp, math.inf)
        if xi:
            cost = np.where(co[:, hs][:, None, :] >= N[None, :, None], N[None, :, None] * ww + pp,
                            math.inf)
            g = np.argmin(cost, axis=0)
            res = np.take_along_axis(cost, g[None], axis=0)[0]
        else:
            n, res = _fill(N, avail[:, hs], ww)
            pg = np.argmin(pp, axis=0)
            res = res + np.take_along_axis(pp, pg[None], axis=0)[0]
        total = np.where(valid, (e - 1 - a) + res, math.inf)
        k = np.argmin(total, axis=1)
        per_n = total[np.arange(len(N)), k]
        for i in np.argsort(per_n, kind="stable")[:keep]:
            if not per_n[i] < bound:
                break
            h = int(hs[k[i]])
            if xi:
                workers = tuple(int(N[i]) if q == g[i, k[i]] else 0 for q in range(pools.G))
                ps = int(g[i, k[i]])
            else:
                workers, ps = tuple(int(x) for x in n[:, i, k[i]]), int(pg[i, k[i]])
            out.append((float(per_n[i]), PoolColumn(j, h, h + int(d[i]) - 1, workers, ps)))
    return out


def _fill(N: np.ndarray, avail: np.ndarray, ww: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Workers per pool (cheapest pool first, at most ``avail[pool, start]``) for every worker count
    ``N`` and start, and their cost (inf where fewer than ``N`` are available)."""
    order = np.argsort(ww, axis=0, kind="stable")
    n = np.zeros(ww.shape, dtype=np.int64)
    left = np.broadcast_to(N[:, None], ww.shape[1:]).copy()
    for rank in range(ww.shape[0]):
        g = order[rank]
        take = np.minimum(left, np.take_along_axis(avail[:, None, :], g[None], axis=0)[0])
        np.put_along_axis(n, g[None], take[None], axis=0)
        left = left - take
    cost = np.where(n > 0, n * ww, 0.0).sum(axis=0)
    return n, np.where(left > 0, math.inf, cost)


class _PoolMaster:
    """The restricted master LP over pool columns (:class:`~optsched.solvers.highs.ArrayModel`):
    one convexity row per job (= 1), and per (type, pool, slot) one worker and one PS capacity row,
    created when a column first uses it."""

    def __init__(self, instance: Instance, pools: _Pools, seed: int):
        from optsched.solvers.highs import ArrayModel

        J = len(instance.jobs)
        self.instance, self.pools = instance, pools
        self.lp = ArrayModel(J, np.ones(J), np.ones(J), seed=seed)
        self.row_w = -np.ones((instance.n_wtypes, pools.G, pools.T), dtype=np.int64)
        self.row_p = -np.ones((instance.n_ptypes, pools.G, pools.T), dtype=np.int64)
        self.columns: list[PoolColumn] = []

    def add(self, cols: list[PoolColumn]) -> None:
        starts: list[int] = []
        rows: list[int] = []
        vals: list[float] = []
        cost: list[float] = []
        for col in cols:
            job = self.instance.jobs[col.job]
            starts.append(len(rows))
            cost.append(col.end - job.arrival)
            rows.append(col.job)
            vals.append(1.0)
            ts = np.arange(col.start, col.end + 1)
            for g, n in enumerate(col.n):
                if n:
                    rows.extend(self._rows(self.row_w, self.pools.cap_w, job.worker_type, g, ts))
                    vals.extend([float(n)] * len(ts))
            rows.extend(self._rows(self.row_p, self.pools.cap_p, job.ps_type, col.ps, ts))
            vals.extend([1.0] * len(ts))
        k = len(cols)
        self.lp.add_columns(cost, np.zeros(k), np.full(k, np.inf), starts, rows, vals)
        self.columns.extend(cols)

    def _rows(self, ids: np.ndarray, cap: np.ndarray, typ: int, g: int, ts: np.ndarray) -> list[int]:
        new = ts[ids[typ, g, ts] < 0]
        if len(new):
            ids[typ, g, new] = self.lp.n_rows + np.arange(len(new))
            self.lp.add_rows(np.full(len(new), -np.inf), np.full(len(new), cap[typ, g]))
        return ids[typ, g, ts].tolist()

    def prices(self, row_dual: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(eta per job, worker prices [u, g, t], PS prices [v, g, t]) from HiGHS' row duals
        (a binding <= row of a minimisation has a dual <= 0: the price is its negative)."""
        J = len(self.instance.jobs)
        return (row_dual[:J].copy(), self._price(self.row_w, row_dual), self._price(self.row_p, row_dual))

    @staticmethod
    def _price(ids: np.ndarray, row_dual: np.ndarray) -> np.ndarray:
        out = np.zeros(ids.shape)
        has = ids >= 0
        out[has] = np.maximum(0.0, -row_dual[ids[has]])
        return out


def pool_columns(instance: Instance, schedule: Schedule, pools: _Pools) -> list[PoolColumn]:
    """The pool columns of a schedule of (2) (workers and PS summed per pool)."""
    where = {s: g for g, servers in enumerate(pools.groups) for s in servers}
    cols = []
    for j, (run,) in enumerate(schedule.runs):
        n = [0] * pools.G
        for s, k in run.workers:
            n[where[s]] += k
        cols.append(PoolColumn(j, run.start, run.end, tuple(n), where[run.ps]))
    return cols


def lagrangian_value(instance: Instance, pools: _Pools, pi_w: np.ndarray, pi_p: np.ndarray,
                     least: list[float]) -> float:
    """``L(pi) = sum_j min_k (c_k + pi A_k) - pi b``: a lower bound on the pool relaxation, so on
    (2), for any prices ``pi >= 0`` when ``least[j]`` is the exact minimum of job j's pricing."""
    cap = ((pi_w * pools.cap_w[:, :, None]).sum() + (pi_p * pools.cap_p[:, :, None]).sum())
    return float(sum(least) - cap)


def colgen_bound(instance: Instance, *, deadline: Deadline, seed: int = 0,
                 start: Schedule | None = None) -> Outcome:
    """Lower bound on (2) by column generation over the pool relaxation (ours; the master is the
    paper's packing program (4) with all jobs, flow-time costs and an equality per job, priced as
    in (5a)/(9) over all starts).

    Relaxation: the servers form two pools (edge, cloud); capacities (2g)/(2h) hold summed per pool
    and slot; a job's column is a start, per-pool worker counts, a PS pool and the least length
    (:class:`_Pools` states why every schedule of (2) maps to a column); starts are limited by the
    valid per-job deadlines of digest §3.3 (:func:`~optsched.problems.edge_cloud.deadlines`) for
    the flow of ``start`` (None: :func:`_list_start`). The
    LP is solved by column generation with exact pricing (:func:`price_pool`) and Wentges dual
    smoothing; every exact pricing round gives the Lagrangian bound
    :func:`lagrangian_value`, valid whenever the loop stops (deadline, iteration cap). Flows are
    integers, so the bound is rounded up (less the tolerance's slack). Status ``optimal`` when the
    LP was solved to its optimum (no column prices out), else ``time_limit``. Above
    :data:`MAX_POOL_CELLS` (the start's flow sets too long a horizon), or when the deadline
    passes while the pools are set up, no LP is built (``info["skipped"]``) and the trivial
    bound is returned, status ``time_limit``.
    """
    info: dict[str, Any] = {}
    if start is None:
        start = _list_start(instance, deadline)
    ub = verify(instance, start)
    best = trivial_bound(instance)
    info.update(trivial=best, upper_bound=ub)
    slots = deadlines(instance, ub)
    info["horizon"] = max(slots) + 1
    cells = len(instance.jobs) * 2 * info["horizon"]  # at most two pools: edge and cloud
    if cells > MAX_POOL_CELLS:
        info["skipped"] = (f"size cap: the pool relaxation would have {cells} cells (jobs x pools "
                           f"x horizon slots) > MAX_POOL_CELLS = {MAX_POOL_CELLS}")
        return Outcome(None, SolveStatus.TIME_LIMIT, _integral(best), info)
    pools = _Pools(instance, slots, deadline)
    if pools.stopped:
        info["skipped"] = "deadline: passed while the pools' per-job limits were computed"
        return Outcome(None, SolveStatus.TIME_LIMIT, _integral(best), info)
    master = _PoolMaster(instance, pools, seed)
    master.add(pool_columns(instance, start, pools))
    best_pi = (np.zeros(master.row_w.shape), np.zeros(master.row_p.shape))
    status, it = SolveStatus.TIME_LIMIT, 0
    for it in range(COLGEN_ITERATIONS):
        if deadline.expired():
            break
        rep = master.lp.solve(deadline=deadline)
        if rep.row_dual is None or rep.status is not SolveStatus.OPTIMAL:
            break
        eta, pi_w, pi_p = master.prices(rep.row_dual)
        new, value, prices, complete = _price_round(instance, pools, eta, pi_w, pi_p, best_pi,
                                                    deadline)
        if value is not None and value > best:
            best, best_pi = value, prices
        _remember(instance, master, rep.x)
        if complete:     # no column prices out at the current duals: the LP is optimal
            status, best = SolveStatus.OPTIMAL, max(best, rep.objective)
            break
        if not new:
            break
        master.add(new)
    info.update(iterations=it, columns=len(master.columns), lagrangian=best)
    return Outcome(None, status, _integral(best), info)


def _list_start(instance: Instance, deadline: Deadline) -> Schedule:
    """The better of :func:`serial_schedule` and the distributed-aware earliest-completion list
    schedule in arrival order (:func:`~optsched.solvers.edge_cloud.exact.list_schedule`): its
    flow sets the per-job deadlines, so the horizon of :func:`colgen_bound`."""
    from optsched.solvers.edge_cloud.exact import list_schedule

    best = serial_schedule(instance)
    order = sorted(range(len(instance.jobs)), key=lambda j: (instance.jobs[j].arrival, j))
    placer = list_schedule(instance, order, deadline.within(deadline.limit(0.2)))
    if placer is not None:
        listed = Schedule.single([placer.runs[j] for j in range(len(instance.jobs))])
        if verify(instance, listed) < verify(instance, best):
            best = listed
    return best


#: The last pool LPs' mean start and end slot of every job (weighted by the LP solution), keyed by
#: instance: read by the improvement (:func:`optsched.solvers.edge_cloud.exact.improve`) as list
#: orders.
LP_MEANS: dict[Instance, tuple[np.ndarray, np.ndarray]] = {}


def _remember(instance: Instance, master: _PoolMaster, x: np.ndarray | None) -> None:
    """Store the mean start and end of every job in the master's LP solution ``x``."""
    if x is None:
        return
    start, end = np.zeros(len(instance.jobs)), np.zeros(len(instance.jobs))
    for col, val in zip(master.columns, x):
        start[col.job] += val * col.start
        end[col.job] += val * col.end
    while len(LP_MEANS) >= 4:
        LP_MEANS.pop(next(iter(LP_MEANS)))
    LP_MEANS[instance] = (start, end)


def _price_round(instance: Instance, pools: _Pools, eta: np.ndarray, pi_w: np.ndarray,
                 pi_p: np.ndarray, best_pi: tuple, deadline: Deadline):
    """One pricing round, exact at the smoothed prices first and, when they give no column of
    negative reduced cost at the *current* duals (a mispricing), at the current duals. Every exact
    round gives a Lagrangian bound. Returns (new columns, the best Lagrangian value of the round or
    None, the prices that gave it, whether the round at the current duals completed without a
    column: then the master LP is optimal)."""
    sw = SMOOTH * best_pi[0] + (1 - SMOOTH) * pi_w
    sp = SMOOTH * best_pi[1] + (1 - SMOOTH) * pi_p
    cur = (_prefix(pi_w), _prefix(pi_p))
    value, prices = None, None
    for qw, qp in ((sw, sp), (pi_w, pi_p)):
        cw, cp = _prefix(qw), _prefix(qp)
        new: list = []
        least: list = []
        for j in range(len(instance.jobs)):
            if deadline.expired():
                return [], value, prices, False
            found = price_pool(instance, pools, j, cw, cp, keep=COLGEN_PER_JOB)
            least.append(found[0][0])
            new.extend(col for _, col in found
                       if _column_price(instance, col, *cur) - eta[j] < -1e-6)
        got = lagrangian_value(instance, pools, qw, qp, least)
        if value is None or got > value:
            value, prices = got, (qw, qp)
        if new:
            return new, value, prices, False
    return [], value, prices, True


def _column_price(instance: Instance, col: PoolColumn, cw: np.ndarray, cp: np.ndarray) -> float:
    """``flow + prices x usage`` of one pool column under price prefix sums ``cw``, ``cp``."""
    job = instance.jobs[col.job]
    lo, hi = col.start, col.end + 1
    work = sum(n * (cw[job.worker_type, g, hi] - cw[job.worker_type, g, lo])
               for g, n in enumerate(col.n) if n)
    return float(col.end - job.arrival + work + cp[job.ps_type, col.ps, hi] - cp[job.ps_type, col.ps, lo])


def _integral(bound: float) -> float:
    """Flows are integers: the least integer not below ``bound`` (minus the tolerance's slack)."""
    return float(math.ceil(bound - slack(bound)))
