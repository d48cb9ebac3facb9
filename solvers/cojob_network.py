"""cojob_network solvers — Grouper (Zhou, Yu, Sun, IEEE TNSM 2020; seeds/003).

Methods
-------
exact           Model F (stage sequencing MILP, gap 0) for the order, then the order-preserving
                flow simulator; ``optimal`` only when the simulated cost equals F* (F* <= OPT).
lower_bound     LP-Primal (13)–(15) with Queyranne cuts by sorting separation (Lemma 1).
pda             Algorithm 1 exactly as printed (weights 1 + 2^-(k+1), every unscheduled stage is a
                candidate, heaviest port, min w/L, reverse order), offline, one run at t = 0, then
                order-preserving priority flow scheduling. Claimed 2 - 2/(l+1) (Theorem 2).
grouper         the deployed system (Sec. IV-C): PDA recomputed at every arrival / stage start / end
                on the remaining loads, assuming every alive job runs every remaining stage
                (online); chain-tail candidates as in the authors' code (spec Sec. 4.2 preset
                ``recommended``) so the order respects the stage chains.
grouper_offline the same loop with the true survivor sets (knows where each trial is stopped).
baraat          FIFO over cojob stages by stage start time, limited multiplexing (a stage that has
                sent more than theta bytes lets the next stage share its class).
sincronia       BSSI (PDA with unit weights) over the in-flight coflows (one iteration of one job),
                recomputed at every coflow start and end.
fair_share      per-flow max-min fair share (TCP/DCTCP idealisation).
"""

from __future__ import annotations

import math

import numpy as np

from optsched.models import cojob_network as cm
from optsched.problems.cojob_network import Instance, stage_load
from optsched.family import Family
from optsched.problems import cojob_network as _problem
from optsched.workloads import cojob_network as _workloads
from optsched.method import Method
from optsched.result import Outcome, SolveStatus
from optsched.simulate.flows import FairShare, StageOrder, schedule_of, simulate, sum_sct
from optsched.solvers.highs import solve_model
from optsched.tolerance import at_most

TIE = 1e-12


# ----------------------------------------------------------------------------------------------------
# PDA: paper Algorithm 1


def initial_weight(rule: str, k: int, last: bool) -> float:
    """``w^0`` of a stage with 1-based index ``k`` (Alg. 1 lines 9-11; spec E5/E23).

    ``paper``: 1 + 2^-(k+1) (Eq. (46)); ``literal``: 1 + A_{k+1} - A_k with A_k = 1 - 2^-k and
    A_{K+1} = 0 (= 2^-K for the last stage); ``code``: 1 + 2^-k (authors' code); ``unit``: 1.
    """
    if rule == "paper":
        return 1 + 2.0 ** -(k + 1)
    if rule == "literal":
        return 2.0 ** -k if last else 1 + 2.0 ** -(k + 1)
    if rule == "code":
        return 1 + 2.0 ** -k
    if rule == "unit":
        return 1.0
    raise ValueError(f"weights: unknown rule {rule!r}")


def pda(loads: dict, chains: dict, *, weights: str = "paper", candidates: str = "all",
        clip: bool = False, index: dict | None = None) -> tuple[list, dict]:
    """Primal-dual stage permutation, paper Algorithm 1 (reconstructed per spec Sec. 4.2).

    Parameters
    ----------
    loads
        ``stage -> array of 2P port loads`` (Eq. (27)).
    chains
        ``cojob -> list of its stages in chain order`` (only the stages still to schedule).
    weights
        Initial weight rule, see :func:`initial_weight`.
    candidates
        ``all`` (Alg. 1 line 16 as printed: any unscheduled stage) or ``chain_tail`` (only the last
        unscheduled stage of each cojob, as the authors' code; keeps the chains).
    clip
        Clip residual weights at 0 after the update of line 19.
    index
        ``stage -> 1-based absolute stage index k`` for the weights (default: position in chain + 1).

    Returns
    -------
    order, certificate
        ``order[0]`` has the highest priority. The certificate holds per iteration (from the back)
        ``(lambda, n, rho)`` with ``M(n) = order[:n]``, the initial weights and ``A``.
    """
    stages = [a for chain in chains.values() for a in chain]
    pos = {a: n for n, a in enumerate(stages)}
    L = np.array([loads[a] for a in stages], dtype=float).reshape(len(stages), -1)
    last = {a: chain[-1] == a for chain in chains.values() for a in chain}
    owner = {a: key for key, chain in chains.items() for a in chain}
    k_of = index or {a: n + 1 for chain in chains.values() for n, a in enumerate(chain)}
    w0 = np.array([initial_weight(weights, k_of[a], last[a]) for a in stages])
    w = w0.copy()
    alive = np.ones(len(stages), dtype=bool)
    lbar = L.sum(axis=0)                                                       # line 13
    tails = {g: list(chain) for g, chain in chains.items()}
    order: list = [None] * len(stages)
    trace = []
    for n in range(len(stages), 0, -1):                                        # line 14
        cand = (np.flatnonzero(alive) if candidates == "all"
                else np.array([pos[c[-1]] for c in tails.values() if c], dtype=int))
        pick, lam, rho = _pda_step(L, w, lbar, cand, stages, k_of)
        if lam is not None:                                                    # line 19
            w[alive] -= rho * L[alive, lam]
            if clip:
                np.maximum(w, 0.0, out=w)
        order[n - 1] = stages[pick]                                            # line 17
        trace.append((lam, n, rho))                                            # line 20
        lbar -= L[pick]                                                        # line 21
        alive[pick] = False                                                    # line 22
        chain = tails[owner[stages[pick]]]
        if chain and chain[-1] == stages[pick]:
            chain.pop()
        elif candidates == "chain_tail":
            raise AssertionError("chain_tail picked a non-tail stage")
    return order, {"trace": trace, "w0": dict(zip(stages, w0)), "weights": weights}


def _pda_step(L, w, lbar, cand, stages, k_of):
    """Lines 15-18: heaviest port among ports the candidates load, then min ``w / L`` (the PDF
    prints ``L / w``: E7); zero-load candidates go last-in-order first (step 4a)."""
    sub = L[cand]
    loaded = sub.max(axis=0) > 0
    if not loaded.any():
        pick = max(cand, key=lambda c: _tie_key(stages[c], k_of))
        return pick, None, 0.0
    lam = int(np.flatnonzero(loaded)[np.argmax(lbar[loaded])])               # line 15
    plus = cand[L[cand, lam] > 0]
    ratio = w[plus] / L[plus, lam]
    rho = float(ratio.min())                                                   # lines 16, 18
    ties = plus[ratio <= rho + TIE * abs(rho) + 1e-15]
    pick = max(ties, key=lambda c: _tie_key(stages[c], k_of))
    return int(pick), lam, max(rho, 0.0)


def _tie_key(stage, k_of):
    """Spec's recommended tie rule: largest stage index, then largest cojob id."""
    return (k_of[stage], stage)


def dual_objective(instance: Instance, order: list, cert: dict) -> float:
    """Value (17) of the PDA dual certificate with alpha = A on the bottleneck port (only for the
    ``literal``/``unit`` weights, where it is feasible; offline, all r_g = 0)."""
    total = 0.0
    if cert["weights"] == "literal":
        for g, k in order:
            total += (1 - 2.0 ** -(k + 1)) * float(instance.loads[g, k].max())
    for lam, n, rho in cert["trace"]:
        if lam is not None and rho > 0:
            total += rho * cm.queyranne_rhs(instance, lam, order[:n])
    return total


def offline_order(instance: Instance, **options) -> tuple[list, dict]:
    """PDA on the whole instance at t = 0 with the true loads (Theorem 2's setting)."""
    chains = {g: [(g, k) for k in range(c.n_stages)] for g, c in enumerate(instance.cojobs)}
    return pda(instance.loads, chains, **options)


# ----------------------------------------------------------------------------------------------------
# Policies for the flow simulator


class Grouper:
    """Online Grouper (Sec. IV-C), recomputed immediately at every arrival and stage start/end.

    ``offline=True`` uses the true survivor sets (GrouperOffline); otherwise every job still alive
    is assumed to run every remaining stage. Remaining iterations of the current stage are counted
    per job (the coflow in flight as a whole iteration, as the authors' code).
    """

    def __init__(self, instance: Instance, offline: bool = False, weights: str = "paper",
                 candidates: str = "chain_tail", clip: bool = True):
        self.inst, self.offline = instance, offline
        self.options = dict(weights=weights, candidates=candidates, clip=clip)
        self.position: dict = {}
        self.name = "grouper_offline" if offline else "grouper"
        self.runs = 0

    def classes(self, sim, events):
        if any(e[0] in ("arrival", "stage_start", "stage_end") for e in events):
            self._recompute(sim)
        return {(g, j): self.position.get((g, sim.stage[g]), math.inf) for g, j in sim.communicating()}

    def _recompute(self, sim) -> None:
        loads, chains, index = {}, {}, {}
        for g in sim.active_cojobs():
            chains[g] = []
            for k in range(sim.stage[g], self.inst.cojobs[g].n_stages):
                load = self._load(sim, g, k)
                if load is not None:
                    loads[g, k] = load
                    chains[g].append((g, k))
                    index[g, k] = k + 1
        order, _ = pda(loads, chains, index=index, **self.options) if loads else ([], {})
        self.position = {a: n for n, a in enumerate(order)}
        self.runs += 1

    def _load(self, sim, g: int, k: int):
        cojob = self.inst.cojobs[g]
        k0 = sim.stage[g]
        jobs = cojob.alive(k) if self.offline else cojob.alive(k0)
        if not jobs:
            return None
        if k > k0:
            return stage_load(self.inst, g, k, jobs)
        load = np.zeros(self.inst.n_ports)
        for j in jobs:
            left = cojob.iterations[k0] - sim.iteration[g][j] + (1 if sim.busy(g, j) else 0)
            for s, d, x in cojob.jobs[j].flows:
                load[s] += left * x
                load[self.inst.machines + d] += left * x
        return load / self.inst.capacity


class Baraat:
    """Baraat (FIFO task scheduling with limited multiplexing): a task is a cojob stage; classes
    follow stage start time (ties: arrival, cojob id). A stage that has sent more than ``theta``
    bytes is *heavy* and lets the next stage in FIFO order share its class."""

    name = "baraat"

    def __init__(self, instance: Instance, theta: float | None = None):
        self.inst = instance
        if theta is None:   # median stage size: Baraat's heavy-task threshold, learned from history
            theta = float(np.median([instance.loads[a][: instance.machines].sum() * instance.capacity
                                     for a in instance.stages]))
        self.theta = theta

    def classes(self, sim, events):
        fifo = sorted(sim.active_cojobs(),
                      key=lambda g: (sim.stage_start[g][sim.stage[g]], self.inst.cojobs[g].arrival, g))
        cls, c, heavy_prev = {}, 0, False
        for g in fifo:
            if not heavy_prev:
                c += 1
            cls[g] = c
            k = sim.stage[g]
            heavy_prev = sum(sim.sent[g][j][k] for j in range(len(self.inst.cojobs[g].jobs))) > self.theta
        return {(g, j): cls[g] for g, j in sim.communicating()}


class Sincronia:
    """Sincronia (BSSI, i.e. PDA with unit weights and all candidates, at coflow level): every
    in-flight coflow (one iteration of one job) is ordered by its remaining bytes per port,
    recomputed at every coflow start and end."""

    name = "sincronia"

    def __init__(self, instance: Instance):
        self.inst = instance
        self.position: dict = {}

    def classes(self, sim, events):
        if any(e[0] in ("coflow_start", "coflow_end") for e in events):
            loads, P = {}, self.inst.machines
            for g, j in sim.communicating():
                load = np.zeros(2 * P)
                for (s, d, _), left in zip(self.inst.cojobs[g].jobs[j].flows, sim.rem[g, j]):
                    load[s] += left
                    load[P + d] += left
                loads[g, j] = load
            order, _ = pda(loads, {a: [a] for a in loads}, weights="unit", candidates="all")
            self.position = {a: n for n, a in enumerate(order)}
        return {a: self.position[a] for a in sim.communicating()}


def make_policy(instance: Instance, name: str, **options):
    """The simulator policy called ``name`` (pda, grouper, grouper_offline, baraat, sincronia,
    fair_share)."""
    if name == "pda":
        order, _ = offline_order(instance, weights="paper", candidates="all")
        return StageOrder(order)
    if name == "grouper":
        return Grouper(instance, **options)
    if name == "grouper_offline":
        return Grouper(instance, offline=True, **options)
    if name == "baraat":
        return Baraat(instance, **options)
    if name == "sincronia":
        return Sincronia(instance)
    if name == "fair_share":
        return FairShare()
    raise ValueError(f"policy: unknown {name!r}")


def _run(instance: Instance, name: str) -> Outcome:
    policy = make_policy(instance, name)
    res = simulate(instance, policy)
    order = getattr(policy, "order", ())
    info = {"events": res.events, "allocations": res.allocations, "sim_wall_s": res.wall_s}
    return Outcome(schedule_of(res, order, name), SolveStatus.FEASIBLE, info=info)


def run_pda(instance: Instance, *, time_limit=None, seed: int = 0) -> Outcome:
    """Algorithm 1 as printed + order-preserving priority scheduling (offline)."""
    return _run(instance, "pda")


def grouper(instance: Instance, *, time_limit=None, seed: int = 0) -> Outcome:
    """Online Grouper (PDA recomputed at every stage event, survivors unknown)."""
    return _run(instance, "grouper")


def grouper_offline(instance: Instance, *, time_limit=None, seed: int = 0) -> Outcome:
    """Grouper with the true survivor sets."""
    return _run(instance, "grouper_offline")


def baraat(instance: Instance, *, time_limit=None, seed: int = 0) -> Outcome:
    """Baraat: FIFO over stages with limited multiplexing."""
    return _run(instance, "baraat")


def sincronia(instance: Instance, *, time_limit=None, seed: int = 0) -> Outcome:
    """Sincronia: BSSI order over in-flight coflows."""
    return _run(instance, "sincronia")


def fair_share(instance: Instance, *, time_limit=None, seed: int = 0) -> Outcome:
    """Per-flow max-min fair share."""
    return _run(instance, "fair_share")


# ----------------------------------------------------------------------------------------------------
# Exact and bound


def exact(instance: Instance, *, time_limit=None, seed: int = 0) -> Outcome:
    """Model F (exact stage sequencing MILP, a lower bound F* on OPT(O)); its order is simulated with
    order-preserving priority scheduling, and when there are at most ``BF_LIMIT`` chain-consistent
    orders every one of them is simulated too (spec Model BF) and the best is kept.

    Status ``optimal`` only if the simulated (verified) cost is within the tolerance policy
    (:func:`optsched.tolerance.at_most`) of the MILP's *dual bound*, a valid lower bound on every
    schedule ``verify`` accepts: any feasible rate timeline induces a chain-consistent completion
    order whose stage completion times satisfy Model F's constraints (module ``models``). The proof
    does not need the order space to contain an optimal schedule: a simulated order that meets the
    bound is optimal. Otherwise ``feasible`` with ``lower_bound`` = that bound."""
    model = cm.build_ordering_milp(instance)
    rep = solve_model(model, time_limit=time_limit, seed=seed)
    info = {"f_star": rep.objective, "milp": rep.info, "binaries": len(model.x),
            "constraints": model.nconstraints(), "milp_runtime_s": rep.runtime_s}
    if not rep.has_solution:
        return Outcome(None, rep.status, rep.bound, info)
    # the MILP's proven lower bound: its dual bound (<= the incumbent F*; HiGHS stops at an absolute
    # gap too), never more than the incumbent
    bound = rep.objective if rep.bound is None else min(rep.bound, rep.objective)
    order = cm.extract_order(instance, model)
    value = sum_sct(instance, _sim_of(instance, order))
    info["f_order_value"] = value
    if rep.status is SolveStatus.OPTIMAL and not at_most(value, bound):
        orders = chain_orders(instance, BF_LIMIT)
        if orders:
            info["bf_orders"] = len(orders)
            value, order = min((sum_sct(instance, _sim_of(instance, o)), o) for o in orders)
    schedule = schedule_of(simulate(instance, StageOrder(order)), order, "stage_order")
    proven = rep.status is SolveStatus.OPTIMAL and at_most(value, bound)
    status = SolveStatus.OPTIMAL if proven else (
        SolveStatus.FEASIBLE if rep.status is SolveStatus.OPTIMAL else rep.status)
    if rep.status is not SolveStatus.OPTIMAL:
        bound = rep.bound
    # the registry compares the model's objective with verify's and demotes on disagreement
    return Outcome(schedule, status, bound, info, model_objective=rep.objective if proven else None)


BF_LIMIT = 400


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


def _sim_of(instance, order):
    return simulate(instance, StageOrder(order), record=False)


def lower_bound(instance: Instance, *, time_limit=None, seed: int = 0) -> Outcome:
    """LP-Primal (13)–(15) by cutting planes (Lemma 1: LP* <= OPT)."""
    res = cm.solve_lp_primal(instance, "sort", time_limit=time_limit)
    info = {"rounds": res["rounds"], "cuts": res["cuts"], "lp_runtime_s": res["runtime_s"]}
    if res["status"] is not SolveStatus.OPTIMAL:
        return Outcome(None, SolveStatus.UNKNOWN, None, info)
    return Outcome(None, SolveStatus.OPTIMAL, res["value"], info)


def claimed_ratio(instance: Instance) -> float:
    """Theorem 2's claim: 2 - 2/(l+1), l = number of stages (does not hold: docs/errata.md)."""
    return 2 - 2 / (len(instance.stages) + 1)


METHODS = (
    Method("exact", "exact", exact, description="stage-sequencing MILP (F) + priority simulation"),
    Method("lower_bound", "bound", lower_bound, description="LP-Primal (13)-(15), Queyranne cuts"),
    Method("pda", "algorithm", run_pda, guarantee=claimed_ratio,
           description="Algorithm 1 as printed + order-preserving flow scheduling (offline)"),
    Method("grouper", "algorithm", grouper, description="online Grouper, PDA at every stage event"),
    Method("grouper_offline", "algorithm", grouper_offline,
           description="Grouper knowing where each trial stops"),
    Method("baraat", "baseline", baraat, description="FIFO over stages, limited multiplexing"),
    Method("sincronia", "baseline", sincronia, description="BSSI over in-flight coflows"),
    Method("fair_share", "baseline", fair_share, description="per-flow max-min fair share"),
)
SPEC = Family(
    name="cojob_network",
    description="Zhou et al. (003), Grouper: cojob stage scheduling on a big switch, min sum SCT",
    problem=_problem,
    workloads=_workloads,
    methods=METHODS,
    default_method="grouper",
)
