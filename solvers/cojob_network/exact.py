"""cojob_network: ``exact``, the best heuristic as warm start, Model F (stage-sequencing MILP, a
bound) and Model E (event-indexed MILP of (O)), with their size guards.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from optsched.deadline import NEVER, Deadline
from optsched.errors import InfeasibleSchedule
from optsched.problems import cojob_network as _problem
from optsched.problems.cojob_network import Instance, Schedule
from optsched.result import Outcome, SolveStatus
from optsched.simulate.flows import StageOrder, schedule_of, simulate, sum_sct
from optsched.solvers.cojob_network.algorithm import why_stopped
from optsched.solvers.cojob_network.baselines import make_policy
from optsched.solvers.cojob_network.bounds import chain_bound
from optsched.solvers.cojob_network.search import improve
from optsched.solvers.guard import Refusal, guard
from optsched.tolerance import at_most

# ----------------------------------------------------------------------------------------------------
# Exact and bound

#: At most this many chain-consistent orders are all simulated by :func:`exact` (spec Model BF).
BF_LIMIT = 400
#: Pyomo build + hand-off to HiGHS of Model F, measured on 2 loaded cores (paper testbed l = 16:
#: ~0.9 s for 6.6k non-zeros; l = 40: ~4.5 s for 83k): a conservative rate and fixed cost.
BUILD_TERMS_PER_S = 15_000.0
BUILD_OVERHEAD_S = 0.3
#: Model I is built as arrays straight into highspy (no Pyomo): ~800k non-zeros/s measured at load
#: 12 on 2 cores; a conservative rate for its time-left guard.
ARRAY_TERMS_PER_S = 200_000.0
#: HiGHS's root cut loop on Model I does not stop at its time limit (tiny 20 cojobs, ~152k
#: estimated terms: a 2.9-s limit ended after 4.8 s, all in root separation): Model I is solved
#: only when the time left covers its size at this rate (measured ~34k terms/s, load 1).
ROOT_TERMS_PER_S = 30_000.0


#: Heuristics :func:`exact` runs first (cheapest first): its incumbent is never worse than the best
#: of them that finishes (issue 14), and the best one warm-starts Model E.
WARM_METHODS = ("grouper", "pda_chain", "grouper_offline", "baraat", "sincronia", "fair_share")
#: Share of the time left that the warm-start heuristics may use together.
WARM_SHARE = 0.25
#: Share of the time left Model F may use (it is a bound; Models I and E get the rest).
F_SHARE = 0.5
#: Share of the time left the local search over stage orders (:func:`.search.improve`) may use.
SEARCH_SHARE = 0.1
#: Share of the time left Model I may use (the item-level bound; Model E gets the rest).
I_SHARE = 0.85
#: Share of the time left the LP-Primal cut loop may use (its cuts go into Model E).
LP_SHARE = 0.1
#: All Queyranne cuts (15) go into Model E when there are at most this many; otherwise the cuts the
#: LP-Primal cut loop added (a set on which LP-Primal reaches LP*) plus one per port (all of M_p).
CUT_LIMIT = 2_000


@dataclass
class _Incumbent:
    """The best verified schedule :func:`exact` has seen, its cost and where it came from."""

    value: float = math.inf
    schedule: Schedule | None = None
    source: str = ""

    def offer(self, value: float, schedule: Callable[[], Schedule], source: str) -> None:
        if value < self.value:
            self.value, self.schedule, self.source = value, schedule(), source


@dataclass
class _Proof:
    """What :func:`exact` has proven so far: the best bound, the last model report, whether a step
    was cut short by the deadline or the time-left guard."""

    bound: float
    rep: Any = None
    cut: bool = False
    f_order: tuple | None = None

    def raise_to(self, value: float | None, best: _Incumbent) -> None:
        """Take a valid lower bound (never above the incumbent: a bound above a verified schedule
        is solver noise, :func:`exact` then proves with the incumbent's value)."""
        if value is not None and math.isfinite(value):
            self.bound = max(self.bound, min(value, best.value))


def exact(instance: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """Exact: the best of the heuristics, of Model F's order, a local search and Models I and E,
    proven against the largest dual bound of Models F, I and E.

    1. The heuristics of :data:`WARM_METHODS` are simulated (together at most :data:`WARM_SHARE`
       of the time): the incumbent is never worse than the best of them (issue 14).
    2. Model F (stage sequencing MILP, :func:`optsched.models.cojob_network.build_ordering_milp`;
       its dual bound is a lower bound on every schedule ``verify`` accepts) and the simulation of
       its order (order-preserving priority scheduling).
    3. The local search over stage orders (:func:`.search.improve`, :data:`SEARCH_SHARE`) from
       the best schedule, with F's order as its ``guide``: on most small instances it finds a
       schedule that meets F's or I's bound.
    4. Model I (:class:`optsched.models.cojob_network.ItemOrder`: F over iterations, a lower
       bound >= F*; MIP start = the incumbent's completion order; no objective floor: F's bound
       as a floor row slowed the proof, tiny 7 cojobs seed 2: 594 nodes and unfinished after
       25 CPU-s with it, 131 nodes and 17.8 CPU-s without).
       Its stage order is simulated and offered.
    5. Model E (:func:`optsched.models.cojob_network.build_event_milp`, an exact MILP of (O) over
       rate timelines) with the incumbent's completion order as a MIP start, the horizon of :func:`event_horizon` and the Queyranne cuts of
       :func:`_event_cuts`. Its optimum is OPT(O) (proof in its docstring); its schedule is
       extracted and verified. Used when no job has a compute gap (else up to :data:`BF_LIMIT`
       chain-consistent orders are simulated: spec Model BF).

    Each step runs only while the incumbent does not meet the bound (:func:`optsched.tolerance.
    at_most`). Status ``optimal`` when the best verified schedule meets the bound;
    ``time_limit`` when a step was stopped by the deadline (the bound so far kept: F's, I's, E's
    or the chain bound (14)); ``feasible`` otherwise. A model over the size cap (whatever the
    deadline) or too big to build in the time left is not built (:func:`_fits`,
    ``info["stopped"]``); the cap alone gives ``feasible``, not ``time_limit``. When Model E is
    over the cap, steps 2-5 are skipped: the heuristics' best is returned at once, with
    ``info["not_built"]`` (so ``solve(..., "exact")`` goes on with certify). F's stage order,
    when solved, is the Outcome's ``guide`` (for certify's :func:`.search.improve`).
    """
    from optsched.models.cojob_network import event_milp_applies

    info: dict[str, Any] = {}
    best = _warm_start(instance, deadline, _share(deadline, WARM_SHARE), info)
    proof = _Proof(chain_bound(instance))
    if event_milp_applies(instance) and not _fits(_event_terms(instance), NEVER, "Model E", info):
        # Model E, the proof of last resort, is over the size cap whatever the time (paper
        # scale): the heuristics' best at once, as every family's exact past its cap; Model F's
        # bound and the stage-order search are certify's (order_bound, improve), any-time
        return _exact_outcome(None, best, proof.bound, False, info)
    _step_f(instance, best, proof, deadline, seed, info)
    if not at_most(best.value, proof.bound):
        proof.cut |= not _search(instance, best, proof, deadline, seed, info)
    if not at_most(best.value, proof.bound):
        _step_i(instance, best, proof, deadline, seed, info)
    if not at_most(best.value, proof.bound):
        if event_milp_applies(instance):
            e_rep = _model_e(instance, best, deadline, seed, info)
            if e_rep is not None:
                proof.rep = e_rep
                proof.raise_to(e_rep.bound, best)
                proof.cut |= e_rep.status is not SolveStatus.OPTIMAL
            else:                                        # not built: a time limit unless capped
                proof.cut |= not info.get("size_capped")
        elif info.get("f_status") == SolveStatus.OPTIMAL.value:
            proof.cut |= not _brute_force(instance, best, deadline, info)
    out = _exact_outcome(proof.rep, best, proof.bound, proof.cut, info)
    return out if proof.f_order is None else dataclasses.replace(out, guide=proof.f_order)


def _event_terms(instance: Instance) -> int:
    """Model E's non-zeros (:func:`optsched.models.cojob_network.event_milp_size`)."""
    from optsched.models.cojob_network import event_milp_size

    return event_milp_size(instance)["terms"]


def _step_f(instance: Instance, best: _Incumbent, proof: _Proof, deadline: Deadline, seed: int,
            info: dict) -> None:
    """Model F (:data:`F_SHARE`): its bound, its simulated order (kept in ``proof.f_order``)."""
    f_rep, f_order = solve_model_f(instance, _share(deadline, F_SHARE), seed, info)
    proof.cut |= f_rep is None and not info.get("size_capped")  # size guard: not built in time
    if f_rep is not None:
        proof.rep = f_rep
        info["f_status"] = f_rep.status.value
        if f_rep.bound is not None or f_rep.status is SolveStatus.OPTIMAL:
            proof.raise_to(f_rep.objective if f_rep.bound is None
                           else min(f_rep.bound, f_rep.objective), best)
        proof.cut |= f_rep.status is not SolveStatus.OPTIMAL
    if f_order is not None:
        proof.f_order = tuple(f_order)
        proof.cut |= not _offer_order(instance, best, f_order, "model_f_order", deadline, info)


def _search(instance: Instance, best: _Incumbent, proof: _Proof, deadline: Deadline, seed: int,
            info: dict) -> bool:
    """:func:`.search.improve` from the incumbent (:data:`SEARCH_SHARE`); False when the deadline
    cut it short before it reached a local optimum."""
    if best.schedule is None:
        return True
    out = improve(instance, best.schedule, deadline=_share(deadline, SEARCH_SHARE), seed=seed,
                  guide=proof.f_order)
    info["search"] = {k: out.info.get(k) for k in ("start", "value", "evaluated", "improved")}
    if out.schedule is not best.schedule and "value" in out.info:
        best.offer(float(out.info["value"]), lambda: out.schedule, "local_search")
    return out.status is not SolveStatus.TIME_LIMIT


def _step_i(instance: Instance, best: _Incumbent, proof: _Proof, deadline: Deadline, seed: int,
            info: dict) -> None:
    """Model I (:data:`I_SHARE`): its dual bound raises the proof; its stage order is offered."""
    i_rep, i_order = _model_i(instance, best, _share(deadline, I_SHARE), seed, info)
    if i_rep is None:
        proof.cut |= not info.get("model_i_capped", True)
        return
    proof.rep = i_rep
    proof.raise_to(i_rep.bound if i_rep.status is not SolveStatus.OPTIMAL
                   else min(i_rep.objective, i_rep.bound if i_rep.bound is not None
                            else i_rep.objective), best)
    if i_order is not None:
        proof.cut |= not _offer_order(instance, best, i_order, "model_i_order", deadline, info)


def _share(deadline: Deadline, share: float) -> Deadline:
    """A sub-deadline: ``share`` of the time left (the deadline itself without a limit)."""
    left = deadline.remaining()
    return deadline if left is None else deadline.within(share * left)


def _warm_start(instance: Instance, deadline: Deadline, budget: Deadline,
                info: dict) -> _Incumbent:
    """Simulate :data:`WARM_METHODS` within ``budget``; the best complete run is the incumbent.
    The first (grouper, the paper's algorithm) may use all of ``deadline``: at paper scale one
    simulation takes seconds on a loaded machine and exact must still return a schedule."""
    best = _Incumbent()
    for n, name in enumerate(WARM_METHODS):
        if budget.expired():
            info["warm_stopped"] = f"deadline before {name}"
            break
        run = simulate(instance, make_policy(instance, name), deadline=budget if n else deadline)
        if run.complete:
            best.offer(sum_sct(instance, run), lambda: schedule_of(run, (), name), name)
    info["warm_start"] = best.source or None
    info["warm_value"] = best.value if best.schedule is not None else None
    return best


def model_guard(terms: int, what: str, deadline: Deadline,
                rate: float = BUILD_TERMS_PER_S) -> Refusal | None:
    """:func:`optsched.solvers.guard.guard` for a model of ``terms`` non-zeros built at ``rate``
    non-zeros a second after :data:`BUILD_OVERHEAD_S` (Pyomo's rate by default)."""
    return guard(terms, what, deadline, BUILD_OVERHEAD_S + terms / rate)


def _fits(terms: int, deadline: Deadline, what: str, info: dict,
          rate: float = BUILD_TERMS_PER_S) -> bool:
    """Whether a model with ``terms`` non-zeros is built (:func:`model_guard`): False, with
    ``info["stopped"]`` and ``info["not_built"]``, when it is over the size cap (whatever the
    deadline) or cannot be built and handed to HiGHS in the time left (model building counts
    against the deadline). ``info["size_capped"]`` is True when the cap alone ruled it out, so
    :func:`exact` does not call that a time limit."""
    refusal = model_guard(terms, what, deadline, rate)
    if refusal is None:
        return True
    info["stopped"] = f"size guard: {refusal}"
    info["not_built"] = str(refusal)            # names ``what`` once, as every family's guard
    info["size_capped"] = refusal.late is None
    return False


def _build_f(instance: Instance, deadline: Deadline, info: dict) -> Any:
    """Model F built, or None when the size guard refuses it (``info`` says why): the one
    preparation :func:`solve_model_f` and :func:`exact_model` share."""
    from optsched.models import cojob_network as cm

    size = cm.ordering_milp_size(instance)
    info.update(binaries=size["binaries"], constraints=size["rows"])
    if not _fits(size["terms"], deadline, "Model F", info):
        return None
    return cm.build_ordering_milp(instance)


def solve_model_f(instance: Instance, deadline: Deadline, seed: int, info: dict):
    """Solve Model F; its report and its stage order (None, None when the size guard refuses it,
    ``info`` says why). Used by :func:`exact` and by :func:`.bounds.order_bound`."""
    from optsched.models import cojob_network as cm
    from optsched.solvers.highs import solve_model

    model = _build_f(instance, deadline, info)
    if model is None:
        return None, None
    rep = solve_model(model, deadline=deadline, seed=seed)
    info.update(f_star=rep.objective, milp_runtime_s=rep.runtime_s)
    return rep, (cm.extract_order(instance, model) if rep.has_solution else None)


def exact_model(instance: Instance, *, deadline: Deadline) -> Any:
    """Model F, the ordering MILP whose optimum F* :func:`exact` proves first (its bound, and the
    stage order it simulates), built but not solved; ``optsched solve --write-model``. The later
    models of :func:`exact` (I, E) depend on F's solution and are not written. Raises
    :class:`~optsched.errors.OptschedError` (one line) over the size guard."""
    from optsched.errors import OptschedError

    info: dict[str, Any] = {}
    model = _build_f(instance, deadline, info)
    if model is None:
        raise OptschedError(f"model not built: {info['not_built']}")
    model.name = "cojob_network exact: Model F, the stage-ordering MILP (its optimum F* bounds OPT)"
    return model


def _offer_order(instance: Instance, best: _Incumbent, order, source: str, deadline: Deadline,
                 info: dict) -> bool:
    """Simulate a stage order and offer it; False when the deadline stopped the simulation."""
    run = simulate(instance, StageOrder(order), deadline=deadline)
    if not run.complete:
        info["stopped"] = why_stopped(run)
        return False
    value = sum_sct(instance, run)
    info[f"{source}_value"] = value
    best.offer(value, lambda: schedule_of(run, order, "stage_order"), source)
    return True


def _model_i(instance: Instance, best: _Incumbent, deadline: Deadline, seed: int, info: dict):
    """Solve Model I (:class:`optsched.models.cojob_network.ItemOrder`) as arrays in HiGHS, with
    the incumbent's item completion order as a MIP start; its report (a :class:`~optsched.solvers.highs.SolveReport`) and the stage
    order of its solution (None, None when it does not fit)."""
    from optsched.models.cojob_network import ItemOrder
    from optsched.solvers.highs import ArrayModel, SolveReport

    size = ItemOrder.size(instance)
    info["model_i"] = size
    guard: dict = {}   # Model I only helps the proof: its refusal is no "not_built" of exact's
    if not _fits(size["terms"], deadline, "Model I", guard, ARRAY_TERMS_PER_S):
        info["model_i_skipped"] = guard["stopped"]
        info["model_i_capped"] = guard["size_capped"]
        return None, None
    left, root = deadline.remaining(), size["terms"] / ROOT_TERMS_PER_S
    if left is not None and left < root:
        info["model_i_skipped"] = (f"time guard: HiGHS's root cut loop (~{root:.1f} s, not "
                                   f"interrupted by its time limit) > {left:.1f} s left")
        info["model_i_capped"] = False
        return None, None
    model = ItemOrder(instance)
    cost, lo, hi = model.columns()
    nx = len(model.col)
    array = ArrayModel(0, [], [], seed=seed)
    empty = np.zeros(0, dtype=np.int32)
    array.add_columns(cost[:nx], lo[:nx], hi[:nx], np.zeros(nx, dtype=np.int32), empty, [],
                      integer=nx > 0)
    array.add_columns(cost[nx:], lo[nx:], hi[nx:], np.zeros(model.n_cols - nx, dtype=np.int32),
                      empty, [])
    array.add_rows(*model.rows())
    if best.schedule is not None:
        array.set_start(model.start(model.ranks_of(instance, best.schedule)))
    rep = array.solve(deadline=deadline)
    offset = sum(c.arrival * c.n_stages for c in instance.cojobs)
    objective = rep.objective - offset
    bound = None if rep.bound is None else rep.bound - offset
    if rep.status is SolveStatus.OPTIMAL and bound is None:
        bound = objective
    info.update(i_objective=objective, i_bound=bound, i_status=rep.status.value,
                i_runtime_s=rep.runtime_s)
    report = SolveReport(rep.status, objective, bound, rep.x is not None, rep.runtime_s,
                         {"solver": "highs", "model": "I", **rep.info})
    order = model.stage_order(rep.x) if rep.x is not None else None
    return report, order


def event_horizon(instance: Instance, upper: float) -> float:
    """A makespan every schedule of cost ``<= upper`` keeps: the stage z that finishes last has
    ``S_z - r_z <= upper - sum_{a != z} (S_a - r_a) <= upper - CB + c_z`` with ``c_a`` the chain
    bound (14) of stage a less its arrival and ``CB = sum_a c_a`` (:func:`.bounds.chain_bound`),
    so the makespan is ``<= upper - CB + max_a (r_a + c_a)`` (at most ``upper + max r``, the
    horizon of Model E's proof (i))."""
    latest = 0.0
    for g, cojob in enumerate(instance.cojobs):
        done = cojob.arrival
        for k in range(cojob.n_stages):
            done += float(instance.loads[g, k].max())
        latest = max(latest, done)
    return upper - chain_bound(instance) + latest


def _model_e(instance: Instance, best: _Incumbent, deadline: Deadline, seed: int, info: dict):
    """Model E with the incumbent's horizon (:func:`event_horizon`) and MIP start; its extracted schedule is verified and offered. None when there is no incumbent (no
    horizon) or the model does not fit."""
    from optsched.models import cojob_network as cm
    from optsched.solvers.highs import solve_model

    if best.schedule is None:
        info["event_milp"] = "no incumbent to bound the horizon"
        return None
    size = cm.event_milp_size(instance)
    info["event_milp"] = size
    if not _fits(size["terms"], deadline, "Model E", info):
        return None
    cuts = _event_cuts(instance, _share(deadline, LP_SHARE))
    if not _fits(size["terms"] + sum(len(m) for _, m in cuts), deadline, "Model E", info):
        return None
    horizon = event_horizon(instance, best.value)
    horizon += 1e-6 * max(1.0, horizon)      # the incumbent's makespan, within its tolerance
    model = cm.build_event_milp(instance, horizon, cuts)
    cm.set_event_start(instance, model, best.schedule)
    rep = solve_model(model, deadline=deadline, seed=seed, warm_start=True)
    info.update(e_objective=rep.objective, e_bound=rep.bound, e_runtime_s=rep.runtime_s,
                e_horizon=horizon, e_cuts=len(cuts))
    if rep.has_solution:
        schedule = cm.extract_event_schedule(instance, model)
        try:
            value = _problem.verify(instance, schedule)
        except InfeasibleSchedule as err:
            # HiGHS' feasibility tolerance can let an item of ~1e-6 bytes complete before its
            # release marker (found by the robust property: two cojobs arriving at 2 with flows of
            # 1e-6 bytes, Model E 2e-6 against OPT 3e-6). The schedule is not offered; E's dual
            # bound is kept only where it does not exceed the incumbent (``exact`` takes min).
            info["model_e_rejected"] = str(err)
        else:
            best.offer(value, lambda: schedule, "model_e")
    return rep


def _event_cuts(instance: Instance, deadline: Deadline) -> list:
    """Queyranne cuts (15) for Model E: all of them when there are at most :data:`CUT_LIMIT`
    (counted as ``sum_p (2^|M_p| - 1)`` before any is enumerated, issue 22 item 3: enumerating
    them all first is exponential in ``|M_p|``), else one per port (the whole ``M_p``) plus the
    cuts the LP-Primal cut loop adds within ``deadline`` (with them E's LP is >= LP*). Their terms
    count in Model E's size guard."""
    from optsched.models import cojob_network as cm
    from optsched.solvers.cojob_network.bounds import solve_lp_primal

    ports = cm.port_stages(instance)
    if sum(2 ** len(ms) - 1 for ms in ports.values()) <= CUT_LIMIT:
        return cm.all_cuts(instance)
    whole = [(p, tuple(ms)) for p, ms in ports.items() if ms]
    return whole + list(solve_lp_primal(instance, "sort", deadline=deadline).cut_list)


def _brute_force(instance: Instance, best: _Incumbent, deadline: Deadline, info: dict) -> bool:
    """Spec Model BF: simulate every chain-consistent order when there are at most
    :data:`BF_LIMIT`; False when the deadline cut the enumeration short."""
    orders = chain_orders(instance, BF_LIMIT)
    info["bf_orders"] = len(orders)
    for n, order in enumerate(orders):
        res = simulate(instance, StageOrder(order), record=False, deadline=deadline)
        if not res.complete:
            info["stopped"] = f"deadline: {n} of {len(orders)} orders simulated"
            return False
        value = sum_sct(instance, res)
        if value < best.value:
            _offer_order(instance, best, order, "bf", deadline, info)
    return True


def _exact_outcome(rep, best: _Incumbent, bound: float, cut: bool, info: dict) -> Outcome:
    """The Outcome of :func:`exact` through :func:`~optsched.solvers.highs.report_outcome`.

    Proven (``optimal``) when the incumbent meets ``bound``; the bound it meets is then reported
    as the model objective, so the registry checks verify's value against the proof. Otherwise
    no model objective (the models describe a bound, not the returned schedule)."""
    from optsched.solvers.highs import SolveReport, report_outcome

    proven = best.schedule is not None and at_most(best.value, bound)
    status = (SolveStatus.OPTIMAL if proven else
              SolveStatus.TIME_LIMIT if cut or best.schedule is None else SolveStatus.FEASIBLE)
    info["incumbent"] = best.source or None
    base = rep.info if rep is not None else {}
    runtime = rep.runtime_s if rep is not None else 0.0
    report = SolveReport(status, bound if proven else math.inf, bound, proven, runtime, base)
    out = report_outcome(report, lambda: best.schedule, fallback=best.schedule, info=info)
    return out


def chain_orders(instance: Instance, limit: int) -> list:
    """All stage orders in which (g, k) precedes (g, k+1), or [] if there are more than ``limit``."""
    sizes = [c.n_stages for c in instance.cojobs]
    count = math.factorial(sum(sizes)) // math.prod(math.factorial(k) for k in sizes)
    if count > limit:
        return []
    out = []

    def extend(prefix, nxt):
        if len(prefix) == len(instance.stages):
            out.append(tuple(prefix))
            return
        for g, k in enumerate(nxt):
            if k < sizes[g]:
                nxt[g] += 1
                extend(prefix + [(g, k)], nxt)
                nxt[g] -= 1
    extend([], [0] * len(sizes))
    return out
