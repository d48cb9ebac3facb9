"""Hare's Algorithm 1 (Chen et al., HPDC'22, Sec. 5.2; digest §4.1) and the relaxations feeding it.

Algorithm 1 takes the relaxed starts x̂ of Hare_Sched_RL, sorts tasks by the "middle completion
time" H_i = x̂_i + ½ max_m T^c_i,m (line 3–4) and list-schedules them in that order, each on the
earliest-available GPU (line 12), after its arrival or its previous round's barrier (lines 7–10).
"""

from __future__ import annotations

import heapq
from itertools import combinations

import numpy as np
import pyomo.environ as pyo

from optsched import tolerance
from optsched.models import hetero_gpu as hm
from optsched.problems.hetero_gpu import Instance, Schedule, TaskRun
from optsched.solvers.highs import solve_model

#: Above this many tasks ``hare`` takes x̂ from the aggregate LP instead of the RL MILP.
RL_MAX_TASKS = 30


def list_schedule(inst: Instance, xhat: dict, *, assign: str = "earliest_available",
                  gpu_tie: str = "fastest", phi0=None) -> Schedule:
    """Algorithm 1, lines 1–18, given x̂ (digest §4.1).

    Parameters
    ----------
    xhat
        Relaxed start x̂_i of every task ``(n, r, k)``.
    assign
        ``earliest_available`` (paper, line 12) or ``earliest_finish`` (digest §4.2 variant).
    gpu_tie
        Ties of line 12: ``fastest`` (smaller T^c first, then index) or ``index``.
    phi0
        Initial GPU availability φ_m (line 2; zeros in the paper).

    Sort key (H, a, n, r, k); a precedence-guarded ready queue replaces the literal loop so that a
    round is never placed before its predecessor (identical to the literal loop whenever π is
    precedence-consistent, which the RL's (7) guarantees for per-job times; digest §4.1).
    """
    tc, ts = inst.tc, inst.ts
    phi = np.zeros(inst.n_gpus) if phi0 is None else np.array(phi0, dtype=float)
    hmax = tc.max(axis=1) / 2

    def key(n, r, k):
        return (xhat[n, r, k] + hmax[n], inst.jobs[n].arrival, n, r, k)  # line 3: H_i

    ready = [key(n, 0, k) for n, j in enumerate(inst.jobs) for k in range(j.tasks_per_round)]
    heapq.heapify(ready)
    barrier = [j.arrival for j in inst.jobs]  # t_i of the current round of each job (lines 7–10)
    round_end = [0.0] * len(inst.jobs)
    left = [j.tasks_per_round for j in inst.jobs]
    runs = []
    while ready:
        _, _, n, r, k = heapq.heappop(ready)  # line 5, in π order
        t = barrier[n]
        g = _choose_gpu(phi, tc[n], t, assign, gpu_tie)  # line 12
        start = max(t, phi[g])  # line 13
        phi[g] = start + tc[n, g]  # line 16: sync does not block the GPU
        round_end[n] = max(round_end[n], phi[g] + ts[n, g])
        runs.append(TaskRun(n, r, k, g, float(start)))
        left[n] -= 1
        if left[n] == 0 and r + 1 < inst.jobs[n].rounds:  # round r complete: release round r+1
            barrier[n], round_end[n] = round_end[n], 0.0
            left[n] = inst.jobs[n].tasks_per_round
            for kk in range(left[n]):
                heapq.heappush(ready, key(n, r + 1, kk))
    return Schedule(tuple(runs))


def _choose_gpu(phi: np.ndarray, tc_row: np.ndarray, ready: float, assign: str, tie: str) -> int:
    if assign == "earliest_finish":
        finish = np.maximum(phi, ready) + tc_row
        return int(np.flatnonzero(finish == finish.min())[0])
    candidates = np.flatnonzero(phi == phi.min())
    if tie == "index" or len(candidates) == 1:
        return int(candidates[0])
    return int(candidates[np.argmin(tc_row[candidates])])


def rl_starts(inst: Instance, mode: str = "paper_full", time_limit: float | None = None,
              seed: int = 0, max_rounds: int = 50) -> tuple[dict, dict]:
    """Solve Hare_Sched_RL (models.hetero_gpu.build_rl) and return (x̂, info).

    ``mode="subsets"`` adds violated prefix inequalities (9S) in an outer loop of MIP solves: per
    GPU, sort the tasks the RL put there by x̂ + T^c and check every prefix (Queyranne's
    separation; digest §3.5), until none is violated.
    """
    m = hm.build_rl(inst, mode)
    info = {"relaxation": mode, "rl_solves": 0}
    for _ in range(max_rounds):
        rep = solve_model(m, time_limit=time_limit, seed=seed)
        info.update(rl_solves=info["rl_solves"] + 1, rl_status=rep.status.value,
                    rl_objective=rep.objective, rl_bound=rep.bound)
        if mode != "subsets" or not rep.has_solution or not _add_violated_prefixes(m, inst):
            break
    if not rep.has_solution:
        return {}, info
    return hm.relaxed_starts(inst, m), info


def _add_violated_prefixes(m, inst: Instance) -> bool:
    added = False
    for g in range(inst.n_gpus):
        on_g = [i for i in inst.tasks if pyo.value(m.y[(*i, g)]) > 0.5]
        on_g.sort(key=lambda i: pyo.value(m.x[i]) + inst.tc[i[0], g])
        for size in range(3, len(on_g) + 1):
            prefix = on_g[:size]
            lhs = sum(inst.tc[i[0], g] * pyo.value(m.x[i]) for i in prefix)
            rhs = sum(inst.tc[i[0], g] * inst.tc[j[0], g] for i, j in combinations(prefix, 2))
            if not tolerance.at_least(lhs, rhs):
                hm.add_subset_cut(m, inst, prefix, g)
                added = True
    return added


def aggregate_lp(inst: Instance, time_limit: float | None = None, seed: int = 0,
                 max_rounds: int = 60, cuts_per_round: int = 8) -> tuple[dict, float, dict]:
    """Cutting-plane solve of models.hetero_gpu.build_aggregate_lp: returns (x̂, LP value, info).

    The model is built once and grows by the cuts found; each round solves it with the HSSW cuts so far (every such LP is a relaxation, so its
    value is a valid lower bound), then separates: sort rounds by X̂ + p and check every prefix (the
    HSSW separation; a round's K_n identical tasks enter a prefix together, since the violation is
    concave in how many of them are taken). x̂_i of a task is its round's X̂.
    """
    m = hm.build_aggregate_lp(inst)
    info = {"relaxation": "aggregate_lp", "lp_solves": 0, "converged": False, "cuts": 0}
    value, starts = 0.0, {}
    for _ in range(max_rounds):
        rep = solve_model(m, time_limit=time_limit, seed=seed)  # a fresh HiGHS on the grown model
        info["lp_solves"] += 1
        if not rep.has_solution:
            break
        value = rep.objective
        starts = {g: float(pyo.value(m.X[g])) for g in m.R}
        new = _violated_hssw(inst, starts, cuts_per_round)
        if not new:
            info["converged"] = True
            break
        for subset in new:
            hm.add_hssw_cut(m, inst, subset)
        info["cuts"] += len(new)
    xhat = {(n, r, k): starts.get((n, r), inst.jobs[n].arrival) for n, r, k in inst.tasks}
    return xhat, value, info


def _violated_hssw(inst: Instance, starts: dict, limit: int) -> list[list[tuple[int, int]]]:
    groups = sorted(starts, key=lambda g: (starts[g] + min(inst.jobs[g[0]].train_time), g))
    p = np.array([min(inst.jobs[n].train_time) for n, _ in groups])
    c = np.array([inst.jobs[n].tasks_per_round for n, _ in groups], dtype=float)
    x = np.array([starts[g] for g in groups])
    lhs = np.cumsum(c * p * x)
    rhs = np.cumsum(c * p) ** 2 / (2 * inst.n_gpus) - np.cumsum(c * p * p) / 2
    violation = rhs - lhs
    bad = np.flatnonzero([not tolerance.at_least(a, b) for a, b in zip(lhs, rhs)])
    if len(bad) == 0:
        return []
    worst = bad[np.argsort(-violation[bad])]
    chosen = sorted(set(worst[:1]) | set(bad[np.linspace(0, len(bad) - 1, limit).astype(int)]))
    return [groups[: i + 1] for i in chosen]


def lemma_checks(inst: Instance, schedule: Schedule, xhat: dict) -> dict:
    """Count tasks violating Lemma 2 (10) and Lemma 3 (14) on a run of Algorithm 1 (digest §5.5).

    ``schedule.runs`` must be in Algorithm 1's processing order π (as :func:`list_schedule` returns
    it). For task π(j) on its GPU m: Lemma 2 claims the load placed on m so far, its own task
    included, is <= 2 H_π(j); Lemma 3 claims the idle time on m before it, x̃ - (earlier load on m),
    is <= α H_π(j).
    """
    load = [0.0] * inst.n_gpus
    lemma2 = lemma3 = 0
    hmax = inst.tc.max(axis=1) / 2
    for run in schedule.runs:
        h = xhat[run.key] + hmax[run.job]
        lemma3 += run.start - load[run.gpu] > inst.alpha * h + 1e-9
        load[run.gpu] += inst.tc[run.job, run.gpu]
        lemma2 += load[run.gpu] > 2 * h + 1e-9
    return {"lemma2_violations": int(lemma2), "lemma3_violations": int(lemma3)}
