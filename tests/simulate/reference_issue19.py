"""Test oracles for issue 19 item 7 (second speed-up): code as it was at commit d78eb9e, kept
verbatim so tests can check the fast versions give bit-identical results.

* :class:`Sincronia` (solvers/cojob_network/baselines.py): BSSI through numpy ``pda_order`` at every
  coflow event (now the plain-Python ``bssi_order``);
* :func:`_timeline`, :func:`_flow`, :func:`_check_ports` (optsched/problems/cojob_network.py): the
  verify integration with numpy port sums (now plain lists and one dict per flow instance).
"""

from __future__ import annotations

import math

import numpy as np

from optsched.problems.cojob_network import (Instance, Schedule, Segment, _Timeline, at_least,
                                             at_most, infeasible)
from optsched.solvers.cojob_network.algorithm import pda_order
from optsched.solvers.cojob_network.baselines import BSSI, SincroniaParams


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



def _timeline(instance: Instance, schedule: Schedule) -> _Timeline:
    """Integrate the rates over the effective segments ``[max(t0, previous end), t1)``: a segment
    may start within the tolerance before the previous one ended (``at_least``), but the overlap
    sends nothing, so no port carries two segments' rates at once (see :func:`verify`, 1.)."""
    tl = _Timeline({}, {}, {}, {}, [], 0.0)
    last_end = 0.0
    for n, seg in enumerate(schedule.segments):
        if not (math.isfinite(seg.t0) and math.isfinite(seg.t1)):
            infeasible(f"(12) segment {n} [{seg.t0:g}, {seg.t1:g}) has a non-finite time")
        if seg.t1 < seg.t0 or not at_least(seg.t0, last_end):
            infeasible(f"(12) segment {n} [{seg.t0:g}, {seg.t1:g}) is empty-negative or overlaps "
                        f"the previous one")
        t0 = max(seg.t0, last_end)
        tl.t0.append(t0)
        last_end = max(last_end, seg.t1)
        port = np.zeros(instance.n_ports)
        for g, j, i, f, rate in seg.rates:
            s, d, _ = _flow(instance, g, j, i, f, n)
            if not math.isfinite(rate):
                infeasible(f"(12) flow ({g},{j},{i},{f}) has rate {rate:g} in segment {n}")
            if rate < 0:
                infeasible(f"(12) flow ({g},{j},{i},{f}) has rate {rate:g} < 0 in segment {n}")
            port[s] += rate
            port[instance.machines + d] += rate
            if rate > 0 and seg.t1 > t0:
                key = (g, j, i, f)
                if key not in tl.first:
                    tl.first[key], tl.first_seg[key] = t0, n
                tl.finish[key] = seg.t1
                tl.sent[key] = tl.sent.get(key, 0.0) + rate * (seg.t1 - t0)
        tl.overload = max(tl.overload, _check_ports(instance, port, seg))
    return tl



def _flow(instance: Instance, g: int, j: int, i: int, f: int, n: int):
    cojobs = instance.cojobs
    if not (0 <= g < len(cojobs) and 0 <= j < len(cojobs[g].jobs)
            and 0 <= f < len(cojobs[g].jobs[j].flows)):          # negative indices wrapped
        infeasible(f"(5) segment {n} names flow ({g},{j},{i},{f}), which does not exist")
    job = cojobs[g].jobs[j]
    flow = job.flows[f]
    if not 1 <= i <= instance.cojobs[g].iterations[job.stages - 1]:
        infeasible(f"(5) segment {n}: job ({g},{j}) has no iteration {i}")
    return flow


def _check_ports(instance: Instance, port: np.ndarray, seg: Segment) -> float:
    """(10)–(11) within the tolerance; returns the relative overload ``max(0, load / cap - 1)``."""
    if not len(port):
        return 0.0
    p = int(np.argmax(port))
    use = float(port[p]) / instance.capacity
    if not at_most(use, 1.0):                                      # all ports have one capacity
        eq = "(11)" if p < instance.machines else "(10)"
        kind = "ingress" if p < instance.machines else "egress"
        infeasible(f"{eq} {kind} port {p} at [{seg.t0:g}, {seg.t1:g}): load {port[p]:.9g} > "
                    f"capacity {instance.capacity:g}")
    return max(0.0, use - 1.0)

