"""Column generation for the LP relaxation of the packing ILP (8) / (17) of seed 000.

The restricted master is solved in its dual form (9) / (18) over the current columns
(:func:`optsched.models.elastic_cluster.build_packing_dual`), which gives the prices delta and
utilities u directly. Pricing for job j is exactly the per-job problem (12) / (20) under delta on
the idle cluster (omega = C, the single-job fit), solved by the exact subroutines (A_mincost2, the
exact A_mincost1, A_RAmincost1/2 — all proven equal to brute force in the tests). A column with
w_j - cost > u_j is added; when none exists the restricted dual is feasible for the full (9), so
its value equals LP(8) (strong duality).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from optsched.deadline import Deadline
from optsched.problems.elastic_cluster import Instance, Plan
from optsched.solvers.elastic_cluster.placement import PriceState, SubPlan, job_best

if TYPE_CHECKING:
    from optsched.models.elastic_cluster import Column


EPS = 1e-7


@dataclass(frozen=True)
class PackingLP:
    """What :func:`packing_lp` found.

    Attributes
    ----------
    value
        The restricted master's value: LP(8) when ``converged``; otherwise the value over the
        columns found so far (a lower bound on the maximum LP(8)).
    columns, iterations
        The generated columns and the number of pricing rounds.
    converged
        True when no column prices out (strong duality: ``value`` is LP(8)).
    stopped
        Why the loop ended early (deadline or iteration cap), or None.
    """

    value: float
    columns: list
    iterations: int
    converged: bool
    stopped: str | None = None


def _column(inst: Instance, j: int, sub: SubPlan) -> Column:
    from optsched.models.elastic_cluster import Column

    use = sub.usage(inst)
    usage = tuple((h, r, float(use[h, r])) for h in range(inst.n_servers)
                  for r in range(inst.n_res) if use[h, r] > 0)
    plan = Plan(int(sub.start), sub.duration, sub.worker_type, sub.ps_type, sub.colocated,
                sub.workers, sub.ps)
    return Column(j, int(sub.start), sub.duration, plan, usage)


def _price(inst: Instance, jobs, tau: int, delta: np.ndarray) -> dict:
    """Cheapest column of every job under unit prices delta (H x R x tau), by exact pricing."""
    omega = np.repeat(inst.cap[:, :, None], tau, axis=2)
    scaled = delta * inst.unit[None, :, None]  # PriceState divides by unit_r
    out = {}
    for j in jobs:
        best = job_best(PriceState(inst, omega, scaled), j, "exact")
        if best.plan is not None:
            out[j] = (best.cost, best.plan)
    return out


def packing_lp(inst: Instance, jobs, tau: int, max_iter: int = 200, *,
               deadline: Deadline) -> PackingLP:
    """LP(8) for the batch ``jobs`` with deadline tau by column generation.

    The loop stops early (``converged`` False, ``stopped`` saying why, never an exception) after
    ``max_iter`` pricing rounds or when the time ``deadline`` expires."""
    import pyomo.environ as pyo

    from optsched.models.elastic_cluster import build_packing_dual
    from optsched.solvers.highs import solve_model

    jobs = list(jobs)
    H, R = inst.n_servers, inst.n_res
    delta = np.zeros((H, R, tau))
    u = {j: 0.0 for j in jobs}
    columns: list[Column] = []
    value = 0.0
    for it in range(1, max_iter + 1):
        if deadline.expired():
            return PackingLP(value, columns, it - 1, False, "deadline")
        new = [_column(inst, j, plan) for j, (cost, plan) in _price(inst, jobs, tau, delta).items()
               if inst.jobs[j].weight - cost > u[j] + EPS * max(1.0, inst.jobs[j].weight)]
        if not new:
            return PackingLP(value, columns, it, True)
        columns.extend(new)
        dual = build_packing_dual(inst, columns, tau)
        rep = solve_model(dual, deadline=deadline)
        if not rep.has_solution:
            return PackingLP(value, columns, it, False, f"restricted master: {rep.status.value}")
        value = rep.objective
        delta = np.zeros((H, R, tau))
        for (h, r, t), var in dual.delta.items():
            delta[h, r, t - 1] = max(0.0, pyo.value(var))
        u = {j: (max(0.0, pyo.value(dual.u[j])) if j in dual.u else 0.0) for j in jobs}
    return PackingLP(value, columns, max_iter, False, f"no convergence in {max_iter} iterations")
