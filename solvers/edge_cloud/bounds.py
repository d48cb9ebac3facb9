"""Exact solve of (2), lower bounds, and the batch bound of (3)/(4)/(5) by column generation
(She et al., seeds/001).

Pyomo, HiGHS (:mod:`optsched.solvers.highs`) and the models (:mod:`optsched.models.edge_cloud`)
are imported inside the functions that build or solve a model, so importing the family is cheap.
Every function takes the call's :class:`~optsched.deadline.Deadline`: the heuristics behind the
exact model's horizon are charged to it, a model that cannot be built and handed to HiGHS in the
time left is not built (:data:`SECONDS_PER_VAR`), and the column-generation loop stops with a valid
bound.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from optsched.deadline import NEVER, Deadline
from optsched.problems.edge_cloud import (Instance, Run, Schedule, deadlines, earliest_start,
                                          min_flow, verify)
from optsched.result import Outcome, SolveStatus
from optsched.solvers.edge_cloud import algorithm as alg
from optsched.solvers.edge_cloud.baselines import fifo
from optsched.solvers.online import BatchResult, Round, doubling_rounds, next_window
from optsched.tolerance import at_most

if TYPE_CHECKING:
    from optsched.models.edge_cloud import Column

LP_SIZE_LIMIT = 60_000  # job x server x slot cells above which lower_bound skips the LP
#: Seconds per variable to build the exact MILP of (2) and hand it to HiGHS (measured on the
#: project's 2-core machine: ~2e-4 s to build with Pyomo, ~6e-4 s for the hand-off); a model whose
#: estimate exceeds the time left is not built.
SECONDS_PER_VAR = 8e-4
#: The same for its LP relaxation (the relaxed copy costs ~3e-4 s per variable more).
LP_SECONDS_PER_VAR = 1.1e-3


def incumbent(instance: Instance, deadline: Deadline = NEVER) -> tuple[Schedule, float]:
    """The best of a one-job-at-a-time schedule, FIFO and A_online (rule "model") by verified total
    flow: the UB for deadlines. :func:`serial_schedule` always exists (O(J S)), so every valid
    instance gets an upper bound; FIFO and A_online run under ``deadline`` (charged to the caller)
    and are left out when they stop early or cannot schedule the instance (FIFO needs a server with
    both slot types for every job; A_online may leave a job unscheduled after its round cap)."""
    candidates = [serial_schedule(instance)]
    for out in (fifo(instance, deadline=deadline), alg.a_online(instance, alg.MODEL, deadline=deadline)):
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
    """``sum_j LB_j`` with ``LB_j`` = :func:`optsched.problems.edge_cloud.min_flow` (each job alone)."""
    return float(sum(min_flow(instance, j) for j in range(len(instance.jobs))))


def model_size(instance: Instance, deadline: list[int]) -> int:
    """Number of variables of :func:`optsched.models.edge_cloud.build_exact` with these per-job
    deadlines, counted without building it (an upper bound: per job and admissible slot, one
    ``y`` per worker server, one ``z`` per PS server, ``al``, ``sg``, ``ep``; per job ``nw``,
    ``pi``, ``xi``). O(J S)."""
    n_w = (instance.W > 0).sum(axis=0)
    n_p = (instance.P > 0).sum(axis=0)
    total = 0
    for j, job in enumerate(instance.jobs):
        ws, ps = int(n_w[job.worker_type]), int(n_p[job.ps_type])
        slots = max(0, deadline[j] - earliest_start(instance, j) + 1)
        total += slots * (ws + ps + 3) + ws + ps + 1
    return total


def _too_big(size: int, per_var: float, deadline: Deadline) -> str | None:
    """Why a model of ``size`` variables is not built in the time left (None: build it)."""
    left = deadline.remaining()
    need = size * per_var
    if left is None or need <= left:
        return None
    return (f"model of ~{size} variables needs ~{need:.3g} s to build and hand to HiGHS, "
            f"{left:.3g} s left")


def exact(instance: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """Time-indexed MILP of (2) (:func:`optsched.models.edge_cloud.build_exact`), HiGHS, gap 0.

    The horizon and per-job deadlines come from the best heuristic's total flow (:func:`incumbent`,
    digest §3.3); the heuristics are charged to ``deadline``. If the model cannot be built and handed
    to HiGHS in the time left (:func:`model_size` x :data:`SECONDS_PER_VAR`), it is not built: the
    heuristic's schedule is returned with status ``time_limit`` and ``info["skipped"]``. If HiGHS
    returns nothing better than the heuristic, the heuristic's schedule is returned
    (``info["incumbent"] = "heuristic"``). The lower bound is the larger of HiGHS' dual bound and
    :func:`trivial_bound`.

    Exact for :func:`~optsched.problems.edge_cloud.verify`'s semantics (integral slots; (2e) as the
    integer threshold ``sum y >= R^xi`` under the tolerance policy).
    """
    sched, ub = incumbent(instance, deadline)
    dl = deadlines(instance, ub)
    trivial = trivial_bound(instance)
    info: dict[str, Any] = {"upper_bound_heuristic": ub, "horizon": max(dl), "incumbent": "heuristic"}
    size = model_size(instance, dl)
    skipped = _too_big(size, SECONDS_PER_VAR, deadline)
    if skipped is not None:
        info["skipped"] = skipped
        return Outcome(sched, SolveStatus.TIME_LIMIT, trivial, info)
    from optsched.models.edge_cloud import build_exact, extract_schedule
    from optsched.solvers.highs import report_outcome, solve_model

    model = build_exact(instance, dl)
    info.update(n_vars=model.nvariables(), n_cons=model.nconstraints())
    rep = solve_model(model, deadline=deadline, seed=seed)
    if rep.status is SolveStatus.INFEASIBLE:  # cannot happen with valid deadlines; keep the heuristic
        rep = replace(rep, status=SolveStatus.UNKNOWN)
    if rep.has_solution and not at_most(rep.objective, ub):  # stopped early, worse than the heuristic
        rep = replace(rep, has_solution=False)
    if rep.has_solution:
        info["incumbent"] = "milp"
    return report_outcome(rep, lambda: extract_schedule(instance, model), lower_bound=trivial,
                          fallback=sched, info=info)


def lower_bound(instance: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """max(trivial per-job bound, LP relaxation of the exact MILP with valid deadlines).

    Status ``optimal`` when the LP was solved to its optimum; ``time_limit`` with the trivial bound
    (still valid) when it was not: skipped above :data:`LP_SIZE_LIMIT` job x server x slot cells
    (paper scale), not built in the time left, or stopped by ``deadline``; ``info["lp"]`` holds
    the LP value or the reason. The heuristics behind the deadlines are charged to ``deadline``.
    """
    bound = trivial_bound(instance)
    info: dict[str, Any] = {"trivial": bound}
    _, ub = incumbent(instance, deadline)
    dl = deadlines(instance, ub)
    cells = sum(max(0, dl[j] - job.arrival) for j, job in enumerate(instance.jobs)) * instance.n_servers
    if cells > LP_SIZE_LIMIT:
        info["lp"] = f"skipped: {cells} job x server x slot cells > LP_SIZE_LIMIT = {LP_SIZE_LIMIT}"
        return Outcome(None, SolveStatus.TIME_LIMIT, bound, info)
    skipped = _too_big(model_size(instance, dl), LP_SECONDS_PER_VAR, deadline)
    if skipped is not None:
        info["lp"] = f"skipped: {skipped}"
        return Outcome(None, SolveStatus.TIME_LIMIT, bound, info)
    from optsched.models.edge_cloud import build_exact
    from optsched.solvers.highs import relax_integrality, solve_model

    rep = solve_model(relax_integrality(build_exact(instance, dl)), deadline=deadline, seed=seed)
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
                   max_iter: int = 200, deadline: Deadline = NEVER) -> tuple[float, list[Column]]:
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
                          deadline: Deadline = NEVER) -> Schedule | None:
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


__all__ = ["LP_SECONDS_PER_VAR", "LP_SIZE_LIMIT", "SECONDS_PER_VAR", "a_online_exact_oracle",
           "batch_lp_bound", "column_cost", "exact", "incumbent", "lower_bound", "model_size",
           "price_column", "round_dual", "serial_schedule", "trivial_bound"]
