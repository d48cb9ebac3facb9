"""edge_cloud: ``exact``, the configuration MILP of (2) over the columns that survive Lagrangian
reduced-cost fixing (:func:`optsched.solvers.edge_cloud.bounds.reduced_columns`), HiGHS, gap 0.
Certify's improvement is :func:`~optsched.solvers.edge_cloud.search.improve`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from optsched.deadline import Deadline
from optsched.problems.edge_cloud import Instance
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
