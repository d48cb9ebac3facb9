"""cojob_network solvers — Grouper (Zhou, Yu, Sun, IEEE TNSM 2020; seeds/003).

Methods
-------
exact           best of the heuristics (warm start), Model F (stage sequencing MILP, a bound)
                and its simulated order, then Model E (event-indexed MILP of (O) over rate
                timelines, exact; no order enumeration); ``optimal`` when the best verified
                schedule meets the larger of F's and E's dual bounds.
lower_bound     LP-Primal (13)–(15) with Queyranne cuts by sorting separation (Lemma 1).
pda             Algorithm 1 exactly as printed (weights 1 + 2^-(k+1), every unscheduled stage is a
                candidate, heaviest port, min w/L, reverse order), offline, one run at t = 0, then
                order-preserving priority flow scheduling. Claimed 2 - 2/(l+1) (Theorem 2).
                ``pda(instance, PdaParams())``.
grouper         the deployed system (Sec. IV-C): PDA recomputed at every arrival / stage start / end
                on the remaining loads, assuming every alive job runs every remaining stage
                (online); chain-tail candidates as in the authors' code (spec Sec. 4.2 preset
                ``recommended``) so the order respects the stage chains. ``grouper(instance,
                GrouperParams())``.
grouper_offline the same function with ``GrouperParams(loads="offline")``: the true survivor sets
                (knows where each trial is stopped).
baraat          FIFO over cojob stages by stage start time, limited multiplexing (a stage that has
                sent more than theta bytes lets the next stage share its class); ``BaraatParams``.
sincronia       BSSI (PDA with unit weights) over the in-flight coflows (one iteration of one job),
                recomputed at every coflow start and end.
fair_share      per-flow max-min fair share (TCP/DCTCP idealisation).

Every heuristic runs the event-driven flow simulator (:mod:`optsched.simulate.flows`) under the
call's :class:`~optsched.deadline.Deadline`: a simulation stopped by it returns no schedule and
status ``time_limit``. This module imports neither Pyomo nor HiGHS at import time (the models and
``solvers.highs`` are imported inside :func:`exact`, :func:`solve_lp_primal` and
:func:`dual_objective`), so collecting the Family is cheap.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Callable, Literal, Mapping, Sequence

import numpy as np

from optsched.deadline import NEVER, Deadline
from optsched.errors import InfeasibleSchedule
from optsched.family import CompareSpec, Family
from optsched.method import Method, Params, param
from optsched.problems import cojob_network as _problem
from optsched.problems.cojob_network import Instance, Schedule, stage_load
from optsched.result import Outcome, SolveStatus
from optsched.simulate.flows import (FairShare, Policy, SimResult, StageOrder, schedule_of,
                                     simulate, sum_sct)
from optsched.tolerance import at_most
from optsched.workloads import cojob_network as _workloads

TIE = 1e-12

Stage = tuple[int, int]
Weights = Literal["paper", "literal", "code", "unit"]
Candidates = Literal["all", "chain_tail"]
Loads = Literal["online", "offline"]
Update = Literal["own_load", "authors_code"]
Port = Literal["loaded", "all"]
Tie = Literal["stage", "first_cojob"]
Trigger = Literal["stage_events", "authors"]
WEIGHTS: tuple[str, ...] = ("paper", "literal", "code", "unit")
CANDIDATES: tuple[str, ...] = ("all", "chain_tail")
LOADS: tuple[str, ...] = ("online", "offline")
UPDATES: tuple[str, ...] = ("own_load", "authors_code")
PORTS: tuple[str, ...] = ("loaded", "all")
TIES: tuple[str, ...] = ("stage", "first_cojob")
TRIGGERS: tuple[str, ...] = ("stage_events", "authors")


# ----------------------------------------------------------------------------------------------------
# Parameters


@dataclass(frozen=True)
class PdaParams(Params):
    """The choices of paper Algorithm 1 (PDA); the defaults are the algorithm as printed (spec
    Sec. 4.2 preset ``paper_alg1``)."""

    weights: Weights = param(
        "paper", "Alg. 1 lines 9-11 / Eq. (46): initial weight w0 = 1 + 2^-(k+1) ('paper'); "
                 "'literal' reads line 10 with alpha_{g,K_g+1} = 0 (2^-K_g for a last stage, "
                 "E5); 'code' 1 + 2^-k (authors' code, E23); 'unit' 1 (Sincronia's BSSI)")
    candidates: Candidates = param(
        "all", "Alg. 1 line 16: the argmin runs over every unscheduled stage ('all', as printed; "
               "can break the stage chains, E8) or only over each cojob's last unscheduled stage "
               "('chain_tail', the authors' code)")
    clip: bool = param(
        False, "Alg. 1 line 19: residual weights w - rho L are not clipped at 0 (False, as "
               "printed); True clips them (spec option clip_nonneg)")
    update: Update = param(
        "own_load", "Alg. 1 line 19: every unscheduled stage b loses rho x its own load "
                    "L^b_lambda ('own_load', as printed); 'authors_code': every stage of each "
                    "candidate cojob loses rho x that cojob's candidate (last unscheduled) stage's "
                    "load on lambda, clipped at 0 (willzhoupan/Grouper, digest E24)")
    port: Port = param(
        "loaded", "Alg. 1 line 15: lambda = argmax of the remaining load Lbar over the ports some "
                  "candidate loads ('loaded', digest E9: line 16 is undefined otherwise); 'all': "
                  "argmax over every port, as the authors' code (falls back to 'loaded' when no "
                  "candidate loads that port)")
    tie: Tie = param(
        "stage", "Alg. 1 line 16 names no tie rule: 'stage' puts the largest stage index, then "
                 "the largest cojob id last (digest Sec. 4.2 recommended); 'first_cojob' puts the "
                 "first cojob in list order last (the authors' code)")

    def __post_init__(self) -> None:
        _choice("weights", self.weights, WEIGHTS)
        _choice("candidates", self.candidates, CANDIDATES)
        _choice("update", self.update, UPDATES)
        _choice("port", self.port, PORTS)
        _choice("tie", self.tie, TIES)


@dataclass(frozen=True)
class GrouperParams(PdaParams):
    """The deployed Grouper (Sec. IV-C): PDA recomputed at every cojob arrival and stage start/end
    on the remaining loads (spec Sec. 4.5, trigger "immediate"); the defaults are the spec's preset
    ``recommended`` with online loads."""

    candidates: Candidates = param(
        "chain_tail", "Sec. III-D 'the produced order can satisfy the precedence constraints of "
                      "stages': only each cojob's last unscheduled stage is a candidate (the "
                      "authors' code), so the order keeps the chains; 'all' is Alg. 1 line 16 "
                      "as printed")
    clip: bool = param(
        True, "Alg. 1 line 19 with residual weights clipped at 0 (spec preset 'recommended'; the "
              "authors' code clips)")
    loads: Loads = param(
        "online", "Sec. IV-C: 'online' assumes every job still alive runs every remaining stage "
                  "(survivors unknown; Eq. (27) over the alive jobs, E12); 'offline' uses the "
                  "true survivor sets (GrouperOffline, Figs. 17-18)")
    trigger: Trigger = param(
        "stage_events", "Sec. IV-C gives no recomputation rule: 'stage_events' recomputes at every "
                        "cojob arrival and stage start/end (Grouper-Immediate, digest Sec. 4.5); "
                        "'authors' at every stage change or job completion but not on arrival, a "
                        "new cojob's first stage taking the highest priority until then (the "
                        "authors' simulator, digest E22)")

    def __post_init__(self) -> None:
        super().__post_init__()
        _choice("loads", self.loads, LOADS)
        _choice("trigger", self.trigger, TRIGGERS)


@dataclass(frozen=True)
class BaraatParams(Params):
    """Baraat (FIFO task scheduling with limited multiplexing), the paper's FIFO baseline."""

    theta: float | None = param(
        None, "Sec. V 'Baraat schedules stages in FIFO' (E18) with Baraat's limited multiplexing: "
              "a stage that has sent more than theta bytes is heavy and lets the next stage share "
              "its class; the paper gives no theta, None = the median stage size (Baraat learns "
              "it from history)")

    multiplexing: bool = param(
        True, "Sec. V says only 'Baraat schedules stages in FIFO'; True adds Baraat's limited "
              "multiplexing (its paper), False is plain FIFO by stage start time (the authors' "
              "FIFO-LM code has no multiplexing, digest E18)")

    def __post_init__(self) -> None:
        if self.theta is not None and not self.theta >= 0:
            raise ValueError(f"theta: must be >= 0 or None, got {self.theta}")


def _choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name}: unknown {value!r} (known: {', '.join(choices)})")


@dataclass(frozen=True)
class SincroniaParams(Params):
    """Sincronia (BSSI over in-flight coflows), the paper's coflow baseline."""

    sizes: Literal["remaining", "full"] = param(
        "remaining", "Sec. V names Sincronia without its coflow sizes: 'remaining' orders coflows by "
                     "their remaining bytes per port (Sincronia's own online rule); 'full' by the "
                     "whole iteration's bytes (the authors' code, digest Sec. 4.7)")

    def __post_init__(self) -> None:
        _choice("sizes", self.sizes, ("remaining", "full"))


#: Sincronia's BSSI: PDA with unit weights, every candidate (spec E19).
BSSI = PdaParams(weights="unit", candidates="all", clip=False)


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


def pda_order(loads: Mapping[Any, np.ndarray], chains: Mapping[Any, Sequence[Any]],
              params: PdaParams = PdaParams(), index: Mapping[Any, int] | None = None,
              ) -> tuple[list, dict]:
    """Primal-dual stage permutation, paper Algorithm 1 (reconstructed per spec Sec. 4.2).

    Parameters
    ----------
    loads
        ``stage -> array of 2P port loads`` (Eq. (27)).
    chains
        ``cojob -> list of its stages in chain order`` (only the stages still to schedule).
    params
        Initial weight rule (see :func:`initial_weight`), candidate set and clipping.
    index
        ``stage -> 1-based absolute stage index k`` for the weights (default: position in chain + 1).

    Returns
    -------
    order, certificate
        ``order[0]`` has the highest priority. The certificate holds per iteration (from the back)
        ``(lambda, n, rho)`` with ``M(n) = order[:n]``, the initial weights and ``A``.
    """
    stages = [a for chain in chains.values() for a in chain]
    if not stages:          # nothing to order (no coflow in flight): reshape(0, -1) raised
        return [], {"trace": [], "w0": {}, "weights": params.weights}
    pos = {a: n for n, a in enumerate(stages)}
    L = np.array([loads[a] for a in stages], dtype=float).reshape(len(stages), -1)
    last = {a: chain[-1] == a for chain in chains.values() for a in chain}
    owner = {a: key for key, chain in chains.items() for a in chain}
    k_of = index or {a: n + 1 for chain in chains.values() for n, a in enumerate(chain)}
    w0 = np.array([initial_weight(params.weights, k_of[a], last[a]) for a in stages])
    w = w0.copy()
    alive = np.ones(len(stages), dtype=bool)
    lbar = L.sum(axis=0)                                                       # line 13
    tails = {g: list(chain) for g, chain in chains.items()}
    order: list = [None] * len(stages)
    trace = []
    for n in range(len(stages), 0, -1):                                        # line 14
        cand = (np.flatnonzero(alive) if params.candidates == "all"
                else np.array([pos[c[-1]] for c in tails.values() if c], dtype=int))
        pick, lam, rho = _pda_step(L, w, lbar, cand, stages, k_of, params)
        if lam is not None and params.update == "authors_code":               # line 19, [CODE]
            for c in cand[L[cand, lam] > 0]:
                mine = [pos[b] for b in chains[owner[stages[c]]] if alive[pos[b]]]
                w[mine] = np.maximum(w[mine] - rho * L[c, lam], 0.0)
        elif lam is not None:                                                  # line 19
            w[alive] -= rho * L[alive, lam]
            if params.clip:
                np.maximum(w, 0.0, out=w)
        order[n - 1] = stages[pick]                                            # line 17
        trace.append((lam, n, rho))                                            # line 20
        lbar -= L[pick]                                                        # line 21
        alive[pick] = False                                                    # line 22
        chain = tails[owner[stages[pick]]]
        if chain and chain[-1] == stages[pick]:
            chain.pop()
        elif params.candidates == "chain_tail":
            raise AssertionError("chain_tail picked a non-tail stage")
    return order, {"trace": trace, "w0": dict(zip(stages, w0)), "weights": params.weights}


def _pda_step(L, w, lbar, cand, stages, k_of, params: PdaParams = PdaParams(),
              ) -> tuple[int, int | None, float]:
    """Lines 15-18: heaviest port (among ports the candidates load, or among all ports with
    ``params.port == "all"``), then min ``w / L`` (the PDF prints ``L / w``: E7); zero-load
    candidates go last-in-order first (step 4a)."""
    sub = L[cand]
    loaded = sub.max(axis=0) > 0
    if not loaded.any():
        return int(_tie_pick(cand, stages, k_of, params.tie)), None, 0.0
    lam = int(np.argmax(lbar)) if params.port == "all" else -1                # line 15, [CODE]
    if lam < 0 or not loaded[lam]:
        lam = int(np.flatnonzero(loaded)[np.argmax(lbar[loaded])])           # line 15
    plus = cand[L[cand, lam] > 0]
    ratio = w[plus] / L[plus, lam]
    rho = float(ratio.min())                                                   # lines 16, 18
    ties = plus[ratio <= rho + TIE * abs(rho) + 1e-15]
    return int(_tie_pick(ties, stages, k_of, params.tie)), lam, max(rho, 0.0)


def _tie_pick(ties, stages, k_of, tie: str) -> int:
    """The stage put last among ``ties``: largest stage index then largest key (``stage``), or the
    first cojob in list order (``first_cojob``, the authors' code)."""
    if tie == "first_cojob":
        return min(ties, key=lambda c: stages[c])
    return max(ties, key=lambda c: _tie_key(stages[c], k_of))


def _tie_key(stage, k_of):
    """Spec's recommended tie rule: largest stage index, then largest cojob id."""
    return (k_of[stage], stage)


def dual_objective(instance: Instance, order: list, cert: dict) -> float:
    """Value (17) of the PDA dual certificate with alpha = A on the bottleneck port (only for the
    ``literal``/``unit`` weights, where it is feasible; offline, all r_g = 0)."""
    from optsched.models.cojob_network import queyranne_rhs

    total = 0.0
    if cert["weights"] == "literal":
        for g, k in order:
            total += (1 - 2.0 ** -(k + 1)) * float(instance.loads[g, k].max())
    for lam, n, rho in cert["trace"]:
        if lam is not None and rho > 0:
            total += rho * queyranne_rhs(instance, lam, order[:n])
    return total


def offline_order(instance: Instance, params: PdaParams = PdaParams()) -> tuple[list, dict]:
    """PDA on the whole instance at t = 0 with the true loads (Theorem 2's setting)."""
    chains = {g: [(g, k) for k in range(c.n_stages)] for g, c in enumerate(instance.cojobs)}
    return pda_order(instance.loads, chains, params)


# ----------------------------------------------------------------------------------------------------
# Policies for the flow simulator


class Grouper:
    """Online Grouper (Sec. IV-C), recomputed immediately at every arrival and stage start/end.

    ``params.loads == "offline"`` uses the true survivor sets (GrouperOffline); otherwise every job
    still alive is assumed to run every remaining stage. Remaining iterations of the current stage
    are counted per job (the coflow in flight as a whole iteration, as the authors' code).
    """

    def __init__(self, instance: Instance, params: GrouperParams = GrouperParams()):
        self.inst, self.params = instance, params
        self.offline = params.loads == "offline"
        self.position: dict = {}
        self.name = "grouper_offline" if self.offline else "grouper"
        if params.update == "authors_code":
            self.name = "grouper_authors" + ("_offline" if self.offline else "")
        self.runs = 0

    def classes(self, sim, events):
        if self.params.trigger == "authors":
            # the authors' simulator: a stage change or a job completion, not an arrival (the first
            # stage's start is the arrival); unranked stages take the highest priority [CODE]
            fire = self.runs == 0 or any(
                e[0] in ("stage_end", "job_end") or (e[0] == "stage_start" and e[2] > 0)
                for e in events)
            unranked = -1.0
        else:
            fire = any(e[0] in ("arrival", "stage_start", "stage_end") for e in events)
            unranked = math.inf
        if fire:
            self._recompute(sim)
        return {(g, j): self.position.get((g, sim.stage[g]), unranked)
                for g, j in sim.communicating()}

    def _recompute(self, sim) -> None:
        loads: dict[Stage, np.ndarray] = {}
        chains: dict[int, list[Stage]] = {}
        index: dict[Stage, int] = {}
        for g in sim.active_cojobs():
            chains[g] = []
            for k in range(sim.stage[g], self.inst.cojobs[g].n_stages):
                load = self._load(sim, g, k)
                if load is not None:
                    loads[g, k] = load
                    chains[g].append((g, k))
                    index[g, k] = k + 1
        order, _ = pda_order(loads, chains, self.params, index=index) if loads else ([], {})
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

    def __init__(self, instance: Instance, params: BaraatParams = BaraatParams()):
        self.inst = instance
        theta = params.theta
        if theta is None:   # median stage size: Baraat's heavy-task threshold, learned from history
            theta = float(np.median([instance.loads[a][: instance.machines].sum() * instance.capacity
                                     for a in instance.stages]))
        self.theta = theta if params.multiplexing else math.inf

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

    def __init__(self, instance: Instance, params: SincroniaParams = SincroniaParams()):
        self.inst = instance
        self.full = params.sizes == "full"
        self.position: dict = {}

    def classes(self, sim, events):
        if any(e[0] in ("coflow_start", "coflow_end") for e in events):
            loads, P = {}, self.inst.machines
            for g, j in sim.communicating():
                load = np.zeros(2 * P)
                for (s, d, x), left in zip(self.inst.cojobs[g].jobs[j].flows, sim.rem[g, j]):
                    left = x if self.full else left
                    load[s] += left
                    load[P + d] += left
                loads[g, j] = load
            order, _ = pda_order(loads, {a: [a] for a in loads}, BSSI)
            self.position = {a: n for n, a in enumerate(order)}
        return {a: self.position[a] for a in sim.communicating()}


def pda_policy(instance: Instance, params: PdaParams = PdaParams()) -> StageOrder:
    """Order-preserving scheduling (Sec. III-D) of PDA's offline order."""
    order, _ = offline_order(instance, params)
    return StageOrder(order)


def make_policy(instance: Instance, name: str) -> Policy:
    """The simulator policy of the registered heuristic ``name`` (pda, grouper, grouper_offline,
    baraat, sincronia, fair_share) with its registered parameters; for benchmarks that simulate
    without recording a schedule."""
    method = SPEC.method(name)
    build = _POLICIES.get(method.func)
    if build is None:
        raise ValueError(f"policy: method {name!r} is not a simulated heuristic")
    return build(instance, method.params)


def _simulated(instance: Instance, policy: Policy, label: str, deadline: Deadline,
               order: Sequence[Stage] = ()) -> Outcome:
    """Simulate ``policy`` until done or ``deadline``; a run stopped early has no schedule."""
    res = simulate(instance, policy, deadline=deadline)
    info: dict[str, Any] = {"events": res.events, "allocations": res.allocations,
                            "sim_wall_s": res.wall_s}
    if not res.complete:
        info["stopped"] = _stopped(res)
        return Outcome(None, SolveStatus.TIME_LIMIT, info=info)
    return Outcome(schedule_of(res, order, label), SolveStatus.FEASIBLE, info=info)


def _stopped(res: SimResult) -> str:
    done = sum(not math.isnan(s) for row in res.S for s in row)
    total = sum(len(row) for row in res.S)
    return (f"deadline: flow simulation stopped after {res.events} events, {done} of {total} "
            f"stages complete")


# ----------------------------------------------------------------------------------------------------
# Registered heuristics


def pda(instance: Instance, params: PdaParams, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """Paper Algorithm 1 (PDA) offline at t = 0, then order-preserving priority flow scheduling.

    Parameters
    ----------
    instance
        The cojob_network instance (all cojobs are ordered at once, whatever their arrival).
    params
        :class:`PdaParams`; the registered ``pda`` is the algorithm as printed.
    deadline
        The simulation stops when it expires (no schedule, status ``time_limit``).
    seed
        Unused (deterministic).

    Returns
    -------
    Outcome
        The simulated schedule (its ``order`` is PDA's sigma), status ``feasible``.

    Notes
    -----
    Theorem 2 claims ``sum S <= (2 - 2/(l+1)) OPT`` (l = number of stages) for any order-preserving
    per-flow rate allocation of this order. It fails for Algorithm 1 as printed: docs/errata.md
    **G1** (2.269 x OPT on ``tests/data/cojob_network/theorem2_counterexample.json``; the order can
    break the stage chains, digest E8).

    Examples
    --------
    >>> from optsched import generate, solve
    >>> res = solve(generate("cojob_network", "tiny", 0), "pda")
    >>> res.status.value, res.objective
    ('feasible', 48.0)
    """
    policy = pda_policy(instance, params)
    return _simulated(instance, policy, "pda", deadline, policy.order)


def grouper(instance: Instance, params: GrouperParams, *, deadline: Deadline,
            seed: int = 0) -> Outcome:
    """Grouper as deployed (Sec. IV-C): PDA recomputed at every cojob arrival and stage start/end
    on the remaining loads, its order enforced by strict-priority flow scheduling.

    Parameters
    ----------
    instance
        The cojob_network instance (cojobs arrive at their ``arrival``).
    params
        :class:`GrouperParams`; ``grouper`` assumes every alive job runs every remaining stage,
        ``grouper_offline`` (``loads="offline"``) knows the true survivor sets.
    deadline
        The simulation stops when it expires (no schedule, status ``time_limit``).
    seed
        Unused (deterministic).

    Returns
    -------
    Outcome
        The simulated schedule, status ``feasible``.

    Notes
    -----
    The paper claims no bound for the online system (Theorem 2 is about the offline order, see
    :func:`pda`); it reports testbed SCT reductions of 22.5/24.2/31.0 % vs Baraat/Sincronia/FS and
    online at most 14.2 % worse than GrouperOffline. At paper scale the gains are smaller:
    docs/errata.md **G3**. Chain-tail candidates keep the chains, so the G1 counterexample does not
    apply (``grouper`` is optimal on it).

    Examples
    --------
    >>> from optsched import generate, solve
    >>> res = solve(generate("cojob_network", "tiny", 0), "grouper")
    >>> res.status.value, res.objective, res.info["params"]["loads"]
    ('feasible', 48.0, 'online')
    """
    policy = Grouper(instance, params)
    return _simulated(instance, policy, policy.name, deadline)


def baraat(instance: Instance, params: BaraatParams, *, deadline: Deadline,
           seed: int = 0) -> Outcome:
    """Baraat: FIFO over stages with limited multiplexing (threshold ``params.theta``)."""
    return _simulated(instance, Baraat(instance, params), "baraat", deadline)


def sincronia(instance: Instance, params: SincroniaParams, *, deadline: Deadline,
              seed: int = 0) -> Outcome:
    """Sincronia: BSSI order over in-flight coflows (sizes ``params.sizes``)."""
    return _simulated(instance, Sincronia(instance, params), "sincronia", deadline)


def fair_share(instance: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """Per-flow max-min fair share."""
    return _simulated(instance, FairShare(), "fair_share", deadline)


_POLICIES: dict[Callable[..., Outcome], Callable[[Instance, Any], Policy]] = {
    pda: pda_policy,
    grouper: Grouper,
    baraat: Baraat,
    sincronia: Sincronia,
    fair_share: lambda instance, _: FairShare(),
}


# ----------------------------------------------------------------------------------------------------
# Exact and bound

#: At most this many chain-consistent orders are all simulated by :func:`exact` (spec Model BF).
BF_LIMIT = 400
#: Pyomo build + hand-off to HiGHS of Model F, measured on 2 loaded cores (paper testbed l = 16:
#: ~0.9 s for 6.6k non-zeros; l = 40: ~4.5 s for 83k): a conservative rate and fixed cost.
BUILD_TERMS_PER_S = 15_000.0
BUILD_OVERHEAD_S = 0.3
#: Cutting-plane rounds of :func:`solve_lp_primal` before it stops with the bound it has.
MAX_ROUNDS = 200


#: Heuristics :func:`exact` runs first (cheapest first): its incumbent is never worse than the best
#: of them that finishes (issue 14), and the best one warm-starts Model E.
WARM_METHODS = ("grouper", "pda_chain", "grouper_offline", "baraat", "sincronia", "fair_share")
#: Share of the time left that the warm-start heuristics may use together.
WARM_SHARE = 0.25
#: Share of the time left Model F may use (it is a bound; Model E gets the rest).
F_SHARE = 0.5
#: All Queyranne cuts (15) go into Model E when there are at most this many; otherwise one per port
#: (the set M_p of every stage loading it).
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


def exact(instance: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """Exact: the best of the heuristics, Model F's order and Model E, proven against the larger of
    Model F's and Model E's dual bounds.

    1. The heuristics of :data:`WARM_METHODS` are simulated (together at most :data:`WARM_SHARE`
       of the time): the incumbent is never worse than the best of them (issue 14).
    2. Model F (stage sequencing MILP, :func:`optsched.models.cojob_network.build_ordering_milp`;
       its dual bound is a lower bound on every schedule ``verify`` accepts) and the simulation of
       its order (order-preserving priority scheduling). If the incumbent meets F's bound
       (:func:`optsched.tolerance.at_most`), it is optimal: this is the fast proof.
    3. Otherwise Model E (:func:`optsched.models.cojob_network.build_event_milp`, an exact MILP of
       (O) over rate timelines, no order enumeration), with the incumbent's completion order as a
       MIP start and its cost as the horizon. Its optimum is OPT(O) (proof in its docstring); its
       schedule is extracted and verified. Used when no job has a compute gap (else, as before, up
       to :data:`BF_LIMIT` chain-consistent orders are simulated: spec Model BF).

    Status ``optimal`` when the best verified schedule meets the larger bound; ``time_limit`` when a
    step was stopped by the deadline (the bound so far kept: F's, E's or the chain bound (14));
    ``feasible`` otherwise. A model over the size cap (whatever the deadline) or too big to build in
    the time left is not built (:func:`_fits`, ``info["stopped"]``); the cap alone gives
    ``feasible``, not ``time_limit``.
    """
    from optsched.models.cojob_network import event_milp_applies

    info: dict[str, Any] = {}
    best = _warm_start(instance, _share(deadline, WARM_SHARE), info)
    bound, rep = chain_bound(instance), None
    f_rep, f_order = _model_f(instance, _share(deadline, F_SHARE), seed, info)
    cut = f_rep is None and not info.get("size_capped")  # size guard: F not built in time
    if f_rep is not None:
        rep = f_rep
        if f_rep.bound is not None or f_rep.status is SolveStatus.OPTIMAL:
            bound = max(bound, f_rep.objective if f_rep.bound is None
                        else min(f_rep.bound, f_rep.objective))
        cut |= f_rep.status is not SolveStatus.OPTIMAL
    if f_order is not None:
        cut |= not _offer_order(instance, best, f_order, "model_f_order", deadline, info)
    if not at_most(best.value, bound):
        if event_milp_applies(instance):
            e_rep = _model_e(instance, best, deadline, seed, info)
            if e_rep is not None:
                rep = e_rep
                if e_rep.bound is not None:
                    bound = max(bound, min(e_rep.bound, best.value))
                cut |= e_rep.status is not SolveStatus.OPTIMAL
            else:                                        # not built: a time limit unless capped
                cut |= not info.get("size_capped")
        elif f_rep is not None and f_rep.status is SolveStatus.OPTIMAL:
            cut |= not _brute_force(instance, best, deadline, info)
    return _exact_outcome(rep, best, bound, cut, info)


def _share(deadline: Deadline, share: float) -> Deadline:
    """A sub-deadline: ``share`` of the time left (the deadline itself without a limit)."""
    left = deadline.remaining()
    return deadline if left is None else deadline.within(share * left)


def _warm_start(instance: Instance, budget: Deadline, info: dict) -> _Incumbent:
    """Simulate :data:`WARM_METHODS` within ``budget``; the best complete run is the incumbent."""
    best = _Incumbent()
    for name in WARM_METHODS:
        if budget.expired():
            info["warm_stopped"] = f"deadline before {name}"
            break
        run = simulate(instance, make_policy(instance, name), deadline=budget)
        if run.complete:
            best.offer(sum_sct(instance, run), lambda: schedule_of(run, (), name), name)
    info["warm_start"] = best.source or None
    info["warm_value"] = best.value if best.schedule is not None else None
    return best


def _fits(terms: int, deadline: Deadline, what: str, info: dict) -> bool:
    """Whether a model with ``terms`` non-zeros is built: False (and ``info["stopped"]``) when it
    is over the size cap (:func:`optsched.solvers.highs.too_large`, checked first and whatever
    the deadline: with or without a time limit no model above
    :data:`~optsched.solvers.highs.MAX_MODEL_TERMS` is built) or cannot be built and handed to
    HiGHS in the time left (model building counts against the deadline). ``info["size_capped"]``
    is True when the cap alone ruled it out, so :func:`exact` does not call that a time limit."""
    from optsched.solvers.highs import refuse

    build_s = BUILD_OVERHEAD_S + terms / BUILD_TERMS_PER_S
    left = deadline.remaining()
    late = (f"{what} has {terms} non-zeros, ~{build_s:.1f} s to build and hand to HiGHS > "
            f"{left:.1f} s left" if left is not None and build_s > left else None)
    refusal = refuse(terms, what, late)
    if refusal is None:
        return True
    info["stopped"] = f"size guard: {refusal}"
    info["size_capped"] = refusal.late is None
    return False


def _model_f(instance: Instance, deadline: Deadline, seed: int, info: dict):
    """Solve Model F; its report and its stage order (None, None when it does not fit)."""
    from optsched.models import cojob_network as cm
    from optsched.solvers.highs import solve_model

    size = cm.ordering_milp_size(instance)
    info.update(binaries=size["binaries"], constraints=size["rows"])
    if not _fits(size["terms"], deadline, "Model F", info):
        return None, None
    model = cm.build_ordering_milp(instance)
    rep = solve_model(model, deadline=deadline, seed=seed)
    info.update(f_star=rep.objective, milp_runtime_s=rep.runtime_s)
    return rep, (cm.extract_order(instance, model) if rep.has_solution else None)


def _offer_order(instance: Instance, best: _Incumbent, order, source: str, deadline: Deadline,
                 info: dict) -> bool:
    """Simulate a stage order and offer it; False when the deadline stopped the simulation."""
    run = simulate(instance, StageOrder(order), deadline=deadline)
    if not run.complete:
        info["stopped"] = _stopped(run)
        return False
    value = sum_sct(instance, run)
    info[f"{source}_value"] = value
    best.offer(value, lambda: schedule_of(run, order, "stage_order"), source)
    return True


def _model_e(instance: Instance, best: _Incumbent, deadline: Deadline, seed: int, info: dict):
    """Model E with the incumbent's horizon and MIP start; its extracted schedule is verified and
    offered. None when there is no incumbent (no horizon) or the model does not fit."""
    from optsched.models import cojob_network as cm
    from optsched.solvers.highs import solve_model

    if best.schedule is None:
        info["event_milp"] = "no incumbent to bound the horizon"
        return None
    size = cm.event_milp_size(instance)
    info["event_milp"] = size
    if not _fits(size["terms"], deadline, "Model E", info):
        return None
    horizon = best.value + max(c.arrival for c in instance.cojobs)
    horizon += 1e-6 * max(1.0, horizon)      # the incumbent's makespan, within its tolerance
    cuts = cm.all_cuts(instance)
    if len(cuts) > CUT_LIMIT:
        cuts = [(p, tuple(ms)) for p, ms in cm.port_stages(instance).items() if ms]
    model = cm.build_event_milp(instance, horizon, cuts)
    cm.set_event_start(instance, model, best.schedule)
    rep = solve_model(model, deadline=deadline, seed=seed, warm_start=True)
    info.update(e_objective=rep.objective, e_bound=rep.bound, e_runtime_s=rep.runtime_s)
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
    """

    value: float | None
    status: SolveStatus
    rounds: int
    cuts: int
    S: dict = dataclasses.field(default_factory=dict)
    runtime_s: float = 0.0
    stopped: str = ""


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


def solve_lp_primal(instance: Instance, separation: str = "sort", *, deadline: Deadline = NEVER,
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
    n_cuts = runtime = 0
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
        n_cuts += len(new)
        if not new:
            return LpBound(rep.objective, SolveStatus.OPTIMAL, rounds, n_cuts, values, runtime)
    return LpBound(best, SolveStatus.TIME_LIMIT, rounds, n_cuts, values, runtime, stopped)


def lower_bound(instance: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """LP-Primal (13)–(15) by cutting planes (Lemma 1: LP* <= OPT).

    ``optimal`` when the cut loop converged (LP*); ``time_limit`` when the deadline or the round cap
    stopped it, with the best bound it had (``info["stopped"]`` says why)."""
    res = solve_lp_primal(instance, "sort", deadline=deadline)
    info: dict[str, Any] = {"rounds": res.rounds, "cuts": res.cuts, "lp_runtime_s": res.runtime_s}
    if res.stopped:
        info["stopped"] = res.stopped
    return Outcome(None, res.status, res.value, info)


def claimed_ratio(instance: Instance) -> float:
    """Theorem 2's claim: 2 - 2/(l+1), l = number of stages (does not hold: docs/errata.md)."""
    return 2 - 2 / (len(instance.stages) + 1)


#: The authors' code (willzhoupan/Grouper) ordering: weights 1 + 2^-k, chain-tail candidates,
#: heaviest port over all ports, tail-load update clipped at 0, first cojob put last on ties.
PDA_AUTHORS = PdaParams(weights="code", candidates="chain_tail", clip=True, update="authors_code",
                        port="all", tie="first_cojob")
#: Online Grouper with the authors' ordering and trigger (stage change / job completion).
AUTHORS = GrouperParams(weights="code", candidates="chain_tail", clip=True, update="authors_code",
                        port="all", tie="first_cojob", trigger="authors")

METHODS = (
    Method("exact", "exact", exact,
           description="heuristics + ordering MILP (F) bound + event-indexed MILP of (O) (E)"),
    Method("lower_bound", "bound", lower_bound, description="LP-Primal (13)-(15), Queyranne cuts"),
    Method("pda", "algorithm", pda, params=PdaParams(), guarantee=claimed_ratio,
           description="Algorithm 1 as printed + order-preserving flow scheduling (offline)"),
    Method("grouper", "algorithm", grouper, params=GrouperParams(),
           description="online Grouper, PDA at every stage event"),
    Method("grouper_offline", "algorithm", grouper, params=GrouperParams(loads="offline"),
           description="Grouper knowing where each trial stops"),
    Method("grouper_authors", "algorithm", grouper, params=AUTHORS,
           description="online Grouper as the authors' code orders stages (reading)"),
    Method("grouper_authors_offline", "algorithm", grouper,
           params=dataclasses.replace(AUTHORS, loads="offline"),
           description="the authors' GrouperOffline ordering (reading)"),
    Method("pda_literal", "algorithm", pda, params=PdaParams(weights="literal"),
           guarantee=claimed_ratio,
           description="Algorithm 1, line 10 read literally: last stage weight 2^-K (reading)"),
    Method("pda_code", "algorithm", pda, params=PdaParams(weights="code"), guarantee=claimed_ratio,
           description="Algorithm 1 with the authors' weights 1 + 2^-k (reading)"),
    Method("pda_chain", "algorithm", pda, params=PdaParams(candidates="chain_tail"),
           guarantee=claimed_ratio,
           description="Algorithm 1, chain-tail candidates (Sec. III-D precedence text; reading)"),
    Method("pda_authors", "algorithm", pda, params=PDA_AUTHORS, guarantee=claimed_ratio,
           description="offline PDA as the authors' code orders stages (reading)"),
    Method("baraat", "baseline", baraat, params=BaraatParams(),
           description="FIFO over stages, limited multiplexing"),
    Method("baraat_fifo", "baseline", baraat, params=BaraatParams(multiplexing=False),
           description="plain FIFO over stages (the authors' code; reading)"),
    Method("sincronia", "baseline", sincronia, params=SincroniaParams(),
           description="BSSI over in-flight coflows"),
    Method("sincronia_full", "baseline", sincronia, params=SincroniaParams(sizes="full"),
           description="BSSI over in-flight coflows by full iteration sizes (authors' code)"),
    Method("fair_share", "baseline", fair_share, description="per-flow max-min fair share"),
)
SPEC = Family(
    name="cojob_network",
    description="Zhou et al. (003), Grouper: cojob stage scheduling on a big switch, min sum SCT",
    problem=_problem,
    workloads=_workloads,
    methods=METHODS,
    default_method="grouper",
    compare=CompareSpec(methods=(
        "grouper", "grouper_offline", "grouper_authors", "grouper_authors_offline",
        "pda", "pda_literal", "pda_code", "pda_chain", "pda_authors",
        "baraat", "baraat_fifo", "sincronia", "sincronia_full", "fair_share")),
)
