"""hetero_gpu: the upper side of certify (issue 19; ours, not the paper's) -- an any-time search
over the task priorities x̂ that Algorithm 1 of Hare (Chen et al., HPDC'22, Sec. 5.2, lines
4-18: list scheduling in x̂ order with the line-12 GPU choice) schedules by.

:func:`improve` tries per-job priority offsets (Smith's ratio, and the master LP schedules of
:func:`~optsched.solvers.hetero_gpu.colgen.colgen_bound` with their capacity prices when certify
hands them over), re-runs the list scheduling from the best schedule's own starts
(:func:`reschedule`) and then perturbs the offsets of a few jobs at a time, keeping a move when the
verified cost drops (:class:`Incumbent`). It is certify's ``improve``, and
:func:`~optsched.solvers.hetero_gpu.exact.exact` runs it on its MIP start. Moved out of
:mod:`.exact` unchanged (``_improve`` became :func:`reschedule`), so that every family's search
has the same place.
"""

from __future__ import annotations

import math
import time

from optsched import tolerance
from optsched.deadline import Deadline
from optsched.problems.hetero_gpu import Instance, Schedule, TaskRun, verify
from optsched.result import Outcome, SolveStatus
from optsched.solvers.hetero_gpu.algorithm import (GpuPrices, HareParams, list_runs,
                                                   list_schedule, reserve)
from optsched.solvers.hetero_gpu.colgen import Guide


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
    (:func:`reschedule`), then perturbs the offsets of :data:`MOVE_JOBS` random jobs at a time and
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
        by = reserve(deadline, 2 * best.eval_s)  # reschedule checks before each pass, not during
        schedule, cost, _ = reschedule(inst, best.schedule, best.cost, "", by)
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


#: Line-12 rules :func:`reschedule` re-runs Algorithm 1's list scheduling with.
IMPROVE_RULES = (HareParams(), HareParams(gpu_choice="earliest_finish", tie="index"),
                 HareParams(gpu_choice="earliest_start"))


def reschedule(inst: Instance, schedule: Schedule, cost: float, name: str, deadline: Deadline,
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

