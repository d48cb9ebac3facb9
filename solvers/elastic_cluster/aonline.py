"""A_online (Alg. 1), A_dual (Alg. 2) and A_maxweight (Alg. 3) of seed 000, on the shared
framework :mod:`optsched.solvers.online`.

- :func:`a_maxweight`: the primal-dual batch algorithm for (7)/(16): jobs in (a_j, j) order, each
  priced by :func:`~.placement.job_best` under delta = lambda^(beta/C) - 1 (eq. (11)), admitted iff
  u_j = w_j - cost > 0 (eq. (10)); a (2 ln lambda)-approximation for (8) by Theorem 3 under (A1),
  (A2).
- :func:`a_dual`: up to alpha calls of A_maxweight on the jobs still unscheduled, sub-round iota
  using relative slots (iota-1) tau + 1 .. iota tau. It stops early once every job is scheduled
  (paper, end of Sec. 5.3) or when a sub-round admits nothing: the next one would face the same
  jobs on the same empty cluster and admit nothing either.
- :func:`a_online`: doubling rounds tau_i = 2^(i-1); the batch of round i is scheduled by A_dual
  in the window starting at alpha_i tau_i (``window="paper"``, never before the previous round's
  last busy slot + 1) or at max(tau_i, last busy slot + 1) (``window="compact"``, non-paper).
  alpha is the constant of Theorem 5 (``alpha="theorem"``, which needs w(J) in advance), the
  per-round value from w(J_i) (``"per_round"``), or an int.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from optsched.problems.elastic_cluster import Instance, Plan
from optsched.solvers.elastic_cluster.placement import PriceState, SubPlan, job_best
from optsched.solvers.online import (
    BatchResult, Candidate, UsageLedger, compact_window, doubling_rounds, exponential_price,
    primal_dual_admission,
)


def gamma(inst: Instance) -> float:
    """gamma = 2 ln lambda, A_maxweight's ratio (Theorem 3; natural log, digest Sec. 8 #3)."""
    return 2.0 * math.log(inst.price_base)


def alpha_for(inst: Instance, weights) -> int:
    """alpha = floor(ln(w(J)/w_min) / ln(gamma/(gamma-1))) + 1 (Theorem 5 / Lemma 2, eq. (6))."""
    g = gamma(inst)
    return int(math.floor(math.log(sum(weights) / min(weights)) / math.log(g / (g - 1)))) + 1


def theorem_alpha(inst: Instance) -> int:
    """Theorem 5's alpha over all jobs of the instance (semi-clairvoyant: needs w(J))."""
    return alpha_for(inst, [j.weight for j in inst.jobs])


def assumptions(inst: Instance) -> dict:
    """Whether the guarantees' assumptions hold on ``inst`` (digest Sec. 3.7, normalised units):
    (A1) 1 <= w_j / resource-time <= F, checked on each job's least resource-time schedule (the
    upper side holds by the generators' choice of F); (A2) every single worker plus PS uses at most
    1 / ln lambda of the capacity of each resource of every server that can host it."""
    a1 = all(inst.weight_ratio * inst.min_resource_time(j) >= job.weight >= inst.min_resource_time(j)
             for j, job in enumerate(inst.jobs))
    share = 0.0
    for m in range(len(inst.worker_types)):
        for p in (range(len(inst.ps_types)) if inst.is_ps else (0,)):
            need = inst.e[m] + (inst.z[p] if inst.is_ps else 0)
            ratio = (need / np.maximum(inst.cap, 1e-12)).max(axis=1)
            fits = ratio[(need <= inst.cap_limit).all(axis=1)]  # servers that can host it
            share = max(share, float(fits.max()) if len(fits) else 0.0)
    return {"A1": bool(a1), "A2": bool(share <= 1 / math.log(inst.price_base)),
            "max_share": share, "A2_limit": 1 / math.log(inst.price_base)}


@dataclass
class BatchOutput:
    """A_maxweight's output: admitted job -> SubPlan, utilities u_j, final ledger."""

    plans: dict
    utility: dict
    ledger: UsageLedger

    def weight(self, inst: Instance) -> float:
        return float(sum(inst.jobs[j].weight for j in self.plans))


def a_maxweight(inst: Instance, jobs, tau: int, pricing: str = "paper",
                tie_break: str = "paper") -> BatchOutput:
    """Algorithm 3 on the batch ``jobs`` with deadline ``tau`` (relative slots 1..tau).

    ``pricing`` selects A_mincost1: ``paper`` (with the digest's fixes), ``literal``, ``exact``;
    ``tie_break``: ``paper`` or ``earliest_finish`` (non-paper; see placement.Best).
    """
    H, R = inst.n_servers, inst.n_res
    ledger = UsageLedger(inst.cap.reshape(-1), slots=range(1, tau + 1),
                         price=exponential_price(inst.price_base))

    def best_plan(j: int, led: UsageLedger) -> Candidate | None:
        omega = led.residual.reshape(H, R, tau)
        delta = np.where(np.isinf(led.prices), 0.0, led.prices).reshape(H, R, tau)
        best = job_best(PriceState(inst, omega, delta), j, pricing, tie_break)
        if best.plan is None:
            return None
        return Candidate(best.cost, plan=best.plan, charge=_charger(inst, best.plan))

    order = sorted(jobs, key=lambda j: (inst.jobs[j].arrival, j))
    res = primal_dual_admission(order, weight=lambda j: inst.jobs[j].weight, best_plan=best_plan,
                                ledger=ledger)
    return BatchOutput({a.job: a.plan for a in res.admitted}, res.utility, ledger)


def _charger(inst: Instance, plan: SubPlan):
    use = plan.usage(inst).reshape(-1)
    rows = np.flatnonzero(use)

    def charge(ledger: UsageLedger) -> None:
        ledger.charge_block(rows, plan.start, plan.start + plan.duration - 1, use[rows])

    return charge


def a_dual(inst: Instance, jobs, tau: int, alpha: int, pricing: str = "paper",
           tie_break: str = "paper"):
    """Algorithm 2: returns (job -> (relative start, SubPlan), per-sub-round admitted weights)."""
    remaining = [j for j in jobs if _fits_some_window(inst, j, tau)]
    plans, weights = {}, []
    for iota in range(1, alpha + 1):
        if not remaining:
            break
        out = a_maxweight(inst, remaining, tau, pricing, tie_break)
        if not out.plans:
            break
        for j, sub in out.plans.items():
            plans[j] = ((iota - 1) * tau + sub.start, sub)
        weights.append(out.weight(inst))
        remaining = [j for j in remaining if j not in out.plans]
    return plans, weights


def _fits_some_window(inst: Instance, j: int, tau: int) -> bool:
    """A job none of whose configurations lasts <= tau - 1 slots cannot be admitted (7b)."""
    return any(c[4] <= tau - 1 for c in inst.configurations(j))


def a_online(inst: Instance, alpha="theorem", window: str = "paper", pricing: str = "paper",
             max_rounds: int = 40, tie_break: str = "paper"):
    """Algorithm 1. Returns (Plan per job or None, per-round log)."""
    fixed = theorem_alpha(inst) if alpha == "theorem" else alpha

    def batch(rnd, pending):
        a_i = alpha_for(inst, [inst.jobs[j].weight for j in pending]) if fixed == "per_round" \
            else int(fixed)
        first = rnd.window[0] if window == "compact" else max(a_i * rnd.tau, rnd.busy_until + 1)
        rel, weights = a_dual(inst, pending, rnd.tau, a_i, pricing, tie_break)
        admitted = {j: _absolute(first + r - 1, sub) for j, (r, sub) in rel.items()}
        last = max((p.start + p.duration - 1 for p in admitted.values()), default=None)
        return BatchResult(admitted, last, {"alpha": a_i, "first": first, "weights": weights})

    out = doubling_rounds(list(range(len(inst.jobs))), arrival=lambda j: inst.jobs[j].arrival,
                          schedule_batch=batch, window=compact_window, max_rounds=max_rounds)
    plans = [out.plans.get(j) for j in range(len(inst.jobs))]
    return plans, out


def _absolute(start: int, sub: SubPlan) -> Plan:
    return Plan(start, sub.duration, sub.worker_type, sub.ps_type, sub.colocated, sub.workers,
                sub.ps)
