"""The exact model's preparation (incumbent, Lagrangian, reduced-cost fixing), lower bounds of (2)
and the exact batch oracle (She et al., paper 001); column generation is in :mod:`.colgen`.

Pyomo, HiGHS (:mod:`optsched.solvers.highs`) and the models (:mod:`optsched.models.edge_cloud`)
are imported inside the functions that build or solve a model, so importing the family is cheap.
Every function takes the call's :class:`~optsched.deadline.Deadline`: the heuristics behind the
exact model's horizon are charged to it, a model that cannot be built and handed to HiGHS in the
time left is not built (:data:`SECONDS_PER_COLUMN`), and the subgradient loop stops with a valid
bound.
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
from optsched.solvers.guard import Refusal, guard
from optsched.solvers.online import BatchResult, Round, doubling_rounds, next_window
from optsched.tolerance import at_most, slack

if TYPE_CHECKING:
    from optsched.models.edge_cloud import Column


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


def _guard(columns: float, terms: float, deadline: Deadline,
           over: str | None = None) -> Refusal | None:
    """Why the column model of ``columns`` columns and ``terms`` non-zeros is not built (None:
    build it): the shared :func:`~optsched.solvers.guard.guard` with the build time
    :data:`SECONDS_PER_COLUMN` per column; ``over`` names a cap of the family's own
    (:data:`MAX_COLUMNS`, :data:`MAX_PLACEMENTS`) that the model is over, whatever the deadline."""
    refusal = guard(terms, f"the model of ~{columns:.0f} columns", deadline,
                    columns * SECONDS_PER_COLUMN)
    if over is None:
        return refusal
    return Refusal(over, None if refusal is None else refusal.late)


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

    sched, ub = incumbent(instance, deadline)
    bound = trivial_bound(instance)
    info.update(upper_bound_heuristic=ub, incumbent="heuristic", trivial=bound)
    dl = deadlines(instance, ub)
    info["horizon"] = max(dl)
    estimate = column_estimate(instance, dl)
    if estimate > MAX_COLUMNS:
        refusal = _guard(estimate, estimate, deadline,
                         over=f"size cap: more than MAX_COLUMNS = {MAX_COLUMNS} columns (job x "
                              f"placement x start) or MAX_PLACEMENTS = {MAX_PLACEMENTS} "
                              f"placements of one job")
        assert refusal is not None
        _skip(info, refusal)
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
               _guard(len(kept), _terms(kept), deadline))
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


# ---------------------------------------------------------- reference: exact batch oracle
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


__all__ = ["LAGRANGE_ITERATIONS", "MAX_COLUMNS", "MAX_PLACEMENTS", "PAIR_EVERY",
           "SECONDS_PER_COLUMN", "Lagrangian", "a_online_exact_oracle", "column_estimate",
           "incumbent", "lagrangian", "lower_bound", "single_job_flow", "serial_schedule",
           "trivial_bound"]
