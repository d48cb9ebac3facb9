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
  per-round value from w(J_i) (``"per_round"``), or an int. Every choice is a field of
  :class:`AOnlineParams`; the registered variants are the same function with other parameters.

Every loop (rounds, sub-rounds, jobs, the subroutines' candidates) stops when the
:class:`~optsched.deadline.Deadline` expires; a run that was stopped returns no schedule (status
``time_limit``), so a schedule A_online returns is always the one it computes without a limit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from optsched.deadline import Deadline
from optsched.method import Params, param
from optsched.problems.elastic_cluster import Instance, Plan, Schedule
from optsched.result import Outcome, SolveStatus
from optsched.solvers.elastic_cluster.placement import (
    PriceState,
    SubPlan,
    infeasible_outcome,
    job_best,
)
from optsched.solvers.online import (
    BatchResult,
    Candidate,
    OnlineResult,
    UsageLedger,
    compact_window,
    doubling_rounds,
    exponential_price,
    primal_dual_admission,
)

Window = Literal["paper", "compact"]
Pricing = Literal["paper", "literal", "exact"]
TieBreak = Literal["paper", "earliest_finish"]
WINDOWS: tuple[str, ...] = ("paper", "compact")
PRICINGS: tuple[str, ...] = ("paper", "literal", "exact")
TIE_BREAKS: tuple[str, ...] = ("paper", "earliest_finish")
ALPHA_RULES: tuple[str, ...] = ("theorem", "per_round")


@dataclass(frozen=True)
class AOnlineParams(Params):
    """The choices of A_online (Algorithms 1-7 of seed 000); the defaults are Algorithm 1 as
    Theorem 5 analyses it, with the paper's subroutines (registered as ``a_online``)."""

    alpha: str | int = param(
        "theorem", "Alg. 1 / Theorem 5 with eq. (6): alpha = floor(ln(w(J)/w_min) / "
                   "ln(gamma/(gamma-1))) + 1, gamma = 2 ln lambda; 'theorem' over all jobs w(J) "
                   "(semi-clairvoyant, what Theorem 5 needs), 'per_round' over the round's batch "
                   "w(J_i) (Lemma 2, the Sec. 5.3 simulations), or a fixed int >= 1")
    window: Window = param(
        "paper", "Alg. 1: round i's batch runs in the window that starts at alpha tau_i "
                 "('paper', never before the previous round's last busy slot + 1), or at "
                 "max(tau_i, last busy slot + 1) ('compact', non-paper, digest Sec. 4.1)")
    pricing: Pricing = param(
        "paper", "A_mincost1 (Alg. 4, PS with q = 0): 'paper' with the digest's fixes #10 "
                 "(reset N_hat per n) and #11 (s = max(1, ceil((N-g) b/B))); 'literal' without "
                 "#11; 'exact' the exact transportation variant (digest Sec. 4.5, errata Z1)")
    tie_break: TieBreak = param(
        "paper", "A_maxweight lines 3-6 and Algs. 4-7 'if cost < cost_min': 'paper' keeps the "
                 "first candidate of the enumeration order among equal price costs (on an idle "
                 "window all cost 0); 'earliest_finish' the one that ends first (non-paper, "
                 "digest Sec. 8 #32)")
    max_rounds: int = param(
        40, "not in the paper: a cap on the doubling rounds tau_i = 2^(i-1) of Alg. 1 (jobs "
            "still pending then are left unscheduled: no schedule)")

    def __post_init__(self) -> None:
        if isinstance(self.alpha, bool) or not (
                self.alpha in ALPHA_RULES or (isinstance(self.alpha, int) and self.alpha >= 1)):
            raise ValueError(f"alpha: must be one of {', '.join(ALPHA_RULES)} or an int >= 1, "
                             f"got {self.alpha!r}")
        for name, value, known in (("window", self.window, WINDOWS),
                                   ("pricing", self.pricing, PRICINGS),
                                   ("tie_break", self.tie_break, TIE_BREAKS)):
            if value not in known:
                raise ValueError(f"{name}: unknown {value!r} (known: {', '.join(known)})")
        if not self.max_rounds >= 1:
            raise ValueError(f"max_rounds: must be >= 1, got {self.max_rounds}")


#: Not in the paper: the largest price ledger (servers x resources x tau_i slots) a round may
#: allocate (float64, a few arrays: about 80 MB each at this bound); a round beyond it admits
#: nothing, so jobs that need a longer window stay unscheduled (status ``unknown``). The paper
#: preset needs at most 450 x 512.
MAX_LEDGER_CELLS = 10_000_000

#: Per-round alpha and compact windows (non-paper): ``a_online_compact``, and exact's upper bound.
COMPACT = AOnlineParams(alpha="per_round", window="compact")


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
    """A_maxweight's output: admitted job -> SubPlan, utilities u_j, final ledger; ``stopped``
    when the deadline cut the batch short (the jobs not examined are not admitted)."""

    plans: dict
    utility: dict
    ledger: UsageLedger
    stopped: bool = False

    def weight(self, inst: Instance) -> float:
        return float(sum(inst.jobs[j].weight for j in self.plans))


def a_maxweight(inst: Instance, jobs, tau: int, params: AOnlineParams = AOnlineParams(), *,
                deadline: Deadline) -> BatchOutput:
    """Algorithm 3 on the batch ``jobs`` with deadline ``tau`` (relative slots 1..tau).

    ``params.pricing`` selects A_mincost1 and ``params.tie_break`` the tie-break among equal
    costs (see :class:`AOnlineParams`); the other fields are not used here. When the time
    ``deadline`` expires the batch stops (``BatchOutput.stopped``).
    """
    H, R = inst.n_servers, inst.n_res
    ledger = UsageLedger(inst.cap.reshape(-1), slots=range(1, tau + 1),
                         price=exponential_price(inst.price_base))

    def best_plan(j: int, led: UsageLedger) -> Candidate | None:
        omega = led.residual.reshape(H, R, tau)
        delta = np.where(np.isinf(led.prices), 0.0, led.prices).reshape(H, R, tau)
        best = job_best(PriceState(inst, omega, delta, deadline), j, params.pricing,
                        params.tie_break)
        if best.plan is None:
            return None
        return Candidate(best.cost, plan=best.plan, charge=_charger(inst, best.plan))

    order = sorted(jobs, key=lambda j: (inst.jobs[j].arrival, j))
    res = primal_dual_admission(order, weight=lambda j: inst.jobs[j].weight, best_plan=best_plan,
                                ledger=ledger, deadline=deadline)
    return BatchOutput({a.job: a.plan for a in res.admitted}, res.utility, ledger, res.stopped)


def _charger(inst: Instance, plan: SubPlan):
    use = plan.usage(inst).reshape(-1)
    rows = np.flatnonzero(use)

    def charge(ledger: UsageLedger) -> None:
        ledger.charge_block(rows, plan.start, plan.start + plan.duration - 1, use[rows])

    return charge


def a_dual(inst: Instance, jobs, tau: int, alpha: int, params: AOnlineParams = AOnlineParams(),
           *, deadline: Deadline) -> tuple[dict, list[float], bool]:
    """Algorithm 2: returns (job -> (relative start, SubPlan), per-sub-round admitted weights,
    stopped by the deadline)."""
    remaining = []
    for j in jobs:
        if deadline.expired():
            return {}, [], True
        if _fits_some_window(inst, j, tau):
            remaining.append(j)
    plans: dict[int, tuple[int, SubPlan]] = {}
    weights: list[float] = []
    for iota in range(1, alpha + 1):
        if not remaining:
            break
        if deadline.expired():
            return plans, weights, True
        out = a_maxweight(inst, remaining, tau, params, deadline=deadline)
        if out.stopped:
            return plans, weights, True
        if not out.plans:
            break
        for j, sub in out.plans.items():
            plans[j] = ((iota - 1) * tau + sub.start, sub)
        weights.append(out.weight(inst))
        remaining = [j for j in remaining if j not in out.plans]
    return plans, weights, False


def _fits_some_window(inst: Instance, j: int, tau: int) -> bool:
    """A job none of whose configurations lasts <= tau - 1 slots cannot be admitted (7b)."""
    return any(c[4] <= tau - 1 for c in inst.configurations(j))


def a_online_plans(inst: Instance, params: AOnlineParams = AOnlineParams(), *,
                   deadline: Deadline) -> tuple[list[Plan | None], OnlineResult]:
    """Algorithm 1 under ``params``: (Plan per job or None, per-round log). The log's ``stopped``
    says whether the deadline ended the run."""
    fixed = theorem_alpha(inst) if params.alpha == "theorem" else params.alpha

    def batch(rnd, pending):
        a_i = alpha_for(inst, [inst.jobs[j].weight for j in pending]) if fixed == "per_round" \
            else int(fixed)
        first = rnd.window[0] if params.window == "compact" else max(a_i * rnd.tau,
                                                                     rnd.busy_until + 1)
        if inst.n_servers * inst.n_res * rnd.tau > MAX_LEDGER_CELLS:  # issue 15: memory bound
            return BatchResult({}, None, {"alpha": a_i, "first": first, "weights": [],
                                          "skipped": "MAX_LEDGER_CELLS"})
        rel, weights, _ = a_dual(inst, pending, rnd.tau, a_i, params, deadline=deadline)
        admitted = {j: _absolute(first + r - 1, sub) for j, (r, sub) in rel.items()}
        last = max((p.start + p.duration - 1 for p in admitted.values()), default=None)
        return BatchResult(admitted, last, {"alpha": a_i, "first": first, "weights": weights})

    out = doubling_rounds(list(range(len(inst.jobs))), arrival=lambda j: inst.jobs[j].arrival,
                          schedule_batch=batch, window=compact_window,
                          max_rounds=params.max_rounds, deadline=deadline)
    plans = [out.plans.get(j) for j in range(len(inst.jobs))]
    return plans, out


def a_online(inst: Instance, params: AOnlineParams, *, deadline: Deadline,
             seed: int = 0) -> Outcome:
    """A_online (Algorithm 1 with A_dual, A_maxweight and the per-job subroutines, Algs. 2-7).

    Jobs are revealed in doubling rounds tau_i = 2^(i-1); round i's batch is scheduled by A_dual
    (up to alpha calls of A_maxweight, each admitting the jobs whose utility w_j - price cost is
    positive under the exponential prices (11)) in the window that ``params.window`` places.

    Parameters
    ----------
    inst
        The instance (PS or all-reduce).
    params
        :class:`AOnlineParams`: alpha rule, window, A_mincost1 variant, tie-break, round cap.
    deadline
        The whole call stops when it expires (no schedule, status ``time_limit``).
    seed
        Unused (A_online is deterministic).

    Returns
    -------
    Outcome
        The schedule (``feasible``); None with ``unknown`` when jobs remain after ``max_rounds``,
        or with ``time_limit`` when the deadline stopped it. ``info`` holds the per-round log
        (tau, batch, admitted, alpha, window start), Theorem 5's alpha, gamma, lambda and whether
        the assumptions (A1), (A2) hold.

    Notes
    -----
    Theorem 5 claims A_online is 4 alpha-competitive for sum_j w_j c_j under (A1), (A2), with
    alpha from eq. (6) over w(J) and windows at alpha tau_i (``AOnlineParams()``, registered as
    ``a_online``; ``a_online_exact_pricing`` uses the exact A_mincost1). Theorem 1 (A_mincost1 is
    optimal) fails: errata Z1. The paper's "alpha close to 4" is not the formula's alpha: errata
    Z2 (``a_online_compact`` and ``a_online_eft`` are non-paper variants with per-round alpha and
    compact windows). The ">= 30 % better than the baselines" of Sec. 7 is not reproduced:
    errata Z3.

    Examples
    --------
    >>> from optsched import generate, solve
    >>> res = solve(generate("elastic_cluster", "tiny", 0), "a_online")
    >>> res.status.value, res.guarantee >= 4
    ('feasible', True)
    """
    if (bad := infeasible_outcome(inst)) is not None:
        return bad
    plans, out = a_online_plans(inst, params, deadline=deadline)
    info: dict[str, Any] = {
        "rounds": [{"tau": r.round.tau, "batch": len(r.batch), "admitted": len(r.admitted),
                    **{k: v for k, v in r.info.items() if k != "weights"}} for r in out.rounds],
        "unscheduled": out.unscheduled, "alpha_theorem": theorem_alpha(inst), "gamma": gamma(inst),
        "lambda": inst.price_base}
    if out.stopped:  # (A1) needs every job's configurations: not computed after the deadline
        info["stopped"] = (f"deadline: {len(out.unscheduled)} of {len(inst.jobs)} jobs not "
                           f"scheduled when the time limit expired")
        return Outcome(None, SolveStatus.TIME_LIMIT, info=info)
    info["assumptions"] = assumptions(inst)
    if out.unscheduled:
        return Outcome(None, SolveStatus.UNKNOWN, info=info)
    return Outcome(Schedule(tuple(p for p in plans if p is not None)), SolveStatus.FEASIBLE,
                   info=info)


def four_alpha(inst: Instance) -> float:
    """Theorem 5's claimed competitive ratio 4 alpha (reproduced: errata Z4).

    Natural logs (digest Sec. 8 #3).
    """
    return 4.0 * theorem_alpha(inst)


def _absolute(start: int, sub: SubPlan) -> Plan:
    return Plan(start, sub.duration, sub.worker_type, sub.ps_type, sub.colocated, sub.workers,
                sub.ps)
