"""cojob_network: ``lower_bound``, LP-Primal (13)-(15) with Queyranne cuts by sorting separation
(Lemma 1), and the chain bound.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

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


def chain_bound(instance: Instance) -> float:
    """The optimum of LP-Primal without (15): every stage right after its chain predecessor,
    ``S_{g,k} = r_g + sum_{k' <= k} Lambda_{g,k'}`` (a valid lower bound by (14))."""
    total = 0.0
    for g, cojob in enumerate(instance.cojobs):
        done = 0.0
        for k in range(cojob.n_stages):
            done += float(instance.loads[g, k].max())
            total += done
    return total


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
    """The larger of LP* (Lemma 1) and the dual bound of Model F (spec Sec. 3.5.1).

    Model F is the linear-ordering MILP of LP-Primal: ``x_ab`` orders the stages by completion,
    (14) gives the chains and ``S_b >= L^b_p + sum_a L^a_p x_ab`` the port prefixes; any schedule
    ``verify`` accepts induces such an order (its completion order), so every dual bound HiGHS
    proves on F is <= OPT, and its LP already implies every Queyranne cut (15) (spec 3.5.1).
    LP-Primal runs first (:data:`LP_SHARE` of the time) so a bound exists even if F cannot be
    built; F gets the rest (:func:`.exact.solve_model_f`, the step exact takes, with its size guard). Any-time: a
    MILP stopped by the deadline returns its dual bound, still valid (status ``time_limit``).

    The stage order of F's best solution is returned as ``guide`` (certify hands it to
    :func:`.search.improve`, which starts from the better of it and its start schedule).
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
    return Outcome(None, status, value, info, guide=guide)


def _milp_bound(rep) -> float | None:
    """The dual bound a MILP report proves (its objective when optimal), or None."""
    if rep.status is SolveStatus.OPTIMAL:
        return rep.objective if rep.bound is None else min(rep.bound, rep.objective)
    if rep.bound is None or not math.isfinite(rep.bound):
        return None
    return min(rep.bound, rep.objective)
