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
    PdaParams,
    check_choice,
    grouper,
    pda,
    pda_order,
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
                load = np.zeros(2 * P)
                for (s, d, x), left in zip(self.inst.cojobs[g].jobs[j].flows, sim.rem[g, j]):
                    left = x if self.full else left
                    load[s] += left
                    load[P + d] += left
                loads[g, j] = load
            order, _ = pda_order(loads, {a: [a] for a in loads}, BSSI)
            self.position = {a: n for n, a in enumerate(order)}
        return {a: self.position[a] for a in sim.communicating()}


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
