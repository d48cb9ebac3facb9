"""The exact method and the lower bound of seed 000 (Zhou et al.), and the serial schedule that
bounds the exact model's horizon.

- :func:`exact`: the configuration MILP of (2) / (15) (:func:`optsched.models.elastic_cluster.
  build_offline`) on T_max = :func:`~optsched.models.elastic_cluster.safe_horizon`, whose cost
  bound is the best of FIFO, DRF, compact A_online and :func:`serial_schedule`. One deadline
  covers the heuristics, the model's construction and the HiGHS solve; a model too large to build
  in the time left is not built (status ``time_limit``, the best heuristic schedule returned).
- :func:`lower_bound`: sum_j w_j (a_j + d_j^min), every job alone in its fastest schedule.

Pyomo, HiGHS and the models are imported inside the functions that use them, so importing the
solvers (to collect the Family) stays cheap.
"""

from __future__ import annotations

import math
import time
from typing import Any

from optsched.deadline import MIN_SLICE, NEVER, Deadline
from optsched.problems.elastic_cluster import Instance, Plan, Schedule, verify
from optsched.result import Outcome, SolveStatus
from optsched.solvers.elastic_cluster.aonline import COMPACT, a_online
from optsched.solvers.elastic_cluster.baselines import FifoParams, drf, fifo
from optsched.solvers.elastic_cluster.placement import fastest_alone, infeasible_outcome

#: Seconds to build the offline model with Pyomo (fixed + per linear term of
#: ``offline_size(...)["terms"]``) and to hand it to HiGHS (Pyomo's translation runs before HiGHS'
#: own time limit starts, so it must be reserved out of the deadline). Measured on the tiny and
#: small presets on a loaded 2-core machine (build 3-11 us/term, hand-off 0.1 s + 10-33 us/term)
#: and rounded up: the estimate errs on the side of not building.
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
    """Optimal schedule of (2) / (15) from the configuration MILP (digest Sec. 3.2), gap 0.

    The horizon T_max = ``safe_horizon`` uses the cost of the best of FIFO, DRF, compact A_online
    (each checked by verify) and the serial schedule; every step runs within ``deadline``.

    Parameters
    ----------
    inst
        The instance.
    deadline
        Bounds the heuristics, the model's construction and the solve. When it expires before
        the model is solved, or the model (:func:`~optsched.models.elastic_cluster.offline_size`)
        is too large to build in the time left, the status is ``time_limit`` and the schedule is
        the best one found (HiGHS' incumbent or the best heuristic's).
    seed
        HiGHS' random seed.

    Returns
    -------
    Outcome
        Through :func:`optsched.solvers.highs.report_outcome`: the model's objective in
        ``model_objective``, HiGHS' dual bound as ``lower_bound``; ``info`` adds the horizon and
        the number of binaries.

    Notes
    -----
    Exact for the model the family defines (time-indexed, integral slots; dominance facts 1-3 of
    the model's docstring), tested against brute force and metamorphically. Sec. 3.3 of the paper
    calls (2) without (2b), (2d) a MILP; it is not (errata E4), hence the configurations.

    Examples
    --------
    >>> from optsched import generate, solve
    >>> solve(generate("elastic_cluster", "tiny", 0), "exact", time_limit=60).status.value
    'optimal'
    """
    from optsched.models import elastic_cluster as em
    from optsched.solvers.highs import report_outcome, solve_model

    if (bad := infeasible_outcome(inst)) is not None:
        return bad
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
    cost = sum(job.weight * p.completion for job, p in zip(inst.jobs, serial.plans))
    for j in range(len(inst.jobs)):  # the configurations the horizon and the model need
        if deadline.expired():
            return _no_model(best, "deadline: expired while enumerating configurations")
        inst.configurations(j)
    horizon = em.safe_horizon(inst, min(cost, upper))
    size = em.offline_size(inst, horizon)
    build = BUILD_FIXED + BUILD_PER_TERM * size["terms"]
    handoff = HANDOFF_FIXED + HANDOFF_PER_TERM * size["terms"]
    left = deadline.remaining()
    if left is not None and left < build + handoff + MIN_SLICE:
        return _no_model(best, f"deadline: the model ({size['binaries']} binaries, "
                               f"{size['terms']} terms, horizon {horizon}) cannot be built and "
                               f"handed to HiGHS in the {left:.3g} s left (estimate "
                               f"{build + handoff:.3g} s)", horizon=horizon, **size)
    start = time.perf_counter()
    m = em.build_offline(inst, horizon)
    built = time.perf_counter() - start
    left = deadline.remaining()
    limit = None if left is None else max(MIN_SLICE, left - handoff)  # HiGHS' share
    rep = solve_model(m, time_limit=limit, seed=seed)
    return report_outcome(rep, lambda: em.extract_schedule(inst, m), fallback=best,
                          info={"horizon": horizon, "binaries": len(m.X), "build_s": built})


def _no_model(best: Schedule | None, why: str, **info: Any) -> Outcome:
    """exact stopped before its model was solved: the best heuristic schedule, ``time_limit``."""
    return Outcome(best, SolveStatus.TIME_LIMIT, None, {"stopped": why, **info})


def lower_bound(inst: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """sum_j w_j (a_j + d_j^min): no schedule completes j before its fastest run alone.

    Parameters
    ----------
    inst
        The instance.
    deadline
        Checked per job and per configuration tried; the jobs not reached by then count
        w_j (a_j + 1) (every job runs at least one slot), so the value stays a valid bound
        (status ``time_limit``).
    seed
        Unused.

    Returns
    -------
    Outcome
        No schedule; ``lower_bound`` and status ``optimal`` (the bound's exact value) or
        ``time_limit`` (a weaker valid bound; ``info["stopped"]`` says where).

    Notes
    -----
    Not from the paper: a simple valid bound (d_j^min from the exact placement on the idle
    cluster), used for ALG/LB at paper scale.

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
    return Outcome(None, SolveStatus.OPTIMAL, value, {})


__all__ = ["exact", "lower_bound", "serial_schedule"]
