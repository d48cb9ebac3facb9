"""hetero_gpu: ``exact``, Hare_Sched (4)-(8) as a time-indexed or big-M MILP (:mod:`optsched.models.hetero_gpu`),
started from the best verified heuristic, with its size guard.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from optsched.deadline import Deadline
from optsched.problems.hetero_gpu import Instance, Schedule, verify
from optsched.result import Outcome, SolveStatus
from optsched.solvers.guard import Refusal, guard
from optsched.solvers.hetero_gpu.algorithm import HareParams, build_seconds, hare, list_schedule
from optsched.solvers.hetero_gpu.baselines import SchedHomoParams, SrtfParams, sched_homo, srtf
from optsched.solvers.hetero_gpu.search import IMPROVE_CHOICES, improve, reschedule


#: The heuristics ``exact`` starts from, best verified one first used (its cost gives the MILP's
#: deadlines d_n, digest §3.3, and it is the MIP start): Hare on the aggregate LP with the
#: paper's line 12 and the earliest-finish / earliest-start readings, and two cheap baselines.
EXACT_START = HareParams(relaxation="aggregate_lp")
START_HEURISTICS = ((hare, EXACT_START),
                    (hare, replace(EXACT_START, gpu_choice="earliest_finish", tie="index")),
                    (hare, replace(EXACT_START, gpu_choice="earliest_start", tie="fastest")),
                    (srtf, SrtfParams(weighted=True)),
                    (sched_homo, SchedHomoParams()))
#: Share of the time left that ``exact`` gives its starting heuristics.
START_SHARE = 0.25
#: List schedules :func:`.search.improve` may try on ``exact``'s best start (issue 19 item 6: a
#: better start gives tighter deadlines d_n, smaller windows and an incumbent the MILP need not
#: find).
START_EVALUATIONS = 300


def exact(instance: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """Optimal schedule of Hare_Sched (4)-(8), gap 0: the time-indexed MILP on the data's exact time
    grid when it has one and fits, else the big-M MILP with windows and symmetry breaking
    (:func:`_build`; ``info["model"]`` says which).

    The MILP (:func:`optsched.models.hetero_gpu.build_exact`) takes its deadlines d_n from the best
    verified schedule of :data:`START_HEURISTICS` and starts from it (a MIP start,
    :func:`~optsched.models.hetero_gpu.set_start`). It is built in normalised units
    (:func:`optsched.models.hetero_gpu.time_unit`); its objective and bound are converted back (a
    power of two: exact) before they are reported.

    Deadline: the starting heuristics get at most :data:`START_SHARE` of the time left, the MILP
    the rest. When the model (:func:`optsched.models.hetero_gpu.exact_size`) is over the size cap
    (:data:`optsched.solvers.highs.MAX_MODEL_TERMS`, whatever the deadline) or too big to build and
    hand to HiGHS in the time left (:func:`_refusal`), it is not
    built: the best start is returned as the fallback with the completion bound ``sum_n w_n
    LBC_n`` (``info["stopped"]`` says why), status ``time_limit`` when the time left ruled it out,
    else ``feasible``. When HiGHS stops
    without a schedule, or with one worse than the start, the start is returned (status
    ``time_limit``, HiGHS' bound; ``info["returned"] = "warm start"``): the incumbent is never worse
    than the schedule the MILP started from.
    """
    from optsched.solvers.highs import report_outcome, solve_model

    inst = instance
    ready = _prepare(inst, deadline, seed)
    if isinstance(ready, Outcome):
        return ready
    m, extract, start, cost, info = ready
    rep = solve_model(m, deadline=deadline, seed=seed, warm_start=True)
    unit = m.objective_unit
    rep = replace(rep, objective=rep.objective * unit, bound=None if rep.bound is None else rep.bound * unit)
    out = report_outcome(rep, lambda: extract(inst, m), fallback=start, info=info)
    if rep.status is not SolveStatus.OPTIMAL and out.schedule is not start \
            and verify(inst, out.schedule) > cost:
        return Outcome(start, out.status, out.lower_bound, {**out.info, "returned": "warm start"})
    return out


def exact_model(instance: Instance, *, deadline: Deadline) -> Any:
    """The MILP :func:`exact` solves, built but not solved: the same preparation
    (:func:`_prepare`: starting heuristics, deadlines d_n from the best start's cost, the choice
    of model, time-indexed or big-M, named in the model's name), in normalised units
    (:func:`optsched.models.hetero_gpu.time_unit`); ``optsched solve --write-model``. Raises
    :class:`~optsched.errors.OptschedError` (one line) when :func:`exact` would build no model."""
    from optsched.errors import OptschedError

    ready = _prepare(instance, deadline, 0)
    if isinstance(ready, Outcome):
        raise OptschedError(f"model not built: {ready.info['not_built']}")
    m, _, _, cost, info = ready
    m.name = (f"hetero_gpu exact: {info['model']} MILP of Hare_Sched (4)-(8), deadlines from a "
              f"schedule of cost {cost:g}, objective in units of {m.objective_unit:g}")
    return m


def _refusal(size: dict[str, int], deadline: Deadline, what: str = "Hare_Sched") -> Refusal | None:
    """:func:`~optsched.solvers.guard.guard` on a model of ``size`` (its ``terms``, and
    :func:`~optsched.solvers.hetero_gpu.algorithm.build_seconds` against the time left)."""
    return guard(size["terms"], what, deadline, build_seconds(size))


def _prepare(inst: Instance, deadline: Deadline, seed: int):
    """What :func:`exact` does before it solves: the size guard, the best start
    (:func:`_best_start`, at most :data:`START_SHARE` of the time left), the guard again on the
    time then left, and the model built with its MIP start (:func:`_build`). Returns an Outcome
    when no model is built (:func:`_not_built`; ``info["not_built"]`` says why), else ``(model,
    extractor, start, its cost, info)``."""
    from optsched.models import hetero_gpu as hm

    size = hm.exact_size(inst)
    info: dict[str, Any] = {"binaries": size["binaries"], "rows": size["rows"]}
    if refusal := _refusal(size, deadline):
        return _not_built(inst, refusal, None, deadline, seed, info)
    start, cost, info["start"] = _best_start(inst, deadline.within(deadline.limit(START_SHARE)), seed)
    info["start_cost"] = cost
    if refusal := _refusal(size, deadline):
        return _not_built(inst, refusal, start, deadline, seed, info)
    m, extract = _build(inst, cost, start, deadline, info)
    return m, extract, start, cost, info


def _build(inst: Instance, cost: float, start: Schedule, deadline: Deadline, info: dict):
    """The exact model with its MIP start set, and its extractor: time-indexed
    (:func:`~optsched.models.hetero_gpu.build_time_indexed`) when the data lie on a grid and the
    model has at most :data:`~optsched.models.hetero_gpu.MAX_SLOTS` start variables and fits the
    time left, else the continuous big-M model (:func:`~optsched.models.hetero_gpu.build_exact`);
    ``info["model"]`` says which."""
    from optsched.models import hetero_gpu as hm

    windows = hm.time_indexed_windows(inst, cost)
    if windows is not None:
        size = hm.time_indexed_size(inst, windows)
        if size["binaries"] <= hm.MAX_SLOTS and not _refusal(size, deadline, "the time-indexed model"):
            m = hm.build_time_indexed(inst, windows)
            info.update(model="time_indexed", binaries=size["binaries"], grid=windows[0],
                        warm_start=hm.set_time_indexed_start(m, inst, start))
            return m, hm.extract_time_indexed
    m = hm.build_exact(inst, upper_bound=cost)
    hm.set_start(m, inst, start)
    info.update(model="big_m", warm_start=True)
    return m, hm.extract_schedule


def _best_start(inst: Instance, deadline: Deadline, seed: int) -> tuple[Schedule, float, str]:
    """The best verified schedule of :data:`START_HEURISTICS` run within ``deadline`` (the first
    always runs, so there is one), improved by :func:`.search.reschedule`, then by
    :func:`.search.improve` (at most :data:`START_EVALUATIONS` list schedules): ``(schedule, cost,
    name)``."""
    best: tuple[Schedule, float, str] | None = None
    for method, params in START_HEURISTICS:
        if best is not None and deadline.expired():
            break
        out = method(inst, params, deadline=deadline, seed=seed)
        if out.schedule is None:
            continue
        cost = verify(inst, out.schedule)
        if best is None or cost < best[1]:
            best = (out.schedule, cost, f"{method.__name__} {params}")
    assert best is not None, "hare always returns a schedule"
    schedule, cost, name = reschedule(inst, *best, deadline)
    if deadline.expired():
        return schedule, cost, name
    out = improve(inst, schedule, deadline=deadline, seed=seed, max_evaluations=START_EVALUATIONS)
    value = verify(inst, out.schedule)
    if value < cost:
        return out.schedule, value, f"{name} + improve"
    return schedule, cost, name


def _not_built(inst: Instance, guard: Refusal, start: Schedule | None, deadline: Deadline,
               seed: int, info: dict[str, Any]) -> Outcome:
    """``exact`` when its model is over the size cap or does not fit the time left
    (:func:`_refusal`): the best start, or when there is none
    yet Algorithm 1's list scheduling (lines 4-18, earliest finish with backfilling, x̂ = a_n + r:
    no LP, one pass) with the completion bound, through ``report_outcome``; status
    ``time_limit`` only when the time left ruled the model out, else ``feasible``
    (:meth:`optsched.solvers.highs.Refusal.status`)."""
    from optsched.models import hetero_gpu as hm
    from optsched.solvers.highs import SolveReport, report_outcome

    info["stopped"] = f"Hare_Sched not built: size guard: {guard}"
    info["not_built"] = str(guard)              # as every family's guard words it
    if start is None:  # no LP here: one list schedule (certify's time is for its bound)
        xhat = {(n, r, k): inst.jobs[n].arrival + r for n, r, k in inst.tasks}
        start = list_schedule(inst, xhat, IMPROVE_CHOICES[0], backfill=True)
        info["fallback"] = "list schedule (earliest finish, backfill, x̂ = arrival + round)"
    else:
        info["fallback"] = info["start"]
    rep = SolveReport(guard.status(start is not None), math.inf, None, False, 0.0,
                      {"solver": "highs", "termination": "not built"})
    bound = sum(j.weight * c for j, c in zip(inst.jobs, hm.completion_lower_bounds(inst)))
    return report_outcome(rep, lambda: None, lower_bound=float(bound), fallback=start, info=info)

