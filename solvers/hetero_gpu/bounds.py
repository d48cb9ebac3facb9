"""hetero_gpu: ``lower_bound`` (the aggregate LP with HSSW cuts) and ``rl_bound`` (Hare_Sched_RL (9)
solved as an exact MILP: its dual bound).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from optsched.deadline import Deadline
from optsched.problems.hetero_gpu import Instance
from optsched.result import Outcome, SolveStatus
from optsched.solvers.guard import guard
from optsched.solvers.hetero_gpu.algorithm import aggregate_lp, build_seconds


def lower_bound(instance: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """Aggregate-LP bound (:func:`~optsched.solvers.hetero_gpu.algorithm.aggregate_lp`).

    Status rule of bounds: ``optimal`` when the cut loop converged (no HSSW inequality violated:
    the LP optimum over every cut), ``time_limit`` when the deadline or the round cap stopped it
    first; the bound is valid either way (the last LP solved to optimality, or the completion
    bound when none was), and ``info["stopped"]`` says why it stopped.
    """
    lp = aggregate_lp(instance, deadline=deadline, seed=seed)
    if not lp.converged and "stopped" not in lp.info:
        lp.info["stopped"] = f"cut cap: {lp.info['lp_solves']} LP solves without convergence"
    return Outcome(None, SolveStatus.OPTIMAL if lp.converged else SolveStatus.TIME_LIMIT,
                   lp.value, lp.info)


def rl_bound(instance: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """The paper's relaxation Hare_Sched_RL: its MILP dual bound (= RL* when solved).

    ``optimal`` when HiGHS proved RL*; otherwise the dual bound so far, or the completion bound
    ``sum_n w_n LBC_n`` when there is none or the RL is over the size cap (whatever the deadline)
    or too big to build in the time left (:func:`~optsched.solvers.guard.guard`;
    ``time_limit``, the bound contract's status for a stop by a cap, ``info["stopped"]``): valid
    either way, since RL* <= OPT.
    """
    from optsched.models import hetero_gpu as hm
    from optsched.solvers.highs import solve_model

    inst = instance
    trivial = float(sum(j.weight * c for j, c in zip(inst.jobs, hm.completion_lower_bounds(inst))))
    size = hm.rl_size(inst, "paper_full")
    refusal = guard(size["terms"], "Hare_Sched_RL", deadline, build_seconds(size))
    if refusal:
        return Outcome(None, SolveStatus.TIME_LIMIT, trivial,
                       {"stopped": f"Hare_Sched_RL not built: size guard: {refusal}",
                        "bound": "completion_lower_bounds"})
    m = hm.build_rl(inst, "paper_full")
    rep = solve_model(m, deadline=deadline, seed=seed)
    if rep.status is SolveStatus.TIME_LIMIT:
        info = {**rep.info, "stopped": "deadline: RL solve stopped by the time limit"}
        bound = trivial if rep.bound is None else max(rep.bound, trivial)
        return Outcome(None, SolveStatus.TIME_LIMIT, bound, info)
    return Outcome(None, rep.status, rep.bound, rep.info)


#: Relative margin taken off an LP optimum before it is reported as a bound (HiGHS' feasibility
#: tolerances may put a computed LP value a hair above the exact one).
LP_MARGIN = 1e-7
#: Interval counts of the successive grids of :func:`fluid_bound` (each LP solved is a bound).
FLUID_GRIDS = (25, 50, 100, 200, 400, 800)
#: A grid twice as fine takes about this many times as long (build + interior point, measured at
#: the paper preset): a grid is not started unless that much of the last one's time is left.
GRID_GROWTH = 3.0


def gpu_classes(instance: Instance) -> list[list[int]]:
    """GPUs grouped by identical compute column T^c_{., m} (the paper preset's four GPU types):
    within a class the compute times of every job agree, so capacity can be pooled."""
    groups: dict[tuple, list[int]] = {}
    for m in range(instance.n_gpus):
        groups.setdefault(tuple(instance.tc[:, m]), []).append(m)
    return list(groups.values())


def fluid_bound(instance: Instance, *, deadline: Deadline, seed: int = 0,
                max_grids: int = len(FLUID_GRIDS)) -> Outcome:
    """Interval-indexed fluid LP bound over GPU classes (:func:`fluid_lp`), on ever finer grids.

    Any-time: every LP solved to optimality is a valid bound, the best one is returned; when the
    deadline stops the loop (or the first LP), the completion bound ``sum_n w_n LBC_n`` (digest
    §3.3) is the floor. Status ``optimal`` when every grid of :data:`FLUID_GRIDS` was solved,
    else ``time_limit`` (``info["stopped"]`` says why).
    """
    from optsched.models import hetero_gpu as hm

    inst = instance
    best = float(sum(j.weight * c for j, c in zip(inst.jobs, hm.completion_lower_bounds(inst))))
    info: dict[str, Any] = {"bound": "completion_lower_bounds", "grids": []}
    horizon, last_s = list_horizon(inst), 0.0
    for intervals in FLUID_GRIDS[:max_grids]:
        left = deadline.remaining()
        if left is not None and left < GRID_GROWTH * last_s:
            info["stopped"] = f"deadline: {left:.1f} s left for the {intervals}-interval grid"
            break
        began = time.perf_counter()
        value = fluid_lp(inst, grid(horizon, intervals), deadline=deadline, seed=seed)
        if value is None:
            info["stopped"] = f"deadline: {intervals}-interval LP stopped by the time limit"
            break
        last_s = time.perf_counter() - began
        info["grids"].append((intervals, value))
        if value > best:
            best, info["bound"] = value, f"fluid LP, {intervals} intervals"
    status = SolveStatus.TIME_LIMIT if "stopped" in info else SolveStatus.OPTIMAL
    return Outcome(None, status, best, info)


def list_horizon(inst: Instance) -> float:
    """Makespan of Algorithm 1's list scheduling (earliest finish, x̂ = arrivals): where the grid
    ends (any horizon gives a valid bound: the last interval is unbounded)."""
    return _horizon_and_cost(inst)[0]


def _horizon_and_cost(inst: Instance) -> tuple[float, float]:
    """Makespan and cost sum_n w_n C_n of Algorithm 1's list scheduling (lines 4-18, earliest
    finish, x̂ = a_n + r)."""
    from optsched.solvers.hetero_gpu.algorithm import HareParams, list_runs

    xhat = {(n, r, k): inst.jobs[n].arrival + r for n, r, k in inst.tasks}
    runs, cost = list_runs(inst, xhat, HareParams(gpu_choice="earliest_finish", tie="index"))
    span = max(start + inst.tc[n, m] + inst.ts[n, m] for n, _, _, m, start in runs)
    return float(span), float(cost)


def grid(horizon: float, intervals: int) -> np.ndarray:
    """Breakpoints s_0 = 0 < ... < s_T: ``intervals`` equal steps up to ``horizon`` (a release
    inside an interval is charged at a_n itself, so the grid need not hold the arrivals)."""
    return np.linspace(0.0, horizon, intervals + 1)


def fluid_lp(inst: Instance, points: np.ndarray, *, deadline: Deadline, seed: int = 0
             ) -> float | None:
    """Optimum of the interval-indexed fluid relaxation on breakpoints ``points`` (None: not
    solved in time); :func:`fluid_lp_prices` states the LP."""
    out = fluid_lp_prices(inst, points, deadline=deadline, seed=seed)
    return None if out is None else out[0]


def fluid_lp_prices(inst: Instance, points: np.ndarray, *, deadline: Deadline, seed: int = 0
                    ) -> tuple[float, np.ndarray] | None:
    """Optimum of the interval-indexed fluid relaxation on breakpoints ``points`` and the prices
    of its capacity rows, ``prices[g, t]`` >= 0 per GPU-second of class g in interval t (minus
    the row duals; :mod:`~optsched.solvers.hetero_gpu.colgen` starts from them). None: not
    solved in time.

    Intervals I_t = [s_t, s_{t+1}) and a last, unbounded one [s_T, inf). Column v[n,g,t] >= 0 is
    the compute work of job n done on GPU class g during I_t, in tasks. Rows, each valid for
    every schedule of Hare_Sched (4)-(8) read as a fluid:

    - work: sum_{g,t} v[n,g,t] = |R_n| K_n (every task computes once, (5));
    - capacity: sum_n T^c_{n,g} v[n,g,t] <= |class g| |I_t| (non-overlap (8); not on I_T);
    - parallelism: sum_g T^c_{n,g} v[n,g,t] <= K_n |I_t ∩ [a_n, inf)| (at most K_n tasks of a job
      are alive at once, by the barrier (7); release (4));
    - mean busy time: |R_n| K_n C_n >= sum_{g,t} v[n,g,t] (max(s_t, a_n) + T^c_{n,g} / 2 +
      min_{m in g} T^s_{n,m}) + |R_n| K_n :func:`_chain_gap` (each task's compute midpoint lies
      its T^s + T^c / 2 on the GPU it ran on, and the later rounds, before C_n; left endpoints in
      the bound's favour);
    - alive time: K_n (C_n - a_n) >= sum_{g,t} v[n,g,t] (T^c_{n,g} + min_{m in g} T^s_{n,m})
      (each task is alive for its compute and sync inside [a_n, C_n], (6));
    - rate: the same alive-time count inside windows of 1-8 intervals (:class:`RateRows`);
    - C_n >= LBC_n (digest §3.3).

    Objective min sum_n w_n C_n (Hare_Sched's), so the optimum is <= OPT.
    """
    from optsched.models import hetero_gpu as hm
    from optsched.solvers.highs import ArrayModel

    classes = gpu_classes(inst)
    size = np.array([len(c) for c in classes], dtype=float)
    tc = np.array([[inst.tc[n, c[0]] for c in classes] for n in range(len(inst.jobs))])
    ts = np.array([[inst.ts[n, c].min() for c in classes] for n in range(len(inst.jobs))])
    lbc = hm.completion_lower_bounds(inst)
    n_jobs, n_cls, n_int = len(inst.jobs), len(classes), len(points)  # the last one is unbounded
    lengths = np.append(np.diff(points), np.inf)
    # rows: work (n_jobs), mean (n_jobs), alive (n_jobs), capacity (n_cls x (n_int-1)),
    # parallelism (n_jobs x (n_int-1)), numbered in that order
    cap0, par0 = 3 * n_jobs, 3 * n_jobs + n_cls * (n_int - 1)
    rate = RateRows(par0 + n_jobs * (n_int - 1), n_int - 1)
    lo = np.concatenate([[j.rounds * j.tasks_per_round for j in inst.jobs],
                         [-np.inf] * (2 * n_jobs + (n_cls + n_jobs) * (n_int - 1)
                                      + n_jobs * rate.per_job)])
    hi = np.concatenate([[j.rounds * j.tasks_per_round for j in inst.jobs],
                         [-_chain_gap(j) for j in inst.jobs],
                         [-j.tasks_per_round * j.arrival for j in inst.jobs],
                         np.repeat(size, n_int - 1) * np.tile(lengths[:-1], n_cls),
                         np.zeros(n_jobs * (n_int - 1 + rate.per_job))])
    for n, job in enumerate(inst.jobs):  # K_n |I_t ∩ [a_n, inf)|
        open_len = np.clip(points[1:] - np.maximum(points[:-1], job.arrival), 0.0, None)
        hi[par0 + n * (n_int - 1): par0 + (n + 1) * (n_int - 1)] = job.tasks_per_round * open_len
        hi[rate.first(n): rate.first(n + 1)] = rate.limits(job, open_len)
    m = ArrayModel(len(lo), lo, hi, seed=seed)
    _add_fluid_columns(m, inst, points, tc, ts, cap0, par0, rate)
    m.add_columns(cost=[j.weight for j in inst.jobs], lo=lbc, hi=[np.inf] * n_jobs,
                  starts=np.arange(0, 2 * n_jobs, 2),
                  rows=np.ravel([[n_jobs + n, 2 * n_jobs + n] for n in range(n_jobs)]),
                  values=np.ravel([[-1.0, -j.tasks_per_round] for j in inst.jobs]))
    m.h.setOptionValue("solver", "ipm")  # dual simplex stalls on this LP at paper scale
    rep = m.solve(deadline=deadline)
    if rep.status is not SolveStatus.OPTIMAL:
        return None
    prices = np.zeros((n_cls, n_int - 1))
    if rep.row_dual is not None:
        prices = np.clip(-rep.row_dual[cap0:par0].reshape(n_cls, n_int - 1), 0.0, None)
    return rep.objective - LP_MARGIN * abs(rep.objective), prices


def _chain_gap(job) -> float:
    """How far the mean of a job's compute midpoints lies before C_n beyond each task's own
    T^s + T^c / 2 (charged on its column in :func:`fluid_lp`), at least.

    A task i of round r on GPU m has its compute midpoint mu_i = f_i - T^s_{n,m} - T^c_{n,m} / 2
    with its finish f_i <= b_{r+1}, the round's barrier (7); and b_{r+1} <= C_n - (|R_n| - 1 - r)
    rho with rho = min_m (T^c + T^s) (each later round lasts >= rho). So C_n - mu_i >= T^s_i +
    T^c_i / 2 + (|R_n| - 1 - r) rho; averaged over the |R_n| K_n tasks (K_n per round):
    C_n - mean(mu) >= mean(T^s_i + T^c_i / 2) + (|R_n| - 1) rho / 2 (Goemans' mean-busy-time
    argument per round, with the GPU each task ran on). The compute progress of an interval,
    dated at its left endpoint, lies no later than the midpoints it belongs to.
    """
    rho = min(c + s for c, s in zip(job.train_time, job.sync_time))
    return (job.rounds - 1) * rho / 2


#: Window lengths (in intervals) of the rate rows of :func:`fluid_lp` (aligned windows).
RATE_WINDOWS = (1, 4, 16)


class RateRows:
    """The rate rows of :func:`fluid_lp`: for job n and every aligned window W of w intervals
    (w in :data:`RATE_WINDOWS`), sum_{g, t in W} (T^c_{n,g} + min_{m in g} T^s_{n,m}) v[n,g,t]
    <= K_n (|W ∩ [a_n, inf)| + max_m T^s_{n,m}).

    Valid: every task is alive (computing or synchronising) for T^c + T^s, and at most K_n tasks of
    a job are alive at once (one round at a time, barrier (7)), so the alive time inside W is <=
    K_n |W ∩ [a_n, inf)|. A task whose compute share phi lies in W is alive there >= phi (T^c +
    T^s) unless its sync runs past W's end; those tasks belong to one round (the next round starts
    after they finish), so at most K_n of them, each short by <= phi T^s <= max T^s.
    """

    def __init__(self, row0: int, bounded: int):
        self.row0, self.bounded = row0, bounded
        self.counts = [-(-bounded // w) for w in RATE_WINDOWS]
        self.offsets = np.concatenate([[0], np.cumsum(self.counts)[:-1]]).astype(int)
        self.per_job = int(sum(self.counts))

    def first(self, n: int) -> int:
        """Row index of job n's first rate row."""
        return self.row0 + n * self.per_job

    def rows(self, n: int, t: int) -> list[int]:
        """The rate rows of job n that interval t (bounded) enters: one window per length."""
        return [self.first(n) + int(o) + t // w for w, o in zip(RATE_WINDOWS, self.offsets)]

    def limits(self, job, open_len: np.ndarray) -> np.ndarray:
        """Right-hand sides of job ``job``'s rate rows (``open_len``: |I_t ∩ [a_n, inf)|)."""
        out = []
        for w, count in zip(RATE_WINDOWS, self.counts):
            sums = np.add.reduceat(open_len, np.arange(0, self.bounded, w))[:count]
            out.append(np.where(sums > 0, sums + max(job.sync_time), 0.0) * job.tasks_per_round)
        return np.concatenate(out)


def _add_fluid_columns(m, inst: Instance, points: np.ndarray, tc: np.ndarray, ts: np.ndarray,
                       cap0: int, par0: int, rate: RateRows) -> None:
    """The v[n,g,t] columns of :func:`fluid_lp` (only intervals ending after a_n), in CSC."""
    n_jobs, n_cls, n_int = len(inst.jobs), tc.shape[1], len(points)
    cost: list[float] = []
    starts: list[int] = []
    rows: list[int] = []
    values: list[float] = []
    for n, job in enumerate(inst.jobs):
        tasks = job.rounds * job.tasks_per_round
        first = max(0, int(np.searchsorted(points, job.arrival, side="right")) - 1)
        for g in range(n_cls):
            for t in range(first, n_int):
                starts.append(len(rows))
                cost.append(0.0)
                rows += [n, n_jobs + n, 2 * n_jobs + n]
                mean = max(points[t], job.arrival) + tc[n, g] / 2 + ts[n, g]
                values += [1.0, mean / tasks, tc[n, g] + ts[n, g]]
                if t < n_int - 1:
                    windows = rate.rows(n, t)
                    rows += [cap0 + g * (n_int - 1) + t, par0 + n * (n_int - 1) + t, *windows]
                    values += [tc[n, g], tc[n, g], *[tc[n, g] + ts[n, g]] * len(windows)]
    k = len(cost)
    m.add_columns(cost=cost, lo=np.zeros(k), hi=np.full(k, np.inf), starts=starts, rows=rows,
                  values=values)
