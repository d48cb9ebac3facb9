"""hetero_gpu: ``exact``, Hare_Sched (4)-(8) as a time-indexed or big-M MILP (:mod:`optsched.models.hetero_gpu`),
started from the best verified heuristic, with its size guard.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Any

from optsched import tolerance
from optsched.deadline import Deadline
from optsched.problems.hetero_gpu import Instance, Schedule, TaskRun, verify
from optsched.result import Outcome, SolveStatus
from optsched.solvers.guard import Refusal, guard
from optsched.solvers.hetero_gpu.algorithm import (GpuPrices, HareParams, build_seconds, hare,
                                                   list_runs, list_schedule, reserve)
from optsched.solvers.hetero_gpu.baselines import SchedHomoParams, SrtfParams, sched_homo, srtf
from optsched.solvers.hetero_gpu.colgen import Guide


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
#: List schedules :func:`improve` may try on ``exact``'s best start (issue 19 item 6: a better
#: start gives tighter deadlines d_n, smaller windows and an incumbent the MILP need not find).
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
        why = ready.info["not_built"].removeprefix("size guard: ")   # as the other families say it
        raise OptschedError(f"model not built: {why}")
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
    always runs, so there is one), improved by :func:`_improve`, then by :func:`improve` (at most
    :data:`START_EVALUATIONS` list schedules): ``(schedule, cost, name)``."""
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
    schedule, cost, name = _improve(inst, *best, deadline)
    if deadline.expired():
        return schedule, cost, name
    out = improve(inst, schedule, deadline=deadline, seed=seed, max_evaluations=START_EVALUATIONS)
    value = verify(inst, out.schedule)
    if value < cost:
        return out.schedule, value, f"{name} + improve"
    return schedule, cost, name


#: Line-12 rules :func:`_improve` re-runs Algorithm 1's list scheduling with.
IMPROVE_RULES = (HareParams(), HareParams(gpu_choice="earliest_finish", tie="index"),
                 HareParams(gpu_choice="earliest_start"))


def _improve(inst: Instance, schedule: Schedule, cost: float, name: str, deadline: Deadline,
             rounds: int = 10) -> tuple[Schedule, float, str]:
    """Re-run Algorithm 1's list scheduling (lines 4-18, :func:`list_schedule`) with x̂ = the
    starts of the best schedule so far, under each rule of :data:`IMPROVE_RULES`, while that
    improves the verified cost (at most ``rounds`` times, within ``deadline``)."""
    for _ in range(rounds):
        xhat = {t.key: t.start for t in schedule.runs}
        found = False
        for params in IMPROVE_RULES:
            if deadline.expired():
                return schedule, cost, name
            other = list_schedule(inst, xhat, params)
            value = verify(inst, other)
            if value < cost and not tolerance.close(value, cost):
                schedule, cost, found = other, value, True
                name = name if name.endswith("+ list rescheduling") else f"{name} + list rescheduling"
        if not found:
            break
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
    info["not_built"] = f"size guard: {guard}"
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


#: Offset scales lambda tried first by :func:`improve` (offset of job n: lambda |R_n| K_n min T^c / w_n).
PRIORITY_SCALES = (1.0, 2.0, 0.5, 4.0, 0.25)
#: Line-12 rules :func:`improve` list-schedules with (earliest finish, then Theorem 4's reading).
IMPROVE_CHOICES = (HareParams(gpu_choice="earliest_finish", tie="index"),
                   HareParams(gpu_choice="earliest_start", tie="fastest"))
#: Jobs whose offsets one local-search move perturbs.
MOVE_JOBS = 4
#: A move around the LP guide shifts a job by up to this share of its shortest chain |R_n| rho_n.
GUIDE_SHIFT = 0.1
#: Factors on the guide's capacity prices tried at line 12 (w_n x finish + factor x the price of
#: the GPU-time held; :class:`~optsched.solvers.hetero_gpu.algorithm.GpuPrices`). Paper seed 0,
#: guide of 4,000 slots: 1.902 M (no prices), 1.898 / 1.894 / 1.888 / 1.885 / 1.885 / 1.891 /
#: 1.903 M at factors 0.25 / 0.5 / 1 / 1.5 / 2 / 2.5 / 3.
PRICE_FACTORS = (1.5, 2.0, 1.0)
#: Share of the search's moves that change the price factor (by up to e^(+-1/4)) instead.
FACTOR_MOVES = 0.2


def improve(instance: Instance, start: Schedule, *, deadline: Deadline, seed: int = 0,
            max_evaluations: int | None = None, goal: float | None = None,
            guide: Guide | None = None) -> Outcome:
    """Any-time improvement of the verified schedule ``start`` (issue 19, the upper side).

    The decision searched is the one Algorithm 1 takes (paper Sec. 5.2, lines 4-18,
    :func:`list_schedule`, here with ``backfill``: a task may take an idle gap left earlier on a
    GPU): the priority order of the tasks, here x̂_(n,r,k) = a_n + r rho_n + o_n
    with a per-job offset o_n (rho_n = min_m (T^c + T^s)). It tries the weighted-work offsets
    o_n = lambda |R_n| K_n min T^c / w_n (Smith's ratio, :data:`PRIORITY_SCALES`) under each rule
    of :data:`IMPROVE_CHOICES`, re-runs the list scheduling from the best schedule's own starts
    (:func:`_improve`), then perturbs the offsets of :data:`MOVE_JOBS` random jobs at a time and
    keeps a move when the verified cost drops, until ``deadline`` (or ``max_evaluations`` list
    schedules). A candidate is built and verified when its placement cost beats the incumbent, and
    kept only when its verified cost does; the result is never worse than ``start`` (status
    ``time_limit`` when the deadline ended the search, ``info`` counts the moves). ``goal`` (a
    valid lower bound, certify's) ends the search once the incumbent meets it.

    ``guide`` (:class:`~optsched.solvers.hetero_gpu.colgen.Guide`, the
    :attr:`~optsched.result.Outcome.guide` of
    :func:`~optsched.solvers.hetero_gpu.colgen.colgen_bound`, which certify runs first and hands
    over): its master LP's schedules are tried first as priorities (x̂_(n,r,k) = the start of
    round r in job n's heaviest column, less max_m T^c / 2 so that line 3's H_i is that start),
    and when they win, the moves shift the guide of :data:`MOVE_JOBS` jobs by up to
    :data:`GUIDE_SHIFT` of their shortest chain instead (price-and-branch's LP-based priorities,
    e.g. Lübbecke & Desrosiers 2005, §5; measured at paper seed 0: 1.905 M from the guide alone
    against 1.931 M from 376 s of the Smith-ratio search). With the guide's capacity prices
    (:attr:`~optsched.solvers.hetero_gpu.colgen.Guide.prices`), line 12 may also take the GPU or
    gap of least w_n x finish + factor x the price of the GPU-time the task holds
    (:data:`PRICE_FACTORS`; the search then keeps it, and varies the factor in
    :data:`FACTOR_MOVES` of its moves): the Lagrangian prices say which class
    is worth its GPU-time when, which the earliest-finish rule cannot see (paper seed 0, one
    list schedule on a 4,000-slot guide: 1.902 M -> 1.885 M).
    """
    import numpy as np

    inst = instance
    best = Incumbent(inst, start, verify(inst, start), max_evaluations, goal)
    rho = np.array([min(c + s for c, s in zip(j.train_time, j.sync_time)) for j in inst.jobs])
    ratio = np.array([j.rounds * j.tasks_per_round * min(j.train_time) / j.weight
                      for j in inst.jobs])
    offsets, rule, base, priced, factor = ratio * 0.0, IMPROVE_CHOICES[0], None, None, 1.0
    if guide is not None:
        guided = guide.starts - (inst.tc.max(axis=1) / 2)[:, None]
        for params in IMPROVE_CHOICES:
            if best.try_offsets(offsets, rho, params, deadline, base=guided):
                rule, base = params, guided
        for f in PRICE_FACTORS if guide.prices is not None else ():
            scaled = guide.prices.scaled(f)
            if best.try_offsets(offsets, rho, rule, deadline, base=guided, prices=scaled):
                base, priced, factor = guided, scaled, f
    for lam in PRIORITY_SCALES:
        for params in IMPROVE_CHOICES:
            if best.try_offsets(lam * ratio, rho, params, deadline):
                offsets, rule, base, priced = lam * ratio, params, None, None
    if best.fits(deadline):
        by = reserve(deadline, 2 * best.eval_s)  # _improve checks before each pass, not during
        schedule, cost, _ = _improve(inst, best.schedule, best.cost, "", by)
        best.offer(schedule, cost, "list rescheduling")
    rng = np.random.default_rng(seed)
    spread = GUIDE_SHIFT * np.array([j.rounds for j in inst.jobs]) * rho
    while best.fits(deadline):
        if priced is not None and guide is not None and guide.prices is not None \
                and rng.random() < FACTOR_MOVES:
            f = factor * math.exp(rng.uniform(-0.25, 0.25))
            scaled = guide.prices.scaled(f)
            if best.try_offsets(offsets, rho, rule, deadline, base=base, prices=scaled):
                priced, factor = scaled, f
            continue
        trial = offsets.copy()
        jobs = rng.choice(len(trial), size=min(MOVE_JOBS, len(trial)), replace=False)
        if base is None:
            trial[jobs] *= rng.uniform(0.3, 3.0, size=len(jobs))
        else:
            trial[jobs] += rng.uniform(-1.0, 1.0, size=len(jobs)) * spread[jobs]
        if best.try_offsets(trial, rho, rule, deadline, base=base, prices=priced):
            offsets = trial
    status = SolveStatus.TIME_LIMIT if deadline.expired() else SolveStatus.FEASIBLE
    return Outcome(best.schedule, status, None,
                   {"start_cost": best.start_cost, "evaluations": best.evaluations,
                    "improvements": best.improvements, "last_move": best.by})


class Incumbent:
    """The best verified schedule of :func:`improve` and the cost of evaluating one."""

    def __init__(self, inst: Instance, schedule: Schedule, cost: float,
                 max_evaluations: int | None = None, goal: float | None = None):
        self.inst, self.schedule, self.cost, self.start_cost = inst, schedule, cost, cost
        self.evaluations, self.improvements, self.by = 0, 0, "start"
        self.eval_s = 0.0
        self.max_evaluations, self.goal = max_evaluations, goal

    def fits(self, deadline: Deadline) -> bool:
        """True when one more evaluation (twice the slowest so far) fits the time left and the
        evaluation cap, and the incumbent has not met the goal."""
        if self.max_evaluations is not None and self.evaluations >= self.max_evaluations:
            return False
        if self.goal is not None and tolerance.at_most(self.cost, self.goal):
            return False
        left = deadline.remaining()
        return left is None or left > 2 * self.eval_s

    def offer(self, schedule: Schedule, cost: float, by: str) -> bool:
        """Keep ``schedule`` (verified, of ``cost``) when it is strictly better."""
        if cost < self.cost and not tolerance.close(cost, self.cost):
            self.schedule, self.cost, self.by = schedule, cost, by
            self.improvements += 1
            return True
        return False

    def try_offsets(self, offsets, rho, params: HareParams, deadline: Deadline,
                    base=None, prices: GpuPrices | None = None) -> bool:
        """List-schedule with x̂ = a_n + r rho_n + o_n (or ``base[n, r]`` + o_n) under
        ``params`` (line 12 by ``prices`` when given), filling idle gaps (``backfill``); True
        when it improved."""
        if not self.fits(deadline):
            return False
        began = time.perf_counter()
        inst = self.inst
        if base is None:
            xhat = {(n, r, k): inst.jobs[n].arrival + r * rho[n] + offsets[n]
                    for n, r, k in inst.tasks}
        else:
            xhat = {(n, r, k): base[n, r] + offsets[n] for n, r, k in inst.tasks}
        runs, placed = list_runs(inst, xhat, params, backfill=True, prices=prices)
        self.evaluations += 1
        better = placed < self.cost and not tolerance.close(placed, self.cost)
        if better:  # only a candidate that looks better is built and verified (the costly part)
            schedule = Schedule(tuple(TaskRun(*run) for run in runs))
            rule = "capacity prices" if prices is not None else params.gpu_choice
            better = self.offer(schedule, verify(inst, schedule),
                                f"priority offsets{' on the LP guide' if base is not None else ''} ({rule})")
        self.eval_s = max(self.eval_s, time.perf_counter() - began)
        return better
