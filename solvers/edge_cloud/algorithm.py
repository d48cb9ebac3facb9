"""A_online (Algorithm 1), A_maxsche (Algorithm 2), COST_C (Algorithm 3), COST_D (Algorithm 4) and
the exact distributed placement COST_D* of She et al. (paper 001), on the shared online framework
(:mod:`optsched.solvers.online`).

What lives here is only what is specific to edge-cloud placement: the price functions (7), (8), the
placement subroutines and the conversion to :class:`~optsched.problems.edge_cloud.Run`. The doubling
rounds (tau_i = 2^(i-1), window tau_i+1..tau_{i+1}) and the primal-dual admission loop (admit iff
1 - cost > 0, charge the ledger) come from :mod:`optsched.solvers.online`.

Adapter note: :class:`~optsched.solvers.online.UsageLedger` has one price function for all its
resources, while (7) and (8) have different bases theta_1 (workers) and theta_2 (PSs). A round
therefore keeps two ledgers: the worker ledger (rows ``s * U + u``) is the one the admission loop
sees, the PS ledger (rows ``s * V + v``) is charged by the candidate's ``charge`` callback.

Reconstruction choices (digest §4, §8; the paper's pseudocode is partly garbled):

- prices (7), (8): ``theta^(f/W) - 1`` with ``theta_1 = 2 T S U F_1 + 1``, ``theta_2 = 2 T S V F_2 + 1``;
- every job of round i starts at ``tau_i + 1``; a duration ``d = ceil(R^xi / D_u)`` must end by
  ``tau_{i+1}`` (the paper does not check it);
- eligibility ``rule="paper"``: ``a_j + Delta_js < tau_i`` (COST_C/COST_D line 3); ``rule="model"``:
  ``a_j + Delta_js <= tau_i + 1``, exactly (2i) for a start at ``tau_i + 1``;
- Algorithm 2: ``eta_j`` starts at 0, ``D_u = 1..D_j``, ties of COST_C/COST_D go to COST_C, a strict
  ``>`` keeps the smallest ``D_u`` among equal utilities (so once a cost-0 plan is found, larger
  ``D_u`` cannot win and the loop stops).

Every choice is a field of :class:`AOnlineParams`; the registered variants (``a_online``,
``a_online_dstar``, ``a_online_model``, ``a_online_ect`` and the baseline ``batchsche``) are the one
function :func:`a_online` with the parameter sets :data:`FAITHFUL`, :data:`DSTAR`, :data:`MODEL`,
:data:`ECT` and :data:`BATCHSCHE`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from optsched.deadline import Deadline
from optsched.method import Params, param
from optsched.problems.edge_cloud import Instance, Run, Schedule
from optsched.result import Outcome, SolveStatus
from optsched.solvers.online import (
    BatchResult,
    Candidate,
    UsageLedger,
    doubling_rounds,
    exponential_price,
    next_window,
    primal_dual_admission,
)

#: Round cap of Algorithm 1 (not in the paper: it loops until every job is scheduled).
MAX_ROUNDS = 40
#: Not in the paper: the largest price ledger a round may allocate, servers x (U + V) rows x
#: ``tau_i`` window slots (float64; the two ledgers, their prices and a job's window sums are a
#: few arrays of at most 80 MB each at this bound). A round beyond it admits nothing, so a job
#: that needs a longer window stays unscheduled (status ``unknown``, issue 15). The paper preset
#: (201 servers, U + V <= 20) needs 4020 x 2048 cells up to the window that ends at 2T = 2048.
MAX_LEDGER_CELLS = 10_000_000

Rule = Literal["paper", "model"]
Sort = Literal["paper", "exact"]
CostD = Literal["paper", "exact", "none"]
CostMode = Literal["paper", "exact"]
TieBreak = Literal["paper", "earliest_completion"]
Line3 = Literal["drop", "completion"]
_CHOICES: dict[str, tuple[str, ...]] = {
    "rule": ("paper", "model"), "sort": ("paper", "exact"), "costd": ("paper", "exact", "none"),
    "cost_mode": ("paper", "exact"), "tie_break": ("paper", "earliest_completion"),
    "line3": ("drop", "completion"),
}


@dataclass(frozen=True)
class AOnlineParams(Params):
    """The choices of A_online (Algorithms 1-4; digest §4, §8). The defaults are the algorithm as
    printed (as far as it can be read): the registered ``a_online``.

    >>> AOnlineParams(rule="model").rule
    'model'
    >>> AOnlineParams(rule="exact")
    Traceback (most recent call last):
    ...
    ValueError: rule: unknown 'exact' (known: paper, model)
    """

    rule: Rule = param(
        "paper", "COST_C/COST_D line 3: server s is eligible in round i iff a_j + Delta_js < tau_i "
                 "('paper', as printed); 'model': a_j + Delta_js <= tau_i + 1, exactly (2i) for a "
                 "start at tau_i + 1 (digest §4.1)")
    sort: Sort = param(
        "paper", "COST_C (Alg. 3) line 3: servers sorted by the price lambda(tau_i), read at slot "
                 "tau_i + 1 ('paper'); 'exact': by the true window cost (9) (digest §8 #20)")
    costd: CostD = param(
        "paper", "Alg. 2 line 5 min(COST_C, COST_D): COST_D is Algorithm 4 as reconstructed "
                 "('paper', digest §4.5), the exact separable placement COST_D* ('exact', digest "
                 "§4.6) or absent ('none')")
    cost_mode: CostMode = param(
        "paper", "Alg. 4 lines 11-33: its candidates ranked by the algorithm's bookkeeping cost "
                 "('paper') or by the true cost (9) ('exact'); only with costd='paper'")
    colocate: bool = param(
        True, "Alg. 2 line 5: COST_C (all workers with the PS, p^1) is tried; False drops it, "
              "every job priced and run at p^0 (the BatchSche baseline, Sec. VI)")
    tie_break: TieBreak = param(
        "paper", "Alg. 2 lines 6-8 'if u > eta_j': the strict '>' keeps the smallest D_u among "
                 "equal utilities ('paper'); 'earliest_completion' breaks ties by the earliest "
                 "c_j (not in the paper)")
    line3: Line3 = param(
        "drop", "Alg. 2 line 3 'for c_j = tau_i to tau_{i+1}': 'drop' (COST_C/COST_D line 2 "
                "overwrite c_j = tau_i + d_j, so the loop is dropped and every job of round i "
                "starts at tau_i + 1; digest §8 #14); 'completion': c_j is the completion slot "
                "('the time to complete the job t in (tau_i, tau_{i+1}]', Sec. V-A, and the c_j "
                "argument of COST_C/COST_D): outer loop over c_j ascending, the job runs "
                "c_j - d + 1..c_j inside the window, the strict '>' sends equal utilities to the "
                "earliest completion; with rule='model' eligibility is (2i) at that start. "
                "Implemented with costd 'exact' or 'none'")

    def __post_init__(self) -> None:
        for name, choices in _CHOICES.items():
            value = getattr(self, name)
            if value not in choices:
                raise ValueError(f"{name}: unknown {value!r} (known: {', '.join(choices)})")
        if self.line3 == "completion" and self.costd == "paper":
            raise ValueError("line3: 'completion' needs costd 'exact' or 'none' (COST_D as "
                             "reconstructed is only implemented for the start tau_i + 1)")


#: The algorithm as printed (registered ``a_online``).
FAITHFUL = AOnlineParams()
#: The exact distributed placement COST_D* and the exact server order (``a_online_dstar``).
DSTAR = AOnlineParams(sort="exact", costd="exact", cost_mode="exact")
#: COST_D* with eligibility exactly (2i) (``a_online_model``; also the exact method's incumbent).
MODEL = AOnlineParams(rule="model", sort="exact", costd="exact", cost_mode="exact")
#: The BatchSche baseline: A_online's batching without COST_C (``batchsche``).
BATCHSCHE = AOnlineParams(sort="exact", costd="exact", cost_mode="exact", colocate=False)
#: Equal utilities broken by the earliest completion (``a_online_ect``, not in the paper).
ECT = AOnlineParams(sort="exact", costd="exact", cost_mode="exact", tie_break="earliest_completion")
#: Alg. 2 line 3 read as a loop over the completion slot c_j, eligibility as printed
#: (``a_online_completion``; COST_D*, since COST_D as reconstructed assumes the start tau_i + 1).
COMPLETION = AOnlineParams(sort="exact", costd="exact", cost_mode="exact", line3="completion")
#: The completion-slot reading with eligibility exactly (2i) at the run's start
#: (``a_online_completion_model``).
COMPLETION_MODEL = AOnlineParams(rule="model", sort="exact", costd="exact", cost_mode="exact",
                                 line3="completion")
#: BatchSche under the completion-slot reading (``batchsche_completion``).
BATCHSCHE_COMPLETION = AOnlineParams(sort="exact", costd="exact", cost_mode="exact",
                                     colocate=False, line3="completion")


def thetas(instance: Instance) -> tuple[float, float]:
    """Price bases of (7) and (8): ``2 T S U F_1 + 1`` and ``2 T S V F_2 + 1``."""
    T, S = instance.horizon, instance.n_servers
    return (2 * T * S * instance.n_wtypes * instance.f1 + 1,
            2 * T * S * instance.n_ptypes * instance.f2 + 1)


@dataclass
class JobView:
    """Prices, prefix costs and residuals of one job's worker type and PS type over the window.

    Arrays are servers x window slots; ``lam_sum[s, d-1]`` is the worker price of ``s`` summed over
    the first ``d`` slots, ``w_res[s, d-1]`` the minimum residual over them (same for PS).
    """

    lam: np.ndarray
    mu: np.ndarray
    lam_sum: np.ndarray
    mu_sum: np.ndarray
    w_res: np.ndarray
    p_res: np.ndarray
    elig: np.ndarray


def job_view(instance: Instance, j: int, wl: UsageLedger, pl: UsageLedger, tau: int, rule: str) -> JobView:
    """Read job ``j``'s rows of the two ledgers (the state f, g and prices of Algorithm 2)."""
    job = instance.jobs[j]
    S, U, V = instance.n_servers, instance.n_wtypes, instance.n_ptypes
    rw = np.arange(S) * U + job.worker_type
    rp = np.arange(S) * V + job.ps_type
    lam, mu = wl.prices[rw], pl.prices[rp]
    ready = job.arrival + np.asarray(job.delay)
    elig = ready < tau if rule == "paper" else ready <= tau + 1
    with np.errstate(invalid="ignore"):
        return JobView(lam, mu, np.cumsum(lam, axis=1), np.cumsum(mu, axis=1),
                       np.minimum.accumulate(wl.residual[rw], axis=1),
                       np.minimum.accumulate(pl.residual[rp], axis=1), elig)


def cost_c(instance: Instance, j: int, n: int, view: JobView, sort: str) -> tuple[float, Run | None]:
    """COST_C (Algorithm 3): all ``n`` workers and the PS on one server (xi = 1)."""
    d = math.ceil(instance.jobs[j].required(1) / n)
    L = view.lam.shape[1]
    if d > L:
        return math.inf, None
    ok = view.elig & (view.w_res[:, d - 1] >= n) & (view.p_res[:, d - 1] >= 1)
    if not ok.any():
        return math.inf, None
    exact = n * view.lam_sum[:, d - 1] + view.mu_sum[:, d - 1]
    key = exact if sort == "exact" else n * view.lam[:, 0] + view.mu[:, 0]
    s = int(np.flatnonzero(ok)[np.argmin(key[ok])])
    return float(exact[s]), Run(0, d - 1, s, ((s, n),))


def cost_d_star(instance: Instance, j: int, n: int, view: JobView) -> tuple[float, Run | None]:
    """COST_D* (digest §4.6): for fixed ``n`` and xi = 0 the cost (9) is separable, so filling the
    servers in order of window worker cost and taking the cheapest PS is exact."""
    d = math.ceil(instance.jobs[j].required(0) / n)
    if d > view.lam.shape[1]:
        return math.inf, None
    cap = np.where(view.elig, view.w_res[:, d - 1], 0).astype(int)
    kappa = view.lam_sum[:, d - 1]
    order = [s for s in np.lexsort((np.arange(len(kappa)), kappa)) if cap[s] > 0]
    workers, rem, cost = [], n, 0.0
    for s in order:
        take = min(int(cap[s]), rem)
        workers.append((int(s), take))
        cost += take * float(kappa[s])
        rem -= take
        if rem == 0:
            break
    pok = view.elig & (view.p_res[:, d - 1] >= 1)
    if rem > 0 or not pok.any():
        return math.inf, None
    p = int(np.flatnonzero(pok)[np.argmin(view.mu_sum[pok, d - 1])])
    return cost + float(view.mu_sum[p, d - 1]), Run(0, d - 1, p, tuple(sorted(workers)))


def cost_d_paper(instance: Instance, j: int, n: int, view: JobView, cost_mode: str) -> tuple[float, Run | None]:
    """COST_D (Algorithm 4) as reconstructed in digest §4.5: greedy fill by price at tau+1 (lines
    4-10), Case A: PS on a server ranked before the last used one (lines 13-17), Case B: PS on
    ``s_k1`` and workers pulled onto it while ``delta = lam_k1 - lam_k2 - mu_k1 <= 0`` (lines 18-33).
    ``cost_mode="paper"`` ranks candidates by the algorithm's bookkeeping cost; ``"exact"`` by the
    true cost (9)."""
    d = math.ceil(instance.jobs[j].required(0) / n)
    if d > view.lam.shape[1]:
        return math.inf, None
    lam0, mu0 = view.lam[:, 0], view.mu[:, 0]
    E = [int(s) for s in np.flatnonzero(view.elig)]
    E.sort(key=lambda s: (lam0[s], s))
    r = [int(view.w_res[s, d - 1]) for s in E]
    y, rem = [], n
    for rk in r:                                   # lines 4-7
        y.append(min(max(rk, 0), rem))
        rem -= y[-1]
    if rem > 0:                                    # lines 8-10
        return math.inf, None
    kappa = [float(view.lam_sum[s, d - 1]) for s in E]
    cost_u = sum(yk * kappa[k] for k, yk in enumerate(y) if yk)        # line 11
    z = max(k for k, yk in enumerate(y) if yk)     # line 12 (0-based)
    ps_ok = [view.p_res[s, d - 1] >= 1 for s in E]
    cands = []
    for k in range(z):                             # Case A, lines 13-17
        if ps_ok[k]:
            cands.append((cost_u + float(view.mu_sum[E[k], d - 1]), list(y), k))
    for k1 in range(z, len(E)):                    # Case B, lines 18-33
        if not ps_ok[k1]:
            continue
        free, y2 = r[k1] - y[k1], list(y)
        cost = cost_u + float(view.mu_sum[E[k1], d - 1])                  # line 20
        for k2 in range(z, -1, -1):                # line 21
            if k2 == k1:
                continue
            delta = lam0[E[k1]] - lam0[E[k2]] - mu0[E[k1]]               # line 22
            if not (delta <= 0 and free > 0):
                break                              # line 30
            move = min(y2[k2], free)               # line 23
            if move:
                free -= move
                cost += delta * move               # line 24
                y2[k2] -= move
                y2[k1] += move                     # line 25
        cands.append((cost, y2, k1))
    if not cands:
        return math.inf, None
    if cost_mode == "exact":
        cands = [(_true_cost(view, E, y2, k, d), y2, k) for _, y2, k in cands]
    cost, y2, k = min(cands, key=lambda c: c[0])   # first appended wins ties
    workers = tuple(sorted((E[i], v) for i, v in enumerate(y2) if v))
    return float(cost), Run(0, d - 1, E[k], workers)


def _true_cost(view: JobView, E: list[int], y: list[int], k: int, d: int) -> float:
    return (sum(v * float(view.lam_sum[E[i], d - 1]) for i, v in enumerate(y) if v)
            + float(view.mu_sum[E[k], d - 1]))


def best_placement(instance: Instance, j: int, view: JobView,
                   params: AOnlineParams) -> tuple[float, Run | None]:
    """Lines 3-17 of Algorithm 2 for one job: the plan of maximal utility ``1 - min(COST_C, COST_D)``
    over ``D_u = 1..D_j`` (strict ``>``: the smallest ``D_u`` wins ties). Run slots are offsets."""
    best_cost, best = math.inf, None
    for n in range(1, instance.jobs[j].chunks + 1):
        cc, lc = cost_c(instance, j, n, view, params.sort) if params.colocate else (math.inf, None)
        if params.costd == "exact":
            cd, ld = cost_d_star(instance, j, n, view)
        elif params.costd == "paper":
            cd, ld = cost_d_paper(instance, j, n, view, params.cost_mode)
        else:
            cd, ld = math.inf, None
        mc, plan = (cd, ld) if cd < cc else (cc, lc)   # ties -> COST_C
        if plan is None:
            continue
        if params.tie_break == "paper":
            if mc < best_cost:
                best_cost, best = mc, plan
                if mc <= 0:
                    break                               # utility 1 cannot be beaten
        elif mc < best_cost or (mc == best_cost and best is not None and plan.end < best.end):
            best_cost, best = mc, plan
    return best_cost, best


def completion_placement(instance: Instance, j: int, wl: UsageLedger, pl: UsageLedger, tau: int,
                         params: AOnlineParams) -> tuple[float, Run | None]:
    """Lines 3-17 of Algorithm 2 under ``line3="completion"``: for c_j = tau+1..tau_next (outer,
    ascending) and D_u = 1..D_j (inner), COST_C and COST_D* of the run ``c_j - d + 1..c_j`` (it
    must start inside the window); the strict ``>`` on utility keeps the first plan of minimal
    cost in that loop order (earliest completion, then fewest workers). Run slots are offsets.

    Vectorised over the completion slots: per ``D_u`` and xi, window sums come from prefix sums
    and residual minima from a sliding minimum over ``d`` slots; only servers with capacity of
    the job's types that can become eligible in the window are looked at."""
    job = instance.jobs[j]
    U, V = instance.n_wtypes, instance.n_ptypes
    ready = job.arrival + np.asarray(job.delay, dtype=float)
    L = len(wl.slots)
    can = ready < tau if params.rule == "paper" else ready <= tau + L
    wrows = np.flatnonzero(can & (instance.W[:, job.worker_type] > 0))
    prows = np.flatnonzero(can & (instance.P[:, job.ps_type] > 0))
    crows = np.intersect1d(wrows, prows)
    if len(wrows) == 0 or len(prows) == 0:
        return math.inf, None

    def rows_of(ledger: UsageLedger, rows: np.ndarray, width: int,
                kind: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        idx = rows * width + kind
        prices = ledger.prices[idx]
        csum = np.concatenate([np.zeros((len(rows), 1)), np.cumsum(prices, axis=1)], axis=1)
        # = ledger.residual[idx], computed for these rows only
        return prices, csum, (ledger.capacity[idx][:, None] - ledger.used[idx]).astype(float)

    wl_p, wl_c, wl_r = rows_of(wl, wrows, U, job.worker_type)
    pl_p, pl_c, pl_r = rows_of(pl, prows, V, job.ps_type)
    cw = np.searchsorted(wrows, crows)                 # crows inside wrows / prows
    cp = np.searchsorted(prows, crows)

    def window(csum: np.ndarray, res: list[np.ndarray], d: int, K: int) -> tuple[np.ndarray, np.ndarray]:
        """Window price sums and residual minima over slots k..k+d-1 for the K starts k; ``res``
        is the sparse table of :func:`_min_table` (level i: minima over 2^i slots)."""
        with np.errstate(invalid="ignore"):             # inf prices (zero capacity) -> nan
            sums = np.nan_to_num(csum[:, d:d + K] - csum[:, :K], nan=math.inf)
        level = d.bit_length() - 1
        table, shift = res[level], d - (1 << level)
        return sums, np.minimum(table[:, :K], table[:, shift:shift + K])

    def eligible(rows: np.ndarray, K: int) -> np.ndarray:
        if params.rule == "paper":
            return np.ones((len(rows), K), dtype=bool)
        return ready[rows][:, None] <= (tau + 1 + np.arange(K))[None, :]

    D = job.chunks
    kinds = ([1] if params.colocate and len(crows) else []) + ([] if params.costd == "none" else [0])

    def first_best(Lp: int) -> tuple[float, Run | None]:
        """The loop over the completions at window offsets 0..Lp-1 only."""
        # cost[xi][n-1, e]: cost of the plan with n workers completing at window offset e
        cost = {x: np.full((D, Lp), math.inf) for x in (0, 1)}
        wl_t, pl_t = _min_table(wl_r[:, :Lp]), _min_table(pl_r[:, :Lp])
        keep: dict[tuple[int, int], tuple[int, Any]] = {}   # (xi, n) -> (d, arrays to rebuild)
        for n in range(1, D + 1):
            for xi in kinds:
                d = math.ceil(job.required(xi) / n)
                if d > Lp:
                    continue
                K = Lp - d + 1                              # start offsets 0..Lp-d
                o = np.arange(K)
                lw, wmin = window(wl_c, wl_t, d, K)
                mw, pmin = window(pl_c, pl_t, d, K)
                pok = eligible(prows, K) & (pmin >= 1)
                if xi == 1:
                    ok = pok[cp] & (wmin[cw] >= n) & eligible(crows, K)
                    with np.errstate(invalid="ignore", over="ignore"):
                        exact = n * lw[cw] + mw[cp]
                        key = (exact if params.sort == "exact"
                               else n * wl_p[cw, :K] + pl_p[cp, :K])
                    sbest = np.argmin(np.where(ok, key, math.inf), axis=0)
                    cost[1][n - 1, d - 1:] = np.where(ok.any(axis=0), exact[sbest, o], math.inf)
                    keep[(1, n)] = (d, crows[sbest])
                else:
                    cap = np.where(eligible(wrows, K), np.maximum(wmin, 0), 0)
                    order = np.argsort(lw, axis=0, kind="stable")
                    kap = np.take_along_axis(lw, order, axis=0)
                    cs = np.take_along_axis(cap, order, axis=0)
                    take = np.clip(n - (np.cumsum(cs, axis=0) - cs), 0, cs)
                    with np.errstate(invalid="ignore", over="ignore"):
                        wcost = (take * np.where(take > 0, kap, 0)).sum(axis=0)
                    p = np.argmin(np.where(pok, mw, math.inf), axis=0)
                    feas = (cap.sum(axis=0) >= n) & pok.any(axis=0)
                    cost[0][n - 1, d - 1:] = np.where(feas, wcost + mw[p, o], math.inf)
                    keep[(0, n)] = (d, (order, take, p))
        mc = np.where(cost[0] < cost[1], cost[0], cost[1]).T  # (completion, D_u); ties -> COST_C
        best = float(mc.min()) if mc.size else math.inf
        if not math.isfinite(best):
            return math.inf, None
        e, n1 = (int(v) for v in np.argwhere(mc == best)[0])  # row-major: earliest c_j, then D_u
        n = n1 + 1
        xi = 0 if cost[0][n1, e] < cost[1][n1, e] else 1
        d, arrays = keep[(xi, n)]
        k = e - d + 1                                         # start offset
        if xi == 1:
            sk = int(arrays[k])
            return best, Run(k, e, sk, ((sk, n),))
        order, take, p = arrays
        used = [(int(wrows[order[i, k]]), int(take[i, k])) for i in np.flatnonzero(take[:, k] > 0)]
        return best, Run(k, e, int(prows[p[k]]), tuple(sorted(used)))

    # Prices are >= 0, so a cost-0 plan among the first completions is the first of minimal cost
    # in the whole loop: look at a growing prefix of the window until one is found.
    dmin = min(math.ceil(job.required(xi) / D) for xi in (kinds or [0]))
    Lp = min(L, dmin + 16)
    while True:
        best, run = first_best(Lp)
        if (run is not None and best <= 0) or Lp == L:
            return best, run
        Lp = min(L, 4 * Lp)


def _min_table(res: np.ndarray) -> list[np.ndarray]:
    """Sparse table of sliding minima along axis 1: level i holds ``min(res[:, k:k + 2^i])`` for
    every k with ``k + 2^i <= len``; a window of length d is the minimum of two level
    ``floor(log2 d)`` entries (exact, so the same values as a sliding-minimum filter)."""
    table = [res]
    step = 1
    while 2 * step <= res.shape[1]:
        prev = table[-1]
        table.append(np.minimum(prev[:, :prev.shape[1] - step], prev[:, step:]))
        step *= 2
    return table


def _shift(run: Run, tau: int) -> Run:
    return Run(run.start + tau + 1, run.end + tau + 1, run.ps, run.workers)


def a_maxsche(instance: Instance, batch: list[int], tau: int, tau_next: int,
              params: AOnlineParams, state: dict | None = None, *,
              deadline: Deadline | None = None) -> BatchResult:
    """Algorithm 2 on the window ``tau+1..tau_next`` through the shared primal-dual admission.

    If ``state`` is a dict, the round's final dual values are stored in it: ``eta`` (job ->
    max(0, utility), eq. (6)), ``lam`` and ``mu`` (the prices (7), (8) after the last admission,
    arrays with rows ``s*U+u`` / ``s*V+v`` and one column per window slot).

    ``deadline`` is passed to the shared admission loop, which stops before the next job once it
    has passed (``info["stopped"]``; the jobs not examined are neither admitted nor rejected).
    """
    cells = instance.n_servers * (instance.n_wtypes + instance.n_ptypes) * (tau_next - tau)
    if cells > MAX_LEDGER_CELLS:    # issue 15: memory bound; the round admits nothing
        return BatchResult({}, None, {"accepted": 0, "rejected": len(batch), "priced_out": 0,
                                      "not_ready": 0, "skipped": "MAX_LEDGER_CELLS"})
    th1, th2 = thetas(instance)
    slots = range(tau + 1, tau_next + 1)
    wl = UsageLedger(instance.W.reshape(-1), slots, exponential_price(th1))
    pl = UsageLedger(instance.P.reshape(-1), slots, exponential_price(th2))
    seen: dict[int, float] = {}
    not_ready: list[int] = []

    def best_plan(j: Any, ledger: UsageLedger) -> Candidate | None:
        late = params.line3 == "completion" and params.rule == "model"   # (2i) at the latest start
        view = job_view(instance, j, wl, pl, tau_next - 1 if late else tau, params.rule)
        if not _ready_somewhere(instance, j, view):
            not_ready.append(j)
        if params.line3 == "completion":
            cost, run = completion_placement(instance, j, wl, pl, tau, params)
        else:
            cost, run = best_placement(instance, j, view, params)
        seen[j] = cost
        if run is None:
            return None
        run = _shift(run, tau)
        return Candidate(cost, plan=run, charge=lambda _: _charge(instance, j, run, wl, pl))

    res = primal_dual_admission(batch, weight=lambda j: 1.0, best_plan=best_plan, ledger=wl,
                                deadline=deadline)
    plans = {a.job: a.plan for a in res.admitted}
    if state is not None:
        state.update(eta=dict(res.utility), lam=wl.prices.copy(), mu=pl.prices.copy())
    priced_out = [j for j in res.rejected if math.isfinite(seen[j])]
    last = max((r.end for r in plans.values()), default=None)
    info = {"accepted": len(plans), "rejected": len(res.rejected),
            "priced_out": len(priced_out), "not_ready": len(not_ready)}
    if res.stopped:
        info["stopped"] = True
    return BatchResult(plans, last, info)


def _ready_somewhere(instance: Instance, j: int, view: JobView) -> bool:
    """Some eligible server has type-u_j workers and some has a type-v_j PS (the data is uploaded)."""
    job = instance.jobs[j]
    return bool((view.elig & (instance.W[:, job.worker_type] > 0)).any()
                and (view.elig & (instance.P[:, job.ps_type] > 0)).any())


def _charge(instance: Instance, j: int, run: Run, wl: UsageLedger, pl: UsageLedger) -> None:
    """Line 18 of Algorithm 2: f += y on the run's slots, g += 1 on the PS (prices follow (7), (8))."""
    job = instance.jobs[j]
    rows = [s * instance.n_wtypes + job.worker_type for s, _ in run.workers]
    wl.charge_block(rows, run.start, run.end, [n for _, n in run.workers])
    pl.charge_block([run.ps * instance.n_ptypes + job.ps_type], run.start, run.end, [1])


def a_online(instance: Instance, params: AOnlineParams = FAITHFUL, *, deadline: Deadline,
             seed: int = 0) -> Outcome:
    """A_online (Algorithm 1 with A_maxsche, COST_C and COST_D; She et al., paper 001).

    Doubling rounds: round i decides at ``tau_i = 2^(i-1)`` for the window ``tau_i+1..tau_{i+1}``;
    A_maxsche (Algorithm 2) admits the pending jobs in arrival order while their utility
    ``1 - min_{D_u} min(COST_C, COST_D)`` under the prices (7), (8) is positive; rejected jobs wait
    for the next round.

    Parameters
    ----------
    instance
        The edge_cloud instance (A_online is semi-online: it reads the horizon T for (7), (8)).
    params
        :class:`AOnlineParams`; :data:`FAITHFUL` is the algorithm as printed (``a_online``), the
        other registered variants are :data:`DSTAR`, :data:`MODEL`, :data:`ECT` and
        :data:`BATCHSCHE`.
    deadline
        Checked before every round and every job priced (by the shared framework,
        :mod:`optsched.solvers.online`); when it passes, the call stops with no schedule and
        status ``time_limit``.
    seed
        Unused (deterministic).

    Returns
    -------
    Outcome
        The schedule (one run per job) with status ``feasible`` and the round log in
        ``info["rounds"]`` (accepted / rejected / priced-out / not-ready per round, with totals
        ``info["priced_out"]``, ``info["rejected"]``, ``info["not_ready"]``); no schedule and
        status ``time_limit`` when stopped by the deadline, or ``unknown`` with
        ``info["reason"]`` when a job is still unscheduled after :data:`MAX_ROUNDS` rounds.

    Notes
    -----
    The paper proves no ratio for A_online (it only shows Figs. 3-14), so its ``guarantee`` is
    None. docs/errata.md E1: Fig. 14's "ratio close to 1" is not reproduced (A_online / OPT = 35/6
    on ``tests/data/edge_cloud/fig14_ratio.json``; the doubling rounds and the eligibility rule
    cause it); E2/E3: DRF and Preemptive-with-cost beat A_online at Sec. VI scale; E5: the
    formulas that needed a decision (the fields of :class:`AOnlineParams`).

    Examples
    --------
    >>> from optsched import solve
    >>> from optsched.workloads.edge_cloud import generate
    >>> res = solve(generate("tiny", 0), "a_online")
    >>> res.status.value, res.objective, res.info["params"]["rule"]
    ('feasible', 33.0, 'paper')
    """
    out = doubling_rounds(
        list(range(len(instance.jobs))), arrival=lambda j: instance.jobs[j].arrival,
        schedule_batch=lambda rnd, batch: a_maxsche(instance, batch, rnd.tau, rnd.tau_next, params,
                                                    deadline=deadline),
        window=next_window, max_rounds=MAX_ROUNDS, deadline=deadline)
    log = [{"round": r.round.index, "tau": r.round.tau, "batch": len(r.batch), **r.info}
           for r in out.rounds]
    info: dict[str, Any] = {"rounds": log, "priced_out": sum(r["priced_out"] for r in log),
                            "rejected": sum(r["rejected"] for r in log),
                            "not_ready": sum(r["not_ready"] for r in log)}
    if out.stopped:
        info["stopped"] = (f"deadline: stopped after {len(log)} rounds, "
                           f"{len(out.unscheduled)} of {len(instance.jobs)} jobs unscheduled")
        return Outcome(None, SolveStatus.TIME_LIMIT, info=info)
    if out.unscheduled:
        info["reason"] = (f"a_online: job {out.unscheduled[0]} unscheduled after {len(log)} "
                          f"rounds (MAX_ROUNDS = {MAX_ROUNDS}, MAX_LEDGER_CELLS = "
                          f"{MAX_LEDGER_CELLS})")
        return Outcome(None, SolveStatus.UNKNOWN, info=info)
    runs = [out.plans[j] for j in range(len(instance.jobs))]
    return Outcome(Schedule.single(runs), SolveStatus.FEASIBLE, info=info)


__all__ = ["AOnlineParams", "BATCHSCHE", "BATCHSCHE_COMPLETION", "COMPLETION", "COMPLETION_MODEL",
           "DSTAR", "ECT", "FAITHFUL", "MAX_LEDGER_CELLS", "MAX_ROUNDS", "MODEL",
           "a_maxsche", "a_online", "best_placement", "completion_placement", "cost_c", "cost_d_paper",
           "cost_d_star", "job_view", "thetas"]
