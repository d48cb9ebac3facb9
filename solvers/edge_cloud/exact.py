"""edge_cloud: ``exact``, the configuration MILP of (2) over the columns that survive Lagrangian
reduced-cost fixing (:func:`optsched.solvers.edge_cloud.bounds.reduced_columns`), HiGHS, gap 0,
and certify's improvement :func:`improve` (its list scheduling and search in :mod:`.search`).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from optsched.deadline import Deadline
from optsched.problems.edge_cloud import Instance, Schedule, verify
from optsched.result import Outcome, SolveStatus
from optsched.solvers.edge_cloud.bounds import reduced_columns
from optsched.tolerance import at_most


def exact(instance: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """Configuration MILP of (2) (:func:`optsched.models.edge_cloud.build_pattern`), HiGHS, gap 0.

    1. Incumbent: the best heuristic (:func:`incumbent`); its total flow sets the per-job
       deadlines (digest §3.3) and so the columns (job, placement, start).
    2. :func:`lagrangian` bounds (2), may improve the incumbent, and fixes to 0 every column whose
       reduced cost shows it is in no schedule better than the incumbent (``L + rc > UB - 1``:
       flows are integers), except the incumbent's own columns.
    3. The MILP over the remaining columns (the incumbent's columns always among them) is solved
       with the incumbent as MIP start (:func:`~optsched.models.edge_cloud.set_start`).

    The result is never worse than the incumbent: if HiGHS returns nothing better, the incumbent is
    returned (``info["incumbent"]``: "heuristic" or "lagrangian"), with status ``time_limit`` when
    the deadline stopped the solve. The lower bound is the largest of HiGHS' dual bound on the
    reduced model (valid for (2): every schedule it excludes is no better than the incumbent,
    which it contains), the Lagrangian bound and :func:`trivial_bound`. Above :data:`MAX_COLUMNS`
    columns, :data:`MAX_PLACEMENTS` placements of a job or
    :data:`~optsched.solvers.highs.MAX_MODEL_TERMS` non-zeros (size caps, whatever the deadline),
    or when the model cannot be built in the time left (:data:`SECONDS_PER_COLUMN`), no model is
    built (``info["skipped"]``) and the incumbent is returned, with status ``time_limit`` when the
    time left ruled the model out and ``feasible`` when only a cap did (``info["size_cap"]``);
    ``info["not_built"]`` then says why (certify's cue).

    Exact for :func:`~optsched.problems.edge_cloud.verify`'s semantics: every column's length is
    the least ``verify`` accepts (:func:`~optsched.models.edge_cloud.placements`).
    """
    from optsched.solvers.highs import not_built_status

    info: dict[str, Any] = {}
    sched, ub, bound, kept = reduced_columns(instance, deadline, info)
    if kept is None:
        info["not_built"] = info["skipped"]
        return Outcome(sched, not_built_status(sched is not None, "size_cap" not in info), bound,
                       info)
    from optsched.models.edge_cloud import build_pattern, extract_pattern, set_start
    from optsched.solvers.highs import report_outcome, solve_model

    model = build_pattern(instance, kept)
    info["start_jobs"] = set_start(model, instance, sched)
    info.update(n_vars=model.nvariables(), n_cons=model.nconstraints())
    rep = solve_model(model, deadline=deadline, seed=seed, warm_start=True)
    if rep.status is SolveStatus.INFEASIBLE:  # cannot happen: the incumbent is in the model
        rep = replace(rep, status=SolveStatus.UNKNOWN)
    if rep.has_solution and not at_most(rep.objective, ub):  # stopped early, worse than the incumbent
        rep = replace(rep, has_solution=False)
    if rep.has_solution:
        info["incumbent"] = "milp"
    return report_outcome(rep, lambda: extract_pattern(instance, model), lower_bound=bound,
                          fallback=sched, info=info)


def exact_model(instance: Instance, *, deadline: Deadline) -> Any:
    """The column MILP :func:`exact` solves in its step 3, built but not solved: the same reduced
    column set (:func:`~optsched.solvers.edge_cloud.bounds.reduced_columns`: the heuristics'
    incumbent, the Lagrangian bound, reduced-cost fixing); ``optsched solve --write-model``.
    Raises :class:`~optsched.errors.OptschedError` (one line) when :func:`exact` would build no
    model (a size cap or the time left)."""
    from optsched.errors import OptschedError
    from optsched.models.edge_cloud import build_pattern

    info: dict[str, Any] = {}
    _, ub, bound, kept = reduced_columns(instance, deadline, info)
    if kept is None:
        raise OptschedError(f"model not built: {info['skipped']}")
    model = build_pattern(instance, kept)
    model.name = (f"edge_cloud exact: column MILP of (2) over the columns kept by reduced-cost "
                  f"fixing, incumbent {ub:g}, bound {bound:g}")
    return model


# ------------------------------------------------------------ certify's upper side: improvement
def improve(instance: Instance, start: Schedule, *, deadline: Deadline, seed: int = 0,
            goal: float | None = None,
            guide: tuple[np.ndarray, np.ndarray] | None = None) -> Outcome:
    """Any-time improvement of a verified schedule (certify's upper side; ours, not the paper's).

    1. List schedules by :class:`~.search.Placer` (earliest completion over co-located *and*
       distributed placements, eq. (1)) in the orders of: arrival, start in ``start``, arrival
       plus single-job flow, and (given ``guide``, the pool LP's mean start and end slot of every job, which
       :func:`~optsched.solvers.edge_cloud.colgen.colgen_bound` returns and certify hands on)
       the LP's mean start, end and midpoint (LP-based list scheduling).
    2. Randomised list orders around the best schedule (:func:`~.search.local_search`): its
       starts perturbed by a normal noise of :data:`~.search.SIGMAS` run lengths; a list of no
       larger flow is kept.

    Never worse than ``start`` (returned when nothing beats it); every returned schedule passes
    :func:`verify`; ``deadline`` is checked before every placement. ``goal`` (a valid lower bound,
    certify's) stops step 2 once a schedule meets it.
    """
    from optsched.solvers.edge_cloud import search
    from optsched.solvers.edge_cloud.bounds import single_job_flow

    best, best_value = start, verify(instance, start)
    info: dict[str, Any] = {"start": best_value, "moves": 0, "kept": 0}
    jobs = range(len(instance.jobs))
    arrival = [instance.jobs[j].arrival for j in jobs]
    keys = {"arrival": arrival, "start": [start.runs[j][0].start for j in jobs],
            "arrival+flow": [arrival[j] + single_job_flow(instance, j) for j in jobs]}
    if guide is not None:          # the pool LP's mean starts and ends (colgen_bound's guide)
        lp_start, lp_end = guide
        keys.update(lp_start=list(lp_start), lp_end=list(lp_end), lp_mid=list(lp_start + lp_end))
    order, value, runs = None, math.inf, {}
    for name, key in keys.items():
        placer = search.list_schedule(instance, sorted(jobs, key=lambda j: (key[j], j)), deadline)
        if placer is None:
            break
        flow = search.total_flow(instance, placer.runs)
        info[f"list_{name}"] = flow
        if flow < value:
            order, value, runs = name, flow, dict(placer.runs)
    info["order"] = order
    if order is not None:
        value, runs = search.local_search(instance, value, runs, deadline, seed, info, goal)
        sched = Schedule.single([runs[j] for j in jobs])
        if verify(instance, sched) < best_value:
            best, best_value = sched, verify(instance, sched)
    info["value"] = best_value
    status = SolveStatus.TIME_LIMIT if deadline.expired() else SolveStatus.FEASIBLE
    return Outcome(best, status, None, info)
