"""Enumerative oracles for cojob_network (tiny instances only)."""

from __future__ import annotations

import itertools

from optsched.simulate.flows import StageOrder, simulate, sum_sct


def chain_orders(instance):
    """Every total order of the stages in which (g, k) precedes (g, k+1)."""
    stages = list(instance.stages)
    for perm in itertools.permutations(stages):
        seen = set()
        ok = True
        for g, k in perm:
            if k and (g, k - 1) not in seen:
                ok = False
                break
            seen.add((g, k))
        if ok:
            yield perm


def sequencing_cost(instance, order) -> float:
    """The stage-sequencing cost of ``order`` (Model F with x fixed): each stage ends at the latest
    of its chain predecessor plus its bottleneck load and, on every port it loads, the load of
    itself and of all stages before it."""
    S = {}
    before = []
    for g, k in order:
        load = instance.loads[g, k]
        prev = S[g, k - 1] if k else instance.cojobs[g].arrival
        t = prev + float(load.max())
        for p in range(instance.n_ports):
            if load[p] > 0:
                t = max(t, float(load[p]) + sum(float(instance.loads[a][p]) for a in before))
        S[g, k] = t
        before.append((g, k))
    return sum(S.values()) - sum(c.arrival * c.n_stages for c in instance.cojobs)


def best_sequencing(instance) -> float:
    """F* by enumeration."""
    return min(sequencing_cost(instance, o) for o in chain_orders(instance))


def best_simulated(instance) -> tuple[float, tuple]:
    """Model BF: the best order-preserving priority schedule over all chain-consistent orders."""
    return min((sum_sct(instance, simulate(instance, StageOrder(o), record=False)), o)
               for o in chain_orders(instance))
