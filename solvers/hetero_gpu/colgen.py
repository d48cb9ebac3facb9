"""hetero_gpu: ``colgen_bound``, Lagrangian relaxation of the GPU-class capacity over per-job
non-preemptive schedules on a time grid (issue 19, the lower side at paper scale).

Relaxation (Dantzig-Wolfe / Lagrangian, Geoffrion 1974; the time-indexed form of Sousa & Wolsey
1992 and van den Akker, Hurkens & Savelsbergh 2000, "Time-indexed formulations for machine
scheduling problems: column generation", INFORMS J. Comput. 12): the GPUs of one class (identical
T^c column, :func:`~optsched.solvers.hetero_gpu.bounds.gpu_classes`) are pooled into a cumulative
resource of |g| units per time slot; only that pooled capacity couples the jobs. Pricing it with
multipliers pi[g, k] >= 0 per GPU-slot splits Hare_Sched (4)-(8) into one problem per job, whose
whole schedule -- every task on one class, non-preemptive for its T^c, rounds in sequence behind
the barrier (7) -- is solved exactly by a dynamic programme over rounds x slots
(:func:`price_jobs`). Every pi gives a valid bound (weak duality)

    L(pi) = sum_n min_{schedule of n} [w_n C_n + sum_{tasks} pi-cost] - sum_{g,k} |g| pi[g, k]
          <= OPT,

so the bound is any-time: the best L(pi) seen is returned whenever the deadline stops the
multiplier search, column generation on the Dantzig-Wolfe master (:func:`colgen_bound`; its
duals are the next pi), warm-started from the capacity duals of the fluid LP
(:func:`~optsched.solvers.hetero_gpu.bounds.fluid_lp_prices`), so its first value is already
about the fluid bound. (A projected subgradient method with Polyak steps, Held, Wolfe & Crowder
1974, was tried first: at paper scale it gained 0.2 % over the fluid bound in 60 steps where
column generation converged to +1.0 % in 25.)

A slot past the arrival clamp ``A_n <= T`` only lowers the bound (an earlier release).

Time grid (why the relaxation stays valid). Slots k = [k delta, (k+1) delta). Map a feasible
schedule of Hare_Sched to slots by rounding every start down: x' = floor(x / delta). Then

- arrival (4): x >= a_n gives x' >= floor(a_n / delta) =: A_n;
- non-overlap (8), as energy: a task started at x = (x' + f) delta, f in [0, 1), holds its GPU
  during [x, x + T^c), so slot j carries |[x' + f, x' + f + T^c / delta) & [j, j + 1)| of a
  GPU-slot from it, and the tasks on the |g| GPUs of a class carry at most |g| GPU-slots per
  slot (the capacity rows). The pi-cost of a task is priced at the least f
  (:func:`start_costs`: piecewise linear in f, so f = 0, 1 - rho or the limit 1, with
  T^c / delta = p + rho), which is <= its cost at its own f. (Until issue 19's fourth pass a
  task held p = floor(T^c / delta) whole slots, a relaxation of the same rows that dropped up
  to a slot of every task's energy: 1.8-3.9 % of the work per class at paper seed 0 on 4,000
  slots.)
- barrier (7): x_j >= x_i + T^c_i + T^s_i gives x'_j >= x'_i + q_i with
  q = floor((T^c + min_{m in g} T^s_m) / delta);
- completion (6): C_n >= x_last + T^c + T^s >= x'_last delta + T^c_g + min_{m in g} T^s_m, and
  C_n >= LBC_n (digest §3.3).

So the rounded schedule is feasible for the slot problem, whose cost (the last start dated at its
slot's left end, the real durations added) is <= w_n C_n: the slot problem's optimum, and every
Lagrangian bound of it, is <= OPT. Slots at or after the priced horizon T carry no price
(dropping capacity rows only relaxes): a job whose barrier reaches T finishes its remaining rounds
back to back at its fastest class (:func:`price_jobs`, the exit terms).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np

from optsched.deadline import Deadline
from optsched.problems.hetero_gpu import Instance
from optsched.result import Outcome, SolveStatus
from optsched.solvers.hetero_gpu.algorithm import GpuPrices

#: Relative margin taken off floating sums before a value is reported as a bound.
MARGIN = 1e-7
#: Jobs priced together as one block of numpy rows (bounds the memory of the back-tracking).
BLOCK = 64


@dataclass(frozen=True)
class SlotJobs:
    """Per-job data of the slot problem (module docstring), rows = jobs, columns = GPU classes."""

    delta: float            # slot length
    slots: int              # priced slots T
    size: np.ndarray        # |g| per class
    arrival: np.ndarray     # A_n (slot)
    tasks: np.ndarray       # K_n
    rounds: np.ndarray      # |R_n|
    weight: np.ndarray      # w_n
    lbc: np.ndarray         # LBC_n
    occupy: np.ndarray      # p[n, g] whole slots of a task's T^c (floor(T^c / delta))
    rest: np.ndarray        # rho[n, g] = T^c / delta - p, its last fraction of a slot, in [0, 1]
    step: np.ndarray        # q[n, g] slots from a round's start slot to the next round's
    finish: np.ndarray      # D[n, g] = T^c + min T^s (real time after the last start)


def slot_jobs(inst: Instance, delta: float, slots: int) -> SlotJobs:
    """The slot problem of ``inst`` on ``slots`` slots of length ``delta`` (rounded down, so
    every bound of it is <= OPT; module docstring)."""
    from optsched.models import hetero_gpu as hm
    from optsched.solvers.hetero_gpu.bounds import gpu_classes

    classes = gpu_classes(inst)
    tc = np.array([[inst.tc[n, c[0]] for c in classes] for n in range(len(inst.jobs))])
    ts = np.array([[inst.ts[n, c].min() for c in classes] for n in range(len(inst.jobs))])
    jobs = inst.jobs
    return SlotJobs(
        delta=delta, slots=slots, size=np.array([len(c) for c in classes], dtype=float),
        arrival=np.minimum([_down(j.arrival / delta) for j in jobs], slots).astype(np.int64),
        tasks=np.array([j.tasks_per_round for j in jobs], dtype=float),
        rounds=np.array([j.rounds for j in jobs], dtype=np.int64),
        weight=np.array([j.weight for j in jobs], dtype=float),
        lbc=np.array(hm.completion_lower_bounds(inst), dtype=float),
        occupy=np.vectorize(_down)(tc / delta).astype(np.int64),
        rest=np.clip(tc / delta - np.vectorize(_down)(tc / delta), 0.0, 1.0) * (1 - 1e-9),
        step=np.vectorize(_down)((tc + ts) / delta).astype(np.int64),
        finish=tc + ts)


def _down(u: float) -> int:
    """floor(u), a hair low rather than high (a floating quotient just above an integer it
    equals must not round up: the slot problem would be stricter than the real one)."""
    return max(0, math.floor(u - 1e-9 * max(1.0, abs(u))))


@dataclass
class Priced:
    """One evaluation of the per-job problems: their optimal values (with the pi-cost), the
    pooled usage[g, k] (GPU-slots of class g used in slot k) of the optimal schedules, and each
    job's optimal schedule as its rounds' (class, start slot, offset option) (:func:`spans`;
    exits past T have none)."""

    values: np.ndarray
    usage: np.ndarray
    paths: list[list[tuple[int, int, int]]]

    def bound(self, sj: SlotJobs, prices: np.ndarray) -> float:
        """L(pi) (module docstring)."""
        return float(self.values.sum() - (sj.size[:, None] * prices).sum())


def price_jobs(sj: SlotJobs, prices: np.ndarray, deadline: Deadline) -> Priced | None:
    """Every job's optimal slot schedule under the prices ``prices[g, k]`` (per GPU-slot), with
    the pooled usage of those schedules (the subgradient of L at ``prices``); None when the
    deadline passes during the round (checked per block of jobs: a pass over every job takes
    1-3 CPU-s at paper scale, and L(pi) needs all of them)."""
    cum = np.concatenate([np.zeros((prices.shape[0], 1)), np.cumsum(prices, axis=1)], axis=1)
    n_jobs = len(sj.weight)
    values = np.empty(n_jobs)
    usage = np.zeros((prices.shape[0], sj.slots + 1))
    paths: list[list[tuple[int, int, int]]] = []
    for first in range(0, n_jobs, BLOCK):
        if deadline.expired():
            return None
        rows = np.arange(first, min(n_jobs, first + BLOCK))
        values[rows] = _price_block(sj, cum, rows, paths)
    for job, path in enumerate(paths):
        for g, k, o in path:
            for a, b, part in spans(sj, job, g, k, o):
                usage[g, a] += sj.tasks[job] * part
                usage[g, b] -= sj.tasks[job] * part
    return Priced(values, np.cumsum(usage, axis=1)[:, :sj.slots], paths)


def _price_block(sj: SlotJobs, cum: np.ndarray, rows: np.ndarray,
                 paths: list[list[tuple[int, int, int]]]) -> np.ndarray:
    """The DP of :func:`price_jobs` for the jobs ``rows`` at once; appends their optimal paths
    to ``paths`` and returns their values.

    State F_r[b]: least pi-cost of rounds 0..r-1 with round r released at slot b (the barrier,
    (7)); G_r = prefix minimum of F_r (round r may start any slot k >= b); a round started at slot
    k on class g costs K_n times the cheapest offset option's pi-cost (:func:`start_costs`; its K_n
    tasks take the cheapest, the same one) and releases round r+1 at k + q[n, g]. The last round adds w_n max(k delta + D[n, g],
    LBC_n); a barrier b >= T adds the exit w_n max((b + (rounds left - 1) q_min) delta + D_min,
    LBC_n) (no prices past T: the rest runs back to back at its fastest).
    """
    T, n_cls = sj.slots, cum.shape[0]
    stp = sj.step[rows]
    length = T + int(stp.max()) + 1
    ks = np.arange(T)
    start_cost, option = start_costs(sj, cum, rows)
    n = len(rows)
    w, lbc, rounds = sj.weight[rows], sj.lbc[rows], sj.rounds[rows]
    qmin = stp.min(axis=1)
    dmin = sj.finish[rows].min(axis=1)
    best = np.full(n, np.inf)
    ending: list[tuple[int, int, int] | None] = [None] * n   # (round, class or -1, slot)
    f = np.where(np.arange(length)[None, :] >= sj.arrival[rows, None], 0.0, np.inf)
    came_from: list[tuple[np.ndarray, np.ndarray]] = []      # per round: (argmin b of G, class)
    last_class = np.zeros((n, length), dtype=np.int8)
    times = ks * sj.delta
    for r in range(int(rounds.max())):
        g_val, g_arg = _prefix_min(f)
        came_from.append((g_arg, last_class))
        live = r < rounds
        # exit: released at b >= T, the rest at its fastest, unpriced
        tail = np.arange(T, length)[None, :]
        exit_cost = g_val[:, T:] + w[:, None] * np.maximum(
            (tail + (rounds - r - 1)[:, None] * qmin[:, None]) * sj.delta + dmin[:, None],
            lbc[:, None])
        at = exit_cost.argmin(axis=1)
        val = exit_cost[np.arange(n), at]
        for i in np.flatnonzero(live & (val < best)).tolist():
            best[i], ending[i] = val[i], (r, -1, T + int(at[i]))
        last = live & (r == rounds - 1)
        f = np.full((n, length), np.inf)
        last_class = np.zeros((n, length), dtype=np.int8)
        for g in range(n_cls):
            h = g_val[:, :T] + start_cost[g]
            if last.any():
                fin = h + w[:, None] * np.maximum(times[None, :] + sj.finish[rows, g, None],
                                                  lbc[:, None])
                at = fin.argmin(axis=1)
                val = fin[np.arange(n), at]
                for i in np.flatnonzero(last & (val < best)).tolist():
                    best[i], ending[i] = val[i], (r, g, int(at[i]))
            shifted = np.full((n, length), np.inf)
            cols = ks[None, :] + stp[:, g, None]
            np.put_along_axis(shifted, cols, h, axis=1)
            better = shifted < f
            f = np.where(better, shifted, f)
            last_class[better] = g
    for i in range(n):
        path = _trace(sj, int(rows[i]), ending[i], came_from, i)
        paths.append([(g, k, int(option[g][i, k])) for g, k in path])
    return best


def start_costs(sj: SlotJobs, cum: np.ndarray, rows: np.ndarray
                ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per class g, the pi-cost ``[i, k]`` of the K_n tasks of job ``rows[i]`` started in slot k
    on class g, and which offset option (:func:`spans`) attains it: the least over the task's
    offsets f in [0, 1) inside the slot of sum_j pi[g, j] |[k + f, k + f + p + rho) & [j, j + 1)|,
    piecewise linear in f with breaks at 1 - rho, so attained at f = 0, 1 - rho or 1 (the limit):
    options 0, 1, 2 (module docstring, the energy rows). ``cum`` = prefix sums of the prices."""
    T = sj.slots
    occ, rest = sj.occupy[rows], sj.rest[rows]
    pad = int(occ.max()) + 3
    cum_x = np.concatenate([cum, np.repeat(cum[:, -1:], pad, axis=1)], axis=1)
    price = np.concatenate([np.diff(cum, axis=1), np.zeros((cum.shape[0], pad + 1))], axis=1)
    ks = np.arange(T)[None, :]
    costs, options = [], []
    for g in range(cum.shape[0]):
        p, rho, c, pi = occ[:, g, None], rest[:, g, None], cum_x[g], price[g]
        inner = c[ks + p + 1] - c[ks + 1]            # whole slots k+1 .. k+p
        each = np.stack([c[ks + p] - c[ks] + rho * pi[ks + p],   # f = 0
                         rho * pi[ks] + inner,                   # f = 1 - rho
                         inner + rho * pi[ks + p + 1]])          # f -> 1
        options.append(each.argmin(axis=0).astype(np.int8))
        costs.append(sj.tasks[rows, None] * each.min(axis=0))
    return costs, options


def spans(sj: SlotJobs, job: int, g: int, k: int, option: int) -> list[tuple[int, int, float]]:
    """The GPU-slots one task of ``job`` started in slot k on class g uses under offset
    ``option`` (:func:`start_costs`: 0, the slot's start; 1, its T^c ends at a slot's end; 2, the
    next slot's start), as ``(first, end, share)``: slots [first, end) at ``share`` of a slot
    each, clipped at T (no capacity past it)."""
    p, rho, T = int(sj.occupy[job, g]), float(sj.rest[job, g]), sj.slots
    whole, part = ((k, k + p), k + p) if option == 0 else (
        ((k + 1, k + p + 1), k) if option == 1 else ((k + 1, k + p + 1), k + p + 1))
    out = [(min(whole[0], T), min(whole[1], T), 1.0), (min(part, T), min(part + 1, T), rho)]
    return [(a, b, share) for a, b, share in out if b > a and share > 0.0]


def _prefix_min(f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise prefix minimum of ``f`` and, per position, the (latest) position attaining it."""
    val = np.minimum.accumulate(f, axis=1)
    pos = np.where(f <= val, np.arange(f.shape[1], dtype=np.int32)[None, :], 0)
    return val, np.maximum.accumulate(pos, axis=1)


def _trace(sj: SlotJobs, job: int, ending: tuple[int, int, int] | None,
           came_from: list[tuple[np.ndarray, np.ndarray]], i: int) -> list[tuple[int, int]]:
    """Job ``job``'s optimal DP path, walked back from ``ending``: its priced rounds'
    (class, start slot), first round first."""
    assert ending is not None, "every job has a path (the exit at the horizon at least)"
    path: list[tuple[int, int]] = []
    r, g, k = ending
    if g < 0:   # exit: released at slot k >= T; step back to the round that released it
        if r == 0:
            return path
        g_arg, cls = came_from[r]
        b = int(g_arg[i, k])
        r, g, k = r - 1, int(cls[i, b]), b - int(sj.step[job, int(cls[i, b])])
    while True:
        path.append((g, k))
        if r == 0:
            return path[::-1]
        g_arg, cls = came_from[r]
        b = int(g_arg[i, k])
        g = int(cls[i, b])
        r, k = r - 1, b - int(sj.step[job, g])


#: Intervals of the fluid LP whose capacity duals start the multipliers (None: start at 0).
FLUID_START = 100
#: The successive (slots, master intervals) grids of :func:`colgen_bound`: each is warm-started
#: from the best prices of the one before, and each pricing round on any of them is a bound.
COLGEN_GRIDS = ((4000, 200), (8000, 400))
#: A pricing round on a grid twice as fine takes about this many times as long.
GRID_GROWTH = 2.0
#: A finer grid is started when the time left holds this many of its pricing rounds: warm-started
#: from the last grid's best prices, its first rounds already gain from the finer rounding.
FINER_ROUNDS = 3
#: Wentges' smoothing: the prices priced are SMOOTH x the best-bound prices + (1 - SMOOTH) x the
#: master's duals.
SMOOTH = 0.5
#: Relative gap between the restricted master and the best bound at which a grid stops.
CG_TOLERANCE = 1e-5


def colgen_bound(instance: Instance, *, deadline: Deadline, seed: int = 0,
                 grids: tuple[tuple[int, int], ...] = COLGEN_GRIDS,
                 fluid_intervals: int | None = FLUID_START,
                 max_iterations: int | None = None) -> Outcome:
    """Column generation over per-job slot schedules (Dantzig-Wolfe; module docstring) on ever
    finer grids, with the Lagrangian bound L(pi) of every pricing round (any-time; Farley 1990,
    Lübbecke & Desrosiers 2005, "Selected topics in column generation", Oper. Res. 53, §2.2).

    On each grid (:func:`_colgen_grid`) the master is min sum_{n, c} cost_c lambda_c,
    sum_c lambda_c = 1 per job n, sum_{n, c} u_c[g, t] lambda_c <= |g| (slots in t) per class g
    and master interval t (u_c: GPU-slots of class g held in t by column c; the slot capacity
    summed over t, a relaxation of it), lambda >= 0. A column is one job's slot schedule from
    :func:`price_jobs` (cost: its w_n C_n term), plus per job the schedule that starts at T (no
    capacity: keeps the master feasible). The first grid starts from the fluid LP's capacity
    prices (:func:`~optsched.solvers.hetero_gpu.bounds.fluid_lp_prices`), a finer one from the
    best prices of the last (re-gridded per second).

    Returns max(best L(pi) of any grid, the fluid LP's value, sum_n w_n LBC_n): valid whenever it
    stops. Status ``optimal`` when every grid's master met its best bound within
    :data:`CG_TOLERANCE` (the Dantzig-Wolfe bound of the finest grid), else ``time_limit``
    (``info["stopped"]``: the deadline, the iteration cap ``max_iterations`` per grid, or a grid
    not started for lack of time). Its ``guide`` (:attr:`~optsched.result.Outcome.guide`, for
    :func:`~optsched.solvers.hetero_gpu.search.improve`) is :meth:`Master.guide` of the finest grid
    whose master converged (of the last solved one when none did; None when no master was solved).
    """
    from optsched.solvers.hetero_gpu.bounds import list_horizon

    inst = instance
    horizon = list_horizon(inst)
    lbc_total = float(sum(j.weight * c for j, c in zip(inst.jobs, _lbc(inst))))
    best = lbc_total
    info: dict = {"bound": "completion_lower_bounds", "grids": []}
    prices: tuple[float, np.ndarray] | None = None   # (slot length, prices per GPU-slot)
    guide: Guide | None = None
    per_round = 0.0
    for slots, intervals in grids:
        left = deadline.remaining()
        if left is not None and left < GRID_GROWTH * FINER_ROUNDS * per_round:
            info["stopped"] = f"deadline: {left:.1f} s left for the {slots}-slot grid"
            break
        began = time.perf_counter()
        per = max(1, slots // intervals)
        sj = slot_jobs(inst, horizon / (per * intervals), per * intervals)
        if prices is None:
            start = np.zeros((len(sj.size), sj.slots))
            if fluid_intervals and not deadline.expired():
                fluid = _fluid_start(inst, horizon, fluid_intervals, sj, deadline, seed)
                if fluid is not None:
                    info["fluid"], start = fluid
                    if fluid[0] > best:
                        best, info["bound"] = fluid[0], f"fluid LP, {fluid_intervals} intervals"
        else:
            start = _regrid(*prices, sj)
        run = _colgen_grid(sj, per, intervals, start, deadline, max_iterations)
        last_s = time.perf_counter() - began
        per_round = last_s / max(1, run.iterations)
        info["grids"].append({"slots": sj.slots, "delta": sj.delta, "intervals": intervals,
                              "bound": run.best,
                              "iterations": run.iterations, "columns": run.columns,
                              "master": run.master, "seconds": last_s})
        if run.best > best:
            best, info["bound"] = run.best, f"column generation, {sj.slots} slots"
        if run.prices is not None:
            prices = (sj.delta, run.prices)
        if run.guide is not None and (run.stopped is None or guide is None):
            # a grid cut short keeps the last converged master's
            guide = replace(run.guide, prices=gpu_prices(inst, sj, run.prices))
        if run.stopped:
            info["stopped"] = run.stopped
            break
    status = SolveStatus.TIME_LIMIT if "stopped" in info else SolveStatus.OPTIMAL
    return Outcome(None, status, best, info, guide=guide)


def gpu_prices(inst: Instance, sj: SlotJobs, prices: np.ndarray | None) -> GpuPrices | None:
    """``prices[g, k]`` (per GPU-slot of class g) as the :class:`GpuPrices` of every GPU."""
    from optsched.solvers.hetero_gpu.bounds import gpu_classes

    if prices is None:
        return None
    row = np.zeros(inst.n_gpus, dtype=np.int64)
    for g, members in enumerate(gpu_classes(inst)):
        row[list(members)] = g
    cum = np.concatenate([np.zeros((prices.shape[0], 1)), np.cumsum(prices, axis=1)], axis=1)
    return GpuPrices(sj.delta, cum, row)


def _lbc(inst: Instance) -> list[float]:
    from optsched.models import hetero_gpu as hm

    return hm.completion_lower_bounds(inst)


@dataclass
class GridRun:
    """What :func:`_colgen_grid` found on one grid."""

    best: float = -math.inf
    prices: np.ndarray | None = None
    iterations: int = 0
    columns: int = 0
    master: float | None = None
    stopped: str | None = None
    guide: Guide | None = None


def _colgen_grid(sj: SlotJobs, per: int, intervals: int, prices: np.ndarray, deadline: Deadline,
                 max_iterations: int | None) -> GridRun:
    """Column generation on one grid (:func:`colgen_bound`): price at pi = SMOOTH pi_best +
    (1 - SMOOTH) pi_master (the first round at ``prices``), keep the best L(pi), add every job's
    new schedule as a column, re-solve the master, until the master's optimum is within
    :data:`CG_TOLERANCE` of the best L(pi) or the deadline / ``max_iterations`` stops it."""
    run = GridRun()
    master = Master(sj, per, intervals)
    while True:
        if deadline.expired():
            run.stopped = "deadline"
            break
        if max_iterations is not None and run.iterations >= max_iterations:
            run.stopped = f"iteration cap {max_iterations}"
            break
        priced = price_jobs(sj, prices, deadline)
        if priced is None:
            run.stopped = "deadline: pricing"
            break
        run.iterations += 1
        value = priced.bound(sj, prices)
        value -= MARGIN * abs(value)
        if value > run.best:
            run.best, run.prices = value, prices
        master.add(priced, prices)
        run.columns = master.columns
        solved = master.solve(deadline)
        if solved is None:
            run.stopped = "deadline: master LP"
            break
        run.master, duals = solved
        run.guide = master.guide()
        if run.master - run.best <= CG_TOLERANCE * abs(run.best):
            break
        assert run.prices is not None
        prices = SMOOTH * run.prices + (1 - SMOOTH) * duals
    return run


def _regrid(delta: float, prices: np.ndarray, sj: SlotJobs) -> np.ndarray:
    """Prices per GPU-slot of slot length ``delta`` moved onto the slots of ``sj`` (the same
    price per GPU-second; past the old grid's end, 0)."""
    edges_old = np.arange(prices.shape[1] + 1) * delta
    cum = np.concatenate([np.zeros((prices.shape[0], 1)), np.cumsum(prices, axis=1)], axis=1)
    edges = np.arange(sj.slots + 1) * sj.delta
    at = np.array([np.interp(edges, edges_old, c) for c in cum])
    return np.clip(np.diff(at, axis=1), 0.0, None)


def _fluid_start(inst: Instance, horizon: float, intervals: int, sj: SlotJobs,
                 deadline: Deadline, seed: int) -> tuple[float, np.ndarray] | None:
    """The fluid LP's value and its capacity prices integrated over the slots (per GPU-slot)."""
    from optsched.solvers.hetero_gpu.bounds import fluid_lp_prices, grid

    points = grid(horizon, intervals)
    out = fluid_lp_prices(inst, points, deadline=deadline, seed=seed)
    if out is None:
        return None
    value, density = out
    cum = np.concatenate([np.zeros((density.shape[0], 1)),
                          np.cumsum(density * np.diff(points)[None, :], axis=1)], axis=1)
    edges = np.arange(sj.slots + 1) * sj.delta
    at = np.array([np.interp(edges, points, c) for c in cum])
    return value, np.clip(np.diff(at, axis=1), 0.0, None)


@dataclass(frozen=True)
class Guide:
    """What :func:`colgen_bound` hands to :func:`~optsched.solvers.hetero_gpu.search.improve`
    (:attr:`~optsched.result.Outcome.guide`): per job n, the column that carries the most weight
    lambda in the last master LP solved. A schedule of the relaxation, not of Hare_Sched: a
    priority (and a GPU class per round) for Algorithm 1's list scheduling (the "LP-based
    priority" of price-and-branch heuristics)."""

    starts: np.ndarray    # [n, r] start time of round r (past the column's end: T delta + r)
    classes: np.ndarray   # [n, r] its GPU class (index of bounds.gpu_classes; -1: none)
    prices: GpuPrices | None = None   # the grid's best capacity prices, per GPU


class Master:
    """The restricted master LP of :func:`colgen_bound` (rows: one convexity row per job, then
    one capacity row per class and master interval)."""

    def __init__(self, sj: SlotJobs, per: int, intervals: int):
        from optsched.solvers.highs import ArrayModel

        self.sj, self.per, self.intervals = sj, per, intervals
        n_jobs, n_cls = len(sj.weight), len(sj.size)
        self.lp = ArrayModel(n_jobs + n_cls * intervals,
                             np.concatenate([np.ones(n_jobs), np.full(n_cls * intervals, -np.inf)]),
                             np.concatenate([np.ones(n_jobs), np.repeat(sj.size * per, intervals)]))
        self.seen: set[tuple] = set()
        self.columns = 0
        self.paths: list[tuple[int, list[tuple[int, int, int]]]] = [(n, []) for n in range(n_jobs)]
        self.x: np.ndarray | None = None
        late = sj.slots + (sj.rounds - 1) * sj.step.min(axis=1)
        cost = sj.weight * np.maximum(late * sj.delta + sj.finish.min(axis=1), sj.lbc)
        self.lp.add_columns(cost=cost, lo=np.zeros(n_jobs), hi=np.full(n_jobs, np.inf),
                            starts=np.arange(n_jobs), rows=np.arange(n_jobs),
                            values=np.ones(n_jobs))

    def add(self, priced: Priced, prices: np.ndarray) -> None:
        """Each job's schedule in ``priced`` as a column (unless the master has it)."""
        sj, n_jobs = self.sj, len(self.sj.weight)
        cum = np.concatenate([np.zeros((prices.shape[0], 1)), np.cumsum(prices, axis=1)], axis=1)
        cost: list[float] = []
        starts: list[int] = []
        rows: list[int] = []
        values: list[float] = []
        for job, path in enumerate(priced.paths):
            key = (job, tuple(path))
            if not path or key in self.seen:
                continue
            self.seen.add(key)
            self.paths.append((job, path))
            held: dict[int, float] = {}
            paid = 0.0
            for g, k, o in path:
                for a, b, share in spans(sj, job, g, k, o):
                    paid += sj.tasks[job] * share * (cum[g, b] - cum[g, a])
                    for t in range(a // self.per, -(-b // self.per)):
                        inside = min(b, (t + 1) * self.per) - max(a, t * self.per)
                        row = n_jobs + g * self.intervals + t
                        held[row] = held.get(row, 0.0) + sj.tasks[job] * share * inside
            cost.append(priced.values[job] - paid)
            starts.append(len(rows))
            rows += [job, *held]
            values += [1.0, *held.values()]
        if cost:
            self.lp.add_columns(cost=cost, lo=np.zeros(len(cost)), hi=np.full(len(cost), np.inf),
                                starts=starts, rows=rows, values=values)
            self.columns += len(cost)

    def guide(self) -> Guide | None:
        """The :class:`Guide` of the last solution: each job's column that carries the most weight
        lambda (None before a solve)."""
        if self.x is None:
            return None
        sj = self.sj
        n_jobs, top = len(sj.weight), int(sj.rounds.max())
        weight = np.full(n_jobs, -1.0)
        starts = sj.slots * sj.delta + np.tile(np.arange(top, dtype=float), (n_jobs, 1))
        classes = np.full((n_jobs, top), -1, dtype=np.int64)
        for (job, path), lam in zip(self.paths, self.x):
            if lam > weight[job]:
                weight[job] = lam
                starts[job] = sj.slots * sj.delta + np.arange(top)
                starts[job, :len(path)] = [k * sj.delta for _, k, _ in path]
                classes[job] = -1
                classes[job, :len(path)] = [g for g, _, _ in path]
        return Guide(starts, classes)

    def solve(self, deadline: Deadline) -> tuple[float, np.ndarray] | None:
        """The master's optimum and its capacity prices per slot (None: not solved in time)."""
        rep = self.lp.solve(deadline=deadline)
        if rep.status is not SolveStatus.OPTIMAL or rep.row_dual is None:
            return None
        self.x = rep.x
        n_jobs = len(self.sj.weight)
        dual = np.clip(-rep.row_dual[n_jobs:], 0.0, None).reshape(len(self.sj.size), self.intervals)
        return rep.objective, np.repeat(dual, self.per, axis=1)
