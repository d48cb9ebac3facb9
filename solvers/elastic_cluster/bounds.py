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

import itertools
import math
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from optsched.deadline import MIN_SLICE, NEVER, Deadline
from optsched.errors import InfeasibleSchedule
from optsched.problems.elastic_cluster import Instance, Plan, Schedule, verify
from optsched.result import Outcome, SolveStatus
from optsched.solvers.elastic_cluster.aonline import COMPACT, a_online
from optsched.solvers.elastic_cluster.baselines import FifoParams, drf, fifo
from optsched.solvers.elastic_cluster.placement import fastest_alone, infeasible_outcome

if TYPE_CHECKING:
    from optsched.models.elastic_cluster import Pattern

#: Seconds to build the exact model with Pyomo (fixed + per linear term of
#: ``exact_size(...)["terms"]``) and to hand it to HiGHS (Pyomo's translation runs before HiGHS'
#: own time limit starts, so it must be reserved out of the deadline). Measured for the previous
#: configuration MILP (build 3-11 us/term, hand-off 0.1 s + 10-33 us/term) and re-checked on the
#: pattern MILP (16 jobs, 216,064 terms: build 2.8 s = 13 us/term at load 9): the estimate errs
#: on the side of not building.
BUILD_FIXED, BUILD_PER_TERM = 0.05, 15e-6
HANDOFF_FIXED, HANDOFF_PER_TERM = 0.15, 25e-6


def serial_schedule(inst: Instance, deadline: Deadline = NEVER) -> Schedule | None:
    """Every job alone on the idle cluster in its fastest configuration, in (a_j, j) order (None
    when the ``deadline`` expired first)."""
    plans: list[Plan | None] = [None] * len(inst.jobs)
    free = 1
    for j in sorted(range(len(inst.jobs)), key=lambda j: (inst.jobs[j].arrival, j)):
        sub = fastest_alone(inst, j, deadline)
        if deadline.expired():
            return None
        if sub is None:
            raise ValueError(f"job {j} fits on no server configuration")
        start = max(free, inst.jobs[j].arrival)
        plans[j] = Plan(start, sub.duration, sub.worker_type, sub.ps_type, sub.colocated,
                        sub.workers, sub.ps)
        free = start + sub.duration
    return Schedule(tuple(p for p in plans if p is not None))


def exact(inst: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """Optimal schedule of (2) / (15) from the time-indexed pattern MILP (issue 14), gap 0.

    The horizon T_max = ``safe_horizon`` uses the cost of the best of FIFO, DRF, compact A_online
    (each checked by verify) and the serial schedule; that best schedule is also HiGHS' MIP
    start (:func:`~optsched.models.elastic_cluster.set_start`); every step runs within
    ``deadline``.

    Parameters
    ----------
    inst
        The instance.
    deadline
        Bounds the heuristics, the model's construction and the solve. When it expires before
        the model is solved, or the model (:func:`~optsched.models.elastic_cluster.exact_size`)
        is too large to build in the time left, the status is ``time_limit`` and the schedule is
        the best one found (HiGHS' incumbent or the best heuristic's, whichever costs less).
        Whatever the deadline, a model over :data:`MAX_SCAN` placements or
        :data:`~optsched.solvers.highs.MAX_MODEL_TERMS` non-zeros is never built: the best
        heuristic schedule, status ``feasible`` unless the time left ruled it out too
        (``info["size_cap"]`` names the cap).
    seed
        HiGHS' random seed.

    Returns
    -------
    Outcome
        Through :func:`optsched.solvers.highs.report_outcome`: the model's objective in
        ``model_objective``, HiGHS' dual bound as ``lower_bound``; ``info`` adds the horizon, the
        number of binaries and patterns, the build time and the warm start's cost. The schedule
        is never worse than the best heuristic's.

    Notes
    -----
    Exact for the model the family defines (time-indexed, integral slots; dominance of
    :func:`~optsched.models.elastic_cluster.job_patterns`, symmetry of identical servers), tested
    against brute force, against the configuration MILP
    (:func:`~optsched.models.elastic_cluster.build_offline`, the previous ``exact``) and against
    ``exact_cp``. Sec. 3.3 of the paper calls (2) without (2b), (2d) a MILP; it is not (errata
    E4), hence the enumerated placements.

    Examples
    --------
    >>> from optsched import generate, solve
    >>> solve(generate("elastic_cluster", "tiny", 0), "exact", time_limit=60).status.value
    'optimal'
    """
    from optsched.models import elastic_cluster as em
    from optsched.solvers.highs import solve_model, too_large

    if (bad := infeasible_outcome(inst)) is not None:
        return bad
    start = _incumbent(inst, deadline)
    if isinstance(start, Outcome):
        return start
    best, upper = start
    horizon = em.safe_horizon(inst, upper)
    scanned = em.pattern_bound(inst, horizon)
    left = deadline.remaining()
    late = left is not None and SCAN_PER_PLACEMENT * scanned > left / 2
    if scanned > MAX_SCAN or late:
        extra = {"size_cap": f"size cap: MAX_SCAN = {MAX_SCAN} placements"} if scanned > MAX_SCAN else {}
        return _no_model(best, f"size: {scanned} placements to scan (at most {MAX_SCAN}, "
                               f"{SCAN_PER_PLACEMENT:g} s each in half the time left)",
                         late=late, horizon=horizon, warm_start_cost=upper, **extra)
    found = greedy_patterns(inst, horizon, deadline)
    if found is not None and found[1] < upper:
        best, upper = found
    if deadline.expired():
        return _no_model(best, "deadline: expired in the pattern list scheduling",
                         warm_start_cost=upper)
    last = [c - 1 for c in em.latest_completions(inst, upper, _others(inst, deadline))]
    horizon = max(last)
    patterns = em.exact_patterns(inst, last)
    size = em.exact_size(patterns, inst, last)
    build = BUILD_FIXED + BUILD_PER_TERM * size["terms"]
    handoff = HANDOFF_FIXED + HANDOFF_PER_TERM * size["terms"]
    left = deadline.remaining()
    late = left is not None and left < build + handoff + MIN_SLICE
    if (cap := too_large(size["terms"], "the pattern MILP")) is not None:
        return _no_model(best, cap, late=late, size_cap=cap, horizon=horizon,
                         warm_start_cost=upper, **size)
    if late:
        return _no_model(best, f"deadline: the model ({size['binaries']} binaries, "
                               f"{size['terms']} terms, horizon {horizon}) cannot be built and "
                               f"handed to HiGHS in the {left:.3g} s left (estimate "
                               f"{build + handoff:.3g} s)", horizon=horizon, warm_start_cost=upper,
                         **size)
    clock = time.perf_counter()
    m = em.build_exact(inst, last, patterns)
    started = em.set_start(m, inst, best) if best is not None else 0
    built = time.perf_counter() - clock
    left = deadline.remaining()
    limit = None if left is None else max(MIN_SLICE, left - handoff)  # HiGHS' share
    rep = solve_model(m, time_limit=limit, seed=seed, warm_start=started > 0)
    info = {"horizon": horizon, "binaries": len(m.X), "build_s": built, "warm_start_jobs": started,
            "warm_start_cost": upper, "patterns": sum(map(len, patterns.values()))}
    return _better(inst, rep, lambda: em.extract_exact(inst, m), best, upper, info)


#: Wall seconds :func:`greedy_patterns`' local search may take at most (and at most this share
#: of the time left).
SEARCH_S, SEARCH_SHARE = 3.0, 0.1


def greedy_patterns(inst: Instance, horizon: int,
                    deadline: Deadline = NEVER) -> tuple[Schedule, float] | None:
    """A good schedule for :func:`exact`'s start windows and MIP start: list scheduling over the
    non-dominated placements (:func:`~optsched.models.elastic_cluster.job_patterns` with d <=
    ``horizon``) -- jobs in turn, each in the placement and start that complete it first on the
    slots left free -- for three orders (w_j / d_j^min, w_j, a_j), then moves of one job to
    another place in the best order while they improve, within :data:`SEARCH_S` seconds (and
    :data:`SEARCH_SHARE` of the time left). Returns (schedule, verified cost), or None when no
    order gives a schedule verify accepts. Not from the paper (ours)."""
    from optsched.models import elastic_cluster as em

    pats = {j: em.job_patterns(inst, j, horizon - job.arrival + 1, deadline)
            for j, job in enumerate(inst.jobs)}
    if not all(pats.values()):  # the deadline expired (None) or a job has no placement
        return None
    jobs = inst.jobs
    keys = (lambda j: (-jobs[j].weight / pats[j][0].duration, j), lambda j: (-jobs[j].weight, j),
            lambda j: (jobs[j].arrival, j))
    found = [(_list_schedule(inst, pats, order), order)
             for order in (sorted(range(len(jobs)), key=k) for k in keys)]
    (cost, plans), order = min(found, key=lambda x: x[0][0])
    left = deadline.remaining()
    budget = deadline.within(SEARCH_S if left is None else min(SEARCH_S, SEARCH_SHARE * left))
    improved = True
    while improved and not budget.expired():
        improved = False
        for i, k in itertools.permutations(range(len(order)), 2):
            trial = order[:i] + order[i + 1:]
            trial.insert(k, order[i])
            value, trial_plans = _list_schedule(inst, pats, trial)
            if value < cost - 1e-9:
                cost, plans, order, improved = value, trial_plans, trial, True
            if budget.expired():
                break
    schedule = Schedule(tuple(plans[j] for j in range(len(jobs))))
    try:
        return schedule, verify(inst, schedule)
    except InfeasibleSchedule:  # float sums of non-integral loads: verify decides
        return None


def _list_schedule(inst: Instance, pats: dict, order: list[int]) -> tuple[float, dict]:
    """(cost, job -> Plan) of placing the jobs in ``order``, each at its earliest completion."""
    cap = inst.cap_limit.ravel()
    span = max(j.arrival for j in inst.jobs) + sum(p[-1].duration for p in pats.values()) + 1
    load = np.zeros((span + 1, cap.size))
    plans, cost = {}, 0.0
    for j in order:
        a = inst.jobs[j].arrival
        best: tuple[int, Pattern] | None = None
        for pat in pats[j]:
            fits = (load + np.array(pat.use) <= cap).all(axis=1)
            t = _first_run(fits, a, pat.duration)
            if best is None or t + pat.duration < best[0] + best[1].duration:
                best = (t, pat)
        assert best is not None  # every job has a pattern (checked when pats was built)
        t, pat = best
        load[t:t + pat.duration] += np.array(pat.use)
        w, p, q, n, d = pat.config
        plans[j] = Plan(t, d, w, p, q, pat.workers, pat.ps)
        cost += inst.jobs[j].weight * (t + d)
    return cost, plans


def _first_run(fits: np.ndarray, first: int, length: int) -> int:
    """The least t >= first with fits[t .. t + length - 1] all True."""
    total = np.concatenate(([0], np.cumsum(fits)))
    ok = np.flatnonzero(total[first + length:] - total[first:len(total) - length] == length)
    if not ok.size:  # span covers a serial schedule
        raise ValueError("the list schedule's span is too short")
    return first + int(ok[0])


def _others(inst: Instance, deadline: Deadline) -> list[float] | None:
    """Per job j a lower bound on sum_{i != j} w_i c_i: the larger of sum_{i != j} w_i l_i and
    :func:`resource_bound` without j (None, the first alone, when the deadline expires)."""
    from optsched.models import elastic_cluster as em

    low = em.min_completions(inst)
    areas = min_areas(inst, deadline)
    if areas is None:
        return None
    total = sum(job.weight * l for job, l in zip(inst.jobs, low))
    fastest = [l - job.arrival for job, l in zip(inst.jobs, low)]
    out = []
    for j, job in enumerate(inst.jobs):
        fluid = resource_bound(inst, fastest, areas=areas, skip=j)
        out.append(max(total - job.weight * low[j], fluid))
    return out


#: The most placements :func:`exact` scans to enumerate its patterns (``pattern_bound``); beyond
#: it the model is not built (paper scale: C(N + H - 1, H - 1) worker vectors per configuration).
MAX_SCAN = 200_000
#: Seconds to enumerate one placement in ``job_patterns`` (measured 105 us on the loaded 2-core
#: machine, 4 servers, D <= 5; doubled): the scan may take at most half the time left (and
#: ``job_patterns`` stops at the deadline anyway).
SCAN_PER_PLACEMENT = 2e-4


def _incumbent(inst: Instance, deadline: Deadline):
    """(best schedule, its cost) over FIFO, DRF, compact A_online (each verified) and the serial
    schedule, or the ``time_limit`` Outcome when the deadline expires first."""
    from optsched.models import elastic_cluster as em

    best: Schedule | None = None
    upper = math.inf
    runs = (lambda: fifo(inst, FifoParams(), deadline=deadline),
            lambda: drf(inst, deadline=deadline),
            lambda: a_online(inst, COMPACT, deadline=deadline))
    for run in runs:
        out = run()
        if out.schedule is not None:
            value = verify(inst, out.schedule)
            if value < upper:
                upper, best = value, out.schedule
        if deadline.expired():
            return _no_model(best, "deadline: expired while running the heuristics that bound "
                                   "the horizon")
    serial = serial_schedule(inst, deadline)
    if serial is None:
        return _no_model(best, "deadline: expired while building the serial schedule")
    cost = verify(inst, serial)
    if cost < upper:
        upper, best = cost, serial
    for j in range(len(inst.jobs)):  # the configurations the horizon and the model need
        if deadline.expired():
            return _no_model(best, "deadline: expired while enumerating configurations")
        em.model_configs(inst, j, math.inf)
    return best, upper


def _better(inst: Instance, rep, extract, best: Schedule | None, upper: float,
            info: dict) -> Outcome:
    """report_outcome, except that a HiGHS incumbent worse than the warm start's schedule (time
    limit before HiGHS accepted or improved the start) gives way to that schedule, keeping the
    status and HiGHS' bound."""
    from optsched.solvers.highs import report_outcome

    out = report_outcome(rep, extract, fallback=best, info=info)
    if best is None or out.schedule is None or out.schedule is best:
        return out
    if rep.status != SolveStatus.OPTIMAL and verify(inst, out.schedule) > upper:
        return Outcome(best, rep.status, out.lower_bound, {**out.info, "returned": "warm start"})
    return out


def _no_model(best: Schedule | None, why: str, late: bool = True, **info: Any) -> Outcome:
    """exact stopped before its model was solved: the best heuristic schedule, ``time_limit``
    when the deadline stopped it (``late``), else -- a size cap, whatever the deadline --
    ``feasible`` (``unknown`` without a schedule; :func:`optsched.solvers.highs.not_built_status`)."""
    from optsched.solvers.highs import not_built_status

    return Outcome(best, not_built_status(best is not None, late), None, {"stopped": why, **info})


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
    fluid = None if areas is None else resource_bound(inst, fastest, areas=areas)
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


def min_areas(inst: Instance, deadline: Deadline = NEVER) -> np.ndarray | None:
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


def resource_bound(inst: Instance, fastest: list[int], deadline: Deadline = NEVER,
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
                 deadline: Deadline = NEVER) -> tuple[float, int, bool] | None:
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


__all__ = ["exact", "greedy_patterns", "lower_bound", "mean_busy_times", "resource_bound",
           "serial_schedule"]
