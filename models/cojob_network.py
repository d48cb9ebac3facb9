"""Pyomo models for cojob_network (Grouper, Zhou et al. TNSM 2020, seeds/003).

All three models work on *stages* ``a = (g, k)`` with the port loads ``L^a_p`` of paper Eq. (27)
(true survivors, time units at port capacity) and bound the flow-level problem (O) of Eqs. (1)–(12)
from below, so every simulated (verified) schedule costs at least their value:

- :func:`build_lp_primal` — LP-Primal (13)–(15). Lemma 1: order the stages of any set ``M`` by their
  completion time in a feasible schedule; the n-th cannot finish before all port-p bytes of the
  first n have crossed p, so ``S_(n) >= sum_{m<=n} L_p^(m)``; multiplying by ``L_p^(n)`` and summing
  gives (15). (14) holds because stage k+1 starts after ``S_{g,k}`` (barrier (8)) and needs its
  bottleneck load. Queyranne constraints (15) are added either all at once (:func:`all_cuts`,
  subset enumeration, tiny instances) or by a cutting-plane loop (``solve_lp_primal`` in
  ``optsched.solvers.cojob_network``) whose separation :func:`separate` sorts stages by their current
  ``S`` (polynomial; Queyranne 1993: a most violated set is a prefix of that order).
- :func:`build_dual` — the dual (17)–(20) with one ``beta`` per (port, subset): tiny instances only
  (strong duality check; its optimum equals LP-Primal's).
- :func:`build_ordering_milp` — exact MILP of the stage-level *sequencing* problem (spec Model F):
  choose a total order of the stages consistent with the chains; stage ``b`` completes at
  ``max(S_pred(b) + Lambda_b, max_p (L^b_p + sum_{a before b} L^a_p))``. Any feasible flow schedule
  induces such an order (its completion order), and its S satisfy these inequalities, so the optimum
  ``F*`` is a lower bound on OPT(O); its LP relaxation implies every (15), so ``LP* <= F*``. It is not
  an upper bound: it ignores the coupling of a flow's two ports and idle time.

Objectives are ``sum_{g,k} (S_{g,k} - r_g)`` (the paper's ``sum S`` when all ``r_g = 0``).

This module builds models and reads their solutions (:func:`stage_values`, :func:`extract_order`);
solving, cut loops and simulating an order into a schedule live in ``optsched.solvers.cojob_network``.
"""

from __future__ import annotations

import itertools

import pyomo.environ as pyo

from optsched.tolerance import at_least

Stage = tuple[int, int]


def _bottleneck(instance) -> dict:
    return {a: float(instance.loads[a].max()) for a in instance.stages}


def _arrival_sum(instance) -> float:
    return sum(c.arrival * c.n_stages for c in instance.cojobs)


def port_stages(instance) -> dict[int, list]:
    """``M_p``: stages with positive load on port p (spec E4: only these enter (15))."""
    return {p: [a for a in instance.stages if instance.loads[a][p] > 0] for p in range(instance.n_ports)}


def queyranne_rhs(instance, p: int, subset) -> float:
    """``f_p(M)`` of Eq. (16)."""
    loads = [float(instance.loads[a][p]) for a in subset]
    return 0.5 * (sum(x * x for x in loads) + sum(loads) ** 2)


def build_lp_primal(instance, cuts=()) -> pyo.ConcreteModel:
    """LP-Primal (13)–(14) plus the Queyranne cuts (15) listed in ``cuts`` as ``(p, stages)``.

    (14) is written once per stage in its max-over-ports form ``S_{g,k} - S_{g,k-1} >= Lambda_{g,k}``
    (same LP value as the per-port form), with ``S_{g,0} = r_g``.
    """
    m = pyo.ConcreteModel(name="cojob_lp_primal")
    m.A = pyo.Set(initialize=list(instance.stages), dimen=2)
    m.S = pyo.Var(m.A, domain=pyo.NonNegativeReals)
    lam = _bottleneck(instance)

    def chain(m, g, k):
        prev = m.S[g, k - 1] if k else instance.cojobs[g].arrival
        return m.S[g, k] - prev >= lam[g, k]
    m.chain = pyo.Constraint(m.A, rule=chain)                      # (14)
    m.cuts = pyo.ConstraintList()                                  # (15)
    for p, subset in cuts:
        add_cut(instance, m, p, subset)
    m.obj = pyo.Objective(expr=sum(m.S[a] for a in m.A) - _arrival_sum(instance))   # (13)
    return m


def add_cut(instance, model, p: int, subset) -> None:
    """Add Queyranne inequality (15) for port ``p`` and stage set ``subset``."""
    model.cuts.add(sum(float(instance.loads[a][p]) * model.S[a] for a in subset)
                   >= queyranne_rhs(instance, p, subset))


def all_cuts(instance) -> list[tuple[int, tuple[Stage, ...]]]:
    """Every Queyranne inequality (15): ``(p, M)`` for each port and each non-empty ``M`` of ``M_p``
    (``sum_p (2^|M_p| - 1)`` of them: tiny instances only)."""
    return [(p, sub) for p, ms in port_stages(instance).items()
            for r in range(1, len(ms) + 1) for sub in itertools.combinations(ms, r)]


def stage_values(instance, model) -> dict[Stage, float]:
    """``S_a`` of every stage in a solved LP-Primal (or ordering MILP)."""
    return {a: float(pyo.value(model.S[a])) for a in instance.stages}


def separate(instance, values: dict) -> list:
    """Most violated Queyranne prefix per port (spec Sec. 3.3 implementation B).

    A prefix counts as violated only when (15) fails the tolerance policy
    (:func:`optsched.tolerance.at_least`): a cut that is met within the tolerance is not added, so
    the LP can only be weaker (a lower bound stays a lower bound), never stricter than the checker."""
    out = []
    for p, ms in port_stages(instance).items():
        order = sorted(ms, key=lambda a: (values[a], a))
        lin = sq = lhs = 0.0
        best, best_n = 0.0, 0
        for n, a in enumerate(order, 1):
            x = float(instance.loads[a][p])
            lin, sq, lhs = lin + x, sq + x * x, lhs + x * values[a]
            rhs = 0.5 * (sq + lin * lin)
            viol = rhs - lhs
            if not at_least(lhs, rhs) and viol > best:
                best, best_n = viol, n
        if best_n:
            out.append((p, tuple(order[:best_n])))
    return out


def build_dual(instance) -> pyo.ConcreteModel:
    """The dual (17)–(20) of LP-Primal, with the max-form (14): one ``alpha_{g,k} >= 0`` per stage
    (the paper's ``sum_p alpha_{p,g,k}`` collapsed onto the bottleneck, which is optimal) and one
    ``beta_{p,M} >= 0`` per port and non-empty subset of ``M_p``; ``alpha_{g,K_g+1} := 0``.
    Objective (17) includes ``sum alpha_{g,1} r_g`` (release dates) minus the constant of (13).
    Exponential in ``|M_p|``: tiny instances only."""
    m = pyo.ConcreteModel(name="cojob_dual")
    stages = list(instance.stages)
    subsets = all_cuts(instance)
    m.A = pyo.Set(initialize=stages, dimen=2)
    m.B = pyo.Set(initialize=range(len(subsets)))
    m.alpha = pyo.Var(m.A, domain=pyo.NonNegativeReals)            # (19)
    m.beta = pyo.Var(m.B, domain=pyo.NonNegativeReals)             # (20)
    lam = _bottleneck(instance)
    containing: dict[Stage, list[int]] = {a: [] for a in stages}
    for b, (p, sub) in enumerate(subsets):
        for a in sub:
            containing[a].append(b)

    def dual_row(m, g, k):                                         # (18)
        nxt = m.alpha[g, k + 1] if k + 1 < instance.cojobs[g].n_stages else 0.0
        return (m.alpha[g, k] - nxt + sum(float(instance.loads[g, k][subsets[b][0]]) * m.beta[b]
                                          for b in containing[g, k]) <= 1.0)
    m.row = pyo.Constraint(m.A, rule=dual_row)
    obj = sum(m.alpha[g, k] * (lam[g, k] + (instance.cojobs[g].arrival if k == 0 else 0.0))
              for g, k in stages)
    obj += sum(queyranne_rhs(instance, *subsets[b]) * m.beta[b] for b in m.B)
    m.obj = pyo.Objective(expr=obj - _arrival_sum(instance), sense=pyo.maximize)   # (17)
    return m


def ordering_milp_size(instance) -> dict[str, int]:
    """Size of :func:`build_ordering_milp` without building it: ``binaries``, ``rows`` and
    ``terms`` (non-zeros). Building and handing the model to HiGHS costs time roughly linear in
    ``terms`` (``l^3`` triangles dominate), which is what a caller with a deadline checks first."""
    l = len(instance.stages)
    per_port = [len(ms) for ms in port_stages(instance).values()]
    chain_rows = sum(1 for _, k in instance.stages if k)
    triangles = l * (l - 1) * (l - 2) // 3
    prefix_rows = sum(per_port)
    rows = l * (l - 1) // 2 + triangles + chain_rows + l + prefix_rows
    terms = l * (l - 1) + 3 * triangles + chain_rows + 2 * l + sum(n * n for n in per_port)
    return {"binaries": l * (l - 1), "rows": rows, "terms": terms}


def build_ordering_milp(instance) -> pyo.ConcreteModel:
    """Model F: linear-ordering MILP of the stage sequencing problem (see module docstring).

    Variables ``x[a, b]`` (binary, 1 if stage a is before b) on ordered pairs of distinct stages and
    ``S[a] >= 0``. Constraints: antisymmetry ``x_ab + x_ba = 1``; transitivity
    ``x_ab + x_bc + x_ca <= 2``; chains ``x_{(g,k),(g,k+1)} = 1``; (14) ``S_{g,k} >= S_{g,k-1} +
    Lambda``; port prefix ``S_b >= L^b_p + sum_a L^a_p x_ab`` for every port p loaded by b.
    ``l(l-1)`` binaries and ``O(l^3)`` triangles: fine for ``l <= 12``.
    """
    m = pyo.ConcreteModel(name="cojob_ordering")
    stages = list(instance.stages)
    pairs = [(a, b) for a in stages for b in stages if a != b]
    m.A = pyo.Set(initialize=stages, dimen=2)
    m.PAIRS = pyo.Set(initialize=[(*a, *b) for a, b in pairs], dimen=4)
    m.x = pyo.Var(m.PAIRS, domain=pyo.Binary)
    m.S = pyo.Var(m.A, domain=pyo.NonNegativeReals)
    lam = _bottleneck(instance)
    m.anti = pyo.Constraint([(*a, *b) for a, b in pairs if a < b],
                            rule=lambda m, g, k, h, q: m.x[g, k, h, q] + m.x[h, q, g, k] == 1)
    triples = [(a, b, c) for a, b, c in itertools.permutations(stages, 3) if a < b and a < c]
    m.tri = pyo.ConstraintList()
    for a, b, c in triples:
        m.tri.add(m.x[(*a, *b)] + m.x[(*b, *c)] + m.x[(*c, *a)] <= 2)
    m.chain_order = pyo.ConstraintList()
    for g, k in stages:
        if k:
            m.chain_order.add(m.x[g, k - 1, g, k] == 1)

    def chain(m, g, k):
        prev = m.S[g, k - 1] if k else instance.cojobs[g].arrival
        return m.S[g, k] >= prev + lam[g, k]
    m.chain = pyo.Constraint(m.A, rule=chain)
    m.prefix = pyo.ConstraintList()
    for b in stages:
        for p in range(instance.n_ports):
            lb = float(instance.loads[b][p])
            if lb > 0:
                m.prefix.add(m.S[b] >= lb + sum(float(instance.loads[a][p]) * m.x[(*a, *b)]
                                                for a in stages if a != b and instance.loads[a][p] > 0))
    m.obj = pyo.Objective(expr=sum(m.S[a] for a in m.A) - _arrival_sum(instance))
    return m


def extract_order(instance, model) -> tuple[Stage, ...]:
    """The stage order of a solved ordering MILP: by number of predecessors (ties impossible in a
    total order; chains hold by ``x_{(g,k),(g,k+1)} = 1``)."""
    preds = {a: sum(round(pyo.value(model.x[(*b, *a)])) for b in instance.stages if b != a)
             for a in instance.stages}
    return tuple(sorted(instance.stages, key=lambda a: (preds[a], a)))
