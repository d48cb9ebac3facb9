"""The exact method and the lower bound of seed 000 (Zhou et al.), and the serial schedule that
bounds the exact model's horizon.

- :func:`exact`: the time-indexed pattern MILP of (2) / (15) (:func:`optsched.models.
  elastic_cluster.build_exact`, issue 14), each job's start window bounded by the cost of the
  best of FIFO, DRF, compact A_online, :func:`serial_schedule` and :func:`greedy_patterns`, which
  is also HiGHS' MIP start. One deadline covers the heuristics, the model's construction and the
  HiGHS solve; a model over the size caps (:data:`MAX_SCAN` placements to scan,
  :data:`optsched.solvers.highs.MAX_MODEL_TERMS` non-zeros: whatever the deadline, status
  ``feasible``) or too large to build in the time left (status ``time_limit``) is not built, the
  best heuristic schedule returned, and the result is never worse than that schedule.
- :func:`lower_bound`: sum_j w_j (a_j + d_j^min), every job alone in its fastest schedule.

Pyomo, HiGHS and the models are imported inside the functions that use them, so importing the
solvers (to collect the Family) stays cheap.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from optsched.deadline import Deadline
from optsched.problems.elastic_cluster import Instance
from optsched.result import Outcome, SolveStatus
from optsched.solvers.elastic_cluster.placement import fastest_alone, infeasible_outcome


def lower_bound(inst: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """The largest of sum_j w_j (a_j + d_j^min), the fluid bound of every resource and the
    mean-busy-time LP that joins them (:func:`busy_time_lp`).

    Parameters
    ----------
    inst
        The instance.
    deadline
        Checked per job and per configuration tried; the jobs not reached by then count
        w_j (a_j + 1) (every job runs at least one slot), so the value stays a valid bound
        (status ``time_limit``). The resource bounds and the LP run only when time is left;
        an LP whose cutting loop did not converge still gives a valid bound (``time_limit``).
    seed
        Unused.

    Returns
    -------
    Outcome
        No schedule; ``lower_bound`` and status ``optimal`` (the bound's exact value) or
        ``time_limit`` (a weaker valid bound; ``info["stopped"]`` says where); ``info`` gives
        the parts (``alone``, ``resource``, ``busy_lp`` with its cut count).

    Notes
    -----
    Not from the paper. ``alone``: no schedule completes j before its fastest run alone
    (d_j^min from the exact placement on the idle cluster). ``resource``:
    :func:`resource_bound`, a fluid single-machine relaxation per resource; ``busy_lp``: both
    on the same mean busy times (:func:`busy_time_lp`).

    Examples
    --------
    >>> from optsched import generate, solve
    >>> res = solve(generate("elastic_cluster", "tiny", 0), "lower_bound")
    >>> res.status.value, res.lower_bound > 0
    ('optimal', True)
    """
    if (bad := infeasible_outcome(inst)) is not None:
        return bad
    value = 0.0
    fastest = []
    for j, job in enumerate(inst.jobs):
        sub = None if deadline.expired() else fastest_alone(inst, j, deadline)
        if deadline.expired():
            rest = sum(job.weight * (job.arrival + 1) for job in inst.jobs[j:])
            return Outcome(None, SolveStatus.TIME_LIMIT, value + rest, {
                "stopped": f"deadline: d_j^min of {j} of {len(inst.jobs)} jobs; the others "
                           f"count a_j + 1"})
        if sub is None:
            raise ValueError(f"job {j} fits on no server configuration")
        value += job.weight * (job.arrival + sub.duration)
        fastest.append(sub.duration)
    areas = min_areas(inst, deadline)
    fluid = None if areas is None else resource_bound(inst, fastest, deadline, areas=areas)
    if fluid is None or areas is None:
        return Outcome(None, SolveStatus.TIME_LIMIT, value, {
            "alone": value, "stopped": "deadline: before the resource bound"})
    info: dict[str, Any] = {"alone": value, "resource": float(fluid)}
    lp = busy_time_lp(inst, fastest, areas, deadline)
    if lp is not None:
        info.update({"busy_lp": lp[0], "busy_lp_cuts": lp[1], "busy_lp_converged": lp[2]})
    best = max(value, fluid, lp[0] if lp is not None else 0.0)
    if lp is None or not lp[2]:
        info["stopped"] = "deadline: the mean-busy-time LP did not converge"
        return Outcome(None, SolveStatus.TIME_LIMIT, best, info)
    return Outcome(None, SolveStatus.OPTIMAL, best, info)


def min_areas(inst: Instance, deadline: Deadline) -> np.ndarray | None:
    """J x R: the least resource-time (N e_m^r + z_p^r) d of job j's configurations that fit
    (one server for q = 1, the whole cluster for q = 0, ``cap_limit``), or None when the
    deadline expires. Every schedule of j uses at least this much of r (at least one PS)."""
    out = np.zeros((len(inst.jobs), inst.n_res))
    cap, total = inst.cap_limit, inst.cap_limit.sum(axis=0)
    for j in range(len(inst.jobs)):
        if deadline.expired():
            return None
        conf = np.array(inst.configurations(j), dtype=float).reshape(-1, 5)
        m, p, q, n, d = (conf[:, k] for k in range(5))
        need = n[:, None] * inst.e[m.astype(int)]
        if inst.is_ps:
            need = need + inst.z[p.astype(int)]
        one = (need[:, None, :] <= cap[None, :, :]).all(axis=2).any(axis=1)
        fits = np.where(q == 1, one, (need <= total).all(axis=1))
        out[j] = (need[fits] * d[fits, None]).min(axis=0)
    return out


def resource_bound(inst: Instance, fastest: list[int], deadline: Deadline,
                   areas: np.ndarray | None = None, skip: int | None = None) -> float | None:
    """max_r sum_j w_j (M_j^r + d_j^min / 2) over the jobs (all but ``skip``), None when the
    deadline expires first.

    Job j runs its placement at a constant rate for d_j slots from s_j, so its mean busy time is
    M_j = s_j + d_j / 2 and c_j = M_j + d_j / 2 >= M_j + d_j^min / 2. Scaling every job's use of
    resource r down to its least area A_j^r (:func:`min_areas`) keeps each M_j and the total
    rate <= sum_h C_h^r: a preemptive schedule of sizes A^r on one fluid machine of speed
    sum_h C_h^r with release dates a_j. Its sum_j w_j M_j is at least the minimum over Goemans'
    mean-busy-time polytope (Goemans, SODA 1997), which the preemptive WSPT rule attains
    (:func:`mean_busy_times`). Not from the paper (ours)."""
    if areas is None:
        areas = min_areas(inst, deadline)
        if areas is None:
            return None
    jobs = [j for j in range(len(inst.jobs)) if j != skip]
    best = 0.0
    for r in range(inst.n_res):
        speed = float(inst.cap_limit[:, r].sum())
        if speed <= 0:
            continue
        mean = mean_busy_times([inst.jobs[j].arrival for j in jobs], [areas[j, r] for j in jobs],
                               [inst.jobs[j].weight for j in jobs], speed)
        best = max(best, float(sum(inst.jobs[j].weight * (mj + fastest[j] / 2)
                                   for j, mj in zip(jobs, mean))))
    return best


#: Cutting rounds of :func:`busy_time_lp` at most.
BUSY_LP_ROUNDS = 60


def busy_time_lp(inst: Instance, fastest: list[int], areas: np.ndarray,
                 deadline: Deadline) -> tuple[float, int, bool] | None:
    """(value, cuts, converged) of min sum_j w_j (M_j + d_j^min / 2) over the mean busy times M_j
    (M_j = s_j + d_j / 2 for a run from s_j) constrained by M_j >= a_j + d_j^min / 2 and, for
    every resource r (speed sum_h C_h^r, job sizes A^r = :func:`min_areas`) and set S of jobs
    released at or after rho, Goemans' inequality sum_S A_j^r M_j >= A^r(S) rho + A^r(S)^2 /
    (2 speed) -- valid for the scaled fluid schedule of :func:`resource_bound`, which keeps
    every M_j. All resources and the per-job floors constrain the same M, so the value is at
    least both :func:`resource_bound` and the every-job-alone bound. Cuts are separated exactly
    per (r, rho): the most violated S is a prefix of the jobs sorted by M_j. Each LP is solved to
    optimality, so the value after any round is a valid bound; None when the deadline expires
    before the first LP. Not from the paper (ours)."""
    from optsched.models import elastic_cluster as em
    from optsched.solvers.highs import solve_model

    J = len(inst.jobs)
    arrival = np.array([job.arrival for job in inst.jobs], dtype=float)
    tail = [d / 2 for d in fastest]
    m = em.build_busy_lp(inst, [a + t for a, t in zip(arrival, tail)], tail)
    speeds = inst.cap_limit.sum(axis=0)
    value, cuts = None, 0
    for _ in range(BUSY_LP_ROUNDS):
        if deadline.expired():
            break
        rep = solve_model(m, deadline=deadline)
        if rep.status != SolveStatus.OPTIMAL:
            break
        value = rep.objective
        mean = np.array([pyo_value(m.M[j]) for j in range(J)])
        found = _busy_cuts(arrival, areas, speeds, mean)
        if not found:
            return value, cuts, True
        for coef, rhs in found:
            em.add_busy_cut(m, coef, rhs)
        cuts += len(found)
    return None if value is None else (value, cuts, False)


def pyo_value(var) -> float:
    import pyomo.environ as pyo

    return float(pyo.value(var))


def _busy_cuts(arrival: np.ndarray, areas: np.ndarray, speeds: np.ndarray, mean: np.ndarray):
    """The most violated Goemans inequality per (resource, release date rho), if violated."""
    out = []
    for r, speed in enumerate(speeds):
        if speed <= 0:
            continue
        for rho in np.unique(arrival):
            jobs = np.flatnonzero((arrival >= rho) & (areas[:, r] > 0))
            if not jobs.size:
                continue
            jobs = jobs[np.argsort(mean[jobs], kind="stable")]
            size = np.cumsum(areas[jobs, r])
            lhs = np.cumsum(areas[jobs, r] * mean[jobs])
            gap = size * rho + size ** 2 / (2 * speed) - lhs
            k = int(np.argmax(gap))
            if gap[k] > 1e-7 * max(1.0, abs(float(lhs[k]))):
                out.append(({int(j): float(areas[j, r]) for j in jobs[:k + 1]},
                            float(size[k] * rho + size[k] ** 2 / (2 * speed))))
    return out


def mean_busy_times(release, size, weight, speed: float) -> list[float]:
    """Mean busy times of the preemptive WSPT schedule (always run the released job of largest
    weight / size; ties by index) on one machine of the given speed; a job of size 0 has
    M_j = its release date."""
    import heapq

    n = len(size)
    mean = [float(r) for r in release]
    left = [s / speed for s in size]
    todo = sorted((release[j], j) for j in range(n) if size[j] > 0)
    ready: list = []
    t, k = 0.0, 0
    while k < len(todo) or ready:
        if not ready:
            t = max(t, todo[k][0])
        while k < len(todo) and todo[k][0] <= t:
            j = todo[k][1]
            heapq.heappush(ready, (-weight[j] / size[j], j))
            mean[j] = 0.0
            k += 1
        j = ready[0][1]
        end = t + left[j]
        if k < len(todo):
            end = min(end, todo[k][0])
        mean[j] += (end * end - t * t) / 2 * speed / size[j]
        left[j] -= end - t
        if left[j] <= 1e-12 * max(1.0, end):
            heapq.heappop(ready)
        t = end
    return mean


__all__ = ["lower_bound", "mean_busy_times", "resource_bound"]
