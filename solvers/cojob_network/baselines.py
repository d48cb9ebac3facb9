"""cojob_network: the paper's baselines (Sec. V): Baraat (FIFO with limited multiplexing), Sincronia
(BSSI over in-flight coflows), per-flow fair share; and the policy of every method by name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Literal

import numpy as np

from optsched.deadline import Deadline
from optsched.method import Params, param
from optsched.problems.cojob_network import Instance
from optsched.result import Outcome
from optsched.simulate.flows import FairShare, Policy
from optsched.solvers.cojob_network.algorithm import (
    Grouper,
    TIE,
    PdaParams,
    check_choice,
    grouper,
    pda,
    pda_policy,
    simulated,
)


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


@dataclass(frozen=True)
class SincroniaParams(Params):
    """Sincronia (BSSI over in-flight coflows), the paper's coflow baseline."""

    sizes: Literal["remaining", "full"] = param(
        "remaining", "Sec. V names Sincronia without its coflow sizes: 'remaining' orders coflows by "
                     "their remaining bytes per port (Sincronia's own online rule); 'full' by the "
                     "whole iteration's bytes (the authors' code, digest Sec. 4.7)")

    def __post_init__(self) -> None:
        check_choice("sizes", self.sizes, ("remaining", "full"))


#: Sincronia's BSSI: PDA with unit weights, every candidate (spec E19).
BSSI = PdaParams(weights="unit", candidates="all", clip=False)


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
                load = [0.0] * (2 * P)
                for (s, d, x), left in zip(self.inst.cojobs[g].jobs[j].flows, sim.rem[g, j]):
                    left = x if self.full else left
                    load[s] += left
                    load[P + d] += left
                loads[g, j] = load
            order = bssi_order(loads)
            self.position = {a: n for n, a in enumerate(order)}
        return {a: self.position[a] for a in sim.communicating()}


def bssi_order(loads: dict[Any, list[float]]) -> list:
    """Sincronia's BSSI: :func:`~optsched.solvers.cojob_network.algorithm.pda_order` with the
    parameters :data:`BSSI` and every coflow its own chain, in plain Python (one call per coflow
    event, so numpy's per-call cost dominated; tests pin the same order, bit for bit).

    Paper Algorithm 1 with unit weights (spec E19): from the back (line 14), the port ``lambda``
    with the largest remaining load among the ports some coflow still loads (line 15, first on
    ties), the coflow with the least ``w / L_lambda`` goes last (lines 16-18; ties: the largest
    key), every remaining coflow loses ``rho L_lambda`` (line 19, unclipped), and ``Lbar`` loses
    the coflow's loads (line 21).
    """
    keys = list(loads)
    if not keys:
        return []
    rows = [loads[a] for a in keys]
    lbar = list(rows[0])                                                      # line 13
    for row in rows[1:]:
        for p, x in enumerate(row):
            lbar[p] += x
    count = [sum(1 for row in rows if row[p] > 0) for p in range(len(lbar))]
    nonzero = [[p for p, x in enumerate(row) if x != 0.0] for row in rows]
    w = [1.0] * len(keys)
    alive = list(range(len(keys)))
    order: list = [None] * len(keys)
    for n in range(len(keys), 0, -1):                                         # line 14
        pick = _bssi_step(rows, keys, w, lbar, count, alive)
        for p in nonzero[pick]:                                               # line 21
            x = rows[pick][p]
            lbar[p] -= x
            if x > 0:
                count[p] -= 1
        alive.remove(pick)                                                    # line 22
        order[n - 1] = keys[pick]                                             # line 17
    return order


def _bssi_step(rows, keys, w, lbar, count, alive) -> int:
    """Lines 15-19 of one BSSI iteration; returns the coflow put last among ``alive``."""
    if not any(count):                                 # only zero-load coflows left (step 4a)
        return max(alive, key=keys.__getitem__)
    top = [x if c else -math.inf for x, c in zip(lbar, count)]
    lam = top.index(max(top))                                                 # line 15
    plus = [c for c in alive if rows[c][lam] > 0]
    ratio = [w[c] / rows[c][lam] for c in plus]
    rho = min(ratio)                                                          # lines 16, 18
    bound = rho + TIE * abs(rho) + 1e-15
    pick = max((c for c, r in zip(plus, ratio) if r <= bound), key=keys.__getitem__)
    rho = max(rho, 0.0)
    for c in alive:                                                           # line 19
        w[c] -= rho * rows[c][lam]
    return pick


def make_policy(instance: Instance, name: str) -> Policy:
    """The simulator policy of the registered heuristic ``name`` (pda, grouper, grouper_offline,
    baraat, sincronia, fair_share) with its registered parameters; for benchmarks that simulate
    without recording a schedule."""
    from optsched.solvers.cojob_network import SPEC  # the registry entry (imports this module

    method = SPEC.method(name)
    build = _POLICIES.get(method.func)
    if build is None:
        raise ValueError(f"policy: method {name!r} is not a simulated heuristic")
    return build(instance, method.params)


def baraat(instance: Instance, params: BaraatParams, *, deadline: Deadline,
           seed: int = 0) -> Outcome:
    """Baraat: FIFO over stages with limited multiplexing (threshold ``params.theta``)."""
    return simulated(instance, Baraat(instance, params), "baraat", deadline)


def sincronia(instance: Instance, params: SincroniaParams, *, deadline: Deadline,
              seed: int = 0) -> Outcome:
    """Sincronia: BSSI order over in-flight coflows (sizes ``params.sizes``)."""
    return simulated(instance, Sincronia(instance, params), "sincronia", deadline)


def fair_share(instance: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """Per-flow max-min fair share."""
    return simulated(instance, FairShare(), "fair_share", deadline)


_POLICIES: dict[Callable[..., Outcome], Callable[[Instance, Any], Policy]] = {
    pda: pda_policy,
    grouper: Grouper,
    baraat: Baraat,
    sincronia: Sincronia,
    fair_share: lambda instance, _: FairShare(),
}
