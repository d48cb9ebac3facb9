"""Column generation for edge_cloud (She et al., paper 001): the batch bound of (3)/(4)/(5) and
``colgen_bound``, the paper-scale lower bound on (2) over a server-pool relaxation.

The batch bound (:func:`batch_lp_bound`) solves the LP of the packing program (4) of one
A_online round over all in-window columns, pricing (5a) exactly (:func:`price_column`);
:func:`round_dual` is the weak-duality diagnostic of one A_maxsche round. :func:`colgen_bound`
(ours) prices the paper's packing program with all jobs and flow-time costs over two server pools
(edge, cloud); every pricing round gives a valid Lagrangian bound, so a stop at the deadline is
still a bound. Moved out of :mod:`.bounds` (issue 20), unchanged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from optsched.deadline import Deadline
from optsched.problems.edge_cloud import Instance, Run, Schedule, deadlines, earliest_start, verify
from optsched.result import Outcome, SolveStatus
from optsched.solvers.edge_cloud import algorithm as alg
from optsched.solvers.edge_cloud.bounds import serial_schedule, trivial_bound
from optsched.solvers.edge_cloud.search import list_schedule
from optsched.tolerance import slack

if TYPE_CHECKING:
    from optsched.models.edge_cloud import Column


# ------------------------------------------------------------------ batch bound (one round)
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


def _caps(cap: np.ndarray, L: int) -> np.ndarray:
    return np.repeat(cap.reshape(-1, 1), L, axis=1)



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
    bound is returned, status ``time_limit``. The Outcome's ``guide`` is the last master LP's
    mean start and end slot of every job (:func:`_means`; None when no LP was solved), which
    certify hands to :func:`~optsched.solvers.edge_cloud.search.improve` as list orders.
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
    status, it, means = SolveStatus.TIME_LIMIT, 0, None
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
        means = _means(instance, master, rep.x) if rep.x is not None else means
        if complete:     # no column prices out at the current duals: the LP is optimal
            status, best = SolveStatus.OPTIMAL, max(best, rep.objective)
            break
        if not new:
            break
        master.add(new)
    info.update(iterations=it, columns=len(master.columns), lagrangian=best)
    return Outcome(None, status, _integral(best), info, guide=means)


def _list_start(instance: Instance, deadline: Deadline) -> Schedule:
    """The better of :func:`serial_schedule` and the distributed-aware earliest-completion list
    schedule in arrival order (:func:`~optsched.solvers.edge_cloud.search.list_schedule`): its
    flow sets the per-job deadlines, so the horizon of :func:`colgen_bound`."""
    best = serial_schedule(instance)
    order = sorted(range(len(instance.jobs)), key=lambda j: (instance.jobs[j].arrival, j))
    placer = list_schedule(instance, order, deadline.within(deadline.limit(0.2)))
    if placer is not None:
        listed = Schedule.single([placer.runs[j] for j in range(len(instance.jobs))])
        if verify(instance, listed) < verify(instance, best):
            best = listed
    return best


def _means(instance: Instance, master: _PoolMaster,
           x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The mean start and end slot of every job in the master's LP solution ``x`` (weighted by
    it): :func:`colgen_bound`'s guide, read by the improvement
    (:func:`optsched.solvers.edge_cloud.search.improve`) as list orders."""
    start, end = np.zeros(len(instance.jobs)), np.zeros(len(instance.jobs))
    for col, val in zip(master.columns, x):
        start[col.job] += val * col.start
        end[col.job] += val * col.end
    return start, end


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


__all__ = ["COLGEN_ITERATIONS", "COLGEN_PER_JOB", "MAX_POOL_CELLS", "SMOOTH", "PoolColumn",
           "batch_lp_bound", "colgen_bound", "column_cost", "lagrangian_value", "pool_columns",
           "price_column", "price_pool", "round_dual"]
