"""cojob_network: ``lower_bound``, LP-Primal (13)-(15) with Queyranne cuts by sorting separation
(Lemma 1), and the chain bound.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from optsched.deadline import Deadline
from optsched.problems.cojob_network import Instance
from optsched.result import Outcome, SolveStatus

#: Cutting-plane rounds of :func:`solve_lp_primal` before it stops with the bound it has.
MAX_ROUNDS = 200


@dataclass(frozen=True)
class LpBound:
    """What :func:`solve_lp_primal` found.

    Attributes
    ----------
    value
        A valid lower bound on OPT: LP* when ``status`` is ``optimal``; with ``time_limit`` the
        optimum of the last LP solved (a relaxation of LP-Primal, its cuts a subset of (15)) or,
        before any, the chain bound (14); None only with ``unknown``.
    status
        ``optimal`` (converged: no violated (15) left), ``time_limit`` (deadline or round cap),
        ``unknown``.
    rounds, cuts
        LP solves and Queyranne cuts added.
    S
        Stage completion times of the last LP solved.
    runtime_s
        Time in HiGHS.
    stopped
        Why the loop stopped early (empty when it converged).
    cut_list
        The Queyranne cuts (15) added, as ``(p, stages)`` (Model E takes them, :mod:`.exact`).
    """

    value: float | None
    status: SolveStatus
    rounds: int
    cuts: int
    S: dict = dataclasses.field(default_factory=dict)
    runtime_s: float = 0.0
    stopped: str = ""
    cut_list: tuple = ()


def chain_ends(instance: Instance) -> dict:
    """``S_{g,k} = r_g + sum_{k' <= k} Lambda_{g,k'}`` of every stage: each right after its chain
    predecessor, the least completion (14) allows."""
    out: dict = {}
    for g, k in instance.stages:
        before = out[g, k - 1] if k else instance.cojobs[g].arrival
        out[g, k] = before + float(instance.loads[g, k].max())
    return out


def chain_bound(instance: Instance) -> float:
    """The optimum of LP-Primal without (15), :func:`chain_ends` summed less the arrivals (a
    valid lower bound by (14))."""
    return sum(end - instance.cojobs[g].arrival for (g, _), end in chain_ends(instance).items())


def solve_lp_primal(instance: Instance, separation: str = "sort", *, deadline: Deadline,
                    max_rounds: int = MAX_ROUNDS) -> LpBound:
    """Solve LP-Primal (13)–(15).

    Parameters
    ----------
    separation
        ``"sort"``: cutting planes; each round, for each port, sort ``M_p`` by the current ``S`` and
        add the most violated prefix (exact separation, polynomial). ``"enumerate"``: add (15) for
        every non-empty subset of every ``M_p`` up front (exponential; tiny instances).
    deadline
        Each LP gets what is left; the loop stops when it expires.
    max_rounds
        Cut rounds before the loop stops with the bound it has (status ``time_limit``).
    """
    from optsched.models import cojob_network as cm
    from optsched.solvers.highs import solve_model

    if separation == "enumerate":
        cuts = cm.all_cuts(instance)
        model = cm.build_lp_primal(instance, cuts)
        rep = solve_model(model, deadline=deadline)
        if rep.status is not SolveStatus.OPTIMAL:
            return LpBound(chain_bound(instance), SolveStatus.TIME_LIMIT, 1, len(cuts),
                           runtime_s=rep.runtime_s, stopped=f"LP {rep.status.value}")
        return LpBound(rep.objective, SolveStatus.OPTIMAL, 1, len(cuts),
                       cm.stage_values(instance, model), rep.runtime_s)
    if separation != "sort":
        raise ValueError(f"separation: unknown {separation!r} (sort, enumerate)")
    model = cm.build_lp_primal(instance)
    best, values = chain_bound(instance), {}
    added: list = []
    runtime = 0.0
    rounds = 0
    stopped = f"cut cap: no convergence in {max_rounds} rounds"
    while rounds < max_rounds:
        if deadline.expired():
            stopped = f"deadline: after {rounds} rounds"
            break
        rounds += 1
        rep = solve_model(model, deadline=deadline)
        runtime += rep.runtime_s
        if rep.status is not SolveStatus.OPTIMAL:
            stopped = f"round {rounds}: LP {rep.status.value}"
            break
        best = max(best, rep.objective)
        values = cm.stage_values(instance, model)
        new = cm.separate(instance, values)
        for p, subset in new:
            cm.add_cut(instance, model, p, subset)
        added += new
        if not new:
            return LpBound(rep.objective, SolveStatus.OPTIMAL, rounds, len(added), values, runtime,
                           cut_list=tuple(added))
    return LpBound(best, SolveStatus.TIME_LIMIT, rounds, len(added), values, runtime, stopped,
                   tuple(added))


def lower_bound(instance: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """LP-Primal (13)–(15) by cutting planes (Lemma 1: LP* <= OPT).

    ``optimal`` when the cut loop converged (LP*); ``time_limit`` when the deadline or the round cap
    stopped it, with the best bound it had (``info["stopped"]`` says why)."""
    res = solve_lp_primal(instance, "sort", deadline=deadline)
    info: dict[str, Any] = {"rounds": res.rounds, "cuts": res.cuts, "lp_runtime_s": res.runtime_s}
    if res.stopped:
        info["stopped"] = res.stopped
    return Outcome(None, res.status, res.value, info)


#: Share of the time left that :func:`order_bound` gives LP-Primal before Model F.
LP_SHARE = 0.2


def order_bound(instance: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """The larger of LP* (Lemma 1), the dual bound of Model F (spec Sec. 3.5.1) and the order
    enumeration above it.

    Model F is the linear-ordering MILP of LP-Primal: ``x_ab`` orders the stages by completion,
    (14) gives the chains and ``S_b >= L^b_p + sum_a L^a_p x_ab`` the port prefixes; any schedule
    ``verify`` accepts induces such an order (its completion order), so every dual bound HiGHS
    proves on F is <= OPT, and its LP already implies every Queyranne cut (15) (spec 3.5.1).
    LP-Primal runs first (:data:`LP_SHARE` of the time) so a bound exists even if F cannot be
    built; F gets the rest (:func:`.exact.solve_model_f`, the step exact takes, with its size guard). Any-time: a
    MILP stopped by the deadline returns its dual bound, still valid (status ``time_limit``).

    With time left, :func:`enumeration_bound` raises the bound above F's by enumerating the
    completion orders F cannot rule out (status ``time_limit`` unless it converged).

    The order with the least relaxed fluid LP of the enumeration, else the stage order of F's
    best solution, is returned as ``guide`` (certify hands it to :func:`.search.improve`, which
    starts from the better of it and its start schedule).
    """
    from optsched.solvers.cojob_network.exact import solve_model_f

    left = deadline.remaining()
    lp = solve_lp_primal(instance, "sort", deadline=deadline if left is None
                         else deadline.within(LP_SHARE * left))
    value, status = lp.value, lp.status
    info: dict[str, Any] = {"lp_primal": lp.value, "lp_status": lp.status.value}
    if deadline.expired():
        info["stopped"] = "Model F not built: deadline"
        return Outcome(None, SolveStatus.TIME_LIMIT, value, info)
    rep, guide = solve_model_f(instance, deadline, seed, info)   # exact's own step, guard included
    if rep is None:
        return Outcome(None, SolveStatus.TIME_LIMIT, value, info)
    f_bound = _milp_bound(rep)
    info.update(model_f=f_bound, model_f_status=rep.status.value, milp_runtime_s=rep.runtime_s)
    if f_bound is not None and (value is None or f_bound > value):
        value = f_bound
    status = (SolveStatus.OPTIMAL if rep.status is SolveStatus.OPTIMAL
              else SolveStatus.TIME_LIMIT)
    if value is not None and not deadline.expired():
        raised, least = enumeration_bound(instance, value, deadline=deadline, info=info)
        value, guide = max(value, raised), least or guide
        if not info["enumeration"].get("stopped", "").startswith("converged"):
            status = SolveStatus.TIME_LIMIT
    return Outcome(None, status, value, info, guide=guide)


def _milp_bound(rep) -> float | None:
    """The dual bound a MILP report proves (its objective when optimal), or None."""
    if rep.status is SolveStatus.OPTIMAL:
        return rep.objective if rep.bound is None else min(rep.bound, rep.objective)
    if rep.bound is None or not math.isfinite(rep.bound):
        return None
    return min(rep.bound, rep.objective)


# --------------------------------------------------------------------------- order enumeration

def order_costs_below(instance: Instance, limit: float, deadline: Deadline) -> list | None:
    """Every completion order ``sigma`` of the stages (chains kept) whose Model F cost
    ``F(sigma)`` is below ``limit``, as ``(F(sigma), sigma)`` sorted; None when the deadline
    stopped the enumeration.

    ``F(sigma)`` is the least cost of any schedule of (O) completing its stages in ``sigma``
    that Model F (spec Sec. 3.5.1) can see: ``S`` non-decreasing along ``sigma``, at least the
    heaviest port prefix ``max_p sum_{a <= b} L^a_p`` (every byte of the stages done so far has
    crossed ``p``) and the chain (14) ``S_pred + Lambda_b``, less ``sum r_g``. Depth-first over
    the interleavings of the cojobs' chains; a prefix is cut when its cost plus a bound on the
    rest reaches ``limit``: the ``j``-th stage still to complete ends no earlier than the prefix's
    loads plus the ``j`` smallest remaining loads on any port, nor than the ``j``-th smallest
    remaining chain bound (both depend only on which stages remain, so they are tabled once).
    """
    G = len(instance.cojobs)
    K = [c.n_stages for c in instance.cojobs]
    loads = {a: np.asarray(instance.loads[a], dtype=float) for a in instance.stages}
    chain = chain_ends(instance)
    arrived = sum(instance.cojobs[g].arrival for g, _ in instance.stages)
    rest: dict = {}

    def tail(ks: tuple) -> tuple:
        if ks not in rest:
            left = [(g, k) for g in range(G) for k in range(ks[g], K[g])]
            if left:
                ports = np.cumsum(np.sort(np.array([loads[a] for a in left]), axis=0), axis=0)
                rest[ks] = (ports, np.sort([chain[a] for a in left]))
            else:
                rest[ks] = (None, None)
        return rest[ks]

    found: list = []
    stack: list[tuple] = [((0,) * G, np.zeros(instance.n_ports), (0.0,) * G, 0.0, 0.0, ())]
    nodes = 0
    while stack:
        nodes += 1
        if nodes % 256 == 0 and deadline.expired():
            return None
        ks, prefix, ends, last, cost, order = stack.pop()
        ports, chains = tail(ks)
        if ports is None:
            if cost - arrived < limit:
                found.append((cost - arrived, order))
            continue
        rest_bound = np.maximum.accumulate(np.maximum(np.maximum((ports + prefix).max(axis=1),
                                                                 chains), last)).sum()
        if cost + rest_bound >= limit + arrived:
            continue
        for g in range(G):
            k = ks[g]
            if k == K[g]:
                continue
            a = (g, k)
            after = prefix + loads[a]
            start = ends[g] if k else instance.cojobs[g].arrival
            end = max(float(after.max()), last, start + float(loads[a].max()))
            stack.append((ks[:g] + (k + 1,) + ks[g + 1:], after,
                          ends[:g] + (end,) + ends[g + 1:], end, cost + end, order + (a,)))
    return sorted(found)


#: Relative step by which :func:`enumeration_bound` raises its limit above the bound it starts from.
ENUM_STEP = 0.004

#: Most rounds of :func:`enumeration_bound` (its limit at most 20 % above where it starts).
ENUM_ROUNDS = 50

#: Most prefixes (stages done per cojob) :func:`enumeration_bound` may table: ``prod (K_g + 1)``
#: (paper: 5^4 = 625; the simulation scenario's 40 cojobs are far past it).
MAX_PREFIXES = 100_000


def enumeration_bound(instance: Instance, floor: float, *, deadline: Deadline,
                      info: dict) -> tuple[float, tuple | None]:
    """A bound above ``floor`` (a valid bound, Model F's) by enumerating completion orders.

    Every schedule completes its stages in some order ``sigma`` (chains kept) and costs at least
    ``F(sigma)`` (:func:`order_costs_below`) and at least the order's relaxed fluid LP
    (:func:`.fluid.bound_lp`, which sees that a job's ports progress together, Eq. (7); Model F
    does not). So for any ``limit``, ``min(limit, min over sigma with F(sigma) < limit of the LP)``
    is a valid bound. Rounds raise ``limit`` by :data:`ENUM_STEP` of ``floor`` each; inside a
    round the orders are solved by increasing ``F`` (each LP once), so before the one of cost
    ``c`` the bound ``min(c, least LP so far)`` already holds: any-time. It stops when the least
    LP is the bound (no later order can raise it), at the deadline or after :data:`ENUM_ROUNDS`.
    Paper seed 1: the 869 orders below ``1.0036 F*`` all have an LP of at least 42,843.6.
    Returns the bound and the order of the least LP (None when none was solved); ``info`` gets
    ``enumeration`` = rounds, orders solved, last limit, why it stopped."""
    from optsched.solvers.cojob_network import fluid

    stats: dict[str, Any] = {"rounds": 0, "orders": 0, "limit": floor}
    info["enumeration"] = stats
    if math.prod(c.n_stages + 1 for c in instance.cojobs) > MAX_PREFIXES:
        stats["skipped"] = f"more than {MAX_PREFIXES} prefixes"
        return floor, None
    if deadline.end is None or not floor > 0:
        stats["skipped"] = "no time limit" if deadline.end is None else "no positive floor"
        return floor, None
    jobs = fluid.jobs_of(instance)
    solved: dict = {}
    best, low = floor, math.inf
    while not deadline.expired() and stats["rounds"] < ENUM_ROUNDS:
        limit = floor * (1 + ENUM_STEP * (stats["rounds"] + 1))
        found = order_costs_below(instance, limit, deadline)
        if found is None:
            break
        for cost, order in found:          # by cost: every order below ``cost`` is solved
            best = max(best, min(cost, low))
            if low <= best or deadline.expired():
                break
            if order not in solved:
                value = fluid.bound_lp(instance, order, jobs)
                solved[order] = cost if value is None else max(cost, value)
                low = min(low, solved[order])
        else:
            best = max(best, min(limit, low))
            stats["rounds"] += 1
            stats["limit"] = limit
        stats["orders"] = len(solved)
        if low <= best:
            stats["stopped"] = "converged: an order's LP is the bound"
            break
    stats.setdefault("stopped", "deadline" if deadline.expired() else "round cap")
    return best, _least(solved)


def _least(solved: dict) -> tuple | None:
    return min(solved, key=solved.__getitem__) if solved else None
