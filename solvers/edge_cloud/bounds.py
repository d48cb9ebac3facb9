"""Exact solve of (2), lower bounds, and the batch bound of (3)/(4)/(5) by column generation
(She et al., seeds/001)."""

from __future__ import annotations

import math

import numpy as np

from optsched.models.edge_cloud import (
    Column, build_batch, build_dual, build_exact, deadlines, extract_batch, extract_schedule, min_flow,
)
from optsched.problems.edge_cloud import Instance, Run, Schedule, verify
from optsched.result import Outcome, SolveStatus
from optsched.solvers.edge_cloud import algorithm as alg
from optsched.solvers.edge_cloud.baselines import fifo
from optsched.solvers.highs import relax_integrality, solve_model
from optsched.solvers.online import BatchResult, doubling_rounds, next_window
from optsched.tolerance import at_most

LP_SIZE_LIMIT = 60_000  # job x server x slot cells above which lower_bound skips the LP


def incumbent(instance: Instance) -> tuple[Schedule, float]:
    """The best of FIFO, A_online (rule "model") and a one-job-at-a-time schedule by verified total
    flow: the UB for deadlines. FIFO places every job co-located, so it is run only when each job
    has a server with both a type-u_j worker and a type-v_j PS slot (else it never finishes);
    A_online may leave a job unscheduled after its round cap; :func:`serial_schedule` always
    exists, so every valid instance gets an upper bound."""
    candidates = [serial_schedule(instance)]
    if all(_colocatable(instance, job) for job in instance.jobs):
        candidates.append(fifo(instance))
    try:
        candidates.append(alg.a_online(instance, alg.MODEL)[0])
    except RuntimeError:  # a job unscheduled after max_rounds: keep the others
        pass
    best = None
    for sched in candidates:
        value = verify(instance, sched)
        if best is None or value < best[1]:
            best = (sched, value)
    return best


def _colocatable(instance: Instance, job) -> bool:
    return any(w[job.worker_type] and p[job.ps_type] for w, p in zip(instance.workers, instance.ps))


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
    """``sum_j LB_j`` with ``LB_j`` = :func:`optsched.models.edge_cloud.min_flow` (each job alone)."""
    return float(sum(min_flow(instance, j) for j in range(len(instance.jobs))))


def exact(instance: Instance, *, time_limit: float | None = None, seed: int = 0) -> Outcome:
    """Time-indexed MILP of (2) (:func:`optsched.models.edge_cloud.build_exact`) with the horizon
    and per-job deadlines derived from the best heuristic's total flow (digest §3.3); exact with
    mip_rel_gap = 0. If HiGHS returns nothing better than the heuristic, the heuristic's schedule is
    returned (``info["incumbent"] = "heuristic"``)."""
    sched, ub = incumbent(instance)
    dl = deadlines(instance, ub)
    model = build_exact(instance, dl)
    rep = solve_model(model, time_limit=time_limit, seed=seed)
    info = {**rep.info, "upper_bound_heuristic": ub, "horizon": max(dl),
            "n_vars": model.nvariables(), "n_cons": model.nconstraints()}
    lb = max(rep.bound, trivial_bound(instance)) if rep.bound is not None else trivial_bound(instance)
    if rep.has_solution and at_most(rep.objective, ub):
        sched = extract_schedule(instance, model)
        info["model_objective"] = rep.objective
        info["incumbent"] = "milp"
    else:
        info["incumbent"] = "heuristic"
    status = rep.status
    if status is SolveStatus.INFEASIBLE:  # cannot happen with valid deadlines; keep the heuristic
        status = SolveStatus.UNKNOWN
    return Outcome(schedule=sched, status=status, lower_bound=lb, info=info)


def lower_bound(instance: Instance, *, time_limit: float | None = None, seed: int = 0) -> Outcome:
    """max(trivial per-job bound, LP relaxation of the exact MILP with valid deadlines); the LP is
    skipped above :data:`LP_SIZE_LIMIT` cells (paper scale), leaving the trivial bound."""
    bound = trivial_bound(instance)
    info = {"trivial": bound}
    _, ub = incumbent(instance)
    dl = deadlines(instance, ub)
    cells = sum(max(0, dl[j] - job.arrival) for j, job in enumerate(instance.jobs)) * instance.n_servers
    if cells <= LP_SIZE_LIMIT:
        rep = solve_model(relax_integrality(build_exact(instance, dl)), time_limit=time_limit, seed=seed)
        if rep.status is SolveStatus.OPTIMAL:
            info["lp"] = rep.objective
            bound = max(bound, rep.objective)
    return Outcome(schedule=None, status=SolveStatus.OPTIMAL, lower_bound=bound, info=info)


# ------------------------------------------------------------------ batch bound: column generation
def price_column(instance: Instance, j: int, tau: int, lam: np.ndarray, mu: np.ndarray,
                 fixed_start: bool = False) -> tuple[float, Column | None]:
    """Exact pricing for (5a): the in-window schedule of job ``j`` of least cost under the prices
    ``lam`` (rows s*U+u, window slots) and ``mu`` (rows s*V+v). For a fixed start, min over ``D_u``
    of COST_C (exact order) and COST_D* is the exact minimum of (9) (digest §4.6); every start
    ``tau+1..2tau`` is tried unless ``fixed_start``."""
    L = lam.shape[1]
    best = (math.inf, None)
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
                   max_iter: int = 200, time_limit: float | None = None) -> tuple[float, list[Column]]:
    """LP optimum of the packing program (4) over *all* in-window columns, by column generation:
    solve the restricted dual (5) (cutting planes on (5a)), price every job exactly with
    :func:`price_column`, add the columns whose utility exceeds eta_j, repeat until none does.
    Returns (LP value, generated columns). The value bounds OPT(3) from above."""
    S, U, V, L = instance.n_servers, instance.n_wtypes, instance.n_ptypes, tau
    cols: list[Column] = []
    lam, mu, eta = np.zeros((S * U, L)), np.zeros((S * V, L)), dict.fromkeys(jobs, 0.0)
    for _ in range(max_iter):
        new = []
        for j in jobs:
            cost, col = price_column(instance, j, tau, lam, mu, fixed_start)
            if col is not None and 1.0 - cost > eta[j] + 1e-7:
                new.append(col)
        if not new:
            break
        cols.extend(new)
        model = build_dual(instance, cols, jobs)
        solve_model(model, time_limit=time_limit)
        lam, mu = np.zeros((S * U, L)), np.zeros((S * V, L))
        for (s, u, t), var in model.lam.items():
            lam[s * U + u, t - tau - 1] = var.value or 0.0
        for (s, v, t), var in model.mu.items():
            mu[s * V + v, t - tau - 1] = var.value or 0.0
        eta = {j: model.eta[j].value or 0.0 for j in jobs}
    else:
        raise RuntimeError("batch_lp_bound: column generation did not converge")
    value = sum(eta.values()) + float((lam * _caps(instance.W, L)).sum() + (mu * _caps(instance.P, L)).sum())
    return value, cols


def round_dual(instance: Instance, jobs: list[int], tau: int, cfg: alg.Config = alg.MODEL) -> dict:
    """Weak-duality diagnostic of one A_maxsche round (digest P7, ours): the algorithm's final
    ``(eta, lambda, mu)`` and the dual objective (5) ``D_alg = sum eta + sum lambda W + sum mu P`` over
    the window. When (5a) holds for every column, ``D_alg >= OPT_LP(4)``; with ``rule="model"`` and
    exact costs it does for every fixed-start column (prices only grow during a round)."""
    state: dict = {}
    alg.a_maxsche(instance, jobs, tau, 2 * tau, cfg, state)
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


def a_online_exact_oracle(instance: Instance, *, fixed_start: bool = False, max_rounds: int = 40) -> Schedule:
    """Algorithm 1's doubling rounds with A_maxsche replaced by an *exact* oracle for the batch
    problem (3) (time-indexed MILP, HiGHS): a reference that separates the loss of the doubling
    framework from that of the greedy pricing (digest P8). Not a method of the paper; tiny/small only."""
    def batch(rnd, jobs):
        model = build_batch(instance, jobs, rnd.tau, fixed_start=fixed_start)
        if not len(model.J):                  # no job can use any slot of the window
            return BatchResult({}, None)
        rep = solve_model(model)
        if rep.status is not SolveStatus.OPTIMAL:
            raise RuntimeError(f"batch MILP of round {rnd.index}: {rep.status.value}")
        runs = extract_batch(instance, model)
        return BatchResult(runs, max((r.end for r in runs.values()), default=None))

    out = doubling_rounds(list(range(len(instance.jobs))), arrival=lambda j: instance.jobs[j].arrival,
                          schedule_batch=batch, window=next_window, max_rounds=max_rounds)
    if out.unscheduled:
        raise RuntimeError(f"exact oracle: job {out.unscheduled[0]} unscheduled")
    return Schedule.single([out.plans[j] for j in range(len(instance.jobs))])


def _caps(cap: np.ndarray, L: int) -> np.ndarray:
    return np.repeat(cap.reshape(-1, 1), L, axis=1)


__all__ = ["a_online_exact_oracle", "batch_lp_bound", "column_cost", "exact", "incumbent", "lower_bound", "price_column",
           "round_dual", "serial_schedule", "trivial_bound"]
