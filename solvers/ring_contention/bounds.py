"""ring_contention: ``lower_bound``, the closed-form bounds LB_len, LB_area, LB_conf and the dual bound
of M3 (14)-(16) with contention-free durations (digest Sec. 3.5).
"""

from __future__ import annotations

import math
from typing import Any

from optsched.deadline import Deadline
from optsched.problems.ring_contention import Instance
from optsched.result import Outcome, SolveStatus
from optsched.tolerance import slack

BUDGET_MAX_VARS = 600  # M3 in lower_bound only up to this many (job, GPU) pairs


def budget_bound(inst: Instance, deadline: Deadline,
                 seed: int = 0) -> tuple[float | None, dict[str, Any]]:
    """Dual bound of M3 with contention-free durations (valid LB; digest §3.5)."""
    from optsched.models import ring_contention as rm
    from optsched.solvers.highs import solve_model

    model = rm.build_budget(inst, durations="lower")
    rep = solve_model(model, deadline=deadline, seed=seed)
    bound = rep.bound if rep.bound is not None else None
    if bound is not None:  # makespans are integral; the solver's bound is a computed float, so
        bound = math.ceil(bound - slack(bound))  # round up only past its float noise (a valid LB)
    return bound, {"m3_status": rep.status.value, "m3_bound": rep.bound, "m3_runtime_s": rep.runtime_s}


def lower_bound(inst: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """max(LB_len, LB_area, LB_conf), and M3's dual bound when |J| * N <= BUDGET_MAX_VARS.

    Status (the rule of :class:`~optsched.result.Outcome`): INFEASIBLE when the bound exceeds the
    horizon T (no schedule exists; the bound is still reported); OPTIMAL when it is computed to
    its end (M3 solved to its optimum, or only the closed-form bounds apply because the instance is
    too big for M3); TIME_LIMIT when the deadline stopped M3 (its dual bound so far is still valid)
    or M3 did not run because the deadline had passed or ended without a proven optimum.
    """
    from optsched.models import ring_contention as rm

    parts = rm.simple_lower_bound(inst)
    value = max(parts.values())
    info: dict[str, Any] = dict(parts)
    status = SolveStatus.OPTIMAL
    if len(inst.jobs) * inst.n_gpus <= BUDGET_MAX_VARS:
        if deadline.expired():
            info["m3"] = "skipped: deadline expired"
            status = SolveStatus.TIME_LIMIT
        else:
            m3, m3_info = budget_bound(inst, deadline, seed)
            info.update(m3_info)
            if m3 is not None:
                value = max(value, m3)
            if m3_info["m3_status"] != SolveStatus.OPTIMAL.value:
                status = SolveStatus.TIME_LIMIT
    else:
        info["m3"] = f"skipped: |J| N = {len(inst.jobs) * inst.n_gpus} > BUDGET_MAX_VARS"
    if value > inst.horizon:  # the bound exceeds T: no schedule exists (the bound is kept)
        status, info["infeasible"] = SolveStatus.INFEASIBLE, f"bound {value:g} > horizon T"
    return Outcome(None, status, float(value), info)
