"""cojob_network: Grouper (Zhou, Yu, Sun, IEEE TNSM 2020): PDA (Algorithm 1) with its readings, the
online Grouper policy (Sec. IV-C), the event-driven simulation every policy runs through, and
Theorem 2's claimed ratio.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal, Mapping, Sequence

import numpy as np

from optsched.deadline import Deadline
from optsched.method import Params, param
from optsched.problems.cojob_network import Instance, stage_load
from optsched.result import Outcome, SolveStatus
from optsched.simulate.flows import Policy, SimResult, StageOrder, schedule_of, simulate

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
        check_choice("weights", self.weights, WEIGHTS)
        check_choice("candidates", self.candidates, CANDIDATES)
        check_choice("update", self.update, UPDATES)
        check_choice("port", self.port, PORTS)
        check_choice("tie", self.tie, TIES)


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
        check_choice("loads", self.loads, LOADS)
        check_choice("trigger", self.trigger, TRIGGERS)


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name}: unknown {value!r} (known: {', '.join(choices)})")


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


def pda_policy(instance: Instance, params: PdaParams = PdaParams()) -> StageOrder:
    """Order-preserving scheduling (Sec. III-D) of PDA's offline order."""
    order, _ = offline_order(instance, params)
    return StageOrder(order)


def simulated(instance: Instance, policy: Policy, label: str, deadline: Deadline,
               order: Sequence[Stage] = ()) -> Outcome:
    """Simulate ``policy`` until done or ``deadline``; a run stopped early has no schedule."""
    res = simulate(instance, policy, deadline=deadline)
    info: dict[str, Any] = {"events": res.events, "allocations": res.allocations,
                            "sim_wall_s": res.wall_s}
    if not res.complete:
        info["stopped"] = why_stopped(res)
        return Outcome(None, SolveStatus.TIME_LIMIT, info=info)
    return Outcome(schedule_of(res, order, label), SolveStatus.FEASIBLE, info=info)


def why_stopped(res: SimResult) -> str:
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
    return simulated(instance, policy, "pda", deadline, policy.order)


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
    return simulated(instance, policy, policy.name, deadline)


def claimed_ratio(instance: Instance) -> float:
    """Theorem 2's claim: 2 - 2/(l+1), l = number of stages (refuted under every reading: errata G1)."""
    return 2 - 2 / (len(instance.stages) + 1)


#: The authors' code (willzhoupan/Grouper) ordering: weights 1 + 2^-k, chain-tail candidates,
#: heaviest port over all ports, tail-load update clipped at 0, first cojob put last on ties.
PDA_AUTHORS = PdaParams(weights="code", candidates="chain_tail", clip=True, update="authors_code",
                        port="all", tie="first_cojob")
#: Online Grouper with the authors' ordering and trigger (stage change / job completion).
AUTHORS = GrouperParams(weights="code", candidates="chain_tail", clip=True, update="authors_code",
                        port="all", tie="first_cojob", trigger="authors")
