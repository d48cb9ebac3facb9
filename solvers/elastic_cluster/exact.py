"""elastic_cluster: ``exact``, the time-indexed configuration MILP of problem (4)
(:mod:`optsched.models.elastic_cluster`) started from the best verified heuristic, with its size guard.
Certify's improvement is :func:`~optsched.solvers.elastic_cluster.search.improve`.
"""

from __future__ import annotations

import itertools
import math
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from optsched.deadline import MIN_SLICE, NEVER, Deadline
from optsched.errors import InfeasibleSchedule, OptschedError
from optsched.problems.elastic_cluster import Instance, Plan, Schedule, verify
from optsched.result import Outcome, SolveStatus
from optsched.solvers.elastic_cluster.algorithm import COMPACT, a_online
from optsched.solvers.elastic_cluster.baselines import FifoParams, drf, fifo
from optsched.solvers.elastic_cluster.bounds import (
    min_areas,
    resource_bound,
)
from optsched.solvers.elastic_cluster.placement import fastest_alone, infeasible_outcome
from optsched.solvers.guard import Refusal, guard

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

def serial_schedule(inst: Instance, deadline: Deadline) -> Schedule | None:
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
    Z4), hence the enumerated placements.

    Examples
    --------
    >>> from optsched import generate, solve
    >>> solve(generate("elastic_cluster", "tiny", 0), "exact", time_limit=60).status.value
    'optimal'
    """
    from optsched.models import elastic_cluster as em
    from optsched.solvers.highs import solve_model

    ready = _prepare(inst, deadline)
    if isinstance(ready, Outcome):
        return ready
    best, upper, last, patterns, size = ready
    handoff = HANDOFF_FIXED + HANDOFF_PER_TERM * size["terms"]
    clock = time.perf_counter()
    m = em.build_exact(inst, last, patterns)
    started = em.set_start(m, inst, best) if best is not None else 0
    built = time.perf_counter() - clock
    left = deadline.remaining()
    limit = None if left is None else max(MIN_SLICE, left - handoff)  # HiGHS' share
    rep = solve_model(m, time_limit=limit, seed=seed, warm_start=started > 0)
    info = {"horizon": max(last), "binaries": len(m.X), "build_s": built, "warm_start_jobs": started,
            "warm_start_cost": upper, "patterns": sum(map(len, patterns.values()))}
    return _better(inst, rep, lambda: em.extract_exact(inst, m), best, upper, info)


def _prepare(inst: Instance, deadline: Deadline):
    """What :func:`exact` does before it builds its model: the infeasibility and early size
    checks, the heuristics' incumbent, the horizon, the latest completions and the placements.
    Returns an Outcome when no model is built (``info["not_built"]`` says why), else
    ``(best schedule, its cost, latest completions, patterns, model size)``."""
    from optsched.models import elastic_cluster as em

    if (bad := infeasible_outcome(inst)) is not None:
        return bad
    if (capped := _early_size_cap(inst, deadline)) is not None:
        return capped
    start = _incumbent(inst, deadline)
    if isinstance(start, Outcome):
        return start
    best, upper = start
    horizon = em.safe_horizon(inst, upper)
    scanned = em.pattern_bound(inst, horizon)
    if (refusal := _scan_guard(scanned, f"horizon {horizon}", deadline)) is not None:
        return _refused(best, refusal, f"size: {scanned} placements to scan (at most {MAX_SCAN}, "
                                       f"{SCAN_PER_PLACEMENT:g} s each in half the time left)",
                        horizon=horizon, warm_start_cost=upper)
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
    if (refusal := guard(size["terms"], "the pattern MILP", deadline,
                         build + handoff + MIN_SLICE)) is not None:
        late = (f"deadline: the model cannot be built and handed to HiGHS in the "
                f"{deadline.remaining():.3g} s left ({size['binaries']} binaries, "
                f"{size['terms']} terms, horizon {horizon}, estimate {build + handoff:.3g} s)")
        return _refused(best, refusal, late, horizon=horizon, warm_start_cost=upper, **size)
    return best, upper, last, patterns, size


def exact_model(inst: Instance, *, deadline: Deadline) -> Any:
    """The time-indexed pattern MILP :func:`exact` solves on ``inst``, built but not solved (the
    same preparation, :func:`_prepare`, so the same horizon and placements); ``optsched solve
    --write-model``. Raises :class:`~optsched.errors.OptschedError` (one line) when no model would
    be built."""
    from optsched.models import elastic_cluster as em

    ready = _prepare(inst, deadline)
    if isinstance(ready, Outcome):
        reason = ready.info.get("not_built") or ready.info.get("infeasible") or ready.status.value
        raise OptschedError(f"model not built: {reason}")
    _, upper, last, patterns, _ = ready
    m = em.build_exact(inst, last, patterns)
    m.name = (f"elastic_cluster exact: time-indexed pattern MILP, horizon {max(last)} slots, "
              f"incumbent cost {upper:g}")
    return m


#: Wall seconds :func:`greedy_patterns`' local search may take at most (and at most this share
#: of the time left).
SEARCH_S, SEARCH_SHARE = 3.0, 0.1


def greedy_patterns(inst: Instance, horizon: int,
                    deadline: Deadline) -> tuple[Schedule, float] | None:
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
        fluid = resource_bound(inst, fastest, deadline, areas=areas, skip=j)
        out.append(max(total - job.weight * low[j], fluid))
    return out


def _early_size_cap(inst: Instance, deadline: Deadline) -> Outcome | None:
    """The not-built Outcome (with DRF's schedule) when the placements to scan exceed
    :data:`MAX_SCAN` already for the shortest possible horizon, else None.

    Every horizon :func:`exact` uses (``safe_horizon`` of any upper bound) is at least
    L = max_j (the least d of j's configurations): some job cannot complete earlier.
    ``pattern_bound`` grows with the horizon, so a count over MAX_SCAN at L means the model is
    never built, and the heuristics that bound the horizon need not run (issue 19: at paper
    scale they took a third of certify's time). Only the cap is checked here (:func:`_scan_guard`
    without a time limit); the time left is checked at the real horizon."""
    from optsched.models import elastic_cluster as em

    shortest = 1
    for j in range(len(inst.jobs)):
        if deadline.expired():  # listing the configurations of 100 paper-scale jobs: ~9 CPU-s
            return _no_model(drf(inst, deadline=deadline).schedule,
                             f"deadline: expired while listing job {j}'s configurations")
        shortest = max(shortest, min((c[4] for c in inst.configurations(j)), default=1))
    scanned = em.pattern_bound(inst, shortest, stop_above=MAX_SCAN)
    if (refusal := _scan_guard(scanned, f"the shortest horizon {shortest}", NEVER)) is None:
        return None
    return _refused(drf(inst, deadline=deadline).schedule, refusal, "", horizon=shortest,
                    scanned=str(scanned))


def _scan_guard(scanned: int, where: str, deadline: Deadline) -> Refusal | None:
    """The family's second cap, on the placements ``job_patterns`` scans at ``where`` (a
    horizon) before the model's size is known (None: scan them): over :data:`MAX_SCAN`, whatever
    the deadline, or :data:`SCAN_PER_PLACEMENT` s each more than half the time left. The model
    itself then passes the shared :func:`~optsched.solvers.guard.guard`."""
    left = deadline.remaining()
    seconds = SCAN_PER_PLACEMENT * scanned
    late = (f"the scan of {scanned} placements: ~{seconds:.1f} s > half of {left:.1f} s left"
            if left is not None and seconds > left / 2 else None)
    cap = (f"size cap: over MAX_SCAN = {MAX_SCAN} placements to scan at {where}"
           if scanned > MAX_SCAN else None)
    return None if cap is None and late is None else Refusal(cap, late)


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


def _refused(best: Schedule | None, refusal: Refusal, late: str, **info: Any) -> Outcome:
    """:func:`_no_model` for a guard's ``refusal``: the reason is the cap when one held (also
    ``info["size_cap"]``), else ``late`` (the time left, in the caller's words); status
    ``time_limit`` only when the time left ruled the model out."""
    if refusal.cap is not None:
        info["size_cap"] = refusal.cap
    return _no_model(best, refusal.cap or late, late=refusal.late is not None, **info)


def _no_model(best: Schedule | None, why: str, late: bool = True, **info: Any) -> Outcome:
    """exact stopped before its model was solved: the best heuristic schedule, ``time_limit``
    when the deadline stopped it (``late``), else -- a size cap, whatever the deadline --
    ``feasible`` (``unknown`` without a schedule; :func:`optsched.solvers.highs.not_built_status`)."""
    from optsched.solvers.highs import not_built_status

    info = {"stopped": why, "not_built": short_reason(why), **info}
    return Outcome(best, not_built_status(best is not None, late), None, info)


def short_reason(why: str, width: int = 80) -> str:
    """The first clause of ``why`` (up to its first " (" or ";"), at most ``width`` characters:
    ``info["not_built"]``, the one-line reason ``solve --method exact`` prints (issue 19 item 3).

    >>> short_reason("size: 9 placements to scan (at most 2, 0.1 s each)")
    'size: 9 placements to scan'
    """
    head = why.split(" (")[0].split(";")[0].strip()
    return head if len(head) <= width else head[:width - 3] + "..."
